//! Entries through a neighbouring group: two global hops where the
//! Dragonfly's own path would squeeze through a damaged group's last local
//! cables, or take local detours at both ends of its global cable.
//!
//! In a group whose gateway switch kept few local cables, everything its
//! global cables bring in leaves it by the cables left: the minimal path
//! (`Plan::direct_link`) turns there, and those cables are the fabric's
//! busiest. An *entry* takes such traffic (group A to destination switch
//! `d` of group B, A's cable landing two or more local hops from `d`)
//! through a neighbouring group C instead: A's cable into C lands on a
//! switch L that owns C's cable into B (or, colour permitting, is cabled to
//! the switch that does), and that cable lands on or next to `d`. The same
//! way serves
//!
//! - groups with no cable to B, where it is shorter than their detour
//!   through a middle group of a fitting colour (`Plan::detour_routes`);
//! - single switches (*exits*): a switch whose own cable into such a C is
//!   no longer than its group's route (local detours at both ends of a
//!   global cable, a long way to the group's cable), where that route is
//!   not Figure 4's.
//!
//! **Lanes** (`lanes`). With no local hop in C the SL is the base SL +
//! `ENTRY_OFFSET`, mapped by port classes alone: VL 0 in A and on A -> C,
//! VL 1 on C -> B (a switch turning from a global cable to a global cable
//! on this SL is L), VL 2 in B. With a local hop in C the SL is the base
//! SL plus `ENTRY_OFFSET` + 1 + C's *entry colour*, and switches read it as the
//! detours' middle-group SLs (VL 1 in the group of that colour, VL 2 after
//! it): C's entry colour must differ from A's and B's (`entry_colours`
//! keeps the groups that may meet apart). Either way the VL goes up at
//! each global hop and never down, and each VL's local turns are the sets
//! the other lanes use on it (source turns on VL 0, destination turns on
//! VL 2, none on VL 1): the argument in `lanes` holds unchanged.
//!
//! **Tables are per destination, not per path**, so the lane holds only if
//! every switch an entry crosses sends `d`'s traffic on as the entry
//! expects. Entries are taken only where that is so by construction:
//!
//! - L (and its neighbour) keep C's own route to `d`: that route is the
//!   cable the entry takes (`direct_link` picks it), and it lands on or
//!   next to `d`, so C never takes an entry to `d` itself and neither
//!   switch exits (an exit needs a route that is not Figure 4's); L is
//!   *pinned*: no exit there for `d`.
//! - A group entry: every member of A reaches the owner of A's cable into C
//!   by a source route, so all of A sends `d` that way on VL 0 (no member
//!   needs a fallback with a lane of its own); no detour or escape from
//!   elsewhere crosses A towards B (`Plan::serving_middles`), since those
//!   paths rely on A's tables sending B's traffic straight on.
//! - An exit at switch x: no other member's route to its group's cable
//!   passes x (`Plan::passed_towards`), no path from elsewhere enters the
//!   group at x on its way to B (`Plan::middle_landings`), and x is not
//!   pinned; so only x's own hosts' packets take it.
//!
//! **Choice.** Per (A, `d`), the candidates are the group's route and every
//! entry; the fewest hops over A's members win, and ties go to the one
//! whose cables carry least of what the choices so far put on them. A
//! switch exits by the shortest of its own cables that qualify, ties again
//! by load, when that is no longer than its group's route.

use std::collections::{HashMap, HashSet};

use super::plan::{GlobalLink, GroupRoute, Lane, Plan, Role, ENTRY_COLOURS};
use super::tables::KeyHash;
use crate::fabric::{PortNum, SwitchId};

/// The groups' entry colours: a middle group with a local hop must have a
/// colour neither end has, so groups that may meet in such an entry are
/// kept apart where `ENTRY_COLOURS` allow (greedy, most constrained group
/// first). Entries whose middle group still shares a colour with an end
/// are not taken.
pub fn entry_colours(plan: &Plan) -> Vec<u8> {
    let g = plan.groups.members.len();
    let serving = plan.serving_middles();
    let mut apart: Vec<HashSet<usize>> = vec![HashSet::new(); g];
    for b in (0..g).filter(|&b| !plan.complete(b)) {
        let members = &plan.groups.members[b];
        let lands_far = |l: &GlobalLink| members.iter().any(|&d| plan.local_hops(l.landing, d) > 1);
        for a in
            (0..g).filter(|&a| a != b && !serving[b][a] && plan.links(a, b).iter().any(lands_far))
        {
            for c in (0..g).filter(|&c| c != a && c != b) {
                let onward = plan.links(c, b);
                let via_hop = |l: &GlobalLink| {
                    onward.iter().any(|o| {
                        o.owner != l.landing && plan.graph.slot(l.landing, o.owner).is_some()
                    })
                };
                if plan.links(a, c).iter().any(via_hop) {
                    for (x, y) in [(a, c), (b, c)] {
                        apart[x].insert(y);
                        apart[y].insert(x);
                    }
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..g).collect();
    order.sort_by_key(|&x| (std::cmp::Reverse(apart[x].len()), x));
    let mut colour = vec![u8::MAX; g];
    for x in order {
        let mut clashes = [0usize; ENTRY_COLOURS as usize];
        for &y in &apart[x] {
            if let Some(n) = clashes.get_mut(colour[y] as usize) {
                *n += 1;
            }
        }
        let fewest = (0..ENTRY_COLOURS).min_by_key(|&k| {
            (
                clashes[k as usize],
                (k as usize + x) % ENTRY_COLOURS as usize,
            )
        });
        colour[x] = fewest.unwrap_or(0);
    }
    colour
}

/// An out-channel: a switch and its port.
type Channel = (SwitchId, PortNum);

/// A way from A to one destination, with its cost in local and global
/// hops summed over A's members, and the channels it loads.
#[derive(Clone)]
struct Way {
    route: GroupRoute,
    cost: usize,
    /// Hops from the route's owner on.
    tail: usize,
    /// Where it lands in the middle group, if it crosses one.
    landing: Option<SwitchId>,
    channels: [Option<Channel>; 3],
}

/// What `EntryPlanner::entries_into` chose for one destination group.
#[derive(Default)]
pub struct Entries {
    /// (source group, destination index, route) of the groups that enter.
    pub groups: Vec<(usize, usize, GroupRoute)>,
    /// (switch, destination index, port, lane): a switch that leaves by its
    /// own cable into a middle group, in no more hops than its group's
    /// route.
    pub exits: Vec<(SwitchId, usize, PortNum, Lane)>,
}

/// What `entries_into` has chosen so far, shared by its steps.
struct Planned {
    out: Entries,
    /// Per destination: the switches an entry crosses in its middle group,
    /// whose tables must stay as they are (no exit there).
    pinned: HashSet<(SwitchId, usize), KeyHash>,
    /// Per (source group, destination): the route chosen and the hops after
    /// its owner (rows only for the groups that have one: all of them for a
    /// damaged `b`, those without a cable otherwise).
    chosen: Vec<Vec<Option<(GroupRoute, usize)>>>,
}

/// Chooses entries into group `b`; reusable across destination groups.
pub struct EntryPlanner<'p, 'a> {
    plan: &'p Plan<'a>,
    /// Per group: its cables whose owner every member reaches by a source
    /// route (computed on first use), with the group each leads to.
    reachable: Vec<Option<Vec<(usize, GlobalLink)>>>,
    /// Per switch: the groups its global cables lead to.
    global_groups: Vec<Vec<u32>>,
    serving: Vec<Vec<bool>>,
    /// Per destination group: where others' paths enter a middle group.
    middle_landings: Vec<HashSet<SwitchId, KeyHash>>,
    /// What the choices so far put on each channel, at `channel_index`.
    load: Vec<u32>,
    /// Per switch: where its channels start in `load`.
    first_channel: Vec<usize>,
}

impl<'p, 'a> EntryPlanner<'p, 'a> {
    pub fn new(plan: &'p Plan<'a>) -> Self {
        let g = plan.groups.members.len();
        let global_groups = plan
            .graph
            .ids()
            .map(|s| {
                let groups = plan.graph.cables(s).iter().map(|c| plan.group_of(c.to));
                groups
                    .filter(|&c| c != plan.group_of(s))
                    .map(|c| c as u32)
                    .collect()
            })
            .collect();
        let mut first_channel = Vec::with_capacity(plan.graph.switch_count());
        let mut channels = 0;
        for s in plan.graph.ids() {
            first_channel.push(channels);
            channels += plan.graph.port_slots(s);
        }
        EntryPlanner {
            plan,
            reachable: vec![None; g],
            global_groups,
            serving: plan.serving_middles(),
            middle_landings: plan.middle_landings(),
            load: vec![0; channels],
            first_channel,
        }
    }

    /// Whether switch `s` owns a global cable into group `b`.
    fn owns_into(&self, s: SwitchId, b: usize) -> bool {
        self.global_groups[s.idx()].contains(&(b as u32))
    }

    fn reachable_links(&mut self, a: usize) -> &[(usize, GlobalLink)] {
        let plan = self.plan;
        self.reachable[a].get_or_insert_with(|| {
            let members = &plan.groups.members[a];
            (0..plan.groups.members.len())
                .filter(|&c| c != a)
                .flat_map(|c| plan.links(a, c).iter().map(move |l| (c, *l)))
                .filter(|(_, l)| members.iter().all(|&m| plan.reaches_for_source(m, l.owner)))
                .collect()
        })
    }

    /// The entries traffic from other groups into group `b` takes to
    /// `dests` (switch, rank among `b`'s LIDs), and the exits of single
    /// switches. Pairs not listed keep their group route.
    /// `detoured` holds the routes of the groups without a cable to `b`
    /// (through a middle group), by (group, destination index).
    ///
    /// Three steps, in this order because each sees what the earlier ones
    /// chose: entries for the groups with a cable to `b`, entries for the
    /// groups whose route crosses a middle group, then exits of single
    /// switches (never where an entry crosses).
    pub fn entries_into(
        &mut self,
        b: usize,
        dests: &[(SwitchId, usize)],
        detoured: &HashMap<(usize, usize), GroupRoute>,
    ) -> Entries {
        let mut planned = Planned {
            out: Entries::default(),
            pinned: HashSet::with_hasher(KeyHash),
            chosen: vec![Vec::new(); self.plan.groups.members.len()],
        };
        self.entries_of_cabled_groups(b, dests, &mut planned);
        self.entries_of_detoured_groups(b, dests, detoured, &mut planned);
        self.exits_of_single_switches(b, dests, &mut planned);
        planned.out
    }

    /// Entries for the groups with a cable to `b` whose cable lands two
    /// or more local hops from the destination.
    fn entries_of_cabled_groups(
        &mut self,
        b: usize,
        dests: &[(SwitchId, usize)],
        planned: &mut Planned,
    ) {
        let plan = self.plan;
        let g = plan.groups.members.len();
        let n = dests.len();
        // A complete group has every cable land next to every member: no
        // squeeze, so no group enters it another way.
        let sources: Vec<usize> = (0..g)
            .filter(|&a| {
                a != b && !plan.links(a, b).is_empty() && !self.serving[b][a] && !plan.complete(b)
            })
            .collect();
        for &a in &sources {
            let members = plan.groups.members[a].len();
            // A middle group with a local hop is told apart from both ends
            // by its entry colour (`lanes`).
            let fits = |c: usize| {
                plan.entry_colour[c] != plan.entry_colour[a]
                    && plan.entry_colour[c] != plan.entry_colour[b]
            };
            // Cables into a group whose switch there owns a cable into `b`,
            // or (with a fitting colour) is cabled to one that does.
            let links = self.reachable_links(a).to_vec();
            let lands_well = |&(c, l): &(usize, GlobalLink)| {
                c != b
                    && (self.owns_into(l.landing, b)
                        || (fits(c)
                            && plan
                                .links(c, b)
                                .iter()
                                .any(|o| plan.graph.slot(l.landing, o.owner).is_some())))
            };
            let ways_on: Vec<(usize, GlobalLink)> = links.into_iter().filter(lands_well).collect();
            for (i, &(d, rank)) in dests.iter().enumerate() {
                let direct = plan.direct_link(a, b, rank, d);
                let far = plan.local_hops(direct.landing, d);
                let row = &mut planned.chosen[a];
                row.resize(n, None);
                row[i] = Some((
                    GroupRoute {
                        owner: direct.owner,
                        port: direct.port,
                        lane: Lane::Minimal,
                    },
                    1 + far,
                ));
                if far < 2 {
                    continue;
                }
                let towards_d = |from: SwitchId| {
                    (from != d).then(|| (from, plan.local_port(from, d, Role::Destination, rank)))
                };
                let mut options = vec![Way {
                    route: GroupRoute {
                        owner: direct.owner,
                        port: direct.port,
                        lane: Lane::Minimal,
                    },
                    cost: plan.reach_cost(direct.owner) + members * (1 + far),
                    tail: 1 + far,
                    landing: None,
                    channels: [
                        Some((direct.owner, direct.port)),
                        towards_d(direct.landing),
                        None,
                    ],
                }];
                for &(c, into) in &ways_on {
                    let onward = plan.direct_link(c, b, rank, d);
                    let near = plan.local_hops(onward.landing, d);
                    let lane = if onward.owner == into.landing {
                        Lane::Entry
                    } else if plan.graph.slot(into.landing, onward.owner).is_some() && fits(c) {
                        Lane::EntryVia(plan.entry_colour[c])
                    } else {
                        continue;
                    };
                    if near > 1 {
                        continue;
                    }
                    let tail = 2 + usize::from(lane != Lane::Entry) + near;
                    options.push(Way {
                        route: GroupRoute {
                            owner: into.owner,
                            port: into.port,
                            lane,
                        },
                        cost: plan.reach_cost(into.owner) + members * tail,
                        tail,
                        landing: Some(into.landing),
                        channels: [
                            Some((into.owner, into.port)),
                            Some((onward.owner, onward.port)),
                            towards_d(onward.landing),
                        ],
                    });
                }
                let best = self.least_loaded(&options, members);
                if best.route.lane != Lane::Minimal {
                    planned.out.groups.push((a, i, best.route));
                    planned.chosen[a][i] = Some((best.route, best.tail));
                    planned.pinned.extend(best.landing.map(|l| (l, i)));
                }
            }
        }
    }

    /// Entries for the groups without a cable to `b`, whose route crosses a
    /// middle group.
    fn entries_of_detoured_groups(
        &mut self,
        b: usize,
        dests: &[(SwitchId, usize)],
        detoured: &HashMap<(usize, usize), GroupRoute>,
        planned: &mut Planned,
    ) {
        let plan = self.plan;
        let n = dests.len();
        // Groups without a cable to `b` cross a middle group of a fitting
        // colour (`Plan::detour_routes`); an entry with no local hop there
        // needs no colour and may be shorter.
        let mut detoured: Vec<((usize, usize), GroupRoute)> = detoured
            .iter()
            .filter(|(_, r)| matches!(r.lane, Lane::Middle(_)))
            .map(|(&k, &r)| (k, r))
            .collect();
        detoured.sort_by_key(|&((a, i), _)| (a, i));
        let mut ways_on: (usize, Vec<(usize, GlobalLink)>, bool) = (usize::MAX, Vec::new(), false);
        // Per (group, destination switch): its fewest-hop entries, where
        // they do not depend on the LID (one cable on from each middle
        // group).
        let mut entries_to: HashMap<SwitchId, Vec<Way>, KeyHash> = HashMap::with_hasher(KeyHash);
        let mut options = Vec::new();
        for ((a, i), route) in detoured {
            if ways_on.0 != a {
                let links = self.reachable_links(a).to_vec();
                let ways: Vec<(usize, GlobalLink)> = links
                    .into_iter()
                    .filter(|&(c, l)| self.may_enter(a, b, c, l.landing))
                    .collect();
                let per_switch = ways.iter().all(|&(c, _)| plan.links(c, b).len() == 1);
                ways_on = (a, ways, per_switch);
                entries_to.clear();
            }
            let (d, rank) = dests[i];
            let members = plan.groups.members[a].len();
            let tail = self.middle_tail(route, b, rank, d);
            let fewest_entries = |planner: &Self| {
                let mut found: Vec<Way> = Vec::new();
                for &(c, into) in &ways_on.1 {
                    let Some((lane, after, onward)) =
                        planner.entry_through(a, b, c, into.landing, rank, d)
                    else {
                        continue;
                    };
                    let way = Way {
                        route: GroupRoute {
                            owner: into.owner,
                            port: into.port,
                            lane,
                        },
                        cost: plan.reach_cost(into.owner) + members * (1 + after),
                        tail: 1 + after,
                        landing: Some(into.landing),
                        channels: [
                            Some((into.owner, into.port)),
                            Some((onward.owner, onward.port)),
                            None,
                        ],
                    };
                    match found.first().map(|f| f.cost) {
                        Some(cost) if way.cost > cost => {}
                        Some(cost) if way.cost < cost => found = vec![way],
                        _ => found.push(way),
                    }
                }
                found
            };
            let entries = if ways_on.2 {
                let planner = &*self;
                entries_to
                    .entry(d)
                    .or_insert_with(|| fewest_entries(planner))
                    .clone()
            } else {
                fewest_entries(self)
            };
            let middle_cost = plan.reach_cost(route.owner) + members * tail;
            options.clear();
            if entries.first().is_none_or(|e| middle_cost <= e.cost) {
                options.push(Way {
                    route,
                    cost: middle_cost,
                    tail,
                    landing: None,
                    channels: [Some((route.owner, route.port)), None, None],
                });
            }
            options.extend(entries.into_iter().filter(|e| e.cost <= middle_cost));
            let best = self.least_loaded(&options, members);
            let chosen_route = (best.route, best.tail);
            if matches!(best.route.lane, Lane::Entry | Lane::EntryVia(_)) {
                planned.out.groups.push((a, i, best.route));
                planned.pinned.extend(best.landing.map(|l| (l, i)));
            }
            planned.chosen[a].resize(n, None);
            planned.chosen[a][i] = Some(chosen_route);
        }
    }

    /// Exits: single switches whose own cable into a middle group is no
    /// longer than their group's route.
    fn exits_of_single_switches(
        &mut self,
        b: usize,
        dests: &[(SwitchId, usize)],
        planned: &mut Planned,
    ) {
        let plan = self.plan;
        let g = plan.groups.members.len();
        // Single switches whose own cable into a middle group is shorter
        // than their group's route: of groups that lost local cables, or
        // whose route crosses a middle group.
        // Groups some of whose switches may have a shorter way: those that
        // lost local cables, and those whose route crosses a middle group
        // or lands far from the destination.
        // (A group others cross as a middle one keeps the tables of the
        // switches where they enter it.)
        let exiting: Vec<usize> = (0..g)
            .filter(|&a| a != b)
            .filter(|&a| {
                let long = |c: &Option<(GroupRoute, usize)>| {
                    c.is_some_and(|(r, tail)| r.lane != Lane::Minimal || tail > 2)
                };
                (!plan.complete(a) && !plan.links(a, b).is_empty())
                    || planned.chosen[a].iter().any(long)
            })
            .collect();
        let mut options = Vec::new();
        for a in exiting {
            let ways_out = self.ways_out(a, b);
            if ways_out.iter().all(Vec::is_empty) {
                continue;
            }
            // Where the middle group has one cable into `b` the entry does
            // not depend on the LID, only on its switch: worked out once
            // per (cable, destination switch).
            let targets = &plan.groups.members[b];
            let first_way: Vec<usize> = ways_out
                .iter()
                .scan(0, |n, w| Some(std::mem::replace(n, *n + w.len())))
                .collect();
            let mut through: Vec<Option<Option<(Lane, usize, GlobalLink)>>> =
                vec![None; ways_out.iter().map(Vec::len).sum::<usize>() * targets.len()];
            for (i, &(d, rank)) in dests.iter().enumerate() {
                let target = targets.binary_search(&d).unwrap_or(0);
                let Some((route, tail)) = self.route_of(planned, (a, b), i, (d, rank)) else {
                    continue;
                };
                if route.lane == Lane::Minimal && plan.complete(a) && tail <= 2 {
                    continue; // Figure 4's path for every member
                }
                for (m, (&x, ways)) in plan.groups.members[a].iter().zip(&ways_out).enumerate() {
                    if ways.is_empty() || x == route.owner {
                        continue;
                    }
                    let near_owner = plan.local_hops(x, route.owner);
                    // Figure 4's path stays where the fabric has it; an
                    // exit takes at least 2 hops.
                    let hops = near_owner + tail;
                    if (near_owner == 1 && route.lane == Lane::Minimal && tail <= 2) || hops < 2 {
                        continue;
                    }
                    options.clear();
                    for (w, &(port, landing, c)) in ways.iter().enumerate() {
                        let found = if plan.links(c, b).len() == 1 {
                            let slot = &mut through[(first_way[m] + w) * targets.len() + target];
                            *slot.get_or_insert_with(|| {
                                self.entry_through(a, b, c, landing, rank, d)
                            })
                        } else {
                            self.entry_through(a, b, c, landing, rank, d)
                        };
                        let Some((lane, after, onward)) = found else {
                            continue;
                        };
                        if 1 + after > hops {
                            continue;
                        }
                        options.push(Way {
                            route: GroupRoute {
                                owner: x,
                                port,
                                lane,
                            },
                            cost: 1 + after,
                            tail: 1 + after,
                            landing: Some(landing),
                            channels: [Some((x, port)), Some((onward.owner, onward.port)), None],
                        });
                    }
                    if options.is_empty()
                        || planned.pinned.contains(&(x, i))
                        || self.middle_landings[b].contains(&x)
                        || plan.passed_towards(x, route.owner)
                    {
                        continue;
                    }
                    let best = self.least_loaded(&options, 1);
                    planned
                        .out
                        .exits
                        .push((x, i, best.route.port, best.route.lane));
                }
            }
        }
    }

    /// Per member of `a`: its cables into groups whose switch there owns a
    /// cable into `b` (the only ones an exit can take), as (port, landing,
    /// landing's group).
    fn ways_out(&self, a: usize, b: usize) -> Vec<Vec<(PortNum, SwitchId, usize)>> {
        let plan = self.plan;
        plan.groups.members[a]
            .iter()
            .map(|&x| {
                let cables = plan.graph.cables(x).iter();
                cables
                    .map(|cable| (cable.port, cable.to, plan.group_of(cable.to)))
                    .filter(|&(_, landing, c)| self.may_enter(a, b, c, landing))
                    .collect()
            })
            .collect()
    }

    /// The route group `a` takes towards the `i`-th destination `d` (of
    /// `rank`) in `b`, with the hops after its owner: what the entries
    /// chose, else the direct link; `None` where no exit is wanted (a
    /// complete group with no entry, or no cable to `b`).
    fn route_of(
        &self,
        planned: &Planned,
        (a, b): (usize, usize),
        i: usize,
        (d, rank): (SwitchId, usize),
    ) -> Option<(GroupRoute, usize)> {
        let plan = self.plan;
        match planned.chosen[a].get(i).copied().flatten() {
            Some(found) => Some(found),
            None if plan.complete(a) || plan.links(a, b).is_empty() => None,
            None => {
                let direct = plan.direct_link(a, b, rank, d);
                let route = GroupRoute {
                    owner: direct.owner,
                    port: direct.port,
                    lane: Lane::Minimal,
                };
                Some((route, 1 + plan.local_hops(direct.landing, d)))
            }
        }
    }

    /// Whether a cable from `a` landing on `landing` in group `c` may start
    /// an entry into `b`: that switch owns a cable into `b`, or is cabled
    /// to one that does and `c`'s entry colour is neither end's.
    fn may_enter(&self, a: usize, b: usize, c: usize, landing: SwitchId) -> bool {
        let plan = self.plan;
        c != a
            && c != b
            && (self.owns_into(landing, b)
                || (self.fits(a, b, c)
                    && plan
                        .links(c, b)
                        .iter()
                        .any(|o| plan.graph.slot(landing, o.owner).is_some())))
    }

    /// Whether `c` can be the middle group of an entry with a local hop
    /// from `a` to `b`: its entry colour tells it apart from both.
    fn fits(&self, a: usize, b: usize, c: usize) -> bool {
        let colour = &self.plan.entry_colour;
        colour[c] != colour[a] && colour[c] != colour[b]
    }

    /// The entry from `a` through the cable landing on `landing` in group
    /// `c` to `d` (the `rank`-th LID of `b`): its lane, the hops from the
    /// landing on, and the middle group's cable on; where `c`'s own route
    /// to `d` lands on or next to it and leaves from the landing switch or
    /// (colour permitting) a neighbour of it.
    fn entry_through(
        &self,
        a: usize,
        b: usize,
        c: usize,
        landing: SwitchId,
        rank: usize,
        d: SwitchId,
    ) -> Option<(Lane, usize, GlobalLink)> {
        let plan = self.plan;
        let onward = plan.direct_link(c, b, rank, d);
        let near = plan.local_hops(onward.landing, d);
        if near > 1 {
            return None;
        }
        if onward.owner == landing {
            Some((Lane::Entry, 1 + near, onward))
        } else if self.fits(a, b, c) && plan.graph.slot(landing, onward.owner).is_some() {
            Some((Lane::EntryVia(plan.entry_colour[c]), 2 + near, onward))
        } else {
            None
        }
    }

    /// Hops from the owner of a detour through a middle group to `d`: as
    /// `Plan::detour_routes` counts them.
    fn middle_tail(&self, route: GroupRoute, b: usize, rank: usize, d: SwitchId) -> usize {
        let plan = self.plan;
        let Some(crate::fabric::Peer::Switch {
            switch: landing, ..
        }) = plan.graph.peer(route.owner, route.port)
        else {
            return usize::MAX / 2;
        };
        let onward = plan.direct_link(plan.group_of(landing), b, rank, d);
        2 + usize::from(landing != onward.owner) + plan.local_hops(onward.landing, d)
    }

    /// Of `options`, the one with the fewest hops, ties to the one whose
    /// busiest channel carries least of what earlier choices put there;
    /// its channels take `weight` more.
    fn least_loaded<'w>(&mut self, options: &'w [Way], weight: usize) -> &'w Way {
        let fewest = options.iter().map(|o| o.cost).min().unwrap_or(0);
        let index = |&(s, port): &Channel| self.first_channel[s.idx()] + port.idx();
        let load = |o: &Way| {
            o.channels
                .iter()
                .flatten()
                .map(|ch| self.load.get(index(ch)).copied().unwrap_or(0))
                .max()
        };
        let best = options
            .iter()
            .filter(|o| o.cost == fewest)
            .min_by_key(|o| load(o))
            .unwrap_or(&options[0]);
        for ch in best.channels.iter().flatten() {
            if let Some(l) = self
                .load
                .get_mut(self.first_channel[ch.0.idx()] + ch.1.idx())
            {
                *l += weight as u32;
            }
        }
        best
    }
}

//! What dla decides before it fills a table: how switches of a group reach
//! each other (directly, or through one other member when their cable is
//! gone), which global cable carries a destination group's traffic, and,
//! for pairs of groups that lost every cable between them, which middle
//! group their traffic crosses.
//!
//! **Turns.** A path that takes two local cables in a row turns at the
//! switch between them. Turns come in two sets per group, and `lanes`
//! relies on them: *source turns*, on the way to the group's global cable,
//! travel on VL 0; *destination turns*, on the way to the destination
//! switch (after a global hop, or inside the group), on VL 1 or 2. Each set
//! is chosen so that its channel dependencies (the cable into the turn
//! depends on the cable out of it) close no cycle, and no turn is in both:
//! every missing cable gets destination turns (else the group is declined
//! as too damaged), and source turns where one fits.
//!
//! **Middle groups.** Every group has one of three colours. Traffic
//! between two groups that lost every cable between them crosses a third
//! group whose colour is neither of theirs, landing on or next to the
//! switch with the cable on (so the middle group adds at most one local
//! hop); its SL is the base SL + 1 + the middle group's colour, which is
//! how a switch knows, from the SL alone, that it is in the middle.
//!
//! **When a switch cannot reach its group's global cable** (their cable is
//! gone and no source turn fits): if the destination group's colour
//! differs from its own, it takes a destination turn and tags the path
//! with its own group's colour, making its own group the "middle" (VLs 1
//! then 2); otherwise it leaves by a global cable of its own through a
//! middle group (an *escape*).
//!
//! **Reserve layers.** Heavier damage leaves pairs of groups that no
//! middle group can join (none cabled to both, or none of a third colour
//! with its cables close enough), and switches with none of the ways
//! above. Their paths go, group by group, one global hop nearer to the
//! destination group (a BFS over groups) and follow the tables from
//! there; they travel on reserve layers, each an SL and a VL of its own
//! above the ones the scheme uses, placed path by path so that no layer's
//! dependencies close a cycle (`place_reserve`). A Dragonfly with its intact
//! share of cables needs none.

use std::collections::{HashMap, HashSet, VecDeque};

use super::local::GroupLocal;
use crate::fabric::{PortNum, SwitchGraph, SwitchId};
use crate::topology::dragonfly::Groups;

mod colouring;

/// Colours of groups; a path through a middle group has SL base + 1 + its
/// colour.
pub const COLOURS: u8 = 3;

/// The SL of an entry through a neighbouring group (`entry`) is the base
/// SL + this; reserve layers start one above.
pub const ENTRY_OFFSET: u8 = 1 + COLOURS;

/// Colours of groups for entries with a local hop in the middle group
/// (`entry`): their SL is the base SL + `ENTRY_OFFSET` + 1 + the middle
/// group's entry colour. More colours than the detours' three let more
/// middle groups fit (neither end's colour) at the cost of SLs.
pub const ENTRY_COLOURS: u8 = 4;

/// The offset above the base SL of the last SL entries use.
pub const LAST_ENTRY_OFFSET: u8 = ENTRY_OFFSET + ENTRY_COLOURS;

/// A global cable seen from the group it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalLink {
    pub owner: SwitchId,
    pub port: PortNum,
    /// The switch at its far end.
    pub landing: SwitchId,
}

/// A switch's own global cable into a middle group (`Plan::middles_from`).
#[derive(Clone, Copy, Debug)]
struct OwnMiddle {
    port: PortNum,
    landing: SwitchId,
    group: usize,
}

/// A detour through one middle group: the cable into it, the middle
/// group's cable on, and the local hops before the destination group.
#[derive(Clone, Copy)]
struct Via {
    into: GlobalLink,
    onward: GlobalLink,
    hops: usize,
}

/// Which set of turns a local hop takes (module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Towards a global cable.
    Source,
    /// Towards the destination switch.
    Destination,
}

/// Which VLs a path travels on, as its SL tells the switches (`lanes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// At most one global hop: the base SL.
    Minimal,
    /// Through a middle group of this colour: base SL + 1 + colour.
    Middle(u8),
    /// Into a joined group through a neighbouring one whose landing
    /// switch sends it straight on (`entry`): base SL + `ENTRY_OFFSET`.
    Entry,
    /// Into a joined group through a neighbouring one of this entry
    /// colour, with one local hop there: base SL + `ENTRY_OFFSET` + 1 +
    /// colour.
    EntryVia(u8),
    /// A path the scheme above has no lanes for (module comment): its SL
    /// and VL are a reserve layer's, chosen once the tables are filled.
    Reserve,
}

/// Where traffic from one group to a destination goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupRoute {
    /// The group's switch that owns the global cable to take, and its port.
    pub owner: SwitchId,
    pub port: PortNum,
    pub lane: Lane,
}

/// Why a fabric is not a Dragonfly dla can route (switches are named by
/// the caller).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unroutable {
    /// More switches belong to no group than to one.
    NoGroups {
        ungrouped: usize,
        switches: usize,
        example: SwitchId,
    },
    /// A "group" with no more than half of a clique's cables: not a
    /// clique, even a damaged one.
    SparseGroup {
        switch: SwitchId,
        cables: usize,
        members: usize,
    },
    /// Two members of a group have no route between them through the
    /// group that keeps its destination turns free of cycles (or none at all).
    LocalPair { a: SwitchId, b: SwitchId },
}

/// How a switch that cannot reach its group's global cable goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// A destination turn, with the SL of its own group's colour.
    OwnColour,
    /// Its own global cable (port) into a middle group of that colour.
    Escape(PortNum, u8),
}

pub struct Plan<'a> {
    pub graph: &'a SwitchGraph,
    pub groups: Groups,
    /// Per group: how its members reach each other.
    local: Vec<GroupLocal>,
    /// Per (A, B), at `A * g + B`: the global cables from A to B, in switch
    /// (GUID) and port order.
    links: Vec<Vec<GlobalLink>>,
    /// Per (A, B) without a cable: the groups a detour may cross.
    detours: Vec<Vec<u32>>,
    /// Per (switch, destination group) that needs one: the switch's own
    /// global cable to leave by, and the colour of the group it leads to.
    escapes: HashMap<(SwitchId, usize), (PortNum, u8)>,
    pub colour: Vec<u8>,
    /// Per group: its colour for entries (`ENTRY_COLOURS`).
    pub entry_colour: Vec<u8>,
    /// Whether any path carries a colour in its SL (crosses a middle
    /// group, escapes, or makes its own group the middle).
    pub has_detours: bool,
    /// Per (A, B) that no middle group can join (`far_pairs`): the groups
    /// next to A one global hop nearer to B, for the reserve layers.
    nearer: HashMap<(usize, usize), Vec<u32>>,
    /// (switch, destination group) whose paths take the reserve layers
    /// although their group has a way (the switch has none).
    stranded: HashSet<(SwitchId, usize)>,
    /// Per (switch, group its group has no cable to): its own cables into
    /// middle groups towards that group (`middles_from`), for `own_detour`.
    own_middles: HashMap<(SwitchId, u32), Vec<OwnMiddle>>,
    /// Per switch: the local hops all members of its group take to reach
    /// it (`local_hops`), which weighs the owners a detour may start from.
    reach_cost: Vec<usize>,
}

impl<'a> Plan<'a> {
    pub fn new(graph: &'a SwitchGraph, groups: Groups) -> Result<Self, Unroutable> {
        let n = graph.switch_count();
        let g = groups.members.len();
        let ungrouped: Vec<SwitchId> = groups
            .members
            .iter()
            .filter(|m| m.len() == 1)
            .map(|m| m[0])
            .collect();
        if g > 1 && ungrouped.len() * 2 > n {
            return Err(Unroutable::NoGroups {
                ungrouped: ungrouped.len(),
                switches: n,
                example: ungrouped[0],
            });
        }
        let group = |s: SwitchId| groups.of_switch[s.idx()];
        for members in groups.members.iter().filter(|m| m.len() >= 3) {
            let cables = crate::topology::dragonfly::cabled_pairs(graph, members);
            let clique = members.len() * (members.len() - 1) / 2;
            if cables * 2 <= clique {
                return Err(Unroutable::SparseGroup {
                    switch: members[0],
                    cables,
                    members: members.len(),
                });
            }
        }
        let mut links: Vec<Vec<GlobalLink>> = vec![Vec::new(); g * g];
        for s in graph.ids() {
            for cable in graph.cables(s) {
                let (gs, gt) = (group(s), group(cable.to));
                if gs != gt {
                    links[gs * g + gt].push(GlobalLink {
                        owner: s,
                        port: cable.port,
                        landing: cable.to,
                    });
                }
            }
        }
        let local = groups
            .members
            .iter()
            .map(|members| {
                GroupLocal::new(graph, members).map_err(|(a, b)| Unroutable::LocalPair { a, b })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut plan = Plan {
            graph,
            local,
            links,
            detours: vec![Vec::new(); g * g],
            escapes: HashMap::new(),
            colour: vec![0; g],
            entry_colour: Vec::new(),
            has_detours: false,
            reach_cost: Vec::new(),
            own_middles: HashMap::new(),
            nearer: HashMap::new(),
            stranded: HashSet::new(),
            groups,
        };
        plan.reach_cost = graph
            .ids()
            .map(|s| {
                plan.groups.members[plan.group_of(s)]
                    .iter()
                    .map(|&m| plan.local_hops(m, s))
                    .sum()
            })
            .collect();
        plan.plan_detours();
        plan.entry_colour = super::entry::entry_colours(&plan);
        Ok(plan)
    }

    fn group_count(&self) -> usize {
        self.groups.members.len()
    }

    pub fn group_of(&self, s: SwitchId) -> usize {
        self.groups.of_switch[s.idx()]
    }

    /// Global cables from group `a` to group `b`.
    pub fn links(&self, a: usize, b: usize) -> &[GlobalLink] {
        &self.links[a * self.group_count() + b]
    }

    /// Whether every pair of the group's members is cabled.
    pub fn complete(&self, group: usize) -> bool {
        self.local[group].complete
    }

    /// The set the turn `from` -> `via` -> `to` belongs to, if any route
    /// takes it.
    pub fn turn(&self, from: SwitchId, via: SwitchId, to: SwitchId) -> Option<Role> {
        self.local[self.group_of(via)].turn(from, via, to)
    }

    /// Whether some member's route (of either set) to `t` passes `via`.
    pub fn passed_towards(&self, via: SwitchId, t: SwitchId) -> bool {
        let local = &self.local[self.group_of(via)];
        // A complete group's routes are one hop: they pass no member.
        !local.complete && local.passes(via, t, Role::Source)
            || local.passes(via, t, Role::Destination)
    }

    /// Whether `s` reaches `owner` (same group) by a source route.
    pub fn reaches_for_source(&self, s: SwitchId, owner: SwitchId) -> bool {
        self.local[self.group_of(s)].reaches(s, owner, Role::Source)
    }

    /// The groups a detour from `a` to `b` may cross, whatever the
    /// colours: joined to both, and every cable towards `b` owned by a
    /// switch that some cable from `a` lands on or next to.
    fn crossable(&self, a: usize, b: usize) -> Vec<u32> {
        (0..self.group_count())
            .filter(|&c| {
                c != a && c != b && !self.links(a, c).is_empty() && !self.links(c, b).is_empty()
            })
            .filter(|&c| {
                self.links(c, b).iter().all(|out| {
                    self.links(a, c).iter().any(|inn| {
                        inn.landing == out.owner
                            || self.graph.slot(inn.landing, out.owner).is_some()
                    })
                })
            })
            .map(|c| c as u32)
            .collect()
    }

    /// For each far pair (A, B): the groups cabled to A whose distance to
    /// B in global hops is one less than A's (a BFS over groups from B).
    fn nearer_groups(&self, far_pairs: &[(usize, usize)]) -> HashMap<(usize, usize), Vec<u32>> {
        let g = self.group_count();
        let mut from: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut nearer = HashMap::new();
        for &(a, b) in far_pairs {
            let dist = from.entry(b).or_insert_with(|| {
                let mut dist = vec![usize::MAX; g];
                dist[b] = 0;
                let mut queue = VecDeque::from([b]);
                while let Some(x) = queue.pop_front() {
                    for y in 0..g {
                        if dist[y] == usize::MAX && !self.links(y, x).is_empty() {
                            dist[y] = dist[x] + 1;
                            queue.push_back(y);
                        }
                    }
                }
                dist
            });
            let next: Vec<u32> = (0..g)
                .filter(|&c| {
                    !self.links(a, c).is_empty() && dist[c].checked_add(1) == Some(dist[a])
                })
                .map(|c| c as u32)
                .collect();
            nearer.insert((a, b), next);
        }
        nearer
    }

    /// The global cables of `s` itself into groups whose colour is neither
    /// its group's nor `b`'s, joined to `b` with every cable there owned by
    /// the switch the cable lands on or a neighbour of it (so the middle
    /// group adds at most one local hop): (port, landing, middle group).
    fn middles_from<'c>(
        &'c self,
        s: SwitchId,
        b: usize,
        colour: &'c [u8],
    ) -> impl Iterator<Item = OwnMiddle> + 'c {
        let a = self.group_of(s);
        let (ca, cb) = (colour[a], colour[b]);
        self.graph.cables(s).iter().filter_map(move |cable| {
            let c = self.group_of(cable.to);
            let onward = self.links(c, b);
            let fits = c != a
                && c != b
                && colour[c] != ca
                && colour[c] != cb
                && !onward.is_empty()
                && onward
                    .iter()
                    .all(|l| l.owner == cable.to || self.graph.slot(cable.to, l.owner).is_some());
            fits.then_some(OwnMiddle {
                port: cable.port,
                landing: cable.to,
                group: c,
            })
        })
    }

    /// A global cable of `s` itself into a middle group towards `b` (the
    /// first of `middles_from`): its port and that group's colour.
    fn escape(&self, s: SwitchId, b: usize, colour: &[u8]) -> Option<(PortNum, u8)> {
        self.middles_from(s, b, colour)
            .next()
            .map(|m| (m.port, colour[m.group]))
    }

    /// For a detour towards `dest` (the `rank`-th LID of group `b`): a
    /// cable of `s` itself into a middle group, when `s` is not the group
    /// route's `owner` and no other member's source route passes `s`
    /// towards it (their traffic follows `s`'s table); of those, the one
    /// with the fewest local hops after it. Its port and the middle group's
    /// colour.
    pub fn own_detour(
        &self,
        s: SwitchId,
        dest: SwitchId,
        rank: usize,
        owner: SwitchId,
    ) -> Option<(PortNum, u8)> {
        let b = self.group_of(dest);
        if s == owner || self.local[self.group_of(s)].passes(s, owner, Role::Source) {
            return None;
        }
        self.own_middles
            .get(&(s, b as u32))?
            .iter()
            .min_by_key(|m| {
                let onward = self.direct_link(m.group, b, rank, dest);
                usize::from(m.landing != onward.owner) + self.local_hops(onward.landing, dest)
            })
            .map(|m| (m.port, self.colour[m.group]))
    }

    /// Lists `middles_from` under the final colours for every switch of a
    /// group that has no cable to the other group of a pair.
    fn list_own_middles(&mut self, pairs: &[(usize, usize, Vec<u32>)]) {
        let mut lists = HashMap::new();
        for &(a, b, _) in pairs {
            for &s in &self.groups.members[a] {
                let middles: Vec<_> = self.middles_from(s, b, &self.colour).collect();
                if !middles.is_empty() {
                    lists.insert((s, b as u32), middles);
                }
            }
        }
        self.own_middles = lists;
    }

    /// How `s` goes on towards group `b` when it cannot reach the owner of
    /// the global cable `route` takes (module comment).
    pub fn fallback(&self, s: SwitchId, b: usize, route: &GroupRoute) -> Option<Fallback> {
        let a = self.group_of(s);
        if route.lane == Lane::Minimal
            && self.colour[a] != self.colour[b]
            && self.two_hop_turn(s, route.owner)
        {
            return Some(Fallback::OwnColour);
        }
        self.escapes
            .get(&(s, b))
            .map(|&(port, colour)| Fallback::Escape(port, colour))
    }

    /// Whether the destination route from `s` to `owner` turns once, at a
    /// member cabled to `owner`: that member's own table sends the traffic
    /// straight on to `owner`, through the turn the destination route
    /// recorded, so a path that borrows the route keeps to its VLs.
    fn two_hop_turn(&self, s: SwitchId, owner: SwitchId) -> bool {
        let local = &self.local[self.group_of(s)];
        let next = local.next_hops(s, owner, Role::Destination);
        !next.is_empty() && next.iter().all(|m| self.graph.slot(m, owner).is_some())
    }

    /// The cable from group `a` into middle group `c` for traffic the
    /// middle group sends on from `onward_owner`: one landing on it, else
    /// next to it.
    fn link_into(&self, a: usize, c: usize, onward_owner: SwitchId) -> GlobalLink {
        let into = self.links(a, c);
        into.iter()
            .find(|l| l.landing == onward_owner)
            .or_else(|| {
                into.iter()
                    .find(|l| self.graph.slot(l.landing, onward_owner).is_some())
            })
            .copied()
            .unwrap_or(into[0])
    }

    /// Local hops from `from` to `dest` of the same group: 0, 1 when
    /// cabled, else 2 (a damaged group's destination routes take one turn
    /// almost always).
    pub fn local_hops(&self, from: SwitchId, dest: SwitchId) -> usize {
        if from == dest {
            0
        } else if self.graph.slot(from, dest).is_some() {
            1
        } else {
            2
        }
    }

    /// The global cable from `a` to `b` that traffic to `dest`, the
    /// `rank`-th LID of `b`, takes: of the cables landing on or next to
    /// `dest` (all of them in an intact group), the `rank`-th, so that
    /// destinations spread over them.
    pub fn direct_link(&self, a: usize, b: usize, rank: usize, dest: SwitchId) -> GlobalLink {
        let all = self.links(a, b);
        let near = all
            .iter()
            .filter(|l| self.local_hops(l.landing, dest) <= 1)
            .count();
        if near == 0 || near == all.len() {
            return all[rank % all.len()];
        }
        *all.iter()
            .filter(|l| self.local_hops(l.landing, dest) <= 1)
            .nth(rank % near)
            .unwrap()
    }

    /// The way traffic from group `a` to `dest` (the `rank`-th LID of group
    /// `b`) leaves `a`: a direct cable (`direct_link`), else a detour
    /// (`detour_routes`).
    pub fn group_route(&self, a: usize, dest: SwitchId, rank: usize) -> GroupRoute {
        let b = self.group_of(dest);
        if self.links(a, b).is_empty() {
            return self.detour_routes(a, b, &[(dest, rank)])[0];
        }
        let link = self.direct_link(a, b, rank, dest);
        GroupRoute {
            owner: link.owner,
            port: link.port,
            lane: Lane::Minimal,
        }
    }

    /// How traffic from group `a` leaves it for each of `dests` (switch,
    /// rank among the LIDs of `b`) in group `b`, which `a` has no cable
    /// to: through the middle group that makes the group's paths shortest,
    /// destinations spread over the middle groups that tie. Every switch
    /// of `a` makes the same choice, so tables stay destination-based.
    pub fn detour_routes(
        &self,
        a: usize,
        b: usize,
        dests: &[(SwitchId, usize)],
    ) -> Vec<GroupRoute> {
        if let Some(nearer) = self.nearer.get(&(a, b)) {
            return dests
                .iter()
                .map(|&(_, rank)| self.reserve_route(a, b, nearer, rank))
                .collect();
        }
        let members = self.groups.members[a].len();
        // Per candidate: the cable into it, landing on or next to the
        // middle group's own cable towards the destination (`crossable`);
        // the local hops from every member of `a` to that cable's owner,
        // then in the middle group (taken by every member's path), and in
        // `b` from the middle group's cable. With one cable on from the
        // middle group (the usual case) all but the last are the same for
        // every destination, so they are worked out once.
        let via = |c: usize, onward: GlobalLink| {
            let into = self.link_into(a, c, onward.owner);
            let hops = self.reach_cost[into.owner.idx()]
                + members * usize::from(into.landing != onward.owner);
            Via { into, onward, hops }
        };
        let candidates: Vec<(usize, Option<Via>)> = self.detours[a * self.group_count() + b]
            .iter()
            .map(|&c| {
                let c = c as usize;
                (
                    c,
                    matches!(self.links(c, b), [_]).then(|| via(c, self.links(c, b)[0])),
                )
            })
            .collect();
        let mut costed: Vec<(usize, GlobalLink, usize)> = Vec::with_capacity(candidates.len());
        dests
            .iter()
            .map(|&(dest, rank)| {
                costed.clear();
                costed.extend(candidates.iter().map(|&(c, fixed)| {
                    let v = fixed.unwrap_or_else(|| via(c, self.direct_link(c, b, rank, dest)));
                    (
                        c,
                        v.into,
                        v.hops + members * self.local_hops(v.onward.landing, dest),
                    )
                }));
                let fewest = costed.iter().map(|&(_, _, cost)| cost).min().unwrap();
                let ties = || costed.iter().filter(|&&(_, _, cost)| cost == fewest);
                // Pairs start at different candidates, so detours of all
                // pairs spread over the middle groups.
                let &(c, into, _) = ties().nth((rank + a + b) % ties().count()).unwrap();
                GroupRoute {
                    owner: into.owner,
                    port: into.port,
                    lane: Lane::Middle(self.colour[c]),
                }
            })
            .collect()
    }

    /// Local hops all members of `s`'s group take to reach `s`.
    pub fn reach_cost(&self, s: SwitchId) -> usize {
        self.reach_cost[s.idx()]
    }

    /// Per destination group `b`, per group: whether traffic towards `b`
    /// from elsewhere crosses it as a middle group (a detour between
    /// groups without a cable, or a switch's escape), relying on its
    /// tables to send `b`'s traffic straight on (`entry`).
    pub fn serving_middles(&self) -> Vec<Vec<bool>> {
        let g = self.group_count();
        let mut serving = vec![vec![false; g]; g];
        for (ab, middles) in self.detours.iter().enumerate() {
            for &c in middles {
                serving[ab % g][c as usize] = true;
            }
        }
        for (&(_, b), middles) in &self.own_middles {
            for m in middles {
                serving[b as usize][m.group] = true;
            }
        }
        for (&(s, b), &(port, _)) in &self.escapes {
            if let Some(crate::fabric::Peer::Switch { switch, .. }) = self.graph.peer(s, port) {
                serving[b][self.group_of(switch)] = true;
            }
        }
        serving
    }

    /// Per destination group `b`: the switches where traffic towards `b`
    /// from elsewhere enters a middle group (detours between groups
    /// without a cable, escapes, own detours); their tables must send it
    /// straight on (`entry`).
    pub fn middle_landings(&self) -> Vec<HashSet<SwitchId, super::tables::KeyHash>> {
        let g = self.group_count();
        let mut landings = vec![HashSet::with_hasher(super::tables::KeyHash); g];
        for a in 0..g {
            for b in (0..g).filter(|&b| b != a && self.links(a, b).is_empty()) {
                for &c in &self.detours[a * g + b] {
                    landings[b].extend(self.links(a, c as usize).iter().map(|l| l.landing));
                }
            }
        }
        for (&(_, b), middles) in &self.own_middles {
            landings[b as usize].extend(middles.iter().map(|m| m.landing));
        }
        for (&(s, b), &(port, _)) in &self.escapes {
            if let Some(crate::fabric::Peer::Switch { switch, .. }) = self.graph.peer(s, port) {
                landings[b].insert(switch);
            }
        }
        landings
    }

    /// Whether some path's SL is not the base SL (a colour or a reserve
    /// layer), so path SLs are kept per source switch.
    pub fn per_path_sls(&self) -> bool {
        self.has_detours || !self.nearer.is_empty() || !self.stranded.is_empty()
    }

    /// A far pair's way on (`nearer`): to a group one global hop nearer
    /// to `b`, whose own tables take it from there, on the reserve layers.
    /// Destinations spread over those groups and the cables into them.
    fn reserve_route(&self, a: usize, b: usize, nearer: &[u32], rank: usize) -> GroupRoute {
        let c = nearer[(rank + a + b) % nearer.len()] as usize;
        let into = self.links(a, c);
        let link = into[rank / nearer.len() % into.len()];
        GroupRoute {
            owner: link.owner,
            port: link.port,
            lane: Lane::Reserve,
        }
    }

    /// The port from `u` towards `t` of the same group, for `lid`: on
    /// `role`'s route (the destination route where the source role has
    /// none), next hops and parallel cables spread by LID.
    pub fn local_port(&self, u: SwitchId, t: SwitchId, role: Role, lid: usize) -> PortNum {
        let local = &self.local[self.group_of(u)];
        let mut next = local.next_hops(u, t, role);
        if next.is_empty() {
            next = local.next_hops(u, t, Role::Destination);
        }
        let Some(via) = next.get(lid % next.len().max(1)) else {
            return PortNum::NO_PATH;
        };
        let ports = self.graph.bundle(u, via);
        ports
            .get(lid / next.len() % ports.len().max(1))
            .copied()
            .unwrap_or(PortNum::NO_PATH)
    }

    /// The one port from `u` to `t` when a single cable joins them (the
    /// common case the table fill takes a shortcut for).
    pub fn single_port(&self, u: SwitchId, t: SwitchId) -> Option<PortNum> {
        match self.graph.bundle(u, t) {
            [port] => Some(*port),
            _ => None,
        }
    }
}

//! dla's forwarding tables and path SLs from its plan (Figure 4 of the DLA
//! paper, with the plan's local and global detours where cables are gone).

use std::collections::{HashMap, HashSet};

use super::entry::EntryPlanner;
use super::plan::{Fallback, GroupRoute, Lane, Plan, Role, ENTRY_OFFSET};
use crate::fabric::{describe, Fabric, Lid, PortNum, SwitchId};
use crate::routing::{Lft, Routing, SwitchSls, NO_PATH};

/// A LID to route and where it is delivered (compact: the fill loop reads
/// one of these per table entry).
pub struct Destination {
    pub lid: Lid,
    /// Out-port at the destination switch.
    pub final_port: PortNum,
    pub switch: SwitchId,
    pub group: u32,
    /// Position among the LIDs delivered in `group`, to spread them over
    /// the global cables (and detours) into the group.
    pub rank: u32,
}

/// Every routable LID with where it is delivered.
pub fn destinations(fabric: &Fabric, plan: &Plan) -> Vec<Destination> {
    let mut rank_in_group = vec![0u32; plan.groups.members.len()];
    let mut out = Vec::with_capacity(fabric.lft_len());
    for (lid, owner) in fabric.lids() {
        let Some(switch) = fabric.lid_switch(lid) else {
            log::warn!(
                "dla: LID {lid} of {} is not cabled to a switch; left unrouted",
                describe(fabric.node(owner.node))
            );
            continue;
        };
        let group = plan.group_of(switch);
        let rank = rank_in_group[group];
        rank_in_group[group] += 1;
        out.push(Destination {
            lid,
            final_port: fabric.delivery_port(owner),
            switch,
            group: group as u32,
            rank,
        });
    }
    out
}

/// How one group's traffic to one destination leaves the group, where
/// that takes a detour or an entry through a neighbouring group
/// (`entry`): the choice weighs every candidate, so it is made once per
/// (group, destination) rather than once per switch.
pub struct DetourRoutes {
    routes: HashMap<(u32, Lid), GroupRoute, KeyHash>,
    /// (source group, destination group) with some entry: their table
    /// entries are not all the one port of the group's cable.
    entered: HashSet<(u32, u32), KeyHash>,
    /// Per (switch, LID): a switch's own way out (`entry`) where it is
    /// shorter than its group's route.
    /// (sorted by LID per switch; there can be millions, so no map)
    exits: Vec<Vec<(Lid, PortNum, Lane)>>,
    /// (switch, destination group) with some exit.
    exited: HashSet<(SwitchId, u32), KeyHash>,
    /// The entry SL offsets some path takes.
    pub entry_offsets: Vec<u8>,
}

/// A hasher for the small integer keys above, looked up once per table
/// entry that has no shortcut: SipHash's resistance to crafted keys buys
/// nothing here and costs a tenth of the fill.
#[derive(Clone, Copy, Default)]
pub struct KeyHash;

impl std::hash::BuildHasher for KeyHash {
    type Hasher = MixHasher;
    fn build_hasher(&self) -> MixHasher {
        MixHasher(0)
    }
}

/// Multiply-rotate mixing (as in Firefox's hash) of the key's words.
pub struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl DetourRoutes {
    pub fn new(plan: &Plan, destinations: &[Destination]) -> Self {
        let g = plan.groups.members.len();
        let mut by_group: Vec<Vec<&Destination>> = vec![Vec::new(); g];
        for d in destinations {
            by_group[d.group as usize].push(d);
        }
        let mut routes = HashMap::with_hasher(KeyHash);
        let mut entered = HashSet::with_hasher(KeyHash);
        let mut exits: Vec<Vec<(Lid, PortNum, Lane)>> = vec![Vec::new(); plan.graph.switch_count()];
        let mut exited = HashSet::with_hasher(KeyHash);
        let mut entry_offsets = Vec::new();
        let mut entries = EntryPlanner::new(plan);
        for (b, dests) in by_group.iter().enumerate() {
            let targets: Vec<(SwitchId, usize)> =
                dests.iter().map(|d| (d.switch, d.rank as usize)).collect();
            let mut detoured = HashMap::new();
            for a in (0..g).filter(|&a| a != b && plan.links(a, b).is_empty()) {
                for (i, (d, route)) in dests
                    .iter()
                    .zip(plan.detour_routes(a, b, &targets))
                    .enumerate()
                {
                    routes.insert((a as u32, d.lid), route);
                    detoured.insert((a, i), route);
                }
            }
            let chosen = entries.entries_into(b, &targets, &detoured);
            let offset = |lane: Lane| match lane {
                Lane::EntryVia(colour) => ENTRY_OFFSET + 1 + colour,
                _ => ENTRY_OFFSET,
            };
            for (a, i, route) in chosen.groups {
                routes.insert((a as u32, dests[i].lid), route);
                entered.insert((a as u32, b as u32));
                entry_offsets.push(offset(route.lane));
            }
            let mut last = None;
            for (x, i, port, lane) in chosen.exits {
                exits[x.idx()].push((dests[i].lid, port, lane));
                if last != Some((x, lane)) {
                    exited.insert((x, b as u32));
                    entry_offsets.push(offset(lane));
                    last = Some((x, lane));
                }
            }
            entry_offsets.sort_unstable();
            entry_offsets.dedup();
        }
        exits
            .iter_mut()
            .for_each(|row| row.sort_unstable_by_key(|&(lid, _, _)| lid));
        let count: usize = exits.iter().map(Vec::len).sum();
        log::debug!(
            "dla: {} (group, LID) routes through a middle group or entry, {count} exits",
            routes.len()
        );
        DetourRoutes {
            routes,
            entered,
            exits,
            exited,
            entry_offsets,
        }
    }

    /// Whether any path takes an entry through a neighbouring group.
    pub fn has_entries(&self) -> bool {
        !self.entry_offsets.is_empty()
    }

    /// Whether `s` (of group `gs`) sends `lid` other than its group's
    /// cable: an entry of its group's or an exit of its own.
    fn special(&self, s: SwitchId, gs: usize, lid: Lid) -> bool {
        self.routes.contains_key(&(gs as u32, lid)) || self.exit(s, lid).is_some()
    }

    /// The port and lane of `s`'s own way out towards `lid`, if it has one.
    fn exit(&self, s: SwitchId, lid: Lid) -> Option<(PortNum, Lane)> {
        let row = &self.exits[s.idx()];
        row.binary_search_by_key(&lid, |&(l, _, _)| l)
            .ok()
            .map(|i| (row[i].1, row[i].2))
    }

    /// Whether some of `s`'s traffic to group `b` takes an entry (its
    /// group's or its own).
    fn entered(&self, s: SwitchId, a: usize, b: usize) -> bool {
        self.entered.contains(&(a as u32, b as u32)) || self.exited.contains(&(s, b as u32))
    }

    fn route(&self, plan: &Plan, gs: usize, d: &Destination) -> GroupRoute {
        match self.routes.get(&(gs as u32, d.lid)) {
            Some(route) => *route,
            None => plan.group_route(gs, d.switch, d.rank as usize),
        }
    }
}

/// The out-port of switch `s` towards `d`, and the lane of the path.
pub fn next_hop(
    plan: &Plan,
    detours: &DetourRoutes,
    s: SwitchId,
    d: &Destination,
) -> (PortNum, Lane) {
    if s == d.switch {
        return (d.final_port, Lane::Minimal);
    }
    let (gs, gd) = (plan.group_of(s), d.group as usize);
    let lid = d.lid.idx();
    if gs == gd {
        return (
            plan.local_port(s, d.switch, Role::Destination, lid),
            Lane::Minimal,
        );
    }
    if let Some(exit) = detours.exit(s, d.lid) {
        return exit;
    }
    let route = detours.route(plan, gs, d);
    if let Lane::Middle(_) = route.lane {
        // A detour: a cable of this switch's own into a middle group
        // saves the walk to the group's.
        if let Some((port, colour)) = plan.own_detour(s, d.switch, d.rank as usize, route.owner) {
            return (port, Lane::Middle(colour));
        }
    }
    if route.owner == s {
        (route.port, route.lane)
    } else if plan.reaches_for_source(s, route.owner) || route.lane == Lane::Reserve {
        (
            plan.local_port(s, route.owner, Role::Source, lid),
            route.lane,
        )
    } else {
        match plan.fallback(s, gd, &route) {
            Some(Fallback::OwnColour) => (
                plan.local_port(s, route.owner, Role::Destination, lid),
                Lane::Middle(plan.colour[gs]),
            ),
            Some(Fallback::Escape(port, colour)) => (port, Lane::Middle(colour)),
            // A stranded switch (`Plan`): the destination route to the
            // owner, on the reserve layers.
            None => (
                plan.local_port(s, route.owner, Role::Destination, lid),
                Lane::Reserve,
            ),
        }
    }
}

/// Every switch's table and every path's SL: `base`, `base` + 1 + the
/// colour of the middle group a path crosses, `base` + `ENTRY_OFFSET` on
/// an entry through a neighbouring group, or (for now) `base` on the
/// paths listed for the reserve layers, which `reserve` places. Rows are
/// independent and filled on all cores. Most entries repeat one port per
/// destination group (one global cable between two groups, one cable
/// between two members), so those are looked up once per switch; the rest
/// take `next_hop`.
pub fn forwarding_tables(
    fabric: &Fabric,
    plan: &Plan,
    destinations: &[Destination],
    detours: &DetourRoutes,
    base: u8,
) -> Tables {
    const PER_LID: PortNum = NO_PATH;
    let g = plan.groups.members.len();
    let mut lfts = Routing::empty_lfts(fabric);
    let mut sls =
        (plan.per_path_sls() || detours.has_entries()).then(|| SwitchSls::filled(fabric, base));
    let mut reserve: Vec<Vec<Lid>> = vec![Vec::new(); fabric.switch_count()];
    // Per switch: its table, its row of SLs, the LIDs it sends on the
    // reserve layers.
    type Row<'r> = (&'r mut Lft, Option<&'r mut [u8]>, &'r mut Vec<Lid>);
    let mut rows: Vec<Row> = match sls.as_mut() {
        Some(sls) => lfts
            .iter_mut()
            .zip(sls.rows_mut().map(Some))
            .zip(&mut reserve)
            .map(|((l, s), r)| (l, s, r))
            .collect(),
        None => lfts
            .iter_mut()
            .zip(&mut reserve)
            .map(|(l, r)| (l, None, r))
            .collect(),
    };
    crate::parallel::for_each_row(&mut rows, |s, (lft, sl_row, reserve)| {
        let s = SwitchId::new(s);
        let gs = plan.group_of(s);
        let toward_group: Vec<PortNum> = (0..g)
            .map(|gd| match plan.links(gs, gd) {
                [link] if link.owner == s => link.port,
                [link] => plan.single_port(s, link.owner).unwrap_or(PER_LID),
                _ => PER_LID,
            })
            .collect();
        // Groups some of whose LIDs this switch sends another way.
        let entered: Vec<bool> = (0..g).map(|gd| detours.entered(s, gs, gd)).collect();
        let members = &plan.groups.members[gs];
        let toward_member: Vec<PortNum> = members
            .iter()
            .map(|&m| {
                if m == s {
                    PER_LID
                } else {
                    plan.single_port(s, m).unwrap_or(PER_LID)
                }
            })
            .collect();
        for d in destinations {
            let known = if d.switch == s {
                PER_LID
            } else if d.group as usize == gs {
                members
                    .binary_search(&d.switch)
                    .map_or(PER_LID, |i| toward_member[i])
            } else if entered[d.group as usize] && detours.special(s, gs, d.lid) {
                PER_LID
            } else {
                toward_group[d.group as usize]
            };
            let (port, lane) = if known == PER_LID {
                next_hop(plan, detours, s, d)
            } else {
                (known, Lane::Minimal)
            };
            lft.set(d.lid, port);
            match (lane, sl_row.as_deref_mut()) {
                (Lane::Middle(colour), Some(row)) => row[d.lid.idx()] = base + 1 + colour,
                (Lane::Entry, Some(row)) => row[d.lid.idx()] = base + ENTRY_OFFSET,
                (Lane::EntryVia(colour), Some(row)) => {
                    row[d.lid.idx()] = base + ENTRY_OFFSET + 1 + colour
                }
                (Lane::Reserve, _) => reserve.push(d.lid),
                _ => {}
            }
        }
    });
    let reserve = reserve
        .into_iter()
        .enumerate()
        .flat_map(|(s, lids)| lids.into_iter().map(move |l| (SwitchId::new(s), l)));
    Tables {
        reserve: reserve.collect(),
        lfts,
        sls,
    }
}

/// What `forwarding_tables` fills.
pub struct Tables {
    pub lfts: Vec<Lft>,
    /// Per (source switch, LID) SLs, where any path's SL is not the base.
    pub sls: Option<SwitchSls>,
    /// The (source switch, LID) paths that take the reserve layers.
    pub reserve: Vec<(SwitchId, Lid)>,
}

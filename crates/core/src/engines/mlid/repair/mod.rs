//! Damaged and crowded trees: single LFT entries moved off the busiest
//! cables after the fill.
//!
//! The fill meets every source's packets to one LID at one root (its
//! chain). Where cables are cut, the sources of a pod cut off from that
//! root spill over their leaves' up-cables as if every middle switch still
//! had all its up-cables, and the cables between a root and a middle
//! switch that lost some carry a quarter more than dfsssp's (FT(8,3) with
//! 5 % cut at lmc 4: 3,436 routes against 2,752). Counters laid LID after
//! LID cannot see that: a middle switch's missing cables only show once
//! every LID's routes are down. Complete trees where more LIDs come into
//! a switch than it has cables from above, and not a multiple of them,
//! have cables that carry a whole LID more than others (the leaf–spine
//! with Aggregation Nodes: 13 LIDs over 12 cables into a leaf). So, on
//! damaged and crowded trees only (`needs_repair`; other complete trees
//! keep the fill's tables), this pass looks at the whole load: while the busiest cable can be relieved, one switch on a route
//! over it forwards that LID over another of its candidates, the move
//! that leaves the cables it loads least busy.
//!
//! A candidate goes the same way (up or down) as the entry it replaces,
//! to a switch one hop nearer the destination whose own route is
//! up*/down* (all down after a down-cable): the new path is a shortest
//! up*/down* path as the old one was, on the same VL. Only entries whose
//! route is up*/down* move (not descents on VL 1 or shortest detours).
//! A port's other LIDs do not take the new path from that switch more
//! often than the old one (a port's LIDs keep their different paths), and
//! extra LIDs move before base LIDs: sources take base LIDs on every tree
//! this pass runs on, so at lmc > 0 their spread, the EBB, stays as the
//! fill made it where extra LIDs suffice (FT(8,3) and the PGFT of the
//! tests); at lmc 0 base LIDs move and the EBB loses up to .004. A move
//! lowers the busiest cable and raises none to its load, so the cables at
//! the maximum get fewer with every move and the pass ends.
//!
//! The search reads no more than it weighs: the loads come from the fill
//! (`fill` counts them on the trees repaired) and live in a max tree (`loads`),
//! a LID's routes are read only at the switches passing the busiest cable
//! and those a candidate leads to (`routes`), and a candidate that cannot
//! beat the best found is passed over. The moves are the ones a full read
//! of every route per scan made; what costs is the scan per move.

mod loads;
mod routes;

use super::selection::rank_rule_fits;
use super::NAME;
use crate::fabric::{Fabric, Lid, PortNum, SwitchId};
use crate::routing::Lft;
use crate::topology::gft::GenFatTree;
use loads::Loads;
use routes::{LidRoutes, Shape, NOWHERE};

/// A host port's LIDs and the switch that delivers them.
pub(super) struct HostLids {
    pub(super) base: Lid,
    pub(super) count: u16,
    pub(super) at: SwitchId,
}

/// Why the repair runs on a tree, if it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RepairNeed {
    /// Some switch has fewer up- or down-cables than the most at its
    /// height: a cut cable, a lost switch.
    Damaged,
    /// A complete tree, but some switch delivers more CAs' LIDs than it
    /// has cables from above, and not a multiple of them: every LID comes
    /// down one of those cables whole (its chain), so some cable must
    /// carry a whole LID more than another (`crowded_switch`).
    Crowded,
}

/// Whether, and why, the fill's tables need the repair. A complete tree
/// keeps the fill's tables unless whole LIDs cannot share its cables
/// evenly: where every cable into a switch can carry one LID whole (or
/// the same number), splitting a LID's sources over two cables only
/// makes two destinations of a permutation meet. Run on every complete
/// tree with CAs above the leaves, the repair lost EBB that way
/// (PGFT(2; 4,6; 1,3; 1,2) with 3 hosts on spines, 4 hosts over 6 cables
/// into each leaf, seeds 3/4/5: .9241/.9299/.9217 -> .9158/.9191/.9097,
/// pssp .9260/.9303/.9260); the leaf–spine with Aggregation Nodes (13
/// LIDs over 12 cables into each leaf, one cable carrying two whole
/// LIDs) goes from 186 routes to 119 (EBB .8188 -> .8172, pssp 145 /
/// .8037). Damaged trees with hosts on spines are repaired like any
/// other (that tree with 10 % of its cables cut, seeds 1–5: EBB within
/// .004 of pssp's or above it, busiest cable below pssp's).
///
/// Where sources pick extra LIDs by rank (`rank_rule_fits` at lmc > 0),
/// a crowded complete tree keeps the fill's tables: the repair weighs
/// base-LID routes only and would move the LIDs the rule relies on.
pub(super) fn needs_repair(fabric: &Fabric, tree: &GenFatTree) -> Option<RepairNeed> {
    if is_damaged(tree) {
        return Some(RepairNeed::Damaged);
    }
    let by_rank = fabric.lmc() > 0 && rank_rule_fits(fabric, tree);
    (!by_rank && crowded_switch(fabric, tree).is_some()).then_some(RepairNeed::Crowded)
}

/// Whether some switch has fewer up- or down-cables than the most its
/// height has.
fn is_damaged(tree: &GenFatTree) -> bool {
    let mut most = vec![(0usize, 0usize); tree.top + 1];
    for (s, &h) in tree.height.iter().enumerate() {
        most[h].0 = most[h].0.max(tree.up[s].len());
        most[h].1 = most[h].1.max(tree.down[s].len());
    }
    tree.height
        .iter()
        .enumerate()
        .any(|(s, &h)| tree.up[s].len() < most[h].0 || tree.down[s].len() < most[h].1)
}

/// A switch with CAs whose LIDs cannot come down its cables from above
/// as evenly many whole LIDs per cable: more CAs than those cables, and
/// not a multiple (per LID offset: the fill balances each on its own).
/// Counts only the LIDs a switch delivers itself, which all come down
/// its own cables from above; chains of LIDs further below that pass it
/// are spread by the counters over the switches of its height, so this
/// is a sufficient sign, not a necessary one.
pub(super) fn crowded_switch(fabric: &Fabric, tree: &GenFatTree) -> Option<SwitchId> {
    let graph = fabric.graph();
    graph.ids().find(|&s| {
        let (cas, from_above) = (graph.hosts(s) as usize, tree.up[s.idx()].len());
        from_above > 0 && cas > from_above && cas % from_above != 0
    })
}

/// A move: switch `at` forwards offset `offset` of the port `port_lids`
/// over `port`, moving `flow` routes; `peak`: the busiest cable of its
/// new path afterwards.
struct Move {
    port_lids: usize,
    offset: u16,
    at: SwitchId,
    port: PortNum,
    flow: u32,
    peak: u64,
}

impl Move {
    /// Extra LIDs first (sources take base LIDs on the trees repaired:
    /// moving extra ones leaves their spread alone), then the lowest
    /// peak, then the most routes moved.
    fn rank(&self) -> (bool, u64, std::cmp::Reverse<u32>) {
        (self.offset == 0, self.peak, std::cmp::Reverse(self.flow))
    }
}

/// The work the repair may do (LFT entries read, path steps followed),
/// per (LID, switch) of the fabric and at most. Run to its end, the
/// damaged PGFT(3; 8,4,4) at lmc 5 takes 700 per entry (138 M), FT(8,3)
/// at lmc 4 140, the 36-port three-level tree with 23 cables cut 12 at
/// lmc 0 (253 M); the cap ends a larger pass with the cables relieved so
/// far, after about the instructions the pass took before its routes
/// were read where it looks (it then stopped at 21,042 routes on that
/// tree, where it now ends at 12,348).
const WORK_PER_ENTRY: u64 = 1024;
const WORK_AT_MOST: u64 = 1 << 28;

/// What the repair did.
pub(super) struct Repaired {
    pub(super) moves: usize,
    pub(super) busiest_before: u64,
    pub(super) busiest_after: u64,
}

/// Moves entries off the busiest cable while that lowers it (see the
/// module documentation), at most `budget` moves. `loads`: the host
/// routes on every channel (`SwitchGraph::channel`) as the fill laid
/// them.
pub(super) fn spread_busiest(
    fabric: &Fabric,
    tree: &GenFatTree,
    ports: &[HostLids],
    lfts: &mut [Lft],
    loads: &[u64],
    (budget, up_down_only): (usize, bool),
) -> Repaired {
    #[cfg(test)]
    assert_eq!(
        count_route_loads(fabric, tree, ports, lfts),
        loads,
        "the fill's route loads"
    );
    let mut search = Search::new(fabric, tree, ports, loads, up_down_only);
    let busiest_before = search.loads.busiest().map_or(0, |(_, l)| l);
    let mut moves = 0;
    // Each scan lists a move per port; they are made, the best first,
    // while the cable scanned stays the busiest and each still lowers it
    // (the loads they were weighed with change as they are made).
    while moves < budget {
        let Some((busiest, found)) = search.moves_off_busiest(lfts) else {
            break;
        };
        if search.make(lfts, busiest, &found, (&mut moves, budget)) == 0 {
            break;
        }
    }
    log::debug!("{NAME}: repair work used {}", search.budget - search.work);
    #[cfg(test)]
    assert_eq!(
        count_route_loads(fabric, tree, ports, lfts),
        search.loads.all(),
        "the route loads the repair kept"
    );
    Repaired {
        moves,
        busiest_before,
        busiest_after: search.loads.busiest().map_or(0, |(_, l)| l),
    }
}

/// The routes on every channel and the scratch space of the search.
struct Search<'a> {
    fabric: &'a Fabric,
    tree: &'a GenFatTree,
    ports: &'a [HostLids],
    loads: Loads,
    /// The routes of the LID being weighed, read where the search looks.
    routes: LidRoutes,
    /// Per LID: its port (index in `ports`) and offset; `u32::MAX` for
    /// LIDs of no host port.
    owner: Vec<(u32, u16)>,
    /// The LIDs over the busiest cable, as (port, offset), and the
    /// switches whose route of one of them passes it.
    over: Vec<(u32, u16)>,
    passing: Vec<SwitchId>,
    /// Work left (entries read, path steps followed): a tree where moves
    /// never ran out would stop with the cables relieved so far.
    work: u64,
    budget: u64,
    /// No route descends on VL 1: every route is up*/down*.
    up_down_only: bool,
    /// Per switch not passing the busiest cable, for the current LID:
    /// the most routes on a cable of its route before that route meets
    /// the busiest cable's switch's own (where a move's new path through
    /// it joins the old one), kept where `peak_at` holds `peak_mark`; and
    /// where that switch's own route runs (`downstream`).
    peak_on: Vec<u64>,
    peak_at: Vec<u32>,
    downstream: Vec<u32>,
    peak_mark: u32,
    /// Per switch: `stamp` where it is on the path being replaced.
    on_old: Vec<u32>,
    stamp: u32,
    /// A path of the LID being moved from the switch weighed, and how
    /// many of the port's other LIDs take its path from there now.
    mine: Vec<(SwitchId, PortNum)>,
    same_now: usize,
}

impl<'a> Search<'a> {
    fn new(
        fabric: &'a Fabric,
        tree: &'a GenFatTree,
        ports: &'a [HostLids],
        loads: &[u64],
        up_down_only: bool,
    ) -> Self {
        let graph = fabric.graph();
        let n = graph.switch_count();
        let mut owner = Vec::new();
        let mut lids = 0u64;
        for (i, p) in ports.iter().enumerate() {
            for k in 0..p.count {
                let lid = p.base.offset(k).idx();
                if owner.len() <= lid {
                    owner.resize(lid + 1, (u32::MAX, 0));
                }
                owner[lid] = (i as u32, k);
            }
            lids += u64::from(p.count);
        }
        let budget = (WORK_PER_ENTRY * lids.saturating_mul(n as u64)).min(WORK_AT_MOST);
        Search {
            fabric,
            tree,
            ports,
            loads: Loads::new(loads),
            routes: LidRoutes::new(n),
            owner,
            over: Vec::new(),
            passing: Vec::new(),
            work: budget,
            budget,
            on_old: vec![0; n],
            up_down_only,
            peak_on: vec![0; n],
            peak_at: vec![0; n],
            downstream: vec![0; n],
            peak_mark: 0,
            stamp: 0,
            mine: Vec::new(),
            same_now: 0,
        }
    }

    fn spend(&mut self, units: u64) {
        self.work = self.work.saturating_sub(units);
    }

    /// Starts reading offset `k` of port `i`'s routes.
    fn fetch(&mut self, (i, k): (usize, u16)) {
        let p = &self.ports[i];
        self.routes.start(p.base.offset(k), p.at);
    }

    /// The busiest channel and, per port with a LID over it, the best
    /// move of one of its LIDs off it (the first of equals) that lowers
    /// it without loading another as much; the best first.
    fn moves_off_busiest(&mut self, lfts: &[Lft]) -> Option<(usize, Vec<Move>)> {
        let graph = self.fabric.graph();
        let (busiest, peak) = self.loads.busiest()?;
        let (s0, p0) = graph.channel_port(busiest);
        if self.work == 0 {
            log::info!("{NAME}: the repair ran out of its work budget");
            return None;
        }
        self.lids_over(lfts, s0, p0);
        let mut moves = Vec::new();
        let mut at = 0;
        while at < self.over.len() {
            let i = self.over[at].0;
            let end = at + self.over[at..].iter().take_while(|o| o.0 == i).count();
            let i = i as usize;
            // One move per port: the others' paths it was weighed against
            // stay as they were. Extra LIDs first (`Move::rank`): no move
            // of the base LID can rank before one of theirs.
            let mut best: Option<Move> = None;
            let (extra, base) = if self.over[at].1 == 0 {
                (at + 1..end, Some(self.over[at].1))
            } else {
                (at..end, None)
            };
            if self.ports[i].at != s0 {
                for j in extra {
                    self.moves_of((i, self.over[j].1), s0, peak, lfts, &mut best);
                }
                if let Some(k) = base.filter(|_| best.is_none()) {
                    self.moves_of((i, k), s0, peak, lfts, &mut best);
                }
            }
            moves.extend(best);
            at = end;
        }
        let work = self.routes.take_work();
        self.spend(work);
        moves.sort_by_key(Move::rank);
        Some((busiest, moves))
    }

    /// Makes the moves of `found` (the best first) while the cable
    /// `busiest` stays the busiest and each still lowers it, at most
    /// `budget` in all; returns how many were made.
    fn make(
        &mut self,
        lfts: &mut [Lft],
        busiest: usize,
        found: &[Move],
        (moves, budget): (&mut usize, usize),
    ) -> usize {
        let mut made = 0;
        for m in found {
            let peak = self.loads.get(busiest);
            let others = self.loads.most_except(busiest);
            if *moves == budget || peak < others || self.peak_after(lfts, m) >= peak {
                break;
            }
            self.apply(lfts, m);
            made += 1;
            *moves += 1;
        }
        made
    }

    /// The host LIDs whose entry at `s0` is `p0`, by port in the ports'
    /// order, offsets ascending (`over`).
    fn lids_over(&mut self, lfts: &[Lft], s0: SwitchId, p0: PortNum) {
        self.over.clear();
        let row = lfts[s0.idx()].as_bytes();
        let row = &row[..row.len().min(self.owner.len())];
        let want = p0.raw();
        // Blocks without the port are passed over whole (the compiler
        // turns the test into vector compares).
        const BLOCK: usize = 64;
        for (b, block) in row.chunks(BLOCK).enumerate() {
            if block.iter().fold(0u8, |any, &e| any | u8::from(e == want)) == 0 {
                continue;
            }
            for (j, &e) in block.iter().enumerate() {
                let owner = self.owner[b * BLOCK + j];
                if e == want && owner.0 != u32::MAX {
                    self.over.push(owner);
                }
            }
        }
        self.spend(row.len() as u64 / BLOCK as u64 + self.over.len() as u64);
        self.over.sort_unstable();
    }

    /// The moves of offset `k` of port `i` off the busiest cable (from
    /// `s0`, loaded `peak`), at every switch whose route passes it: keeps
    /// the best in `best`.
    fn moves_of(
        &mut self,
        (i, k): (usize, u16),
        s0: SwitchId,
        peak: u64,
        lfts: &[Lft],
        best: &mut Option<Move>,
    ) {
        self.fetch((i, k));
        if self
            .routes
            .gather_passing(self.fabric, self.tree, lfts, (s0, self.up_down_only))
            == 0
        {
            return;
        }
        self.mark_downstream(lfts, s0);
        // Farthest first (a fixed order: among equal moves the first
        // found stays).
        let mut order = std::mem::take(&mut self.passing);
        order.clear();
        order.extend_from_slice(self.routes.passing_order());
        for &u in &order {
            self.moves_at(lfts, (i, k), u, peak, best);
        }
        self.passing = order;
    }

    /// The busiest cable `m`'s new path would load (up to where it joins
    /// the old one), with the loads as they are now.
    fn peak_after(&mut self, lfts: &[Lft], m: &Move) -> u64 {
        self.fetch((m.port_lids, m.offset));
        self.mark_old_path(lfts, m.at);
        let graph = self.fabric.graph();
        let f = u64::from(m.flow);
        let mut top = self.loads.get(graph.channel(m.at, m.port)) + f;
        let mut x = graph.switch_behind(m.at, m.port);
        while let Some(s) = x.filter(|s| self.on_old[s.idx()] != self.stamp) {
            let Some((port, z)) = self.routes.step(self.fabric, lfts, s) else {
                break;
            };
            top = top.max(self.loads.get(graph.channel(s, port)) + f);
            x = Some(z);
        }
        let work = self.routes.take_work();
        self.spend(work);
        top
    }

    /// The moves of offset `k` of port `i` at switch `u` (whose route
    /// passes the busiest channel, loaded `peak`): keeps the best in
    /// `best`.
    fn moves_at(
        &mut self,
        lfts: &[Lft],
        (i, k): (usize, u16),
        u: SwitchId,
        peak: u64,
        best: &mut Option<Move>,
    ) {
        let graph = self.fabric.graph();
        let (fabric, tree) = (self.fabric, self.tree);
        let p = &self.ports[i];
        let lid = p.base.offset(k);
        let f = self.routes.flow(u);
        if f == 0 || self.routes.shape(u) == Shape::Other {
            return;
        }
        let Some((now_port, now)) = self.routes.step(fabric, lfts, u) else {
            return;
        };
        let up = tree.height[now.idx()] > tree.height[u.idx()];
        let cables = if up {
            &tree.up[u.idx()]
        } else {
            &tree.down[u.idx()]
        };
        let hops_u = self.routes.hops(u);
        let f64 = u64::from(f);
        let mut listed = false;
        for c in cables {
            let y = c.to;
            if c.port == now_port || self.routes.passes(y) {
                continue;
            }
            // A bound first: the new path's first cable. The rest of the
            // new path only adds to its peak, and a move that cannot beat
            // the busiest cable or the best so far needs no more reading.
            let first = self.loads.get(graph.channel(u, c.port)) + f64;
            let beaten = |top: u64, best: &Option<Move>| {
                top >= peak
                    || best
                        .as_ref()
                        .is_some_and(|b| b.rank() <= (k == 0, top, std::cmp::Reverse(f)))
            };
            if beaten(first, best) {
                continue;
            }
            let (hops_y, shape_y) = self.routes.settle(fabric, tree, lfts, y);
            let fits = hops_y < NOWHERE
                && hops_y + 1 == hops_u
                && match shape_y {
                    Shape::AllDown => true,
                    Shape::UpDown => up,
                    Shape::Other => false,
                };
            if !fits {
                continue;
            }
            // The peak of the new path, up to where it joins the old one:
            // where `y`'s route meets `s0`'s (it passes no switch of the
            // old path before `s0`: those all pass `s0`).
            let top = first.max(self.peak_before_joining(lfts, y) + f64);
            if beaten(top, best) {
                continue;
            }
            let m = Move {
                port_lids: i,
                offset: k,
                at: u,
                port: c.port,
                flow: f,
                peak: top,
            };
            if !listed {
                self.mine.clear();
                path_from(self.fabric, lfts, lid, u, p.at, &mut self.mine);
                self.same_now = self.taking(lfts, (i, k), usize::MAX);
                listed = true;
            }
            self.mine.clear();
            self.mine.push((u, c.port));
            path_from(self.fabric, lfts, lid, y, p.at, &mut self.mine);
            if self.taking(lfts, (i, k), self.same_now) <= self.same_now {
                *best = Some(m);
            }
        }
    }

    /// Marks the path the current LID takes from `s0` (for
    /// `peak_before_joining`).
    fn mark_downstream(&mut self, lfts: &[Lft], s0: SwitchId) {
        if self.peak_mark == u32::MAX {
            self.peak_at.fill(0);
            self.downstream.fill(0);
            self.peak_mark = 0;
        }
        self.peak_mark += 1;
        self.routes.mark_route(
            self.fabric,
            lfts,
            s0,
            (&mut self.downstream, self.peak_mark),
        );
    }

    /// The most routes on a cable of `y`'s route (an arriving one) before
    /// it meets the route from the busiest cable's switch (0 when it
    /// starts on it), with the loads as they are: remembered per switch
    /// for the LID weighed, as many candidates' paths share their ends.
    fn peak_before_joining(&mut self, lfts: &[Lft], y: SwitchId) -> u64 {
        let graph = self.fabric.graph();
        let mut x = y;
        self.mine.clear();
        while self.downstream[x.idx()] != self.peak_mark && self.peak_at[x.idx()] != self.peak_mark
        {
            let Some((port, z)) = self.routes.step(self.fabric, lfts, x) else {
                break;
            };
            self.mine.push((x, port));
            if self.mine.len() > self.downstream.len() {
                break;
            }
            x = z;
        }
        let mut most = if self.peak_at[x.idx()] == self.peak_mark {
            self.peak_on[x.idx()]
        } else {
            0
        };
        while let Some((s, port)) = self.mine.pop() {
            most = most.max(self.loads.get(graph.channel(s, port)));
            (self.peak_on[s.idx()], self.peak_at[s.idx()]) = (most, self.peak_mark);
        }
        most
    }

    /// Marks the path the current LID takes from `u` in `on_old`.
    fn mark_old_path(&mut self, lfts: &[Lft], u: SwitchId) {
        if self.stamp == u32::MAX {
            self.on_old.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
        self.routes
            .mark_route(self.fabric, lfts, u, (&mut self.on_old, self.stamp));
    }

    /// How many of port `i`'s LIDs other than offset `k` take `mine`
    /// from its first switch (by the tables): each followed only while it
    /// agrees, most part at the first cable. Counting stops above
    /// `enough`.
    fn taking(&mut self, lfts: &[Lft], (i, k): (usize, u16), enough: usize) -> usize {
        let graph = self.fabric.graph();
        let p = &self.ports[i];
        let Some(&(u, _)) = self.mine.first() else {
            return 0;
        };
        let mut equal = 0;
        for j in (0..p.count).filter(|&j| j != k) {
            if equal > enough {
                break;
            }
            let lid = p.base.offset(j);
            let mut s = u;
            for (at, &step) in self.mine.iter().enumerate() {
                self.work = self.work.saturating_sub(1);
                let port = lfts[s.idx()].get(lid);
                if s == p.at || step != (s, port) {
                    break;
                }
                match graph.switch_behind(s, port) {
                    Some(y) if at + 1 < self.mine.len() => s = y,
                    Some(y) => {
                        equal += usize::from(y == p.at);
                        break;
                    }
                    None => {
                        equal += usize::from(at + 1 == self.mine.len());
                        break;
                    }
                }
            }
        }
        equal
    }

    /// Sets the entry and moves the flow from the old path to the new one,
    /// up to the switch where the new one joins the old.
    fn apply(&mut self, lfts: &mut [Lft], m: &Move) {
        let graph = self.fabric.graph();
        let p = &self.ports[m.port_lids];
        let (lid, t) = (p.base.offset(m.offset), p.at);
        self.fetch((m.port_lids, m.offset));
        self.mark_old_path(lfts, m.at);
        let f = u64::from(m.flow);
        self.loads.add(graph.channel(m.at, m.port), f);
        let mut joint = graph.switch_behind(m.at, m.port).unwrap_or(t);
        while self.on_old[joint.idx()] != self.stamp {
            let Some((port, z)) = self.routes.step(self.fabric, lfts, joint) else {
                break;
            };
            self.loads.add(graph.channel(joint, port), f);
            joint = z;
        }
        let mut x = m.at;
        while x != joint {
            let Some((port, y)) = self.routes.step(self.fabric, lfts, x) else {
                break;
            };
            self.loads.take(graph.channel(x, port), f);
            x = y;
        }
        lfts[m.at.idx()].set(lid, m.port);
        let work = self.routes.take_work();
        self.spend(work);
    }
}

/// Appends the cables `lid`'s packets take from `s` to the destination
/// switch `t` (by the tables) to `path`.
fn path_from(
    fabric: &Fabric,
    lfts: &[Lft],
    lid: Lid,
    mut s: SwitchId,
    t: SwitchId,
    path: &mut Vec<(SwitchId, PortNum)>,
) {
    let graph = fabric.graph();
    for _ in 0..graph.switch_count() {
        if s == t {
            return;
        }
        let port = lfts[s.idx()].get(lid);
        path.push((s, port));
        match graph.switch_behind(s, port) {
            Some(y) => s = y,
            None => return,
        }
    }
}

#[cfg(test)]
/// The host routes on every channel, counted from the tables: every
/// switch with hosts sends its hosts' packets along its route to every
/// host LID (where the route arrives). What the fill hands the repair and
/// what the repair keeps must equal it.
pub(super) fn count_route_loads(
    fabric: &Fabric,
    tree: &GenFatTree,
    ports: &[HostLids],
    lfts: &[Lft],
) -> Vec<u64> {
    let graph = fabric.graph();
    let mut loads = vec![0u64; graph.channel_count()];
    let mut routes = LidRoutes::new(graph.switch_count());
    for p in ports {
        for k in 0..p.count {
            routes.start(p.base.offset(k), p.at);
            for s in graph.ids().filter(|&s| graph.hosts(s) > 0) {
                if routes.settle(fabric, tree, lfts, s).0 >= NOWHERE {
                    continue;
                }
                let mut x = s;
                while let Some((port, y)) = routes.step(fabric, lfts, x) {
                    loads[graph.channel(x, port)] += u64::from(graph.hosts(s));
                    x = y;
                }
            }
        }
    }
    loads
}

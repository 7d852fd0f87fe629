//! Damaged trees: single LFT entries moved off the busiest cables after
//! the fill.
//!
//! The fill meets every source's packets to one LID at one root (its
//! chain). Where cables are cut, the sources of a pod cut off from that
//! root spill over their leaves' up-cables as if every middle switch still
//! had all its up-cables, and the cables between a root and a middle
//! switch that lost some carry a quarter more than dfsssp's (FT(8,3) with
//! 5 % cut at lmc 4: 3,436 routes against 2,752). Counters laid LID after
//! LID cannot see that: a middle switch's missing cables only show once
//! every LID's routes are down. So, on damaged trees only (`needs_repair`;
//! a complete tree keeps the fill's tables), this pass looks at the whole
//! load: while the busiest cable can be relieved, one switch on a route
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
//! tests); at lmc 0 base LIDs move and the EBB loses up to .004. A move lowers the busiest cable and raises none to its load, so
//! the cables at the maximum get fewer with every move and the pass ends.

use super::NAME;
use crate::fabric::{Fabric, Lid, PortNum, SwitchId};
use crate::routing::{Lft, NO_PATH};
use crate::topology::gft::GenFatTree;

/// A host port's LIDs and the switch that delivers them.
pub(super) struct HostLids {
    pub(super) base: Lid,
    pub(super) count: u16,
    pub(super) at: SwitchId,
}

/// Whether some switch has fewer up- or down-cables than the most its
/// height has: a cut cable, a lost switch. The fill spreads a complete
/// tree as well as its shape allows: its tables stay the fill's, also
/// where CAs sit above the leaves. Run on such complete trees the repair
/// moved base LIDs and lost EBB (PGFT(2; 4,6; 1,3; 1,2) with 3 hosts on
/// spines, seed 3: .9138 against pssp's .9231), though it brought the
/// leaf–spine with Aggregation Nodes from 186 routes to 119. Damaged
/// trees with hosts on spines are repaired like any other (that tree with
/// 10 % of its cables cut, seeds 1–5: EBB within .004 of pssp's or above
/// it, busiest cable below pssp's).
pub(super) fn needs_repair(tree: &GenFatTree) -> bool {
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

/// How a switch's route to the current LID runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Down-cables only (the destination switch too).
    AllDown,
    /// Up, then down.
    UpDown,
    /// Anything else: no route, a descent on VL 1, a shortest detour.
    Other,
}

/// Hops not known yet, and hops of a route that does not arrive.
const UNSET: u32 = u32::MAX;
const NOWHERE: u32 = u32::MAX - 1;
/// Hops of a switch on the walk being followed (a loop ends there).
const WALKING: u32 = u32::MAX - 2;

/// One LID's routes from every switch, read from the tables.
struct Routes {
    port: Vec<PortNum>,
    next: Vec<Option<SwitchId>>,
    /// Hops to the destination switch (`NOWHERE` where the route does
    /// not get there).
    hops: Vec<u32>,
    shape: Vec<Shape>,
    /// The sources whose packets pass the switch.
    flow: Vec<u32>,
    /// Switches whose route arrives, farthest first.
    order: Vec<SwitchId>,
    walk: Vec<SwitchId>,
    counts: Vec<usize>,
}

impl Routes {
    fn new(n: usize) -> Self {
        Routes {
            port: vec![NO_PATH; n],
            next: vec![None; n],
            hops: vec![UNSET; n],
            shape: vec![Shape::Other; n],
            flow: vec![0; n],
            order: Vec::with_capacity(n),
            walk: Vec::new(),
            counts: Vec::new(),
        }
    }

    fn read(&mut self, fabric: &Fabric, tree: &GenFatTree, lfts: &[Lft], lid: Lid, t: SwitchId) {
        let graph = fabric.graph();
        for s in graph.ids() {
            let port = lfts[s.idx()].get(lid);
            self.port[s.idx()] = port;
            self.next[s.idx()] = if s == t || port == NO_PATH {
                None
            } else {
                graph.switch_behind(s, port)
            };
            self.hops[s.idx()] = UNSET;
        }
        self.hops[t.idx()] = 0;
        self.shape[t.idx()] = Shape::AllDown;
        for s in graph.ids() {
            // Follow the route to a switch already known, then settle the
            // switches walked on the way back.
            let mut x = Some(s);
            while let Some(y) = x.filter(|y| self.hops[y.idx()] == UNSET) {
                self.walk.push(y);
                self.hops[y.idx()] = WALKING;
                x = self.next[y.idx()];
            }
            while let Some(x) = self.walk.pop() {
                let (hops, shape) = match self.next[x.idx()] {
                    Some(y) if self.hops[y.idx()] < WALKING => {
                        let up = tree.height[y.idx()] > tree.height[x.idx()];
                        let shape = match (up, self.shape[y.idx()]) {
                            (true, Shape::AllDown | Shape::UpDown) => Shape::UpDown,
                            (false, Shape::AllDown) => Shape::AllDown,
                            _ => Shape::Other,
                        };
                        (self.hops[y.idx()] + 1, shape)
                    }
                    _ => (NOWHERE, Shape::Other),
                };
                self.hops[x.idx()] = hops;
                self.shape[x.idx()] = shape;
            }
        }
        self.sort_farthest_first(graph.switch_count());
        for s in graph.ids() {
            let arrives = self.hops[s.idx()] < NOWHERE;
            self.flow[s.idx()] = if arrives { graph.hosts(s) } else { 0 };
        }
        for &s in &self.order {
            if let Some(y) = self.next[s.idx()] {
                self.flow[y.idx()] += self.flow[s.idx()];
            }
        }
    }

    /// `order`: the switches whose route arrives, farthest first, so that
    /// a switch has every flow into it before it passes it on (a counting
    /// sort: hops are below `n`).
    fn sort_farthest_first(&mut self, n: usize) {
        let key = |hops: u32| n - hops.min(n as u32) as usize;
        self.counts.clear();
        self.counts.resize(n + 1, 0);
        for &h in self.hops.iter().filter(|&&h| h < NOWHERE) {
            self.counts[key(h)] += 1;
        }
        let mut at = 0;
        for c in self.counts.iter_mut() {
            (*c, at) = (at, at + *c);
        }
        self.order.clear();
        self.order.resize(at, SwitchId::default());
        for (s, &h) in self.hops.iter().enumerate() {
            if h < NOWHERE {
                self.order[self.counts[key(h)]] = SwitchId::new(s);
                self.counts[key(h)] += 1;
            }
        }
    }
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

/// The most (LID, switch) routes kept between scans (about 20 bytes
/// each).
const CACHED_ENTRIES: usize = 1 << 21;

/// The work the repair may do (switches read, path steps followed, LIDs
/// looked up), per (LID, switch) of the fabric and at most: the damaged
/// PGFT(3; 8,4,4) at lmc 5 takes 411 per entry (81 M), FT(8,3) at lmc 4
/// 93, at lmc 0 both under 5. A large tree at a high lmc stops with the
/// cables relieved so far.
const WORK_PER_ENTRY: u64 = 512;
const WORK_AT_MOST: u64 = 1 << 27;

/// What the repair did.
pub(super) struct Repaired {
    pub(super) moves: usize,
    pub(super) busiest_before: u64,
    pub(super) busiest_after: u64,
}

/// Moves entries off the busiest cable while that lowers it (see the
/// module documentation), at most `budget` moves.
pub(super) fn spread_busiest(
    fabric: &Fabric,
    tree: &GenFatTree,
    ports: &[HostLids],
    lfts: &mut [Lft],
    budget: usize,
) -> Repaired {
    let mut search = Search::new(fabric, tree, ports, lfts);
    let busiest_before = search.load.iter().copied().max().unwrap_or(0);
    let mut moves = 0;
    // Each scan lists a move per port; they are made, the best first,
    // while the cable scanned stays the busiest and each still lowers it
    // (the loads they were weighed with change as they are made).
    while moves < budget {
        let Some((busiest, found)) = search.moves_off_busiest(lfts) else {
            break;
        };
        let mut made = 0;
        for m in &found {
            let peak = search.load[busiest];
            let others = search
                .load
                .iter()
                .enumerate()
                .filter(|&(c, _)| c != busiest)
                .map(|(_, &l)| l)
                .max()
                .unwrap_or(0);
            if moves == budget || peak < others || search.peak_after(lfts, m) >= peak {
                break;
            }
            search.apply(lfts, m);
            (made, moves) = (made + 1, moves + 1);
        }
        if made == 0 {
            break;
        }
    }
    log::debug!("{NAME}: repair work used {}", search.budget - search.work);
    Repaired {
        moves,
        busiest_before,
        busiest_after: search.load.iter().copied().max().unwrap_or(0),
    }
}

/// The routes on every channel and the scratch space of the search.
struct Search<'a> {
    fabric: &'a Fabric,
    tree: &'a GenFatTree,
    ports: &'a [HostLids],
    /// Per channel (`SwitchGraph::channel`): the host routes leaving there.
    load: Vec<u64>,
    /// The routes of the LID being weighed. Where the fabric is small
    /// enough (`CACHED_ENTRIES`), every LID's routes are kept (`cache`,
    /// `fresh`; `held`: the slot lent to `routes`): only a moved LID's
    /// change, and each scan of the busiest cable reads hundreds.
    routes: Routes,
    cache: Vec<Routes>,
    fresh: Vec<bool>,
    held: Option<usize>,
    /// Per port: the flat index of its first LID (in `cache`).
    first: Vec<usize>,
    /// Work left (switches read, path steps followed, LIDs looked up):
    /// a large damaged tree stops with the cables it relieved so far.
    work: u64,
    budget: u64,
    /// Per switch: whether its route passes the busiest cable.
    passes: Vec<bool>,
    /// Per switch: `stamp` where it is on the path being replaced.
    on_old: Vec<u32>,
    stamp: u32,
    /// A path of the LID being moved from the switch weighed, and how
    /// many of the port's other LIDs take its path from there now.
    mine: Vec<(SwitchId, PortNum)>,
    same_now: usize,
}

impl<'a> Search<'a> {
    fn new(fabric: &'a Fabric, tree: &'a GenFatTree, ports: &'a [HostLids], lfts: &[Lft]) -> Self {
        let graph = fabric.graph();
        let n = graph.switch_count();
        let mut load = vec![0u64; graph.channel_count()];
        let mut routes = Routes::new(n);
        for p in ports {
            for k in 0..p.count {
                routes.read(fabric, tree, lfts, p.base.offset(k), p.at);
                for &s in &routes.order {
                    if routes.next[s.idx()].is_some() {
                        let channel = graph.channel(s, routes.port[s.idx()]);
                        load[channel] += u64::from(routes.flow[s.idx()]);
                    }
                }
            }
        }
        let mut first = Vec::with_capacity(ports.len());
        let mut lids = 0usize;
        for p in ports {
            first.push(lids);
            lids += usize::from(p.count);
        }
        let cached = lids.saturating_mul(n) <= CACHED_ENTRIES;
        let budget = (WORK_PER_ENTRY * (lids as u64).saturating_mul(n as u64)).min(WORK_AT_MOST);
        Search {
            fabric,
            tree,
            ports,
            load,
            routes,
            cache: if cached {
                (0..lids).map(|_| Routes::new(0)).collect()
            } else {
                Vec::new()
            },
            fresh: vec![false; if cached { lids } else { 0 }],
            held: None,
            first,
            work: budget,
            budget,
            passes: vec![false; n],
            on_old: vec![0; n],
            stamp: 0,
            mine: Vec::new(),
            same_now: 0,
        }
    }

    /// Lends offset `k` of port `i`'s routes to `routes`, read from the
    /// tables unless kept.
    fn fetch(&mut self, lfts: &[Lft], (i, k): (usize, u16)) {
        let p = &self.ports[i];
        let lid = p.base.offset(k);
        let n = self.fabric.graph().switch_count();
        if self.cache.is_empty() {
            self.work = self.work.saturating_sub(n as u64);
            self.routes.read(self.fabric, self.tree, lfts, lid, p.at);
            return;
        }
        if let Some(h) = self.held.take() {
            std::mem::swap(&mut self.routes, &mut self.cache[h]);
        }
        let at = self.first[i] + usize::from(k);
        std::mem::swap(&mut self.routes, &mut self.cache[at]);
        self.held = Some(at);
        if !self.fresh[at] {
            if self.routes.port.len() != n {
                self.routes = Routes::new(n);
            }
            self.work = self.work.saturating_sub(n as u64);
            self.routes.read(self.fabric, self.tree, lfts, lid, p.at);
            self.fresh[at] = true;
        }
    }

    /// The busiest channel and, per port with a LID over it, the best
    /// move of one of its LIDs off it (the first of equals) that lowers
    /// it without loading another as much; the best first.
    fn moves_off_busiest(&mut self, lfts: &[Lft]) -> Option<(usize, Vec<Move>)> {
        let graph = self.fabric.graph();
        let (busiest, &peak) = self
            .load
            .iter()
            .enumerate()
            .max_by_key(|&(i, &l)| (l, std::cmp::Reverse(i)))?;
        let (s0, p0) = graph.channel_port(busiest);
        if self.work == 0 {
            log::info!("{NAME}: the repair ran out of its work budget");
            return None;
        }
        self.work = self.work.saturating_sub(self.first.len() as u64);
        let mut moves = Vec::new();
        for (i, p) in self.ports.iter().enumerate() {
            if p.at == s0 {
                continue;
            }
            // One move per port: the others' paths it was weighed against
            // stay as they were.
            let mut best: Option<Move> = None;
            for k in 0..p.count {
                let lid = p.base.offset(k);
                if lfts[s0.idx()].get(lid) != p0 {
                    continue;
                }
                self.fetch(lfts, (i, k));
                if self.routes.flow[s0.idx()] == 0 {
                    continue;
                }
                // Nearest first: whether a switch's route passes `s0`.
                for &u in self.routes.order.iter().rev() {
                    self.passes[u.idx()] =
                        u == s0 || self.routes.next[u.idx()].is_some_and(|y| self.passes[y.idx()]);
                }
                for j in 0..self.routes.order.len() {
                    let u = self.routes.order[j];
                    if self.passes[u.idx()] {
                        self.moves_at(lfts, (i, k), u, peak, &mut best);
                    }
                }
            }
            moves.extend(best);
        }
        moves.sort_by_key(Move::rank);
        Some((busiest, moves))
    }

    /// The busiest cable `m`'s new path would load (up to where it joins
    /// the old one), with the loads as they are now.
    fn peak_after(&mut self, lfts: &[Lft], m: &Move) -> u64 {
        self.fetch(lfts, (m.port_lids, m.offset));
        self.mark_old_path(m.at);
        let graph = self.fabric.graph();
        let f = u64::from(m.flow);
        let mut top = self.load[graph.channel(m.at, m.port)] + f;
        let mut x = graph.switch_behind(m.at, m.port);
        while let Some(s) = x.filter(|s| self.on_old[s.idx()] != self.stamp) {
            let Some(z) = self.routes.next[s.idx()] else {
                break;
            };
            top = top.max(self.load[graph.channel(s, self.routes.port[s.idx()])] + f);
            x = Some(z);
        }
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
        let p = &self.ports[i];
        let lid = p.base.offset(k);
        let r = &self.routes;
        let (f, now) = (r.flow[u.idx()], r.next[u.idx()]);
        let Some(now) = now.filter(|_| f > 0 && r.shape[u.idx()] != Shape::Other) else {
            return;
        };
        let up = self.tree.height[now.idx()] > self.tree.height[u.idx()];
        let cables = if up {
            &self.tree.up[u.idx()]
        } else {
            &self.tree.down[u.idx()]
        };
        let (mut marked, mut listed) = (false, false);
        for c in cables {
            let y = c.to;
            let r = &self.routes;
            let fits = c.port != r.port[u.idx()]
                && r.hops[y.idx()] + 1 == r.hops[u.idx()]
                && !self.passes[y.idx()]
                && match r.shape[y.idx()] {
                    Shape::AllDown => true,
                    Shape::UpDown => up,
                    Shape::Other => false,
                };
            if !fits {
                continue;
            }
            if !marked {
                self.mark_old_path(u);
                marked = true;
            }
            // The peak of the new path, up to where it joins the old one.
            let f64 = u64::from(f);
            let mut top = self.load[graph.channel(u, c.port)] + f64;
            let mut x = y;
            while self.on_old[x.idx()] != self.stamp {
                let Some(z) = self.routes.next[x.idx()] else {
                    break;
                };
                top = top.max(self.load[graph.channel(x, self.routes.port[x.idx()])] + f64);
                x = z;
            }
            let m = Move {
                port_lids: i,
                offset: k,
                at: u,
                port: c.port,
                flow: f,
                peak: top,
            };
            if top >= peak || best.as_ref().is_some_and(|b| b.rank() <= m.rank()) {
                continue;
            }
            if !listed {
                self.mine.clear();
                path_from(self.fabric, lfts, lid, u, p.at, &mut self.mine);
                self.same_now = self.taking(lfts, (i, k));
                listed = true;
            }
            self.mine.clear();
            self.mine.push((u, c.port));
            path_from(self.fabric, lfts, lid, y, p.at, &mut self.mine);
            if self.taking(lfts, (i, k)) <= self.same_now {
                *best = Some(m);
            }
        }
    }

    /// Marks the path the current LID takes from `u` in `on_old`.
    fn mark_old_path(&mut self, u: SwitchId) {
        self.stamp += 1;
        let mut x = Some(u);
        while let Some(s) = x {
            self.on_old[s.idx()] = self.stamp;
            x = self.routes.next[s.idx()];
        }
    }

    /// How many of port `i`'s LIDs other than offset `k` take `mine`
    /// from its first switch (by the tables): each followed only while it
    /// agrees, most part at the first cable.
    fn taking(&mut self, lfts: &[Lft], (i, k): (usize, u16)) -> usize {
        let graph = self.fabric.graph();
        let p = &self.ports[i];
        let Some(&(u, _)) = self.mine.first() else {
            return 0;
        };
        let mut equal = 0;
        for j in (0..p.count).filter(|&j| j != k) {
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
        let lid = p.base.offset(m.offset);
        self.fetch(lfts, (m.port_lids, m.offset));
        let (r, f) = (&self.routes, u64::from(m.flow));
        self.stamp += 1;
        let mut x = Some(m.at);
        while let Some(s) = x {
            self.on_old[s.idx()] = self.stamp;
            x = r.next[s.idx()];
        }
        self.load[graph.channel(m.at, m.port)] += f;
        let mut joint = graph.switch_behind(m.at, m.port).unwrap_or(p.at);
        while self.on_old[joint.idx()] != self.stamp {
            let Some(z) = r.next[joint.idx()] else {
                break;
            };
            self.load[graph.channel(joint, r.port[joint.idx()])] += f;
            joint = z;
        }
        let mut x = m.at;
        while x != joint {
            let Some(y) = r.next[x.idx()] else {
                break;
            };
            // The LID's flow passes there: never below zero (saturating
            // all the same: the plugin must not panic).
            let load = &mut self.load[graph.channel(x, r.port[x.idx()])];
            *load = load.saturating_sub(f);
            x = y;
        }
        lfts[m.at.idx()].set(lid, m.port);
        if let Some(h) = self.held {
            self.fresh[h] = false;
        }
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

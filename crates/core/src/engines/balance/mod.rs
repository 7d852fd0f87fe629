//! Trees towards one destination LID at a time, balanced over the load
//! earlier trees left on every channel: the P-SSSP step that `pssp`,
//! `sfmin` (off Slim Fly labels) and every layer of `layered` share.
//!
//! A tree is a dynamic program over the switches nearest-first: each
//! switch takes, among the cables its caller allows, the one whose path on
//! to the destination carries the least load so far (the paper's weights
//! "P² + load" on minimal paths). Every cable is its own channel, so a
//! bundle of parallel cables is several channels, each with its own load:
//! a bundle costs its load per cable, and a tree takes its least loaded
//! cable. That cable is provisional: once the tables are written, the
//! callers deal every bundle's LIDs over its cables again by the routes
//! each brings (`BundleSpreader`), which a tree cannot know while it is
//! being built.
//! Once the tree is fixed, each channel's load grows by the hosts whose
//! route to the LID crosses it.
//!
//! Ties are broken the same way at every switch of a tree, so that the
//! sources of one destination converge on one way down to it: first by
//! the path's first switch after the destination's, then its second (the
//! "anchors"), then the next switch itself, each ranked in a rotation of
//! the switch ids by the tree's turn; then the lower port of a bundle.
//! Breaking ties by port position instead (each switch's own cable order)
//! let the leaves of a leaf–spine tree each pick a different spine for
//! one destination; those spines' down-links then carried unequal shares,
//! and the next trees could not even it out (EFI 450 instead of 270 on 16
//! leaves × 18 hosts, 9 spines, 2 cables each, with the ports shuffled).
//! Ranking only the next switch was enough there but not on three levels,
//! where the sources in different pods reach the destination's pod
//! through different middle switches: the anchors make them all prefer
//! the same middle and top switch (EFI 224 → 192, the optimum, on a
//! PGFT(3; 8,4,4; 1,4,4; 1,2,1)). With one preference for the whole tree,
//! a destination's traffic takes one way down, and the next destination
//! the next way: the per-destination spread fat-tree routing makes.

use crate::fabric::{Cable, PortNum, SwitchGraph, SwitchId};
use crate::routing::NO_PATH;

mod bundles;
pub use bundles::BundleSpreader;

/// Channel loads and the scratch space for one tree at a time.
pub struct TreeBalancer<'g> {
    graph: &'g SwitchGraph,
    /// Routes per channel (`SwitchGraph::channel`), over all trees so far.
    load: Vec<u64>,
    /// Tree stamp of the last tree that used each channel (see `route`).
    used_stamp: Vec<u32>,
    cost: Vec<u64>,
    next: Vec<PortNum>,
    next_switch: Vec<SwitchId>,
    acc: Vec<u64>,
    /// Per switch of the current tree: the tie-break ranks of the first
    /// and second switch after the destination switch on its path.
    anchors: Vec<(usize, usize)>,
    depth: Vec<u32>,
}

/// Tie-break ranks of a candidate: its path's anchors, the next switch
/// itself, then the cable's own load (within a bundle).
type Tie = (usize, usize, usize, u64);

/// A candidate next hop: its cost, tie-break ranks, port and far switch.
type Candidate = (u64, Tie, PortNum, SwitchId);

/// A cost that outweighs any load: a channel an earlier LID of the same
/// port already uses is taken only when no other is allowed.
const REUSE: u64 = 1 << 50;

/// Fixed-point scale of costs, so that a bundle's load per cable keeps
/// its fractions.
const SCALE: u64 = 1024;

impl<'g> TreeBalancer<'g> {
    pub fn new(graph: &'g SwitchGraph) -> Self {
        let (n, c) = (graph.switch_count(), graph.channel_count());
        TreeBalancer {
            graph,
            load: vec![0; c],
            used_stamp: vec![0; c],
            cost: vec![0; n],
            next: vec![NO_PATH; n],
            next_switch: vec![SwitchId::default(); n],
            acc: vec![0; n],
            anchors: vec![(0, 0); n],
            depth: vec![0; n],
        }
    }

    /// Builds one LID's tree. `order` lists the switches the tree reaches,
    /// the destination switch first and every switch after all switches
    /// it may forward to; `allowed(s, cable)` says whether `s` may forward
    /// over `cable` (its far switch must come earlier in `order`). `turn`
    /// rotates the tie-breaking (the tree's position in the routing
    /// order). Channels stamped with `stamp` by an earlier tree (the same
    /// port's other LIDs) are avoided where possible. Then every channel
    /// of the tree carries `senders(s)` more routes for each switch `s`
    /// behind it.
    ///
    /// A switch in `order` without an allowed cable gets `NO_PATH`.
    pub fn route(
        &mut self,
        order: &[SwitchId],
        allowed: impl Fn(SwitchId, &Cable) -> bool,
        turn: usize,
        stamp: u32,
        senders: impl Fn(SwitchId) -> u64,
    ) {
        let g = self.graph;
        let n = g.switch_count().max(1);
        let rank = |to: SwitchId| (to.idx() + n - turn % n) % n;
        let Some((&t, rest)) = order.split_first() else {
            return;
        };
        self.cost[t.idx()] = 0;
        self.next[t.idx()] = NO_PATH;
        self.depth[t.idx()] = 0;
        self.anchors[t.idx()] = (0, 0);
        for &s in rest {
            let mut best: Option<Candidate> = None;
            for cable in g.cables(s) {
                // A far switch left without a path in this tree leads nowhere.
                if !allowed(s, cable) || (cable.to != t && self.next[cable.to.idx()] == NO_PATH) {
                    continue;
                }
                let c = g.channel(s, cable.port);
                let reuse = if self.used_stamp[c] == stamp {
                    REUSE
                } else {
                    0
                };
                let (a1, a2) = self.anchors[cable.to.idx()];
                // A bundle of parallel cables is one way on with several
                // channels: it costs its load per cable, and of its cables
                // the least loaded is taken (the lower port on a tie:
                // cables come in port order).
                let bundle = g.bundle(s, cable.to);
                let per_cable = bundle
                    .iter()
                    .map(|&p| self.load[g.channel(s, p)])
                    .sum::<u64>()
                    * SCALE
                    / bundle.len() as u64;
                let key = (
                    self.cost[cable.to.idx()] + reuse + per_cable,
                    (a1, a2, rank(cable.to), self.load[c]),
                );
                if best.is_none_or(|(k, r, _, _)| key < (k, r)) {
                    best = Some((key.0, key.1, cable.port, cable.to));
                }
            }
            match best {
                Some((cost, _, port, to)) => {
                    (
                        self.cost[s.idx()],
                        self.next[s.idx()],
                        self.next_switch[s.idx()],
                    ) = (cost, port, to);
                    // Anchors: the path's first two switches after the
                    // destination's, as tie-break ranks.
                    let depth = self.depth[to.idx()] + 1;
                    self.depth[s.idx()] = depth;
                    let (a1, a2) = self.anchors[to.idx()];
                    self.anchors[s.idx()] = match depth {
                        1 => (rank(s), rank(s)),
                        2 => (a1, rank(s)),
                        _ => (a1, a2),
                    };
                }
                None => self.next[s.idx()] = NO_PATH,
            }
        }
        for &s in order {
            self.acc[s.idx()] = senders(s);
        }
        for &s in rest.iter().rev() {
            if self.next[s.idx()] == NO_PATH {
                continue;
            }
            let c = g.channel(s, self.next[s.idx()]);
            self.load[c] += self.acc[s.idx()];
            self.used_stamp[c] = stamp;
            let to = self.next_switch[s.idx()];
            self.acc[to.idx()] += self.acc[s.idx()];
        }
    }

    /// Out-port of `s` in the last tree (`NO_PATH` at its destination
    /// switch and where no cable was allowed). Only meaningful for the
    /// switches of the last tree's `order`.
    pub fn next_port(&self, s: SwitchId) -> PortNum {
        self.next[s.idx()]
    }

    /// Routes per channel so far.
    pub fn load(&self) -> &[u64] {
        &self.load
    }

    /// Most routes on one channel so far.
    pub fn edge_forwarding_index(&self) -> u64 {
        self.load.iter().max().copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests;

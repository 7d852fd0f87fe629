//! One LID's routes, read from the tables only where the repair looks:
//! the switches whose route passes the busiest cable (found backwards
//! from its switch: a switch passes it when its entry leads to one that
//! does) and the few a candidate move leads to (followed forwards until a
//! switch already known). Reading every switch's route for every LID over
//! the busiest cable was most of the repair's work (1,620 switches per
//! LID on the 36-port three-level tree, where a handful pass the cable).

use crate::fabric::{Fabric, Lid, PortNum, SwitchId};
use crate::routing::{Lft, NO_PATH};
use crate::topology::gft::GenFatTree;

/// How a switch's route to the current LID runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Down-cables only (the destination switch too).
    AllDown,
    /// Up, then down.
    UpDown,
    /// Anything else: no route, a descent on VL 1, a shortest detour.
    Other,
}

impl Shape {
    /// The shape of a route whose first hop goes up (or down) to a switch
    /// whose route has shape `then`.
    fn after(up: bool, then: Shape) -> Shape {
        match (up, then) {
            (true, Shape::AllDown | Shape::UpDown) => Shape::UpDown,
            (false, Shape::AllDown) => Shape::AllDown,
            _ => Shape::Other,
        }
    }
}

/// Hops of a route that does not arrive (a gap in the tables, a loop).
pub(super) const NOWHERE: u32 = u32::MAX - 1;
/// Hops of a switch on the walk being followed (a loop ends there).
const WALKING: u32 = u32::MAX - 2;

pub(super) struct LidRoutes {
    lid: Lid,
    /// The switch that delivers the LID.
    t: SwitchId,
    /// Marks of the current LID: a switch's `hops` and `shape` are known
    /// where `known` holds it, it passes the busiest cable where
    /// `passing` does.
    stamp: u32,
    known: Vec<u32>,
    hops: Vec<u32>,
    shape: Vec<Shape>,
    walk: Vec<SwitchId>,
    passing: Vec<u32>,
    /// The sources whose packets pass the switch (where it passes).
    flow: Vec<u32>,
    /// The switches that pass the busiest cable, as found (nearest
    /// first), and the switch each forwards to.
    found: Vec<(SwitchId, SwitchId)>,
    /// The same, farthest first, ids ascending among equals.
    order: Vec<SwitchId>,
    /// Entries read and steps followed since the last `take_work`.
    work: u64,
}

impl LidRoutes {
    pub(super) fn new(n: usize) -> Self {
        LidRoutes {
            lid: Lid::default(),
            t: SwitchId::default(),
            stamp: 0,
            known: vec![0; n],
            hops: vec![NOWHERE; n],
            shape: vec![Shape::Other; n],
            walk: Vec::new(),
            passing: vec![0; n],
            flow: vec![0; n],
            found: Vec::new(),
            order: Vec::new(),
            work: 0,
        }
    }

    /// Starts reading `lid`, delivered by `t`: nothing known yet (also
    /// after its entries changed).
    pub(super) fn start(&mut self, lid: Lid, t: SwitchId) {
        if self.stamp == u32::MAX {
            self.known.fill(0);
            self.passing.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
        (self.lid, self.t) = (lid, t);
        self.found.clear();
        self.order.clear();
        self.known[t.idx()] = self.stamp;
        self.hops[t.idx()] = 0;
        self.shape[t.idx()] = Shape::AllDown;
    }

    /// The entry of `s` and the switch it leads to (none at the
    /// destination switch, at a gap, at a CA).
    pub(super) fn step(
        &mut self,
        fabric: &Fabric,
        lfts: &[Lft],
        s: SwitchId,
    ) -> Option<(PortNum, SwitchId)> {
        self.work += 1;
        if s == self.t {
            return None;
        }
        let port = lfts[s.idx()].get(self.lid);
        if port == NO_PATH {
            return None;
        }
        fabric.graph().switch_behind(s, port).map(|y| (port, y))
    }

    /// Sets `marks` to `mark` on every switch of the route from `s` (at
    /// most one visit per switch: a loop ends it).
    pub(super) fn mark_route(
        &mut self,
        fabric: &Fabric,
        lfts: &[Lft],
        s: SwitchId,
        (marks, mark): (&mut [u32], u32),
    ) {
        let mut x = Some(s);
        while let Some(s) = x.filter(|s| marks[s.idx()] != mark) {
            marks[s.idx()] = mark;
            x = self.step(fabric, lfts, s).map(|(_, y)| y);
        }
    }

    /// Hops from `s` to the destination switch along the tables (`NOWHERE`
    /// where they do not get there), and the route's shape.
    pub(super) fn settle(
        &mut self,
        fabric: &Fabric,
        tree: &GenFatTree,
        lfts: &[Lft],
        s: SwitchId,
    ) -> (u32, Shape) {
        // Follow the route to a switch already known, then settle the
        // switches walked on the way back.
        let mut x = s;
        while self.known[x.idx()] != self.stamp {
            self.known[x.idx()] = self.stamp;
            self.hops[x.idx()] = WALKING;
            self.walk.push(x);
            match self.step(fabric, lfts, x) {
                Some((_, y)) => x = y,
                None => break,
            }
        }
        while let Some(x) = self.walk.pop() {
            let (hops, shape) = match self.step(fabric, lfts, x) {
                Some((_, y)) if self.hops[y.idx()] < WALKING => {
                    let up = tree.height[y.idx()] > tree.height[x.idx()];
                    (
                        self.hops[y.idx()] + 1,
                        Shape::after(up, self.shape[y.idx()]),
                    )
                }
                _ => (NOWHERE, Shape::Other),
            };
            self.hops[x.idx()] = hops;
            self.shape[x.idx()] = shape;
        }
        (self.hops[s.idx()], self.shape[s.idx()])
    }

    /// Finds the switches whose route passes `s0` and the sources whose
    /// packets pass each; returns those passing `s0` (0 where its own
    /// route does not arrive). With `up_down_only` (no route descends on
    /// VL 1) a route comes into a switch from above only where that
    /// switch's own route goes all down: only those cables are looked at
    /// (a leaf's route climbs, so none of its cables is).
    pub(super) fn gather_passing(
        &mut self,
        fabric: &Fabric,
        tree: &GenFatTree,
        lfts: &[Lft],
        (s0, up_down_only): (SwitchId, bool),
    ) -> u32 {
        let graph = fabric.graph();
        let (hops0, _) = self.settle(fabric, tree, lfts, s0);
        if hops0 >= NOWHERE {
            return 0;
        }
        self.passing[s0.idx()] = self.stamp;
        self.found.push((s0, s0));
        let mut i = 0;
        while let Some(&(x, _)) = self.found.get(i) {
            i += 1;
            let (hops, shape) = (self.hops[x.idx()], self.shape[x.idx()]);
            let (below, above): (&[_], &[_]) = if !up_down_only {
                (graph.cables(x), &[])
            } else if shape == Shape::AllDown {
                (&tree.down[x.idx()], &tree.up[x.idx()])
            } else {
                (&tree.down[x.idx()], &[])
            };
            for c in below.iter().chain(above) {
                let w = c.to;
                self.work += 1;
                if w == self.t || w == x || self.passing[w.idx()] == self.stamp {
                    continue;
                }
                if lfts[w.idx()].get(self.lid) != c.far_port {
                    continue;
                }
                self.passing[w.idx()] = self.stamp;
                self.known[w.idx()] = self.stamp;
                self.hops[w.idx()] = hops + 1;
                let up = tree.height[x.idx()] > tree.height[w.idx()];
                self.shape[w.idx()] = Shape::after(up, shape);
                self.found.push((w, x));
            }
        }
        // Farthest first, so that a switch has the flows of all that
        // pass it before it passes them on.
        for &(x, _) in &self.found {
            self.flow[x.idx()] = graph.hosts(x);
        }
        for &(x, via) in self.found.iter().rev() {
            if x != s0 {
                self.flow[via.idx()] += self.flow[x.idx()];
            }
        }
        self.order.extend(self.found.iter().map(|&(x, _)| x));
        let hops = &self.hops;
        self.order
            .sort_unstable_by_key(|x| (std::cmp::Reverse(hops[x.idx()]), x.idx()));
        self.flow[s0.idx()]
    }

    /// The switches whose route passes the busiest cable's switch,
    /// farthest first (after `gather_passing`).
    pub(super) fn passing_order(&self) -> &[SwitchId] {
        &self.order
    }

    pub(super) fn passes(&self, s: SwitchId) -> bool {
        self.passing[s.idx()] == self.stamp
    }

    /// Where `s` passes the busiest cable: the sources whose packets
    /// pass it.
    pub(super) fn flow(&self, s: SwitchId) -> u32 {
        if self.passes(s) {
            self.flow[s.idx()]
        } else {
            0
        }
    }

    /// Hops and shape of a switch settled or found passing.
    pub(super) fn hops(&self, s: SwitchId) -> u32 {
        self.hops[s.idx()]
    }

    pub(super) fn shape(&self, s: SwitchId) -> Shape {
        self.shape[s.idx()]
    }

    /// The work done since the last call.
    pub(super) fn take_work(&mut self) -> u64 {
        std::mem::take(&mut self.work)
    }
}

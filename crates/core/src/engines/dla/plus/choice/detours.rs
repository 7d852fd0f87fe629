//! Load-aware picks where leaves reach a leaf only by detours (P-SSSP
//! over the search's candidates).
//!
//! On a damaged Dragonfly+ some leaves reach some others only by detours:
//! a group that lost spines reaches other groups through middle groups, a
//! leaf that lost spine cables bounces through another leaf. The picks of
//! `super::pick_kind` and `super::deal` spread LIDs over a switch's
//! candidates by the number of paths behind each, as on an intact fabric,
//! blind to the routes their cables already carry: on the 9-group bench
//! fabric (seed 1) a spine dealt 336 detour routes between its two global
//! cables without seeing that one of them already carried 448 others, and
//! leaves in other groups chose the spines that led back to it.
//!
//! So once every table is filled, the CA LIDs of each leaf that some leaf
//! reaches by a detour are routed again, one after another (P-SSSP): the
//! channels carry the routes of every LID as the tables have them, and
//! each LID in turn takes its own routes off, and each switch whose best
//! paths to the leaf are detours takes, among its candidates, the one
//! whose path on has the least loaded busiest channel (then the fewest
//! routes over all its channels); its routes go back on along the new
//! picks. Every other switch keeps its pick, and so does a detour switch
//! unless the best path's busiest channel carries `MARGIN` less than its
//! own. A switch no route to the LID passes keeps its pick: its choice
//! carries nothing.
//!
//! Why every route's load from the start: a LID routed after a further
//! failure meets slightly different loads, and near-equal detours then
//! change places, each change moving the loads the next LIDs meet. When
//! each LID met only the loads of the LIDs routed before it (and of the
//! few not routed again), the first ones picked on nearly empty
//! channels, where the routes a failure moves are a large share, and the
//! changes ran on in cascade: on the damaged 9-group fabrics (seeds 1,
//! 3, 5) 1, 2 and 10 cables moved more than twice the entries that
//! crossed them, up to 2.57 times, although the margin already kept
//! near-equal paths. Meeting the loads of all
//! routes, every LID's picks see about what the final tables carry, and
//! a failure changes those loads by little more than the routes it
//! moves: the worst ratio on seeds 1–6 is 1.66, and the busiest channel
//! is lower on most of them.
//!
//! A detour switch may also take its *alternatives* (`Towards`): cables
//! down or falling as good in hops and backward turns as its candidates,
//! which the search passed over only for their class. The paths keep the
//! search's hops and make no more backward turns than it counted, so their
//! VLs, and the loops they cannot close, are as before. An intact
//! Dragonfly+ has no detour between leaves and keeps its tables byte for
//! byte.

use super::{Lids, Towards};
use crate::fabric::{Fabric, Lid, PortNum, SwitchGraph, SwitchId};
use crate::routing::Lft;

/// How much less loaded (in percent) the busiest channel of another path
/// must be for a detour switch to leave its pick.
const MARGIN: u64 = 5;

/// Re-picks, in `lfts`, the entries of detour switches for the CA LIDs
/// of the leaves that leaves reach by detours (module comment).
pub(super) fn balance(fabric: &Fabric, towards: &[Towards], lids: &Lids, lfts: &mut [Lft]) {
    if towards.iter().all(|tw| !tw.from_leaves) {
        return;
    }
    let graph = fabric.graph();
    let mut delivered: Vec<Vec<Lid>> = vec![Vec::new(); graph.switch_count()];
    for group in &lids.groups {
        for (lid, t) in group.hosts.with_switches() {
            delivered[t.idx()].push(lid);
        }
    }
    let mut trees = Trees::new(graph);
    // The routes of every LID as the tables have them, those routed
    // again included: each of those meets the loads of all routes but
    // its own (module comment).
    for (tw, lids) in towards.iter().zip(&delivered) {
        for &lid in lids {
            trees.carry(&tw.order, lid, lfts);
        }
    }
    // Round-robin over the leaves, the first LID of each, then the
    // second, ..., so that one leaf's LIDs do not all meet the loads the
    // others left.
    let mut queue: Vec<(usize, usize, Lid)> = towards
        .iter()
        .zip(&delivered)
        .enumerate()
        .filter(|(_, (tw, _))| tw.from_leaves)
        .flat_map(|(t, (_, lids))| lids.iter().enumerate().map(move |(i, &lid)| (i, t, lid)))
        .collect();
    queue.sort_unstable();
    for (_, t, lid) in queue {
        trees.lift(&towards[t].order, lid, lfts);
        trees.pick(&towards[t], lid, lfts);
        trees.carry(&towards[t].order, lid, lfts);
    }
}

/// The load of a path: its busiest channel's routes, then the routes over
/// all its channels.
type Cost = (u64, u64);

const UNREACHED: Cost = (u64::MAX, u64::MAX);

/// Channel loads, and scratch space for one LID's tree at a time.
struct Trees<'g> {
    graph: &'g SwitchGraph,
    /// Routes per channel (`SwitchGraph::channel`).
    load: Vec<u64>,
    /// Per switch, the routes it sends on (`carry`).
    acc: Vec<u64>,
    /// Per switch, the cost of its path on (`pick`).
    cost: Vec<Cost>,
    /// Per detour switch of the tree: its place in `Towards::detours`
    /// until `pick` reaches it, then the port it would take.
    best: Vec<Option<u32>>,
}

impl<'g> Trees<'g> {
    fn new(graph: &'g SwitchGraph) -> Self {
        let n = graph.switch_count();
        Trees {
            graph,
            load: vec![0; graph.channel_count()],
            acc: vec![0; n],
            cost: vec![(0, 0); n],
            best: vec![None; n],
        }
    }

    /// Adds the routes of every host to `lid` to the channels they cross
    /// (`order`: the search's towards the LID's switch); a detour switch
    /// that some of them pass takes the port `pick` chose.
    fn carry(&mut self, order: &[SwitchId], lid: Lid, lfts: &mut [Lft]) {
        self.flow(order, lid, lfts, true);
        for &x in order {
            self.best[x.idx()] = None;
        }
    }

    /// Takes the routes `carry` added for `lid` off the channels again
    /// (no port `pick` chose is pending: `carry` cleared them).
    fn lift(&mut self, order: &[SwitchId], lid: Lid, lfts: &mut [Lft]) {
        self.flow(order, lid, lfts, false);
    }

    /// The routes of every host to `lid` along the tables, added to the
    /// channels they cross or taken off them.
    fn flow(&mut self, order: &[SwitchId], lid: Lid, lfts: &mut [Lft], add: bool) {
        for &x in order {
            self.acc[x.idx()] = u64::from(self.graph.hosts(x));
        }
        // Farthest first: a switch's routes are all counted before it
        // passes them on.
        for &x in order.iter().skip(1).rev() {
            let routes = self.acc[x.idx()];
            if routes == 0 {
                continue;
            }
            if let Some(port) = self.best[x.idx()] {
                lfts[x.idx()].set(lid, PortNum::new(port as u8));
            }
            let port = lfts[x.idx()].get(lid);
            if let Some(y) = self.graph.switch_behind(x, port) {
                let load = &mut self.load[self.graph.channel(x, port)];
                *load = if add { *load + routes } else { *load - routes };
                self.acc[y.idx()] += routes;
            }
        }
    }

    /// The cost of leaving `x` by `port` towards the tree's destination.
    fn via(&self, x: SwitchId, port: PortNum) -> Cost {
        self.graph.switch_behind(x, port).map_or(UNREACHED, |y| {
            let here = self.load[self.graph.channel(x, port)];
            let (busiest, total) = self.cost[y.idx()];
            (here.max(busiest), here.saturating_add(total))
        })
    }

    /// The ports `lid` would take at the detour switches of `tw` (module
    /// comment), nearest first, so that each sees the cost of the paths
    /// on.
    fn pick(&mut self, tw: &Towards, lid: Lid, lfts: &[Lft]) {
        for (k, &(x, _, _)) in tw.detours.iter().enumerate() {
            self.best[x.idx()] = Some(k as u32);
        }
        let mut order = tw.order.iter();
        if let Some(&t) = order.next() {
            self.cost[t.idx()] = (0, 0);
        }
        for &x in order {
            let present = lfts[x.idx()].get(lid);
            let kept = self.via(x, present);
            self.cost[x.idx()] = match self.best[x.idx()] {
                Some(k) => {
                    let (_, start, len) = tw.detours[k as usize];
                    let alternatives = &tw.alternatives[start as usize..(start + len) as usize];
                    let (cost, port) = tw
                        .at(x)
                        .iter()
                        .map(|c| c.port)
                        .chain(alternatives.iter().copied())
                        .map(|port| (self.via(x, port), port))
                        .min()
                        .filter(|&(cost, _)| {
                            kept == UNREACHED
                                || cost.0.saturating_mul(100 + MARGIN) < kept.0.saturating_mul(100)
                        })
                        .unwrap_or((kept, present));
                    self.best[x.idx()] = Some(u32::from(port.raw()));
                    cost
                }
                None => kept,
            };
        }
    }
}

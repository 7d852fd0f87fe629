//! The channel dependencies a routing pass keeps for multicast: unicast's,
//! the whole floods of the master trees taken, and the floods of groups
//! checked one by one, kept free of cycles as floods are added, each whole
//! or not at all.
//!
//! It is an incremental topological order (`DynamicDag`) started from one
//! of unicast's, so a candidate costs a search around its own
//! dependencies rather than a cycle search over the whole graph. A
//! group's flood can be dropped again (OpenSM rebuilds a group on every
//! membership change): removing dependencies never closes a cycle, and
//! counting per dependency how many kept groups make it lets a group take
//! out only what no one else needs. Unicast's and the master trees'
//! dependencies are never removed.

use std::collections::HashMap;

use crate::analysis::credit::{Channel, DependencyGraph};
use crate::deadlock::dynamic_dag::DynamicDag;
use crate::fabric::SwitchGraph;
use crate::rng::BuildWordHasher;

/// A dependency between two nodes of the order.
type Edge = (u32, u32);

#[derive(Clone, Debug)]
pub struct KeptDependencies {
    /// Per dense channel id (`channel_id`), its node in `dag`.
    rank: Vec<u32>,
    dag: DynamicDag,
    /// Dependencies only groups make, and how many kept groups make each:
    /// one leaves the DAG when the last group making it is dropped.
    by_groups: HashMap<Edge, u32, BuildWordHasher>,
    /// Per kept group (MLID), the dependencies of `by_groups` it makes.
    groups: HashMap<u16, Vec<Edge>, BuildWordHasher>,
    /// Scratch for `insert_all`.
    fresh: Vec<Edge>,
    /// Dependencies new to the DAG for the group being built.
    staged: Vec<Edge>,
}

/// The dense id `DependencyGraph` gives a channel (the switch graph's
/// channel number times 16 VLs, plus the VL): kept here too so that the
/// state does not borrow the fabric's graph (it outlives the call that
/// made it, in the plugin's plan). The unit test compares the two.
fn channel_id(graph: &SwitchGraph, c: Channel) -> u32 {
    (graph.channel(c.switch, c.port) * 16 + (c.vl as usize & 0xf)) as u32
}

impl KeptDependencies {
    /// Unicast's dependencies; None when they close a cycle.
    pub fn from_unicast(unicast: &DependencyGraph<'_>) -> Option<Self> {
        let order = unicast.topological_order()?;
        let mut rank = vec![0u32; order.len()];
        for (i, &id) in order.iter().enumerate() {
            rank[id as usize] = i as u32;
        }
        let mut dag = DynamicDag::new(order.len());
        for (a, b) in unicast.edge_ids() {
            // Forward in the order: no search.
            dag.insert(rank[a as usize], rank[b as usize]).ok()?;
        }
        Some(KeptDependencies {
            rank,
            dag,
            by_groups: HashMap::default(),
            groups: HashMap::default(),
            fresh: Vec::new(),
            staged: Vec::new(),
        })
    }

    fn edge(&self, graph: &SwitchGraph, (a, b): (Channel, Channel)) -> Edge {
        (
            self.rank[channel_id(graph, a) as usize],
            self.rank[channel_id(graph, b) as usize],
        )
    }

    /// Inserts every edge of `edges` into the DAG, or none when together
    /// they would close a cycle; on success `fresh` holds those that were
    /// not there before.
    fn insert_all(&mut self, edges: &[Edge]) -> bool {
        self.fresh.clear();
        for &(a, b) in edges {
            match self.dag.insert(a, b) {
                Ok(true) => self.fresh.push((a, b)),
                Ok(false) => {}
                Err(_) => {
                    for &(x, y) in &self.fresh {
                        self.dag.remove(x, y);
                    }
                    self.fresh.clear();
                    return false;
                }
            }
        }
        true
    }

    /// Adds `deps` for good (a master tree's whole flood), or none of
    /// them when together they would close a cycle.
    pub fn try_add(&mut self, graph: &SwitchGraph, deps: &[(Channel, Channel)]) -> bool {
        let edges: Vec<Edge> = deps.iter().map(|&d| self.edge(graph, d)).collect();
        self.insert_all(&edges)
    }

    /// Keeps `deps` as group `mlid`'s flood, in place of the one it had,
    /// or keeps none of them (and drops the old one) when together they
    /// would close a cycle.
    pub fn try_add_group(
        &mut self,
        graph: &SwitchGraph,
        mlid: u16,
        deps: &[(Channel, Channel)],
    ) -> bool {
        self.begin_group(mlid);
        if self.stage(graph, deps) {
            self.commit_group(graph, mlid, deps);
            true
        } else {
            self.abort_group();
            false
        }
    }

    /// Starts group `mlid`'s flood afresh (its old one dropped), to be
    /// built up by `stage` and ended by `commit_group` or `abort_group`.
    pub fn begin_group(&mut self, mlid: u16) {
        self.abort_group();
        self.drop_group(mlid);
    }

    /// Adds `deps` to the flood being built, or none of them when together
    /// with what is kept and staged they would close a cycle (what was
    /// staged before stays).
    pub fn stage(&mut self, graph: &SwitchGraph, deps: &[(Channel, Channel)]) -> bool {
        let edges: Vec<Edge> = deps.iter().map(|&d| self.edge(graph, d)).collect();
        if !self.insert_all(&edges) {
            return false;
        }
        self.staged.append(&mut self.fresh);
        true
    }

    /// How much is staged, to go back to with `unstage_to`.
    pub fn staged_mark(&self) -> usize {
        self.staged.len()
    }

    /// Takes out what was staged after `mark` (a branch given up).
    pub fn unstage_to(&mut self, mark: usize) {
        for (a, b) in self.staged.drain(mark..) {
            self.dag.remove(a, b);
        }
    }

    /// Keeps the staged flood as group `mlid`'s; `deps` is all of it
    /// (every dependency staged for it, and those it shares with what was
    /// kept before).
    pub fn commit_group(&mut self, graph: &SwitchGraph, mlid: u16, deps: &[(Channel, Channel)]) {
        // What this group makes beyond unicast and the master trees: the
        // dependencies new to the DAG, and those other groups made first.
        for e in std::mem::take(&mut self.staged) {
            self.by_groups.insert(e, 0);
        }
        let mut edges: Vec<Edge> = deps.iter().map(|&d| self.edge(graph, d)).collect();
        edges.sort_unstable();
        edges.dedup();
        edges.retain(|e| self.by_groups.contains_key(e));
        for e in &edges {
            *self.by_groups.get_mut(e).expect("just retained") += 1;
        }
        self.groups.insert(mlid, edges);
    }

    /// Takes out what was staged since `begin_group`.
    pub fn abort_group(&mut self) {
        for (a, b) in std::mem::take(&mut self.staged) {
            self.dag.remove(a, b);
        }
    }

    /// Takes group `mlid`'s flood out (nothing if it has none kept): the
    /// dependencies no other kept group makes leave the DAG.
    pub fn drop_group(&mut self, mlid: u16) {
        let Some(edges) = self.groups.remove(&mlid) else {
            return;
        };
        for e in edges {
            let Some(n) = self.by_groups.get_mut(&e) else {
                continue;
            };
            *n -= 1;
            if *n == 0 {
                self.by_groups.remove(&e);
                self.dag.remove(e.0, e.1);
            }
        }
    }

    /// The MLIDs of the groups whose floods are kept, in no order.
    pub fn group_mlids(&self) -> impl Iterator<Item = u16> + '_ {
        self.groups.keys().copied()
    }

    /// Groups whose floods are kept.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// Dependencies in the DAG: unicast's, the master trees' and the kept
    /// groups'.
    pub fn edge_count(&self) -> usize {
        self.dag.edge_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{PortNum, SwitchId};

    fn ring() -> crate::fabric::Fabric {
        crate::testkit::TestFabric::of(crate::gen::torus::torus(&[4], &[1], 1).unwrap()).build()
    }

    fn ch(s: usize, p: u8) -> Channel {
        Channel {
            switch: SwitchId::new(s),
            port: PortNum::new(p),
            vl: 0,
        }
    }

    /// The dense ids agree with `DependencyGraph`'s, on every channel and
    /// VL of a small fabric.
    #[test]
    fn channel_ids_match_the_dependency_graph() {
        let f = ring();
        let g = f.graph();
        let deps = DependencyGraph::new(g);
        for c in 0..g.channel_count() {
            let (switch, port) = g.channel_port(c);
            for vl in [0u8, 3, 15] {
                let c = Channel { switch, port, vl };
                assert_eq!(channel_id(g, c), deps.id_of(c));
            }
        }
    }

    /// A group's flood closing a cycle with the kept ones is refused whole;
    /// dropping a group takes out only what no other group makes, and
    /// then the refused flood fits.
    #[test]
    fn group_floods_are_kept_counted_and_dropped() {
        let f = ring();
        let g = f.graph();
        let channels: Vec<Channel> = (0..g.channel_count())
            .map(|c| {
                let (s, p) = g.channel_port(c);
                ch(s.idx(), p.raw())
            })
            .collect();
        let [a, b, c] = [channels[0], channels[1], channels[2]];
        let mut kept = KeptDependencies::from_unicast(&DependencyGraph::new(g)).unwrap();
        let base = kept.edge_count();
        assert!(kept.try_add_group(g, 0xC001, &[(a, b), (b, c)]));
        assert!(kept.try_add_group(g, 0xC002, &[(a, b)]));
        assert_eq!(kept.edge_count(), base + 2);
        // c -> a closes a -> b -> c -> a: refused, nothing of it kept.
        assert!(!kept.try_add_group(g, 0xC003, &[(c, a), (b, a)]));
        assert_eq!(kept.edge_count(), base + 2);
        assert_eq!(kept.group_count(), 2);
        // 0xC002 still makes a -> b: only b -> c leaves with 0xC001.
        kept.drop_group(0xC001);
        assert_eq!(kept.edge_count(), base + 1);
        assert!(kept.try_add_group(g, 0xC003, &[(c, a)]));
        // Rebuilding a group replaces its flood: a -> b goes with the old
        // one, and b -> c would now close b -> c -> a -> b otherwise.
        assert!(kept.try_add_group(g, 0xC002, &[(b, c)]));
        assert_eq!(kept.edge_count(), base + 2);
        assert!(!kept.try_add_group(g, 0xC004, &[(a, b)]));
        kept.drop_group(0xC002);
        kept.drop_group(0xC003);
        assert_eq!((kept.edge_count(), kept.group_count()), (base, 0));
    }
}

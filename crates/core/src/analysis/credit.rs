//! Credit loops: cycles in the channel dependency graph.
//!
//! A channel is a switch's out-port on one VL. A packet holding channel A
//! and waiting for channel B creates the dependency A -> B; the routing can
//! deadlock exactly when these dependencies form a cycle (Dally & Seitz).
//! Dependencies are collected while paths are traced (`report`), so the
//! graph covers exactly the routes the tables produce.
//!
//! The graph is collected as dense adjacency lists (one per channel id,
//! deduplicated as they grow: a big fabric's routes repeat the same few
//! dependencies millions of times) and handed to petgraph for the cycle
//! search.

use petgraph::graph::{DiGraph, NodeIndex};

use crate::fabric::{PortNum, SwitchGraph, SwitchId};

/// A channel: switch, out-port, VL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Channel {
    pub switch: SwitchId,
    pub port: PortNum,
    pub vl: u8,
}

/// Dependency graph over dense channel ids (the switch graph's channel
/// number times 16 VLs).
#[derive(Clone)]
pub struct DependencyGraph<'a> {
    graph: &'a SwitchGraph,
    edges: Vec<Vec<u32>>,
}

impl<'a> DependencyGraph<'a> {
    pub fn new(graph: &'a SwitchGraph) -> Self {
        DependencyGraph {
            graph,
            edges: vec![Vec::new(); graph.channel_count() * 16],
        }
    }

    fn id(&self, c: Channel) -> u32 {
        (self.graph.channel(c.switch, c.port) * 16 + (c.vl as usize & 0xf)) as u32
    }

    fn channel(&self, id: u32) -> Channel {
        let (switch, port) = self.graph.channel_port(id as usize / 16);
        Channel {
            switch,
            port,
            vl: (id % 16) as u8,
        }
    }

    pub fn add(&mut self, from: Channel, to: Channel) {
        let (a, b) = (self.id(from), self.id(to));
        let list = &mut self.edges[a as usize];
        if !list.contains(&b) {
            list.push(b);
        }
    }

    /// Takes in `other`'s dependencies (of the same switch graph), then
    /// orders every list, so the graph does not depend on how the routes
    /// were split between threads.
    pub fn merge(&mut self, other: DependencyGraph<'a>) {
        for (list, more) in self.edges.iter_mut().zip(other.edges) {
            for b in more {
                if !list.contains(&b) {
                    list.push(b);
                }
            }
        }
    }

    /// Every list in ascending order (a canonical form for the cycle search).
    pub fn sort(&mut self) {
        self.edges.iter_mut().for_each(|l| l.sort_unstable());
    }

    /// Whether `from -> to` is one of the dependencies.
    pub fn contains(&self, from: Channel, to: Channel) -> bool {
        self.edges[self.id(from) as usize].contains(&self.id(to))
    }

    pub fn edge_count(&self) -> usize {
        self.edges.iter().map(Vec::len).sum()
    }

    /// The dense id of a channel (the switch graph's channel number times
    /// 16 plus the VL), as `edge_ids` and `topological_order` give them.
    pub fn id_of(&self, c: Channel) -> u32 {
        self.id(c)
    }

    /// Every dependency, as dense channel ids.
    pub fn edge_ids(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.edges
            .iter()
            .enumerate()
            .flat_map(|(a, list)| list.iter().map(move |&b| (a as u32, b)))
    }

    /// Every channel id (used or not) in an order where each dependency
    /// leads forward; None when the dependencies close a cycle.
    pub fn topological_order(&self) -> Option<Vec<u32>> {
        let mut g: DiGraph<(), (), u32> = DiGraph::from_edges(self.edge_ids());
        while g.node_count() < self.edges.len() {
            g.add_node(());
        }
        let order = petgraph::algo::toposort(&g, None).ok()?;
        Some(order.into_iter().map(|n| n.index() as u32).collect())
    }

    /// One cycle, as the channels along it, if there is any.
    ///
    /// petgraph's topological sort says whether there is a cycle and names
    /// a channel on one; a breadth-first search from that channel back to
    /// itself then gives the shortest cycle through it.
    pub fn find_cycle(&self) -> Option<Vec<Channel>> {
        let g: DiGraph<(), (), u32> = DiGraph::from_edges(
            self.edges
                .iter()
                .enumerate()
                .flat_map(|(a, list)| list.iter().map(move |&b| (a as u32, b))),
        );
        let on_cycle = petgraph::algo::toposort(&g, None).err()?.node_id();
        let mut parent: Vec<u32> = vec![u32::MAX; g.node_count()];
        let mut queue = std::collections::VecDeque::from([on_cycle]);
        while let Some(x) = queue.pop_front() {
            for y in g.neighbors(x) {
                if y == on_cycle {
                    let mut cycle = vec![self.channel(x.index() as u32)];
                    let mut at = x;
                    while at != on_cycle {
                        at = NodeIndex::new(parent[at.index()] as usize);
                        cycle.push(self.channel(at.index() as u32));
                    }
                    cycle.reverse();
                    return Some(cycle);
                }
                if parent[y.index()] == u32::MAX {
                    parent[y.index()] = x.index() as u32;
                    queue.push_back(y);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricBuilder, NodeKind, PortRef};

    #[test]
    fn finds_a_ring_and_not_a_chain() {
        let mut b = FabricBuilder::new();
        let s: Vec<_> = (0..3)
            .map(|i| b.add_node(NodeKind::Switch, 0x10 + i, "", 2))
            .collect();
        for i in 0..3 {
            b.connect(PortRef::new(s[i], 1), PortRef::new(s[(i + 1) % 3], 2))
                .unwrap();
        }
        let f = b.build().unwrap();
        let mut g = DependencyGraph::new(f.graph());
        let c = |switch: usize, vl| Channel {
            switch: SwitchId::new(switch),
            port: PortNum::new(1),
            vl,
        };
        g.add(c(0, 0), c(1, 0));
        g.add(c(1, 0), c(2, 0));
        assert!(g.find_cycle().is_none());
        // Closing the ring on another VL is no cycle either.
        g.add(c(2, 0), c(0, 1));
        assert!(g.find_cycle().is_none());
        g.add(c(0, 1), c(1, 0));
        let cycle = g.find_cycle().unwrap();
        assert_eq!(cycle.len(), 3, "{cycle:?}");
        assert!(cycle.contains(&c(2, 0)) && cycle.contains(&c(0, 1)));
        assert_eq!(g.edge_count(), 4);
    }
}

//! The switch-to-switch graph as the engines that search it see it:
//! switches ranked by GUID (so that results do not depend on the order in
//! which the SM or a net file lists nodes), distinct neighbours, hosts per
//! switch, and all-pairs hop distances.

use std::sync::OnceLock;

use crate::fabric::{Fabric, Peer};

/// The switch graph: neighbours without parallel links, hosts per switch,
/// and all-pairs hop distances, computed on first use (hxdor needs only the
/// ranking and the neighbours).
pub struct SwitchGraph {
    /// Per switch, its distinct neighbours, ascending.
    pub neighbours: Vec<Vec<usize>>,
    /// Hosts (CA ports) cabled to each switch: the routes a path carries.
    pub hosts: Vec<u64>,
    /// `dist[s * n + d]`: hops from s to d (`u16::MAX`: unreachable),
    /// and the largest finite one.
    dist: OnceLock<(Vec<u16>, u16)>,
}

impl SwitchGraph {
    pub fn new(mut neighbours: Vec<Vec<usize>>, hosts: Vec<u64>) -> Self {
        for list in &mut neighbours {
            list.sort_unstable();
            list.dedup();
        }
        SwitchGraph { neighbours, hosts, dist: OnceLock::new() }
    }

    pub fn switch_count(&self) -> usize {
        self.neighbours.len()
    }

    pub fn dist(&self, s: usize, d: usize) -> u16 {
        self.distances().0[s * self.switch_count() + d]
    }

    /// Largest finite distance.
    pub fn diameter(&self) -> u16 {
        self.distances().1
    }

    /// A breadth-first search from every switch.
    fn distances(&self) -> &(Vec<u16>, u16) {
        self.dist.get_or_init(|| {
            let n = self.switch_count();
            let mut dist = vec![u16::MAX; n * n];
            let mut queue = Vec::with_capacity(n);
            for s in 0..n {
                let row = &mut dist[s * n..(s + 1) * n];
                row[s] = 0;
                queue.clear();
                queue.push(s);
                let mut head = 0;
                while head < queue.len() {
                    let x = queue[head];
                    head += 1;
                    for &y in &self.neighbours[x] {
                        if row[y] == u16::MAX {
                            row[y] = row[x] + 1;
                            queue.push(y);
                        }
                    }
                }
            }
            let diameter = dist.iter().copied().filter(|&d| d != u16::MAX).max().unwrap_or(0);
            (dist, diameter)
        })
    }
}

/// The switch graph in switch-GUID order: the layers must not depend on
/// the node order, which differs between the SM and a net file.
pub struct GuidOrder {
    /// Switch index of each rank.
    pub switch_at: Vec<usize>,
    /// Rank of each switch index.
    pub rank_of: Vec<usize>,
    pub graph: SwitchGraph,
}

impl GuidOrder {
    pub fn new(fabric: &Fabric) -> Self {
        let switches = fabric.switches();
        let mut switch_at: Vec<usize> = (0..switches.len()).collect();
        switch_at.sort_by_key(|&s| fabric.node(switches[s]).guid);
        let mut rank_of = vec![0; switches.len()];
        for (rank, &s) in switch_at.iter().enumerate() {
            rank_of[s] = rank;
        }
        let peers = fabric.switch_port_peers();
        let mut neighbours = Vec::with_capacity(switches.len());
        let mut hosts = Vec::with_capacity(switches.len());
        for &s in &switch_at {
            neighbours.push(
                peers[s]
                    .iter()
                    .skip(1)
                    .filter_map(|p| match p {
                        Some(Peer::Switch(t)) => Some(rank_of[*t]),
                        _ => None,
                    })
                    .collect(),
            );
            hosts.push(peers[s].iter().filter(|p| matches!(p, Some(Peer::Ca(_)))).count() as u64);
        }
        GuidOrder { switch_at, rank_of, graph: SwitchGraph::new(neighbours, hosts) }
    }
}

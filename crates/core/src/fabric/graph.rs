//! The switch-to-switch graph, built once per fabric: what every port of
//! every switch is cabled to, the cables between switches (parallel ones
//! kept apart), distinct neighbours with their bundles of parallel ports,
//! hosts per switch, a dense numbering of switch ports as channels, and
//! hop distances computed on first use.
//!
//! Everything is indexed by `SwitchId`, which is GUID order, so any order
//! an engine derives from this graph is the same for OpenSM's subnet and
//! for a net file of the same fabric.
//!
//! A cable from a switch to itself carries no route: it is kept out of the
//! cables and neighbours (its ports still show it as their peer) and
//! reported once with a warning.

use std::sync::OnceLock;

use super::{describe, Node, NodeId, PortNum, PortRef, SwitchId};

/// What a switch port is cabled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A port of a switch (possibly the same switch, for a looped cable).
    Switch { switch: SwitchId, port: PortNum },
    /// A channel adapter's port.
    Ca(PortRef),
}

/// A cable from one switch to another, seen from the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cable {
    pub port: PortNum,
    pub to: SwitchId,
    pub far_port: PortNum,
}

/// Hops between switches that cannot reach each other.
pub const UNREACHABLE: u16 = u16::MAX;

#[derive(Clone, Debug)]
pub struct SwitchGraph {
    /// Per switch, per port number: what is cabled there.
    peers: Vec<Vec<Option<Peer>>>,
    /// Per switch: its cables to other switches, in port order.
    cables: Vec<Vec<Cable>>,
    /// Per switch: distinct neighbouring switches, ascending.
    neighbours: Vec<Vec<SwitchId>>,
    /// Per switch, parallel to `neighbours`: the ports cabled to that
    /// neighbour, ascending.
    bundles: Vec<Vec<Vec<PortNum>>>,
    /// CA ports cabled to each switch.
    hosts: Vec<u32>,
    /// First channel number of each switch's ports (see `channel`).
    channel_base: Vec<usize>,
    channels: usize,
    /// All-pairs hop distances (`n * n`, `UNREACHABLE` where none) and the
    /// largest finite one, computed on first use: some engines never need
    /// them.
    distances: OnceLock<(Vec<u16>, u16)>,
}

impl SwitchGraph {
    pub(super) fn new(nodes: &[Node], switches: &[NodeId], switch_of: &[Option<SwitchId>]) -> Self {
        let n = switches.len();
        let mut graph = SwitchGraph {
            peers: Vec::with_capacity(n),
            cables: Vec::with_capacity(n),
            neighbours: Vec::with_capacity(n),
            bundles: Vec::with_capacity(n),
            hosts: Vec::with_capacity(n),
            channel_base: Vec::with_capacity(n),
            channels: 0,
            distances: OnceLock::new(),
        };
        for (s, &node_id) in switches.iter().enumerate() {
            let node = &nodes[node_id];
            let peers: Vec<Option<Peer>> = (0..node.port_slots())
                .map(|p| {
                    let r = node.port(p as u8)?.remote?;
                    Some(match switch_of.get(r.node.idx()).copied().flatten() {
                        Some(switch) => Peer::Switch {
                            switch,
                            port: r.port,
                        },
                        None => Peer::Ca(r),
                    })
                })
                .collect();
            let mut cables = Vec::new();
            for (p, peer) in peers.iter().enumerate().skip(1) {
                match *peer {
                    Some(Peer::Switch { switch, .. }) if switch.idx() == s => log::warn!(
                        "port {p} of {} is cabled to its own switch; the cable is ignored for routing",
                        describe(node)
                    ),
                    Some(Peer::Switch { switch, port }) => {
                        cables.push(Cable { port: PortNum::new(p as u8), to: switch, far_port: port })
                    }
                    _ => {}
                }
            }
            let mut neighbours: Vec<SwitchId> = cables.iter().map(|c| c.to).collect();
            neighbours.sort_unstable();
            neighbours.dedup();
            let mut bundles = vec![Vec::new(); neighbours.len()];
            for c in &cables {
                if let Ok(slot) = neighbours.binary_search(&c.to) {
                    bundles[slot].push(c.port);
                }
            }
            graph.hosts.push(
                peers
                    .iter()
                    .filter(|p| matches!(p, Some(Peer::Ca(_))))
                    .count() as u32,
            );
            graph.channel_base.push(graph.channels);
            graph.channels += peers.len();
            graph.peers.push(peers);
            graph.cables.push(cables);
            graph.neighbours.push(neighbours);
            graph.bundles.push(bundles);
        }
        graph
    }

    pub fn switch_count(&self) -> usize {
        self.peers.len()
    }

    pub fn ids(&self) -> impl DoubleEndedIterator<Item = SwitchId> + ExactSizeIterator + Clone {
        SwitchId::range(self.switch_count())
    }

    /// Port slots of a switch, including port 0.
    pub fn port_slots(&self, s: SwitchId) -> usize {
        self.peers[s].len()
    }

    /// What port `port` of switch `s` is cabled to.
    pub fn peer(&self, s: SwitchId, port: PortNum) -> Option<Peer> {
        self.peers[s].get(port.idx()).copied().flatten()
    }

    /// Per port number of `s`, what it is cabled to.
    pub fn peers(&self, s: SwitchId) -> &[Option<Peer>] {
        &self.peers[s]
    }

    /// The switch across port `port` of `s`, if a switch is cabled there.
    pub fn switch_behind(&self, s: SwitchId, port: PortNum) -> Option<SwitchId> {
        match self.peer(s, port) {
            Some(Peer::Switch { switch, .. }) => Some(switch),
            _ => None,
        }
    }

    /// Cables from `s` to other switches, in port order (parallel cables
    /// each appear).
    pub fn cables(&self, s: SwitchId) -> &[Cable] {
        &self.cables[s]
    }

    /// Distinct neighbours of `s`, ascending.
    pub fn neighbours(&self, s: SwitchId) -> &[SwitchId] {
        &self.neighbours[s]
    }

    /// Position of `t` among `s`'s neighbours.
    pub fn slot(&self, s: SwitchId, t: SwitchId) -> Option<usize> {
        self.neighbours[s].binary_search(&t).ok()
    }

    /// Ports of `s` cabled to `t` (several for parallel cables; empty when
    /// they are not neighbours).
    pub fn bundle(&self, s: SwitchId, t: SwitchId) -> &[PortNum] {
        self.slot(s, t).map_or(&[], |slot| &self.bundles[s][slot])
    }

    /// The bundles of `s`, parallel to `neighbours(s)`.
    pub fn bundles(&self, s: SwitchId) -> &[Vec<PortNum>] {
        &self.bundles[s]
    }

    /// CA ports cabled to `s`.
    pub fn hosts(&self, s: SwitchId) -> u32 {
        self.hosts[s]
    }

    /// Dense number of port `port` of switch `s` among all switch ports of
    /// the fabric (port 0 and CA ports included), for per-channel tables.
    pub fn channel(&self, s: SwitchId, port: PortNum) -> usize {
        self.channel_base[s] + port.idx()
    }

    /// Number of channels `channel` can return.
    pub fn channel_count(&self) -> usize {
        self.channels
    }

    /// The switch and port of a channel number.
    pub fn channel_port(&self, channel: usize) -> (SwitchId, PortNum) {
        let s = self.channel_base.partition_point(|&b| b <= channel) - 1;
        (
            SwitchId::new(s),
            PortNum::new((channel - self.channel_base[s]) as u8),
        )
    }

    /// Hops from `s` to `d` (`UNREACHABLE` when there is no path).
    pub fn dist(&self, s: SwitchId, d: SwitchId) -> u16 {
        self.distances().0[s.idx() * self.switch_count() + d.idx()]
    }

    /// Hops from `s` to every switch, indexed by `SwitchId`.
    pub fn dist_row(&self, s: SwitchId) -> &[u16] {
        let n = self.switch_count();
        &self.distances().0[s.idx() * n..(s.idx() + 1) * n]
    }

    /// Largest finite distance.
    pub fn diameter(&self) -> u16 {
        self.distances().1
    }

    /// Whether every switch reaches every other.
    pub fn is_connected(&self) -> bool {
        self.switch_count() == 0 || self.unreached_from(SwitchId::new(0)).is_none()
    }

    /// A switch that `from` has no path to, if any: one BFS, so engines
    /// that never read distances do not pay for all of them.
    pub fn unreached_from(&self, from: SwitchId) -> Option<SwitchId> {
        let mut bfs = Bfs::new(self.switch_count());
        bfs.run(self, from);
        self.ids().find(|&s| !bfs.reached(s))
    }

    fn distances(&self) -> &(Vec<u16>, u16) {
        self.distances.get_or_init(|| {
            let n = self.switch_count();
            let mut dist = vec![UNREACHABLE; n * n];
            let mut bfs = Bfs::new(n);
            for s in self.ids() {
                bfs.run(self, s);
                let row = &mut dist[s.idx() * n..(s.idx() + 1) * n];
                for &t in bfs.order() {
                    row[t.idx()] = bfs.dist(t) as u16;
                }
            }
            let diameter = dist
                .iter()
                .copied()
                .filter(|&d| d != UNREACHABLE)
                .max()
                .unwrap_or(0);
            (dist, diameter)
        })
    }

    /// The graph as a petgraph `UnGraph`: node weight = switch id, one
    /// edge per cable with its two port numbers (in edge-endpoint order),
    /// for petgraph's algorithms.
    pub fn to_petgraph(&self) -> petgraph::graph::UnGraph<SwitchId, (PortNum, PortNum)> {
        let mut g = petgraph::graph::UnGraph::with_capacity(self.switch_count(), 0);
        for s in self.ids() {
            g.add_node(s);
        }
        for s in self.ids() {
            for c in self.cables(s) {
                // Each cable once: from its lower (switch, port) end.
                if (s, c.port) < (c.to, c.far_port) {
                    g.add_edge(
                        (s.idx() as u32).into(),
                        (c.to.idx() as u32).into(),
                        (c.port, c.far_port),
                    );
                }
            }
        }
        g
    }
}

/// A reusable breadth-first search over the switch graph: distances in
/// hops from one switch and the switches in the order reached.
#[derive(Clone, Debug)]
pub struct Bfs {
    source: Option<SwitchId>,
    dist: Vec<u32>,
    order: Vec<SwitchId>,
}

impl Bfs {
    pub fn new(switches: usize) -> Self {
        Bfs {
            source: None,
            dist: vec![u32::MAX; switches],
            order: Vec::with_capacity(switches),
        }
    }

    /// Searches from `source` (nothing to do when the last run had the same
    /// source).
    pub fn run(&mut self, graph: &SwitchGraph, source: SwitchId) {
        if self.source == Some(source) {
            return;
        }
        self.run_from(graph, &[source]);
        self.source = Some(source);
    }

    /// Searches from all of `sources` at once (distance 0 for each).
    pub fn run_from(&mut self, graph: &SwitchGraph, sources: &[SwitchId]) {
        self.source = None;
        self.dist.fill(u32::MAX);
        self.order.clear();
        for &s in sources {
            if self.dist[s] == u32::MAX {
                self.dist[s] = 0;
                self.order.push(s);
            }
        }
        let mut head = 0;
        while head < self.order.len() {
            let x = self.order[head];
            head += 1;
            let next = self.dist[x] + 1;
            for &y in graph.neighbours(x) {
                if self.dist[y] == u32::MAX {
                    self.dist[y] = next;
                    self.order.push(y);
                }
            }
        }
    }

    /// Hops from the source to `s` (`u32::MAX`: not reached).
    pub fn dist(&self, s: SwitchId) -> u32 {
        self.dist[s]
    }

    pub fn reached(&self, s: SwitchId) -> bool {
        self.dist[s] != u32::MAX
    }

    /// Reached switches, nearest first (the source first).
    pub fn order(&self) -> &[SwitchId] {
        &self.order
    }
}

#[cfg(test)]
mod tests {
    use crate::fabric::{FabricBuilder, NodeKind, PortNum, PortRef, SwitchId};

    #[test]
    fn cables_bundles_and_loops() {
        let mut b = FabricBuilder::new();
        let s0 = b.add_node(NodeKind::Switch, 0x10, "s0", 6);
        let s1 = b.add_node(NodeKind::Switch, 0x20, "s1", 6);
        let h0 = b.add_node(NodeKind::Ca, 0x100, "h0", 1);
        b.connect(PortRef::new(s0, 1), PortRef::new(s1, 1)).unwrap();
        b.connect(PortRef::new(s0, 3), PortRef::new(s1, 3)).unwrap();
        b.connect(PortRef::new(h0, 1), PortRef::new(s0, 2)).unwrap();
        b.connect(PortRef::new(s1, 5), PortRef::new(s1, 6)).unwrap(); // looped
        let f = b.build().unwrap();
        let g = f.graph();
        let (a, z) = (SwitchId::new(0), SwitchId::new(1));
        assert_eq!(g.cables(a).len(), 2);
        assert_eq!(g.neighbours(a), &[z]);
        assert_eq!(g.bundle(a, z), &[PortNum::new(1), PortNum::new(3)]);
        assert_eq!(g.neighbours(z), &[a], "the looped cable is no neighbour");
        assert_eq!(
            g.switch_behind(z, PortNum::new(5)),
            Some(z),
            "but its ports see it"
        );
        assert_eq!((g.hosts(a), g.hosts(z)), (1, 0));
        assert_eq!(g.to_petgraph().edge_count(), 2);
        assert_eq!((g.dist(a, z), g.diameter()), (1, 1));
        assert_eq!(
            g.channel_port(g.channel(z, PortNum::new(4))),
            (z, PortNum::new(4))
        );
        assert!(g.is_connected());
    }
}

//! The fabric model every engine, parser and analysis works on: switches,
//! channel adapters, their ports, the cables between ports, and the LIDs
//! OpenSM (or an offline assignment) gave to end ports.
//!
//! A `Fabric` is immutable once built. `FabricBuilder` collects nodes, links
//! and LIDs from whatever source (OpenSM's subnet, a net file, a dump) and
//! `build()` checks that they are consistent before anything routes on them.

use std::collections::HashMap;
use std::fmt;

use petgraph::graph::UnGraph;

/// Index of a node in `Fabric::nodes()`.
pub type NodeId = usize;

/// Highest unicast LID (0xC000 and up are multicast).
pub const MAX_UNICAST_LID: u16 = 0xBFFF;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Switch,
    /// Channel adapter (host or storage end node); routers are treated alike.
    Ca,
}

/// One end of a cable: a node and its port number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortRef {
    pub node: NodeId,
    pub port: u8,
}

impl PortRef {
    pub fn new(node: NodeId, port: u8) -> Self {
        PortRef { node, port }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Port {
    pub guid: u64,
    /// Base LID; 0 when the port has none (external switch ports).
    pub lid: u16,
    /// The port answers 2^lmc consecutive LIDs starting at `lid`.
    pub lmc: u8,
    /// The port at the other end of the cable, if any.
    pub remote: Option<PortRef>,
}

impl Port {
    pub fn lid_count(&self) -> u32 {
        if self.lid == 0 {
            0
        } else {
            1u32 << self.lmc
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub kind: NodeKind,
    pub guid: u64,
    pub desc: String,
    /// Indexed by port number. Switches have port 0 (the management port,
    /// which carries the switch's LID); channel adapters leave index 0 empty.
    pub ports: Vec<Option<Port>>,
}

impl Node {
    pub fn is_switch(&self) -> bool {
        self.kind == NodeKind::Switch
    }

    pub fn port(&self, num: u8) -> Option<&Port> {
        self.ports.get(num as usize).and_then(|p| p.as_ref())
    }

    /// Number of port slots including port 0.
    pub fn port_slots(&self) -> usize {
        self.ports.len()
    }

    /// Connected ports (port number, remote end), in port order.
    pub fn links(&self) -> impl Iterator<Item = (u8, PortRef)> + '_ {
        self.ports
            .iter()
            .enumerate()
            .filter_map(|(num, p)| p.as_ref().and_then(|p| p.remote.map(|r| (num as u8, r))))
    }
}

/// What is wrong with a fabric description; each variant says what to fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FabricError {
    NoSuchPort { node: String, port: u8 },
    PortAlreadyLinked { node: String, port: u8 },
    AsymmetricLink { node: String, port: u8 },
    LidOutOfRange { node: String, port: u8, lid: u16, lmc: u8 },
    LidNotAligned { node: String, port: u8, lid: u16, lmc: u8 },
    DuplicateLid { lid: u16, first: String, second: String },
    DuplicateGuid { guid: u64 },
    LidSpaceExhausted { needed: u32 },
    CaSelfLink { node: String },
}

impl fmt::Display for FabricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FabricError::NoSuchPort { node, port } => {
                write!(f, "node {node} has no port {port}; check the port count in the fabric description")
            }
            FabricError::PortAlreadyLinked { node, port } => {
                write!(f, "port {port} of {node} is cabled twice; each port takes one cable")
            }
            FabricError::AsymmetricLink { node, port } => write!(
                f,
                "port {port} of {node} names a peer that does not name it back; make both ends of the cable agree"
            ),
            FabricError::LidOutOfRange { node, port, lid, lmc } => write!(
                f,
                "port {port} of {node} has LID {lid} with LMC {lmc}, which leaves the unicast range 1..={MAX_UNICAST_LID}"
            ),
            FabricError::LidNotAligned { node, port, lid, lmc } => write!(
                f,
                "port {port} of {node} has base LID {lid}, not a multiple of 2^LMC = {}; LIDs with LMC {lmc} must be aligned",
                1u32 << lmc
            ),
            FabricError::DuplicateLid { lid, first, second } => {
                write!(f, "LID {lid} is used by both {first} and {second}; every LID must be unique")
            }
            FabricError::DuplicateGuid { guid } => {
                write!(f, "node GUID {guid:#018x} appears twice; GUIDs must be unique")
            }
            FabricError::LidSpaceExhausted { needed } => write!(
                f,
                "the fabric needs {needed} unicast LIDs but only {MAX_UNICAST_LID} exist; lower the LMC"
            ),
            FabricError::CaSelfLink { node } => {
                write!(f, "channel adapter {node} is cabled to itself")
            }
        }
    }
}

impl std::error::Error for FabricError {}

/// Collects nodes, cables and LIDs; `build` validates them into a `Fabric`.
#[derive(Clone, Debug, Default)]
pub struct FabricBuilder {
    nodes: Vec<Node>,
    lmc: u8,
    vl_budget: VlBudget,
    max_unicast_lid: Option<u16>,
}

/// What the subnet offers routing for deadlock avoidance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VlBudget {
    /// Data VLs every inter-switch link can use.
    pub data_vls: u8,
    /// Whether the SM programs the SL2VL tables an engine asks for (OpenSM
    /// does only with `qos TRUE`); without them every SL stays on VL 0.
    pub sl2vl_programmed: bool,
    /// Where the limit comes from and how to raise it, completing "this
    /// routing needs N VLs but ...".
    pub limited_by: String,
}

impl Default for VlBudget {
    /// Offline default: 8 data VLs (what ibsim's and most switches' ports
    /// offer), SL2VL programmed.
    fn default() -> Self {
        VlBudget { data_vls: 8, sl2vl_programmed: true, limited_by: "the offline default is 8 VLs".into() }
    }
}

impl VlBudget {
    /// Data VLs behind InfiniBand's VL encoding (PortInfo VLCap/OperationalVLs
    /// and OpenSM's `max_op_vls`): 1 = VL0, 2 = VL0-1, 3 = VL0-3, 4 = VL0-7,
    /// 5 = VL0-14.
    pub fn data_vls_of_code(code: u8) -> u8 {
        match code {
            0 | 1 => 1,
            2 => 2,
            3 => 4,
            4 => 8,
            _ => 15,
        }
    }

    /// VLs a routing may actually rely on.
    pub fn usable(&self) -> u8 {
        if self.sl2vl_programmed {
            self.data_vls.max(1)
        } else {
            1
        }
    }
}

impl FabricBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node with ports 1..=`num_ports` (plus port 0 for switches).
    pub fn add_node(&mut self, kind: NodeKind, guid: u64, desc: impl Into<String>, num_ports: u8) -> NodeId {
        let mut ports = vec![None; num_ports as usize + 1];
        let first = if kind == NodeKind::Switch { 0 } else { 1 };
        for (num, slot) in ports.iter_mut().enumerate().skip(first) {
            // Port GUIDs: switches share the node GUID on every port, CAs
            // number their ports from the node GUID, as ibsim and most HCAs do.
            let guid = if kind == NodeKind::Switch { guid } else { guid + num as u64 };
            *slot = Some(Port { guid, ..Port::default() });
        }
        self.nodes.push(Node { kind, guid, desc: desc.into(), ports });
        self.nodes.len() - 1
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn port_mut(&mut self, at: PortRef) -> Result<&mut Port, FabricError> {
        let exists = self.nodes.get(at.node).and_then(|n| n.ports.get(at.port as usize)).is_some_and(Option::is_some);
        if !exists {
            return Err(FabricError::NoSuchPort { node: self.name(at.node), port: at.port });
        }
        match self.nodes[at.node].ports[at.port as usize].as_mut() {
            Some(port) => Ok(port),
            None => unreachable!("checked above"),
        }
    }

    fn name(&self, id: NodeId) -> String {
        self.nodes.get(id).map(describe).unwrap_or_else(|| format!("node #{id}"))
    }

    /// Cables `a` to `b`. Both ports must exist and be free.
    pub fn connect(&mut self, a: PortRef, b: PortRef) -> Result<(), FabricError> {
        if a.node == b.node && !self.nodes[a.node].is_switch() {
            return Err(FabricError::CaSelfLink { node: self.name(a.node) });
        }
        for (this, other) in [(a, b), (b, a)] {
            let port = self.port_mut(this)?;
            match port.remote {
                Some(r) if r == other => {}
                Some(_) => {
                    return Err(FabricError::PortAlreadyLinked { node: self.name(this.node), port: this.port })
                }
                None => port.remote = Some(other),
            }
        }
        Ok(())
    }

    /// Removes the cable at `a` (both ends), if any.
    pub fn disconnect(&mut self, a: PortRef) {
        if let Ok(port) = self.port_mut(a) {
            if let Some(b) = port.remote.take() {
                if let Ok(peer) = self.port_mut(b) {
                    peer.remote = None;
                }
            }
        }
    }

    pub fn set_lid(&mut self, at: PortRef, lid: u16, lmc: u8) -> Result<(), FabricError> {
        let port = self.port_mut(at)?;
        port.lid = lid;
        port.lmc = lmc;
        Ok(())
    }

    /// The LMC configured for the subnet (what OpenSM's `lmc` option says);
    /// individual ports carry their own, which is what routing uses.
    pub fn set_lmc(&mut self, lmc: u8) {
        self.lmc = lmc;
    }

    /// Ports that get LIDs: switch port 0 and every CA port, in node order.
    pub fn end_ports(&self) -> Vec<PortRef> {
        let mut out = Vec::new();
        for (id, node) in self.nodes.iter().enumerate() {
            match node.kind {
                NodeKind::Switch => out.push(PortRef::new(id, 0)),
                NodeKind::Ca => {
                    for (num, p) in node.ports.iter().enumerate() {
                        if p.is_some() && num > 0 {
                            out.push(PortRef::new(id, num as u8));
                        }
                    }
                }
            }
        }
        out
    }

    /// Sequential LID assignment as an offline stand-in for OpenSM's: switches
    /// get one LID (LMC 0, like OpenSM with `lmc_esp0 FALSE`), CA ports get
    /// 2^lmc aligned LIDs, in node order.
    pub fn assign_lids_sequential(&mut self, lmc: u8) -> Result<(), FabricError> {
        self.lmc = lmc;
        let mut next: u32 = 1;
        for at in self.end_ports() {
            let is_switch = self.nodes[at.node].is_switch();
            let port_lmc = if is_switch { 0 } else { lmc };
            let step = 1u32 << port_lmc;
            let base = next.div_ceil(step) * step;
            if base + step - 1 > MAX_UNICAST_LID as u32 {
                return Err(FabricError::LidSpaceExhausted { needed: base + step - 1 });
            }
            self.set_lid(at, base as u16, port_lmc)?;
            next = base + step;
        }
        Ok(())
    }

    pub fn set_vl_budget(&mut self, budget: VlBudget) {
        self.vl_budget = budget;
    }

    /// The highest LID the switches' forwarding tables hold (OpenSM's
    /// `max_ucast_lid_ho`); `MAX_UNICAST_LID` unless set.
    pub fn set_max_unicast_lid(&mut self, lid: u16) {
        self.max_unicast_lid = Some(lid);
    }

    /// Validates and freezes the fabric.
    pub fn build(self) -> Result<Fabric, FabricError> {
        let mut fabric = Fabric::from_nodes(self.nodes, self.lmc)?;
        fabric.vl_budget = self.vl_budget;
        fabric.max_unicast_lid = self.max_unicast_lid.unwrap_or(MAX_UNICAST_LID);
        Ok(fabric)
    }
}

/// What a switch port is cabled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// Another switch, by switch index.
    Switch(usize),
    /// A channel adapter, by node id.
    Ca(NodeId),
}

/// A validated, immutable fabric.
#[derive(Clone, Debug)]
pub struct Fabric {
    nodes: Vec<Node>,
    lmc: u8,
    switches: Vec<NodeId>,
    switch_index: Vec<Option<u32>>,
    lid_owner: Vec<Option<PortRef>>,
    vl_budget: VlBudget,
    max_unicast_lid: u16,
}

/// "switch 0x0002c90000000001 (sw-3)": how nodes are named in messages.
pub fn describe(node: &Node) -> String {
    let kind = if node.is_switch() { "switch" } else { "CA" };
    if node.desc.is_empty() {
        format!("{kind} {:#018x}", node.guid)
    } else {
        format!("{kind} {:#018x} ({})", node.guid, node.desc)
    }
}

impl Fabric {
    fn from_nodes(nodes: Vec<Node>, lmc: u8) -> Result<Fabric, FabricError> {
        let mut seen_guid: HashMap<u64, NodeId> = HashMap::with_capacity(nodes.len());
        for (id, n) in nodes.iter().enumerate() {
            if seen_guid.insert(n.guid, id).is_some() {
                return Err(FabricError::DuplicateGuid { guid: n.guid });
            }
        }
        let mut switches = Vec::new();
        let mut switch_index = vec![None; nodes.len()];
        let mut max_lid: u32 = 0;
        for (id, node) in nodes.iter().enumerate() {
            if node.is_switch() {
                switch_index[id] = Some(switches.len() as u32);
                switches.push(id);
            }
            for (num, port) in node.ports.iter().enumerate() {
                let Some(port) = port else { continue };
                if let Some(r) = port.remote {
                    let back = nodes.get(r.node).and_then(|n| n.port(r.port)).and_then(|p| p.remote);
                    if back != Some(PortRef::new(id, num as u8)) {
                        return Err(FabricError::AsymmetricLink { node: describe(node), port: num as u8 });
                    }
                }
                if port.lid != 0 {
                    let last = port.lid as u32 + port.lid_count() - 1;
                    if last > MAX_UNICAST_LID as u32 || port.lmc > 7 {
                        return Err(FabricError::LidOutOfRange {
                            node: describe(node),
                            port: num as u8,
                            lid: port.lid,
                            lmc: port.lmc,
                        });
                    }
                    // `%` rather than is_multiple_of: Debian bookworm's rustc is 1.85.
                    #[allow(clippy::manual_is_multiple_of)]
                    if port.lid as u32 % (1u32 << port.lmc) != 0 {
                        return Err(FabricError::LidNotAligned {
                            node: describe(node),
                            port: num as u8,
                            lid: port.lid,
                            lmc: port.lmc,
                        });
                    }
                    max_lid = max_lid.max(last);
                }
            }
        }
        let mut lid_owner: Vec<Option<PortRef>> = vec![None; max_lid as usize + 1];
        for (id, node) in nodes.iter().enumerate() {
            for (num, port) in node.ports.iter().enumerate() {
                let Some(port) = port else { continue };
                let here = PortRef::new(id, num as u8);
                for lid in port.lid as u32..port.lid as u32 + port.lid_count() {
                    let slot = &mut lid_owner[lid as usize];
                    if let Some(first) = *slot {
                        return Err(FabricError::DuplicateLid {
                            lid: lid as u16,
                            first: describe(&nodes[first.node]),
                            second: describe(node),
                        });
                    }
                    *slot = Some(here);
                }
            }
        }
        Ok(Fabric {
            nodes,
            lmc,
            switches,
            switch_index,
            lid_owner,
            vl_budget: VlBudget::default(),
            max_unicast_lid: MAX_UNICAST_LID,
        })
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub fn port(&self, at: PortRef) -> Option<&Port> {
        self.nodes.get(at.node).and_then(|n| n.port(at.port))
    }

    /// What the subnet offers routing for deadlock avoidance.
    pub fn vl_budget(&self) -> &VlBudget {
        &self.vl_budget
    }

    /// The highest LID the switches' forwarding tables hold.
    pub fn max_unicast_lid(&self) -> u16 {
        self.max_unicast_lid
    }

    /// Subnet LMC as configured (individual ports carry their own).
    pub fn lmc(&self) -> u8 {
        self.lmc
    }

    /// Switch node ids; a switch's position here is its *switch index*,
    /// which `Routing` uses for its per-switch tables.
    pub fn switches(&self) -> &[NodeId] {
        &self.switches
    }

    pub fn switch_index(&self, node: NodeId) -> Option<usize> {
        self.switch_index.get(node).copied().flatten().map(|i| i as usize)
    }

    pub fn cas(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes.iter().enumerate().filter(|(_, n)| !n.is_switch()).map(|(id, _)| id)
    }

    /// Highest LID in use (0 for an empty fabric).
    pub fn max_lid(&self) -> u16 {
        (self.lid_owner.len() - 1) as u16
    }

    /// The end port answering `lid`.
    pub fn lid_owner(&self, lid: u16) -> Option<PortRef> {
        self.lid_owner.get(lid as usize).copied().flatten()
    }

    /// All LIDs in use with their owners, in LID order.
    pub fn lids(&self) -> impl Iterator<Item = (u16, PortRef)> + '_ {
        self.lid_owner.iter().enumerate().filter_map(|(lid, o)| o.map(|o| (lid as u16, o)))
    }

    /// The out-port that delivers `owner`'s LIDs at the switch `lid_switch`
    /// names: 0 for a switch's own port, the port a CA port is cabled to
    /// otherwise (`NO_PATH` for an uncabled CA port).
    pub fn delivery_port(&self, owner: PortRef) -> u8 {
        if self.nodes[owner.node].is_switch() {
            0
        } else {
            self.port(owner).and_then(|p| p.remote).map_or(crate::routing::NO_PATH, |r| r.port)
        }
    }

    /// The switch a LID is delivered by: the switch itself for a switch LID,
    /// the switch the CA port is cabled to for a CA LID.
    pub fn lid_switch(&self, lid: u16) -> Option<NodeId> {
        let owner = self.lid_owner(lid)?;
        if self.nodes[owner.node].is_switch() {
            Some(owner.node)
        } else {
            let remote = self.port(owner)?.remote?;
            self.nodes[remote.node].is_switch().then_some(remote.node)
        }
    }

    /// Ports that carry LIDs: switch port 0 and CA ports with a LID.
    pub fn end_ports(&self) -> impl Iterator<Item = (PortRef, &Port)> + '_ {
        self.nodes.iter().enumerate().flat_map(|(id, node)| {
            node.ports.iter().enumerate().filter_map(move |(num, p)| {
                let p = p.as_ref()?;
                let is_end = if node.is_switch() { num == 0 } else { num > 0 };
                (is_end && p.lid != 0).then_some((PortRef::new(id, num as u8), p))
            })
        })
    }

    /// The switch-to-switch graph: one vertex per switch (weight: switch
    /// index), one edge per cable (weight: the two port numbers, in the
    /// order of the edge's endpoints). Parallel cables are parallel edges.
    pub fn switch_graph(&self) -> UnGraph<usize, (u8, u8)> {
        let mut g = UnGraph::with_capacity(self.switches.len(), 0);
        for i in 0..self.switches.len() {
            g.add_node(i);
        }
        for (si, &node) in self.switches.iter().enumerate() {
            for (port, remote) in self.nodes[node].links() {
                let Some(ri) = self.switch_index(remote.node) else { continue };
                // Each cable once: from the lower (switch, port) end.
                if (si, port) < (ri, remote.port) {
                    g.add_edge((si as u32).into(), (ri as u32).into(), (port, remote.port));
                }
            }
        }
        g
    }

    /// For every switch index and port number, what the port is cabled to.
    pub fn switch_port_peers(&self) -> Vec<Vec<Option<Peer>>> {
        self.switches
            .iter()
            .map(|&n| {
                let node = &self.nodes[n];
                (0..node.port_slots())
                    .map(|p| {
                        let r = node.port(p as u8)?.remote?;
                        Some(match self.switch_index(r.node) {
                            Some(si) => Peer::Switch(si),
                            None => Peer::Ca(r.node),
                        })
                    })
                    .collect()
            })
            .collect()
    }

    /// Switch-to-switch adjacency as dense lists: for each switch index, its
    /// (local port, neighbour switch index, neighbour port), in port order.
    /// Numbers every switch port fabric-wide, e.g. for per-channel
    /// counters: port p of switch index s is `offsets[s] + p`. Returns the
    /// offsets and the total.
    pub fn switch_port_offsets(&self) -> (Vec<usize>, usize) {
        let mut offsets = Vec::with_capacity(self.switches.len());
        let mut total = 0;
        for &n in &self.switches {
            offsets.push(total);
            total += self.nodes[n].port_slots();
        }
        (offsets, total)
    }

    pub fn switch_adjacency(&self) -> Vec<Vec<(u8, usize, u8)>> {
        self.switches
            .iter()
            .map(|&node| {
                self.nodes[node]
                    .links()
                    .filter(|(port, _)| *port != 0)
                    .filter_map(|(port, r)| self.switch_index(r.node).map(|ri| (port, ri, r.port)))
                    .collect()
            })
            .collect()
    }

    /// Per switch index, per neighbouring switch index: the ports cabled
    /// to it (several for parallel cables), in port order.
    pub fn ports_to_neighbours(&self) -> Vec<HashMap<usize, Vec<u8>>> {
        self.switch_adjacency()
            .iter()
            .map(|links| {
                let mut to: HashMap<usize, Vec<u8>> = HashMap::new();
                for &(port, t, _) in links {
                    to.entry(t).or_default().push(port);
                }
                to
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_switches() -> FabricBuilder {
        let mut b = FabricBuilder::new();
        let s0 = b.add_node(NodeKind::Switch, 0x10, "s0", 4);
        let s1 = b.add_node(NodeKind::Switch, 0x20, "s1", 4);
        let h0 = b.add_node(NodeKind::Ca, 0x100, "h0", 1);
        b.connect(PortRef::new(s0, 1), PortRef::new(s1, 1)).unwrap();
        b.connect(PortRef::new(h0, 1), PortRef::new(s0, 2)).unwrap();
        b
    }

    #[test]
    fn sequential_lids_are_aligned_and_unique() {
        let mut b = two_switches();
        b.assign_lids_sequential(2).unwrap();
        let f = b.build().unwrap();
        assert_eq!(f.node(0).port(0).unwrap().lid, 1);
        assert_eq!(f.node(1).port(0).unwrap().lid, 2);
        assert_eq!(f.node(2).port(1).unwrap().lid, 4);
        assert_eq!(f.max_lid(), 7);
        assert_eq!(f.lid_switch(5), Some(0));
        assert_eq!(f.lid_switch(2), Some(1));
        assert_eq!(f.lid_owner(3), None);
    }

    #[test]
    fn double_cabling_is_rejected() {
        let mut b = two_switches();
        let err = b.connect(PortRef::new(0, 1), PortRef::new(1, 2)).unwrap_err();
        assert!(matches!(err, FabricError::PortAlreadyLinked { port: 1, .. }));
    }

    #[test]
    fn duplicate_lids_are_rejected() {
        let mut b = two_switches();
        b.set_lid(PortRef::new(0, 0), 5, 0).unwrap();
        b.set_lid(PortRef::new(1, 0), 5, 0).unwrap();
        let err = b.build().unwrap_err();
        assert!(err.to_string().contains("LID 5 is used by both"), "{err}");
    }

    #[test]
    fn switch_graph_has_one_edge_per_cable() {
        let mut b = two_switches();
        b.connect(PortRef::new(0, 3), PortRef::new(1, 3)).unwrap();
        let f = b.build().unwrap();
        let g = f.switch_graph();
        assert_eq!(g.node_count(), 2);
        assert_eq!(g.edge_count(), 2);
        assert_eq!(f.switch_adjacency()[0], vec![(1, 1, 1), (3, 1, 3)]);
    }
}

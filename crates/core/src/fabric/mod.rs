//! The fabric model every engine, parser and analysis works on: switches,
//! channel adapters, their ports, the cables between ports, and the LIDs
//! OpenSM (or an offline assignment) gave to end ports.
//!
//! A `Fabric` is immutable once built. `FabricBuilder` collects nodes, links
//! and LIDs from whatever source and `build()` checks that they are
//! consistent, numbers the switches in GUID order and builds the one
//! `SwitchGraph` every engine and analysis reads.

mod builder;
mod error;
mod graph;
mod ids;

use std::collections::HashMap;

pub use builder::{FabricBuilder, VlBudget};
pub use error::FabricError;
pub use graph::{Bfs, Cable, Peer, SwitchGraph, UNREACHABLE};
pub use ids::{Lid, NodeId, PortNum, SwitchId};

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
    pub port: PortNum,
}

impl PortRef {
    pub fn new(node: NodeId, port: impl Into<PortNum>) -> Self {
        PortRef {
            node,
            port: port.into(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Port {
    pub guid: u64,
    /// Base LID; `Lid::NONE` when the port has none (external switch ports).
    pub lid: Lid,
    /// The port answers 2^lmc consecutive LIDs starting at `lid`.
    pub lmc: u8,
    /// The port at the other end of the cable, if any.
    pub remote: Option<PortRef>,
}

impl Port {
    pub fn lid_count(&self) -> u32 {
        if self.lid.is_none() {
            0
        } else {
            1u32 << self.lmc
        }
    }

    /// Every LID the port answers, base first.
    pub fn lids(&self) -> impl Iterator<Item = Lid> + '_ {
        (0..self.lid_count() as u16).map(|k| self.lid.offset(k))
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

    pub fn port(&self, num: impl Into<PortNum>) -> Option<&Port> {
        self.ports.get(num.into().idx()).and_then(|p| p.as_ref())
    }

    /// Number of port slots including port 0.
    pub fn port_slots(&self) -> usize {
        self.ports.len()
    }

    /// Connected ports (port number, remote end), in port order.
    pub fn links(&self) -> impl Iterator<Item = (PortNum, PortRef)> + '_ {
        self.ports.iter().enumerate().filter_map(|(num, p)| {
            p.as_ref()
                .and_then(|p| p.remote.map(|r| (PortNum::new(num as u8), r)))
        })
    }
}

/// A validated, immutable fabric.
#[derive(Clone, Debug)]
pub struct Fabric {
    nodes: Vec<Node>,
    lmc: u8,
    /// Switch node ids in GUID order: position = `SwitchId`.
    switches: Vec<NodeId>,
    switch_of: Vec<Option<SwitchId>>,
    lid_owner: Vec<Option<PortRef>>,
    vl_budget: VlBudget,
    max_unicast_lid: u16,
    graph: SwitchGraph,
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
    fn from_nodes(
        nodes: Vec<Node>,
        lmc: u8,
        vl_budget: VlBudget,
        max_unicast_lid: u16,
    ) -> Result<Fabric, FabricError> {
        validate_nodes(&nodes)?;
        let mut switches: Vec<NodeId> = (0..nodes.len())
            .filter(|&i| nodes[i].is_switch())
            .map(NodeId::new)
            .collect();
        switches.sort_by_key(|&n| nodes[n].guid);
        let mut switch_of = vec![None; nodes.len()];
        for (i, &n) in switches.iter().enumerate() {
            switch_of[n.idx()] = Some(SwitchId::new(i));
        }
        let lid_owner = lid_owners(&nodes)?;
        let graph = SwitchGraph::new(&nodes, &switches, &switch_of);
        Ok(Fabric {
            nodes,
            lmc,
            switches,
            switch_of,
            lid_owner,
            vl_budget,
            max_unicast_lid,
            graph,
        })
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// All node ids, in node order.
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + Clone {
        NodeId::range(self.nodes.len())
    }

    pub fn port(&self, at: PortRef) -> Option<&Port> {
        self.nodes.get(at.node.idx()).and_then(|n| n.port(at.port))
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

    /// Switch node ids in GUID order; a switch's position here is its
    /// `SwitchId`, which `Routing` uses for its per-switch tables.
    pub fn switches(&self) -> &[NodeId] {
        &self.switches
    }

    pub fn switch_count(&self) -> usize {
        self.switches.len()
    }

    /// Every switch id, in order.
    pub fn switch_ids(
        &self,
    ) -> impl DoubleEndedIterator<Item = SwitchId> + ExactSizeIterator + Clone {
        SwitchId::range(self.switches.len())
    }

    /// The node of a switch.
    pub fn switch_node(&self, s: SwitchId) -> &Node {
        &self.nodes[self.switches[s]]
    }

    /// The switch id of a node (None for CAs).
    pub fn switch_id(&self, node: NodeId) -> Option<SwitchId> {
        self.switch_of.get(node.idx()).copied().flatten()
    }

    /// The switch with node GUID `guid` (switches are in GUID order).
    pub fn switch_with_guid(&self, guid: u64) -> Option<SwitchId> {
        self.switches
            .binary_search_by_key(&guid, |&n| self.nodes[n].guid)
            .ok()
            .map(SwitchId::new)
    }

    /// "switch 0x... (name)" for messages.
    pub fn describe_switch(&self, s: SwitchId) -> String {
        describe(self.switch_node(s))
    }

    /// The one switch graph: ports, cables, neighbours, hosts, channels,
    /// distances.
    pub fn graph(&self) -> &SwitchGraph {
        &self.graph
    }

    pub fn cas(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.node_ids().filter(|&id| !self.nodes[id].is_switch())
    }

    /// Highest LID in use (`Lid::NONE` for a fabric without LIDs).
    pub fn max_lid(&self) -> Lid {
        Lid::new(self.lid_owner.len() - 1)
    }

    /// Entries a forwarding table needs: LIDs 0..=max_lid.
    pub fn lft_len(&self) -> usize {
        self.lid_owner.len()
    }

    /// The end port answering `lid`.
    pub fn lid_owner(&self, lid: Lid) -> Option<PortRef> {
        self.lid_owner.get(lid.idx()).copied().flatten()
    }

    /// All LIDs in use with their owners, in LID order.
    pub fn lids(&self) -> impl Iterator<Item = (Lid, PortRef)> + '_ {
        self.lid_owner
            .iter()
            .enumerate()
            .filter_map(|(lid, o)| o.map(|o| (Lid::new(lid), o)))
    }

    /// LIDs of channel adapters, in LID order.
    pub fn ca_lids(&self) -> impl Iterator<Item = (Lid, PortRef)> + '_ {
        self.lids().filter(|(_, o)| !self.nodes[o.node].is_switch())
    }

    /// The out-port that delivers `owner`'s LIDs at its switch: 0 for a
    /// switch's own port, the port a CA port is cabled to otherwise
    /// (`NO_PATH` for an uncabled CA port).
    pub fn delivery_port(&self, owner: PortRef) -> PortNum {
        if self.nodes[owner.node].is_switch() {
            PortNum::MANAGEMENT
        } else {
            self.port(owner)
                .and_then(|p| p.remote)
                .map_or(PortNum::NO_PATH, |r| r.port)
        }
    }

    /// The switch a LID is delivered by: the switch itself for a switch LID,
    /// the switch the CA port is cabled to for a CA LID.
    pub fn lid_switch(&self, lid: Lid) -> Option<SwitchId> {
        let owner = self.lid_owner(lid)?;
        if self.nodes[owner.node].is_switch() {
            self.switch_id(owner.node)
        } else {
            self.switch_id(self.port(owner)?.remote?.node)
        }
    }

    /// Ports that carry LIDs: switch port 0 and CA ports with a LID.
    pub fn end_ports(&self) -> impl Iterator<Item = (PortRef, &Port)> + '_ {
        self.nodes.iter().enumerate().flat_map(|(id, node)| {
            node.ports.iter().enumerate().filter_map(move |(num, p)| {
                let p = p.as_ref()?;
                let is_end = if node.is_switch() { num == 0 } else { num > 0 };
                (is_end && !p.lid.is_none())
                    .then_some((PortRef::new(NodeId::new(id), num as u8), p))
            })
        })
    }
}

/// Unique GUIDs, symmetric cables, LIDs in range and aligned, no port 255.
fn validate_nodes(nodes: &[Node]) -> Result<(), FabricError> {
    let mut seen_guid: HashMap<u64, usize> = HashMap::with_capacity(nodes.len());
    let mut seen_port_guid: HashMap<u64, usize> = HashMap::with_capacity(nodes.len());
    for (id, n) in nodes.iter().enumerate() {
        if seen_guid.insert(n.guid, id).is_some() {
            return Err(FabricError::DuplicateGuid { guid: n.guid });
        }
        if n.ports.len() > PortNum::NO_PATH.idx() {
            return Err(FabricError::ReservedPort { node: describe(n) });
        }
        // End ports' GUIDs (a switch's port 0, a CA's ports) name the
        // ports that get LIDs: two nodes claiming one would share a LID.
        let end_ports = n
            .ports
            .iter()
            .enumerate()
            .filter(|(num, _)| (*num == 0) == n.is_switch());
        for (_, port) in end_ports {
            let Some(port) = port else { continue };
            if let Some(other) = seen_port_guid.insert(port.guid, id).filter(|&o| o != id) {
                return Err(FabricError::DuplicatePortGuid {
                    guid: port.guid,
                    first: describe(&nodes[other]),
                    second: describe(n),
                });
            }
        }
    }
    for (id, node) in nodes.iter().enumerate() {
        for (num, port) in node.ports.iter().enumerate() {
            let Some(port) = port else { continue };
            if let Some(r) = port.remote {
                let back = nodes
                    .get(r.node.idx())
                    .and_then(|n| n.port(r.port))
                    .and_then(|p| p.remote);
                if back != Some(PortRef::new(NodeId::new(id), num as u8)) {
                    return Err(FabricError::AsymmetricLink {
                        node: describe(node),
                        port: num as u8,
                    });
                }
            }
            if port.lid.is_none() {
                continue;
            }
            let (lid, lmc) = (port.lid.raw(), port.lmc);
            if lid as u32 + port.lid_count() - 1 > MAX_UNICAST_LID as u32 || lmc > 7 {
                return Err(FabricError::LidOutOfRange {
                    node: describe(node),
                    port: num as u8,
                    lid,
                    lmc,
                });
            }
            // `%` rather than is_multiple_of: Debian bookworm's rustc is 1.85.
            #[allow(clippy::manual_is_multiple_of)]
            if lid as u32 % (1u32 << lmc) != 0 {
                return Err(FabricError::LidNotAligned {
                    node: describe(node),
                    port: num as u8,
                    lid,
                    lmc,
                });
            }
        }
    }
    Ok(())
}

/// The end port of every LID in use (index = LID).
fn lid_owners(nodes: &[Node]) -> Result<Vec<Option<PortRef>>, FabricError> {
    let max_lid = nodes
        .iter()
        .flat_map(|n| n.ports.iter().flatten())
        .filter(|p| !p.lid.is_none())
        .map(|p| p.lid.raw() as usize + p.lid_count() as usize - 1)
        .max()
        .unwrap_or(0);
    let mut lid_owner: Vec<Option<PortRef>> = vec![None; max_lid + 1];
    for (id, node) in nodes.iter().enumerate() {
        for (num, port) in node.ports.iter().enumerate() {
            let Some(port) = port else { continue };
            let here = PortRef::new(NodeId::new(id), num as u8);
            for lid in port.lids() {
                let slot = &mut lid_owner[lid];
                if let Some(first) = *slot {
                    return Err(FabricError::DuplicateLid {
                        lid: lid.raw(),
                        first: describe(&nodes[first.node]),
                        second: describe(node),
                    });
                }
                *slot = Some(here);
            }
        }
    }
    Ok(lid_owner)
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

    fn lid(l: u16) -> Lid {
        Lid::from_raw(l)
    }

    #[test]
    fn sequential_lids_are_aligned_and_unique() {
        let mut b = two_switches();
        b.assign_lids_sequential(2).unwrap();
        let f = b.build().unwrap();
        assert_eq!(f.node(NodeId::new(0)).port(0).unwrap().lid, lid(1));
        assert_eq!(f.node(NodeId::new(1)).port(0).unwrap().lid, lid(2));
        assert_eq!(f.node(NodeId::new(2)).port(1).unwrap().lid, lid(4));
        assert_eq!(f.max_lid(), lid(7));
        assert_eq!(f.lid_switch(lid(5)), Some(SwitchId::new(0)));
        assert_eq!(f.lid_switch(lid(2)), Some(SwitchId::new(1)));
        assert_eq!(f.lid_owner(lid(3)), None);
    }

    #[test]
    fn switches_are_numbered_in_guid_order() {
        let mut b = FabricBuilder::new();
        let high = b.add_node(NodeKind::Switch, 0x30, "high", 2);
        let low = b.add_node(NodeKind::Switch, 0x10, "low", 2);
        b.connect(PortRef::new(high, 1), PortRef::new(low, 1))
            .unwrap();
        let f = b.build().unwrap();
        assert_eq!(f.switches(), &[low, high]);
        assert_eq!(f.switch_id(high), Some(SwitchId::new(1)));
        assert_eq!(
            f.describe_switch(SwitchId::new(0)),
            "switch 0x0000000000000010 (low)"
        );
    }

    #[test]
    fn double_cabling_is_rejected() {
        let mut b = two_switches();
        let err = b
            .connect(
                PortRef::new(NodeId::new(0), 1),
                PortRef::new(NodeId::new(1), 2),
            )
            .unwrap_err();
        assert!(matches!(
            err,
            FabricError::PortAlreadyLinked { port: 1, .. }
        ));
    }

    #[test]
    fn duplicate_lids_are_rejected() {
        let mut b = two_switches();
        b.set_lid(PortRef::new(NodeId::new(0), 0), lid(5), 0)
            .unwrap();
        b.set_lid(PortRef::new(NodeId::new(1), 0), lid(5), 0)
            .unwrap();
        let err = b.build().unwrap_err();
        assert!(err.to_string().contains("LID 5 is used by both"), "{err}");
    }

    #[test]
    fn port_255_is_rejected() {
        let mut b = FabricBuilder::new();
        let s = b.add_node(NodeKind::Switch, 0x10, "big", 255);
        let h = b.add_node(NodeKind::Ca, 0x100, "h", 1);
        b.connect(PortRef::new(h, 1), PortRef::new(s, 255)).unwrap();
        let err = b.build().unwrap_err().to_string();
        assert!(err.contains("port 255") && err.contains("(big)"), "{err}");
    }

    #[test]
    fn duplicate_port_guids_are_rejected() {
        let mut b = two_switches();
        let h1 = b.add_node(NodeKind::Ca, 0x200, "h1", 1);
        b.port_mut(PortRef::new(h1, 1)).unwrap().guid = 0x101; // h0's port 1
        let err = b.build().unwrap_err().to_string();
        assert!(
            err.contains("port GUID 0x0000000000000101") && err.contains("(h1)"),
            "{err}"
        );
    }
}

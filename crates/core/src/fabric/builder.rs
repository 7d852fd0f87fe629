//! Collecting nodes, cables and LIDs from any source (OpenSM's subnet, a
//! net file, a dump) before `build` checks them and freezes a `Fabric`.

use super::{
    describe, Fabric, FabricError, Lid, Node, NodeId, NodeKind, Port, PortNum, PortRef,
    MAX_UNICAST_LID,
};

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
        VlBudget {
            data_vls: 8,
            sl2vl_programmed: true,
            limited_by: "the offline default is 8 VLs".into(),
        }
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

/// Collects nodes, cables and LIDs; `build` validates them into a `Fabric`.
#[derive(Clone, Debug, Default)]
pub struct FabricBuilder {
    nodes: Vec<Node>,
    lmc: u8,
    vl_budget: VlBudget,
    max_unicast_lid: Option<u16>,
}

impl FabricBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node with ports 1..=`num_ports` (plus port 0 for switches).
    pub fn add_node(
        &mut self,
        kind: NodeKind,
        guid: u64,
        desc: impl Into<String>,
        num_ports: u8,
    ) -> NodeId {
        let mut ports = vec![None; num_ports as usize + 1];
        let first = if kind == NodeKind::Switch { 0 } else { 1 };
        for (num, slot) in ports.iter_mut().enumerate().skip(first) {
            // Port GUIDs: switches share the node GUID on every port, CAs
            // number their ports from the node GUID, as ibsim and most HCAs do.
            let guid = if kind == NodeKind::Switch {
                guid
            } else {
                guid + num as u64
            };
            *slot = Some(Port {
                guid,
                ..Port::default()
            });
        }
        self.nodes.push(Node {
            kind,
            guid,
            desc: desc.into(),
            ports,
        });
        NodeId::new(self.nodes.len() - 1)
    }

    /// Renames a node (its node description).
    pub fn set_desc(&mut self, id: NodeId, desc: impl Into<String>) {
        self.nodes[id].desc = desc.into();
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
        // The name only for the error: formatting it for every port made
        // reading a 16k-host subnet take a tenth of a second.
        if self
            .nodes
            .get(at.node.idx())
            .and_then(|n| n.ports.get(at.port.idx()))
            .is_none_or(Option::is_none)
        {
            return Err(FabricError::NoSuchPort {
                node: self.name(at.node),
                port: at.port.raw(),
            });
        }
        Ok(self.nodes[at.node.idx()].ports[at.port.idx()]
            .as_mut()
            .expect("checked above"))
    }

    fn name(&self, id: NodeId) -> String {
        self.nodes
            .get(id.idx())
            .map(describe)
            .unwrap_or_else(|| id.to_string())
    }

    /// Cables `a` to `b`. Both ports must exist and be free.
    pub fn connect(&mut self, a: PortRef, b: PortRef) -> Result<(), FabricError> {
        if a.node == b.node && !self.nodes.get(a.node.idx()).is_some_and(Node::is_switch) {
            return Err(FabricError::CaSelfLink {
                node: self.name(a.node),
            });
        }
        for (this, other) in [(a, b), (b, a)] {
            let port = self.port_mut(this)?;
            match port.remote {
                Some(r) if r == other => {}
                Some(_) => {
                    return Err(FabricError::PortAlreadyLinked {
                        node: self.name(this.node),
                        port: this.port.raw(),
                    })
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

    pub fn set_lid(&mut self, at: PortRef, lid: Lid, lmc: u8) -> Result<(), FabricError> {
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
            let id = NodeId::new(id);
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
        let order = self.end_ports();
        self.assign_lids_in_order(lmc, order)
    }

    /// As `assign_lids_sequential`, but every switch first, then the CA
    /// ports: with LMC > 0 each CA block starts at a multiple of 2^lmc, and
    /// a switch's single LID between two blocks leaves a gap of 2^lmc - 1
    /// LIDs. With the switches packed below the first block the blocks
    /// follow each other without gaps, so the largest fabrics still fit the
    /// unicast LID space: a 36-port three-level tree (1,620 switches,
    /// 11,664 hosts) at LMC 2 tops out at LID 48,279 packed, while OpenSM's
    /// LID manager, numbering ports as it discovers them, runs out of the
    /// 49,151 unicast LIDs before the last hosts.
    pub fn assign_lids_switches_first(&mut self, lmc: u8) -> Result<(), FabricError> {
        let (mut order, cas): (Vec<PortRef>, Vec<PortRef>) = self
            .end_ports()
            .into_iter()
            .partition(|at| self.nodes[at.node].is_switch());
        order.extend(cas);
        self.assign_lids_in_order(lmc, order)
    }

    /// Switches one LID each, CA ports 2^lmc aligned LIDs, in `order`.
    fn assign_lids_in_order(&mut self, lmc: u8, order: Vec<PortRef>) -> Result<(), FabricError> {
        self.lmc = lmc;
        let mut next: u32 = 1;
        for at in order {
            let is_switch = self.nodes[at.node].is_switch();
            let port_lmc = if is_switch { 0 } else { lmc };
            let step = 1u32 << port_lmc;
            let base = next.div_ceil(step) * step;
            if base + step - 1 > MAX_UNICAST_LID as u32 {
                return Err(FabricError::LidSpaceExhausted {
                    needed: base + step - 1,
                });
            }
            self.set_lid(at, Lid::from_raw(base as u16), port_lmc)?;
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
        Fabric::from_nodes(
            self.nodes,
            self.lmc,
            self.vl_budget,
            self.max_unicast_lid.unwrap_or(MAX_UNICAST_LID),
        )
    }
}

impl From<u8> for PortNum {
    fn from(port: u8) -> Self {
        PortNum::new(port)
    }
}

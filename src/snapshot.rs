//! OpenSM's subnet -> the core `Fabric`, taken at the start of each routing
//! pass (under OpenSM's exclusive lock, so nothing moves underneath), and
//! OpenSM's switches in the fabric's switch order for writing the tables.

use std::collections::HashMap;

use osmroute_core::fabric::{describe, FabricBuilder, Lid, NodeId, NodeKind, PortRef, VlBudget};
use osmroute_core::{Fabric, FabricError};

use crate::osm::{NodeKey, Options, Pass, SwitchHandle};

pub struct Snapshot<'pass> {
    pub fabric: Fabric,
    /// OpenSM's switch for each switch id of `fabric`.
    pub switches: Vec<SwitchHandle<'pass>>,
}

/// What OpenSM's options and the ports' VL capabilities leave for routing.
fn vl_budget(
    builder: &FabricBuilder,
    options: &Options,
    vl_cap: Option<(u8, NodeId, u8)>,
) -> VlBudget {
    let by_option = VlBudget::data_vls_of_code(options.max_op_vls);
    let mut budget = VlBudget {
        data_vls: by_option,
        sl2vl_programmed: options.qos,
        limited_by: format!(
            "`max_op_vls {}` allows {by_option}; raise max_op_vls",
            options.max_op_vls
        ),
    };
    if let Some((code, node, port)) = vl_cap {
        let by_port = VlBudget::data_vls_of_code(code);
        if by_port < by_option {
            budget.data_vls = by_port;
            budget.limited_by = format!(
                "port {port} of {} can carry only {by_port} (its VL capability)",
                describe(builder.node(node))
            );
        }
    }
    budget
}

/// Reads every node, valid port, cable and LID of the subnet.
pub fn take<'pass>(
    pass: &'pass Pass<'_>,
    options: &Options,
) -> Result<Snapshot<'pass>, FabricError> {
    let mut builder = FabricBuilder::new();
    let mut ids: HashMap<NodeKey, NodeId> = HashMap::new();
    let mut nodes = Vec::new();
    let mut handles: Vec<Option<SwitchHandle>> = Vec::new();
    for node in pass.nodes() {
        let kind = if node.is_switch() {
            NodeKind::Switch
        } else {
            NodeKind::Ca
        };
        let ports = node.port_slots().saturating_sub(1);
        let id = builder.add_node(kind, node.guid(), node.description(), ports);
        handles.push(if kind == NodeKind::Switch {
            node.switch()
        } else {
            None
        });
        ids.insert(node.key(), id);
        nodes.push(node);
    }
    // The smallest VL capability on an inter-switch link, and where.
    let mut vl_cap: Option<(u8, NodeId, u8)> = None;
    for (id, &node) in NodeId::range(nodes.len()).zip(&nodes) {
        let is_switch = node.is_switch();
        for num in 0..node.port_slots() {
            let Some(port) = node.port(num) else { continue };
            if num == 0 && !is_switch {
                continue;
            }
            let here = PortRef::new(id, num);
            builder.port_mut(here)?.guid = port.guid();
            if num == 0 || !is_switch {
                let lid = port.base_lid();
                if lid != 0 {
                    builder.set_lid(here, Lid::from_raw(lid), port.lmc())?;
                }
            }
            if num == 0 || port.is_down() {
                continue;
            }
            let Some((remote, remote_port)) = port.remote() else {
                continue;
            };
            let Some(&peer) = ids.get(&remote) else {
                continue;
            };
            if is_switch && builder.node(peer).is_switch() {
                let cap = port.vl_cap();
                if vl_cap.is_none_or(|(c, _, _)| cap < c) {
                    vl_cap = Some((cap, id, num));
                }
            }
            builder.connect(here, PortRef::new(peer, remote_port))?;
        }
    }
    builder.set_lmc(options.lmc);
    builder.set_max_unicast_lid(options.max_ucast_lid);
    builder.set_vl_budget(vl_budget(&builder, options, vl_cap));
    let fabric = builder.build()?;
    // Handles in switch-id (GUID) order, as the fabric numbers switches.
    let switches = fabric
        .switches()
        .iter()
        .filter_map(|&n| handles[n.idx()].take())
        .collect();
    Ok(Snapshot { fabric, switches })
}

/// OpenSM's switch for each switch id of `fabric`, found by node GUID: the
/// second callback of a pass writes the tables the first one computed for
/// the same subnet (OpenSM holds its lock across both).
pub fn switches<'pass>(
    pass: &'pass Pass<'_>,
    fabric: &Fabric,
) -> Result<Vec<SwitchHandle<'pass>>, String> {
    let mut by_guid: HashMap<u64, SwitchHandle<'pass>> = pass
        .nodes()
        .filter_map(|node| Some((node.guid(), node.switch()?)))
        .collect();
    fabric
        .switches()
        .iter()
        .map(|&n| {
            let guid = fabric.node(n).guid;
            by_guid.remove(&guid).ok_or_else(|| {
                format!(
                    "switch {} left the subnet between computing and writing the tables",
                    describe(fabric.node(n))
                )
            })
        })
        .collect()
}

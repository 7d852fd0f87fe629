//! OpenSM's subnet -> the core `Fabric`, taken at the start of each routing
//! pass (under OpenSM's exclusive lock, so nothing moves underneath).

use std::collections::HashMap;
use std::ffi::CStr;

use osmroute_core::fabric::{FabricBuilder, Lid, NodeId, NodeKind, PortRef, VlBudget};
use osmroute_core::{Error, Fabric};

use crate::ffi;

/// A switch of OpenSM's, by pointer. Only dereferenced inside the routing
/// callbacks, while OpenSM holds its lock and the switch is alive.
#[derive(Clone, Copy)]
pub struct SwitchHandle(pub *mut ffi::osm_switch_t);

// SAFETY: see the type's comment. Handles travel between the two routing
// callbacks of one pass, and `apply` hands each switch to exactly one
// worker thread while OpenSM's sweeper waits for all of them.
unsafe impl Send for SwitchHandle {}

pub struct Snapshot {
    pub fabric: Fabric,
    /// OpenSM's switch for each switch index of `fabric`.
    pub switches: Vec<SwitchHandle>,
}

/// What OpenSM's options and the ports' VL capabilities leave for routing.
fn vl_budget(builder: &FabricBuilder, opt: &ffi::osm_subn_opt_t, vl_cap: Option<(u8, NodeId, u8)>) -> VlBudget {
    let by_option = VlBudget::data_vls_of_code(opt.max_op_vls);
    let mut budget = VlBudget {
        data_vls: by_option,
        sl2vl_programmed: opt.qos != 0,
        limited_by: format!("`max_op_vls {}` allows {by_option}; raise max_op_vls", opt.max_op_vls),
    };
    if let Some((code, node, port)) = vl_cap {
        let by_port = VlBudget::data_vls_of_code(code);
        if by_port < by_option {
            budget.data_vls = by_port;
            budget.limited_by = format!(
                "port {port} of {} can carry only {by_port} (its VL capability)",
                osmroute_core::fabric::describe(builder.node(node))
            );
        }
    }
    budget
}

/// Reads every node, valid port, cable and LID from `subn`.
///
/// # Safety
/// `subn` must be OpenSM's live subnet, with OpenSM's lock held.
pub unsafe fn take(subn: *mut ffi::osm_subn_t, opt: &ffi::osm_subn_opt_t) -> Result<Snapshot, Error> {
    let mut builder = FabricBuilder::new();
    let mut ids: HashMap<*mut ffi::osm_node_t, NodeId> = HashMap::new();
    let mut nodes = Vec::new();
    let mut switch_of_node = Vec::new();

    // The smallest VL capability on an inter-switch link, and where.
    let mut vl_cap: Option<(u8, NodeId, u8)> = None;
    let mut node = ffi::osmroute_node_first(subn);
    while !node.is_null() {
        let kind = if ffi::osmroute_node_type(node) as u32 == ffi::IB_NODE_TYPE_SWITCH {
            NodeKind::Switch
        } else {
            NodeKind::Ca
        };
        let mut desc = [0 as std::os::raw::c_char; 65];
        ffi::osmroute_node_desc(node, desc.as_mut_ptr());
        let desc = CStr::from_ptr(desc.as_ptr()).to_string_lossy().trim().to_string();
        let ports = ffi::osmroute_node_port_slots(node).saturating_sub(1);
        let id = builder.add_node(kind, ffi::osmroute_node_guid(node), desc, ports);
        switch_of_node.push((kind == NodeKind::Switch).then(|| SwitchHandle(ffi::osmroute_node_switch(node))));
        ids.insert(node, id);
        nodes.push(node);
        node = ffi::osmroute_node_next(subn, node);
    }

    for (id, &node) in NodeId::range(nodes.len()).zip(&nodes) {
        let is_switch = builder.node(id).is_switch();
        for num in 0..ffi::osmroute_node_port_slots(node) {
            let physp = ffi::osmroute_node_port(node, num);
            if physp.is_null() || (num == 0 && !is_switch) {
                continue;
            }
            let here = PortRef::new(id, num);
            builder.port_mut(here)?.guid = ffi::osmroute_port_guid(physp);
            if num == 0 || !is_switch {
                let lid = ffi::osmroute_port_base_lid(physp);
                if lid != 0 {
                    builder.set_lid(here, Lid::from_raw(lid), ffi::osmroute_port_lmc(physp))?;
                }
            }
            if num == 0 || ffi::osmroute_port_state(physp) as u32 == ffi::IB_LINK_DOWN {
                continue;
            }
            let remote = ffi::osmroute_port_remote(physp);
            if remote.is_null() {
                continue;
            }
            let Some(&peer) = ids.get(&ffi::osmroute_port_node(remote)) else { continue };
            if is_switch && builder.node(peer).is_switch() {
                let cap = ffi::osmroute_port_vl_cap(physp);
                if vl_cap.is_none_or(|(c, _, _)| cap < c) {
                    vl_cap = Some((cap, id, num));
                }
            }
            builder.connect(here, PortRef::new(peer, ffi::osmroute_port_num(remote)))?;
        }
    }
    builder.set_lmc(opt.lmc);
    builder.set_max_unicast_lid((*subn).max_ucast_lid_ho);
    builder.set_vl_budget(vl_budget(&builder, opt, vl_cap));
    let fabric = builder.build()?;
    // Handles in switch-id (GUID) order, as the fabric numbers switches.
    let switches = fabric.switches().iter().filter_map(|&n| switch_of_node[n.idx()]).collect();
    Ok(Snapshot { fabric, switches })
}

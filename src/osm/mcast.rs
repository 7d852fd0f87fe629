//! `mcast_build_stree`, the callback OpenSM calls per MLID
//! (`osm_mcast_mgr.c`, after clearing the MLID's MFT entries on every
//! switch): the members from the group box, the engine's MFT entries
//! (`RoutingEngine::multicast_entries`), written into OpenSM's MFTs. OpenSM
//! logs an error and leaves a group without entries when the callback
//! fails, so the engine gives OpenSM's kind of tree rather than failing
//! where it has no tree rule; failing is kept for what cannot happen in a
//! consistent subnet.

use std::os::raw::c_void;

use super::glue::{slot, RoutingEngine};
use super::guard::guarded;
use super::sys;

const IB_SUCCESS: sys::ib_api_status_t = sys::_ib_api_status_t_IB_SUCCESS;
const IB_ERROR: sys::ib_api_status_t = sys::_ib_api_status_t_IB_ERROR;

/// Members read per group at most (the broadcast group of the biggest
/// subnet OpenSM supports fits).
const MAX_MEMBERS: usize = 49_152;

/// Set (to anything) in OpenSM's environment, it leaves every group's tree
/// to OpenSM's default builder: for comparing with what OpenSM does alone.
pub const OPENSM_TREES_ENV: &str = "OSMROUTE_OPENSM_MULTICAST";

/// Whether OpenSM builds the multicast trees itself (`OPENSM_TREES_ENV`
/// set), reading the switches' hop tables.
pub fn opensm_builds_multicast_trees() -> bool {
    std::env::var_os(OPENSM_TREES_ENV).is_some()
}

type BuildStree =
    unsafe extern "C" fn(*mut c_void, *mut sys::osm_mgrp_box_t) -> sys::ib_api_status_t;

/// The callback for engine type `E`, or none (OpenSM's own trees) with
/// `OPENSM_TREES_ENV` set.
pub(super) fn build_stree_for<E: RoutingEngine>() -> Option<BuildStree> {
    if opensm_builds_multicast_trees() {
        log::info!("{OPENSM_TREES_ENV} is set: OpenSM builds its default multicast trees");
        return None;
    }
    Some(build_stree::<E>)
}

/// The member port GUIDs of a group box (host order), or `None`.
///
/// # Safety
/// `mbox` must be a live group box, under OpenSM's lock.
unsafe fn members(mbox: *mut sys::osm_mgrp_box_t) -> Option<Vec<u64>> {
    let mut guids = vec![0u64; 64];
    // SAFETY: see the function's contract; the shim writes at most `len`.
    let mut n = unsafe { sys::osmroute_mbox_members(mbox, guids.as_mut_ptr(), guids.len() as u32) };
    if n as usize > guids.len() && (n as usize) <= MAX_MEMBERS {
        guids.resize(n as usize, 0);
        // SAFETY: as above, with the larger buffer.
        n = unsafe { sys::osmroute_mbox_members(mbox, guids.as_mut_ptr(), guids.len() as u32) };
    }
    if n < 0 || n as usize > guids.len() {
        return None;
    }
    guids.truncate(n as usize);
    Some(guids)
}

unsafe extern "C" fn build_stree<E: RoutingEngine>(
    ctx: *mut c_void,
    mbox: *mut sys::osm_mgrp_box_t,
) -> sys::ib_api_status_t {
    if ctx.is_null() || mbox.is_null() {
        return IB_ERROR;
    }
    // SAFETY: OpenSM passes the context `setup_engine` installed and a live
    // group box, under its lock, for the duration of the call.
    let slot = unsafe { slot::<E>(ctx) };
    let osm = slot.osm();
    let name = slot.engine.name();
    // SAFETY: as above.
    let (mlid, sl, guids) = unsafe {
        let Some(guids) = members(mbox) else {
            log::error!("{name}: multicast: cannot list the members of a group");
            return IB_ERROR;
        };
        // OpenSM's default builder frees a tree it left in the box first.
        sys::osmroute_mbox_purge_tree(osm.raw(), mbox);
        (
            sys::osmroute_mbox_mlid(mbox),
            sys::osmroute_mbox_sl(mbox),
            guids,
        )
    };
    let group_exists = |m: u16| {
        // SAFETY: called only within this callback, which OpenSM runs
        // under its lock (`osm_mcast_mgr_process`); the SA deletes groups
        // from the array the shim reads under the same lock.
        unsafe { sys::osmroute_mlid_has_group(osm.raw(), m) != 0 }
    };
    guarded(name, IB_ERROR, || -> Result<_, String> {
        let (entries, line) = slot
            .engine
            .multicast_entries(mlid, sl, &guids, &group_exists)
            .map_err(|e| format!("{name}: multicast MLID {mlid:#06X}: {e}"))?;
        for (guid, port) in entries {
            // SAFETY: on the SM's thread under OpenSM's lock (see above).
            if unsafe { sys::osmroute_mcast_set(osm.raw(), guid, mlid, port) } != 0 {
                return Err(format!(
                    "{name}: multicast MLID {mlid:#06X}: switch {guid:#018x} port {port} is not in the subnet"
                ));
            }
        }
        log::debug!("{name}: {line}");
        Ok(IB_SUCCESS)
    })
}

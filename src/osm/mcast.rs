//! The FFI side of our multicast trees: `build_stree`, the
//! `mcast_build_stree` callback OpenSM calls per MLID (`osm_mcast_mgr.c`,
//! after clearing the MLID's MFT entries on every switch), and `arm`,
//! which installs it after each routing pass of ours. Without a tree rule
//! for the fabric the groups get OpenSM's kind of tree from the core
//! (`opensm_like`). OpenSM logs an error and leaves a group without MFT
//! entries when the callback fails, so failing is kept for what cannot
//! happen in a consistent subnet.

use std::os::raw::c_void;

use super::{sys, Osm};
use crate::engine::EngineContext;
use crate::guard::guarded;

const IB_SUCCESS: sys::ib_api_status_t = sys::_ib_api_status_t_IB_SUCCESS;
const IB_ERROR: sys::ib_api_status_t = sys::_ib_api_status_t_IB_ERROR;

/// Members read per group at most (the broadcast group of the biggest
/// subnet OpenSM supports fits).
const MAX_MEMBERS: usize = 49_152;

/// Set (to anything) in OpenSM's environment, it leaves every group's tree
/// to OpenSM's default builder: for comparing with what OpenSM does alone.
pub const OPENSM_TREES_ENV: &str = "OSMROUTE_OPENSM_MULTICAST";

/// After a routing pass by one of our engines (`routing_engine_used`):
/// install our `build_stree` (which works the tree rule out when the first
/// group with members needs it), or with `OPENSM_TREES_ENV` remove it.
pub fn arm(osm: Osm) {
    // SAFETY: called from the UCAST_ROUTING_DONE event on the SM's thread;
    // `routing_engine_used` is the engine struct of one of ours (checked by
    // the caller by name), whose context `glue::setup_engine` installed.
    unsafe {
        let re = (*osm.raw()).routing_engine_used;
        if re.is_null() || (*re).context.is_null() {
            return;
        }
        let ctx = &*((*re).context as *const EngineContext);
        if std::env::var_os(OPENSM_TREES_ENV).is_some() {
            log::info!(
                "{}: multicast: {OPENSM_TREES_ENV} is set; OpenSM builds its default trees",
                ctx.name()
            );
            sys::osmroute_set_mcast_build_stree(re, None);
            return;
        }
        sys::osmroute_set_mcast_build_stree(re, Some(build_stree));
    }
}

unsafe extern "C" fn build_stree(
    ctx: *mut c_void,
    mbox: *mut sys::osm_mgrp_box_t,
) -> sys::ib_api_status_t {
    if ctx.is_null() || mbox.is_null() {
        return IB_ERROR;
    }
    // SAFETY: OpenSM passes the context `setup_engine` installed and a live
    // group box, under its lock, for the duration of the call.
    let ctx = unsafe { &*(ctx as *const EngineContext) };
    let (mlid, sl, guids) = unsafe {
        let mut guids = vec![0u64; 64];
        let mut n = sys::osmroute_mbox_members(mbox, guids.as_mut_ptr(), guids.len() as u32);
        if n as usize > guids.len() && (n as usize) <= MAX_MEMBERS {
            guids.resize(n as usize, 0);
            n = sys::osmroute_mbox_members(mbox, guids.as_mut_ptr(), guids.len() as u32);
        }
        if n < 0 || n as usize > guids.len() {
            log::error!(
                "{}: multicast: cannot list the members of a group",
                ctx.name()
            );
            return IB_ERROR;
        }
        guids.truncate(n as usize);
        (
            sys::osmroute_mbox_mlid(mbox),
            sys::osmroute_mbox_sl(mbox),
            guids,
        )
    };
    let osm = ctx.osm();
    // SAFETY: as above; OpenSM's default builder does the same first.
    unsafe { sys::osmroute_mbox_purge_tree(osm.raw(), mbox) };
    guarded(ctx.name(), IB_ERROR, || -> Result<_, String> {
        let (entries, line) = ctx
            .multicast_entries(mlid, sl, &guids)
            .map_err(|e| format!("{}: multicast MLID {mlid:#06X}: {e}", ctx.name()))?;
        for (guid, port) in entries {
            // SAFETY: on the SM's thread under OpenSM's lock (see above).
            if unsafe { sys::osmroute_mcast_set(osm.raw(), guid, mlid, port) } != 0 {
                return Err(format!(
                    "{}: multicast MLID {mlid:#06X}: switch {guid:#018x} port {port} is not in the subnet",
                    ctx.name()
                ));
            }
        }
        log::debug!("{}: {line}", ctx.name());
        Ok(IB_SUCCESS)
    })
}

//! The functions OpenSM calls: the exported event plugin, routing-engine
//! setup and the routing callbacks. Each turns OpenSM's pointers into the
//! safe handles of `osm` and runs the plugin's safe code under `guarded`,
//! so no panic and no error unwinds into OpenSM.

use std::os::raw::{c_int, c_void};

use osmroute_core::fabric::Lid;

use super::{sys, Osm, PortOwner};
use crate::engine::{EngineContext, Registration};
use crate::guard::{guarded, install_panic_hook};
use crate::plugin::{Event, Plugin};

/// `osm_event_plugin_t` holds a raw string pointer, which Rust statics
/// cannot share without this promise: it points to a constant.
#[repr(transparent)]
pub struct ExportedPlugin(sys::osm_event_plugin_t);

// SAFETY: the struct is read-only and points only at static data and functions.
unsafe impl Sync for ExportedPlugin {}

/// The symbol OpenSM looks up after dlopen("libosmroute.so"). Its version
/// string must equal the running OpenSM's exactly; it is the OSM_VERSION of
/// the headers this library was built against.
#[no_mangle]
pub static osm_event_plugin: ExportedPlugin = ExportedPlugin(sys::osm_event_plugin_t {
    osm_version: sys::OSM_VERSION.as_ptr() as *const std::os::raw::c_char,
    create: Some(create),
    delete: Some(delete),
    report: Some(report),
});

/// Return values of the routing callbacks (OpenSM's contract): done by
/// us, or failed so that OpenSM tries the next engine.
const DONE: c_int = 0;
const FAILED: c_int = -1;

unsafe extern "C" fn create(osm: *mut sys::osm_opensm_t) -> *mut c_void {
    // SAFETY: OpenSM passes its own instance, alive until `delete`.
    let Some(osm) = (unsafe { Osm::from_raw(osm) }) else {
        return std::ptr::null_mut();
    };
    install_panic_hook();
    crate::logger::attach(osm.log());
    guarded("osmroute create", std::ptr::null_mut(), || {
        Plugin::create(osm).map(|plugin| Box::into_raw(Box::new(plugin)) as *mut c_void)
    })
}

unsafe extern "C" fn delete(data: *mut c_void) {
    if !data.is_null() {
        // SAFETY: `data` is the Box `create` handed OpenSM, given back once.
        drop(unsafe { Box::from_raw(data as *mut Plugin) });
    }
    crate::logger::detach();
}

unsafe extern "C" fn report(
    data: *mut c_void,
    event: sys::osm_epi_event_id_t,
    _payload: *mut c_void,
) {
    if data.is_null() {
        return;
    }
    // SAFETY: `data` is the plugin `create` made, alive until `delete`.
    let plugin = unsafe { &*(data as *const Plugin) };
    let event = match event {
        sys::osm_epi_event_id_t_OSM_EVENT_ID_UCAST_ROUTING_DONE => Event::UnicastRoutingDone,
        _ => return,
    };
    guarded("osmroute event", (), || plugin.report(event));
}

/// OpenSM's `setup` for one of our engines: its context pointer is the
/// engine's registration; the engine struct gets a fresh context.
pub(super) unsafe extern "C" fn setup_engine(
    re: *mut sys::osm_routing_engine,
    osm: *mut sys::osm_opensm_t,
) -> c_int {
    guarded(
        "osmroute engine setup",
        FAILED,
        || -> Result<c_int, String> {
            // SAFETY: OpenSM calls setup with the engine struct it allocated
            // (its context is what `Osm::register_engine` gave, a 'static
            // Registration) and its own instance.
            unsafe {
                let re = re.as_mut().ok_or("no routing engine struct")?;
                let registration = &*(re.context as *const Registration);
                let osm = Osm::from_raw(osm).ok_or("no OpenSM instance")?;
                let context = Box::new(EngineContext::new(registration, osm));
                re.context = Box::into_raw(context) as *mut c_void;
                re.build_lid_matrices = Some(build_lid_matrices);
                re.ucast_build_fwd_tables = Some(build_fwd_tables);
                re.update_sl2vl = Some(update_sl2vl);
                re.path_sl = Some(path_sl);
                re.destroy = Some(destroy);
                // Only a patched OpenSM has the field (see `sa_path_lids_available`).
                sys::osmroute_set_path_lids(re, Some(path_lids));
            }
            Ok(DONE)
        },
    )
}

/// The engine context behind a routing callback's `ctx`.
///
/// # Safety
/// `ctx` must be the context `setup_engine` installed, not yet destroyed.
unsafe fn context<'a>(ctx: *mut c_void) -> &'a EngineContext {
    // SAFETY: see the function's contract.
    unsafe { &*(ctx as *const EngineContext) }
}

unsafe extern "C" fn build_lid_matrices(ctx: *mut c_void) -> c_int {
    // SAFETY: OpenSM passes the context `setup_engine` installed.
    let ctx = unsafe { context(ctx) };
    guarded(ctx.name(), FAILED, || ctx.compute().map(|()| DONE))
}

unsafe extern "C" fn build_fwd_tables(ctx: *mut c_void) -> c_int {
    // SAFETY: as in `build_lid_matrices`.
    let ctx = unsafe { context(ctx) };
    guarded(ctx.name(), FAILED, || ctx.write().map(|()| DONE))
}

unsafe extern "C" fn update_sl2vl(
    ctx: *mut c_void,
    port: *mut sys::osm_physp_t,
    in_port: u8,
    out_port: u8,
    table: *mut sys::ib_slvl_table_t,
) {
    if port.is_null() || table.is_null() {
        return;
    }
    // SAFETY: as in `build_lid_matrices`; OpenSM passes a live port of the
    // subnet and the table it is about to send, which only this call
    // touches meanwhile.
    let (ctx, owner, raw) = unsafe {
        let node = sys::osmroute_port_node(port);
        let owner = if sys::osmroute_node_type(node) as u32 == sys::IB_NODE_TYPE_SWITCH {
            PortOwner::Switch {
                guid: sys::osmroute_node_guid(node),
            }
        } else {
            PortOwner::ChannelAdapter
        };
        (context(ctx), owner, &mut (*table).raw_vl_by_sl)
    };
    guarded(ctx.name(), (), || -> Result<(), String> {
        ctx.sl2vl(owner, in_port, out_port, raw);
        Ok(())
    });
}

unsafe extern "C" fn path_sl(ctx: *mut c_void, hint: u8, slid: u16, dlid: u16) -> u8 {
    // SAFETY: as in `build_lid_matrices`.
    let ctx = unsafe { context(ctx) };
    // LIDs arrive in network byte order.
    let (slid, dlid) = (
        Lid::from_raw(u16::from_be(slid)),
        Lid::from_raw(u16::from_be(dlid)),
    );
    guarded(ctx.name(), hint, || -> Result<u8, String> {
        Ok(ctx.path_sl(hint, slid, dlid))
    })
}

/// opensm-patch's SA callback: the LIDs to answer first for paths from
/// the port with base LID `src_base` to the one with `dest_base` (network
/// order). 1 with `*dlid` set when the engine chose; 0 for no preference
/// (OpenSM's own order). The SLID is left to OpenSM (the source's base).
unsafe extern "C" fn path_lids(
    ctx: *mut c_void,
    src_base: u16,
    dest_base: u16,
    _slid: *mut u16,
    dlid: *mut u16,
) -> c_int {
    if dlid.is_null() {
        return 0;
    }
    // SAFETY: as in `build_lid_matrices`.
    let ctx = unsafe { context(ctx) };
    let (src_base, dest_base) = (
        Lid::from_raw(u16::from_be(src_base)),
        Lid::from_raw(u16::from_be(dest_base)),
    );
    match guarded(ctx.name(), None, || -> Result<Option<Lid>, String> {
        Ok(ctx.path_dlid(src_base, dest_base))
    }) {
        Some(chosen) => {
            // SAFETY: OpenSM passes a pointer to its own local, checked above.
            unsafe { *dlid = chosen.raw().to_be() };
            1
        }
        None => 0,
    }
}

unsafe extern "C" fn destroy(ctx: *mut c_void) {
    if ctx.is_null() {
        return;
    }
    guarded("osmroute engine destroy", (), || -> Result<(), String> {
        // SAFETY: OpenSM destroys each engine once, with the context
        // `setup_engine` boxed.
        drop(unsafe { Box::from_raw(ctx as *mut EngineContext) });
        Ok(())
    });
}

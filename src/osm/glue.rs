//! The functions OpenSM calls: the exported event plugin, routing-engine
//! setup and the routing callbacks. They are generic over three traits the
//! plugin implements, so this layer knows nothing of the plugin: each turns
//! OpenSM's pointers into the safe handles of `osm` (a `Pass` inside the
//! routing callbacks) and runs the plugin's code under `guarded`, so no
//! panic and no error unwinds into OpenSM.

use std::os::raw::{c_int, c_void};
use std::ptr::NonNull;

use super::guard::{guarded, install_panic_hook};
use super::{sys, Osm, Pass};

/// The plugin OpenSM loads: made in `create`, told of events, dropped in
/// `delete`.
pub trait EventPlugin: Sized {
    fn create(osm: &Osm) -> Result<Self, String>;
    /// OpenSM finished a unicast routing pass (whichever engine routed).
    fn unicast_routing_done(&self, osm: &Osm) -> Result<(), String>;
}

/// What the plugin registers per engine name (`Osm::register_engine`);
/// OpenSM sets the engine up from it once its configuration is read.
pub trait EngineFactory: Sync + 'static {
    type Engine: RoutingEngine;
    fn setup(&'static self, osm: &Osm) -> Result<Self::Engine, String>;
}

/// One routing engine's callbacks. `Sync`: OpenSM's SA threads call
/// `path_sl` and `path_dlid` concurrently with each other and with a pass.
pub trait RoutingEngine: Sync {
    /// The engine's name, for log lines about it.
    fn name(&self) -> &'static str;
    /// `build_lid_matrices`: compute the routing; writes nothing into
    /// OpenSM, so that an error leaves OpenSM free to fall back.
    fn compute(&self, pass: &Pass<'_>) -> Result<(), String>;
    /// `ucast_build_fwd_tables`: write what `compute` computed.
    fn write(&self, pass: &Pass<'_>) -> Result<(), String>;
    /// The SL-to-VL table OpenSM is about to program for a port pair.
    fn sl2vl(&self, owner: PortOwner, in_port: u8, out_port: u8, raw: &mut [u8; 8]);
    /// The SL of the path from `slid` to `dlid` (host order); `hint` is
    /// OpenSM's own answer.
    fn path_sl(&self, hint: u8, slid: u16, dlid: u16) -> u8;
    /// The DLID to answer first for paths between two ports' base LIDs
    /// (host order), if the engine chose one (opensm-patch's SA asks).
    fn path_dlid(&self, src_base: u16, dest_base: u16) -> Option<u16>;
    /// `mcast_build_stree`: the MFT entries (switch node GUID, port) of
    /// group `mlid` on `sl` for the member ports `guids` (host order), and
    /// a line for the log. `group_exists` tells whether OpenSM still has a
    /// group on an MLID (valid for this call only).
    fn multicast_entries(
        &self,
        mlid: u16,
        sl: u8,
        guids: &[u64],
        group_exists: &dyn Fn(u16) -> bool,
    ) -> Result<(Vec<(u64, u8)>, String), String>;
}

/// Whose SL-to-VL table OpenSM asks for in `update_sl2vl`.
#[derive(Clone, Copy, Debug)]
pub enum PortOwner {
    Switch { guid: u64 },
    ChannelAdapter,
}

/// `osm_event_plugin_t` holds a raw string pointer, which Rust statics
/// cannot share without this promise: it points to a constant.
#[repr(transparent)]
pub struct ExportedPlugin(sys::osm_event_plugin_t);

// SAFETY: the struct is read-only and points only at static data and functions.
unsafe impl Sync for ExportedPlugin {}

/// The value of the `osm_event_plugin` symbol OpenSM looks up after
/// dlopen("libosmroute.so"), for plugin `P`. Its version string must equal
/// the running OpenSM's exactly; it is the OSM_VERSION of the headers this
/// library was built against.
pub const fn event_plugin<P: EventPlugin>() -> ExportedPlugin {
    ExportedPlugin(sys::osm_event_plugin_t {
        osm_version: sys::OSM_VERSION.as_ptr() as *const std::os::raw::c_char,
        create: Some(create::<P>),
        delete: Some(delete::<P>),
        report: Some(report::<P>),
    })
}

/// Return values of the routing callbacks (OpenSM's contract): done by
/// us, or failed so that OpenSM tries the next engine.
const DONE: c_int = 0;
const FAILED: c_int = -1;

/// What `create` hands OpenSM as plugin data: the plugin and the instance
/// it belongs to (`report` gets only this pointer).
struct PluginSlot<P> {
    osm: NonNull<sys::osm_opensm_t>,
    plugin: P,
}

/// What an engine's callbacks get as their context: the engine and the
/// instance (the callbacks get only this pointer).
pub(super) struct EngineSlot<E> {
    pub(super) osm: NonNull<sys::osm_opensm_t>,
    pub(super) engine: E,
}

impl<E> EngineSlot<E> {
    /// The instance as a handle for one callback.
    pub(super) fn osm(&self) -> Osm {
        Osm(self.osm)
    }
}

unsafe extern "C" fn create<P: EventPlugin>(osm: *mut sys::osm_opensm_t) -> *mut c_void {
    // SAFETY: OpenSM passes its own instance, alive until `delete`.
    let Some(handle) = (unsafe { Osm::from_raw(osm) }) else {
        return std::ptr::null_mut();
    };
    install_panic_hook();
    guarded("osmroute create", std::ptr::null_mut(), || {
        P::create(&handle).map(|plugin| {
            let slot = PluginSlot {
                osm: handle.0,
                plugin,
            };
            Box::into_raw(Box::new(slot)) as *mut c_void
        })
    })
}

unsafe extern "C" fn delete<P: EventPlugin>(data: *mut c_void) {
    if !data.is_null() {
        // SAFETY: `data` is the Box `create` handed OpenSM, given back once.
        drop(unsafe { Box::from_raw(data as *mut PluginSlot<P>) });
    }
}

unsafe extern "C" fn report<P: EventPlugin>(
    data: *mut c_void,
    event: sys::osm_epi_event_id_t,
    _payload: *mut c_void,
) {
    if data.is_null() || event != sys::osm_epi_event_id_t_OSM_EVENT_ID_UCAST_ROUTING_DONE {
        return;
    }
    // SAFETY: `data` is the slot `create` made, alive until `delete`.
    let slot = unsafe { &*(data as *const PluginSlot<P>) };
    let osm = Osm(slot.osm);
    guarded("osmroute event", (), || {
        slot.plugin.unicast_routing_done(&osm)
    });
}

/// OpenSM's `setup` for one of our engines: its context pointer is the
/// engine's factory (`Osm::register_engine`); the engine struct gets the
/// engine the factory makes as its context.
pub(super) unsafe extern "C" fn setup_engine<F: EngineFactory>(
    re: *mut sys::osm_routing_engine,
    osm: *mut sys::osm_opensm_t,
) -> c_int {
    guarded(
        "osmroute engine setup",
        FAILED,
        || -> Result<c_int, String> {
            // SAFETY: OpenSM calls setup with the engine struct it allocated
            // (its context is what `Osm::register_engine` gave, a 'static F)
            // and its own instance.
            let (re, factory, osm) = unsafe {
                (
                    re.as_mut().ok_or("no routing engine struct")?,
                    &*(re.as_ref().ok_or("no routing engine struct")?.context as *const F),
                    Osm::from_raw(osm).ok_or("no OpenSM instance")?,
                )
            };
            let slot = EngineSlot {
                osm: osm.0,
                engine: factory.setup(&osm)?,
            };
            re.context = Box::into_raw(Box::new(slot)) as *mut c_void;
            re.build_lid_matrices = Some(build_lid_matrices::<F::Engine>);
            re.ucast_build_fwd_tables = Some(build_fwd_tables::<F::Engine>);
            re.update_sl2vl = Some(update_sl2vl::<F::Engine>);
            re.path_sl = Some(path_sl::<F::Engine>);
            re.destroy = Some(destroy::<F::Engine>);
            re.mcast_build_stree = super::mcast::build_stree_for::<F::Engine>();
            // SAFETY: `re` is OpenSM's live engine struct; the shim sets the
            // field only a patched OpenSM has (see `sa_path_lids_available`).
            unsafe { sys::osmroute_set_path_lids(re, Some(path_lids::<F::Engine>)) };
            Ok(DONE)
        },
    )
}

/// The engine slot behind a callback's `ctx`.
///
/// # Safety
/// `ctx` must be the context `setup_engine::<_, Engine = E>` installed,
/// not yet destroyed.
pub(super) unsafe fn slot<'a, E>(ctx: *mut c_void) -> &'a EngineSlot<E> {
    // SAFETY: see the function's contract.
    unsafe { &*(ctx as *const EngineSlot<E>) }
}

unsafe extern "C" fn build_lid_matrices<E: RoutingEngine>(ctx: *mut c_void) -> c_int {
    // SAFETY: OpenSM passes the context `setup_engine` installed.
    let slot = unsafe { slot::<E>(ctx) };
    // SAFETY: a routing callback; the token lives in this frame only.
    let pass = unsafe { Pass::new(slot.osm()) };
    guarded(slot.engine.name(), FAILED, || {
        slot.engine.compute(&pass).map(|()| DONE)
    })
}

unsafe extern "C" fn build_fwd_tables<E: RoutingEngine>(ctx: *mut c_void) -> c_int {
    // SAFETY: as in `build_lid_matrices`.
    let slot = unsafe { slot::<E>(ctx) };
    // SAFETY: as in `build_lid_matrices`.
    let pass = unsafe { Pass::new(slot.osm()) };
    guarded(slot.engine.name(), FAILED, || {
        slot.engine.write(&pass).map(|()| DONE)
    })
}

unsafe extern "C" fn update_sl2vl<E: RoutingEngine>(
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
    let (slot, owner, raw) = unsafe {
        let node = sys::osmroute_port_node(port);
        let owner = if sys::osmroute_node_type(node) as u32 == sys::IB_NODE_TYPE_SWITCH {
            PortOwner::Switch {
                guid: sys::osmroute_node_guid(node),
            }
        } else {
            PortOwner::ChannelAdapter
        };
        (slot::<E>(ctx), owner, &mut (*table).raw_vl_by_sl)
    };
    guarded(slot.engine.name(), (), || -> Result<(), String> {
        slot.engine.sl2vl(owner, in_port, out_port, raw);
        Ok(())
    });
}

unsafe extern "C" fn path_sl<E: RoutingEngine>(
    ctx: *mut c_void,
    hint: u8,
    slid: u16,
    dlid: u16,
) -> u8 {
    // SAFETY: as in `build_lid_matrices`.
    let slot = unsafe { slot::<E>(ctx) };
    // LIDs arrive in network byte order.
    let (slid, dlid) = (u16::from_be(slid), u16::from_be(dlid));
    guarded(slot.engine.name(), hint, || -> Result<u8, String> {
        Ok(slot.engine.path_sl(hint, slid, dlid))
    })
}

/// opensm-patch's SA callback: the LIDs to answer first for paths from
/// the port with base LID `src_base` to the one with `dest_base` (network
/// order). 1 with `*dlid` set when the engine chose; 0 for no preference
/// (OpenSM's own order). The SLID is left to OpenSM (the source's base).
unsafe extern "C" fn path_lids<E: RoutingEngine>(
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
    let slot = unsafe { slot::<E>(ctx) };
    let (src_base, dest_base) = (u16::from_be(src_base), u16::from_be(dest_base));
    match guarded(
        slot.engine.name(),
        None,
        || -> Result<Option<u16>, String> { Ok(slot.engine.path_dlid(src_base, dest_base)) },
    ) {
        Some(chosen) => {
            // SAFETY: OpenSM passes a pointer to its own local, checked above.
            unsafe { *dlid = chosen.to_be() };
            1
        }
        None => 0,
    }
}

unsafe extern "C" fn destroy<E: RoutingEngine>(ctx: *mut c_void) {
    if ctx.is_null() {
        return;
    }
    guarded("osmroute engine destroy", (), || -> Result<(), String> {
        // SAFETY: OpenSM destroys each engine once, with the context
        // `setup_engine` boxed.
        drop(unsafe { Box::from_raw(ctx as *mut EngineSlot<E>) });
        Ok(())
    });
}

//! The safe layer over OpenSM, in the manner of a -sys/safe pair: `sys` is
//! the raw side (bindgen's bindings of the installed headers and the C
//! shim's functions for OpenSM's inline functions and macros), everything
//! else here is the safe side, each function with one documented `unsafe`
//! block. Nothing outside `osm` touches `sys` or a raw pointer, and `osm`
//! imports nothing of the plugin: it is a leaf. The plugin plugs in through
//! the traits of `glue` (`EventPlugin`, `EngineFactory`, `RoutingEngine`).
//!
//! - `glue`: the `extern "C"` functions OpenSM calls (the exported plugin,
//!   routing-engine setup and callbacks), generic over those traits; they
//!   turn OpenSM's pointers into the handles here and run the plugin's code
//!   under `guard::guarded`, so nothing unwinds into OpenSM.
//! - `pass`: the `Pass` token and what only a routing pass may touch: the
//!   subnet's nodes and ports, switches' tables, OpenSM's LMC. A `Pass`
//!   exists only inside OpenSM's routing callbacks (glue makes it), and
//!   every handle it gives out borrows it, so none outlives the callback.
//! - `log`: OpenSM's log.
//!
//! The handles are valid as long as OpenSM keeps what they point to, which
//! the callbacks' contract says: the OpenSM instance from the plugin's
//! `create` to its `delete`, its log as long, the subnet's nodes, ports and
//! switches within one routing callback (OpenSM holds its lock from
//! `build_lid_matrices` to `ucast_build_fwd_tables`).

pub mod glue;
mod guard;
pub mod heap;
mod log;
pub mod mcast;
mod pass;
mod sys;

use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::ptr::NonNull;

pub use glue::{
    event_plugin, EngineFactory, EventPlugin, ExportedPlugin, PortOwner, RoutingEngine,
};
pub use log::{Log, LogLevel};
pub use pass::{NodeKey, NodeView, Nodes, Pass, PortView, SwitchHandle};

/// Whether the running OpenSM is built with opensm-patch, whose SA asks the
/// routing engine which DLID to answer first (`path_lids`).
pub fn sa_path_lids_available() -> bool {
    // SAFETY: a symbol lookup in the running process; nothing is called.
    unsafe { sys::osmroute_sa_path_lids_available() != 0 }
}

/// Hands the heap memory that is free again after a pass back to the
/// operating system (glibc's `malloc_trim`, every arena). The plugin's
/// passes run on threads of their own, whose allocations glibc spreads
/// over several arenas; what a pass frees there stays with the process
/// until trimmed. Measured with `.ci/soak 40` on the 72-host Dragonfly:
/// VmRSS +6.9 % over 40 cycles without, +2.2 % with.
pub fn trim_heap() {
    // SAFETY: malloc_trim only walks glibc's own arenas; no pointer of
    // ours is involved.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// OpenSM's default when `dump_files_dir` is unset.
const OPENSM_DEFAULT_DUMP_DIR: &str = "/var/log";

/// The OpenSM instance that loaded the plugin, as `create`, `report` and
/// engine setup see it. Neither `Copy` nor `Send`: it is handed to the
/// plugin's code on OpenSM's thread for the length of one call; what may
/// only happen inside a routing pass needs a `Pass`.
pub struct Osm(NonNull<sys::osm_opensm_t>);

/// The OpenSM options a routing pass depends on.
#[derive(Clone, Debug)]
pub struct Options {
    pub dump_dir: PathBuf,
    /// Whether OpenSM writes its routing dumps (log flags include ROUTING).
    pub routing_dumps: bool,
    pub qos: bool,
    /// `max_op_vls` as PortInfo encodes it (1 = VL0, ..., 4 = VL0-7).
    pub max_op_vls: u8,
    pub lmc: u8,
    /// The highest LID the switches' forwarding tables hold.
    pub max_ucast_lid: u16,
}

impl Osm {
    /// # Safety
    /// `osm` must be the OpenSM instance that calls the plugin, alive until
    /// the plugin's `delete`.
    unsafe fn from_raw(osm: *mut sys::osm_opensm_t) -> Option<Osm> {
        NonNull::new(osm).map(Osm)
    }

    fn raw(&self) -> *mut sys::osm_opensm_t {
        self.0.as_ptr()
    }

    pub fn options(&self) -> Options {
        // SAFETY: the instance is alive (type invariant); these fields are
        // plain values OpenSM sets at start-up and on a configuration
        // rescan, which runs on the thread that calls the plugin.
        unsafe {
            let opt = &(*self.raw()).subn.opt;
            let dir = opt.dump_files_dir;
            let dump_dir = if dir.is_null() {
                PathBuf::from(OPENSM_DEFAULT_DUMP_DIR)
            } else {
                PathBuf::from(CStr::from_ptr(dir).to_string_lossy().into_owned())
            };
            Options {
                dump_dir,
                routing_dumps: self.log().enabled(LogLevel::Routing),
                qos: opt.qos != 0,
                max_op_vls: opt.max_op_vls,
                lmc: opt.lmc,
                max_ucast_lid: (*self.raw()).subn.max_ucast_lid_ho,
            }
        }
    }

    /// OpenSM's log.
    pub fn log(&self) -> Log {
        // SAFETY: the log is a field of the live instance.
        Log::new(unsafe { NonNull::from(&mut (*self.raw()).log) })
    }

    /// Registers an external routing engine named `name`; OpenSM will call
    /// `factory.setup` when it sets up its engines, and the engine it gives
    /// for every routing pass after.
    pub fn register_engine<F: EngineFactory>(
        &self,
        name: &'static CString,
        factory: &'static F,
    ) -> Result<(), i32> {
        let module = sys::external_routing_engine_module_t {
            name: name.as_ptr(),
            setup: Some(glue::setup_engine::<F>),
            context: factory as *const F as *mut std::os::raw::c_void,
        };
        // SAFETY: OpenSM copies the name pointer (to a 'static string) and
        // the setup pointer, and keeps the context pointer, which is 'static.
        let status = unsafe {
            sys::osm_register_external_routing_engine(self.raw(), &module, module.context)
        };
        if status == 0 {
            Ok(())
        } else {
            Err(status)
        }
    }

    /// The name of the routing engine that computed the last routing pass.
    pub fn routing_engine_used(&self) -> Option<String> {
        // SAFETY: OpenSM sets `routing_engine_used` to one of its engine
        // structs (alive as long as the instance) or NULL, on the thread
        // that reports routing events, where this is called.
        unsafe {
            let used = (*self.raw()).routing_engine_used;
            if used.is_null() || (*used).name.is_null() {
                return None;
            }
            Some(CStr::from_ptr((*used).name).to_string_lossy().into_owned())
        }
    }
}

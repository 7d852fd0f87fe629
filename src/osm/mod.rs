//! The safe layer over OpenSM: everything the plugin reads from or writes
//! into OpenSM goes through the types here, each function with one
//! documented `unsafe` block. Nothing outside `osm` touches a raw pointer.
//!
//! - `sys`: the bindings bindgen generates from the installed headers, and
//!   the C shim's functions for OpenSM's inline functions and macros.
//! - `glue`: the `extern "C"` functions OpenSM calls (the exported plugin,
//!   routing-engine setup and callbacks); they turn OpenSM's pointers into
//!   the handles below and run the safe code under `guard::guarded`.
//!
//! The handles are valid as long as OpenSM keeps what they point to, which
//! the callbacks' contract says: the OpenSM instance from the plugin's
//! `create` to its `delete`, its log as long, the subnet's nodes, ports and
//! switches within one routing pass (OpenSM holds its lock from
//! `build_lid_matrices` to `ucast_build_fwd_tables`).

pub mod glue;
pub mod mcast;
pub mod sys;

use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::path::PathBuf;
use std::ptr::NonNull;

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

/// The OpenSM instance that loaded the plugin.
#[derive(Clone, Copy)]
pub struct Osm(NonNull<sys::osm_opensm_t>);

// SAFETY: the instance outlives the plugin (create to delete); the plugin
// reads its options and subnet only inside OpenSM's callbacks, on OpenSM's
// threads, as OpenSM's own code does.
unsafe impl Send for Osm {}
unsafe impl Sync for Osm {}

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
    pub(crate) unsafe fn from_raw(osm: *mut sys::osm_opensm_t) -> Option<Osm> {
        NonNull::new(osm).map(Osm)
    }

    fn raw(self) -> *mut sys::osm_opensm_t {
        self.0.as_ptr()
    }

    pub fn options(self) -> Options {
        // SAFETY: the instance is alive (type invariant); these fields are
        // plain values OpenSM sets at start-up and on a configuration
        // rescan, which runs on the thread that calls the routing engines.
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
                routing_dumps: sys::osmroute_log_enabled(
                    &(*self.raw()).log,
                    sys::OSM_LOG_ROUTING as u8,
                ) != 0,
                qos: opt.qos != 0,
                max_op_vls: opt.max_op_vls,
                lmc: opt.lmc,
                max_ucast_lid: (*self.raw()).subn.max_ucast_lid_ho,
            }
        }
    }

    /// OpenSM's log.
    pub fn log(self) -> Log {
        // SAFETY: the log is a field of the live instance.
        Log(unsafe { NonNull::from(&mut (*self.raw()).log) })
    }

    /// The nodes of the subnet, to be read inside a routing callback.
    pub fn nodes(&self) -> Nodes<'_> {
        // SAFETY: inside a routing callback OpenSM holds its lock, so the
        // node table does not change while it is walked.
        let first = unsafe { sys::osmroute_node_first(&mut (*self.raw()).subn) };
        Nodes {
            osm: *self,
            next: NonNull::new(first),
            _pass: PhantomData,
        }
    }

    /// Sets OpenSM's LMC and has the next heavy sweep (right after this
    /// one) reassign every LID with it. Call only from a routing callback.
    pub fn request_lmc(self, lmc: u8) {
        // SAFETY: in a routing callback, on the SM's own thread, which owns
        // the LID manager state the shim changes.
        unsafe { sys::osmroute_request_lmc(self.raw(), lmc) }
    }

    /// Registers an external routing engine named `name`; OpenSM will call
    /// `glue::setup_engine` with `context` when it sets up its engines.
    pub fn register_engine(
        self,
        name: &CStr,
        context: &'static crate::engine::Registration,
    ) -> Result<(), i32> {
        let module = sys::external_routing_engine_module_t {
            name: name.as_ptr(),
            setup: Some(glue::setup_engine),
            context: context as *const crate::engine::Registration as *mut std::os::raw::c_void,
        };
        // SAFETY: OpenSM copies the name and setup pointer and keeps the
        // context pointer, which is 'static.
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
    pub fn routing_engine_used(self) -> Option<String> {
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

/// OpenSM's logger (thread-safe: it serialises writers itself).
#[derive(Clone, Copy)]
pub struct Log(NonNull<sys::osm_log_t>);

// SAFETY: osm_log locks internally; the level mask is a plain byte.
unsafe impl Send for Log {}
unsafe impl Sync for Log {}

impl Log {
    pub fn enabled(self, level: u8) -> bool {
        // SAFETY: the log lives as long as the OpenSM instance, and the
        // logger stops using it before the plugin's `delete` returns.
        unsafe { sys::osmroute_log_enabled(self.0.as_ptr(), level) != 0 }
    }

    /// Writes `msg` as one line at `level`.
    pub fn write(self, level: u8, msg: &CString) {
        // SAFETY: as in `enabled`; the shim prints with "%s", so the text
        // cannot be taken for a format string.
        unsafe { sys::osmroute_log(self.0.as_ptr(), level, msg.as_ptr()) }
    }
}

/// Iterator over the subnet's nodes, valid within one routing pass.
pub struct Nodes<'pass> {
    osm: Osm,
    next: Option<NonNull<sys::osm_node_t>>,
    _pass: PhantomData<&'pass Osm>,
}

impl<'pass> Iterator for Nodes<'pass> {
    type Item = NodeView<'pass>;

    fn next(&mut self) -> Option<NodeView<'pass>> {
        let node = self.next?;
        // SAFETY: the node is in OpenSM's node table, locked for the pass.
        let next = unsafe { sys::osmroute_node_next(&mut (*self.osm.raw()).subn, node.as_ptr()) };
        self.next = NonNull::new(next);
        Some(NodeView {
            node,
            _pass: PhantomData,
        })
    }
}

/// Identifies a node within one pass (to match cables' far ends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeKey(usize);

/// One node of the subnet, read within a routing pass.
#[derive(Clone, Copy)]
pub struct NodeView<'pass> {
    node: NonNull<sys::osm_node_t>,
    _pass: PhantomData<&'pass Osm>,
}

impl<'pass> NodeView<'pass> {
    pub fn key(self) -> NodeKey {
        NodeKey(self.node.as_ptr() as usize)
    }

    pub fn is_switch(self) -> bool {
        // SAFETY: every function of NodeView reads a node OpenSM keeps for
        // the pass (see `Nodes`).
        unsafe { sys::osmroute_node_type(self.node.as_ptr()) as u32 == sys::IB_NODE_TYPE_SWITCH }
    }

    pub fn guid(self) -> u64 {
        // SAFETY: as in `is_switch`.
        unsafe { sys::osmroute_node_guid(self.node.as_ptr()) }
    }

    pub fn description(self) -> String {
        let mut buf = [0 as std::os::raw::c_char; 65];
        // SAFETY: as in `is_switch`; the shim writes at most 64 bytes and
        // a terminating NUL into the 65-byte buffer.
        unsafe {
            sys::osmroute_node_desc(self.node.as_ptr(), buf.as_mut_ptr());
            CStr::from_ptr(buf.as_ptr())
                .to_string_lossy()
                .trim()
                .to_string()
        }
    }

    /// Port slots including port 0.
    pub fn port_slots(self) -> u8 {
        // SAFETY: as in `is_switch`.
        unsafe { sys::osmroute_node_port_slots(self.node.as_ptr()) }
    }

    /// The valid physical port `num`.
    pub fn port(self, num: u8) -> Option<PortView<'pass>> {
        // SAFETY: as in `is_switch`; the shim checks `num` against the
        // node's port count.
        let port = unsafe { sys::osmroute_node_port(self.node.as_ptr(), num) };
        NonNull::new(port).map(|port| PortView {
            port,
            _pass: PhantomData,
        })
    }

    /// The switch object of a switch node, for writing its tables.
    pub fn switch(self) -> Option<SwitchHandle> {
        // SAFETY: as in `is_switch`.
        let sw = unsafe { sys::osmroute_node_switch(self.node.as_ptr()) };
        NonNull::new(sw).map(SwitchHandle)
    }
}

/// One physical port, read within a routing pass.
#[derive(Clone, Copy)]
pub struct PortView<'pass> {
    port: NonNull<sys::osm_physp_t>,
    _pass: PhantomData<&'pass Osm>,
}

impl<'pass> PortView<'pass> {
    pub fn guid(self) -> u64 {
        // SAFETY: every function of PortView reads a port of a node OpenSM
        // keeps for the pass.
        unsafe { sys::osmroute_port_guid(self.port.as_ptr()) }
    }

    pub fn base_lid(self) -> u16 {
        // SAFETY: as in `guid`.
        unsafe { sys::osmroute_port_base_lid(self.port.as_ptr()) }
    }

    pub fn lmc(self) -> u8 {
        // SAFETY: as in `guid`.
        unsafe { sys::osmroute_port_lmc(self.port.as_ptr()) }
    }

    pub fn is_down(self) -> bool {
        // SAFETY: as in `guid`.
        unsafe { sys::osmroute_port_state(self.port.as_ptr()) as u32 == sys::IB_LINK_DOWN }
    }

    /// The port's VL capability as PortInfo encodes it.
    pub fn vl_cap(self) -> u8 {
        // SAFETY: as in `guid`.
        unsafe { sys::osmroute_port_vl_cap(self.port.as_ptr()) }
    }

    /// The node and port number at the other end of the cable.
    pub fn remote(self) -> Option<(NodeKey, u8)> {
        // SAFETY: as in `guid`; the shim returns only valid peers.
        unsafe {
            let remote = sys::osmroute_port_remote(self.port.as_ptr());
            if remote.is_null() {
                return None;
            }
            let node = sys::osmroute_port_node(remote);
            Some((NodeKey(node as usize), sys::osmroute_port_num(remote)))
        }
    }
}

/// A switch whose forwarding and hop tables a routing pass writes. Kept
/// from `build_lid_matrices` to `ucast_build_fwd_tables` of one pass.
pub struct SwitchHandle(NonNull<sys::osm_switch_t>);

// SAFETY: handles move between the two callbacks of one pass and to the
// worker threads that fill the tables, each switch to exactly one thread,
// while OpenSM's sweeper waits for the callback to return.
unsafe impl Send for SwitchHandle {}

impl SwitchHandle {
    /// The switch's new LFT (OpenSM pre-fills it with OSM_NO_PATH), as
    /// long as the switch's tables hold.
    pub fn new_lft(&mut self) -> Option<&mut [u8]> {
        let mut len = 0u32;
        // SAFETY: the switch is alive for the pass; `&mut self` makes the
        // slice the only access to the table while it lives.
        unsafe {
            let lft = sys::osmroute_switch_new_lft(self.0.as_ptr(), &mut len);
            (!lft.is_null()).then(|| std::slice::from_raw_parts_mut(lft, len as usize))
        }
    }

    /// Records `hops` from this switch to `lid` through `port` in OpenSM's
    /// hop table (allocating the LID's row on first use).
    pub fn set_hops(&mut self, lid: u16, port: u8, hops: u8) {
        // SAFETY: the switch is alive for the pass and only this handle
        // writes its hop table meanwhile.
        unsafe {
            sys::osm_switch_set_hops(self.0.as_ptr(), lid, port, hops);
        }
    }

    /// Gives the pages of the switch's array of hop-row pointers memory of
    /// their own before anything writes to them.
    ///
    /// OpenSM allocates that array zeroed (its malloc + memset compiles to
    /// calloc, which leaves fresh pages untouched) and reads it through when
    /// clearing hops before each routing pass, so until first written every
    /// page is the kernel's shared zero page. The first write then copies
    /// it and flushes the TLB of every CPU running one of OpenSM's threads:
    /// on a 2,064-switch fabric 76,000 flushes, which cost most of a second
    /// while the routing's own threads keep the other CPUs busy. Making the
    /// pages private on one thread before those threads start takes the
    /// same faults with no other CPU to interrupt (and none at all on later
    /// passes, when the pages are private already).
    pub fn prefault_hop_row_pointers(&mut self) {
        let mut count = 0u32;
        // SAFETY: the array belongs to the live switch and holds `count`
        // pointers; reading and writing back a pointer leaves it unchanged,
        // and madvise(MADV_POPULATE_WRITE) on whole pages inside the array
        // makes them writable without touching their contents.
        unsafe {
            let page = usize::try_from(libc::sysconf(libc::_SC_PAGESIZE))
                .unwrap_or(4096)
                .max(64);
            let per_page = page / std::mem::size_of::<*mut u8>();
            let rows = sys::osmroute_switch_hop_rows(self.0.as_ptr(), &mut count);
            if rows.is_null() || count == 0 {
                return;
            }
            let touch = |i: usize| {
                let p = rows.add(i);
                p.write_volatile(p.read_volatile());
            };
            let (start, end) = (rows as usize, rows.add(count as usize) as usize);
            let (inner_start, inner_end) = (start.next_multiple_of(page), end / page * page);
            let populated = inner_end > inner_start
                && libc::madvise(
                    inner_start as *mut libc::c_void,
                    inner_end - inner_start,
                    libc::MADV_POPULATE_WRITE,
                ) == 0;
            if populated {
                touch(0);
                touch(count as usize - 1);
            } else {
                // Kernels before 5.14 lack MADV_POPULATE_WRITE: a pointer
                // per page.
                (0..count as usize)
                    .step_by(per_page)
                    .chain([count as usize - 1])
                    .for_each(touch);
            }
        }
    }
}

/// Whose SL-to-VL table OpenSM asks for in `update_sl2vl`.
#[derive(Clone, Copy, Debug)]
pub enum PortOwner {
    Switch { guid: u64 },
    ChannelAdapter,
}

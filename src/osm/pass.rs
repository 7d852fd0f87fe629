//! What only a routing pass may touch: the subnet's nodes and ports, the
//! switches' tables, OpenSM's LMC. All of it hangs off a `Pass`, a token
//! only `glue` makes, inside OpenSM's routing callbacks, while OpenSM holds
//! its lock; every handle borrows the token, so the compiler keeps them all
//! inside the callback.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::{sys, Options, Osm};

/// Proof that the code holding it runs inside one of OpenSM's routing
/// callbacks (`build_lid_matrices` or `ucast_build_fwd_tables`), where
/// OpenSM holds its lock and the subnet stands still.
pub struct Pass<'cb> {
    osm: Osm,
    _callback: PhantomData<&'cb mut ()>,
}

impl Pass<'_> {
    /// # Safety
    /// Only inside a routing callback of OpenSM, with the instance that
    /// calls it; the token must not outlive the callback (its lifetime is
    /// the callback's frame).
    pub(super) unsafe fn new(osm: Osm) -> Self {
        Pass {
            osm,
            _callback: PhantomData,
        }
    }

    /// OpenSM's options for this pass.
    pub fn options(&self) -> Options {
        self.osm.options()
    }

    /// The nodes of the subnet.
    pub fn nodes(&self) -> Nodes<'_> {
        // SAFETY: inside a routing callback OpenSM holds its lock, so the
        // node table does not change while it is walked.
        let first = unsafe { sys::osmroute_node_first(&mut (*self.osm.raw()).subn) };
        Nodes {
            pass: self,
            next: NonNull::new(first),
        }
    }

    /// Sets OpenSM's LMC and has the next heavy sweep (right after this
    /// one) reassign every LID with it.
    pub fn request_lmc(&self, lmc: u8) {
        // SAFETY: in a routing callback (the token's invariant), on the
        // SM's own thread, which owns the LID manager state the shim
        // changes.
        unsafe { sys::osmroute_request_lmc(self.osm.raw(), lmc) }
    }
}

/// Iterator over the subnet's nodes, valid within one routing pass.
pub struct Nodes<'pass> {
    pass: &'pass Pass<'pass>,
    next: Option<NonNull<sys::osm_node_t>>,
}

impl<'pass> Iterator for Nodes<'pass> {
    type Item = NodeView<'pass>;

    fn next(&mut self) -> Option<NodeView<'pass>> {
        let node = self.next?;
        // SAFETY: the node is in OpenSM's node table, locked for the pass.
        let next =
            unsafe { sys::osmroute_node_next(&mut (*self.pass.osm.raw()).subn, node.as_ptr()) };
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
    _pass: PhantomData<&'pass ()>,
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
    pub fn switch(self) -> Option<SwitchHandle<'pass>> {
        // SAFETY: as in `is_switch`.
        let sw = unsafe { sys::osmroute_node_switch(self.node.as_ptr()) };
        NonNull::new(sw).map(|sw| SwitchHandle {
            sw,
            _pass: PhantomData,
        })
    }
}

/// One physical port, read within a routing pass.
#[derive(Clone, Copy)]
pub struct PortView<'pass> {
    port: NonNull<sys::osm_physp_t>,
    _pass: PhantomData<&'pass ()>,
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

/// A switch whose forwarding and hop tables a routing pass writes; valid
/// within the callback whose `Pass` gave it.
pub struct SwitchHandle<'pass> {
    sw: NonNull<sys::osm_switch_t>,
    _pass: PhantomData<&'pass ()>,
}

// SAFETY: handles move to the worker threads that fill the tables, each
// switch to exactly one thread (`&mut self` on every writer), while
// OpenSM's sweeper waits for the callback to return.
unsafe impl Send for SwitchHandle<'_> {}

impl SwitchHandle<'_> {
    /// The switch's new LFT (OpenSM pre-fills it with OSM_NO_PATH), as
    /// long as the switch's tables hold.
    pub fn new_lft(&mut self) -> Option<&mut [u8]> {
        let mut len = 0u32;
        // SAFETY: the switch is alive for the pass; `&mut self` makes the
        // slice the only access to the table while it lives.
        unsafe {
            let lft = sys::osmroute_switch_new_lft(self.sw.as_ptr(), &mut len);
            (!lft.is_null()).then(|| std::slice::from_raw_parts_mut(lft, len as usize))
        }
    }

    /// Records `hops` from this switch to `lid` through `port` in OpenSM's
    /// hop table (allocating the LID's row on first use).
    pub fn set_hops(&mut self, lid: u16, port: u8, hops: u8) {
        // SAFETY: the switch is alive for the pass and only this handle
        // writes its hop table meanwhile.
        unsafe {
            sys::osm_switch_set_hops(self.sw.as_ptr(), lid, port, hops);
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
            let rows = sys::osmroute_switch_hop_rows(self.sw.as_ptr(), &mut count);
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

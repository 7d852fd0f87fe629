//! One registered routing engine: its OpenSM callbacks and the routing it
//! computed.
//!
//! A routing pass is `build_lid_matrices` (snapshot + compute, nothing
//! written, so a failure leaves OpenSM free to fall back) followed by
//! `ucast_build_fwd_tables` (write LFTs and hops, publish). The published
//! routing is immutable and shared; `path_sl` (called concurrently from SA
//! threads) and `update_sl2vl` only read it, and it is swapped only inside
//! the routing callbacks.

use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use osmroute_core::config::Loaded;
use osmroute_core::engines::{mlid, EngineInfo};
use osmroute_core::routing::{pack_sl2vl, unpack_sl2vl};
use osmroute_core::{Error, Fabric, Routing};

use crate::guard::guarded;
use crate::snapshot::{self, SwitchHandle};
use crate::{apply, dumps, ffi};

/// Return values of the routing callbacks (OpenSM's contract).
const DONE: c_int = 0;
const FAILED: c_int = -1;

/// What a routing pass computed, between its two callbacks.
struct Pending {
    fabric: Fabric,
    routing: Routing,
    switches: Vec<SwitchHandle>,
    started: Instant,
    snapshot_ms: f64,
    /// Time making the pages of OpenSM's hop-row pointer arrays private.
    prefault_ms: f64,
    compute_ms: f64,
    /// Time spent waiting for OpenSM's hop-table rows after computing.
    reserve_ms: f64,
}

/// What the SA and QoS code read after a pass.
pub struct Published {
    pub fabric: Fabric,
    pub routing: Routing,
}

pub struct EngineContext {
    info: &'static EngineInfo,
    osm: *mut ffi::osm_opensm_t,
    config: Arc<Loaded>,
    pending: Mutex<Option<Pending>>,
    published: RwLock<Option<Arc<Published>>>,
    /// The LMC `raise_lmc` last asked OpenSM for (0: none).
    lmc_requested: AtomicU8,
}

impl EngineContext {
    pub fn new(info: &'static EngineInfo, osm: *mut ffi::osm_opensm_t, config: Arc<Loaded>) -> Self {
        EngineContext {
            info,
            osm,
            config,
            pending: Mutex::new(None),
            published: RwLock::new(None),
            lmc_requested: AtomicU8::new(0),
        }
    }

    fn published(&self) -> Option<Arc<Published>> {
        self.published.read().ok().and_then(|p| p.clone())
    }

    /// Snapshot and compute; declines (negative return) with one ERR line.
    fn compute(&self) -> Result<c_int, Error> {
        let name = self.info.name;
        if let Some(e) = self.config.errors_for(name).next() {
            return Err(Error::declined(name, format!("configuration error: {e}")));
        }
        let started = Instant::now();
        // SAFETY: `osm` is the OpenSM instance that registered us; OpenSM
        // holds its exclusive lock during routing callbacks.
        let snapshot = unsafe {
            let opt = &(*self.osm).subn.opt;
            snapshot::take(&mut (*self.osm).subn, opt)?
        };
        let snapshot_ms = started.elapsed().as_secs_f64() * 1e3;
        let switch_lids: Vec<osmroute_core::Lid> = snapshot
            .fabric
            .lids()
            .filter(|(_, owner)| snapshot.fabric.node(owner.node).is_switch())
            .map(|(lid, _)| lid)
            .collect();
        // SAFETY: as below; done before any thread of ours starts.
        unsafe { apply::prefault_hop_row_pointers(&snapshot.switches) };
        let prefault_ms = started.elapsed().as_secs_f64() * 1e3 - snapshot_ms;
        let handles = snapshot.switches.clone();
        // SAFETY: joined below, before this callback returns; it touches
        // only the switches' hop rows, which nothing else uses meanwhile.
        let reserving = std::thread::spawn(move || unsafe { apply::reserve_hop_rows(handles, &switch_lids) });
        let routing = (self.info.route)(&snapshot.fabric, &self.config.config);
        let compute_ms = started.elapsed().as_secs_f64() * 1e3 - snapshot_ms - prefault_ms;
        if reserving.join().is_err() {
            log::warn!("{name}: reserving hop-table rows failed; they will be allocated while writing");
        }
        let routing = routing?;
        if name == mlid::NAME && self.config.config.mlid.raise_lmc {
            self.raise_lmc(&snapshot.fabric);
        }
        let vls = routing.vls_needed();
        let budget = snapshot.fabric.vl_budget();
        if vls > 1 && !budget.sl2vl_programmed {
            return Err(Error::declined(
                name,
                format!(
                    "this routing needs {vls} VLs for deadlock freedom, but OpenSM programs SL2VL tables only \
                     with QoS on; set `qos TRUE` in opensm.conf (without it the routing would have credit loops)"
                ),
            ));
        }
        if vls > budget.data_vls {
            return Err(Error::declined(
                name,
                format!("this routing needs {vls} VLs but {}", budget.limited_by),
            ));
        }
        let reserve_ms = started.elapsed().as_secs_f64() * 1e3 - snapshot_ms - prefault_ms - compute_ms;
        let pending =
            Pending {
            fabric: snapshot.fabric,
            routing,
            switches: snapshot.switches,
            started,
            snapshot_ms,
            prefault_ms,
            compute_ms,
            reserve_ms,
        };
        *self.pending.lock().map_err(|_| Error::declined(name, "internal lock poisoned"))? = Some(pending);
        Ok(DONE)
    }

    /// `mlid.raise_lmc`: when OpenSM's LMC is below what the tree needs,
    /// set it and have OpenSM reassign every LID in a heavy sweep right
    /// after this one (this pass routes the LIDs it has). Asked once per
    /// LMC value, so a subnet that keeps the old LIDs cannot make OpenSM
    /// sweep forever.
    fn raise_lmc(&self, fabric: &Fabric) {
        let Ok(Some(lmc)) = mlid::lmc_to_request(fabric) else { return };
        if self.lmc_requested.swap(lmc, Ordering::SeqCst) == lmc {
            log::warn!("{}: lmc {lmc} was already requested once; not asking again", self.info.name);
            return;
        }
        log::warn!(
            "{}: raising OpenSM's lmc from {} to {lmc} (mlid.raise_lmc TRUE) and requesting a heavy sweep; \
             every port's LIDs will be reassigned",
            self.info.name,
            fabric.lmc()
        );
        // SAFETY: inside OpenSM's routing callback, on the SM thread that
        // owns the LID manager; `osm` is the instance that registered us.
        unsafe { ffi::osmroute_request_lmc(self.osm, lmc) };
    }

    /// Writes the computed tables into OpenSM and publishes the routing.
    fn write(&self) -> Result<c_int, Error> {
        let name = self.info.name;
        let pending = self
            .pending
            .lock()
            .map_err(|_| Error::declined(name, "internal lock poisoned"))?
            .take()
            .ok_or_else(|| Error::declined(name, "forwarding tables requested before the routing was computed"))?;
        let write_start = Instant::now();
        // SAFETY: the handles were taken in this pass, under the same lock;
        // the log mask is read inside OpenSM's callback.
        let dumping = unsafe { dumps::enabled(self.osm) };
        unsafe { apply::write_tables(&pending.fabric, &pending.routing, &pending.switches, dumping) }
            .map_err(|e| Error::declined(name, e))?;
        let write_ms = write_start.elapsed().as_secs_f64() * 1e3;
        let published = Arc::new(Published { fabric: pending.fabric, routing: pending.routing });
        if let Ok(mut slot) = self.published.write() {
            *slot = Some(published.clone());
        }
        log::info!(
            "{name}: routed {} switches and {} LIDs with {} VL(s) in {:.1} ms \
             (snapshot {:.1} ms, hop-row pages {:.1} ms, compute {:.1} ms, then waiting for OpenSM's hop-table rows \
             {:.1} ms, write {:.1} ms)",
            published.fabric.switches().len(),
            published.fabric.lids().count(),
            published.routing.vls_needed(),
            pending.started.elapsed().as_secs_f64() * 1e3,
            pending.snapshot_ms,
            pending.prefault_ms,
            pending.compute_ms,
            pending.reserve_ms,
            write_ms
        );
        // SAFETY: reading OpenSM's options and log mask inside its callback.
        if dumping {
            unsafe { dumps::write(self.osm, &published.fabric, &published.routing, &self.config.config) };
        }
        // Hosts need it to use the paths at all, so it is written always.
        // SAFETY: as above.
        if name == mlid::NAME {
            unsafe { dumps::write_path_select(self.osm, &published.fabric) };
        }
        Ok(DONE)
    }
}

unsafe fn context<'a>(ctx: *mut c_void) -> &'a EngineContext {
    &*(ctx as *const EngineContext)
}

/// Every failure of a routing pass is the engine declining: say so, so the
/// log line names the engine whatever went wrong.
fn as_decline(engine: &str, e: Error) -> Error {
    match e {
        Error::Declined { .. } => e,
        other => Error::declined(engine, other.to_string()),
    }
}

unsafe extern "C" fn build_lid_matrices(ctx: *mut c_void) -> c_int {
    let ctx = context(ctx);
    guarded(ctx.info.name, FAILED, || ctx.compute().map_err(|e| as_decline(ctx.info.name, e)))
}

unsafe extern "C" fn build_fwd_tables(ctx: *mut c_void) -> c_int {
    let ctx = context(ctx);
    guarded(ctx.info.name, FAILED, || ctx.write().map_err(|e| as_decline(ctx.info.name, e)))
}

unsafe extern "C" fn update_sl2vl(
    ctx: *mut c_void,
    port: *mut ffi::osm_physp_t,
    in_port: u8,
    out_port: u8,
    table: *mut ffi::ib_slvl_table_t,
) {
    let ctx = context(ctx);
    guarded(ctx.info.name, (), || -> Result<(), Error> {
        let Some(p) = ctx.published() else { return Ok(()) };
        let Some(sl2vl) = &p.routing.sl2vl else { return Ok(()) };
        if port.is_null() || table.is_null() {
            return Ok(());
        }
        let node = ffi::osmroute_port_node(port);
        let raw = &mut (*table).raw_vl_by_sl;
        if ffi::osmroute_node_type(node) as u32 == ffi::IB_NODE_TYPE_SWITCH {
            if let Some(si) = p.fabric.switch_with_guid(ffi::osmroute_node_guid(node)) {
                *raw = pack_sl2vl(sl2vl.switch_table(si, in_port.into(), out_port.into()));
            }
        } else {
            *raw = pack_sl2vl(&sl2vl.ca_table(&unpack_sl2vl(raw)));
        }
        Ok(())
    })
}

unsafe extern "C" fn path_sl(ctx: *mut c_void, hint: u8, slid: u16, dlid: u16) -> u8 {
    let ctx = context(ctx);
    guarded(ctx.info.name, hint, || -> Result<u8, Error> {
        Ok(match ctx.published() {
            // LIDs arrive in network byte order.
            Some(p) => p.routing.path_sl.sl(
                osmroute_core::Lid::from_raw(u16::from_be(slid)),
                osmroute_core::Lid::from_raw(u16::from_be(dlid)),
            ),
            None => hint,
        })
    })
}

unsafe extern "C" fn destroy(ctx: *mut c_void) {
    if !ctx.is_null() {
        let name = context(ctx).info.name;
        guarded(name, (), || -> Result<(), Error> {
            drop(Box::from_raw(ctx as *mut EngineContext));
            Ok(())
        });
    }
}

/// OpenSM's `setup` for one of our engines: gives it a fresh context.
///
/// # Safety
/// Called by OpenSM with a zeroed engine struct and its own instance.
pub unsafe fn setup(
    re: *mut ffi::osm_routing_engine,
    osm: *mut ffi::osm_opensm_t,
    info: &'static EngineInfo,
    config: Arc<Loaded>,
) {
    let ctx = Box::new(EngineContext::new(info, osm, config));
    let re = &mut *re;
    re.context = Box::into_raw(ctx) as *mut c_void;
    re.build_lid_matrices = Some(build_lid_matrices);
    re.ucast_build_fwd_tables = Some(build_fwd_tables);
    re.update_sl2vl = Some(update_sl2vl);
    re.path_sl = Some(path_sl);
    re.destroy = Some(destroy);
}

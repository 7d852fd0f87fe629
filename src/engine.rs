//! One registered routing engine inside OpenSM: a routing pass is
//! `compute` (snapshot of the subnet, the core pipeline; nothing written,
//! so a decline leaves OpenSM free to fall back) followed by `write`
//! (tables into OpenSM, the dump bundle, publish). The published routing is
//! immutable and shared; `path_sl` (called concurrently from SA threads)
//! and `sl2vl` only read it, and it is swapped only inside `write`.

use std::ffi::CString;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use osmroute_core::config::{Settings, DUMP_SECTION};
use osmroute_core::dumps::bundle::{Bundle, Contents, DumpOptions};
use osmroute_core::engines::{EngineInfo, Outcome};
use osmroute_core::fabric::{Fabric, Lid, PortNum};
use osmroute_core::routing::{pack_sl2vl, unpack_sl2vl};
use osmroute_core::{Decline, Error};

use crate::apply::{self, HopRows};
use crate::config_source::ConfigSource;
use crate::osm::mcast::opensm_builds_multicast_trees;
use crate::osm::{EngineFactory, Options, Osm, Pass, PortOwner, RoutingEngine, SwitchHandle};
use crate::snapshot;

/// What the plugin registers per engine; OpenSM keeps a pointer to it.
pub struct Registration {
    pub info: &'static EngineInfo,
    pub name: CString,
    pub config: Arc<ConfigSource>,
}

/// What a routing pass computed, between its two callbacks. OpenSM's
/// switches are not kept: the second callback takes them afresh from its
/// own `Pass` (they are only valid within one callback).
struct Pending {
    fabric: Fabric,
    outcome: Outcome,
    started: Instant,
    timings: String,
    /// The hop-table rows this pass reserved, and fills.
    hop_rows: HopRows,
}

/// What the SA, QoS and multicast code read after a pass.
struct Published {
    fabric: Fabric,
    outcome: Outcome,
    /// Worked out on first use, after the routing pass is timed and
    /// logged (checking trees can trace every route again).
    multicast: std::sync::OnceLock<crate::mcast::MulticastPlan>,
}

pub struct EngineContext {
    registration: &'static Registration,
    pending: Mutex<Option<Pending>>,
    published: RwLock<Option<Arc<Published>>>,
    /// The LMC the engine last asked OpenSM for (0: none).
    lmc_requested: AtomicU8,
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

impl EngineFactory for Registration {
    type Engine = EngineContext;

    fn setup(&'static self, _osm: &Osm) -> Result<EngineContext, String> {
        log::info!(
            "{}: set up (options from {})",
            self.info.name,
            self.config.describe()
        );
        Ok(EngineContext {
            registration: self,
            pending: Mutex::new(None),
            published: RwLock::new(None),
            lmc_requested: AtomicU8::new(0),
        })
    }
}

impl RoutingEngine for EngineContext {
    fn name(&self) -> &'static str {
        self.registration.info.name
    }

    fn compute(&self, pass: &Pass<'_>) -> Result<(), String> {
        self.compute_pass(pass).map_err(|e| e.to_string())
    }

    fn write(&self, pass: &Pass<'_>) -> Result<(), String> {
        self.write_pass(pass).map_err(|e| e.to_string())
    }

    /// The SL-to-VL table OpenSM is about to program, with this routing's.
    fn sl2vl(&self, owner: PortOwner, in_port: u8, out_port: u8, raw: &mut [u8; 8]) {
        let Some(p) = self.published() else { return };
        let Some(sl2vl) = &p.outcome.routing.sl2vl else {
            return;
        };
        match owner {
            PortOwner::Switch { guid } => {
                if let Some(s) = p.fabric.switch_with_guid(guid) {
                    *raw = pack_sl2vl(sl2vl.switch_table(
                        s,
                        PortNum::new(in_port),
                        PortNum::new(out_port),
                    ));
                }
            }
            PortOwner::ChannelAdapter => *raw = pack_sl2vl(&sl2vl.ca_table(&unpack_sl2vl(raw))),
        }
    }

    /// The SL of the path from `slid` to `dlid` (`hint` before any pass).
    fn path_sl(&self, hint: u8, slid: u16, dlid: u16) -> u8 {
        match self.published() {
            Some(p) => p
                .outcome
                .routing
                .path_sl
                .sl(Lid::from_raw(slid), Lid::from_raw(dlid)),
            None => hint,
        }
    }

    /// The DLID the engine chose for paths from the port with base LID
    /// `src_base` to the one with `dest_base`, if it chose one
    /// (opensm-patch's SA asks, from its worker threads).
    fn path_dlid(&self, src_base: u16, dest_base: u16) -> Option<u16> {
        self.published()?
            .outcome
            .dlid_choice
            .as_ref()?
            .get(Lid::from_raw(src_base), Lid::from_raw(dest_base))
            .map(Lid::raw)
    }

    fn multicast_entries(
        &self,
        mlid: u16,
        sl: u8,
        guids: &[u64],
        group_exists: &dyn Fn(u16) -> bool,
    ) -> Result<(Vec<(u64, u8)>, String), String> {
        self.group_entries(mlid, sl, guids, group_exists)
    }
}

impl EngineContext {
    fn name(&self) -> &'static str {
        self.registration.info.name
    }

    fn published(&self) -> Option<Arc<Published>> {
        self.published.read().ok().and_then(|p| p.clone())
    }

    /// Snapshot and compute; an error is the engine declining.
    fn compute_pass(&self, pass: &Pass<'_>) -> Result<(), Error> {
        let name = self.name();
        let settings = self.registration.config.current();
        let started = Instant::now();
        crate::osm::heap::start_peak();
        let options = pass.options();
        let snapshot = snapshot::take(pass, &options)
            .map_err(|e| Error::declined(name, Decline::InvalidFabric, e.to_string()))?;
        let snapshot_ms = ms(started);
        let hop_rows = HopRows::needed(options.routing_dumps, opensm_builds_multicast_trees());
        let fabric = snapshot.fabric;
        let (outcome, timings) = if hop_rows == HopRows::None {
            let compute = Instant::now();
            let outcome =
                osmroute_core::pipeline::route(self.registration.info, &settings, &fabric);
            let compute_ms = ms(compute);
            (
                outcome,
                format!(
                    "snapshot {snapshot_ms:.1} ms, compute {compute_ms:.1} ms, no hop-table rows"
                ),
            )
        } else {
            let (outcome, timings) =
                self.route_reserving_hop_rows(&settings, &fabric, snapshot.switches, hop_rows);
            (outcome, format!("snapshot {snapshot_ms:.1} ms, {timings}"))
        };
        let outcome = outcome?;
        if let Some(lmc) = outcome.lmc_request {
            self.request_lmc(pass, &fabric, lmc);
        }
        let pending = Pending {
            fabric,
            outcome,
            started,
            timings,
            hop_rows,
        };
        *self
            .pending
            .lock()
            .map_err(|_| Error::declined(name, Decline::Internal, "internal lock poisoned"))? =
            Some(pending);
        Ok(())
    }

    /// Routes `fabric` while a second thread has OpenSM allocate the
    /// hop-table rows towards switch LIDs (OpenSM allocates each on first
    /// use; beside the routing that is off the critical path), and says
    /// how long each took.
    fn route_reserving_hop_rows(
        &self,
        settings: &Settings,
        fabric: &Fabric,
        mut switches: Vec<SwitchHandle>,
        hop_rows: HopRows,
    ) -> (Result<Outcome, Error>, String) {
        let name = self.name();
        // The hop-row pages are made private on this thread alone, before
        // any thread of ours starts (see `prefault_hop_row_pointers`).
        let prefault = Instant::now();
        switches
            .iter_mut()
            .for_each(SwitchHandle::prefault_hop_row_pointers);
        let prefault_ms = ms(prefault);
        let switch_lids = apply::switch_lids(fabric);
        let compute = Instant::now();
        let ((reserved, reserved_at, reserving_ms), (outcome, routed)) =
            osmroute_core::parallel::join(
                || {
                    let began = Instant::now();
                    let done = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        apply::reserve_hop_rows(&mut switches, &switch_lids)
                    }));
                    (done.is_ok(), Instant::now(), ms(began))
                },
                || {
                    (
                        osmroute_core::pipeline::route(self.registration.info, settings, fabric),
                        Instant::now(),
                    )
                },
            );
        if !reserved {
            log::warn!(
                "{name}: reserving hop-table rows failed; they will be allocated while writing"
            );
        }
        // The time the routing then waited for the reservation.
        let reserve_ms = reserved_at.saturating_duration_since(routed).as_secs_f64() * 1e3;
        let compute_ms = ms(compute) - reserve_ms;
        let timings = format!(
            "hop-row pages {prefault_ms:.1} ms, compute {compute_ms:.1} ms \
             (beside {reserving_ms:.1} ms of allocating OpenSM's hop-table rows for {hop_rows:?}), \
             then waiting for those {reserve_ms:.1} ms"
        );
        (outcome, timings)
    }

    /// The engine asks for another LMC (mlid.raise_lmc): set it and have
    /// OpenSM reassign every LID in a heavy sweep right after this one
    /// (this pass routes the LIDs it has). Asked once per LMC value, so a
    /// subnet that keeps the old LIDs cannot make OpenSM sweep forever.
    fn request_lmc(&self, pass: &Pass<'_>, fabric: &Fabric, lmc: u8) {
        let name = self.name();
        if self.lmc_requested.swap(lmc, Ordering::SeqCst) == lmc {
            log::warn!("{name}: lmc {lmc} was already requested once; not asking again");
            return;
        }
        log::warn!(
            "{name}: raising OpenSM's lmc from {} to {lmc} (mlid.raise_lmc TRUE) and requesting a heavy sweep; \
             every port's LIDs will be reassigned",
            fabric.lmc()
        );
        pass.request_lmc(lmc);
    }

    /// Writes the computed tables into OpenSM, the dump bundle into
    /// `dump_files_dir`, and publishes the routing.
    fn write_pass(&self, pass: &Pass<'_>) -> Result<(), Error> {
        let name = self.name();
        let Pending {
            fabric,
            outcome,
            started,
            timings,
            hop_rows,
        } = self
            .pending
            .lock()
            .map_err(|_| Error::declined(name, Decline::Internal, "internal lock poisoned"))?
            .take()
            .ok_or_else(|| {
                Error::declined(
                    name,
                    Decline::Internal,
                    "forwarding tables requested before the routing was computed",
                )
            })?;
        let options = pass.options();
        let write_start = Instant::now();
        let mut switches = snapshot::switches(pass, &fabric)
            .map_err(|e| Error::declined(name, Decline::InvalidFabric, e))?;
        apply::write_tables(&fabric, &outcome.routing, &mut switches, hop_rows)
            .map_err(|e| Error::declined(name, Decline::Internal, e))?;
        let write_ms = ms(write_start);
        let published = Arc::new(Published {
            fabric,
            outcome,
            multicast: std::sync::OnceLock::new(),
        });
        if let Ok(mut slot) = self.published.write() {
            *slot = Some(published.clone());
        }
        log::info!(
            "{name}: routed {} switches and {} LIDs with {} VL(s) in {:.1} ms ({timings}, write {write_ms:.1} ms)",
            published.fabric.switch_count(),
            published.fabric.lids().count(),
            published.outcome.routing.vls_needed(),
            ms(started),
        );
        self.write_dumps(&published, &options);
        log::info!(
            "{name}: {} (the pass: snapshot, routing, tables, dumps; kept: the routing the SA and multicast read)",
            crate::osm::heap::HeapUse::now()
        );
        crate::osm::trim_heap();
        Ok(())
    }

    /// The files of this pass into OpenSM's dump directory: what ibdmchk
    /// and `osmroute check` read when OpenSM dumps its own tables, and
    /// always the path selection, without which hosts cannot use the
    /// routing. Files of ours from earlier passes go.
    fn write_dumps(&self, published: &Published, options: &Options) {
        let contents = if options.routing_dumps {
            Contents::ForChecking
        } else {
            Contents::Essential
        };
        let settings = self.registration.config.current();
        let dump_options = DumpOptions::read(&settings.section(DUMP_SECTION)).unwrap_or_default();
        let bundle = Bundle::new(
            &published.fabric,
            &published.outcome,
            contents,
            &dump_options,
        );
        for why in &bundle.skipped {
            log::warn!("{why}");
        }
        match bundle.write_to(&options.dump_dir) {
            Ok(written) => log::debug!("wrote {written:?}"),
            Err(e) => log::error!("{e}; check dump_files_dir and its permissions"),
        }
    }

    /// The multicast plan of a published pass, worked out once.
    fn plan<'p>(&self, p: &'p Published) -> &'p crate::mcast::MulticastPlan {
        p.multicast.get_or_init(|| {
            let started = Instant::now();
            let plan = crate::mcast::MulticastPlan::new(self.name(), &p.fabric, &p.outcome.routing);
            log::info!(
                "{}: multicast tree rule worked out in {:.1} ms",
                self.name(),
                ms(started)
            );
            if let Some(why) = plan.problem() {
                log::warn!("{}: multicast: {why}", self.name());
            }
            if let Some(sls) = plan.partial().filter(|_| plan.covers_sl0()) {
                // Unicast's SLs are the ones left out; groups rarely ask
                // for them (a group that does is warned about).
                log::info!(
                    "{}: multicast: master trees checked against credit loops for groups on SLs {sls:?} (SL 0 \
                     among them); groups on the other SLs get trees checked one by one, or OpenSM's kind of tree \
                     where none passes",
                    self.name()
                );
            } else if let Some(sls) = plan.partial() {
                log::warn!(
                    "{}: multicast: master trees checked against credit loops only for groups on SLs {sls:?}; \
                     groups on other SLs (the IPoIB broadcast group is on SL 0 unless its partition says `sl=`) \
                     get trees checked one by one, or OpenSM's kind of tree, which nothing checks, where none \
                     passes; give the partition one of those SLs",
                    self.name()
                );
            }
            plan
        })
    }

    /// The MFT entries (switch node GUID, port) of group `mlid` for the
    /// member ports `guids`, and a line for the log; `group_exists` tells
    /// which MLIDs OpenSM still has a group on.
    fn group_entries(
        &self,
        mlid: u16,
        sl: u8,
        guids: &[u64],
        group_exists: &dyn Fn(u16) -> bool,
    ) -> Result<(Vec<(u64, u8)>, String), String> {
        let p = self.published().ok_or("no routing pass yet")?;
        if guids.len() < 2 {
            // Nothing to forward (OpenSM's default does the same); no need
            // to work the tree rule out for it. A flood the group had
            // checked alone is no longer in the MFTs: drop it.
            if let Some(plan) = p.multicast.get() {
                plan.forget(mlid);
            }
            return Ok((
                Vec::new(),
                format!("MLID {mlid:#06X}: fewer than two members"),
            ));
        }
        let (group, entries) =
            self.plan(&p)
                .entries(&p.fabric, &p.outcome.routing, mlid, sl, guids, group_exists)?;
        let line = format!(
            "MLID {mlid:#06X} (SL {sl}): {} member port(s), tree over {} switch(es)",
            guids.len(),
            group.switches().count()
        );
        Ok((entries, line))
    }
}

//! One routing's figures, as `check` prints them and `compare` tabulates
//! them, and as JSON for machines.

use std::collections::BTreeMap;
use std::path::Path;

use osmroute_core::analysis::ebb::effective_bisection_with_progress;
use osmroute_core::analysis::group_shift::group_shift;
use osmroute_core::analysis::report::analyze_with_dependencies;
use osmroute_core::fabric::{Lid, Peer, PortNum};
use osmroute_core::multicast::GroupMft;
use osmroute_core::routing::DlidChoice;
use serde::Serialize;

use osmroute_core::dumps::switch_sl::SWITCH_SL_FILE;
use osmroute_core::dumps::{OSM_SL2VL_FILE, PATH_SL_FILE, SL2VL_FILE};

use crate::load::Loaded;
use crate::mcast_summary::MulticastSummary;
use crate::osm_log;
use crate::progress::Progress;

/// `osmroute_core::analysis::group_shift::GroupShift`, serialisable.
#[derive(Clone, Debug, Serialize)]
pub struct GroupShiftFigures {
    pub groups: usize,
    pub streams: usize,
    pub lids_per_host: usize,
    pub minimal: f64,
    pub spread: f64,
}

#[derive(Serialize)]
pub struct Failure {
    pub kind: String,
    pub routes: u64,
    pub example: String,
}

#[derive(Serialize)]
pub struct Summary {
    pub dir: String,
    pub sources: Vec<String>,
    /// Engine named by OpenSM's log in the directory, when there is one.
    pub engine: Option<String>,
    /// OpenSM's routing interval from its log (needs log flag 0x04).
    pub routing_seconds: Option<f64>,
    /// VLs the engine said it needed, from OpenSM's log.
    pub vls_needed_by_log: Option<u8>,
    /// What the analysis had to assume for lack of files (the SL and VL
    /// figures and the credit-loop verdict rest on these).
    pub assumptions: Vec<String>,
    pub switches: usize,
    pub cas: usize,
    pub lids: usize,
    pub routes: u64,
    pub failures: Vec<Failure>,
    /// Inter-switch hops -> routes.
    pub hops: BTreeMap<usize, u64>,
    pub max_hops: usize,
    pub avg_hops: f64,
    /// Most routes on one directed inter-switch channel.
    pub edge_forwarding_index: u64,
    pub avg_channel_load: f64,
    /// Routes on a channel -> directed inter-switch channels with that many
    /// (unused channels count under 0).
    pub link_load: BTreeMap<u64, usize>,
    /// Effective bisection bandwidth as a fraction of full bisection.
    pub ebb: Option<f64>,
    /// EBB with each source's DLID from the path-selection file.
    pub ebb_chosen_dlids: Option<f64>,
    pub ebb_patterns: usize,
    pub ebb_seed: u64,
    /// The group-shift pattern's bandwidth on a Dragonfly or Dragonfly+,
    /// to base LIDs and spread over every LID of the destination.
    pub group_shift: Option<GroupShiftFigures>,
    pub sls_used: Vec<u8>,
    pub vls_used: Vec<u8>,
    pub dependencies: usize,
    /// One credit loop as "switch port VL" hops, when there is one.
    pub credit_loop: Option<Vec<String>>,
    /// The groups of opensm.mcfdbs and the credit-loop verdict of unicast
    /// and multicast together, when the directory has that file.
    pub multicast: Option<MulticastSummary>,
}

/// What is assumed when the path-SL or SL2VL files are missing.
fn assumptions(sources: &[String]) -> Vec<String> {
    let has = |name: &str| sources.iter().any(|s| s == name);
    let mut out = Vec::new();
    if !has(PATH_SL_FILE) && !has(SWITCH_SL_FILE) {
        out.push(format!(
            "no {PATH_SL_FILE} or {SWITCH_SL_FILE}: every path assumed on SL 0"
        ));
    }
    if !has(SL2VL_FILE) && !has(OSM_SL2VL_FILE) {
        out.push(format!(
            "no {SL2VL_FILE} or {OSM_SL2VL_FILE}: every SL assumed on VL 0"
        ));
    }
    out
}

impl Summary {
    pub fn delivered(&self) -> bool {
        self.failures.is_empty()
    }

    /// Every figure of the report, from one trace of the routes (delivery,
    /// hops, channel loads, dependencies), then EBB, multicast and the
    /// OpenSM log. One function of about 110 lines: each figure is a few
    /// lines over the same trace and fabric, assembled into one struct.
    pub fn compute(
        dir: &Path,
        loaded: &Loaded,
        patterns: usize,
        seed: u64,
        choice: Option<&DlidChoice>,
        groups: Option<&[GroupMft]>,
    ) -> Summary {
        let (fabric, routing) = (&loaded.fabric, &loaded.routing);
        let (report, unicast) = {
            let p = Progress::bar("tracing routes");
            analyze_with_dependencies(fabric, routing, &|d, t| p.update(d, t))
        };
        let multicast = groups.map(|g| MulticastSummary::compute(fabric, routing, g, &unicast));
        let mut link_load: BTreeMap<u64, usize> = BTreeMap::new();
        let mut channels = 0;
        let graph = fabric.graph();
        for s in graph.ids() {
            for (port, peer) in graph.peers(s).iter().enumerate() {
                if let Some(Peer::Switch { .. }) = peer {
                    channels += 1;
                    let load = report
                        .channel_load
                        .get(&(s, PortNum::new(port as u8)))
                        .copied()
                        .unwrap_or(0);
                    *link_load.entry(load).or_default() += 1;
                }
            }
        }
        let loads: u64 = report.channel_load.values().sum();
        let hop_routes: u64 = report.hops.values().sum();
        let hop_sum: u64 = report.hops.iter().map(|(h, n)| *h as u64 * n).sum();
        let pass = std::fs::read_to_string(dir.join("opensm.log"))
            .map(|l| osm_log::first_routing_pass(&l))
            .unwrap_or_default();
        Summary {
            dir: dir.display().to_string(),
            sources: loaded.sources.clone(),
            engine: pass.engine,
            routing_seconds: pass.seconds,
            vls_needed_by_log: pass.vls_needed,
            assumptions: assumptions(&loaded.sources),
            switches: fabric.switches().len(),
            cas: fabric.cas().count(),
            lids: fabric.lids().count(),
            routes: report.routes,
            failures: report
                .failures
                .iter()
                .map(|(kind, (routes, example))| Failure {
                    kind: kind.to_string(),
                    routes: *routes,
                    example: example.clone(),
                })
                .collect(),
            max_hops: report.max_hops(),
            avg_hops: if hop_routes == 0 {
                0.0
            } else {
                hop_sum as f64 / hop_routes as f64
            },
            hops: report.hops.clone(),
            edge_forwarding_index: report.edge_forwarding_index(),
            avg_channel_load: if channels == 0 {
                0.0
            } else {
                loads as f64 / channels as f64
            },
            link_load,
            ebb: (patterns > 0).then(|| {
                let p = Progress::bar("bisection patterns");
                effective_bisection_with_progress(
                    fabric,
                    routing,
                    patterns,
                    seed,
                    &|_, base| base,
                    &|d, t| p.update(d, t),
                )
            }),
            ebb_chosen_dlids: choice.filter(|_| patterns > 0).map(|c| {
                let pick = |slid: Lid, base: Lid| c.get(slid, base).unwrap_or(base);
                let p = Progress::bar("patterns, chosen DLIDs");
                effective_bisection_with_progress(
                    fabric,
                    routing,
                    patterns,
                    seed,
                    &pick,
                    &|d, t| p.update(d, t),
                )
            }),
            ebb_patterns: patterns,
            ebb_seed: seed,
            group_shift: (patterns > 0)
                .then(|| group_shift(fabric, routing))
                .flatten()
                .map(|g| GroupShiftFigures {
                    groups: g.groups,
                    streams: g.streams,
                    lids_per_host: g.lids_per_host,
                    minimal: g.minimal,
                    spread: g.spread,
                }),
            sls_used: report.sls_used.clone(),
            vls_used: report.vls_used.clone(),
            dependencies: report.dependencies,
            credit_loop: report.credit_loop.as_ref().map(|cycle| {
                cycle
                    .iter()
                    .map(|c| {
                        format!(
                            "{} port {} VL {}",
                            fabric.describe_switch(c.switch),
                            c.port,
                            c.vl
                        )
                    })
                    .collect()
            }),
            multicast,
        }
    }

    /// The link-load histogram in at most `buckets` equal ranges of load:
    /// (first load, last load, channels).
    pub fn link_load_buckets(&self, buckets: usize) -> Vec<(u64, u64, usize)> {
        let max = self.link_load.keys().copied().max().unwrap_or(0);
        let width = (max + 1).div_ceil(buckets.max(1) as u64).max(1);
        let mut out: Vec<(u64, u64, usize)> = Vec::new();
        for (&load, &n) in &self.link_load {
            let lo = load / width * width;
            match out.last_mut() {
                Some(last) if last.0 == lo => last.2 += n,
                _ => out.push((lo, lo + width - 1, n)),
            }
        }
        out
    }
}

//! `pssp`: P-SSSP routing (Hoefler, Schneider & Lumsdaine, "Optimized
//! routing for large-scale InfiniBand networks", §III-A) with minimal paths
//! enforced as in the paper's experiments, made deadlock-free by the
//! virtual-layer pass (`deadlock::virtual_layers::placement`).
//!
//! Destinations are routed one LID at a time. Each LID gets a shortest-path
//! tree towards its switch in which every switch picks, among its minimal
//! next hops, the one whose path has the least accumulated load; after the
//! tree is fixed, every inter-switch channel's load grows by the number of
//! source hosts routed through it. This is the paper's SSSP with edge
//! weights "P² + load" (minimal hops first, then least load) computed as a
//! dynamic program over the BFS layers instead of a priority queue: the
//! same paths, in O(edges) per LID.
//!
//! With LMC > 0 every LID of a port is routed, consecutively, and paths
//! prefer channels the port's earlier LIDs did not use, so its LIDs take
//! different paths where the topology offers them.

use crate::config::{ConfigError, OptionSpec, Section};
use crate::deadlock::virtual_layers::{self, LayeringOptions};
use crate::engines::balance::{BundleSpreader, TreeBalancer};
use crate::engines::{EngineInfo, Outcome};
use crate::error::{Decline, Error};
use crate::fabric::{Bfs, Cable, Fabric, Lid, PortRef, SwitchId};
use crate::rng::Rng;
use crate::routing::{Lft, PathSl, Routing, NO_PATH};

pub const NAME: &str = "pssp";

const DEADLOCK_REMOVAL: OptionSpec = OptionSpec {
    key: "deadlock_removal",
    default: "TRUE",
    help: "assign paths to virtual layers; FALSE routes on SL 0 only (credit loops possible; logged as a warning)",
};
const SEED: OptionSpec = OptionSpec {
    key: "seed",
    default: "0",
    help: "order in which destinations are routed: 0 the built-in order (round-robin over switches in direct \
           networks, leaf by leaf in fat trees), else shuffled with this seed",
};

/// pssp's options (`pssp.*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PsspOptions {
    /// Assign paths to virtual layers so that no layer has a credit loop.
    pub deadlock_removal: bool,
    pub layering: LayeringOptions,
    /// Seed of the order in which destinations are routed (0: built-in).
    pub seed: u64,
}

impl PsspOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        Ok(PsspOptions {
            deadlock_removal: s.flag(&DEADLOCK_REMOVAL)?,
            layering: LayeringOptions::read_with_multicast_vl(s)?,
            seed: s.number(&SEED, 0, u64::MAX)?,
        })
    }
}

impl Default for PsspOptions {
    fn default() -> Self {
        PsspOptions {
            deadlock_removal: true,
            layering: LayeringOptions::with_multicast_vl(),
            seed: 0,
        }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "P-SSSP: globally balanced minimal paths, deadlock-free by virtual layers (SLs/VLs)",
    needs_qos: true,
    options: &[
        &[DEADLOCK_REMOVAL, SEED],
        virtual_layers::OPTIONS,
        &[virtual_layers::MULTICAST_VL],
    ],
    build: |s| {
        let options = PsspOptions::read(s)?;
        Ok(Box::new(super::Configured {
            options,
            route: |f, o| route(f, o).map(Outcome::from),
        }))
    },
};

/// The destinations in routing order: each LID-carrying port with its
/// LIDs, switches' own LIDs last, shuffled instead when `seed` is not 0.
///
/// In direct networks (every switch has hosts: Dragonfly, Slim Fly,
/// HyperX, tori) the ports go round-robin over the switches (the first
/// port behind every switch, then the second, ...), so consecutive trees
/// end at different switches and load spreads over the global channels.
/// In indirect networks (fat trees: switches without hosts) the ports of
/// one leaf go consecutively, so that their trees fan out over the upper
/// switches, as fat-tree routing does, and the leaves of one subtree one
/// after another (`leaves_by_subtree`). Either way the order does not hinge
/// on how the SM numbered the LIDs. (Measured with `.ci/bench-pssp`: each
/// order is clearly better on its own kind of network.)
pub(crate) fn destinations(fabric: &Fabric, seed: u64) -> Vec<(PortRef, Vec<Lid>)> {
    let mut ports: Vec<(usize, SwitchId, PortRef, Vec<Lid>)> = Vec::new();
    let mut seen_behind = vec![0usize; fabric.switch_count()];
    let mut by_lid: Vec<(PortRef, Vec<Lid>)> = fabric
        .end_ports()
        .map(|(at, p)| (at, p.lids().collect()))
        .collect();
    by_lid.sort_by_key(|(_, lids)| lids[0]);
    for (at, lids) in by_lid {
        let Some(sw) = fabric.lid_switch(lids[0]) else {
            continue;
        };
        let rank = if fabric.node(at.node).is_switch() {
            usize::MAX
        } else {
            seen_behind[sw.idx()] += 1;
            seen_behind[sw.idx()]
        };
        // Switch ids are GUID order, not the SM's or a net file's node
        // order, so offline runs reproduce the plugin's.
        ports.push((rank, sw, at, lids));
    }
    let direct = seen_behind.iter().all(|&n| n > 0);
    if direct {
        ports.sort_by_key(|&(rank, sw, _, _)| (rank, sw));
    } else {
        let place = leaves_by_subtree(fabric.graph());
        ports.sort_by_key(|&(rank, sw, _, _)| (rank == usize::MAX, place[sw.idx()], rank));
    }
    let mut ports: Vec<(PortRef, Vec<Lid>)> = ports
        .into_iter()
        .map(|(_, _, at, lids)| (at, lids))
        .collect();
    if seed != 0 {
        Rng::new(seed).shuffle(&mut ports);
    }
    ports
}

/// A place for every switch in the routing order of an indirect network:
/// switches with hosts in a chain where each is the nearest (then lowest
/// id) to the one before, so the leaves of one subtree (a pod of a
/// multi-level tree) come one after another, whatever the switch ids;
/// switches without hosts after them. Routing a pod's destinations
/// together keeps the other pods' up-links evenly loaded while they all
/// send to it, as fat-tree routing's order does; interleaving pods (the
/// GUID order of some fabrics) gave an edge forwarding index of 256
/// instead of the optimal 192 on a 3-level PGFT.
fn leaves_by_subtree(graph: &crate::fabric::SwitchGraph) -> Vec<usize> {
    let n = graph.switch_count();
    let mut place = vec![usize::MAX; n];
    let mut bfs = Bfs::new(n);
    let leaves = graph.ids().filter(|&s| graph.hosts(s) > 0).count();
    let mut current = graph.ids().find(|&s| graph.hosts(s) > 0);
    for k in 0..leaves {
        let Some(at) = current else { break };
        place[at.idx()] = k;
        bfs.run(graph, at);
        // Breadth-first order is by distance, then discovery; the lowest
        // id among the nearest unplaced leaves keeps it id-independent.
        let unplaced = |s: &SwitchId| graph.hosts(*s) > 0 && place[s.idx()] == usize::MAX;
        let nearest = bfs
            .order()
            .iter()
            .filter(|s| unplaced(s))
            .map(|&s| bfs.dist(s))
            .min();
        current = nearest
            .and_then(|d| {
                bfs.order()
                    .iter()
                    .copied()
                    .filter(|s| unplaced(s) && bfs.dist(*s) == d)
                    .min()
            })
            .or_else(|| graph.ids().find(unplaced));
    }
    for (k, s) in graph.ids().filter(|&s| graph.hosts(s) == 0).enumerate() {
        place[s.idx()] = leaves + k;
    }
    place
}

/// Balanced minimal tables: what the P-SSSP pass computed.
pub struct MinimalTables {
    pub lfts: Vec<Lft>,
    /// Every LID, in the order the trees were built.
    pub lid_order: Vec<Lid>,
    /// Most routes on one inter-switch channel.
    pub edge_forwarding_index: u64,
}

pub fn route(fabric: &Fabric, opts: &PsspOptions) -> Result<Routing, Error> {
    if fabric.switch_count() == 0 {
        return Err(Error::declined(
            NAME,
            Decline::NoSwitches,
            "the fabric has no switches; nothing to route",
        ));
    }
    let MinimalTables {
        lfts,
        lid_order,
        edge_forwarding_index,
    } = balanced_minimal(fabric, opts.seed, NAME);
    let routing = if opts.deadlock_removal {
        virtual_layers::make_deadlock_free(NAME, fabric, lfts, &lid_order, &opts.layering)?
    } else {
        log::warn!("{NAME}: deadlock removal is off (pssp.deadlock_removal FALSE): the routing may have credit loops");
        Routing {
            engine: NAME.to_string(),
            lfts,
            sl2vl: None,
            path_sl: PathSl::Uniform(0),
        }
    };
    log::info!(
        "{NAME}: {} LIDs routed on minimal paths, edge forwarding index {edge_forwarding_index}, {} SLs/VLs",
        lid_order.len(),
        routing.vls_needed()
    );
    Ok(routing)
}

/// The P-SSSP tables (module comment): every LID routed on minimal paths,
/// balanced by accumulated channel load. `seed` as `pssp.seed`; `engine`
/// names the caller in log lines.
pub fn balanced_minimal(fabric: &Fabric, seed: u64, engine: &str) -> MinimalTables {
    let graph = fabric.graph();
    let switches = graph.switch_count();
    let mut lfts = Routing::empty_lfts(fabric);
    let mut trees = TreeBalancer::new(graph);
    let mut bfs = Bfs::new(switches);
    let order = destinations(fabric, seed);
    let mut unreachable = 0usize;
    let mut turn = 0usize;
    for (k, (owner, lids)) in order.iter().enumerate() {
        let Some(t) = fabric.lid_switch(lids[0]) else {
            continue;
        };
        let is_ca = !fabric.node(owner.node).is_switch();
        let last_port = fabric.delivery_port(*owner);
        bfs.run(graph, t);
        // The port's LIDs share a stamp: its later LIDs avoid the
        // channels its earlier ones use.
        let stamp = k as u32 + 1;
        for &lid in lids {
            let minimal = |s: SwitchId, cable: &Cable| bfs.dist(cable.to) + 1 == bfs.dist(s);
            // Every host behind a tree edge sends to this LID through it.
            let senders = |s: SwitchId| if is_ca { u64::from(graph.hosts(s)) } else { 0 };
            trees.route(bfs.order(), minimal, turn, stamp, senders);
            turn += 1;
            for s in graph.ids() {
                let out = if s == t {
                    last_port
                } else if bfs.reached(s) {
                    trees.next_port(s)
                } else {
                    NO_PATH
                };
                lfts[s].set(lid, out);
            }
            unreachable += switches - bfs.order().len();
        }
    }
    if unreachable > 0 {
        log::warn!("{engine}: the switches are not all connected; {unreachable} (switch, LID) pairs have no route");
    }
    let lid_order: Vec<Lid> = order
        .iter()
        .flat_map(|(_, lids)| lids.iter().copied())
        .collect();
    let edge_forwarding_index = if BundleSpreader::has_bundles(graph) {
        let mut spreader = BundleSpreader::new(graph);
        spreader.spread(fabric, &mut lfts, &lid_order);
        spreader.edge_forwarding_index()
    } else {
        trees.edge_forwarding_index()
    };
    MinimalTables {
        lfts,
        lid_order,
        edge_forwarding_index,
    }
}

#[cfg(test)]
mod tests;

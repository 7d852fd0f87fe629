//! `pssp`: P-SSSP routing (Hoefler, Schneider & Lumsdaine, "Optimized
//! routing for large-scale InfiniBand networks", §III-A) with minimal paths
//! enforced as in the paper's experiments, made deadlock-free by the
//! virtual-layer pass (`deadlock::layers`).
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

use crate::config::Config;
use crate::deadlock::vl_layers;
use crate::error::Error;
use crate::fabric::{Fabric, Peer, PortRef};
use crate::rng::Rng;
use crate::routing::{PathSl, Routing, NO_PATH};

pub const NAME: &str = "pssp";

const UNREACHED: u32 = u32::MAX;

/// Breadth-first distances (in switch hops) to `target` and the switches
/// in the order they were reached.
struct Bfs {
    target: usize,
    dist: Vec<u32>,
    order: Vec<usize>,
}

impl Bfs {
    fn new(switches: usize) -> Self {
        Bfs { target: usize::MAX, dist: vec![UNREACHED; switches], order: Vec::with_capacity(switches) }
    }

    fn run(&mut self, adj: &[Vec<(u8, usize, u8)>], target: usize) {
        if self.target == target {
            return;
        }
        self.target = target;
        self.dist.fill(UNREACHED);
        self.order.clear();
        self.dist[target] = 0;
        self.order.push(target);
        let mut head = 0;
        while head < self.order.len() {
            let x = self.order[head];
            head += 1;
            for &(_, y, _) in &adj[x] {
                if self.dist[y] == UNREACHED {
                    self.dist[y] = self.dist[x] + 1;
                    self.order.push(y);
                }
            }
        }
    }
}

/// The destinations in routing order: each LID-carrying port with its
/// LIDs, switches' own LIDs last, shuffled instead when `seed` is not 0.
///
/// In direct networks (every switch has hosts: Dragonfly, Slim Fly,
/// HyperX, tori) the ports go round-robin over the switches (the first
/// port behind every switch, then the second, ...), so consecutive trees
/// end at different switches and load spreads over the global channels.
/// In indirect networks (fat trees: switches without hosts) the ports of
/// one leaf go consecutively, so that their trees fan out over the upper
/// switches, as fat-tree routing does. Either way the order does not hinge
/// on how the SM numbered the LIDs. (Measured with `.ci/bench-pssp`: each
/// order is clearly better on its own kind of network.)
fn destinations(fabric: &Fabric, seed: u64) -> Vec<(PortRef, Vec<u16>)> {
    let mut ports: Vec<(usize, u64, PortRef, Vec<u16>)> = Vec::new();
    let mut seen_behind = vec![0usize; fabric.switches().len()];
    let mut by_lid: Vec<(PortRef, Vec<u16>)> = fabric
        .end_ports()
        .map(|(at, p)| (at, (0..p.lid_count()).map(|k| p.lid + k as u16).collect()))
        .collect();
    by_lid.sort_by_key(|(_, lids)| lids[0]);
    for (at, lids) in by_lid {
        let Some(sw) = fabric.lid_switch(lids[0]).and_then(|n| fabric.switch_index(n)) else { continue };
        let rank = if fabric.node(at.node).is_switch() {
            usize::MAX
        } else {
            seen_behind[sw] += 1;
            seen_behind[sw]
        };
        // Switches by GUID, not by position: the SM's node order and a net
        // file's differ, and offline runs must reproduce the plugin's.
        ports.push((rank, fabric.node(fabric.switches()[sw]).guid, at, lids));
    }
    let direct = seen_behind.iter().all(|&n| n > 0);
    if direct {
        ports.sort_by_key(|&(rank, sw, _, _)| (rank, sw));
    } else {
        ports.sort_by_key(|&(rank, sw, _, _)| (rank == usize::MAX, sw, rank));
    }
    let mut ports: Vec<(PortRef, Vec<u16>)> = ports.into_iter().map(|(_, _, at, lids)| (at, lids)).collect();
    if seed != 0 {
        Rng::new(seed).shuffle(&mut ports);
    }
    ports
}

/// Balanced minimal tables: what the P-SSSP pass computed.
pub struct MinimalTables {
    pub lfts: Vec<Vec<u8>>,
    /// Every LID, in the order the trees were built.
    pub lid_order: Vec<u16>,
    /// Most routes on one inter-switch channel.
    pub edge_forwarding_index: u64,
}

pub fn route(fabric: &Fabric, config: &Config) -> Result<Routing, Error> {
    let opts = &config.pssp;
    if fabric.switches().is_empty() {
        return Err(Error::declined(NAME, "the fabric has no switches; nothing to route"));
    }
    let MinimalTables { lfts, lid_order, edge_forwarding_index } = balanced_minimal(fabric, opts.seed, NAME);
    let routing = if opts.deadlock_removal {
        vl_layers::make_deadlock_free(NAME, fabric, lfts, &lid_order, &opts.layering)?
    } else {
        log::warn!("{NAME}: deadlock removal is off (pssp.deadlock_removal FALSE): the routing may have credit loops");
        Routing { engine: NAME.to_string(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) }
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
    // Per switch its inter-switch ports: (port, neighbour, neighbour's port).
    let adj = fabric.switch_adjacency();
    let switches = adj.len();
    let (offset, channels) = fabric.switch_port_offsets();
    // Source hosts per switch: the traffic a tree edge carries per LID.
    let hosts: Vec<u64> = fabric
        .switch_port_peers()
        .iter()
        .map(|ports| ports.iter().filter(|p| matches!(p, Some(Peer::Ca(_)))).count() as u64)
        .collect();

    let mut lfts = Routing::empty_lfts(fabric);
    let mut load = vec![0u64; channels];
    // Channels the current port's earlier LIDs use (stamp = port number + 1).
    let mut used_stamp = vec![0u32; channels];
    let mut bfs = Bfs::new(switches);
    let mut cost = vec![0u64; switches];
    // Next hop of every switch in the current tree: out-port and switch.
    let mut next = vec![NO_PATH; switches];
    let mut next_switch = vec![0usize; switches];
    let mut acc = vec![0u64; switches];
    let order = destinations(fabric, seed);
    let mut unreachable = 0usize;
    for (k, (owner, lids)) in order.iter().enumerate() {
        let Some(target_node) = fabric.lid_switch(lids[0]) else { continue };
        let Some(t) = fabric.switch_index(target_node) else { continue };
        let is_ca = !fabric.node(owner.node).is_switch();
        let last_port = fabric.delivery_port(*owner);
        bfs.run(&adj, t);
        let stamp = k as u32 + 1;
        for &lid in lids {
            // Least (reuse, load) path from every switch, nearest first.
            cost[t] = 0;
            for &s in &bfs.order[1..] {
                let d = bfs.dist[s];
                let mut best = (u64::MAX, NO_PATH, 0);
                // Equal costs go to the first candidate met; starting the
                // scan at a LID-dependent neighbour spreads the ties.
                let (here, start) = (&adj[s], lid as usize);
                for &(p, n, _) in here.iter().cycle().skip(start % here.len().max(1)).take(here.len()) {
                    if bfs.dist[n] + 1 != d {
                        continue;
                    }
                    let c = offset[s] + p as usize;
                    let reuse = u64::from(used_stamp[c] == stamp) << 40;
                    let key = cost[n] + reuse + load[c];
                    if key < best.0 {
                        best = (key, p, n);
                    }
                }
                (cost[s], next[s], next_switch[s]) = best;
            }
            for s in 0..switches {
                lfts[s][lid as usize] = if s == t {
                    last_port
                } else if bfs.dist[s] == UNREACHED {
                    NO_PATH
                } else {
                    next[s]
                };
            }
            unreachable += switches - bfs.order.len();
            // Every host behind a tree edge sends to this LID through it.
            for &s in &bfs.order {
                acc[s] = if is_ca { hosts[s] } else { 0 };
            }
            for &s in bfs.order[1..].iter().rev() {
                let c = offset[s] + next[s] as usize;
                load[c] += acc[s];
                used_stamp[c] = stamp;
                acc[next_switch[s]] += acc[s];
            }
        }
    }
    if unreachable > 0 {
        log::warn!("{engine}: the switches are not all connected; {unreachable} (switch, LID) pairs have no route");
    }
    let edge_forwarding_index = load.iter().max().copied().unwrap_or(0);
    let lid_order: Vec<u16> = order.iter().flat_map(|(_, lids)| lids.iter().copied()).collect();
    MinimalTables { lfts, lid_order, edge_forwarding_index }
}

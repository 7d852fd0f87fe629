//! `layered`: multipath routing over LMC layers with almost-minimal paths
//! (Blach et al., "A High-Performance Design, Implementation, Deployment,
//! and Evaluation of the Slim Fly Network", §4, §5 and App. B.1).
//!
//! Layer l is what the fabric's LID base + l addresses, so a fabric with
//! `lmc N` gets 2^N layers: layer 0 balanced minimal paths, every other
//! layer one almost-minimal path per switch pair where the layer allows
//! one (`construct`). Deadlock freedom comes afterwards, from either the
//! virtual-layer pass (`deadlock::vl_layers`) or the three-class
//! hop-position scheme (`hop_position`), as `layered.deadlock` says.

mod construct;
mod hop_position;

pub use construct::{build_layers, Layers};

use crate::config::{Config, LayeredDeadlock};
use crate::deadlock::vl_layers;
use crate::error::Error;
use crate::fabric::{describe, Fabric};
use crate::routing::{Routing, NO_PATH};
use crate::topology::switch_graph::GuidOrder;

pub const NAME: &str = "layered";

/// Two switches with hosts that cannot reach each other, if any.
fn disconnected_pair(order: &GuidOrder) -> Option<(usize, usize)> {
    let g = &order.graph;
    let with_hosts: Vec<usize> = (0..g.switch_count()).filter(|&r| g.hosts[r] > 0).collect();
    let first = *with_hosts.first()?;
    with_hosts.iter().find(|&&r| g.dist(first, r) == u16::MAX).map(|&r| (order.switch_at[first], order.switch_at[r]))
}

/// The layers for the fabric's LMC, as `route` builds them.
pub fn layers_for(fabric: &Fabric, config: &Config) -> Result<(GuidOrder, Layers), Error> {
    let order = GuidOrder::new(fabric);
    if order.graph.switch_count() == 0 {
        return Err(Error::declined(NAME, "the fabric has no switches; nothing to route"));
    }
    if let Some((a, b)) = disconnected_pair(&order) {
        let name = |s: usize| describe(fabric.node(fabric.switches()[s]));
        return Err(Error::declined(
            NAME,
            format!("{} and {} have hosts but no path between them; cable the fabric back together", name(a), name(b)),
        ));
    }
    let count = 1usize << fabric.lmc();
    if count == 1 {
        log::warn!(
            "{NAME}: lmc is 0, so there is one layer of minimal paths and no multipath; \
             set `lmc 2` (4 layers) or `lmc 3` (8 layers) in opensm.conf for almost-minimal paths"
        );
    }
    let layers = build_layers(&order.graph, count, config.layered.seed);
    Ok((order, layers))
}

pub fn route(fabric: &Fabric, config: &Config) -> Result<Routing, Error> {
    let opts = &config.layered;
    let (order, layers) = layers_for(fabric, config)?;
    for l in 1..layers.count() {
        log::info!(
            "{NAME}: layer {l}: {} almost-minimal paths inserted, {} switch pairs without one (routed by the shortest path the layer allows)",
            layers.inserted[l],
            layers.no_path[l]
        );
    }
    let (lfts, lid_order) = forwarding_tables(fabric, &order, &layers);
    log::info!(
        "{NAME}: {} layers over {} LIDs (layer = LID offset from the port's base LID)",
        layers.count(),
        lid_order.len()
    );
    match opts.deadlock {
        LayeredDeadlock::VlLayers => vl_layers::make_deadlock_free(NAME, fabric, lfts, &lid_order, &opts.layering),
        LayeredDeadlock::HopPosition => hop_position::make_deadlock_free(NAME, fabric, lfts, opts.layering.max_vls),
    }
}

/// LFTs of all layers, and the LIDs in layer order (every port's base LID,
/// then every base + 1, ...) for the deadlock removal to place paths in.
fn forwarding_tables(fabric: &Fabric, order: &GuidOrder, layers: &Layers) -> (Vec<Vec<u8>>, Vec<u16>) {
    let ports_to = fabric.ports_to_neighbours();
    let mut lfts = Routing::empty_lfts(fabric);
    let mut lid_order: Vec<(u32, u16)> = Vec::new();
    for (at, port) in fabric.end_ports() {
        let Some(t) = fabric.lid_switch(port.lid).and_then(|n| fabric.switch_index(n)) else {
            continue;
        };
        let last_port = fabric.delivery_port(at);
        let dest = order.rank_of[t];
        for k in 0..port.lid_count() {
            let lid = port.lid + k as u16;
            let layer = k as usize % layers.count();
            lid_order.push((k, lid));
            for s in 0..lfts.len() {
                lfts[s][lid as usize] = if s == t {
                    last_port
                } else {
                    match layers.next(layer, order.rank_of[s], dest) {
                        Some(next) => {
                            let ports = &ports_to[s][&order.switch_at[next]];
                            ports[lid as usize % ports.len()]
                        }
                        None => NO_PATH,
                    }
                };
            }
        }
    }
    lid_order.sort_unstable();
    (lfts, lid_order.into_iter().map(|(_, lid)| lid).collect())
}

#[cfg(test)]
mod tests;

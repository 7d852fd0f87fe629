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
use crate::fabric::{Fabric, Lid, SwitchGraph, SwitchId, UNREACHABLE};
use crate::routing::{Lft, Routing, NO_PATH};

pub const NAME: &str = "layered";

/// Two switches with hosts that cannot reach each other, if any.
fn disconnected_pair(g: &SwitchGraph) -> Option<(SwitchId, SwitchId)> {
    let with_hosts: Vec<SwitchId> = g.ids().filter(|&s| g.hosts(s) > 0).collect();
    let first = *with_hosts.first()?;
    with_hosts.iter().find(|&&s| g.dist(first, s) == UNREACHABLE).map(|&s| (first, s))
}

/// The layers for the fabric's LMC, as `route` builds them.
pub fn layers_for(fabric: &Fabric, config: &Config) -> Result<Layers, Error> {
    let graph = fabric.graph();
    if graph.switch_count() == 0 {
        return Err(Error::declined(NAME, "the fabric has no switches; nothing to route"));
    }
    if let Some((a, b)) = disconnected_pair(graph) {
        let name = |s: SwitchId| fabric.describe_switch(s);
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
    Ok(build_layers(graph, count, config.layered.seed))
}

pub fn route(fabric: &Fabric, config: &Config) -> Result<Routing, Error> {
    let opts = &config.layered;
    let layers = layers_for(fabric, config)?;
    for l in 1..layers.count() {
        log::info!(
            "{NAME}: layer {l}: {} almost-minimal paths inserted, {} switch pairs without one (routed by the shortest path the layer allows)",
            layers.inserted[l],
            layers.no_path[l]
        );
    }
    let (lfts, lid_order) = forwarding_tables(fabric, &layers);
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
fn forwarding_tables(fabric: &Fabric, layers: &Layers) -> (Vec<Lft>, Vec<Lid>) {
    let graph = fabric.graph();
    let mut lfts = Routing::empty_lfts(fabric);
    let mut lid_order: Vec<(u32, Lid)> = Vec::new();
    for (at, port) in fabric.end_ports() {
        let Some(t) = fabric.lid_switch(port.lid) else {
            continue;
        };
        let last_port = fabric.delivery_port(at);
        for (k, lid) in port.lids().enumerate() {
            let layer = k % layers.count();
            lid_order.push((k as u32, lid));
            for s in graph.ids() {
                let out = if s == t {
                    last_port
                } else {
                    match layers.next(layer, s.idx(), t.idx()) {
                        Some(next) => {
                            let ports = graph.bundle(s, SwitchId::new(next));
                            ports[lid.idx() % ports.len()]
                        }
                        None => NO_PATH,
                    }
                };
                lfts[s].set(lid, out);
            }
        }
    }
    lid_order.sort_unstable();
    (lfts, lid_order.into_iter().map(|(_, lid)| lid).collect())
}

#[cfg(test)]
mod tests;

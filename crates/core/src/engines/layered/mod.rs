//! `layered`: multipath routing over LMC layers with almost-minimal paths
//! (Blach et al., "A High-Performance Design, Implementation, Deployment,
//! and Evaluation of the Slim Fly Network", §4, §5 and App. B.1).
//!
//! Layer l is what the fabric's LID base + l addresses, so a fabric with
//! `lmc N` gets 2^N layers: layer 0 balanced minimal paths (pssp's), every
//! other layer one almost-minimal path per switch pair where the layer
//! allows one, every LID balanced over what is left (`construct`). Deadlock freedom comes afterwards, from either the
//! virtual-layer pass (`deadlock::virtual_layers`) or the three-class
//! hop-position scheme (`hop_position`), as `layered.deadlock` says.

mod construct;
mod hop_position;
pub mod recognise;

pub use construct::{build_layers, Layers};

use crate::config::{ConfigError, OptionSpec, Section};
use crate::deadlock::virtual_layers::{self, LayeringOptions};
use crate::engines::{EngineInfo, Outcome};
use crate::error::{Decline, Error};
use crate::fabric::{Fabric, SwitchGraph, SwitchId, UNREACHABLE};
use crate::routing::{DlidChoice, Routing};

pub const NAME: &str = "layered";

const DEADLOCK: OptionSpec = OptionSpec {
    key: "deadlock",
    default: "vl_layers",
    help: "vl_layers (the virtual-layer pass pssp uses) or hop_position (3 VL classes by hop position; \
           paths of at most 3 switch hops)",
};
const SEED: OptionSpec = OptionSpec {
    key: "seed",
    default: "1",
    help: "order within a priority level of the layer construction; same seed, same tables",
};

/// How `layered` makes its multipath routing deadlock-free (§5.2 of the
/// Slim Fly paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayeredDeadlock {
    /// The virtual-layer pass `pssp` uses (DFSSSP's scheme): as many VLs as
    /// the paths' dependencies need.
    VlLayers,
    /// Three VL classes by hop position (first, second, third inter-switch
    /// hop), told apart with a proper switch colouring carried in the SL;
    /// any number of routing layers, paths of at most 3 switch hops.
    HopPosition,
}

/// layered's options (`layered.*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayeredOptions {
    pub deadlock: LayeredDeadlock,
    /// Options of the `VlLayers` scheme (`layered.max_vls` also bounds the
    /// VLs `HopPosition` spreads its three classes over).
    pub layering: LayeringOptions,
    /// Seed of the random order within a priority level (§B.1.2).
    pub seed: u64,
}

impl LayeredOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        let schemes = [
            ("vl_layers", LayeredDeadlock::VlLayers),
            ("hop_position", LayeredDeadlock::HopPosition),
        ];
        Ok(LayeredOptions {
            deadlock: s.choice(&DEADLOCK, &schemes)?,
            layering: LayeringOptions::read_with_multicast_vl(s)?,
            seed: s.number(&SEED, 0, u64::MAX)?,
        })
    }
}

impl Default for LayeredOptions {
    fn default() -> Self {
        LayeredOptions {
            deadlock: LayeredDeadlock::VlLayers,
            layering: LayeringOptions::with_multicast_vl(),
            seed: 1,
        }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "Slim Fly layered multipath: minimal layer 0, almost-minimal paths on LID offsets 1..2^LMC-1",
    needs_qos: true,
    options: &[
        &[DEADLOCK, SEED],
        virtual_layers::OPTIONS,
        &[virtual_layers::MULTICAST_VL],
    ],
    build: |s| {
        let options = LayeredOptions::read(s)?;
        Ok(Box::new(super::Configured { options, route: route_with_choice }))
    },
};

/// Two switches with hosts that cannot reach each other, if any.
fn disconnected_pair(g: &SwitchGraph) -> Option<(SwitchId, SwitchId)> {
    let with_hosts: Vec<SwitchId> = g.ids().filter(|&s| g.hosts(s) > 0).collect();
    let first = *with_hosts.first()?;
    with_hosts
        .iter()
        .find(|&&s| g.dist(first, s) == UNREACHABLE)
        .map(|&s| (first, s))
}

/// The layers for the fabric's LMC, as `route` builds them.
pub fn layers_for(fabric: &Fabric, opts: &LayeredOptions) -> Result<Layers, Error> {
    let graph = fabric.graph();
    if graph.switch_count() == 0 {
        return Err(Error::declined(
            NAME,
            Decline::NoSwitches,
            "the fabric has no switches; nothing to route",
        ));
    }
    if let Some((a, b)) = disconnected_pair(graph) {
        let name = |s: SwitchId| fabric.describe_switch(s);
        return Err(Error::declined(
            NAME,
            Decline::Disconnected,
            format!(
                "{} and {} have hosts but no path between them; cable the fabric back together",
                name(a),
                name(b)
            ),
        ));
    }
    // After the checks above, which say more precisely what is wrong than a
    // diameter would.
    recognise::recognise(fabric, graph)
        .map_err(|why| Error::declined(NAME, Decline::NotItsTopology, why))?;
    let count = 1usize << fabric.lmc();
    if count == 1 {
        log::warn!(
            "{NAME}: lmc is 0, so there is one layer of minimal paths and no multipath; \
             set `lmc 2` (4 layers) or `lmc 3` (8 layers) in opensm.conf for almost-minimal paths"
        );
    }
    Ok(build_layers(fabric, count, opts.seed))
}

/// The routing and which layer each source uses towards each destination:
/// with more than one layer, sources spread over the destination's LIDs
/// by host rank (`DlidChoice::spread_by_rank`), so the flows into one host
/// and the flows out of one host each use every layer in turn. With
/// opensm-patch the SA answers PathRecords with that choice; without it,
/// hosts take the SA's diagonal pairs (layer 0 for a SubnAdmGet).
fn route_with_choice(fabric: &Fabric, opts: &LayeredOptions) -> Result<Outcome, Error> {
    let routing = route(fabric, opts)?;
    let dlid_choice = (fabric.lmc() > 0).then(|| {
        DlidChoice::spread_by_rank(
            fabric
                .end_ports()
                .filter(|(at, _)| !fabric.node(at.node).is_switch())
                .map(|(_, p)| (p.lid, p.lid_count().min(u16::MAX as u32) as u16)),
        )
    });
    Ok(Outcome {
        routing,
        dlid_choice,
        lmc_request: None,
    })
}

pub fn route(fabric: &Fabric, opts: &LayeredOptions) -> Result<Routing, Error> {
    let layers = layers_for(fabric, opts)?;
    for l in 1..layers.count() {
        log::info!(
            "{NAME}: layer {l}: {} almost-minimal paths inserted, {} switch pairs without one (routed by the shortest path the layer allows)",
            layers.inserted[l],
            layers.no_path[l]
        );
    }
    let Layers {
        lfts,
        lid_order,
        edge_forwarding_index,
        ..
    } = layers;
    log::info!(
        "{NAME}: {} layers over {} LIDs (layer = LID offset from the port's base LID), edge forwarding index {edge_forwarding_index}",
        1usize << fabric.lmc(),
        lid_order.len()
    );
    match opts.deadlock {
        LayeredDeadlock::VlLayers => {
            virtual_layers::make_deadlock_free(NAME, fabric, lfts, &lid_order, &opts.layering)
        }
        LayeredDeadlock::HopPosition => {
            hop_position::make_deadlock_free(NAME, fabric, lfts, opts.layering.max_vls)
        }
    }
}

#[cfg(test)]
mod tests;

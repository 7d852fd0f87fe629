//! The routing engines, by the names users type in `routing_engine`.

pub mod dla;
pub mod hxdor;
pub mod layered;
pub mod mlid;
pub mod pssp;
pub mod sfmin;

use crate::config::Config;
use crate::error::Error;
use crate::fabric::Fabric;
use crate::routing::Routing;

pub type RouteFn = fn(&Fabric, &Config) -> Result<Routing, Error>;

pub struct EngineInfo {
    /// Name in `routing_engine` and on the CLI; never one of OpenSM's own.
    pub name: &'static str,
    pub summary: &'static str,
    pub route: RouteFn,
}

pub static ENGINES: &[EngineInfo] = &[
    EngineInfo {
        name: "dla",
        summary: "Kim & Dally minimal routing for fully connected Dragonflies; 1 SL, 2 VLs",
        route: dla::route,
    },
    EngineInfo {
        name: pssp::NAME,
        summary: "P-SSSP: globally balanced minimal paths, deadlock-free by virtual layers (SLs/VLs)",
        route: pssp::route,
    },
    EngineInfo {
        name: layered::NAME,
        summary: "Slim Fly layered multipath: minimal layer 0, almost-minimal paths on LID offsets 1..2^LMC-1",
        route: layered::route,
    },
    EngineInfo {
        name: mlid::NAME,
        summary: "multiple-LID routing for m-port n-trees: 2^LMC up*/down* paths per host, chosen per source",
        route: mlid::route,
    },
    EngineInfo {
        name: sfmin::NAME,
        summary: "minimal routing for Slim Fly (by MMS labels recovered from the graph) and other diameter-2 fabrics; VL 0 from hosts, VL 1 between switches",
        route: sfmin::route,
    },
    EngineInfo {
        name: hxdor::NAME,
        summary: "(Mixed) dimension-order routing for FlatFly/HyperX, hypercubes and tori (datelines in the SL), mapped from the bare graph",
        route: hxdor::route,
    },
];

pub fn find(name: &str) -> Result<&'static EngineInfo, Error> {
    ENGINES.iter().find(|e| e.name == name).ok_or_else(|| Error::UnknownEngine {
        name: name.to_string(),
        known: ENGINES.iter().map(|e| e.name.to_string()).collect(),
    })
}

/// Runs the named engine.
pub fn route(name: &str, fabric: &Fabric, config: &Config) -> Result<Routing, Error> {
    (find(name)?.route)(fabric, config)
}

//! The routing engines, by the names users type in `routing_engine`, and
//! the contract between an engine and the hosts that run it (the OpenSM
//! plugin, the `osmroute` CLI): an engine is built from its own section of
//! the configuration and turns a fabric into an `Outcome`. Hosts never
//! name an engine; what an engine asks of them is in its outcome.

pub mod balance;
pub mod dla;
mod example_config;
pub mod hand_built;
pub mod hxdor;
pub mod layered;
pub mod matrix;
pub mod mlid;
pub mod pssp;
pub mod sfmin;

pub use example_config::example_configuration;

use crate::config::{ConfigError, OptionSpec, Section};
use crate::error::Error;
use crate::fabric::Fabric;
use crate::routing::{DlidChoice, Routing};

/// What an engine computed and what it asks of the host.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub routing: Routing,
    /// Which DLID each source should use towards each destination, for
    /// engines whose paths depend on it (mlid's §4.2 path selection):
    /// hosts publish it (`osmroute-path-select.txt`) since applications
    /// need it to use the paths at all.
    pub dlid_choice: Option<DlidChoice>,
    /// An LMC the engine asks the subnet manager to configure and assign
    /// LIDs with (mlid's `raise_lmc`).
    pub lmc_request: Option<u8>,
}

impl From<Routing> for Outcome {
    fn from(routing: Routing) -> Self {
        Outcome {
            routing,
            dlid_choice: None,
            lmc_request: None,
        }
    }
}

/// An engine, configured.
pub trait Engine: Send + Sync {
    fn route(&self, fabric: &Fabric) -> Result<Outcome, Error>;
}

/// An engine whose configuration is one options value and whose work is
/// one function of it (every engine here).
pub(crate) struct Configured<O> {
    pub options: O,
    pub route: fn(&Fabric, &O) -> Result<Outcome, Error>,
}

impl<O: Send + Sync> Engine for Configured<O> {
    fn route(&self, fabric: &Fabric) -> Result<Outcome, Error> {
        (self.route)(fabric, &self.options)
    }
}

/// An engine as users and hosts know it.
pub struct EngineInfo {
    /// Name in `routing_engine` and on the CLI; never one of OpenSM's own.
    pub name: &'static str,
    pub summary: &'static str,
    /// Whether it relies on more than one VL on the fabrics it is made for,
    /// which OpenSM programs only with `qos TRUE`.
    pub needs_qos: bool,
    /// Its options, in groups (options shared by several engines, such as
    /// the virtual-layer pass's, are one group each), under the section
    /// named after the engine.
    pub options: &'static [&'static [OptionSpec]],
    /// Reads its section (unknown keys and bad values are errors) and
    /// builds the configured engine.
    pub build: fn(&Section) -> Result<Box<dyn Engine>, ConfigError>,
}

impl EngineInfo {
    /// Every option of the engine.
    pub fn option_specs(&self) -> impl Iterator<Item = &'static OptionSpec> {
        self.options.iter().flat_map(|group| group.iter())
    }
}

/// Every engine, in the order the plugin registers them.
pub static ENGINES: &[&EngineInfo] = &[
    &dla::INFO,
    &pssp::INFO,
    &layered::INFO,
    &mlid::INFO,
    &sfmin::INFO,
    &hxdor::INFO,
];

pub fn find(name: &str) -> Result<&'static EngineInfo, Error> {
    ENGINES
        .iter()
        .copied()
        .find(|e| e.name == name)
        .ok_or_else(|| Error::UnknownEngine {
            name: name.to_string(),
            known: ENGINES.iter().map(|e| e.name.to_string()).collect(),
        })
}

/// The sections a configuration file may have: every engine's and `dump`.
pub fn config_sections() -> Vec<&'static str> {
    ENGINES
        .iter()
        .map(|e| e.name)
        .chain([crate::config::DUMP_SECTION])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_builds_from_its_defaults_and_rejects_unknown_keys() {
        for info in ENGINES {
            assert!(
                (info.build)(&Section::empty(info.name)).is_ok(),
                "{}'s defaults must parse",
                info.name
            );
            let settings = crate::config::Settings::parse(
                &format!("{}.no_such_key 1\n", info.name),
                "t",
                &config_sections(),
            );
            let err = (info.build)(&settings.section(info.name))
                .err()
                .expect("unknown key refused");
            assert!(
                err.to_string().contains("unknown key"),
                "{}: {err}",
                info.name
            );
        }
        let names: std::collections::HashSet<&str> = ENGINES.iter().map(|e| e.name).collect();
        assert_eq!(names.len(), ENGINES.len(), "engine names are unique");
    }
}

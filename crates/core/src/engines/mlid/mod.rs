//! `mlid`: the Multiple LID routing of Lin, Chung & Huang ("A Multiple LID
//! Routing Scheme for Fat-Tree-Based InfiniBand Networks"), for m-port
//! n-trees and the generalized fat trees clusters run (parallel cables,
//! missing cables and switches, hosts above the leaves), recognised from
//! the bare graph (`topology::gft`).
//!
//! Every host has 2^LMC LIDs; LMC = log2((m/2)^(n−1)) gives one LID per
//! path between the two halves of an m-port n-tree. Every LID travels
//! up*/down*: down where the switch lies above its host, otherwise up by
//! the digits `lid_digits` gives that LID — the host's own d-mod-k digits
//! plus its offset's, so base LIDs alone spread like ftree's while a
//! host's LIDs still reach every up-path once. In a damaged tree a switch
//! takes the shortest up*/down* path there is. With fewer LIDs than paths
//! the offsets cover fewer paths, still spread. Sources pick the LID with
//! the path selection (§4.2, generalised: `choice_of`). Up*/down* routes
//! have no credit loops: one VL, SL2VL left as it is.
//!
//! Hosts on a switch above the leaves (a storage node on a top switch)
//! may have no up*/down* path to a destination: two top switches have no
//! switch above both. Such a pair goes down from its switch to the
//! nearest switch from which the destination's switch is reached going
//! only up, then up, on path SL 1, which every port maps to VL 1 (SL 0
//! stays on VL 0) — when the fabric offers two VLs and programs SL2VL
//! (`qos TRUE`); otherwise those pairs stay unrouted, logged. Why that
//! keeps the fabric free of credit loops: VL 0 carries only up*/down*
//! paths (acyclic, as before); VL 1 carries only down*-then-up* paths,
//! which never turn from an up-cable onto a down-cable, and a cycle of
//! channels in a tree, whose every cable joins two adjacent heights,
//! must climb and descend, so somewhere turn from up to down; no packet
//! changes VL on the way, so nothing leads from VL 1 back to VL 0. The
//! LFT entry for a LID is shared by every source: the descent only
//! enters switches that have no up*/down* path to the destination (so no
//! VL 0 route passes them) and turns only at a switch whose up*/down*
//! route, the one every other source there takes, climbs all the way
//! (`UpDownDistances::climbs`).

mod balance;
mod fill;
mod lmc;
mod selection;
mod vl1;

pub use lmc::LmcPlan;
pub use selection::path_selection;

use crate::config::{ConfigError, OptionSpec, Section};
use crate::deadlock::vl_layers::{self, LayeringOptions};
use crate::engines::{EngineInfo, Outcome};
use crate::error::Error;
use crate::fabric::Fabric;
use crate::routing::Routing;
use crate::topology::gft::{recognize, GenFatTree};

use fill::route_tree;
use lmc::lmc_for;
use selection::choice_of;

pub const NAME: &str = "mlid";

const RAISE_LMC: OptionSpec = OptionSpec {
    key: "raise_lmc",
    default: "FALSE",
    help: "raise OpenSM's lmc to what the tree needs and have it reassign every LID (see mlid in the README)",
};

/// mlid's options (`mlid.*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MlidOptions {
    /// When OpenSM's `lmc` is below what the tree needs, raise it and ask
    /// OpenSM for a heavy sweep that reassigns every LID (disruptive:
    /// every host's LIDs change once).
    pub raise_lmc: bool,
    /// The virtual layering of trees where some hosts have no up*/down*
    /// path to others (fewest VLs by default).
    pub layering: LayeringOptions,
}

impl Default for MlidOptions {
    fn default() -> Self {
        MlidOptions {
            raise_lmc: false,
            layering: LayeringOptions {
                balance_vls: false,
                ..LayeringOptions::default()
            },
        }
    }
}

impl MlidOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        Ok(MlidOptions {
            raise_lmc: s.flag(&RAISE_LMC)?,
            layering: LayeringOptions::read_fewest_vls(s)?,
        })
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary:
        "multiple-LID routing for m-port n-trees: 2^LMC up*/down* paths per host, chosen per source",
    needs_qos: false,
    options: &[&[RAISE_LMC], vl_layers::OPTIONS_FEWEST_VLS],
    build: |s| {
        Ok(Box::new(super::Configured {
            options: MlidOptions::read(s)?,
            route: outcome,
        }))
    },
};

/// The routing, the path selection every source needs to use it, and the
/// LMC to ask OpenSM for when `raise_lmc` is on and the LIDs fall short.
fn outcome(fabric: &Fabric, options: &MlidOptions) -> Result<Outcome, Error> {
    let tree = tree_of(fabric)?;
    let (routing, places) = route_tree(fabric, &tree, options)?;
    let lmc_request = if options.raise_lmc {
        lmc_for(fabric, &tree)
    } else {
        None
    };
    Ok(Outcome {
        routing,
        dlid_choice: Some(choice_of(fabric, &tree, &places)),
        lmc_request,
    })
}

/// The recognised tree, or a decline that says what is wrong. With LMC > 0
/// it also says which fallback works: OpenSM's ftree refuses LMC > 0
/// ("LMC > 0 is not supported by fat-tree routing"), so `mlid,ftree`
/// would end in minhop; updn routes every LID up*/down* and finds its
/// roots itself (checked under ibsim: tests/soak_opensm.rs).
pub fn tree_of(fabric: &Fabric) -> Result<GenFatTree, Error> {
    recognize(fabric).map_err(|why| {
        let fallback = if fabric.lmc() > 0 {
            format!(
                "; with lmc {} the next engine should be updn (`routing_engine mlid,updn`): ftree refuses LMC > 0",
                fabric.lmc()
            )
        } else {
            String::new()
        };
        Error::declined(NAME, format!("the fabric is not a fat tree: {why}{fallback}"))
    })
}

/// The LMC to configure for this fabric, when it differs from the one the
/// LIDs were assigned with (for `mlid.raise_lmc`).
pub fn lmc_to_request(fabric: &Fabric) -> Result<Option<u8>, Error> {
    Ok(lmc_for(fabric, &tree_of(fabric)?))
}

pub fn route(fabric: &Fabric, options: &MlidOptions) -> Result<Routing, Error> {
    Ok(route_tree(fabric, &tree_of(fabric)?, options)?.0)
}

#[cfg(test)]
mod tests;

//! `mlid`: fat-tree routing after the Multiple LID scheme of Lin, Chung &
//! Huang ("A Multiple LID Routing Scheme for Fat-Tree-Based InfiniBand
//! Networks"), for the trees clusters run: m-port n-trees, PGFTs with
//! bundles, director chassis seen as line and spine chips, Aggregation
//! Nodes on every chip, empty leaves, hosts on spines, missing cables and
//! switches — recognised from the bare graph (`topology::gft`).
//!
//! Every port has 2^LMC LIDs, each routed up*/down* (`fill`, balanced by
//! counters in `balance`: one chain per LID from its switch to a root,
//! every other switch meeting it over its least-loaded cable), a port's
//! LIDs over different up-paths; sources pick a LID by rank (`selection`,
//! §4.2 generalised). `lmc` says how many LIDs the tree asks for.
//!
//! Up*/down* routes have no credit loops: one VL. Hosts above the leaves
//! with no up*/down* path between them go down, then up, on SL 1 / VL 1
//! (`vl1`): VL 0 carries only up*/down* paths (acyclic); VL 1 only
//! down*-then-up* paths, which never turn from an up-cable onto a
//! down-cable, while a cycle of channels in a tree, whose every cable
//! joins two adjacent heights, must turn from up to down somewhere; no
//! packet changes VL on the way. The LFT entry for a LID is shared by
//! every source: the descent only enters switches that have no up*/down*
//! path to the destination (so no VL 0 route passes them) and turns only
//! at a switch whose up*/down* route climbs all the way
//! (`UpDownDistances::climbs`). Pairs with neither (Aggregation Nodes on
//! line chips of two directors) take shortest paths, and every path is
//! then placed on a virtual layer free of credit loops (the fewest VLs),
//! or mlid declines naming the setting that gives it more. No route is
//! ever left undelivered.

mod balance;
mod fill;
mod lmc;
mod repair;
mod selection;
mod vl1;

pub use lmc::LmcPlan;
pub use selection::path_selection;

use crate::config::{ConfigError, OptionSpec, Section};
use crate::deadlock::virtual_layers::{self, LayeringOptions};
use crate::engines::{EngineInfo, Outcome};
use crate::error::{Decline, Error};
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
    help: "raise OpenSM's lmc to what the tree needs and have it reassign every LID (see docs/engines/mlid.md)",
};

/// On by default (the config's default; `MlidOptions::default()`, which
/// the engine's own tests route with, keeps it off): where mlid layers
/// its paths (Aggregation Nodes on line chips of two directors) no tree
/// that joins both directors fits beside unicast layer 0, which turns at
/// the leaves from one director into the other; only a VL more gives the
/// IPoIB broadcast group, of every CA, a checked tree
/// (`multicast::rules`, docs/multicast.md).
const MULTICAST_VL: OptionSpec = OptionSpec {
    key: "multicast_vl",
    default: "TRUE",
    help: "where paths go to virtual layers and one more VL is available: unicast on SLs/VLs 1.., VL 0 kept \
           for multicast on SL 0 (the IPoIB broadcast group), whose trees are then checked loop-free",
};

/// mlid's options (`mlid.*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MlidOptions {
    /// When OpenSM's `lmc` is below what the tree needs, raise it and ask
    /// OpenSM for a heavy sweep that reassigns every LID (disruptive:
    /// every host's LIDs change once).
    pub raise_lmc: bool,
    /// The virtual layering of trees where some hosts have no up*/down*
    /// path to others (fewest VLs by default).
    pub layering: LayeringOptions,
}

impl MlidOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        Ok(MlidOptions {
            raise_lmc: s.flag(&RAISE_LMC)?,
            layering: LayeringOptions {
                multicast_vl: s.flag(&MULTICAST_VL)?,
                ..LayeringOptions::read(s)?
            },
        })
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary:
        "multiple-LID routing for m-port n-trees: 2^LMC up*/down* paths per host, chosen per source",
    needs_qos: false,
    options: &[&[RAISE_LMC, MULTICAST_VL], virtual_layers::OPTIONS],
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
        Error::declined(
            NAME,
            Decline::NotItsTopology,
            format!("the fabric is not a fat tree: {why}{fallback}"),
        )
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

//! osmroute-core: the fabric model, topology recognition, routing engines
//! and their analysis, in safe Rust with no dependency on OpenSM. The
//! OpenSM plugin and the `osmroute` CLI are thin layers over this crate.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod config;
pub mod deadlock;
pub mod dumps;
pub mod engines;
pub mod error;
pub mod fabric;
pub mod gen;
pub mod io;
pub mod multicast;
pub mod parallel;
pub mod pipeline;
pub mod rng;
pub mod routing;
#[cfg(test)]
pub(crate) mod testkit;
pub mod topology;

pub use error::{Decline, Error};
pub use fabric::{
    Fabric, FabricBuilder, FabricError, Lid, Node, NodeId, NodeKind, Peer, Port, PortNum, PortRef,
    SwitchId,
};
pub use routing::{Lft, PathSl, Routing, Sl2Vl, NO_PATH};

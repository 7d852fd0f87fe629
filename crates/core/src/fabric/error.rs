//! What can be wrong with a fabric description; each message says what to
//! fix.

use std::fmt;

use super::MAX_UNICAST_LID;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FabricError {
    NoSuchPort {
        node: String,
        port: u8,
    },
    PortAlreadyLinked {
        node: String,
        port: u8,
    },
    AsymmetricLink {
        node: String,
        port: u8,
    },
    LidOutOfRange {
        node: String,
        port: u8,
        lid: u16,
        lmc: u8,
    },
    LidNotAligned {
        node: String,
        port: u8,
        lid: u16,
        lmc: u8,
    },
    DuplicateLid {
        lid: u16,
        first: String,
        second: String,
    },
    DuplicateGuid {
        guid: u64,
    },
    DuplicatePortGuid {
        guid: u64,
        first: String,
        second: String,
    },
    LidSpaceExhausted {
        needed: u32,
    },
    CaSelfLink {
        node: String,
    },
    /// Port 255 is the forwarding tables' "no path": a cable there could
    /// never be routed to.
    ReservedPort {
        node: String,
    },
}

impl fmt::Display for FabricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FabricError::NoSuchPort { node, port } => {
                write!(f, "node {node} has no port {port}; check the port count in the fabric description")
            }
            FabricError::PortAlreadyLinked { node, port } => {
                write!(f, "port {port} of {node} is cabled twice; each port takes one cable")
            }
            FabricError::AsymmetricLink { node, port } => write!(
                f,
                "port {port} of {node} names a peer that does not name it back; make both ends of the cable agree"
            ),
            FabricError::LidOutOfRange { node, port, lid, lmc } => write!(
                f,
                "port {port} of {node} has LID {lid} with LMC {lmc}, which leaves the unicast range 1..={MAX_UNICAST_LID}"
            ),
            FabricError::LidNotAligned { node, port, lid, lmc } => write!(
                f,
                "port {port} of {node} has base LID {lid}, not a multiple of 2^LMC = {}; LIDs with LMC {lmc} must be aligned",
                1u32 << lmc
            ),
            FabricError::DuplicateLid { lid, first, second } => {
                write!(f, "LID {lid} is used by both {first} and {second}; every LID must be unique")
            }
            FabricError::DuplicateGuid { guid } => {
                write!(f, "node GUID {guid:#018x} appears twice; GUIDs must be unique")
            }
            FabricError::DuplicatePortGuid { guid, first, second } => write!(
                f,
                "port GUID {guid:#018x} belongs to both {first} and {second}; port GUIDs must be unique \
                 (two nodes merged by mistake, or a file edited by hand?)"
            ),
            FabricError::LidSpaceExhausted { needed } => write!(
                f,
                "the fabric needs {needed} unicast LIDs but only {MAX_UNICAST_LID} exist; lower the LMC"
            ),
            FabricError::CaSelfLink { node } => {
                write!(f, "channel adapter {node} is cabled to itself")
            }
            FabricError::ReservedPort { node } => write!(
                f,
                "{node} has a port 255, which forwarding tables use for \"no path\": no switch can route to it; \
                 InfiniBand ports are numbered 1 to 254"
            ),
        }
    }
}

impl std::error::Error for FabricError {}

//! The core crate's error type. Every variant's message says what is wrong
//! and what would fix it: it ends up verbatim in OpenSM's log or on the
//! CLI user's terminal. Every error carries a stable code (`osmroute-D003`)
//! that the message shows and docs/codes.md explains, so operators can
//! look a line up and tests can assert what happened without pinning the
//! wording.

use std::fmt;

use crate::config::ConfigError;
use crate::fabric::FabricError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The fabric description itself is inconsistent.
    Fabric(FabricError),
    /// The engine cannot route this fabric (wrong topology, missing
    /// resources); `reason` names the offending part and the fix.
    Declined {
        engine: String,
        code: Decline,
        reason: String,
    },
    /// The engine's configuration is invalid.
    Config(ConfigError),
    /// No engine of that name exists.
    UnknownEngine { name: String, known: Vec<String> },
}

/// Why an engine declines: one stable code per kind of reason. OpenSM then
/// tries the next engine of `routing_engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decline {
    /// The fabric has no switches.
    NoSwitches,
    /// Switches (with hosts) that cannot reach each other.
    Disconnected,
    /// The fabric is not the topology the engine's scheme is made for.
    NotItsTopology,
    /// The fabric is that topology, but damaged beyond what the engine's
    /// deadlock argument tolerates.
    TooDamaged,
    /// The routing needs more than one VL and `qos` is FALSE, so OpenSM
    /// would not program the SL2VL tables.
    QosOff,
    /// The routing needs more VLs than `max_op_vls`, the ports or the
    /// engine's option allow.
    TooFewVls,
    /// The scheme runs out of service levels (16).
    OutOfSls,
    /// Paths longer than the scheme's VL assignment covers.
    PathsTooLong,
    /// A bad line in osmroute.conf concerns this engine.
    Configuration,
    /// The subnet as OpenSM holds it (or the file) is not a valid fabric.
    InvalidFabric,
    /// A bug: the engine's own consistency check failed.
    Internal,
}

impl Decline {
    /// Every code, in the order docs/codes.md lists them.
    pub const ALL: [Decline; 11] = [
        Decline::NoSwitches,
        Decline::Disconnected,
        Decline::NotItsTopology,
        Decline::TooDamaged,
        Decline::QosOff,
        Decline::TooFewVls,
        Decline::OutOfSls,
        Decline::PathsTooLong,
        Decline::Configuration,
        Decline::InvalidFabric,
        Decline::Internal,
    ];

    /// The stable code, as the log shows it.
    pub fn code(self) -> &'static str {
        match self {
            Decline::NoSwitches => "osmroute-D001",
            Decline::Disconnected => "osmroute-D002",
            Decline::NotItsTopology => "osmroute-D003",
            Decline::TooDamaged => "osmroute-D004",
            Decline::QosOff => "osmroute-D005",
            Decline::TooFewVls => "osmroute-D006",
            Decline::OutOfSls => "osmroute-D007",
            Decline::PathsTooLong => "osmroute-D008",
            Decline::Configuration => "osmroute-D009",
            Decline::InvalidFabric => "osmroute-D010",
            Decline::Internal => "osmroute-D011",
        }
    }
}

impl fmt::Display for Decline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Codes of the errors that are not declines.
pub const INVALID_FABRIC: &str = "osmroute-E001";
pub const BAD_CONFIGURATION: &str = "osmroute-E002";
pub const UNKNOWN_ENGINE: &str = "osmroute-E003";

impl Error {
    pub fn declined(engine: &str, code: Decline, reason: impl Into<String>) -> Self {
        Error::Declined {
            engine: engine.to_string(),
            code,
            reason: reason.into(),
        }
    }

    /// The stable code of this error (docs/codes.md).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Fabric(_) => INVALID_FABRIC,
            Error::Declined { code, .. } => code.code(),
            Error::Config(_) => BAD_CONFIGURATION,
            Error::UnknownEngine { .. } => UNKNOWN_ENGINE,
        }
    }

    /// Why the engine declined, if it did.
    pub fn decline(&self) -> Option<Decline> {
        match self {
            Error::Declined { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Fabric(e) => write!(f, "invalid fabric [{INVALID_FABRIC}]: {e}"),
            Error::Declined {
                engine,
                code,
                reason,
            } => write!(f, "{engine} declines [{code}]: {reason}"),
            Error::Config(e) => write!(f, "[{BAD_CONFIGURATION}] {e}"),
            Error::UnknownEngine { name, known } => {
                write!(
                    f,
                    "[{UNKNOWN_ENGINE}] no routing engine named '{name}'; known engines: {}",
                    known.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<FabricError> for Error {
    fn from(e: FabricError) -> Self {
        Error::Fabric(e)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Config(e)
    }
}

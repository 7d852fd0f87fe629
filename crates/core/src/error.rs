//! The core crate's error type. Every variant's message says what is wrong
//! and what would fix it: it ends up verbatim in OpenSM's log or on the
//! CLI user's terminal.

use std::fmt;

use crate::config::ConfigError;
use crate::fabric::FabricError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The fabric description itself is inconsistent.
    Fabric(FabricError),
    /// The engine cannot route this fabric (wrong topology, missing
    /// resources); `reason` names the offending part and the fix.
    Declined { engine: String, reason: String },
    /// The engine's configuration is invalid.
    Config(ConfigError),
    /// No engine of that name exists.
    UnknownEngine { name: String, known: Vec<String> },
}

impl Error {
    pub fn declined(engine: &str, reason: impl Into<String>) -> Self {
        Error::Declined {
            engine: engine.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Fabric(e) => write!(f, "invalid fabric: {e}"),
            Error::Declined { engine, reason } => write!(f, "{engine} declines: {reason}"),
            Error::Config(e) => write!(f, "{e}"),
            Error::UnknownEngine { name, known } => {
                write!(
                    f,
                    "no routing engine named '{name}'; known engines: {}",
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

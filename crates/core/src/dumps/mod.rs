//! Files that describe a routing: what OpenSM dumps, what ibdmchk reads,
//! and what `osmroute route` writes.

pub mod bundle;
pub mod ibdmchk;
pub mod lfts;
pub mod mcfdbs;
pub mod osm_sl2vl;
pub mod path_select;
pub mod subnet_lst;
pub mod switch_sl;

use std::fmt;

/// File names as the plugin, OpenSM and `osmroute route` write them.
pub const PATH_SL_FILE: &str = "osmroute-path-sl.txt";
pub const SL2VL_FILE: &str = "osmroute-sl2vl.txt";
pub const SUBNET_FILE: &str = "opensm-subnet.lst";
pub const LFTS_FILE: &str = "opensm-lfts.dump";
/// OpenSM's own SL2VL dump (`-D 0x43` with `qos TRUE`); read when the
/// plugin's `SL2VL_FILE` is absent.
pub const OSM_SL2VL_FILE: &str = "opensm-sl2vl.dump";

/// A dump that cannot be read: which file, which line, what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl DumpError {
    pub fn new(file: &str, line: usize, message: impl Into<String>) -> Self {
        DumpError {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for DumpError {}

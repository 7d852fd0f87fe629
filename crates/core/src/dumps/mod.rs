//! Files that describe a routing: what OpenSM dumps and what ibdmchk reads.

pub mod ibdmchk;

/// File names as the plugin and `osmroute route` write them.
pub const PATH_SL_FILE: &str = "osmroute-path-sl.txt";
pub const SL2VL_FILE: &str = "osmroute-sl2vl.txt";

//! Making routings deadlock-free after the fact: virtual layers over the
//! channel dependency graph.

pub mod dynamic_dag;
pub mod hop_vls;
pub mod virtual_layers;

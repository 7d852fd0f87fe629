//! Recognising topology families in the bare switch graph.

pub mod dragonfly;
pub mod fattree;
pub mod mapping;
pub mod switch_graph;

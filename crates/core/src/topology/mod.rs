//! Recognising topology families in the bare switch graph.

pub mod dragonfly;
pub mod dragonfly_plus;
pub mod gft;
pub mod grid;
pub mod isomorphism;
pub mod mapping;
pub mod slimfly;

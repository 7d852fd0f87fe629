//! Judging a routing: where packets go, how far, how loaded, and whether
//! the channel dependencies it creates can deadlock.

pub mod bounds;
pub mod churn;
pub mod credit;
pub mod ebb;
pub mod group_shift;
pub mod multipath;
pub mod report;

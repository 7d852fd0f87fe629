//! Hosts above the leaves with no up*/down* path between them: down, then
//! up, on SL 1 / VL 1 (see the module documentation for why that keeps
//! the fabric free of credit loops).

use crate::fabric::Fabric;
use crate::routing::{Sl2Vl, SlVlTable, NUM_SLS};

/// The path SL of the down-then-up routes; every port maps it to VL 1.
pub(super) const VL1_SL: u8 = 1;

/// SL 1 on VL 1 on every switch port pair and CA port, every other SL on
/// VL 0.
pub(super) fn vl1_tables(fabric: &Fabric) -> Sl2Vl {
    let mut table: SlVlTable = [0; NUM_SLS];
    table[VL1_SL as usize] = 1;
    let mut tables = Sl2Vl::new(fabric, table);
    tables.set_ca(0, 0);
    tables.set_ca(VL1_SL, 1);
    tables
}

//! What an engine produces: forwarding tables, SL-to-VL tables and the SL
//! each path uses. The plugin writes a `Routing` into OpenSM, the CLI into
//! dump files; the analysis reads it back from either.

mod dlid_choice;
mod hops;
mod path_sl;
mod sl2vl;
pub mod walk;

pub use dlid_choice::DlidChoice;
pub use hops::HopTable;
pub use path_sl::{PathSl, SwitchSls};
pub use sl2vl::{pack_sl2vl, unpack_sl2vl, Sl2Vl, SlVlTable, ALL_VL0, NUM_SLS};

use crate::fabric::{Fabric, Lid, PortNum};

/// LFT entry for "no route" (what OpenSM pre-fills `new_lft` with).
pub const NO_PATH: PortNum = PortNum::NO_PATH;

/// One switch's linear forwarding table: the out-port for every LID
/// 0..=max LID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lft(Vec<u8>);

impl Lft {
    /// `len` entries, all `NO_PATH`.
    pub fn new(len: usize) -> Self {
        Lft(vec![NO_PATH.raw(); len])
    }

    /// The out-port for `lid` (`NO_PATH` beyond the table).
    pub fn get(&self, lid: Lid) -> PortNum {
        PortNum::new(self.0.get(lid.idx()).copied().unwrap_or(NO_PATH.raw()))
    }

    /// Sets the out-port for `lid`; LIDs beyond the table are ignored.
    pub fn set(&mut self, lid: Lid, port: PortNum) {
        if let Some(entry) = self.0.get_mut(lid.idx()) {
            *entry = port.raw();
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The table as OpenSM stores it: one port byte per LID.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// A complete routing of one fabric.
#[derive(Clone, Debug)]
pub struct Routing {
    /// Engine name as users type it in `routing_engine`.
    pub engine: String,
    /// Per switch (index = `SwitchId`), the forwarding table (`NO_PATH`
    /// where there is no route; port 0 for the switch's own LIDs).
    pub lfts: Vec<Lft>,
    /// `None`: the engine needs one VL and leaves SL2VL to OpenSM.
    pub sl2vl: Option<Sl2Vl>,
    pub path_sl: PathSl,
}

impl Routing {
    /// Tables with every entry `NO_PATH` except each switch's own LIDs.
    pub fn empty_lfts(fabric: &Fabric) -> Vec<Lft> {
        let mut lfts = vec![Lft::new(fabric.lft_len()); fabric.switch_count()];
        for (lid, owner) in fabric.lids() {
            if let Some(s) = fabric.switch_id(owner.node) {
                lfts[s].set(lid, PortNum::MANAGEMENT);
            }
        }
        lfts
    }

    /// Number of VLs the routing relies on for deadlock freedom.
    pub fn vls_needed(&self) -> u8 {
        self.sl2vl.as_ref().map_or(1, Sl2Vl::vls_used)
    }

    /// Hop counts from every switch towards each of `lids` along the LFTs
    /// (see `HopTable`).
    pub fn hop_table(&self, fabric: &Fabric, lids: &[Lid]) -> HopTable {
        HopTable::new(fabric, &self.lfts, lids)
    }
}

//! What an engine produces: forwarding tables, SL-to-VL tables and the SL
//! each path uses. The plugin writes a `Routing` into OpenSM, the CLI into
//! dump files; the analysis reads it back from either.

use crate::fabric::{Fabric, NodeKind, Peer};

/// LFT entry for "no route" (what OpenSM pre-fills `new_lft` with).
pub const NO_PATH: u8 = 0xff;

/// Number of SLs and of table entries in an SL2VL table.
pub const NUM_SLS: usize = 16;

/// VL for each SL (index = SL).
pub type SlVlTable = [u8; NUM_SLS];

/// The table that keeps every SL on VL 0.
pub const ALL_VL0: SlVlTable = [0; NUM_SLS];

/// Distinct tables an `Sl2Vl` holds (it refers to them by a byte).
pub const MAX_TABLES: usize = 256;

/// Per switch and (in-port, out-port), which SL-to-VL table applies.
///
/// Tables are stored once in a palette and referenced by a byte per port
/// pair: a 2,064-switch Dragonfly with 32-port switches has two million port
/// pairs but only two distinct tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sl2Vl {
    palette: Vec<SlVlTable>,
    /// Per switch index: `ports * ports` palette indices, row = in-port.
    switch_tables: Vec<(usize, Vec<u8>)>,
    /// What CA ports map each SL to; `None` leaves OpenSM's QoS setting.
    ca: [Option<u8>; NUM_SLS],
}

impl Sl2Vl {
    /// Every switch port pair starts at `default`; CA ports keep OpenSM's.
    pub fn new(fabric: &Fabric, default: SlVlTable) -> Self {
        let switch_tables = fabric
            .switches()
            .iter()
            .map(|&n| {
                let ports = fabric.node(n).port_slots();
                (ports, vec![0u8; ports * ports])
            })
            .collect();
        Sl2Vl { palette: vec![default], switch_tables, ca: [None; NUM_SLS] }
    }

    /// The table's index in the palette, added if new; None when the
    /// palette is full.
    fn palette_index(&mut self, table: SlVlTable) -> Option<u8> {
        if let Some(i) = self.palette.iter().position(|t| *t == table) {
            return Some(i as u8);
        }
        if self.palette.len() >= MAX_TABLES {
            return None;
        }
        self.palette.push(table);
        Some((self.palette.len() - 1) as u8)
    }

    /// Sets the table a switch applies to packets entering `in_port` and
    /// leaving `out_port`. Ports beyond the switch's port count are ignored.
    pub fn set_switch(&mut self, switch: usize, in_port: u8, out_port: u8, table: SlVlTable) {
        if self.try_set_switch(switch, in_port, out_port, table).is_err() {
            panic!("more than {MAX_TABLES} distinct SL2VL tables");
        }
    }

    /// `set_switch` for tables read from files: an error instead of a
    /// panic when a 257th distinct table would be needed.
    pub fn try_set_switch(&mut self, switch: usize, in_port: u8, out_port: u8, table: SlVlTable) -> Result<(), String> {
        let idx = self.palette_index(table).ok_or_else(|| {
            format!("more than {MAX_TABLES} distinct SL2VL tables; osmroute can analyse at most {MAX_TABLES}")
        })?;
        let (ports, cells) = &mut self.switch_tables[switch];
        let (i, o) = (in_port as usize, out_port as usize);
        if i < *ports && o < *ports {
            cells[i * *ports + o] = idx;
        }
        Ok(())
    }

    pub fn switch_table(&self, switch: usize, in_port: u8, out_port: u8) -> &SlVlTable {
        let (ports, cells) = &self.switch_tables[switch];
        let (i, o) = (in_port as usize, out_port as usize);
        if i < *ports && o < *ports {
            &self.palette[cells[i * *ports + o] as usize]
        } else {
            &self.palette[0]
        }
    }

    pub fn set_ca(&mut self, sl: u8, vl: u8) {
        self.ca[sl as usize & 0xf] = Some(vl);
    }

    /// Applies this routing's CA-port requirements on top of `base`.
    pub fn ca_table(&self, base: &SlVlTable) -> SlVlTable {
        let mut t = *base;
        for (sl, vl) in self.ca.iter().enumerate() {
            if let Some(vl) = vl {
                t[sl] = *vl;
            }
        }
        t
    }

    /// Number of ports (including port 0) the tables of `switch` cover.
    pub fn switch_ports(&self, switch: usize) -> usize {
        self.switch_tables[switch].0
    }

    /// Highest VL any table maps an SL to, plus one.
    pub fn vls_used(&self) -> u8 {
        let used = self.palette.iter().flat_map(|t| t.iter()).copied().max().unwrap_or(0);
        let ca = self.ca.iter().flatten().copied().max().unwrap_or(0);
        used.max(ca) + 1
    }
}

/// The SL a path from source LID to destination LID uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSl {
    /// Every path uses the same SL.
    Uniform(u8),
    /// SL per (source LID, destination LID), e.g. read back from a path-SL
    /// dump; pairs not listed use `default`.
    Pairs { default: u8, sl: std::collections::HashMap<(u16, u16), u8> },
    /// SL per (source switch, destination LID): with destination-based
    /// tables every port on one switch (the switch itself and its CAs)
    /// takes the same path to a LID, so they share its SL. One byte per
    /// switch and LID keeps this small enough for 16k-host fabrics.
    PerSourceSwitch(SwitchSls),
}

/// The table behind `PathSl::PerSourceSwitch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSls {
    /// Per LID: index of the switch that owns it or that its CA is cabled
    /// to (`u32::MAX` for none).
    source_switch: Vec<u32>,
    /// `switch * lids + dlid` -> SL.
    sl: Vec<u8>,
    lids: usize,
}

impl SwitchSls {
    /// Every (switch, LID) at SL 0.
    pub fn new(fabric: &Fabric) -> Self {
        let lids = fabric.max_lid() as usize + 1;
        let mut source_switch = vec![u32::MAX; lids];
        for (lid, _) in fabric.lids() {
            if let Some(sw) = fabric.lid_switch(lid).and_then(|n| fabric.switch_index(n)) {
                source_switch[lid as usize] = sw as u32;
            }
        }
        SwitchSls { source_switch, sl: vec![0; fabric.switches().len() * lids], lids }
    }

    pub fn set(&mut self, switch: usize, dlid: u16, sl: u8) {
        self.sl[switch * self.lids + dlid as usize] = sl;
    }

    pub fn get(&self, switch: usize, dlid: u16) -> u8 {
        self.sl.get(switch * self.lids + dlid as usize).copied().unwrap_or(0)
    }

    /// SL of the path from `slid` to `dlid`; 0 for LIDs the fabric lacks.
    pub fn sl(&self, slid: u16, dlid: u16) -> u8 {
        match self.source_switch.get(slid as usize) {
            Some(&sw) if sw != u32::MAX && (dlid as usize) < self.lids => self.get(sw as usize, dlid),
            _ => 0,
        }
    }
}

impl PathSl {
    pub fn sl(&self, slid: u16, dlid: u16) -> u8 {
        match self {
            PathSl::Uniform(sl) => *sl,
            PathSl::Pairs { default, sl } => sl.get(&(slid, dlid)).copied().unwrap_or(*default),
            PathSl::PerSourceSwitch(t) => t.sl(slid, dlid),
        }
    }

    /// Whether all ports on one switch use the same SL towards each LID
    /// (so analyses may trace one representative per switch).
    pub fn same_per_switch(&self) -> bool {
        !matches!(self, PathSl::Pairs { .. })
    }

    /// The SLs any path may use, ascending.
    pub fn sls_used(&self) -> Vec<u8> {
        let mut v: Vec<u8> = match self {
            PathSl::Uniform(sl) => vec![*sl],
            PathSl::Pairs { default, sl } => sl.values().copied().chain(std::iter::once(*default)).collect(),
            PathSl::PerSourceSwitch(t) => {
                let mut seen = [false; NUM_SLS];
                t.sl.iter().for_each(|&s| seen[s as usize & 0xf] = true);
                (0..NUM_SLS as u8).filter(|&s| seen[s as usize]).collect()
            }
        };
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// A complete routing of one fabric.
#[derive(Clone, Debug)]
pub struct Routing {
    /// Engine name as users type it in `routing_engine`.
    pub engine: String,
    /// Per switch index, the out-port for every LID 0..=max_lid (`NO_PATH`
    /// where there is none; 0 for the switch's own LIDs).
    pub lfts: Vec<Vec<u8>>,
    /// `None`: the engine needs one VL and leaves SL2VL to OpenSM.
    pub sl2vl: Option<Sl2Vl>,
    pub path_sl: PathSl,
}

impl Routing {
    /// Tables with every entry `NO_PATH` except each switch's own LIDs.
    pub fn empty_lfts(fabric: &Fabric) -> Vec<Vec<u8>> {
        let len = fabric.max_lid() as usize + 1;
        let mut lfts = vec![vec![NO_PATH; len]; fabric.switches().len()];
        for (lid, owner) in fabric.lids() {
            if fabric.node(owner.node).kind == NodeKind::Switch {
                if let Some(si) = fabric.switch_index(owner.node) {
                    lfts[si][lid as usize] = 0;
                }
            }
        }
        lfts
    }

    /// Number of VLs the routing relies on for deadlock freedom.
    pub fn vls_needed(&self) -> u8 {
        self.sl2vl.as_ref().map_or(1, Sl2Vl::vls_used)
    }

    /// Hop counts from every switch towards each of `lids` along the LFTs,
    /// the way OpenSM's hop tables count them: 0 to the switch's own LID, 1
    /// to a CA cabled to it, one more per switch passed; `NO_PATH` where the
    /// tables do not deliver (loop, black hole, no entry, unknown LID).
    pub fn hop_table(&self, fabric: &Fabric, lids: &[u16]) -> HopTable {
        let switches = self.lfts.len();
        let behind = fabric.switch_port_peers();
        // Sentinels while one LID's column is being resolved.
        const UNKNOWN: u8 = 0xfe;
        const ON_CHAIN: u8 = 0xfd;
        let mut data = vec![NO_PATH; lids.len() * switches];
        let mut columns: Vec<&mut [u8]> = data.chunks_mut(switches.max(1)).collect();
        // Columns (one per LID) are independent: resolve them on all cores.
        crate::parallel::for_each_row(&mut columns, |k, col| {
            let lid = lids[k];
            let Some(owner) = fabric.lid_owner(lid) else { return };
            col.fill(UNKNOWN);
            let lid = lid as usize;
            let mut chain = Vec::with_capacity(16);
            for start in 0..switches {
                if col[start] != UNKNOWN {
                    continue;
                }
                // Follow the tables until delivery, a dead end, a loop, or
                // a switch already resolved; `last` is the hop count of the
                // last switch on the chain.
                chain.clear();
                let mut cur = start;
                let last: Option<u8> = loop {
                    chain.push(cur);
                    col[cur] = ON_CHAIN;
                    let port = self.lfts[cur].get(lid).copied().unwrap_or(NO_PATH);
                    if port == 0 {
                        break (owner.node == fabric.switches()[cur]).then_some(0);
                    }
                    match behind[cur].get(port as usize).copied().flatten() {
                        Some(Peer::Switch(next)) => match col[next] {
                            UNKNOWN => cur = next,
                            ON_CHAIN | NO_PATH => break None,
                            h => break h.checked_add(1),
                        },
                        Some(Peer::Ca(ca)) => break (owner.node == ca).then_some(1),
                        None => break None,
                    }
                };
                let mut h = last;
                for &sw in chain.iter().rev() {
                    col[sw] = h.filter(|v| *v < ON_CHAIN).unwrap_or(NO_PATH);
                    h = h.and_then(|v| v.checked_add(1));
                }
            }
        });
        // Readers go switch by switch (one OpenSM switch at a time), so
        // store the table switch-major.
        let mut by_switch = vec![NO_PATH; data.len()];
        for (k, col) in data.chunks(switches.max(1)).enumerate() {
            for (s, &h) in col.iter().enumerate() {
                by_switch[s * lids.len() + k] = h;
            }
        }
        HopTable { lids: lids.to_vec(), data: by_switch }
    }
}

/// Hop counts from every switch towards a set of LIDs (see
/// `Routing::hop_table`), stored switch-major.
#[derive(Clone, Debug)]
pub struct HopTable {
    pub lids: Vec<u16>,
    data: Vec<u8>,
}

impl HopTable {
    /// Hops from switch index `switch` to `self.lids[k]`.
    pub fn get(&self, k: usize, switch: usize) -> u8 {
        self.data[switch * self.lids.len() + k]
    }

    /// Hops from `switch` to each of `self.lids`, in that order.
    pub fn row(&self, switch: usize) -> &[u8] {
        &self.data[switch * self.lids.len()..(switch + 1) * self.lids.len()]
    }
}

/// Packs an SL-to-VL table into the 8 bytes of an IB SLtoVLMappingTable:
/// byte i holds SL 2i in the high nibble and SL 2i+1 in the low one.
pub fn pack_sl2vl(table: &SlVlTable) -> [u8; 8] {
    let mut raw = [0u8; 8];
    for (i, byte) in raw.iter_mut().enumerate() {
        *byte = (table[2 * i] & 0xf) << 4 | (table[2 * i + 1] & 0xf);
    }
    raw
}

pub fn unpack_sl2vl(raw: &[u8; 8]) -> SlVlTable {
    let mut t = [0u8; NUM_SLS];
    for (i, byte) in raw.iter().enumerate() {
        t[2 * i] = byte >> 4;
        t[2 * i + 1] = byte & 0xf;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricBuilder, PortRef};

    #[test]
    fn sl2vl_packing_round_trips() {
        let mut t = [0u8; 16];
        for (i, v) in t.iter_mut().enumerate() {
            *v = (i as u8 * 7) % 15;
        }
        let raw = pack_sl2vl(&t);
        assert_eq!(raw[0], 0x07);
        assert_eq!(unpack_sl2vl(&raw), t);
    }

    /// h0 - s0 - s1 - s2 - h1, routed along the chain.
    #[test]
    fn hop_counts_follow_the_tables() {
        let mut b = FabricBuilder::new();
        let s: Vec<_> = (0..3).map(|i| b.add_node(NodeKind::Switch, 0x10 + i, "", 3)).collect();
        let h0 = b.add_node(NodeKind::Ca, 0x100, "", 1);
        let h1 = b.add_node(NodeKind::Ca, 0x200, "", 1);
        b.connect(PortRef::new(s[0], 2), PortRef::new(s[1], 1)).unwrap();
        b.connect(PortRef::new(s[1], 2), PortRef::new(s[2], 1)).unwrap();
        b.connect(PortRef::new(h0, 1), PortRef::new(s[0], 3)).unwrap();
        b.connect(PortRef::new(h1, 1), PortRef::new(s[2], 3)).unwrap();
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let mut lfts = Routing::empty_lfts(&f);
        let h1_lid = 5usize;
        lfts[0][h1_lid] = 2;
        lfts[1][h1_lid] = 2;
        lfts[2][h1_lid] = 3;
        lfts[0][3] = 2; // towards s2's own LID
        lfts[1][3] = 2;
        let r = Routing { engine: "t".into(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) };
        let t = r.hop_table(&f, &[h1_lid as u16, 3, 4]);
        assert_eq!((t.get(0, 0), t.get(0, 1), t.get(0, 2)), (3, 2, 1));
        assert_eq!((t.get(1, 0), t.get(1, 1), t.get(1, 2)), (2, 1, 0));
        // LID 4 (h0) has no entries anywhere: unreachable.
        assert_eq!(t.get(2, 1), NO_PATH);
    }
}

//! SL-to-VL tables: per switch and (in-port, out-port), and for CA ports.

use std::collections::HashMap;

use crate::fabric::{Fabric, PortNum, SwitchId};

/// Number of SLs and of table entries in an SL2VL table.
pub const NUM_SLS: usize = 16;

/// VL for each SL (index = SL).
pub type SlVlTable = [u8; NUM_SLS];

/// The table that keeps every SL on VL 0.
pub const ALL_VL0: SlVlTable = [0; NUM_SLS];

/// Per switch and (in-port, out-port), which SL-to-VL table applies.
///
/// Tables are stored once in a palette and referenced by number per port
/// pair: a 2,064-switch Dragonfly with 32-port switches has two million
/// port pairs but only two distinct tables. The palette has no fixed size:
/// a dump of random per-port VLs (as some engines draw them) may hold a
/// distinct table for every port pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sl2Vl {
    palette: Vec<SlVlTable>,
    /// Palette numbers by table (the cheap hasher: setting a big fabric's
    /// tables looks up 800,000 port pairs on a JUPITER-sized Dragonfly+).
    lookup: HashMap<SlVlTable, u32, crate::rng::BuildWordHasher>,
    /// Per switch: `ports * ports` palette numbers, row = in-port.
    switch_tables: Vec<(usize, Vec<u32>)>,
    /// What CA ports map each SL to; `None` leaves OpenSM's QoS setting.
    ca: [Option<u8>; NUM_SLS],
}

impl Sl2Vl {
    /// Every switch port pair starts at `default`; CA ports keep OpenSM's.
    pub fn new(fabric: &Fabric, default: SlVlTable) -> Self {
        let graph = fabric.graph();
        let switch_tables = graph
            .ids()
            .map(|s| {
                let ports = graph.port_slots(s);
                (ports, vec![0u32; ports * ports])
            })
            .collect();
        Sl2Vl {
            palette: vec![default],
            lookup: [(default, 0)].into_iter().collect(),
            switch_tables,
            ca: [None; NUM_SLS],
        }
    }

    /// Sets the table a switch applies to packets entering `in_port` and
    /// leaving `out_port`. Ports beyond the switch's port count are ignored.
    pub fn set_switch(
        &mut self,
        switch: SwitchId,
        in_port: PortNum,
        out_port: PortNum,
        table: SlVlTable,
    ) {
        let next = self.palette.len() as u32;
        let idx = *self.lookup.entry(table).or_insert(next);
        if idx == next {
            self.palette.push(table);
        }
        let (ports, cells) = &mut self.switch_tables[switch.idx()];
        let (i, o) = (in_port.idx(), out_port.idx());
        if i < *ports && o < *ports {
            cells[i * *ports + o] = idx;
        }
    }

    pub fn switch_table(
        &self,
        switch: SwitchId,
        in_port: PortNum,
        out_port: PortNum,
    ) -> &SlVlTable {
        let (ports, cells) = &self.switch_tables[switch.idx()];
        let (i, o) = (in_port.idx(), out_port.idx());
        if i < *ports && o < *ports {
            &self.palette[cells[i * *ports + o] as usize]
        } else {
            &self.palette[0]
        }
    }

    /// The VL of `sl` from `in_port` to `out_port` of `switch`.
    pub fn vl(&self, switch: SwitchId, in_port: PortNum, out_port: PortNum, sl: u8) -> u8 {
        self.switch_table(switch, in_port, out_port)[sl as usize & 0xf]
    }

    /// Distinct tables in use.
    pub fn distinct_tables(&self) -> usize {
        self.palette.len()
    }

    /// Every table a switch port pair uses (and any set once and since
    /// replaced): what a question about all hops has to look at.
    pub fn tables(&self) -> &[SlVlTable] {
        &self.palette
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
    pub fn switch_ports(&self, switch: SwitchId) -> usize {
        self.switch_tables[switch.idx()].0
    }

    /// Highest VL any table maps an SL to, plus one.
    pub fn vls_used(&self) -> u8 {
        let used = self
            .palette
            .iter()
            .flat_map(|t| t.iter())
            .copied()
            .max()
            .unwrap_or(0);
        let ca = self.ca.iter().flatten().copied().max().unwrap_or(0);
        used.max(ca) + 1
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
    use crate::fabric::{FabricBuilder, NodeKind, PortRef};

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

    #[test]
    fn thousands_of_distinct_tables_fit() {
        let mut b = FabricBuilder::new();
        let s = b.add_node(NodeKind::Switch, 0x10, "big", 64);
        let t = b.add_node(NodeKind::Switch, 0x20, "other", 64);
        b.connect(PortRef::new(s, 1), PortRef::new(t, 1)).unwrap();
        let f = b.build().unwrap();
        let mut tables = Sl2Vl::new(&f, ALL_VL0);
        // One bit of (in-port, out-port) per SL: 4,225 distinct tables.
        let table_of = |i: usize, o: usize| -> SlVlTable {
            std::array::from_fn(|sl| ((i * 65 + o) >> (sl % 13) & 1) as u8)
        };
        let sw = SwitchId::new(0);
        for i in 0..65 {
            for o in 0..65 {
                tables.set_switch(
                    sw,
                    PortNum::new(i as u8),
                    PortNum::new(o as u8),
                    table_of(i, o),
                );
            }
        }
        assert!(
            tables.distinct_tables() > 256,
            "{}",
            tables.distinct_tables()
        );
        assert_eq!(
            tables.switch_table(sw, PortNum::new(40), PortNum::new(3)),
            &table_of(40, 3)
        );
        assert_eq!(
            tables.switch_table(SwitchId::new(1), PortNum::new(1), PortNum::new(2)),
            &ALL_VL0
        );
    }
}

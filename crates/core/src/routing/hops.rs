//! Hop counts along the forwarding tables, the way OpenSM's hop tables
//! count them (what its multicast and SA code read).

use super::walk::{step, Step};
use super::{Lft, NO_PATH};
use crate::fabric::{Fabric, Lid, SwitchId};

/// Hop counts from every switch towards a set of LIDs: 0 to the switch's
/// own LID, 1 to a CA cabled to it, one more per switch passed; `NO_PATH`
/// (255) where the tables do not deliver (loop, black hole, no entry,
/// unknown LID). Stored switch-major, as readers go one switch at a time.
#[derive(Clone, Debug)]
pub struct HopTable {
    pub lids: Vec<Lid>,
    data: Vec<u8>,
}

impl HopTable {
    /// Resolves one LID's column at a time, on all cores: every switch
    /// follows the tables until delivery, failure, or a switch already
    /// resolved, so each switch is stepped once per LID.
    pub fn new(fabric: &Fabric, lfts: &[Lft], lids: &[Lid]) -> Self {
        let switches = lfts.len();
        // Sentinels while one LID's column is being resolved.
        const UNKNOWN: u8 = 0xfe;
        const ON_CHAIN: u8 = 0xfd;
        let no_path = NO_PATH.raw();
        let mut data = vec![no_path; lids.len() * switches];
        let mut columns: Vec<&mut [u8]> = data.chunks_mut(switches.max(1)).collect();
        crate::parallel::for_each_row(&mut columns, |k, col| {
            let lid = lids[k];
            if fabric.lid_owner(lid).is_none() {
                return;
            }
            col.fill(UNKNOWN);
            let mut chain = Vec::with_capacity(16);
            for start in 0..switches {
                if col[start] != UNKNOWN {
                    continue;
                }
                // `last`: the hop count of the last switch on the chain.
                chain.clear();
                let mut cur = start;
                let last: Option<u8> = loop {
                    chain.push(cur);
                    col[cur] = ON_CHAIN;
                    match step(fabric, lfts, SwitchId::new(cur), lid) {
                        (out, Step::Delivered) => {
                            break Some(if out.is_management() { 0 } else { 1 })
                        }
                        (_, Step::Forward { to, .. }) => match col[to.idx()] {
                            UNKNOWN => cur = to.idx(),
                            ON_CHAIN => break None,
                            h if h == no_path => break None,
                            h => break h.checked_add(1),
                        },
                        (_, Step::Failed(_)) => break None,
                    }
                };
                let mut h = last;
                for &sw in chain.iter().rev() {
                    col[sw] = h.filter(|v| *v < ON_CHAIN).unwrap_or(no_path);
                    h = h.and_then(|v| v.checked_add(1));
                }
            }
        });
        let mut by_switch = vec![no_path; data.len()];
        for (k, col) in data.chunks(switches.max(1)).enumerate() {
            for (s, &h) in col.iter().enumerate() {
                by_switch[s * lids.len() + k] = h;
            }
        }
        HopTable {
            lids: lids.to_vec(),
            data: by_switch,
        }
    }

    /// Hops from `switch` to `self.lids[k]`.
    pub fn get(&self, k: usize, switch: SwitchId) -> u8 {
        self.data[switch.idx() * self.lids.len() + k]
    }

    /// Hops from `switch` to each of `self.lids`, in that order.
    pub fn row(&self, switch: SwitchId) -> &[u8] {
        let n = self.lids.len();
        &self.data[switch.idx() * n..(switch.idx() + 1) * n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricBuilder, NodeKind, PortNum, PortRef};
    use crate::routing::Routing;

    /// h0 - s0 - s1 - s2 - h1, routed along the chain.
    #[test]
    fn hop_counts_follow_the_tables() {
        let mut b = FabricBuilder::new();
        let s: Vec<_> = (0..3)
            .map(|i| b.add_node(NodeKind::Switch, 0x10 + i, "", 3))
            .collect();
        let h0 = b.add_node(NodeKind::Ca, 0x100, "", 1);
        let h1 = b.add_node(NodeKind::Ca, 0x200, "", 1);
        b.connect(PortRef::new(s[0], 2), PortRef::new(s[1], 1))
            .unwrap();
        b.connect(PortRef::new(s[1], 2), PortRef::new(s[2], 1))
            .unwrap();
        b.connect(PortRef::new(h0, 1), PortRef::new(s[0], 3))
            .unwrap();
        b.connect(PortRef::new(h1, 1), PortRef::new(s[2], 3))
            .unwrap();
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let mut lfts = Routing::empty_lfts(&f);
        let (h1_lid, s2_lid, h0_lid) = (Lid::from_raw(5), Lid::from_raw(3), Lid::from_raw(4));
        let sw = SwitchId::new;
        lfts[0].set(h1_lid, PortNum::new(2));
        lfts[1].set(h1_lid, PortNum::new(2));
        lfts[2].set(h1_lid, PortNum::new(3));
        lfts[0].set(s2_lid, PortNum::new(2)); // towards s2's own LID
        lfts[1].set(s2_lid, PortNum::new(2));
        let t = HopTable::new(&f, &lfts, &[h1_lid, s2_lid, h0_lid]);
        assert_eq!(
            (t.get(0, sw(0)), t.get(0, sw(1)), t.get(0, sw(2))),
            (3, 2, 1)
        );
        assert_eq!(
            (t.get(1, sw(0)), t.get(1, sw(1)), t.get(1, sw(2))),
            (2, 1, 0)
        );
        // LID 4 (h0) has no entries anywhere: unreachable.
        assert_eq!(t.get(2, sw(1)), NO_PATH.raw());
    }
}

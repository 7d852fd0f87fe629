//! Per-hop VLs written into SL2VL tables: an engine that knows, for every
//! hop of a path, the VL a deadlock-avoidance scheme wants there (the hop's
//! position in the path, say, or "detour" versus "dimension order") gets
//! each path an SL under which every switch on it maps (in-port, out-port)
//! to exactly that VL.
//!
//! A switch sees only (in-port, out-port, SL), so two paths that cross the
//! same port pair of a switch but want different VLs there must travel on
//! different SLs. Paths are placed one by one on the first spare SL whose
//! entries they do not contradict (greedy colouring of the conflicts). When
//! every path gets an SL, the tables carry out the scheme exactly, so the
//! scheme's own argument (VLs in increasing order along every path, say)
//! is what makes the routing deadlock-free.

use std::collections::HashMap;

use crate::fabric::{Fabric, Peer, PortNum, SwitchId};
use crate::routing::Sl2Vl;

/// One switch of a planned path: where the packet enters (`None`: from a
/// CA or the switch itself, which all behave alike), where it leaves for
/// the next switch, and the VL it must leave on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedHop {
    pub switch: SwitchId,
    pub in_port: Option<PortNum>,
    pub out_port: PortNum,
    pub vl: u8,
}

/// SL2VL entries promised so far, per spare SL.
#[derive(Clone, Debug, Default)]
pub struct HopVlPlan {
    spare: Vec<u8>,
    /// (switch, in-port or 255 for "from a CA", out-port, SL) -> VL.
    entries: HashMap<(u32, u8, u8, u8), u8>,
    used: Vec<bool>,
}

const FROM_CA: u8 = u8::MAX;

fn key(hop: &PlannedHop, sl: u8) -> (u32, u8, u8, u8) {
    (
        hop.switch.idx() as u32,
        hop.in_port.map_or(FROM_CA, |p| p.raw()),
        hop.out_port.raw(),
        sl,
    )
}

impl HopVlPlan {
    /// A plan over the SLs `spare` (tried in this order).
    pub fn new(spare: Vec<u8>) -> Self {
        let used = vec![false; spare.len()];
        HopVlPlan {
            spare,
            entries: HashMap::new(),
            used,
        }
    }

    /// The first spare SL under which every hop of the path can get its
    /// VL, now promised to it; `None` when each spare SL already maps one
    /// of these hops to another VL.
    pub fn place(&mut self, hops: &[PlannedHop]) -> Option<u8> {
        let (i, sl) = self.spare.iter().copied().enumerate().find(|&(_, sl)| {
            hops.iter()
                .all(|h| self.entries.get(&key(h, sl)).is_none_or(|&vl| vl == h.vl))
        })?;
        for h in hops {
            self.entries.insert(key(h, sl), h.vl);
        }
        self.used[i] = true;
        Some(sl)
    }

    /// Spare SLs some path was placed on.
    pub fn sls_used(&self) -> usize {
        self.used.iter().filter(|&&u| u).count()
    }

    /// Writes the promised entries into `sl2vl`; "from a CA" stands for
    /// every port of the switch not cabled to another switch (port 0
    /// included).
    pub fn write(&self, fabric: &Fabric, sl2vl: &mut Sl2Vl) {
        let graph = fabric.graph();
        let mut by_pair: HashMap<(u32, u8, u8), Vec<(u8, u8)>> = HashMap::new();
        for (&(s, inp, out, sl), &vl) in &self.entries {
            by_pair.entry((s, inp, out)).or_default().push((sl, vl));
        }
        let mut pairs: Vec<_> = by_pair.into_iter().collect();
        pairs.sort_unstable();
        for ((s, inp, out), sls) in pairs {
            let s = SwitchId::new(s as usize);
            let out = PortNum::new(out);
            let in_ports: Vec<PortNum> = if inp == FROM_CA {
                graph
                    .peers(s)
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| !matches!(p, Some(Peer::Switch { .. })))
                    .map(|(i, _)| PortNum::new(i as u8))
                    .collect()
            } else {
                vec![PortNum::new(inp)]
            };
            for inp in in_ports {
                let mut table = *sl2vl.switch_table(s, inp, out);
                for &(sl, vl) in &sls {
                    table[sl as usize] = vl;
                }
                sl2vl.set_switch(s, inp, out, table);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(s: usize, inp: Option<u8>, out: u8, vl: u8) -> PlannedHop {
        PlannedHop {
            switch: SwitchId::new(s),
            in_port: inp.map(PortNum::new),
            out_port: PortNum::new(out),
            vl,
        }
    }

    #[test]
    fn contradicting_paths_get_different_sls_and_agreeing_ones_share() {
        let mut plan = HopVlPlan::new(vec![3, 4]);
        assert_eq!(
            plan.place(&[hop(0, None, 1, 0), hop(1, Some(2), 3, 1)]),
            Some(3)
        );
        // Agrees with the first path where they meet: same SL.
        assert_eq!(
            plan.place(&[hop(1, Some(2), 3, 1), hop(2, Some(1), 4, 2)]),
            Some(3)
        );
        // Wants VL 2 where SL 3 already means VL 1: the next SL.
        assert_eq!(plan.place(&[hop(1, Some(2), 3, 2)]), Some(4));
        // Contradicts both: no SL left.
        assert_eq!(plan.place(&[hop(1, Some(2), 3, 0)]), None);
        assert_eq!(plan.sls_used(), 2);
    }
}

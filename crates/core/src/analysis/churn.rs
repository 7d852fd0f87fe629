//! How much a routing moved between two passes on the same fabric, e.g.
//! before and after a cable failed: the share of forwarding-table entries
//! that changed, beside the share whose route crossed a cable the second
//! fabric no longer has (the routes that had to move). Switches are
//! matched by GUID and entries by LID, so the two fabrics may differ by
//! the cables and switches that failed.

use std::collections::{HashMap, HashSet};

use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchId};
use crate::routing::walk::Walk;
use crate::routing::Lft;

/// Entries compared and what happened to them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Churn {
    /// (switch, LID) entries routed in both passes, on switches in both.
    pub entries: u64,
    /// Of those, entries whose port changed.
    pub changed: u64,
    /// Entries whose route (from that switch, in the first pass) crossed a
    /// cable the second fabric lacks.
    pub crossed: u64,
    /// Changed entries whose route had not crossed a lost cable.
    pub changed_not_crossed: u64,
    /// Cables of the first fabric that the second lacks.
    pub cables_lost: usize,
}

impl Churn {
    pub fn changed_share(&self) -> f64 {
        share(self.changed, self.entries)
    }

    pub fn crossed_share(&self) -> f64 {
        share(self.crossed, self.entries)
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// A cable between two switches, by (GUID, port) of both ends, lower end
/// first.
type CableKey = ((u64, u8), (u64, u8));

fn switch_cables(fabric: &Fabric) -> HashSet<CableKey> {
    let graph = fabric.graph();
    let guid = |s: SwitchId| fabric.switch_node(s).guid;
    graph
        .ids()
        .flat_map(|s| {
            graph
                .cables(s)
                .iter()
                .map(move |c| ((guid(s), c.port.raw()), (guid(c.to), c.far_port.raw())))
        })
        .map(|(a, b)| if a < b { (a, b) } else { (b, a) })
        .collect()
}

/// Compares `before` (fabric and tables) with `after`.
pub fn churn(before: (&Fabric, &[Lft]), after: (&Fabric, &[Lft])) -> Churn {
    let (f0, t0) = before;
    let (f1, t1) = after;
    let lost: HashSet<CableKey> = switch_cables(f0)
        .difference(&switch_cables(f1))
        .copied()
        .collect();
    let mut out = Churn {
        cables_lost: lost.len(),
        ..Churn::default()
    };
    // The first fabric's channels on lost cables.
    let graph = f0.graph();
    let mut on_lost = vec![false; graph.channel_count()];
    for s in graph.ids() {
        for c in graph.cables(s) {
            let (a, b) = (
                (f0.switch_node(s).guid, c.port.raw()),
                (f0.switch_node(c.to).guid, c.far_port.raw()),
            );
            if lost.contains(&if a < b { (a, b) } else { (b, a) }) {
                on_lost[graph.channel(s, c.port)] = true;
            }
        }
    }
    let after_switch: HashMap<u64, SwitchId> = f1
        .switch_ids()
        .map(|s| (f1.switch_node(s).guid, s))
        .collect();
    let lids_after: HashSet<Lid> = f1.lids().map(|(l, _)| l).collect();
    for s in f0.switch_ids() {
        let Some(&s1) = after_switch.get(&f0.switch_node(s).guid) else {
            continue;
        };
        for (lid, _) in f0.lids().filter(|(l, _)| lids_after.contains(l)) {
            let (p0, p1) = (t0[s].get(lid), t1[s1].get(lid));
            if p0.is_no_path() || p1.is_no_path() {
                continue;
            }
            out.entries += 1;
            let crossed = !lost.is_empty() && crosses(f0, t0, s, lid, &on_lost);
            out.crossed += u64::from(crossed);
            if p0 != p1 {
                out.changed += 1;
                out.changed_not_crossed += u64::from(!crossed);
            }
        }
    }
    out
}

/// Whether the route from `s` to `lid` takes a channel marked in `on_lost`.
fn crosses(fabric: &Fabric, lfts: &[Lft], s: SwitchId, lid: Lid, on_lost: &[bool]) -> bool {
    let graph = fabric.graph();
    Walk::from_switch(fabric, lfts, s, lid)
        .map_while(Result::ok)
        .any(|hop| {
            matches!(
                graph.peer(hop.switch, hop.out_port),
                Some(Peer::Switch { .. })
            ) && hop.out_port != PortNum::MANAGEMENT
                && on_lost[graph.channel(hop.switch, hop.out_port)]
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::PortRef;

    /// A 4-switch ring with a host each, routed both ways round by hand.
    #[test]
    fn counts_changed_and_crossed_entries() {
        let ring = |cut: bool| {
            let mut b = crate::FabricBuilder::new();
            let s: Vec<_> = (0..4)
                .map(|i| b.add_node(crate::NodeKind::Switch, 0x10 + i, format!("s{i}"), 3))
                .collect();
            for i in 0..4 {
                if !(cut && i == 0) {
                    b.connect(PortRef::new(s[i], 1), PortRef::new(s[(i + 1) % 4], 2))
                        .unwrap();
                }
                let h = b.add_node(crate::NodeKind::Ca, 0x100 + i as u64 * 2, "", 1);
                b.connect(PortRef::new(h, 1), PortRef::new(s[i], 3))
                    .unwrap();
            }
            b.assign_lids_sequential(0).unwrap();
            b.build().unwrap()
        };
        let (intact, broken) = (ring(false), ring(true));
        // Clockwise (port 1) everywhere except delivery; after the cut of
        // s0-s1 the same, but s0 goes anticlockwise (port 2).
        let tables = |f: &Fabric, s0_port: u8| -> Vec<Lft> {
            let mut lfts = crate::routing::Routing::empty_lfts(f);
            for (lid, owner) in f.lids() {
                let home = f.lid_switch(lid).unwrap();
                for s in f.switch_ids() {
                    let port = if s == home {
                        f.delivery_port(owner)
                    } else if s.idx() == 0 {
                        PortNum::new(s0_port)
                    } else {
                        PortNum::new(1)
                    };
                    lfts[s].set(lid, port);
                }
            }
            lfts
        };
        let (before, after) = (tables(&intact, 1), tables(&broken, 2));
        let c = churn((&intact, &before), (&broken, &after));
        assert_eq!(c.cables_lost, 1);
        // 4 switches x 8 LIDs (4 switches, 4 hosts) = 32 entries; s0's
        // entries for the 6 LIDs it does not deliver changed and crossed;
        // s3's route to s1, s2 and their hosts crossed s0-s1 too (4 more).
        assert_eq!(c.entries, 32);
        assert_eq!(c.changed, 6);
        assert_eq!(c.crossed, 6 + 4 + 2);
        assert_eq!(c.changed_not_crossed, 0);
        let same = churn((&intact, &before), (&intact, &before));
        assert_eq!((same.changed, same.crossed, same.cables_lost), (0, 0, 0));
    }
}

//! Paths to spines: to a spine's own LID (management) and to an
//! Aggregation Node on a spine. They carry little traffic, and no path to
//! a spine from another spine of a Dragonfly+ with few global ports per
//! spine avoids turning back twice (a spine reaches another group's spine
//! only through a leaf of its own group or through spines of other
//! groups). The shortest ones chain global cables through several groups,
//! peaks and valleys in turn, and such chains come in so many kinds that
//! the SL rules (`super::rules`) could not give them few SLs. So these
//! LIDs get trees of their own: the fewest global hops, then the fewest
//! backward turns, then the fewest hops — through one global cable where
//! the group pair has one, bouncing through a leaf at either end as needed
//! — each switch taking among its equally good cables the one a hash of
//! the LID and the far switch's GUID ranks first (so that a failed cable
//! moves little but the LIDs that crossed it).

use super::{backward, Class, Roles};
use crate::fabric::{Fabric, Lid, PortNum, SwitchId};
use crate::rng::mix;
use crate::routing::Lft;

/// How good a way to the spine is, compared in this order: whether it
/// turns back more often than the lanes have VLs for, whether it turns
/// back twice (a third VL), its global hops (one and more than one), its
/// backward turns, hops, the class of its first cable.
type Label = (bool, bool, u8, u8, u16, u8);

/// Per switch, its best cables towards spine `t` (ports and the switch
/// each leads to).
fn best_cables(fabric: &Fabric, roles: &Roles, t: SwitchId) -> Vec<Vec<(PortNum, SwitchId)>> {
    use std::cmp::Reverse;
    let graph = fabric.graph();
    let n = graph.switch_count();
    let mut first_out = vec![Class::Terminal; n];
    let mut best: Vec<Option<Label>> = vec![None; n];
    let mut settled = vec![false; n];
    let mut out = vec![Vec::new(); n];
    let mut heap = std::collections::BinaryHeap::new();
    best[t.idx()] = Some((false, false, 0, 0, 0, 0));
    heap.push(Reverse(((false, false, 0u8, 0u8, 0u16, 0u8), t)));
    let via = |x: SwitchId, to: SwitchId, first_out: &[Class], label: Label| -> Label {
        let class = roles.class(x, to);
        let turns = label.3 + u8::from(backward(class, first_out[to.idx()]));
        (
            turns >= super::lanes::LANE_VLS,
            turns >= 2,
            (label.2 + u8::from(class.is_global())).min(2),
            turns,
            label.4 + 1,
            class.preference(),
        )
    };
    while let Some(Reverse((label, x))) = heap.pop() {
        if settled[x.idx()] || best[x.idx()] != Some(label) {
            continue;
        }
        settled[x.idx()] = true;
        if x != t {
            for c in graph.cables(x) {
                let Some(next) = best[c.to.idx()].filter(|_| settled[c.to.idx()] && c.to != x)
                else {
                    continue;
                };
                if via(x, c.to, &first_out, next) == label {
                    out[x.idx()].push((c.port, c.to));
                    first_out[x.idx()] = roles.class(x, c.to);
                }
            }
        }
        for c in graph.cables(x) {
            let s = c.to;
            if settled[s.idx()] || s == x {
                continue;
            }
            let label = via(s, x, &first_out, label);
            if best[s.idx()].is_none_or(|b| label < b) {
                best[s.idx()] = Some(label);
                heap.push(Reverse((label, s)));
            }
        }
    }
    out
}

/// Rewrites in `lfts` the entries of every LID delivered by a spine
/// (module comment).
pub fn route_to_spines(fabric: &Fabric, roles: &Roles, lfts: &mut [Lft]) {
    let graph = fabric.graph();
    let mut by_spine: Vec<Vec<Lid>> = vec![Vec::new(); graph.switch_count()];
    for (lid, _) in fabric.lids() {
        if let Some(t) = fabric
            .lid_switch(lid)
            .filter(|&t| !roles.plus.is_leaf[t.idx()])
        {
            by_spine[t.idx()].push(lid);
        }
    }
    let spines: Vec<SwitchId> = graph
        .ids()
        .filter(|t| !by_spine[t.idx()].is_empty())
        .collect();
    let mut trees: Vec<Vec<Vec<(PortNum, SwitchId)>>> = vec![Vec::new(); spines.len()];
    crate::parallel::for_each_row(&mut trees, |i, tree| {
        *tree = best_cables(fabric, roles, spines[i]);
    });
    let key = |s: SwitchId| mix(fabric.switch_node(s).guid);
    for (t, tree) in spines.iter().zip(&trees) {
        for &lid in &by_spine[t.idx()] {
            for s in graph.ids().filter(|s| s != t) {
                let pick = tree[s.idx()]
                    .iter()
                    .min_by_key(|&&(_, to)| mix(key(to) ^ mix(u64::from(lid.raw()))))
                    .map(|&(port, _)| port);
                if let Some(port) = pick {
                    lfts[s.idx()].set(lid, port);
                }
            }
        }
    }
}

//! Dragonfly+ forwarding tables: for every destination switch, which
//! cables of every other switch lie on its best paths (shortest, then
//! fewest backward turns), and for every LID, which of those cables a
//! switch takes.
//!
//! **Best paths.** A path to the destination `t` is judged by, in this
//! order: whether it makes more backward turns than the lanes have VLs
//! (a turn from a down channel to an up one at a leaf, the bounce round a
//! missing leaf–spine cable, or from a global channel to a global one at
//! a spine, the crossing of a middle group), its hops, its backward
//! turns, and the class of its first cable (up, then down, then global: a
//! spine stays in its group rather than leave it). Dijkstra from `t`
//! settles every switch with its best label and takes as candidates all
//! its cables that give it, given the choice of the switch each leads to.
//! So paths are the shortest ones within the lanes' VLs; on an intact
//! Dragonfly+ the minimal paths leaf → spine → [global] → spine → leaf.
//!
//! **Spreading.** Each switch deals the LIDs of each destination group
//! over its up or down candidates in proportion to their weights, the
//! number of equal paths a candidate leads to (a spine with three cables
//! to the destination group gets three times the LIDs of one with one):
//! LIDs spread over spines and so over the cables of a group pair. Which
//! LID goes where is weighted rendezvous hashing with bounded loads
//! (`pick_group`), so that when a cable fails, the LIDs that took it move
//! and hardly any other. A spine then deals the LIDs its group's leaves
//! send it over its global cables by demand (`deal`): the routes, not
//! just the LIDs, spread evenly; a failed global cable reshuffles that
//! spine's entries for one group, no others.

use super::{backward, Class, Roles};
use crate::fabric::{Fabric, Lid, PortNum, SwitchId};
use crate::routing::{Lft, Routing, NO_PATH};

/// A candidate cable.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    port: PortNum,
    /// The number of equal paths behind it.
    weight: u64,
    /// Who it leads to, the same from every switch: the far switch's GUID
    /// (mixed with the cable's place in a bundle of parallel cables).
    key: u64,
    global: bool,
}

/// Per switch, its candidate cables towards one destination switch.
pub type Towards = Vec<Vec<Candidate>>;

/// How good a way to `t` is, compared in this order: whether it makes
/// more backward turns than lanes have VLs (`super::lanes`), its hops,
/// its backward turns, the class of its first cable (up, then down, then
/// global).
type Label = (bool, u16, u8, u8);

fn label(hops: u16, turns: u8, first: Class) -> Label {
    (
        turns >= super::lanes::LANE_VLS,
        hops,
        turns,
        first.preference(),
    )
}

/// The candidates of every switch towards `t` (module comment): Dijkstra
/// from `t` over `Label`s, each switch settled with the label of its best
/// cables, which may only lead to settled switches; the turns a cable
/// adds depend on the first cable of the switch it leads to, settled
/// before.
pub fn candidates(fabric: &Fabric, roles: &Roles, t: SwitchId) -> Towards {
    use std::cmp::Reverse;
    let graph = fabric.graph();
    let n = graph.switch_count();
    let mut first_out = vec![Class::Terminal; n];
    let mut best: Vec<Option<Label>> = vec![None; n];
    let mut settled = vec![false; n];
    let mut width = vec![0u64; n];
    let mut out: Towards = vec![Vec::new(); n];
    let mut heap = std::collections::BinaryHeap::new();
    best[t.idx()] = Some((false, 0, 0, 0));
    width[t.idx()] = 1;
    heap.push(Reverse(((false, 0u16, 0u8, 0u8), t)));
    while let Some(Reverse((lab, x))) = heap.pop() {
        if settled[x.idx()] || best[x.idx()] != Some(lab) {
            continue;
        }
        settled[x.idx()] = true;
        if x != t {
            // Its candidates: every cable to a settled switch that gives
            // this label.
            let via = |c: &crate::fabric::Cable| {
                let class = roles.class(x, c.to);
                let (_, hops, turns, _) = best[c.to.idx()]?;
                let turns = turns + u8::from(backward(class, first_out[c.to.idx()]));
                Some(label(hops + 1, turns, class))
            };
            let chosen: Vec<(PortNum, SwitchId)> = graph
                .cables(x)
                .iter()
                .filter(|c| settled[c.to.idx()] && c.to != x && via(c) == Some(lab))
                .map(|c| (c.port, c.to))
                .collect();
            for (i, &(port, to)) in chosen.iter().enumerate() {
                let bundle = chosen[..i].iter().filter(|c| c.1 == to).count() as u64;
                out[x.idx()].push(Candidate {
                    port,
                    weight: width[to.idx()],
                    key: mix(fabric.switch_node(to).guid).wrapping_add(bundle),
                    global: roles.class(x, to) == Class::Global,
                });
                width[x.idx()] = width[x.idx()].saturating_add(width[to.idx()]);
                first_out[x.idx()] = roles.class(x, to);
            }
        }
        let (_, hops, turns, _) = lab;
        for c in graph.cables(x) {
            let s = c.to;
            if settled[s.idx()] || s == x {
                continue;
            }
            let class = roles.class(s, x);
            let cand = label(
                hops + 1,
                turns + u8::from(backward(class, first_out[x.idx()])),
                class,
            );
            if best[s.idx()].is_none_or(|b| cand < b) {
                best[s.idx()] = Some(cand);
                heap.push(Reverse((cand, s)));
            }
        }
    }
    out
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A hash of `lid` and `key` in (0, 1].
fn unit(lid: Lid, key: u64) -> f64 {
    let h = mix(key ^ mix(lid.idx() as u64));
    ((h >> 11) + 1) as f64 / (1u64 << 53) as f64
}

/// −log2(u) for u in (0, 1], piecewise linear between powers of two (the
/// exponent plus the mantissa's fraction): monotone like the logarithm,
/// within 0.09 of it, and far cheaper, which matters at 25,000 LIDs times
/// hundreds of switches times their candidates.
fn neg_log2(u: f64) -> f64 {
    let bits = u.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as f64 - 1023.0;
    let fraction = (bits & ((1u64 << 52) - 1)) as f64 / (1u64 << 52) as f64;
    -(exponent + fraction)
}

/// The rendezvous score of a candidate for `lid` at a switch with key
/// `own_key`: −log(u)/weight, smaller preferred.
fn score(c: &Candidate, lid: Lid, own_key: u64) -> f64 {
    neg_log2(unit(lid, c.key ^ own_key)) / c.weight.max(1) as f64
}

/// The best-scored of `ranked` that `open` accepts, else the best-scored.
fn best_open(ranked: &[(f64, PortNum)], open: impl Fn(PortNum) -> bool) -> Option<PortNum> {
    let best = |only_open: bool| {
        ranked
            .iter()
            .filter(|(_, p)| !only_open || open(*p))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|&(_, p)| p)
    };
    best(true).or_else(|| best(false))
}

/// One switch's picks for the LIDs of one destination group whose
/// candidates go up or down (global ones are `deal`t once these are
/// known): every LID takes its best-scored candidate whose port has not
/// yet had its share (the weights' share of the group's LIDs, rounded
/// up), the best-scored overall when all have. Bounded loads keep the
/// spread even where a group has few LIDs; rendezvous order keeps a lost
/// candidate from moving more than its own LIDs and the few its share
/// pushes on.
fn pick_group(lids: &[(Lid, &[Candidate])], own_key: u64, ports: usize) -> Vec<PortNum> {
    let mut share = vec![0f64; ports];
    for (_, cands) in lids {
        let total: u64 = cands.iter().map(|c| c.weight.max(1)).sum();
        for c in cands.iter() {
            share[c.port.idx()] += c.weight.max(1) as f64 / total as f64;
        }
    }
    let cap: Vec<u32> = share
        .iter()
        .map(|s| (s - 1e-9).ceil().max(0.0) as u32)
        .collect();
    let mut load = vec![0u32; ports];
    let mut ranked: Vec<(f64, PortNum)> = Vec::new();
    lids.iter()
        .map(|&(lid, cands)| {
            ranked.clear();
            ranked.extend(cands.iter().map(|c| (score(c, lid, own_key), c.port)));
            best_open(&ranked, |p| load[p.idx()] < cap[p.idx()]).map_or(NO_PATH, |port| {
                load[port.idx()] += 1;
                port
            })
        })
        .collect()
}

/// A spine's picks among its global cables for `lids`, each with its
/// candidates and its demand (the hosts whose tables send it here): in
/// LID order, each takes its best-scored candidate (rendezvous, as in
/// `pick_group`) that stays within its share of the demand plus the
/// largest single demand, the least-carried one otherwise. The routes, not
/// just the LIDs, spread evenly over the cables to a group, and a lost
/// cable moves little beyond its own LIDs.
fn deal(lids: &[(Lid, &[Candidate], u64)], own_key: u64, ports: usize) -> Vec<(Lid, PortNum)> {
    let mut share = vec![0f64; ports];
    let mut largest = 0u64;
    for &(_, cands, demand) in lids {
        largest = largest.max(demand);
        let total: u64 = cands.iter().map(|c| c.weight.max(1)).sum();
        for c in cands {
            share[c.port.idx()] += demand as f64 * c.weight.max(1) as f64 / total as f64;
        }
    }
    let cap: Vec<u64> = share
        .iter()
        .map(|s| s.ceil() as u64 + largest / 2)
        .collect();
    let mut carried = vec![0u64; ports];
    let mut ranked: Vec<(f64, PortNum)> = Vec::new();
    lids.iter()
        .filter_map(|&(lid, cands, demand)| {
            ranked.clear();
            ranked.extend(cands.iter().map(|c| (score(c, lid, own_key), c.port)));
            let within = ranked
                .iter()
                .filter(|(_, p)| carried[p.idx()] + demand <= cap[p.idx()])
                .min_by(|a, b| a.0.total_cmp(&b.0));
            let port = within
                .or_else(|| ranked.iter().min_by_key(|(_, p)| carried[p.idx()]))?
                .1;
            carried[port.idx()] += demand;
            Some((lid, port))
        })
        .collect()
}

/// Every switch's table: per destination switch its candidates (on all
/// cores), then per switch and destination group the up and down picks,
/// then the global ones knowing the demand the first left on each spine.
pub fn forwarding_tables(fabric: &Fabric, roles: &Roles) -> Vec<Lft> {
    let graph = fabric.graph();
    let mut towards: Vec<Towards> = vec![Vec::new(); graph.switch_count()];
    crate::parallel::for_each_row(&mut towards, |t, row| {
        *row = candidates(fabric, roles, SwitchId::new(t));
    });
    // LIDs by the group of the switch that delivers them.
    let mut by_group: Vec<Vec<(Lid, SwitchId)>> = vec![Vec::new(); roles.groups()];
    for (lid, _) in fabric.lids() {
        if let Some(t) = fabric.lid_switch(lid) {
            by_group[roles.group(t)].push((lid, t));
        }
    }
    let is_global =
        |t: SwitchId, s: SwitchId| towards[t.idx()][s.idx()].first().is_some_and(|c| c.global);
    let key = |s: SwitchId| mix(fabric.switch_node(s).guid);
    let mut lfts = Routing::empty_lfts(fabric);
    crate::parallel::for_each_row(&mut lfts, |s, lft| {
        let s = SwitchId::new(s);
        for lids in &by_group {
            let mut with: Vec<(Lid, &[Candidate])> = Vec::new();
            for &(lid, t) in lids {
                if t == s {
                    lft.set(
                        lid,
                        fabric
                            .lid_owner(lid)
                            .map_or(NO_PATH, |o| fabric.delivery_port(o)),
                    );
                } else if !is_global(t, s) {
                    with.push((lid, towards[t.idx()][s.idx()].as_slice()));
                }
            }
            for ((lid, _), port) in with
                .iter()
                .zip(pick_group(&with, key(s), graph.port_slots(s)))
            {
                lft.set(*lid, port);
            }
        }
    });
    // Demand on each switch per CA LID: the hosts of every switch whose
    // table sends the LID to it. (Switches' own LIDs carry management
    // traffic only; counting them would let a few LIDs that every leaf
    // must send through one spine skew the deal.)
    let lid_list: Vec<(Lid, SwitchId)> = by_group
        .iter()
        .flatten()
        .copied()
        .filter(|&(lid, _)| {
            fabric
                .lid_owner(lid)
                .is_some_and(|o| fabric.switch_id(o.node).is_none())
        })
        .collect();
    let mut demand = vec![vec![0u64; fabric.lft_len()]; graph.switch_count()];
    for u in graph.ids() {
        let weight = u64::from(graph.hosts(u));
        for &(lid, _) in &lid_list {
            if let Some(next) = graph.switch_behind(u, lfts[u.idx()].get(lid)) {
                demand[next.idx()][lid.idx()] += weight;
            }
        }
    }
    crate::parallel::for_each_row(&mut lfts, |s, lft| {
        let s = SwitchId::new(s);
        for lids in &by_group {
            let global: Vec<(Lid, &[Candidate], u64)> = lids
                .iter()
                .filter(|&&(_, t)| t != s && is_global(t, s))
                .map(|&(lid, t)| {
                    (
                        lid,
                        towards[t.idx()][s.idx()].as_slice(),
                        demand[s.idx()][lid.idx()],
                    )
                })
                .collect();
            for (lid, port) in deal(&global, key(s), graph.port_slots(s)) {
                lft.set(lid, port);
            }
        }
    });
    lfts
}

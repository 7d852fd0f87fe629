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
use crate::rng::mix;
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
    /// Which of the destination's homes (`Towards::homes`, one bit each)
    /// the best paths through this cable can enter it from.
    reaches: u64,
}

/// Towards one destination switch: per switch its candidate cables, and
/// the destination's *homes*, the neighbours whose cable to it ends best
/// paths (on a Dragonfly+ a leaf's spines), each with its number of
/// such cables; the first 64 are told apart by `Candidate::reaches`.
#[derive(Clone, Default)]
pub struct Towards {
    pub cands: Vec<Vec<Candidate>>,
    pub homes: Vec<(SwitchId, u64)>,
}

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
    let mut out: Vec<Vec<Candidate>> = vec![Vec::new(); n];
    // Per switch, the homes its best paths can enter `t` from.
    let mut reach = vec![0u64; n];
    let mut homes: Vec<(SwitchId, u64)> = Vec::new();
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
            let direct = chosen.iter().filter(|c| c.1 == t).count() as u64;
            if direct > 0 {
                if homes.len() < 64 {
                    reach[x.idx()] = 1 << homes.len();
                }
                homes.push((x, direct));
            }
            for (i, &(port, to)) in chosen.iter().enumerate() {
                let bundle = chosen[..i].iter().filter(|c| c.1 == to).count() as u64;
                let reaches = if to == t {
                    reach[x.idx()]
                } else {
                    reach[to.idx()]
                };
                if to != t {
                    reach[x.idx()] |= reach[to.idx()];
                }
                out[x.idx()].push(Candidate {
                    port,
                    weight: width[to.idx()],
                    key: mix(fabric.switch_node(to).guid).wrapping_add(bundle),
                    global: roles.class(x, to).is_global(),
                    reaches,
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
    Towards { cands: out, homes }
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

/// Whether `c`'s best paths enter the LID's switch from its home
/// (`home`, one bit of `Towards::homes`).
fn homeward(c: &Candidate, home: u64) -> bool {
    c.reaches & home != 0
}

/// The best-scored of `ranked` (scores of `cands`, in their order) that
/// leads to the LID's home and that `open` accepts.
fn homeward_first(
    cands: &[Candidate],
    home: u64,
    ranked: &[(f64, PortNum)],
    open: impl Fn(PortNum) -> bool,
) -> Option<PortNum> {
    cands
        .iter()
        .zip(ranked)
        .filter(|(c, r)| homeward(c, home) && open(r.1))
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
        .map(|(_, r)| r.1)
}

/// A LID to place at one switch: its candidates there and its home bit.
type Entry<'a> = (Lid, &'a [Candidate], u64);

/// One switch's picks for one kind of LIDs (CAs', or switches' own) of one
/// destination group whose candidates go up or down (global ones are
/// `deal`t once these are known): every LID takes its best-scored
/// candidate towards its home (`assign_homes`) whose port has not yet had
/// its share, else its best-scored one that has not, else its best-scored
/// one. A port's share is the LIDs' count times its weight over the sum of
/// the ports' weights (each port's largest weight, the number of equal
/// paths behind it), counted over the ports rather than per LID, so that
/// a failure that takes a port from some LIDs' candidates leaves the
/// others' shares, and so their picks, alone — but never more than one
/// above the port's share of the LIDs that may take it (a detour port few
/// LIDs can use is not filled with them). Bounded loads keep the spread
/// even where a group has few LIDs; rendezvous order keeps a lost
/// candidate from moving more than its own LIDs and the few its share
/// pushes on.
fn pick_group(lids: &[Entry], own_key: u64, ports: usize) -> Vec<PortNum> {
    let mut weight = vec![0u64; ports];
    for &(_, cands, _) in lids {
        for c in cands {
            weight[c.port.idx()] = weight[c.port.idx()].max(c.weight.max(1));
        }
    }
    let mut share = vec![0f64; ports];
    for &(_, cands, _) in lids {
        let total: u64 = cands.iter().map(|c| c.weight.max(1)).sum();
        for c in cands {
            share[c.port.idx()] += c.weight.max(1) as f64 / total as f64;
        }
    }
    let total = weight.iter().sum::<u64>().max(1) as f64;
    let cap: Vec<u32> = weight
        .iter()
        .zip(&share)
        .map(|(&w, &s)| {
            let even = (lids.len() as f64 * w as f64 / total - 1e-9)
                .ceil()
                .max(0.0) as u32;
            even.min((s - 1e-9).ceil().max(0.0) as u32 + 1)
        })
        .collect();
    let mut load = vec![0u32; ports];
    let mut ranked: Vec<(f64, PortNum)> = Vec::new();
    lids.iter()
        .map(|&(lid, cands, home)| {
            ranked.clear();
            ranked.extend(cands.iter().map(|c| (score(c, lid, own_key), c.port)));
            let open = |p: PortNum| load[p.idx()] < cap[p.idx()];
            homeward_first(cands, home, &ranked, open)
                .or_else(|| best_open(&ranked, open))
                .map_or(NO_PATH, |port| {
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
/// largest single demand, the least-carried one otherwise. The routes,
/// not just the LIDs, spread evenly over the cables to a group, and a
/// lost cable moves little beyond its own LIDs.
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

/// Each CA LID's home, one bit of its switch's `Towards::homes` (0: none;
/// switches' own LIDs, management traffic, have none). Per destination
/// group, the CAs' LIDs are dealt over their switch's homes by rendezvous
/// on the homes' GUIDs (the same from every source, so that every
/// switch's picks agree on where a LID enters its switch) within two
/// bounds: each switch's LIDs in proportion to its homes' cables — the
/// hosts of a leaf over its spines, so that no spine → leaf cable carries
/// the routes to two of them while another carries none — and each home's
/// share of the group's LIDs (the group's LIDs over its spines), so that
/// every spine is home to as many of the group's hosts and the cables
/// towards it, up and global, share evenly.
///
/// In two rounds, so that a lost home moves little beyond its own LIDs:
/// first every LID claims its best-scored home, the strongest claims
/// (lowest scores) served first within both bounds; a LID whose best
/// would be a switch the Dragonfly+ makes a home (a leaf's spine, a
/// spine's leaf) that lost its cable keeps its claim on that one's group
/// bound, as a ghost, so that no other LID takes its place and moves.
/// Then the rest, those that lost their best home last, take their
/// best-scored home still open.
fn assign_homes(
    fabric: &Fabric,
    roles: &Roles,
    by_group: &[Vec<(Lid, SwitchId)>],
    towards: &[Towards],
) -> Vec<u64> {
    use std::collections::HashMap;
    let mut home = vec![0u64; fabric.lft_len()];
    let known = |t: SwitchId| &towards[t.idx()].homes[..towards[t.idx()].homes.len().min(64)];
    for (g, lids) in by_group.iter().enumerate() {
        let kind: Vec<(Lid, SwitchId)> = lids
            .iter()
            .copied()
            .filter(|&(lid, _)| is_ca(fabric, lid))
            .collect();
        let mut count: HashMap<SwitchId, u64> = HashMap::new();
        for &(_, t) in &kind {
            *count.entry(t).or_default() += 1;
        }
        // The bounds: per (switch, home) its share of the switch's
        // LIDs, per home the group's LIDs over its spines, rounded up.
        let fraction = |t: SwitchId, w: u64| {
            let total: u64 = known(t).iter().map(|h| h.1).sum();
            count[&t] as f64 * w as f64 / total as f64
        };
        let cap = |x: f64| (x - 1e-9).ceil().max(0.0) as u32;
        let spines = roles.plus.spines[g].len().max(1) as f64;
        let group_cap = cap(kind.len() as f64 / spines);
        let here_cap = |t: SwitchId, k: usize| cap(fraction(t, known(t)[k].1));
        let mut load: HashMap<(SwitchId, usize), u32> = HashMap::new();
        let mut group_load: HashMap<SwitchId, u32> = HashMap::new();
        // Each LID's homes, best-scored first.
        let ranked: Vec<Vec<(f64, usize)>> = kind
            .iter()
            .map(|&(lid, t)| {
                let mut r: Vec<(f64, usize)> = known(t)
                    .iter()
                    .enumerate()
                    .map(|(k, &(h, w))| {
                        let u = unit(lid, mix(fabric.switch_node(h).guid));
                        (neg_log2(u) / w as f64, k)
                    })
                    .collect();
                r.sort_by(|a, b| a.0.total_cmp(&b.0));
                r
            })
            .collect();
        let mut chosen: Vec<Option<usize>> = vec![None; kind.len()];
        let take = |i: usize, k: usize, load: &mut HashMap<_, u32>, group: &mut HashMap<_, u32>| {
            let t = kind[i].1;
            *load.entry((t, k)).or_default() += 1;
            *group.entry(known(t)[k].0).or_default() += 1;
            k
        };
        // A ghost: the best-scored of the switches the Dragonfly+
        // would make a home (a leaf's spines, a spine's leaves) where
        // that one lost its cable and scores better than every home.
        let lost_best = |i: usize| -> Option<(f64, SwitchId)> {
            let (lid, t) = kind[i];
            let best = ranked[i].first().map_or(f64::INFINITY, |r| r.0);
            let plus = roles.plus;
            let g = plus.group_of[t.idx()];
            let peers = if plus.is_leaf[t.idx()] {
                &plus.spines[g]
            } else {
                &plus.leaves[g]
            };
            peers
                .iter()
                .filter(|&&h| !known(t).iter().any(|k| k.0 == h))
                .map(|&h| (neg_log2(unit(lid, mix(fabric.switch_node(h).guid))), h))
                .filter(|&(score, _)| score < best)
                .min_by(|a, b| a.0.total_cmp(&b.0))
        };
        let ghost: Vec<Option<(f64, SwitchId)>> = (0..kind.len()).map(lost_best).collect();
        let lost: Vec<bool> = ghost.iter().map(Option::is_some).collect();
        let claim = |i: usize| {
            ghost[i].map_or_else(|| ranked[i].first().map_or(f64::INFINITY, |r| r.0), |g| g.0)
        };
        let mut first: Vec<usize> = (0..kind.len())
            .filter(|&i| lost[i] || !ranked[i].is_empty())
            .collect();
        first.sort_by(|&a, &b| claim(a).total_cmp(&claim(b)));
        for i in first {
            if let Some((_, h)) = ghost[i] {
                if group_load.get(&h).copied().unwrap_or(0) < group_cap {
                    *group_load.entry(h).or_default() += 1;
                }
                continue;
            }
            let (t, k) = (kind[i].1, ranked[i][0].1);
            let h = known(t)[k].0;
            if load.get(&(t, k)).copied().unwrap_or(0) < here_cap(t, k)
                && group_load.get(&h).copied().unwrap_or(0) < group_cap
            {
                chosen[i] = Some(take(i, k, &mut load, &mut group_load));
            }
        }
        // The second round: the rest, those that lost their best home
        // last, so that they take what is left and push nobody on.
        let (kept, moved): (Vec<usize>, Vec<usize>) = (0..kind.len()).partition(|&i| !lost[i]);
        for i in kept.into_iter().chain(moved) {
            if chosen[i].is_some() || ranked[i].is_empty() {
                continue;
            }
            let t = kind[i].1;
            let open_here = |k: usize| load.get(&(t, k)).copied().unwrap_or(0) < here_cap(t, k);
            let open_group = |k: usize| {
                let h = known(t)[k].0;
                group_load.get(&h).copied().unwrap_or(0) < group_cap
            };
            let k = ranked[i]
                .iter()
                .find(|r| open_here(r.1) && open_group(r.1))
                .or_else(|| ranked[i].iter().find(|r| open_here(r.1)))
                .unwrap_or(&ranked[i][0])
                .1;
            chosen[i] = Some(take(i, k, &mut load, &mut group_load));
        }
        for (i, k) in chosen.into_iter().enumerate() {
            if let Some(k) = k {
                home[kind[i].0.idx()] = 1 << k;
            }
        }
    }
    home
}

/// Whether `lid` is a CA's (not a switch's own).
fn is_ca(fabric: &Fabric, lid: Lid) -> bool {
    fabric
        .lid_owner(lid)
        .is_some_and(|o| fabric.switch_id(o.node).is_none())
}

/// Every switch's table: per destination switch its candidates (on all
/// cores), each LID's home, then per switch and destination group the up
/// and down picks, then the global ones knowing the demand the first left
/// on each spine.
pub fn forwarding_tables(fabric: &Fabric, roles: &Roles) -> Vec<Lft> {
    let graph = fabric.graph();
    let mut towards: Vec<Towards> = vec![Towards::default(); graph.switch_count()];
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
    let home = assign_homes(fabric, roles, &by_group, &towards);
    let is_ca = |lid: Lid| is_ca(fabric, lid);
    let at = |t: SwitchId, s: SwitchId| towards[t.idx()].cands[s.idx()].as_slice();
    let is_global = |t: SwitchId, s: SwitchId| at(t, s).first().is_some_and(|c| c.global);
    let key = |s: SwitchId| mix(fabric.switch_node(s).guid);
    let mut lfts = Routing::empty_lfts(fabric);
    crate::parallel::for_each_row(&mut lfts, |s, lft| {
        let s = SwitchId::new(s);
        for lids in &by_group {
            // CAs' LIDs and switches' own apart: the bounds count hosts'
            // routes, which management LIDs would skew.
            for hosts in [true, false] {
                let mut with: Vec<Entry> = Vec::new();
                for &(lid, t) in lids.iter().filter(|&&(lid, _)| is_ca(lid) == hosts) {
                    if t == s {
                        lft.set(
                            lid,
                            fabric
                                .lid_owner(lid)
                                .map_or(NO_PATH, |o| fabric.delivery_port(o)),
                        );
                    } else if !is_global(t, s) {
                        with.push((lid, at(t, s), home[lid.idx()]));
                    }
                }
                for ((lid, _, _), port) in
                    with.iter()
                        .zip(pick_group(&with, key(s), graph.port_slots(s)))
                {
                    lft.set(*lid, port);
                }
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
        .filter(|&(lid, _)| is_ca(lid))
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
                .map(|&(lid, t)| (lid, at(t, s), demand[s.idx()][lid.idx()]))
                .collect();
            for (lid, port) in deal(&global, key(s), graph.port_slots(s)) {
                lft.set(lid, port);
            }
        }
    });
    lfts
}

//! Dragonfly+ forwarding tables: for every destination switch, which
//! cables of every other switch lie on its best paths (shortest, then
//! fewest backward turns), and for every LID, which of those cables a
//! switch takes.
//!
//! **Best paths.** Switches are taken in order of distance to the
//! destination `t`. A switch's candidates are its cables to a neighbour
//! one hop nearer; each costs the backward turns the path makes from
//! there (a turn from a down channel to an up one at a leaf, the bounce
//! round a missing leaf–spine cable, or from a global channel to a global
//! one at a spine, the crossing of a middle group), given the neighbour's
//! own choice. The cheapest class of cable wins (up, then down, then
//! global on a tie: a spine stays in its group rather than leave it), and
//! all cables of that class and cost are candidates. On an intact
//! Dragonfly+ that is exactly the minimal paths: leaf → spine → [global]
//! → spine → leaf.
//!
//! **Spreading.** Each LID picks one candidate by weighted rendezvous
//! hashing: a score from (LID, switch GUID, port), weighted by the number
//! of equal paths the candidate leads to (a spine with three cables to
//! the destination group gets three times the traffic of one with one),
//! the best score wins. LIDs spread over spines and over the cables of a
//! group pair in proportion, and the choice of one cable depends on no
//! other: when a cable fails, only the LIDs that took it (and those whose
//! weights it changed) move.

use super::{backward, Class, Roles};
use crate::fabric::{Fabric, Lid, PortNum, SwitchGraph, SwitchId};
use crate::routing::{Lft, Routing, NO_PATH};

/// A candidate cable: its port and the number of equal paths behind it.
type Candidate = (PortNum, u64);

/// Per switch, its candidate cables towards one destination switch.
pub type Towards = Vec<Vec<Candidate>>;

/// The candidates of every switch towards `t` (module comment).
pub fn candidates(graph: &SwitchGraph, roles: &Roles, t: SwitchId) -> Towards {
    let n = graph.switch_count();
    let dist = graph.dist_row(t);
    let mut order: Vec<SwitchId> = graph.ids().filter(|&s| dist[s.idx()] != u16::MAX).collect();
    order.sort_by_key(|&s| dist[s.idx()]);
    let mut first_out = vec![Class::Terminal; n];
    let mut tail = vec![0u8; n];
    let mut width = vec![0u64; n];
    let mut out: Towards = vec![Vec::new(); n];
    width[t.idx()] = 1;
    for &s in order.iter().filter(|&&s| s != t) {
        let key = |to: SwitchId| {
            let class = roles.class(s, to);
            let cost = u8::from(backward(class, first_out[to.idx()])) + tail[to.idx()];
            (cost, class.preference())
        };
        let nearer = graph
            .cables(s)
            .iter()
            .filter(|c| dist[c.to.idx()] + 1 == dist[s.idx()]);
        let Some(best) = nearer.clone().map(|c| key(c.to)).min() else {
            continue;
        };
        let chosen: Vec<(PortNum, SwitchId)> = nearer
            .filter(|c| key(c.to) == best)
            .map(|c| (c.port, c.to))
            .collect();
        for (port, to) in chosen {
            out[s.idx()].push((port, width[to.idx()]));
            width[s.idx()] = width[s.idx()].saturating_add(width[to.idx()]);
            first_out[s.idx()] = roles.class(s, to);
        }
        tail[s.idx()] = best.0;
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

/// The candidate `lid` takes at the switch with GUID `guid`: weighted
/// rendezvous hashing (the smallest −ln(u)/weight).
pub fn pick(candidates: &[Candidate], lid: Lid, guid: u64) -> PortNum {
    let score = |&(port, weight): &Candidate| {
        let h = mix(guid ^ mix((lid.idx() as u64) << 8 | port.idx() as u64));
        // u in (0, 1]: 53 random bits.
        let u = ((h >> 11) + 1) as f64 / (1u64 << 53) as f64;
        -u.ln() / weight.max(1) as f64
    };
    candidates
        .iter()
        .map(|c| (score(c), c.0))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(NO_PATH, |(_, port)| port)
}

/// Every switch's table: per destination switch its candidates (on all
/// cores), then per switch and LID the pick.
pub fn forwarding_tables(fabric: &Fabric, roles: &Roles) -> Vec<Lft> {
    let graph = fabric.graph();
    let mut towards: Vec<Towards> = vec![Vec::new(); graph.switch_count()];
    crate::parallel::for_each_row(&mut towards, |t, row| {
        *row = candidates(graph, roles, SwitchId::new(t));
    });
    let lids: Vec<(Lid, SwitchId)> = fabric
        .lids()
        .filter_map(|(lid, _)| Some((lid, fabric.lid_switch(lid)?)))
        .collect();
    let mut lfts = Routing::empty_lfts(fabric);
    crate::parallel::for_each_row(&mut lfts, |s, lft| {
        let s = SwitchId::new(s);
        let guid = fabric.switch_node(s).guid;
        for &(lid, t) in &lids {
            let port = if t == s {
                match fabric.lid_owner(lid) {
                    Some(owner) => fabric.delivery_port(owner),
                    None => NO_PATH,
                }
            } else {
                pick(&towards[t.idx()][s.idx()], lid, guid)
            };
            lft.set(lid, port);
        }
    });
    lfts
}

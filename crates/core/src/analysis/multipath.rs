//! The Slim Fly paper's §6 analyses of a multipath routing, on any routing
//! with LMC > 0: every ordered pair of switches with hosts has one path per
//! LID offset (layer); per layer the distribution of their lengths, over
//! all layers how many pair paths cross each link, and per pair how many
//! of its paths are pairwise link-disjoint.

use std::collections::BTreeMap;

use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchId};
use crate::routing::walk::Walk;
use crate::routing::Routing;
#[derive(Clone, Debug)]
pub struct LayerReport {
    pub layers: usize,
    /// Ordered switch pairs examined (both have hosts).
    pub pairs: u64,
    /// Per layer: inter-switch hops -> switch pairs.
    pub path_lengths: Vec<BTreeMap<usize, u64>>,
    /// Per directed inter-switch channel, the pair paths (all layers)
    /// crossing it.
    pub channel_paths: Vec<u64>,
    /// Largest set of pairwise link-disjoint paths a pair has -> pairs.
    pub disjoint: BTreeMap<usize, u64>,
    /// Pairs whose path in some layer does not arrive (should be 0).
    pub undelivered: u64,
}

impl LayerReport {
    /// Fraction of pairs with at least `k` pairwise link-disjoint paths.
    pub fn disjoint_at_least(&self, k: usize) -> f64 {
        let n: u64 = self.disjoint.range(k..).map(|(_, c)| c).sum();
        n as f64 / self.pairs.max(1) as f64
    }

    /// Histogram of `channel_paths` in bins of `width` paths: (bin start,
    /// channels).
    pub fn channel_histogram(&self, width: u64) -> BTreeMap<u64, u64> {
        let mut h = BTreeMap::new();
        for &p in &self.channel_paths {
            *h.entry(p / width.max(1) * width.max(1)).or_insert(0) += 1;
        }
        h
    }
}

/// A cable, named by its lower (switch, port) end, so that both
/// directions count as the same link.
type Link = (SwitchId, PortNum);

/// The inter-switch hops (switch, out-port, cable) from switch `s` to LID
/// `dlid`; None if the tables do not deliver it.
fn trace_links(
    fabric: &Fabric,
    routing: &Routing,
    s: SwitchId,
    dlid: Lid,
) -> Option<Vec<(SwitchId, PortNum, Link)>> {
    let graph = fabric.graph();
    let mut links = Vec::new();
    for hop in Walk::from_switch(fabric, &routing.lfts, s, dlid) {
        let hop = hop.ok()?;
        if let Some(Peer::Switch { switch, port }) = graph.peer(hop.switch, hop.out_port) {
            links.push((
                hop.switch,
                hop.out_port,
                (hop.switch, hop.out_port).min((switch, port)),
            ));
        }
    }
    Some(links)
}

/// Most paths of `paths` that share no link, by exhaustive search (layers
/// are few: 2^LMC ≤ 8 in practice; beyond 12 a greedy pass is used).
fn most_disjoint(paths: &[Vec<Link>]) -> usize {
    let n = paths.len();
    let clash = |a: usize, b: usize| paths[a].iter().any(|l| paths[b].contains(l));
    if n > 12 {
        let mut chosen: Vec<usize> = Vec::new();
        for i in 0..n {
            if chosen.iter().all(|&j| !clash(i, j)) {
                chosen.push(i);
            }
        }
        return chosen.len();
    }
    let conflicts: Vec<u32> = (0..n)
        .map(|a| {
            (0..n)
                .filter(|&b| b != a && clash(a, b))
                .fold(0, |m, b| m | 1 << b)
        })
        .collect();
    (0u32..1 << n)
        .filter(|set| (0..n).all(|a| set & (1 << a) == 0 || conflicts[a] & set == 0))
        .map(u32::count_ones)
        .max()
        .unwrap_or(0) as usize
}

pub fn layer_report(fabric: &Fabric, routing: &Routing) -> LayerReport {
    let layers = 1usize << fabric.lmc();
    let graph = fabric.graph();
    // One CA port per switch with hosts: the destination of its pairs.
    let mut dest: Vec<Option<(Lid, u32)>> = vec![None; fabric.switch_count()];
    for (at, port) in fabric.end_ports() {
        if fabric.node(at.node).is_switch() {
            continue;
        }
        let Some(s) = fabric.lid_switch(port.lid) else {
            continue;
        };
        if dest[s].is_none_or(|(lid, _)| port.lid < lid) {
            dest[s] = Some((port.lid, port.lid_count()));
        }
    }
    let mut report = LayerReport {
        layers,
        pairs: 0,
        path_lengths: vec![BTreeMap::new(); layers],
        channel_paths: vec![0; graph.channel_count()],
        disjoint: BTreeMap::new(),
        undelivered: 0,
    };
    let ends: Vec<(SwitchId, (Lid, u32))> = fabric
        .switch_ids()
        .filter_map(|s| dest[s].map(|d| (s, d)))
        .collect();
    let mut paths: Vec<Vec<Link>> = Vec::with_capacity(layers);
    for &(s, _) in &ends {
        for &(_, (base, count)) in ends.iter().filter(|&&(d, _)| d != s) {
            report.pairs += 1;
            paths.clear();
            let mut delivered = true;
            for l in 0..layers {
                // Ports with fewer LIDs than layers reuse their last one.
                let dlid = base.offset((l as u32).min(count - 1) as u16);
                let Some(links) = trace_links(fabric, routing, s, dlid) else {
                    delivered = false;
                    break;
                };
                *report.path_lengths[l].entry(links.len()).or_insert(0) += 1;
                for &(at, port, _) in &links {
                    report.channel_paths[graph.channel(at, port)] += 1;
                }
                paths.push(links.into_iter().map(|(_, _, link)| link).collect());
            }
            if !delivered {
                report.undelivered += 1;
                continue;
            }
            *report.disjoint.entry(most_disjoint(&paths)).or_insert(0) += 1;
        }
    }
    // Only channels that are inter-switch links count in the histogram.
    let is_link: Vec<bool> = graph
        .ids()
        .flat_map(|s| {
            graph
                .peers(s)
                .iter()
                .enumerate()
                .map(|(p, peer)| p != 0 && matches!(peer, Some(Peer::Switch { .. })))
        })
        .collect();
    report.channel_paths = report
        .channel_paths
        .iter()
        .zip(&is_link)
        .filter(|(_, &l)| l)
        .map(|(&c, _)| c)
        .collect();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disjoint_sets_are_counted_exactly() {
        let l = |s: usize, p: u8| (SwitchId::new(s), PortNum::new(p));
        let a = vec![l(0, 1)];
        let b = vec![l(1, 1), l(2, 1)];
        let c = vec![l(0, 1), l(2, 1)];
        assert_eq!(most_disjoint(&[a.clone(), b.clone(), c.clone()]), 2);
        assert_eq!(most_disjoint(&[a.clone(), a.clone()]), 1);
        assert_eq!(most_disjoint(&[a, b, vec![l(3, 1)]]), 3);
    }
}

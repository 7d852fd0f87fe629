//! The Slim Fly paper's §6 analyses of a multipath routing, on any routing
//! with LMC > 0: every ordered pair of switches with hosts has one path per
//! LID offset (layer); per layer the distribution of their lengths, over
//! all layers how many pair paths cross each link, and per pair how many
//! of its paths are pairwise link-disjoint.

use std::collections::BTreeMap;

use crate::fabric::{Fabric, Peer, PortRef};
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

/// A cable, named by its lower (switch index, port) end, so that both
/// directions count as the same link.
type Link = (usize, u8);

/// The inter-switch links from switch `s` to LID `dlid`, None if the
/// tables do not deliver it to `target`.
fn trace_links(
    routing: &Routing,
    peers: &[Vec<Option<Peer>>],
    remote_port: &dyn Fn(usize, u8) -> u8,
    s: usize,
    target: usize,
    dlid: u16,
) -> Option<Vec<(usize, u8, Link)>> {
    let mut at = s;
    let mut links = Vec::new();
    while at != target {
        if links.len() > routing.lfts.len() {
            return None; // a forwarding loop
        }
        let port = *routing.lfts[at].get(dlid as usize)?;
        let Some(Peer::Switch(next)) = peers[at].get(port as usize).copied().flatten() else {
            return None;
        };
        let far = remote_port(at, port);
        links.push((at, port, (at, port).min((next, far))));
        at = next;
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
    let conflicts: Vec<u32> =
        (0..n).map(|a| (0..n).filter(|&b| b != a && clash(a, b)).fold(0, |m, b| m | 1 << b)).collect();
    (0u32..1 << n)
        .filter(|set| (0..n).all(|a| set & (1 << a) == 0 || conflicts[a] & set == 0))
        .map(u32::count_ones)
        .max()
        .unwrap_or(0) as usize
}

pub fn layer_report(fabric: &Fabric, routing: &Routing) -> LayerReport {
    let layers = 1usize << fabric.lmc();
    let peers = fabric.switch_port_peers();
    let switches = fabric.switches();
    let remote_port =
        |s: usize, p: u8| fabric.port(PortRef::new(switches[s], p)).and_then(|x| x.remote).map_or(0, |r| r.port);
    // One CA port per switch with hosts: the destination of its pairs.
    let mut dest: Vec<Option<(u16, u32)>> = vec![None; switches.len()];
    for (at, port) in fabric.end_ports() {
        if fabric.node(at.node).is_switch() {
            continue;
        }
        let Some(s) = fabric.lid_switch(port.lid).and_then(|n| fabric.switch_index(n)) else {
            continue;
        };
        if dest[s].is_none_or(|(lid, _)| port.lid < lid) {
            dest[s] = Some((port.lid, port.lid_count()));
        }
    }
    let (offset, channels) = fabric.switch_port_offsets();
    let mut report = LayerReport {
        layers,
        pairs: 0,
        path_lengths: vec![BTreeMap::new(); layers],
        channel_paths: vec![0; channels],
        disjoint: BTreeMap::new(),
        undelivered: 0,
    };
    let ends: Vec<usize> = (0..switches.len()).filter(|&s| dest[s].is_some()).collect();
    let mut paths: Vec<Vec<Link>> = Vec::with_capacity(layers);
    for &s in &ends {
        for &d in ends.iter().filter(|&&d| d != s) {
            let (base, count) = dest[d].expect("ends have a destination port");
            report.pairs += 1;
            paths.clear();
            let mut delivered = true;
            for l in 0..layers {
                // Ports with fewer LIDs than layers reuse their last one.
                let dlid = base + (l as u32).min(count - 1) as u16;
                let Some(links) = trace_links(routing, &peers, &remote_port, s, d, dlid) else {
                    delivered = false;
                    break;
                };
                *report.path_lengths[l].entry(links.len()).or_insert(0) += 1;
                for &(at, port, _) in &links {
                    report.channel_paths[offset[at] + port as usize] += 1;
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
    let is_link: Vec<bool> = peers
        .iter()
        .flat_map(|ports| ports.iter().enumerate().map(|(p, peer)| p != 0 && matches!(peer, Some(Peer::Switch(_)))))
        .collect();
    report.channel_paths = report.channel_paths.iter().zip(&is_link).filter(|(_, &l)| l).map(|(&c, _)| c).collect();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disjoint_sets_are_counted_exactly() {
        let a = vec![(0, 1)];
        let b = vec![(1, 1), (2, 1)];
        let c = vec![(0, 1), (2, 1)];
        assert_eq!(most_disjoint(&[a.clone(), b.clone(), c.clone()]), 2);
        assert_eq!(most_disjoint(&[a.clone(), a.clone()]), 1);
        assert_eq!(most_disjoint(&[a, b, vec![(3, 1)]]), 3);
    }
}

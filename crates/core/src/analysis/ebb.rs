//! Effective bisection bandwidth (Hoefler et al., "Optimized routing for
//! large-scale InfiniBand networks", §IV-A): the average, over N random
//! bisections, of the bandwidth the routing delivers when every endpoint of
//! one half sends to one partner in the other half, each stream getting the
//! link bandwidth divided by the highest congestion along its path.
//! Reported as a fraction of full bisection bandwidth (P/2 streams at full
//! speed).
//!
//! Model choices: links are full duplex, so congestion is counted per
//! direction (per switch out-port); endpoints are CA ports with a LID, a
//! stream goes to its partner's base LID; with an odd number of endpoints
//! one random endpoint sits each pattern out; a stream the tables do not
//! deliver gets bandwidth 0. Patterns come from the project's seeded
//! splitmix64 (the paper used a Mersenne Twister).

use crate::fabric::{Fabric, Lid, PortRef};
use crate::rng::Rng;
use crate::routing::walk::Walk;
use crate::routing::Routing;

/// Λ as a fraction of full bisection bandwidth, over `patterns` random
/// bisections drawn from `seed`. 1.0 for fewer than two endpoints.
pub fn effective_bisection(fabric: &Fabric, routing: &Routing, patterns: usize, seed: u64) -> f64 {
    effective_bisection_with(fabric, routing, patterns, seed, &|_, base| base)
}

/// `effective_bisection` with the destination LID each stream uses chosen
/// by `dlid(source base LID, destination base LID)` (e.g. an engine's path
/// selection) instead of the destination's base LID.
pub fn effective_bisection_with(
    fabric: &Fabric,
    routing: &Routing,
    patterns: usize,
    seed: u64,
    dlid: &dyn Fn(Lid, Lid) -> Lid,
) -> f64 {
    let endpoints: Vec<(PortRef, Lid)> =
        fabric.end_ports().filter(|(at, _)| !fabric.node(at.node).is_switch()).map(|(at, p)| (at, p.lid)).collect();
    if endpoints.len() < 2 || patterns == 0 {
        return 1.0;
    }
    let graph = fabric.graph();
    let mut congestion = vec![0u32; graph.channel_count()];
    let mut rng = Rng::new(seed);
    let mut order: Vec<usize> = (0..endpoints.len()).collect();
    let half = endpoints.len() / 2;
    let mut paths: Vec<Option<Vec<usize>>> = Vec::with_capacity(half);
    let mut sum = 0.0;
    for _ in 0..patterns {
        rng.shuffle(&mut order);
        paths.clear();
        for i in 0..half {
            let (src, slid) = endpoints[order[i]];
            let (_, base) = endpoints[order[half + i]];
            let path: Option<Vec<usize>> = Walk::from_port(fabric, &routing.lfts, src, dlid(slid, base))
                .map(|hop| hop.map(|h| graph.channel(h.switch, h.out_port)))
                .collect::<Result<_, _>>()
                .ok();
            if let Some(p) = &path {
                for &c in p {
                    congestion[c] += 1;
                }
            }
            paths.push(path);
        }
        let mut delivered = 0.0;
        for path in paths.iter().flatten() {
            let worst = path.iter().map(|&c| congestion[c]).max().unwrap_or(1).max(1);
            delivered += 1.0 / worst as f64;
        }
        for path in paths.iter().flatten() {
            for &c in path {
                congestion[c] = 0;
            }
        }
        sum += delivered / half as f64;
    }
    sum / patterns as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricBuilder, NodeKind};
    use crate::routing::PathSl;

    /// `hosts[i]` hosts on switch i, switches in a chain, shortest routes.
    fn chain(hosts: &[usize]) -> (Fabric, Routing) {
        let mut b = FabricBuilder::new();
        let n = hosts.len();
        let radix = hosts.iter().max().copied().unwrap_or(0) as u8 + 2;
        let sw: Vec<_> = (0..n).map(|i| b.add_node(NodeKind::Switch, 0x10 + i as u64, "", radix)).collect();
        for i in 1..n {
            // Port 1 goes left, port 2 right.
            b.connect(PortRef::new(sw[i - 1], 2), PortRef::new(sw[i], 1)).unwrap();
        }
        let mut where_ = Vec::new();
        for (i, &h) in hosts.iter().enumerate() {
            for k in 0..h {
                let ca = b.add_node(NodeKind::Ca, 0x1000 + (i * 16 + k) as u64 * 2, "", 1);
                b.connect(PortRef::new(ca, 1), PortRef::new(sw[i], (k + 3) as u8)).unwrap();
                where_.push((ca, i, (k + 3) as u8));
            }
        }
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let mut lfts = Routing::empty_lfts(&f);
        for &(ca, at, port) in &where_ {
            let lid = f.node(ca).port(1).unwrap().lid;
            for (s, lft) in lfts.iter_mut().enumerate() {
                lft.set(lid, crate::fabric::PortNum::new(if s == at { port } else if s < at { 2 } else { 1 }));
            }
        }
        (f, Routing { engine: "t".into(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) })
    }

    #[test]
    fn a_single_switch_has_full_bisection() {
        let (f, r) = chain(&[8]);
        assert_eq!(effective_bisection(&f, &r, 200, 1), 1.0);
    }

    /// Two switches with two hosts each, one cable: the two senders are on
    /// one switch with probability 1/3 (then both streams share the cable
    /// one way: 1/2 each), otherwise no channel is shared: Λ = 1/3 * 1/2 +
    /// 2/3 * 1 = 5/6.
    #[test]
    fn two_switches_two_hosts_each_give_five_sixths() {
        let (f, r) = chain(&[2, 2]);
        let ebb = effective_bisection(&f, &r, 20_000, 7);
        assert!((ebb - 5.0 / 6.0).abs() < 0.01, "{ebb}");
        // Same seed, same value.
        assert_eq!(ebb, effective_bisection(&f, &r, 20_000, 7));
    }

    #[test]
    fn undelivered_streams_count_as_zero() {
        let (f, mut r) = chain(&[1, 1]);
        for lft in &mut r.lfts {
            for (lid, _) in f.lids() {
                lft.set(lid, crate::routing::NO_PATH);
            }
        }
        assert_eq!(effective_bisection(&f, &r, 10, 1), 0.0);
    }
}

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
    effective_bisection_with_progress(fabric, routing, patterns, seed, &|_, base| base, &|_, _| {})
}

/// `effective_bisection` with the destination LID each stream uses chosen
/// by `dlid(source base LID, destination base LID)` (e.g. an engine's path
/// selection) instead of the destination's base LID, calling
/// `progress(done, total)` as patterns are evaluated. Runs on all cores;
/// the patterns are drawn in order on one thread and the results summed in
/// that order, so the value does not depend on the number of threads.
pub fn effective_bisection_with_progress(
    fabric: &Fabric,
    routing: &Routing,
    patterns: usize,
    seed: u64,
    dlid: &(dyn Fn(Lid, Lid) -> Lid + Sync),
    progress: &(dyn Fn(usize, usize) + Sync),
) -> f64 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    ebb_on(fabric, routing, patterns, seed, dlid, progress, cores)
}

/// `effective_bisection_with_progress` on `threads` threads.
fn ebb_on(
    fabric: &Fabric,
    routing: &Routing,
    patterns: usize,
    seed: u64,
    dlid: &(dyn Fn(Lid, Lid) -> Lid + Sync),
    progress: &(dyn Fn(usize, usize) + Sync),
    threads: usize,
) -> f64 {
    let endpoints: Vec<(PortRef, Lid)> = fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
        .map(|(at, p)| (at, p.lid))
        .collect();
    if endpoints.len() < 2 || patterns == 0 {
        return 1.0;
    }
    let threads = threads.clamp(1, patterns);
    // A few patterns per thread at a time bounds the memory the drawn
    // orders take (one endpoint list each).
    let batch = threads * 8;
    let mut rng = Rng::new(seed);
    let mut order: Vec<usize> = (0..endpoints.len()).collect();
    let mut sum = 0.0;
    let mut done = 0;
    while done < patterns {
        let n = batch.min(patterns - done);
        let orders: Vec<Vec<usize>> = (0..n)
            .map(|_| {
                rng.shuffle(&mut order);
                order.clone()
            })
            .collect();
        let per_thread = n.div_ceil(threads);
        let values: Vec<f64> = std::thread::scope(|scope| {
            let workers: Vec<_> = orders
                .chunks(per_thread)
                .map(|part| {
                    let endpoints = &endpoints;
                    scope.spawn(move || {
                        let mut streams = Streams::new(fabric);
                        part.iter()
                            .map(|o| bandwidth(&mut streams, fabric, routing, endpoints, o, dlid))
                            .collect::<Vec<f64>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("an EBB thread panicked"))
                .collect()
        });
        // One by one, in pattern order: the same sum one thread makes.
        for v in values {
            sum += v;
        }
        done += n;
        progress(done, patterns);
    }
    sum / patterns as f64
}

/// Streams of one traffic pattern on the channels they cross, kept
/// between patterns: each stream (or part of a split one) of weight w gets
/// w divided by the heaviest load along its path (at least 1), loads being
/// the summed weights of the streams on a channel, per direction. Shared
/// by the bisection patterns (weight 1) and the group shift
/// (`super::group_shift`, streams split over a destination's LIDs).
pub(crate) struct Streams {
    load: Vec<f64>,
    parts: Vec<(f64, Vec<usize>)>,
}

impl Streams {
    pub(crate) fn new(fabric: &Fabric) -> Self {
        Streams {
            load: vec![0.0; fabric.graph().channel_count()],
            parts: Vec::new(),
        }
    }

    /// Adds a stream of `weight` from `src` to `dlid`; one the tables do
    /// not deliver gets nothing.
    pub(crate) fn add(
        &mut self,
        fabric: &Fabric,
        routing: &Routing,
        src: PortRef,
        dlid: Lid,
        weight: f64,
    ) {
        let graph = fabric.graph();
        let path: Result<Vec<usize>, _> = Walk::from_port(fabric, &routing.lfts, src, dlid)
            .map(|hop| hop.map(|h| graph.channel(h.switch, h.out_port)))
            .collect();
        if let Ok(path) = path {
            for &c in &path {
                self.load[c] += weight;
            }
            self.parts.push((weight, path));
        }
    }

    /// The summed rates of the streams added since the last call, which
    /// are then forgotten.
    pub(crate) fn delivered(&mut self) -> f64 {
        let mut delivered = 0.0;
        for (weight, path) in &self.parts {
            let worst = path.iter().map(|&c| self.load[c]).fold(1.0, f64::max);
            delivered += weight / worst;
        }
        for (_, path) in self.parts.drain(..) {
            for c in path {
                self.load[c] = 0.0;
            }
        }
        delivered
    }
}

/// The share of full bandwidth the pattern `order` gets: its first half
/// sends to its second half, partner by partner.
fn bandwidth(
    streams: &mut Streams,
    fabric: &Fabric,
    routing: &Routing,
    endpoints: &[(PortRef, Lid)],
    order: &[usize],
    dlid: &(dyn Fn(Lid, Lid) -> Lid + Sync),
) -> f64 {
    let half = endpoints.len() / 2;
    for i in 0..half {
        let (src, slid) = endpoints[order[i]];
        let (_, base) = endpoints[order[half + i]];
        streams.add(fabric, routing, src, dlid(slid, base), 1.0);
    }
    streams.delivered() / half as f64
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
        let sw: Vec<_> = (0..n)
            .map(|i| b.add_node(NodeKind::Switch, 0x10 + i as u64, "", radix))
            .collect();
        for i in 1..n {
            // Port 1 goes left, port 2 right.
            b.connect(PortRef::new(sw[i - 1], 2), PortRef::new(sw[i], 1))
                .unwrap();
        }
        let mut where_ = Vec::new();
        for (i, &h) in hosts.iter().enumerate() {
            for k in 0..h {
                let ca = b.add_node(NodeKind::Ca, 0x1000 + (i * 16 + k) as u64 * 2, "", 1);
                b.connect(PortRef::new(ca, 1), PortRef::new(sw[i], (k + 3) as u8))
                    .unwrap();
                where_.push((ca, i, (k + 3) as u8));
            }
        }
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let mut lfts = Routing::empty_lfts(&f);
        for &(ca, at, port) in &where_ {
            let lid = f.node(ca).port(1).unwrap().lid;
            for (s, lft) in lfts.iter_mut().enumerate() {
                lft.set(
                    lid,
                    crate::fabric::PortNum::new(if s == at {
                        port
                    } else if s < at {
                        2
                    } else {
                        1
                    }),
                );
            }
        }
        (
            f,
            Routing {
                engine: "t".into(),
                lfts,
                sl2vl: None,
                path_sl: PathSl::Uniform(0),
            },
        )
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

    /// Patterns are drawn on one thread and summed in order: the value is
    /// the same, to the last bit, on one thread or five.
    #[test]
    fn the_value_does_not_depend_on_the_threads() {
        let (f, r) = chain(&[3, 1, 4, 2]);
        let on = |threads| ebb_on(&f, &r, 101, 9, &|_, base| base, &|_, _| {}, threads);
        assert_eq!(on(1).to_bits(), on(5).to_bits());
        assert!(on(1) < 1.0);
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

//! Lower bounds on the edge forwarding index (the most routes on one
//! inter-switch channel), from the fabric alone: what tests and benchmarks
//! hold a routing's load against. Parallel cables each count as a channel.

use crate::fabric::{Bfs, Fabric};

/// The cut bound of the switch set `inside`: its hosts send to every host
/// elsewhere, `lids_per_host` routes each (2^LMC when every LID is
/// routed), over the cables leaving the set, so one of them carries at
/// least ⌈routes / cables⌉. 0 for a set no cable leaves.
pub fn cut(fabric: &Fabric, inside: &[bool], lids_per_host: u64) -> u64 {
    let g = fabric.graph();
    let total: u64 = g.ids().map(|s| u64::from(g.hosts(s))).sum();
    let hosts: u64 = g
        .ids()
        .filter(|s| inside[s.idx()])
        .map(|s| u64::from(g.hosts(s)))
        .sum();
    let cables = g
        .ids()
        .filter(|s| inside[s.idx()])
        .flat_map(|s| g.cables(s))
        .filter(|c| !inside[c.to.idx()])
        .count();
    if cables == 0 {
        return 0;
    }
    (lids_per_host * hosts * (total - hosts)).div_ceil(cables as u64)
}

/// Every switch with hosts on its own, as a switch set for `cut`.
pub fn host_switches(fabric: &Fabric) -> Vec<Vec<bool>> {
    let g = fabric.graph();
    g.ids()
        .filter(|&s| g.hosts(s) > 0)
        .map(|s| {
            let mut inside = vec![false; g.switch_count()];
            inside[s.idx()] = true;
            inside
        })
        .collect()
}

/// A tree's pods, as switch sets for `cut`: the components left when the
/// switches farthest from every host switch (the top level) are taken
/// away. On a two-level tree they are the leaves.
pub fn tree_pods(fabric: &Fabric) -> Vec<Vec<bool>> {
    let g = fabric.graph();
    let n = g.switch_count();
    let mut bfs = Bfs::new(n);
    bfs.run_from(g, &g.ids().filter(|&s| g.hosts(s) > 0).collect::<Vec<_>>());
    let top = g.ids().map(|s| bfs.dist(s)).max().unwrap_or(0);
    let mut seen = vec![false; n];
    let mut pods = Vec::new();
    for start in g.ids().filter(|&s| bfs.dist(s) < top) {
        if seen[start.idx()] {
            continue;
        }
        let (mut inside, mut stack) = (vec![false; n], vec![start]);
        seen[start.idx()] = true;
        while let Some(x) = stack.pop() {
            inside[x.idx()] = true;
            for &y in g.neighbours(x) {
                if bfs.dist(y) < top && !seen[y.idx()] {
                    seen[y.idx()] = true;
                    stack.push(y);
                }
            }
        }
        pods.push(inside);
    }
    pods
}

/// The bound on any minimal routing from the average: every pair of
/// switches a, b sends hosts(a) * hosts(b) routes over dist(a, b)
/// channels, so the busiest channel carries at least the average.
pub fn minimal_routing_average(fabric: &Fabric) -> u64 {
    let g = fabric.graph();
    let route_hops: u64 = g
        .ids()
        .flat_map(|a| g.ids().map(move |b| (a, b)))
        .map(|(a, b)| u64::from(g.hosts(a) * g.hosts(b)) * u64::from(g.dist(a, b)))
        .sum();
    let channels: u64 = g
        .ids()
        .map(|s| g.cables(s).iter().filter(|c| c.to != s).count() as u64)
        .sum();
    route_hops.div_ceil(channels.max(1))
}

//! Trees whose leaves lie at different depths below the spines, seen from
//! the wrong end.
//!
//! Heights counted from the leaves assume every leaf hangs at the same
//! depth. Real clusters grow sideways: PlaFRIM has four leaves under two
//! spines, a 27-host switch hanging below one of those leaves, a small
//! switch below two others and a 26-host switch below that one. Counted
//! from the hosts, only the fullest switch stays a leaf (the others are
//! cabled to leaves and get lifted), and the tree comes out upside down:
//! the spines in the middle, the other leaves above them, the 26-host
//! switch at the top. Hosts on either side of the spines then have no
//! up*/down* path to each other at all, and their shortest paths need
//! the virtual layering and balance poorly.
//!
//! When that happens the heights are counted the other way: from the
//! switches of one height taken as the roots, down (a switch's height is
//! the deepest depth less its own). Of the ways that put every cable
//! between adjacent heights, the one that leaves the fewest host pairs
//! without an up*/down* path replaces the first, if it leaves fewer.

use std::collections::VecDeque;

use crate::fabric::SwitchGraph;

/// Heights that give more host pairs an up*/down* path than `height`
/// does, if some root height gives them (`fits` says whether heights put
/// every cable between adjacent heights). Among equals: the shortest
/// up*/down* paths, then the widest top (most cables down from the roots:
/// the spines rather than a small switch hanging below a leaf).
pub(super) fn rerooted(
    graph: &SwitchGraph,
    height: &[usize],
    fits: impl Fn(&[usize]) -> bool,
) -> Option<Vec<usize>> {
    if !strands_hosts(graph, height) {
        return None;
    }
    let mut best = score(graph, height);
    let top = height.iter().copied().max().unwrap_or(0);
    let mut chosen = None;
    for k in (1..=top).rev() {
        let Some(h) = heights_below(graph, height, k) else {
            continue;
        };
        if !fits(&h) {
            continue;
        }
        let s = score(graph, &h);
        if s < best {
            best = s;
            chosen = Some(h);
        }
    }
    chosen
}

/// Heights counted down from the switches at height `k` (the roots): the
/// deepest switch is 0. `None` when some switch is not reached.
fn heights_below(graph: &SwitchGraph, height: &[usize], k: usize) -> Option<Vec<usize>> {
    let mut depth = vec![usize::MAX; graph.switch_count()];
    let mut queue = VecDeque::new();
    for s in graph.ids().filter(|s| height[s.idx()] == k) {
        depth[s.idx()] = 0;
        queue.push_back(s);
    }
    while let Some(s) = queue.pop_front() {
        for &t in graph.neighbours(s) {
            if depth[t.idx()] == usize::MAX {
                depth[t.idx()] = depth[s.idx()] + 1;
                queue.push_back(t);
            }
        }
    }
    let deepest = depth.iter().copied().max()?;
    (deepest != usize::MAX).then(|| depth.iter().map(|d| deepest - d).collect())
}

/// Whether some switch with hosts is not below the first top switch (in
/// every full tree each top switch lies above all of them: then no pair
/// lacks an up*/down* path and nothing more is computed).
fn strands_hosts(graph: &SwitchGraph, height: &[usize]) -> bool {
    let top = height.iter().copied().max().unwrap_or(0);
    let Some(root) = graph.ids().find(|s| height[s.idx()] == top) else {
        return false;
    };
    let mut seen = vec![false; graph.switch_count()];
    let mut stack = vec![root];
    while let Some(s) = stack.pop() {
        if std::mem::replace(&mut seen[s.idx()], true) {
            continue;
        }
        let h = height[s.idx()];
        stack.extend(
            graph
                .neighbours(s)
                .iter()
                .filter(|t| height[t.idx()] + 1 == h),
        );
    }
    graph.ids().any(|s| graph.hosts(s) > 0 && !seen[s.idx()])
}

/// Lower is better: host pairs (weighted by the hosts of both switches)
/// without an up*/down* path, the same pairs' up*/down* hops, and the
/// cables below the roots, negated.
fn score(graph: &SwitchGraph, height: &[usize]) -> (u64, u64, i64) {
    let n = graph.switch_count();
    let top = height.iter().copied().max().unwrap_or(0);
    let top_cables = graph
        .ids()
        .filter(|s| height[s.idx()] == top)
        .map(|s| graph.cables(s).len() as i64)
        .sum::<i64>();
    // Up*/down* hops from one switch: state 0 still climbing, 1 going
    // down (never up again).
    let mut dist = vec![[u32::MAX; 2]; n];
    let mut queue = VecDeque::new();
    let (mut stranded, mut hops) = (0u64, 0u64);
    for a in graph.ids().filter(|&s| graph.hosts(s) > 0) {
        dist.iter_mut().for_each(|d| *d = [u32::MAX; 2]);
        dist[a.idx()][0] = 0;
        queue.push_back((a, 0usize));
        while let Some((s, phase)) = queue.pop_front() {
            let (h, d) = (height[s.idx()], dist[s.idx()][phase]);
            for &t in graph.neighbours(s) {
                let next = match (phase, height[t.idx()]) {
                    (0, ht) if ht == h + 1 => 0,
                    (_, ht) if ht + 1 == h => 1,
                    _ => continue,
                };
                if dist[t.idx()][next] == u32::MAX {
                    dist[t.idx()][next] = d + 1;
                    queue.push_back((t, next));
                }
            }
        }
        for b in graph.ids().filter(|&s| s > a && graph.hosts(s) > 0) {
            let w = u64::from(graph.hosts(a)) * u64::from(graph.hosts(b));
            match dist[b.idx()].iter().copied().min() {
                Some(d) if d != u32::MAX => hops += w * u64::from(d),
                _ => stranded += w,
            }
        }
    }
    (stranded, hops, -top_cables)
}

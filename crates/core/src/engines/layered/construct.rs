//! Algorithm 1 of the Slim Fly paper (§4.3, App. B.1) on the switch graph:
//! routing layers as destination-based next-hop tables.
//!
//! Layer 0 holds balanced minimal paths. Every further layer first gets,
//! per ordered switch pair in priority order, one almost-minimal path
//! that respects what the layer already fixed, then the switches still
//! without a next hop towards a destination are completed with the
//! shortest paths the fixed entries allow. A link's weight counts the
//! host-to-host routes crossing it (Fig. 15), over all layers; paths and
//! completions prefer light links.

use crate::fabric::{SwitchGraph, SwitchId};
use crate::rng::Rng;

fn sid(x: usize) -> SwitchId {
    SwitchId::new(x)
}

/// Hosts on switch `x`: the routes a path from or to it carries.
fn hosts(g: &SwitchGraph, x: usize) -> u64 {
    u64::from(g.hosts(sid(x)))
}

/// Distinct neighbours of switch `x`, ascending.
fn neighbours(g: &SwitchGraph, x: usize) -> impl Iterator<Item = usize> + '_ {
    g.neighbours(sid(x)).iter().map(|t| t.idx())
}

fn dist(g: &SwitchGraph, a: usize, b: usize) -> usize {
    g.dist(sid(a), sid(b)) as usize
}

/// No next hop: the destination itself, or not yet fixed.
pub const UNSET: u32 = u32::MAX;

/// The switches traffic starts and ends at: those with hosts (all of them
/// when none has hosts).
fn endpoints(g: &SwitchGraph) -> Vec<usize> {
    let with_hosts: Vec<usize> = (0..g.switch_count()).filter(|&s| hosts(g, s) > 0).collect();
    if with_hosts.is_empty() {
        (0..g.switch_count()).collect()
    } else {
        with_hosts
    }
}

/// Routes per directed switch-to-switch link, over all layers.
struct Weights {
    /// Per switch, parallel to `SwitchGraph::neighbours`.
    w: Vec<Vec<u64>>,
}

impl Weights {
    fn get(&self, g: &SwitchGraph, x: usize, y: usize) -> u64 {
        self.w[x][slot(g, x, y)]
    }

    fn add(&mut self, g: &SwitchGraph, x: usize, y: usize, routes: u64) {
        self.w[x][slot(g, x, y)] += routes;
    }
}

fn slot(g: &SwitchGraph, x: usize, y: usize) -> usize {
    g.slot(sid(x), sid(y)).expect("next hops are neighbours")
}

/// Next hops of every layer: `next[l][d * n + s]` is where switch s sends
/// traffic for switch d in layer l.
pub struct Layers {
    n: usize,
    next: Vec<Vec<u32>>,
    /// Almost-minimal paths inserted per layer (layer 0 has none).
    pub inserted: Vec<u64>,
    /// Switch pairs that got no almost-minimal path, per layer, because
    /// none of the wanted length respected the layer (§B.1.4, 2nd case).
    pub no_path: Vec<u64>,
}

impl Layers {
    pub fn count(&self) -> usize {
        self.next.len()
    }

    pub fn next(&self, layer: usize, s: usize, d: usize) -> Option<usize> {
        let v = self.next[layer][d * self.n + s];
        (v != UNSET).then_some(v as usize)
    }

    /// Hops from s to d in a layer (None: no route).
    pub fn path_len(&self, layer: usize, s: usize, d: usize) -> Option<usize> {
        let mut at = s;
        for hops in 0..=self.n {
            if at == d {
                return Some(hops);
            }
            at = self.next(layer, at, d)?;
        }
        None
    }
}

/// One layer under construction, towards every destination.
struct LayerBuild<'a> {
    g: &'a SwitchGraph,
    next: Vec<u32>,
}

impl LayerBuild<'_> {
    fn get(&self, s: usize, d: usize) -> u32 {
        self.next[d * self.g.switch_count() + s]
    }

    fn set(&mut self, s: usize, d: usize, to: usize) {
        let n = self.g.switch_count();
        self.next[d * n + s] = to as u32;
    }

    /// Hops along the fixed entries from s to d (s fixed or s == d).
    fn fixed_len(&self, mut s: usize, d: usize) -> usize {
        let mut hops = 0;
        while s != d {
            s = self.get(s, d) as usize;
            hops += 1;
        }
        hops
    }
}

/// The lightest almost-minimal path from `s` to `d` that agrees with the
/// layer's fixed entries: one hop longer than minimal, or if there is
/// none such, up to one hop longer than the diameter (in a Slim Fly,
/// whose adjacent switches share no neighbour, that is the paper's
/// "exactly 3 hops").
fn find_path(b: &LayerBuild, w: &Weights, s: usize, d: usize) -> Option<Vec<usize>> {
    let g = b.g;
    let minimal = dist(g, s, d);
    let longest = (minimal + 1).max(g.diameter() as usize + 1);
    let mut search = PathSearch { b, w, d, path: vec![s], best: None };
    for len in minimal + 1..=longest {
        search.extend(0, len);
        if let Some((_, path)) = search.best.take() {
            return Some(path);
        }
    }
    None
}

struct PathSearch<'a, 'b> {
    b: &'a LayerBuild<'b>,
    w: &'a Weights,
    d: usize,
    path: Vec<usize>,
    best: Option<(u64, Vec<usize>)>,
}

impl PathSearch<'_, '_> {
    /// Extends `path` (weight so far `weight`) to exactly `len` hops.
    fn extend(&mut self, weight: u64, len: usize) {
        let (g, d) = (self.b.g, self.d);
        let x = *self.path.last().expect("path starts at the source");
        let hops = self.path.len() - 1;
        if x == d {
            if hops == len && self.best.as_ref().is_none_or(|(bw, _)| weight < *bw) {
                self.best = Some((weight, self.path.clone()));
            }
            return;
        }
        let fixed = self.b.get(x, d);
        if fixed != UNSET {
            // The layer already routes x: the rest is its fixed path.
            if hops + self.b.fixed_len(x, d) != len {
                return;
            }
            let mut weight = weight;
            let mut at = x;
            let start = self.path.len();
            while at != d {
                let to = self.b.get(at, d) as usize;
                weight += self.w.get(g, at, to);
                self.path.push(to);
                at = to;
            }
            self.extend(weight, len);
            self.path.truncate(start);
            return;
        }
        for y in neighbours(g, x) {
            let remaining = len - hops - 1;
            if dist(g, y, d) > remaining || (y == d && remaining != 0) || self.path.contains(&y) {
                continue;
            }
            let wy = weight + self.w.get(g, x, y);
            if self.best.as_ref().is_some_and(|(bw, _)| wy >= *bw) {
                continue;
            }
            self.path.push(y);
            self.extend(wy, len);
            self.path.pop();
        }
    }
}

/// Fixes `path` in the layer; returns the switches newly routed by it.
/// Link weights grow by the routes that now cross each link (Fig. 15):
/// the hosts of every newly routed switch before it, times the
/// destination's hosts.
fn insert(b: &mut LayerBuild, w: &mut Weights, path: &[usize]) -> Vec<usize> {
    let g = b.g;
    let d = *path.last().expect("a path has a destination");
    let mut newly = Vec::new();
    let mut senders = 0u64;
    for hop in path.windows(2) {
        let (x, y) = (hop[0], hop[1]);
        if b.get(x, d) == UNSET {
            b.set(x, d, y);
            newly.push(x);
            senders += hosts(g, x);
        }
        w.add(g, x, y, senders * hosts(g, d));
    }
    newly
}

/// Gives every switch without a next hop towards `d` the shortest path the
/// fixed entries allow (breadth-first from `d`; among equally short
/// choices the lightest link), then adds the new routes to the weights.
fn complete(b: &mut LayerBuild, w: &mut Weights, d: usize, order: &mut Vec<usize>, newly: &mut [bool]) {
    let g = b.g;
    let n = g.switch_count();
    order.clear();
    order.push(d);
    let mut level = vec![u32::MAX; n];
    level[d] = 0;
    newly.fill(false);
    let mut head = 0;
    while head < order.len() {
        let y = order[head];
        head += 1;
        let depth = level[y] + 1;
        for x in neighbours(g, y) {
            if level[x] < depth || x == d {
                continue; // settled nearer to d
            }
            if newly[x] {
                // Chosen from another switch of the same level: keep the
                // lighter link.
                if w.get(g, x, y) < w.get(g, x, b.get(x, d) as usize) {
                    b.set(x, d, y);
                }
                continue;
            }
            match b.get(x, d) {
                UNSET => {
                    b.set(x, d, y);
                    newly[x] = true;
                }
                fixed if fixed as usize == y => {}
                _ => continue, // its fixed path goes elsewhere
            }
            level[x] = depth;
            order.push(x);
        }
    }
    // New routes, farthest switches first so that each switch's count
    // includes everything routed through it.
    let mut carried = vec![0u64; n];
    for &x in order[1..].iter().rev() {
        if newly[x] {
            carried[x] += hosts(g, x);
        }
        let y = b.get(x, d) as usize;
        w.add(g, x, y, carried[x] * hosts(g, d));
        carried[y] += carried[x];
    }
}

/// Builds `count` layers (≥ 1); the order within a priority level comes
/// from `seed`.
pub fn build_layers(g: &SwitchGraph, count: usize, seed: u64) -> Layers {
    let n = g.switch_count();
    let mut w = Weights { w: g.ids().map(|s| vec![0; g.neighbours(s).len()]).collect() };
    let mut layers = Layers { n, next: Vec::with_capacity(count), inserted: vec![0; count], no_path: vec![0; count] };
    let endpoints = endpoints(g);
    // Priority of an ordered pair = almost-minimal paths it has so far.
    let mut priority = vec![0u8; n * n];
    let mut rng = Rng::new(seed);
    let mut order = Vec::with_capacity(n);
    let mut newly = vec![false; n];
    for l in 0..count {
        let mut b = LayerBuild { g, next: vec![UNSET; n * n] };
        if l > 0 {
            for (s, d) in pairs_by_priority(&endpoints, &priority, n, &mut rng) {
                if b.get(s, d) != UNSET {
                    continue; // already routed by an earlier path (§B.1.4)
                }
                let Some(path) = find_path(&b, &w, s, d) else {
                    layers.no_path[l] += 1;
                    continue;
                };
                layers.inserted[l] += 1;
                for x in insert(&mut b, &mut w, &path) {
                    if b.fixed_len(x, d) > dist(g, x, d) {
                        let p = &mut priority[x * n + d];
                        *p = p.saturating_add(1);
                    }
                }
            }
        }
        for d in 0..n {
            complete(&mut b, &mut w, d, &mut order, &mut newly);
        }
        layers.next.push(b.next);
    }
    layers
}

/// Ordered endpoint pairs, lowest priority value first, in random order
/// within a level (`copy_pairs` of Algorithm 1).
fn pairs_by_priority(endpoints: &[usize], priority: &[u8], n: usize, rng: &mut Rng) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> =
        endpoints.iter().flat_map(|&s| endpoints.iter().filter(move |&&d| d != s).map(move |&d| (s, d))).collect();
    rng.shuffle(&mut pairs);
    // A stable sort keeps the shuffled order within each level.
    pairs.sort_by_key(|&(s, d)| priority[s * n + d]);
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 5-cycle with one host per switch: distance 1 or 2 everywhere.
    fn pentagon() -> crate::Fabric {
        let mut b = crate::gen::torus::torus(&[5], &[1], 1).unwrap();
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn layer_zero_is_minimal_and_complete() {
        let f = pentagon();
        let g = f.graph();
        let layers = build_layers(g, 1, 1);
        for s in 0..5 {
            for d in 0..5 {
                assert_eq!(layers.path_len(0, s, d), Some(dist(g, s, d)), "{s}->{d}");
            }
        }
    }

    #[test]
    fn later_layers_route_everything_with_almost_minimal_paths() {
        let f = pentagon();
        let g = f.graph();
        let layers = build_layers(g, 2, 7);
        assert!(layers.inserted[1] > 0);
        let mut longer = 0;
        for s in 0..5 {
            for d in 0..5 {
                let len = layers.path_len(1, s, d).expect("every pair is routed");
                assert!(len >= dist(g, s, d));
                longer += usize::from(len > dist(g, s, d));
            }
        }
        // In a 5-cycle the only non-minimal simple paths are the other way
        // round (3 or 4 hops): some pairs take them.
        assert!(longer > 0);
    }

    #[test]
    fn same_seed_same_layers() {
        let f = pentagon();
        let (a, b) = (build_layers(f.graph(), 4, 3), build_layers(f.graph(), 4, 3));
        assert_eq!(a.next, b.next);
    }
}

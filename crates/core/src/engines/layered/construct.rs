//! Algorithm 1 of the Slim Fly paper (§4.3, App. B.1): routing layers as
//! forwarding tables, one LID offset per layer.
//!
//! Every further layer (l ≥ 1) first gets, per ordered switch pair in
//! priority order, one almost-minimal path that respects what the layer
//! already fixed (the paper's construction, on switches). Then every
//! destination LID of the layer is routed by its own tree
//! (`balance::TreeBalancer`): a switch the inserted paths fixed follows
//! them, every other switch takes the least loaded of the shortest ways
//! the fixed entries allow, cable by cable. Layer 0 has no inserted paths,
//! so it is exactly pssp's balanced minimal routing of the base LIDs.
//! Routing per LID, not per destination switch, is what spreads the hosts
//! of one switch over the equal next hops and parallel cables: with one
//! next hop per switch pair, all traffic between two leaves of a fat tree
//! crossed a single spine.
//!
//! A link's weight, which the path search minimises, counts the
//! host-to-host routes crossing it (Fig. 15) over all layers routed so
//! far, plus the paths already inserted into the layer being built.

use crate::engines::balance::{BundleSpreader, TreeBalancer};
use crate::fabric::{Cable, Fabric, Lid, SwitchGraph, SwitchId};
use crate::rng::Rng;
use crate::routing::{Lft, Routing, NO_PATH};

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

    /// Routes per link, summed over the parallel cables of each bundle.
    fn from_load(g: &SwitchGraph, load: &[u64]) -> Self {
        let w = g
            .ids()
            .map(|s| {
                g.bundles(s)
                    .iter()
                    .map(|ports| ports.iter().map(|&p| load[g.channel(s, p)]).sum())
                    .collect()
            })
            .collect();
        Weights { w }
    }
}

fn slot(g: &SwitchGraph, x: usize, y: usize) -> usize {
    g.slot(sid(x), sid(y)).expect("next hops are neighbours")
}

/// The layers' forwarding tables and what their construction did.
pub struct Layers {
    n: usize,
    /// Per layer, the next hops the inserted almost-minimal paths fixed:
    /// `fixed[l][d * n + s]` is where switch s sends traffic for switch d
    /// (`UNSET`: the LID's own tree chose). Layer 0 fixes nothing.
    fixed: Vec<Vec<u32>>,
    /// Forwarding tables of every layer (layer l on LID offset l).
    pub lfts: Vec<Lft>,
    /// The LIDs in layer order (every port's base LID, then every base +
    /// 1, ...), for the deadlock removal to place paths in.
    pub lid_order: Vec<Lid>,
    /// Almost-minimal paths inserted per layer (layer 0 has none).
    pub inserted: Vec<u64>,
    /// Switch pairs that got no almost-minimal path, per layer, because
    /// none of the wanted length respected the layer (§B.1.4, 2nd case).
    pub no_path: Vec<u64>,
    /// Most routes on one inter-switch channel, over all layers.
    pub edge_forwarding_index: u64,
}

impl Layers {
    pub fn count(&self) -> usize {
        self.fixed.len()
    }

    /// The next switch an inserted path fixed for s towards switch d in
    /// layer l, if any.
    pub fn fixed(&self, layer: usize, s: usize, d: usize) -> Option<usize> {
        let v = self.fixed[layer][d * self.n + s];
        (v != UNSET).then_some(v as usize)
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
    let mut search = PathSearch {
        b,
        w,
        d,
        path: vec![s],
        best: None,
    };
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

/// Builds `count` layers (≥ 1) of the fabric's LIDs; the order within a
/// priority level comes from `seed`.
pub fn build_layers(fabric: &Fabric, count: usize, seed: u64) -> Layers {
    let g = fabric.graph();
    let n = g.switch_count();
    let mut trees = TreeBalancer::new(g);
    // Trees pick bundles; which cable of a bundle each LID takes is
    // settled once a layer's chunks are known (`balance::bundles`).
    let mut spreader = BundleSpreader::has_bundles(g).then(|| BundleSpreader::new(g));
    let mut layers = Layers {
        n,
        fixed: Vec::with_capacity(count),
        lfts: Routing::empty_lfts(fabric),
        lid_order: Vec::new(),
        inserted: vec![0; count],
        no_path: vec![0; count],
        edge_forwarding_index: 0,
    };
    let endpoints = endpoints(g);
    // pssp's destination order, so that layer 0 is its routing.
    let destinations = crate::engines::pssp::destinations(fabric, 0);
    // Priority of an ordered pair = almost-minimal paths it has so far.
    let mut priority = vec![0u8; n * n];
    let mut rng = Rng::new(seed);
    let mut reach = Reach::new(n);
    let mut turn = 0usize;
    for l in 0..count {
        let mut b = LayerBuild {
            g,
            next: vec![UNSET; n * n],
        };
        if l > 0 {
            let mut w = Weights::from_load(g, trees.load());
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
        let first_of_layer = layers.lid_order.len();
        for (owner, lids) in &destinations {
            let (Some(&lid), Some(t)) = (lids.get(l), fabric.lid_switch(lids[0])) else {
                continue;
            };
            let is_ca = !fabric.node(owner.node).is_switch();
            reach.run(&b, t.idx());
            let allowed = |s: SwitchId, cable: &Cable| match b.get(s.idx(), t.idx()) {
                UNSET => reach.level[cable.to.idx()] + 1 == reach.level[s.idx()],
                fixed => cable.to.idx() == fixed as usize,
            };
            let senders = |s: SwitchId| if is_ca { u64::from(g.hosts(s)) } else { 0 };
            // A stamp of its own per tree: no reuse penalty across LIDs.
            turn += 1;
            trees.route(
                &reach.order,
                allowed,
                turn - 1,
                u32::MAX - turn as u32,
                senders,
            );
            for s in g.ids() {
                let out = if s == t {
                    fabric.delivery_port(*owner)
                } else if reach.level[s.idx()] != u32::MAX {
                    trees.next_port(s)
                } else {
                    NO_PATH
                };
                layers.lfts[s].set(lid, out);
            }
            layers.lid_order.push(lid);
        }
        // Layer by layer, so that layer 0 is pssp's routing here too.
        if let Some(spreader) = &mut spreader {
            spreader.spread(
                fabric,
                &mut layers.lfts,
                &layers.lid_order[first_of_layer..],
            );
        }
        layers.fixed.push(b.next);
    }
    layers.edge_forwarding_index = spreader.map_or_else(
        || trees.edge_forwarding_index(),
        |s| s.edge_forwarding_index(),
    );
    layers
}

/// The switches that reach a destination switch along a layer's fixed
/// entries and shortest ways elsewhere: breadth-first from it, a switch
/// with a fixed next hop entered only from that hop.
struct Reach {
    level: Vec<u32>,
    order: Vec<SwitchId>,
}

impl Reach {
    fn new(n: usize) -> Self {
        Reach {
            level: vec![u32::MAX; n],
            order: Vec::with_capacity(n),
        }
    }

    fn run(&mut self, b: &LayerBuild, d: usize) {
        let g = b.g;
        self.level.fill(u32::MAX);
        self.order.clear();
        self.level[d] = 0;
        self.order.push(sid(d));
        let mut head = 0;
        while head < self.order.len() {
            let y = self.order[head].idx();
            head += 1;
            for x in neighbours(g, y) {
                let fixed = b.get(x, d);
                if self.level[x] != u32::MAX || (fixed != UNSET && fixed as usize != y) {
                    continue;
                }
                self.level[x] = self.level[y] + 1;
                self.order.push(sid(x));
            }
        }
    }
}

/// Ordered endpoint pairs, lowest priority value first, in random order
/// within a level (`copy_pairs` of Algorithm 1).
fn pairs_by_priority(
    endpoints: &[usize],
    priority: &[u8],
    n: usize,
    rng: &mut Rng,
) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = endpoints
        .iter()
        .flat_map(|&s| {
            endpoints
                .iter()
                .filter(move |&&d| d != s)
                .map(move |&d| (s, d))
        })
        .collect();
    rng.shuffle(&mut pairs);
    // A stable sort keeps the shuffled order within each level.
    pairs.sort_by_key(|&(s, d)| priority[s * n + d]);
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::walk::Walk;

    /// A 5-cycle with one host per switch: distance 1 or 2 everywhere.
    fn pentagon(lmc: u8) -> Fabric {
        let mut b = crate::gen::torus::torus(&[5], &[1], 1).unwrap();
        b.assign_lids_sequential(lmc).unwrap();
        b.set_lmc(lmc);
        b.build().unwrap()
    }

    /// Switch hops from host `from` to `lid` in the tables (None: lost).
    fn hops(f: &Fabric, lfts: &[Lft], from: crate::fabric::PortRef, lid: Lid) -> Option<usize> {
        let channels: Result<Vec<_>, _> = Walk::from_port(f, lfts, from, lid).collect();
        channels.ok().map(|c| c.len() - 1)
    }

    fn hosts(f: &Fabric) -> Vec<(crate::fabric::PortRef, Lid, SwitchId)> {
        f.end_ports()
            .filter(|(at, _)| !f.node(at.node).is_switch())
            .map(|(at, p)| (at, p.lid, f.lid_switch(p.lid).unwrap()))
            .collect()
    }

    #[test]
    fn layer_zero_is_minimal_and_complete() {
        let f = pentagon(0);
        let layers = build_layers(&f, 1, 1);
        for &(from, _, s) in &hosts(&f) {
            for &(_, lid, d) in &hosts(&f) {
                assert_eq!(
                    hops(&f, &layers.lfts, from, lid),
                    Some(f.graph().dist(s, d) as usize),
                    "{s}->{d}"
                );
            }
        }
    }

    #[test]
    fn later_layers_route_everything_with_almost_minimal_paths() {
        let f = pentagon(1);
        let layers = build_layers(&f, 2, 7);
        assert!(layers.inserted[1] > 0);
        let mut longer = 0;
        for &(from, _, s) in &hosts(&f) {
            for &(_, lid, d) in &hosts(&f) {
                let len =
                    hops(&f, &layers.lfts, from, lid.offset(1)).expect("every pair is routed");
                let minimal = f.graph().dist(s, d) as usize;
                assert!(len >= minimal);
                longer += usize::from(len > minimal);
            }
        }
        // In a 5-cycle the only non-minimal simple paths are the other way
        // round (3 or 4 hops): some pairs take them.
        assert!(longer > 0);
    }

    #[test]
    fn same_seed_same_layers() {
        let f = pentagon(2);
        let (a, b) = (build_layers(&f, 4, 3), build_layers(&f, 4, 3));
        assert_eq!(a.lfts, b.lfts);
        assert_eq!(a.fixed, b.fixed);
    }
}

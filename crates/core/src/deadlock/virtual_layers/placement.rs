//! Deadlock removal by virtual layers (the DFSSSP idea, Domke et al.):
//! every path (source switch → destination LID, as the forwarding tables
//! give it) goes to one layer = one SL = one VL, such that no layer's
//! channel dependency graph has a cycle. Paths are placed one at a time in
//! the lowest layer where their dependencies close no cycle (a path that
//! would close one moves on to the next layer); then, optionally, the
//! layers left free are filled by splitting the fullest layers, which
//! keeps every layer acyclic (a subset of an acyclic set is acyclic).
//!
//! Engines call `assign_layers` on their own tables; the result is the
//! path-SL table and the number of layers used.

use std::collections::HashSet;

use crate::deadlock::dynamic_dag::DynamicDag;
use crate::fabric::{Fabric, Lid, Peer, SwitchId};
use crate::routing::walk::{Undelivered, Walk};
use crate::routing::{Lft, SwitchSls};

#[derive(Clone, Debug)]
pub struct LayerOptions {
    /// Most layers available (≥ 1).
    pub max_layers: u8,
    /// Spread paths over layers left free.
    pub balance: bool,
    /// Most layers spreading may fill (at most the VLs available, which
    /// may be more than `max_layers`; fewer keeps layers free for other
    /// uses).
    pub balance_limit: u8,
    /// When the layers run out, keep the remaining paths in the last layer
    /// instead of failing (deadlock freedom is then not guaranteed).
    pub best_effort: bool,
    /// Dependencies (switch-graph channel numbers) every layer holds
    /// before any path: a multicast tree's turns, so that paths go around
    /// them. They must close no cycle among themselves.
    pub seed: Vec<(u32, u32)>,
    /// `None`: every layer starts with the seed, and where a path fits
    /// nowhere a layer lets it go, layer 0 last. `Some(l)`: only layer `l`
    /// does (the others place paths as without a seed), and the layering
    /// fails where it would have to let the seed go.
    pub seed_layer: Option<u8>,
}

#[derive(Clone, Debug)]
pub struct Layering {
    /// Layer (= SL) per (source switch, destination LID).
    pub sls: SwitchSls,
    /// Layers the acyclic placement needed, before balancing.
    pub layers_needed: u8,
    /// Layers holding paths after balancing.
    pub layers_used: u8,
    /// Paths that fit in no layer and were left in the last one (only
    /// with `best_effort`); 0 means every layer is credit-loop free.
    pub unplaced_paths: u64,
    /// Paths placed (source switches with hosts × destination LIDs).
    pub paths: u64,
    /// The layers (a bit each) that hold the seed with their paths: on
    /// their VLs the seed's dependencies close no cycle with unicast.
    pub seeded: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayeringError {
    /// The tables do not deliver: a routing bug, not a layering problem.
    Undeliverable { switch: SwitchId, dlid: Lid },
    /// More layers would be needed than `max_layers`.
    OutOfLayers {
        max_layers: u8,
        placed: u64,
        paths: u64,
    },
}

impl std::fmt::Display for LayeringError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayeringError::Undeliverable { switch, dlid } => {
                write!(f, "the forwarding tables do not deliver LID {dlid} from {switch}")
            }
            LayeringError::OutOfLayers { max_layers, placed, paths } => write!(
                f,
                "{max_layers} virtual layers are not enough to break every credit loop ({placed} of {paths} paths placed)"
            ),
        }
    }
}

/// The inter-switch channels (the switch graph's channel numbers) of the
/// path from switch `x` to `dlid`: none when `x` has no route at all
/// (e.g. in a disconnected fabric), None when the tables lead somewhere
/// and then do not deliver.
///
/// Channel numbers follow switch ids, which are GUID order: the numbering
/// seeds the layers' topological orders, so the result does not depend on
/// the order the SM or a net file listed the nodes in.
fn chain(fabric: &Fabric, lfts: &[Lft], x: SwitchId, dlid: Lid, out: &mut Vec<u32>) -> Option<()> {
    out.clear();
    let graph = fabric.graph();
    for hop in Walk::from_switch(fabric, lfts, x, dlid) {
        match hop {
            Ok(hop) => {
                if let Some(Peer::Switch { .. }) = graph.peer(hop.switch, hop.out_port) {
                    out.push(graph.channel(hop.switch, hop.out_port) as u32);
                }
            }
            Err(Undelivered::BlackHole { switch, port }) if switch == x && port.is_no_path() => {
                return Some(())
            }
            Err(_) => return None,
        }
    }
    Some(())
}

/// Most channels one cycle check may visit. Checks that would visit more
/// refuse the dependency (safe: the path tries another layer); without a
/// bound, dense dependency graphs make each refused insertion a walk over
/// most of the graph.
const SEARCH_BUDGET: usize = 2048;

/// One layer's dependency graph and what placing paths in it learnt.
#[derive(Clone)]
struct Layer {
    dag: DynamicDag,
    /// Dependencies the layer refused once: later paths with them skip the
    /// layer without another search (conservative, never unsafe).
    refused: HashSet<(u32, u32)>,
    /// Whether the layer still holds the seed.
    seeded: bool,
    /// Seed dependencies some path placed here has too: they stay when
    /// the seed goes.
    shared: HashSet<(u32, u32)>,
}

/// The layers, and what placing one path takes.
struct Placer {
    /// What a seeded layer starts as: the seed's dependencies.
    empty: Layer,
    /// What the other layers start as (`LayerOptions::seed_layer`).
    bare: Layer,
    /// The one layer that starts with the seed, if not all do.
    seed_layer: Option<usize>,
    seed: HashSet<(u32, u32)>,
    max_layers: usize,
    layers: Vec<Layer>,
    /// Layers holding paths: the lowest layers, 0 to `used - 1`.
    used: usize,
    /// Every layer let the seed go.
    lost: bool,
    added: Vec<(u32, u32)>,
    shared: Vec<(u32, u32)>,
}

impl Placer {
    fn new(
        channels: usize,
        max_layers: usize,
        seed: &[(u32, u32)],
        seed_layer: Option<u8>,
    ) -> Self {
        // The seed goes in without a search budget (it is small, and a
        // refusal there would be no cycle).
        let mut dag = DynamicDag::new(channels);
        let mut seeded = !seed.is_empty();
        for &(a, b) in seed {
            if dag.insert(a, b).is_err() {
                log::warn!("the layering's seed closes a cycle; layers start empty");
                dag = DynamicDag::new(channels);
                seeded = false;
                break;
            }
        }
        let bare = Layer {
            dag: DynamicDag::new(channels).with_search_budget(SEARCH_BUDGET),
            refused: HashSet::new(),
            seeded: false,
            shared: HashSet::new(),
        };
        Placer {
            empty: Layer {
                dag: dag.with_search_budget(SEARCH_BUDGET),
                refused: HashSet::new(),
                seeded,
                shared: HashSet::new(),
            },
            bare,
            seed_layer: seed_layer.map(usize::from),
            seed: if seeded {
                seed.iter().copied().collect()
            } else {
                HashSet::new()
            },
            max_layers,
            layers: Vec::new(),
            used: 0,
            lost: false,
            added: Vec::new(),
            shared: Vec::new(),
        }
    }

    /// Adds all of `path`'s dependencies to `layer`, or none of them.
    fn try_layer(&mut self, layer: usize, path: &[u32]) -> bool {
        while layer >= self.layers.len() {
            let next = self.layers.len();
            let start = match self.seed_layer {
                Some(l) if l != next => &self.bare,
                _ => &self.empty,
            };
            self.layers.push(start.clone());
        }
        let l = &mut self.layers[layer];
        if path.windows(2).any(|w| l.refused.contains(&(w[0], w[1]))) {
            return false;
        }
        self.added.clear();
        self.shared.clear();
        for w in path.windows(2) {
            match l.dag.insert(w[0], w[1]) {
                Ok(true) => self.added.push((w[0], w[1])),
                Ok(false) if l.seeded && self.seed.contains(&(w[0], w[1])) => {
                    self.shared.push((w[0], w[1]))
                }
                Ok(false) => {}
                Err(_) => {
                    l.refused.insert((w[0], w[1]));
                    for &(a, b) in &self.added {
                        l.dag.remove(a, b);
                    }
                    return false;
                }
            }
        }
        l.shared.extend(self.shared.iter().copied());
        true
    }

    /// The layer `path` went to: `preferred` and the layers above it
    /// first (the ones below were tried by the paths it continues), then
    /// the lowest that fits; None when none does, even without the seed.
    fn place(&mut self, path: &[u32], preferred: Option<usize>) -> Option<usize> {
        if path.len() < 2 {
            return Some(preferred.unwrap_or(0)); // no dependency: fits anywhere
        }
        let from = preferred.unwrap_or(0);
        loop {
            let fits = (from..self.max_layers)
                .chain(0..from)
                .find(|&layer| self.try_layer(layer, path));
            if let Some(layer) = fits {
                self.used = self.used.max(layer + 1);
                return fits;
            }
            let layer = self.to_unseed()?;
            self.unseed(layer);
        }
    }

    /// The layer to take the seed out of when a path fits nowhere (it
    /// closes a cycle with the seed, or with a layer's paths): the highest
    /// layer in use but layer 0, else the first unused one, else layer 0.
    /// So the layering needs no more layers than without the seed, where
    /// it can, and layer 0 (SL 0 where no VL is left for multicast) keeps
    /// the seed longest.
    fn to_unseed(&self) -> Option<usize> {
        let used = self.used.min(self.layers.len());
        (1..used)
            .rev()
            .chain(used..self.layers.len())
            .chain(0..1)
            .find(|&l| self.layers.get(l).is_some_and(|l| l.seeded))
    }

    /// Takes the seed's dependencies out of `layer`, but those its paths
    /// have too (what is left is a subset of an acyclic graph).
    fn unseed(&mut self, layer: usize) {
        // Layer 0 (or the only seeded one) goes last: no layer keeps the
        // seed from now on.
        self.lost |= layer == self.seed_layer.unwrap_or(0);
        let l = &mut self.layers[layer];
        for &(a, b) in &self.seed {
            if !l.shared.contains(&(a, b)) {
                l.dag.remove(a, b);
            }
        }
        l.seeded = false;
        l.refused.clear();
        l.shared.clear();
    }

    /// The layers still holding the seed (a bit each).
    fn seeded(&self) -> u16 {
        self.layers
            .iter()
            .enumerate()
            .filter(|(_, l)| l.seeded)
            .fold(0, |m, (i, _)| m | 1 << i)
    }
}

/// Places every path from a switch with CAs to every LID in a layer.
/// `order` lists destination LIDs in the order to place them.
///
/// Per destination, paths are placed nearest source first, and each path
/// tries first the layer of the path it continues (from its next switch):
/// that layer holds all of its dependencies but the first, so most paths
/// add one dependency and need no cycle search at all.
pub fn assign_layers(
    fabric: &Fabric,
    lfts: &[Lft],
    order: &[Lid],
    opts: &LayerOptions,
) -> Result<Layering, LayeringError> {
    let graph = fabric.graph();
    let switches = fabric.switch_count();
    // Sources: switches with CAs, in switch-id (GUID) order.
    let sources: Vec<SwitchId> = graph.ids().filter(|&s| graph.hosts(s) > 0).collect();
    // The switch each channel leads to.
    let mut leads_to = vec![u32::MAX; graph.channel_count()];
    for s in graph.ids() {
        for cable in graph.cables(s) {
            leads_to[graph.channel(s, cable.port)] = cable.to.idx() as u32;
        }
    }
    let max_layers = opts.max_layers.max(1) as usize;
    let mut placer = Placer::new(
        graph.channel_count(),
        max_layers,
        &opts.seed,
        opts.seed_layer,
    );
    let mut sls = SwitchSls::new(fabric);
    let (mut paths, mut unplaced) = (0u64, 0u64);
    let mut per_layer: Vec<u64> = vec![0; max_layers];
    // Per destination: every source's chain, flat, and the layer each
    // switch's path went to.
    let mut chains: Vec<u32> = Vec::new();
    let mut spans: Vec<(SwitchId, usize, usize)> = Vec::with_capacity(sources.len());
    let mut layer_at = vec![usize::MAX; switches];
    let mut path = Vec::with_capacity(16);
    for &dlid in order {
        chains.clear();
        spans.clear();
        for &x in &sources {
            chain(fabric, lfts, x, dlid, &mut path)
                .ok_or(LayeringError::Undeliverable { switch: x, dlid })?;
            spans.push((x, chains.len(), path.len()));
            chains.extend_from_slice(&path);
        }
        spans.sort_by_key(|&(_, _, len)| len);
        for &(x, start, len) in &spans {
            let path = &chains[start..start + len];
            paths += 1;
            let preferred = (len >= 2)
                .then(|| layer_at[leads_to[path[0] as usize] as usize])
                .filter(|&l| l != usize::MAX);
            let layer = match placer.place(path, preferred) {
                Some(l) => l,
                None if opts.best_effort => {
                    unplaced += 1;
                    max_layers - 1
                }
                None => {
                    return Err(LayeringError::OutOfLayers {
                        max_layers: max_layers as u8,
                        placed: paths - 1,
                        paths: total_paths(&sources, order),
                    });
                }
            };
            if placer.lost {
                // A placement around a seed is worth nothing without it.
                return Err(LayeringError::OutOfLayers {
                    max_layers: max_layers as u8,
                    placed: paths - 1,
                    paths: total_paths(&sources, order),
                });
            }
            layer_at[x] = layer;
            per_layer[layer] += 1;
            sls.set(x, dlid, layer as u8);
        }
        for &(x, _, _) in &spans {
            layer_at[x] = usize::MAX;
        }
    }
    let layers_needed = per_layer.iter().rposition(|&n| n > 0).map_or(1, |i| i + 1) as u8;
    let mut layering = Layering {
        sls,
        layers_needed,
        layers_used: layers_needed,
        unplaced_paths: unplaced,
        paths,
        seeded: placer.seeded() & ((1u32 << layers_needed) - 1) as u16,
    };
    // Not bounded by `max_layers`: a placement held to fewer layers than
    // the VLs available may still spread over them.
    let balance_limit = opts.balance_limit as usize;
    if opts.balance && (layers_needed as usize) < balance_limit && unplaced == 0 {
        balance(
            &mut layering,
            &sources,
            order,
            &per_layer[..layers_needed as usize],
            balance_limit,
        );
    }
    Ok(layering)
}

/// Places chosen paths (source switch, destination LID), in the order
/// given, each in the lowest of `max_layers` layers where its
/// dependencies close no cycle: for engines that give most paths lanes of
/// their own and layer only the rest. The layer of each path.
pub fn place_paths(
    fabric: &Fabric,
    lfts: &[Lft],
    paths: &[(SwitchId, Lid)],
    max_layers: u8,
) -> Result<Vec<u8>, LayeringError> {
    let max_layers = max_layers.max(1) as usize;
    let mut placer = Placer::new(fabric.graph().channel_count(), max_layers, &[], None);
    let mut chain_of = Vec::with_capacity(16);
    let mut placed = Vec::with_capacity(paths.len());
    for &(x, dlid) in paths {
        chain(fabric, lfts, x, dlid, &mut chain_of)
            .ok_or(LayeringError::Undeliverable { switch: x, dlid })?;
        let layer = placer
            .place(&chain_of, None)
            .ok_or(LayeringError::OutOfLayers {
                max_layers: max_layers as u8,
                placed: placed.len() as u64,
                paths: paths.len() as u64,
            })?;
        placed.push(layer as u8);
    }
    Ok(placed)
}

fn total_paths(sources: &[SwitchId], order: &[Lid]) -> u64 {
    sources.len() as u64 * order.len() as u64
}

/// Gives each free layer to the layer with the most paths per share, then
/// moves whole destinations of every split layer round-robin onto its
/// shares.
fn balance(
    layering: &mut Layering,
    sources: &[SwitchId],
    order: &[Lid],
    per_layer: &[u64],
    max_layers: usize,
) {
    let used = per_layer.len();
    let mut shares: Vec<Vec<u8>> = (0..used).map(|l| vec![l as u8]).collect();
    for free in used..max_layers {
        let fullest = (0..used)
            .max_by(|&a, &b| {
                let (x, y) = (
                    per_layer[a] as f64 / shares[a].len() as f64,
                    per_layer[b] as f64 / shares[b].len() as f64,
                );
                x.total_cmp(&y).then(b.cmp(&a))
            })
            .unwrap_or(0);
        shares[fullest].push(free as u8);
        // A share holds some of a seeded layer's paths: seeded too.
        if layering.seeded & (1 << fullest) != 0 {
            layering.seeded |= 1 << free;
        }
    }
    // Per source layer, the next share to hand a destination's paths to.
    let mut next = vec![0usize; used];
    for &dlid in order {
        // A destination's paths in layer l all move to the same share, so
        // each destination rotates every layer's share once.
        let mut target = vec![None; used];
        for &x in sources {
            let l = layering.sls.get(x, dlid) as usize;
            if shares[l].len() < 2 {
                continue;
            }
            let t = *target[l].get_or_insert_with(|| {
                let t = shares[l][next[l] % shares[l].len()];
                next[l] += 1;
                t
            });
            layering.sls.set(x, dlid, t);
        }
    }
    layering.layers_used = max_layers as u8;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::analyze;
    use crate::fabric::{FabricBuilder, NodeKind, PortNum, PortRef};
    use crate::routing::{PathSl, Routing, Sl2Vl};

    /// A ring of `n` switches, one host each, every packet going clockwise
    /// (the classic credit loop).
    fn clockwise_ring(n: usize) -> (Fabric, Vec<Lft>) {
        let mut b = FabricBuilder::new();
        let sw: Vec<_> = (0..n)
            .map(|i| b.add_node(NodeKind::Switch, 0x10 + i as u64, format!("s{i}"), 3))
            .collect();
        for i in 0..n {
            b.connect(PortRef::new(sw[i], 2), PortRef::new(sw[(i + 1) % n], 3))
                .unwrap();
            let h = b.add_node(NodeKind::Ca, 0x1000 + 2 * i as u64, format!("h{i}"), 1);
            b.connect(PortRef::new(h, 1), PortRef::new(sw[i], 1))
                .unwrap();
        }
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let mut lfts = Routing::empty_lfts(&f);
        for (lid, owner) in f.lids() {
            let target = f.lid_switch(lid).unwrap();
            for (s, lft) in f.switch_ids().zip(lfts.iter_mut()) {
                if s == target {
                    if !f.node(owner.node).is_switch() {
                        lft.set(lid, PortNum::new(1));
                    }
                } else {
                    lft.set(lid, PortNum::new(2));
                }
            }
        }
        (f, lfts)
    }

    fn routing_of(f: &Fabric, lfts: Vec<Lft>, layering: &Layering) -> Routing {
        let mut sl2vl = Sl2Vl::new(f, crate::routing::ALL_VL0);
        let identity: [u8; 16] = std::array::from_fn(|i| i as u8);
        for s in f.switch_ids() {
            let ports = sl2vl.switch_ports(s) as u8;
            for i in 0..ports {
                for o in 0..ports {
                    sl2vl.set_switch(s, PortNum::new(i), PortNum::new(o), identity);
                }
            }
        }
        Routing {
            engine: "t".into(),
            lfts,
            sl2vl: Some(sl2vl),
            path_sl: PathSl::PerSourceSwitch(layering.sls.clone()),
        }
    }

    fn order(f: &Fabric) -> Vec<Lid> {
        f.lids().map(|(l, _)| l).collect()
    }

    /// Whole paths keep their layer, so a ring cannot use a dateline: two
    /// layers are the least, and the greedy placement uses a few.
    #[test]
    fn a_clockwise_ring_gets_loop_free_layers() {
        let (f, lfts) = clockwise_ring(5);
        let opts = LayerOptions {
            max_layers: 4,
            balance: false,
            balance_limit: 4,
            best_effort: false,
            seed: Vec::new(),
            seed_layer: None,
        };
        let layering = assign_layers(&f, &lfts, &order(&f), &opts).unwrap();
        assert!(
            (2..=4).contains(&layering.layers_needed),
            "{}",
            layering.layers_needed
        );
        let report = analyze(&f, &routing_of(&f, lfts.clone(), &layering));
        assert!(report.delivered());
        assert!(report.credit_loop.is_none(), "{:?}", report.credit_loop);
        // One layer only: the ring's loop is found.
        let flat = Layering {
            sls: SwitchSls::new(&f),
            ..layering
        };
        assert!(analyze(&f, &routing_of(&f, lfts, &flat))
            .credit_loop
            .is_some());
    }

    /// Three turns of the clockwise ring of five, as channel pairs.
    fn three_clockwise_turns(f: &Fabric) -> Vec<(u32, u32)> {
        let g = f.graph();
        let clockwise = |i: usize| g.channel(SwitchId::new(i), PortNum::new(2)) as u32;
        (0..3).map(|i| (clockwise(i), clockwise(i + 1))).collect()
    }

    /// Up to `max_layers`, seeded as given, no balancing.
    fn seeded_opts(max_layers: u8, seed: &[(u32, u32)], seed_layer: Option<u8>) -> LayerOptions {
        LayerOptions {
            max_layers,
            balance: false,
            balance_limit: max_layers,
            best_effort: false,
            seed: seed.to_vec(),
            seed_layer,
        }
    }

    /// Every layer `layering` says holds `seed` is acyclic with it, and
    /// the routing has no credit loop.
    fn assert_seed_fits(f: &Fabric, lfts: Vec<Lft>, layering: &Layering, seed: &[(u32, u32)]) {
        let layers = layering.layers_needed as usize;
        for layer in (0..layers).filter(|&l| layering.seeded & (1 << l) != 0) {
            let mut dag = DynamicDag::new(f.graph().channel_count());
            for &(a, b) in seed {
                dag.insert(a, b).unwrap();
            }
            let mut path = Vec::new();
            for x in f.switch_ids() {
                for (dlid, _) in f.lids() {
                    if layering.sls.get(x, dlid) as usize == layer {
                        chain(f, &lfts, x, dlid, &mut path).unwrap();
                        for w in path.windows(2) {
                            assert!(dag.insert(w[0], w[1]).is_ok(), "layer {layer}");
                        }
                    }
                }
            }
        }
        let report = analyze(f, &routing_of(f, lfts, layering));
        assert!(report.credit_loop.is_none(), "{:?}", report.credit_loop);
    }

    /// A seed the clockwise paths around three of the ring's five cables
    /// close a cycle with (s3 -> s4 -> s0 -> s1 against the seed's chain
    /// from channel s0 -> s1 back to s3 -> s4) takes the seed out of one
    /// layer for them; every layer that keeps it is acyclic with it.
    #[test]
    fn a_seed_stays_in_the_layers_whose_paths_fit_around_it() {
        let (f, lfts) = clockwise_ring(5);
        let seed = three_clockwise_turns(&f);
        let opts = seeded_opts(4, &seed, None);
        let layering = assign_layers(&f, &lfts, &order(&f), &opts).unwrap();
        let layers = layering.layers_needed as usize;
        let kept = layering.seeded.count_ones() as usize;
        assert!(
            (1..layers).contains(&kept),
            "seeded {:b} of {layers}",
            layering.seeded
        );
        assert_seed_fits(&f, lfts, &layering, &seed);
    }

    /// With one layer alone seeded, the others start empty: the paths
    /// that close a cycle with the seed go elsewhere and the seeded layer
    /// keeps it, acyclic with its paths; without room elsewhere the
    /// layering fails rather than let the seed go.
    #[test]
    fn a_seed_given_to_one_layer_stays_there_or_the_layering_fails() {
        let (f, lfts) = clockwise_ring(5);
        let seed = three_clockwise_turns(&f);
        let opts = seeded_opts(4, &seed, Some(1));
        let layering = assign_layers(&f, &lfts, &order(&f), &opts).unwrap();
        assert_eq!(layering.seeded, 0b10, "only layer 1 holds the seed");
        assert_seed_fits(&f, lfts.clone(), &layering, &seed);
        // On a ring of six, which needs three layers without a seed:
        // with layer 2 alone seeded the seed stays; with layer 1 alone
        // seeded, a path fits in none of the three.
        let (f, lfts) = clockwise_ring(6);
        let seed = three_clockwise_turns(&f);
        let three = |seed: &[(u32, u32)], seed_layer| seeded_opts(3, seed, seed_layer);
        let plain = assign_layers(&f, &lfts, &order(&f), &three(&[], None)).unwrap();
        assert_eq!(plain.layers_needed, 3);
        let last = assign_layers(&f, &lfts, &order(&f), &three(&seed, Some(2))).unwrap();
        assert_eq!(last.seeded, 0b100);
        assert_seed_fits(&f, lfts.clone(), &last, &seed);
        assert!(matches!(
            assign_layers(&f, &lfts, &order(&f), &three(&seed, Some(1))),
            Err(LayeringError::OutOfLayers { .. })
        ));
    }

    #[test]
    fn too_few_layers_fail_or_are_best_effort() {
        let (f, lfts) = clockwise_ring(5);
        let strict = LayerOptions {
            max_layers: 1,
            balance: false,
            balance_limit: 1,
            best_effort: false,
            seed: Vec::new(),
            seed_layer: None,
        };
        assert!(matches!(
            assign_layers(&f, &lfts, &order(&f), &strict),
            Err(LayeringError::OutOfLayers { .. })
        ));
        let lax = LayerOptions {
            best_effort: true,
            ..strict
        };
        let l = assign_layers(&f, &lfts, &order(&f), &lax).unwrap();
        assert!(l.unplaced_paths > 0);
    }

    #[test]
    fn balancing_fills_free_layers_and_stays_loop_free() {
        let (f, lfts) = clockwise_ring(6);
        let ring_lfts = lfts.clone();
        let opts = LayerOptions {
            max_layers: 8,
            balance: true,
            balance_limit: 8,
            best_effort: false,
            seed: Vec::new(),
            seed_layer: None,
        };
        let layering = assign_layers(&f, &lfts, &order(&f), &opts).unwrap();
        assert!(layering.layers_needed < 8);
        assert_eq!(layering.layers_used, 8);
        let routing = routing_of(&f, lfts, &layering);
        assert_eq!(routing.path_sl.sls_used(), (0..8).collect::<Vec<u8>>());
        assert!(analyze(&f, &routing).credit_loop.is_none());
        // A limit keeps the layers above it free.
        let kept = LayerOptions {
            balance_limit: 7,
            ..opts
        };
        let layering = assign_layers(&f, &ring_lfts, &order(&f), &kept).unwrap();
        assert_eq!(layering.layers_used, 7);
    }
}

//! Dragonfly+ forwarding tables: for every destination switch, which
//! cables of every other switch lie on its best paths (shortest, then
//! fewest backward turns), and for every LID, which of those cables a
//! switch takes.
//!
//! **Best paths.** A path to the destination `t` is judged by, in this
//! order: whether it makes more backward turns than the lanes have VLs
//! (`super::backward`: a turn from a down channel to an up one at a leaf,
//! the bounce round a missing leaf–spine cable, or from a falling global
//! channel to a rising one at a spine, a middle group that is a valley),
//! its hops, its backward turns, and the class of its first cable (up,
//! then down, then rising, then falling global: a spine stays in its
//! group rather than leave it). Dijkstra from `t`
//! settles every switch with its best label and takes as candidates all
//! its cables that give it, given the choice of the switch each leads to.
//! So paths are the shortest ones within the lanes' VLs; on an intact
//! Dragonfly+ the minimal paths leaf → spine → [global] → spine → leaf.
//!
//! **Spreading.** Each switch deals the LIDs of each destination group
//! over its up or down candidates in proportion to their weights, the
//! number of equal paths a candidate leads to (a spine with three cables
//! to the destination group gets three times the LIDs of one with one):
//! LIDs spread over spines and so over the cables of a group pair. Which
//! LID goes where is weighted rendezvous hashing with bounded loads
//! (`pick_group`), so that when a cable fails, the LIDs that took it move
//! and hardly any other. A spine then deals the LIDs its group's leaves
//! send it over its global cables by demand (`deal`): the routes, not
//! just the LIDs, spread evenly; a failed global cable reshuffles that
//! spine's entries for one group, no others.

mod detours;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{backward, Class, Roles};
use crate::fabric::{Fabric, Lid, PortNum, SwitchId};
use crate::rng::mix;
use crate::routing::{Lft, Routing, NO_PATH};

/// A candidate cable.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    port: PortNum,
    /// The number of equal paths behind it.
    weight: u64,
    /// Who it leads to, the same from every switch: the far switch's GUID
    /// (mixed with the cable's place in a bundle of parallel cables).
    key: u64,
    global: bool,
    /// Which of the destination's homes (`Towards::homes`, one bit each)
    /// the best paths through this cable can enter it from.
    reaches: u64,
}

/// Towards one destination switch: per switch its candidate cables, and
/// the destination's *homes*, the neighbours whose cable to it ends best
/// paths (on a Dragonfly+ a leaf's spines), each with its number of
/// such cables; the first 64 are told apart by `Candidate::reaches`.
/// The candidates of all switches share one vector: a JUPITER-sized
/// fabric has 837 × 837 such sets, too many for an allocation each.
#[derive(Clone, Default)]
pub struct Towards {
    /// Per switch: where its candidates start in `all`, and how many.
    span: Vec<(u32, u32)>,
    all: Vec<Candidate>,
    pub homes: Vec<(SwitchId, u64)>,
    /// The switches whose best paths are detours (`Arcs::detour`), in
    /// the order they were settled, each with its `alternatives`; empty
    /// towards a switch that every switch reaches as on an intact
    /// Dragonfly+.
    detours: Vec<(SwitchId, u32, u32)>,
    /// Per detour switch, the ports of its cables that are as good as its
    /// candidates but of a class the search passed over (`Search::settle`).
    alternatives: Vec<PortNum>,
    /// Whether some leaf is among the `detours`.
    from_leaves: bool,
    /// Every switch reached, in the order settled: the destination first,
    /// each after the switches its candidates lead to.
    order: Vec<SwitchId>,
}

impl Towards {
    /// The candidates of switch `s`.
    pub fn at(&self, s: SwitchId) -> &[Candidate] {
        self.span.get(s.idx()).map_or(&[], |&(start, len)| {
            &self.all[start as usize..start as usize + len as usize]
        })
    }

    /// The homes that `Candidate::reaches` tells apart: the first 64.
    fn known(&self) -> &[(SwitchId, u64)] {
        &self.homes[..self.homes.len().min(64)]
    }
}

/// How good a way to `t` is, compared in this order: whether it makes
/// more backward turns than lanes have VLs (`super::lanes`), its hops,
/// its backward turns, the class of its first cable (up, then down, then
/// global). Packed into the high bits of one number that orders as that
/// tuple does, with the low 32 bits free for a switch: the search
/// compares and stores labels tens of millions of times on a
/// JUPITER-sized fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Label(u64);

impl Label {
    /// Not reached yet: above every label.
    const NONE: Label = Label(u64::MAX);
    /// The destination's own.
    const START: Label = Label(0);

    fn new(hops: u16, turns: u8, first: Class) -> Label {
        let over = turns >= super::lanes::LANE_VLS;
        Label(
            (u64::from(over) << 63)
                | (u64::from(hops) << 47)
                | (u64::from(turns) << 39)
                | (u64::from(first.preference()) << 32),
        )
    }

    fn hops(self) -> u16 {
        (self.0 >> 47) as u16
    }

    fn turns(self) -> u8 {
        (self.0 >> 39) as u8
    }

    /// Whether `other` has this label's hops and backward turns (the
    /// class of the first cable aside).
    fn same_but_class(self, other: Label) -> bool {
        self != Label::NONE && self.0 >> 39 == other.0 >> 39
    }

    /// The label one cable of class `class` further, the switch it leads
    /// to leaving by a cable of class `then`.
    fn extended(self, class: Class, then: Class) -> Label {
        let turns = self.turns().saturating_add(u8::from(backward(class, then)));
        Label::new(self.hops() + 1, turns, class)
    }

    /// The heap's key: this label and `x`, ordered as the pair.
    fn with(self, x: SwitchId) -> u64 {
        self.0 | x.idx() as u64
    }
}

/// A cable as the search reads it: where it leads, its port, and the
/// classes of the channels both ways.
#[derive(Clone, Copy, Debug)]
struct Arc {
    to: SwitchId,
    port: PortNum,
    /// Its place among the parallel cables to `to`.
    bundle: u64,
    /// From the cable's switch to `to`.
    out: Class,
    /// From `to` back.
    back: Class,
}

/// Every switch's cables as `Arc`s, worked out once for all the searches.
pub struct Arcs {
    /// Switch `s`'s are `all[starts[s]..starts[s + 1]]`.
    starts: Vec<usize>,
    all: Vec<Arc>,
    /// Per switch, whether it is a leaf, and its group.
    leaf: Vec<bool>,
    group: Vec<usize>,
}

impl Arcs {
    pub fn new(fabric: &Fabric, roles: &Roles) -> Self {
        let graph = fabric.graph();
        let mut starts = vec![0];
        let mut all = Vec::new();
        for x in graph.ids() {
            all.extend(graph.cables(x).iter().map(|c| {
                Arc {
                    to: c.to,
                    port: c.port,
                    bundle: graph
                        .bundle(x, c.to)
                        .iter()
                        .position(|&p| p == c.port)
                        .unwrap_or(0) as u64,
                    out: roles.class(x, c.to),
                    back: roles.class(c.to, x),
                }
            }));
            starts.push(all.len());
        }
        Arcs {
            starts,
            all,
            leaf: roles.plus.is_leaf.clone(),
            group: roles.plus.group_of.clone(),
        }
    }

    fn of(&self, x: SwitchId) -> &[Arc] {
        &self.all[self.starts[x.idx()]..self.starts[x.idx() + 1]]
    }

    /// Whether best paths of `hops` from `x` to leaf `t` are a detour:
    /// longer than on an intact Dragonfly+ (leaf → spine → [global] →
    /// spine → leaf). Paths to spines are not judged: `super::spines`
    /// routes them.
    fn detour(&self, x: SwitchId, t: SwitchId, hops: u16) -> bool {
        if !self.leaf[t.idx()] || x == t {
            return false;
        }
        let within = u16::from(self.group[x.idx()] == self.group[t.idx()]);
        let intact = if self.leaf[x.idx()] { 3 } else { 2 } - within;
        hops > intact
    }
}

/// Every class, in the order of `slot`.
pub(super) const CLASSES: [Class; 5] = [
    Class::Terminal,
    Class::Up,
    Class::Rise,
    Class::Fall,
    Class::Down,
];

/// A class's place in `CLASSES` (also its slot in `lanes`' turn masks).
pub(super) fn slot(class: Class) -> usize {
    match class {
        Class::Terminal => 0,
        Class::Up => 1,
        Class::Rise => 2,
        Class::Fall => 3,
        Class::Down => 4,
    }
}

/// The Dijkstra search of `candidates` towards one destination.
struct Search<'a> {
    arcs: &'a Arcs,
    /// Per switch, `mix` of its GUID.
    keys: &'a [u64],
    t: SwitchId,
    /// Per switch, the class of its best cables.
    first_out: Vec<Class>,
    best: Vec<Label>,
    settled: Vec<bool>,
    /// Per settled switch and class of a cable towards it, the label that
    /// cable gives (`Label::NONE` until it is settled): a switch's
    /// candidates and its neighbours' offers are then read, not worked
    /// out again for every cable.
    offers: Vec<[Label; 5]>,
    /// Per switch, the number of best paths from it.
    width: Vec<u64>,
    /// Per switch, the homes its best paths can enter `t` from.
    reach: Vec<u64>,
    heap: BinaryHeap<Reverse<u64>>,
    out: Towards,
}

/// The candidates of every switch towards `t` (module comment): Dijkstra
/// from `t` over `Label`s, each switch settled with the label of its best
/// cables, which may only lead to settled switches; the turns a cable
/// adds depend on the first cable of the switch it leads to, settled
/// before.
pub fn candidates(arcs: &Arcs, keys: &[u64], t: SwitchId) -> Towards {
    let n = keys.len();
    let mut search = Search {
        arcs,
        keys,
        t,
        first_out: vec![Class::Terminal; n],
        best: vec![Label::NONE; n],
        settled: vec![false; n],
        offers: vec![[Label::NONE; 5]; n],
        width: vec![0; n],
        reach: vec![0; n],
        heap: BinaryHeap::new(),
        out: Towards {
            span: vec![(0, 0); n],
            all: Vec::with_capacity(arcs.all.len() / 2),
            homes: Vec::new(),
            detours: Vec::new(),
            alternatives: Vec::new(),
            from_leaves: false,
            order: Vec::with_capacity(n),
        },
    };
    search.best[t.idx()] = Label::START;
    search.width[t.idx()] = 1;
    search.heap.push(Reverse(Label::START.with(t)));
    let mut chosen = Vec::new();
    while let Some(Reverse(top)) = search.heap.pop() {
        let x = SwitchId::new((top & 0xffff_ffff) as usize);
        let lab = search.best[x.idx()];
        if search.settled[x.idx()] || lab.with(x) != top {
            continue;
        }
        search.settled[x.idx()] = true;
        search.out.order.push(x);
        if x != t {
            search.settle(x, lab, &mut chosen);
            if arcs.detour(x, t, lab.hops()) {
                search.alternatives(x, lab);
            }
        }
        search.relax(x, lab);
    }
    search.out
}

impl Search<'_> {
    /// `x`'s candidates: every cable to a settled switch that gives it
    /// its label `lab`.
    fn settle(&mut self, x: SwitchId, lab: Label, chosen: &mut Vec<Arc>) {
        let t = self.t;
        chosen.clear();
        chosen.extend(
            self.arcs
                .of(x)
                .iter()
                .filter(|a| self.offers[a.to.idx()][slot(a.out)] == lab),
        );
        let direct = chosen.iter().filter(|a| a.to == t).count() as u64;
        if direct > 0 {
            if self.out.homes.len() < 64 {
                self.reach[x.idx()] = 1 << self.out.homes.len();
            }
            self.out.homes.push((x, direct));
        }
        let start = self.out.all.len() as u32;
        for a in chosen.iter() {
            let to = a.to;
            let reaches = if to == t {
                self.reach[x.idx()]
            } else {
                self.reach[to.idx()]
            };
            if to != t {
                self.reach[x.idx()] |= self.reach[to.idx()];
            }
            self.out.all.push(Candidate {
                port: a.port,
                weight: self.width[to.idx()],
                // Parallel cables are all candidates or none (they give
                // the same label), so `bundle` is also the cable's place
                // among the candidates to `to`.
                key: self.keys[to.idx()].wrapping_add(a.bundle),
                global: a.out.is_global(),
                reaches,
            });
            self.width[x.idx()] = self.width[x.idx()].saturating_add(self.width[to.idx()]);
            // All of one class: it is part of their label.
            self.first_out[x.idx()] = a.out;
        }
        self.out.span[x.idx()] = (start, chosen.len() as u32);
    }

    /// Records detour switch `x` (label `lab`) with its alternatives: the
    /// cables down or falling that give it the hops and backward turns of
    /// its label, not its class. Its first class is part of the labels
    /// of the switches whose paths lead through it, but only a rising
    /// cable after a falling one turns backwards: down or falling ones
    /// never add a turn to any path, so the load-aware picks (`detours`)
    /// may take them.
    fn alternatives(&mut self, x: SwitchId, lab: Label) {
        let start = self.out.alternatives.len() as u32;
        let first = self.first_out[x.idx()];
        self.out.alternatives.extend(
            self.arcs
                .of(x)
                .iter()
                .filter(|a| matches!(a.out, Class::Down | Class::Fall) && a.out != first)
                .filter(|a| self.offers[a.to.idx()][slot(a.out)].same_but_class(lab))
                .map(|a| a.port),
        );
        let len = self.out.alternatives.len() as u32 - start;
        self.out.detours.push((x, start, len));
        self.out.from_leaves |= self.arcs.leaf[x.idx()];
    }

    /// Offers the unsettled neighbours of `x` a way through it.
    fn relax(&mut self, x: SwitchId, lab: Label) {
        let then = self.first_out[x.idx()];
        let offer = CLASSES.map(|class| lab.extended(class, then));
        self.offers[x.idx()] = offer;
        for a in self.arcs.of(x) {
            let s = a.to;
            if self.settled[s.idx()] {
                continue;
            }
            let cand = offer[slot(a.back)];
            if cand < self.best[s.idx()] {
                self.best[s.idx()] = cand;
                self.heap.push(Reverse(cand.with(s)));
            }
        }
    }
}

/// A hash of `lid` and `key` in (0, 1].
fn unit(lid: Lid, key: u64) -> f64 {
    unit_of(mix(lid.idx() as u64), key)
}

/// `unit` of the LID whose `mix` is `lid_hash`.
fn unit_of(lid_hash: u64, key: u64) -> f64 {
    let h = mix(key ^ lid_hash);
    ((h >> 11) + 1) as f64 / (1u64 << 53) as f64
}

/// −log2(u) for u in (0, 1], piecewise linear between powers of two (the
/// exponent plus the mantissa's fraction): monotone like the logarithm,
/// within 0.09 of it, and far cheaper than it.
fn neg_log2(u: f64) -> f64 {
    let bits = u.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as f64 - 1023.0;
    let fraction = (bits & ((1u64 << 52) - 1)) as f64 / (1u64 << 52) as f64;
    -(exponent + fraction)
}

/// The rendezvous score of a candidate for the LID whose `mix` is
/// `lid_hash`, at a switch with key `own_key`: −log(u)/weight, smaller
/// preferred.
fn score(c: &Candidate, lid_hash: u64, own_key: u64) -> f64 {
    neg_log2(unit_of(lid_hash, c.key ^ own_key)) / c.weight.max(1) as f64
}

/// The best-scored of `cands` for `lid` (the first of equals). Scores are
/// worked out only where there is a choice: on a Dragonfly+ most LIDs
/// have one candidate left once home and caps have spoken, and hashing
/// every candidate of every LID at every switch was most of the tables'
/// time.
fn best_scored<'c>(
    mut cands: impl Iterator<Item = &'c Candidate> + Clone,
    lid: Lid,
    own_key: u64,
) -> Option<&'c Candidate> {
    let first = cands.next()?;
    if cands.clone().next().is_none() {
        return Some(first);
    }
    let lid_hash = mix(lid.idx() as u64);
    let mut best = (score(first, lid_hash, own_key), first);
    for c in cands {
        let s = score(c, lid_hash, own_key);
        if s.total_cmp(&best.0).is_lt() {
            best = (s, c);
        }
    }
    Some(best.1)
}

/// Whether `c`'s best paths enter the LID's switch from its home
/// (`home`, one bit of `Towards::homes`).
fn homeward(c: &Candidate, home: u64) -> bool {
    c.reaches & home != 0
}

/// The LIDs of one kind (CAs', or switches' own) of one destination
/// group: in LID order, each with the place of its switch in `dests`, and
/// each of those switches once, in order of first appearance, with its
/// number of LIDs. The same for every switch whose table is filled, so
/// worked out once; LIDs of one destination switch share their
/// candidates, so a switch's bounds are counted per destination.
struct Kind {
    lids: Vec<(Lid, u32)>,
    dests: Vec<(SwitchId, u32)>,
    /// Per destination (its place in `dests`) and home bit, the number
    /// of LIDs (`set_homes`).
    by_home: Vec<(u32, u64, u32)>,
    /// Per LID (in `lids`' order), its place in `by_home`: LIDs of one
    /// place take one port wherever `fixed_by_home` holds.
    home_class: Vec<u32>,
    /// Per LID (as `lids`), whether a lost cable moved its home
    /// (`set_homes`).
    moved: Vec<bool>,
}

impl Kind {
    /// `slot`: per switch, all `u32::MAX`, and left so.
    fn new(lids: impl Iterator<Item = (Lid, SwitchId)>, slot: &mut [u32]) -> Kind {
        let mut kind = Kind {
            lids: Vec::new(),
            dests: Vec::new(),
            by_home: Vec::new(),
            home_class: Vec::new(),
            moved: Vec::new(),
        };
        for (lid, t) in lids {
            let d = &mut slot[t.idx()];
            if *d == u32::MAX {
                *d = kind.dests.len() as u32;
                kind.dests.push((t, 0));
            }
            kind.dests[*d as usize].1 += 1;
            kind.lids.push((lid, *d));
        }
        for &(t, _) in &kind.dests {
            slot[t.idx()] = u32::MAX;
        }
        kind
    }

    /// `by_home` for the LIDs' homes `home`, and `moved` from `moved`
    /// (both per LID).
    fn set_homes(&mut self, home: &[u64], moved: &[bool]) {
        self.moved = self.lids.iter().map(|&(lid, _)| moved[lid.idx()]).collect();
        let mut pairs: Vec<(u32, u64)> = self
            .lids
            .iter()
            .map(|&(lid, d)| (d, home[lid.idx()]))
            .collect();
        pairs.sort_unstable();
        self.by_home.clear();
        for (d, h) in pairs {
            match self.by_home.last_mut() {
                Some(last) if (last.0, last.1) == (d, h) => last.2 += 1,
                _ => self.by_home.push((d, h, 1)),
            }
        }
        let by_home = &self.by_home;
        self.home_class = self
            .lids
            .iter()
            .map(|&(lid, d)| {
                let key = (d, home[lid.idx()]);
                by_home.partition_point(|&(d, h, _)| (d, h) < key) as u32
            })
            .collect();
    }

    /// The LIDs with their switches, in LID order.
    fn with_switches(&self) -> impl Iterator<Item = (Lid, SwitchId)> + '_ {
        self.lids
            .iter()
            .map(|&(lid, d)| (lid, self.dests[d as usize].0))
    }
}

/// Per port of one switch, the bounds of the pick under way (`pick_kind`):
/// kept from pick to pick and cleared only where the last one left
/// something, as a pick touches a handful of a switch's ports.
struct PortBounds {
    /// The largest weight of a candidate on the port.
    weight: Vec<u64>,
    /// The port's share of the LIDs that may take it.
    share: Vec<f64>,
    cap: Vec<u32>,
    load: Vec<u32>,
    /// The LIDs that would take the port if each took its candidate
    /// towards its home (`fixed_by_home`).
    need: Vec<u32>,
    touched: Vec<usize>,
}

impl PortBounds {
    fn new(ports: usize) -> Self {
        PortBounds {
            weight: vec![0; ports],
            share: vec![0.0; ports],
            cap: vec![0; ports],
            load: vec![0; ports],
            need: vec![0; ports],
            touched: Vec::new(),
        }
    }

    /// The caps for `lids` LIDs of destinations `dests` (each with its
    /// number of LIDs): each port's share of the LIDs by its largest
    /// weight, but at most one above its share of the LIDs that may take
    /// it.
    fn set(
        &mut self,
        lids: usize,
        dests: impl Iterator<Item = (SwitchId, u32)>,
        row: &[&[Candidate]],
    ) {
        for p in self.touched.drain(..) {
            (self.weight[p], self.share[p], self.cap[p]) = (0, 0.0, 0);
            (self.load[p], self.need[p]) = (0, 0);
        }
        for (t, count) in dests {
            let cands = row[t.idx()];
            let total: u64 = cands.iter().map(|c| c.weight.max(1)).sum();
            for c in cands {
                let p = c.port.idx();
                if self.weight[p] == 0 {
                    self.touched.push(p);
                }
                self.weight[p] = self.weight[p].max(c.weight.max(1));
                self.share[p] += f64::from(count) * (c.weight.max(1) as f64 / total as f64);
            }
        }
        let total = self
            .touched
            .iter()
            .map(|&p| self.weight[p])
            .sum::<u64>()
            .max(1) as f64;
        for &p in &self.touched {
            let even = (lids as f64 * self.weight[p] as f64 / total - 1e-9)
                .ceil()
                .max(0.0) as u32;
            self.cap[p] = even.min((self.share[p] - 1e-9).ceil().max(0.0) as u32 + 1);
        }
    }

    fn open(&self, p: PortNum) -> bool {
        self.load[p.idx()] < self.cap[p.idx()]
    }

    fn take(&mut self, p: PortNum) {
        self.load[p.idx()] += 1;
    }
}

/// Per destination of a pick and home bit, which of its candidates lead
/// towards that home: on a Dragonfly+ one (a leaf's spine with the cable
/// to the home spine), so a LID need not look at the others.
#[derive(Default)]
struct Homeward {
    /// Per destination (as `Kind::dests` lists them), its slots in `only`:
    /// one per home bit up to its highest.
    slots: Vec<(usize, usize)>,
    /// The index of the only candidate towards a home, or `NONE` or `MANY`.
    only: Vec<u16>,
}

/// No candidate leads towards the home.
const NONE: u16 = u16::MAX;
/// More than one does.
const MANY: u16 = u16::MAX - 1;

impl Homeward {
    /// For `dests`, those with `picked` set.
    fn set(&mut self, dests: &[(SwitchId, u32)], picked: &[bool], row: &[&[Candidate]]) {
        self.slots.clear();
        self.only.clear();
        for (&(t, _), _) in dests.iter().zip(picked) {
            let cands = row[t.idx()];
            let bits = cands.iter().fold(0u64, |a, c| a | c.reaches);
            let base = self.only.len();
            let len = (64 - bits.leading_zeros()) as usize;
            self.slots.push((base, len));
            self.only.resize(base + len, NONE);
            for (i, c) in cands.iter().enumerate() {
                let mut b = c.reaches;
                while b != 0 {
                    let slot = &mut self.only[base + b.trailing_zeros() as usize];
                    *slot = if *slot == NONE { i as u16 } else { MANY };
                    b &= b - 1;
                }
            }
        }
    }

    /// For the LIDs of destination `d` with home bit `home` (0: none).
    fn of(&self, d: usize, home: u64) -> u16 {
        let (base, len) = self.slots[d];
        let k = home.trailing_zeros() as usize;
        if home == 0 || k >= len {
            NONE
        } else {
            self.only[base + k]
        }
    }
}

/// What one switch's picks read: its candidates towards every
/// destination switch (indexed by the destination), its key, its port
/// slots.
struct AtSwitch<'a> {
    s: SwitchId,
    row: Vec<&'a [Candidate]>,
    own_key: u64,
    ports: usize,
}

impl<'a> AtSwitch<'a> {
    fn new(fabric: &Fabric, towards: &'a [Towards], keys: &[u64], s: SwitchId) -> Self {
        AtSwitch {
            s,
            row: towards.iter().map(|tw| tw.at(s)).collect(),
            own_key: keys[s.idx()],
            ports: fabric.graph().port_slots(s),
        }
    }

    /// Whether the candidates towards `t` are global cables.
    fn is_global(&self, t: SwitchId) -> bool {
        self.row[t.idx()].first().is_some_and(|c| c.global)
    }
}

/// What a switch's picks reuse from one kind of LIDs to the next.
struct Scratch {
    /// Per destination of the kind, whether this switch picks for it.
    picked: Vec<bool>,
    bounds: PortBounds,
    homeward: Homeward,
}

/// One switch's picks for one kind of LIDs of one destination group
/// whose candidates go up or down (global ones are `deal`t once these are
/// known), into `lft`, and the entries of the LIDs it delivers: every LID
/// takes its best-scored candidate towards its home (`assign_homes`)
/// whose port has not yet had its share, else its best-scored one that
/// has not, else its best-scored one. A port's share is the LIDs' count
/// times its weight over the sum of the ports' weights (each port's
/// largest weight, the number of equal paths behind it), counted over
/// the ports rather than per LID, so that a failure that takes a port
/// from some LIDs' candidates leaves the others' shares, and so their
/// picks, alone — but never more than one above the port's share of the
/// LIDs that may take it (a detour port few LIDs can use is not filled
/// with them). Bounded loads keep the spread even where a group has few
/// LIDs; rendezvous order keeps a lost candidate from moving more than
/// its own LIDs and the few its share pushes on.
fn pick_kind(
    fabric: &Fabric,
    kind: &Kind,
    home: &[u64],
    at: &AtSwitch,
    scratch: &mut Scratch,
    lft: &mut Lft,
) {
    let Scratch {
        picked,
        bounds,
        homeward,
    } = scratch;
    picked.clear();
    picked.extend(
        kind.dests
            .iter()
            .map(|&(t, _)| t != at.s && !at.is_global(t)),
    );
    let chosen = || {
        kind.dests
            .iter()
            .zip(picked.iter())
            .filter(|d| *d.1)
            .map(|d| *d.0)
    };
    let lids: usize = chosen().map(|(_, count)| count as usize).sum();
    let delivers = kind.dests.iter().any(|&(t, _)| t == at.s);
    if lids == 0 && !delivers {
        return;
    }
    bounds.set(lids, chosen(), &at.row);
    homeward.set(&kind.dests, picked, &at.row);
    // What the LIDs of one destination and home take, worked out once for
    // them all: most have one candidate, or one towards their home.
    let entries: Vec<Entry> = kind
        .by_home
        .iter()
        .map(|&(d, home, _)| {
            let t = kind.dests[d as usize].0;
            if t == at.s {
                return Entry::Deliver;
            }
            if !picked[d as usize] {
                return Entry::Leave;
            }
            let cands = at.row[t.idx()];
            match (cands, homeward.of(d as usize, home)) {
                ([one], _) => Entry::Only(one.port),
                (_, NONE | MANY) => Entry::Pick,
                (_, i) => cands
                    .get(usize::from(i))
                    .map_or(Entry::Pick, |c| Entry::Homeward(c.port)),
            }
        })
        .collect();
    if fixed_by_home(kind, picked, at, bounds, homeward) {
        // No port fills up: every LID takes its one candidate, or the one
        // towards its home.
        for (&(lid, _), &class) in kind.lids.iter().zip(&kind.home_class) {
            match entries[class as usize] {
                Entry::Only(port) | Entry::Homeward(port) => lft.set(lid, port),
                Entry::Deliver => lft.set(lid, delivery(fabric, lid)),
                Entry::Leave | Entry::Pick => {}
            }
        }
        return;
    }
    // The LIDs whose home a lost cable moved (`homes_in_group`) last, so
    // that they take what is left rather than push other LIDs on
    // (before, such a LID took the last place on a port ahead of one
    // after it in LID order, which took another's: up to 2.2 times the
    // entries that crossed a failed leaf–spine cable changed on the
    // damaged 4-group test fabrics).
    let in_order = [false, true].into_iter().flat_map(|last| {
        kind.lids
            .iter()
            .zip(&kind.home_class)
            .zip(&kind.moved)
            .filter(move |l| *l.1 == last)
            .map(|l| l.0)
    });
    for (&(lid, d), &class) in in_order {
        // `pick`'s first answers, without its look at the others.
        match entries[class as usize] {
            Entry::Leave => continue,
            Entry::Deliver => {
                lft.set(lid, delivery(fabric, lid));
                continue;
            }
            Entry::Only(port) => {
                bounds.take(port);
                lft.set(lid, port);
                continue;
            }
            Entry::Homeward(port) if bounds.open(port) => {
                bounds.take(port);
                lft.set(lid, port);
                continue;
            }
            Entry::Homeward(_) | Entry::Pick => {}
        }
        let d = d as usize;
        let t = kind.dests[d].0;
        let only = homeward.of(d, home[lid.idx()]);
        let pick = pick(
            at.row[t.idx()],
            lid,
            home[lid.idx()],
            only,
            bounds,
            at.own_key,
        );
        match pick {
            Some(port) => {
                bounds.take(port);
                lft.set(lid, port);
            }
            None => lft.set(lid, NO_PATH),
        }
    }
}

/// What a switch's table gets for the LIDs of one destination and home
/// (`pick_kind`).
#[derive(Clone, Copy)]
enum Entry {
    /// Their one candidate's port.
    Only(PortNum),
    /// The port of their one candidate towards their home, while it is
    /// open.
    Homeward(PortNum),
    /// Whatever `pick` says, LID by LID.
    Pick,
    /// The port that delivers the LID (`delivery`).
    Deliver,
    /// Nothing: another step fills it.
    Leave,
}

/// The port that delivers `lid` at its switch.
fn delivery(fabric: &Fabric, lid: Lid) -> PortNum {
    fabric
        .lid_owner(lid)
        .map_or(NO_PATH, |o| fabric.delivery_port(o))
}

/// A LID's only candidate, or its only one towards its home (`only`,
/// `Homeward::of`).
fn toward_home(cands: &[Candidate], only: u16) -> Option<&Candidate> {
    match cands {
        [one] => Some(one),
        _ if only == NONE || only == MANY => None,
        _ => cands.get(usize::from(only)),
    }
}

/// Whether every LID of `kind` that the switch picks for has one
/// candidate, or one towards its home, and no port would carry more of
/// them than its cap: then each takes that one, as no port fills up
/// before its last LID has taken it (`pick_kind` would make the same
/// picks one LID after the other), and the picks need no loads. On an
/// intact Dragonfly+ this holds for nearly every switch and kind.
fn fixed_by_home(
    kind: &Kind,
    picked: &[bool],
    at: &AtSwitch,
    bounds: &mut PortBounds,
    homeward: &Homeward,
) -> bool {
    for &(d, home, lids) in &kind.by_home {
        let (t, d) = (kind.dests[d as usize].0, d as usize);
        if !picked[d] {
            continue;
        }
        let Some(c) = toward_home(at.row[t.idx()], homeward.of(d, home)) else {
            return false;
        };
        bounds.need[c.port.idx()] += lids;
    }
    bounds
        .touched
        .iter()
        .all(|&p| bounds.need[p] <= bounds.cap[p])
}

/// The candidate of `cands` a LID with home bit `home` takes (`pick_kind`),
/// `only` the one towards its home (`Homeward::of`).
fn pick(
    cands: &[Candidate],
    lid: Lid,
    home: u64,
    only: u16,
    bounds: &PortBounds,
    key: u64,
) -> Option<PortNum> {
    let open = |c: &&Candidate| bounds.open(c.port);
    let pick = match cands {
        // Whether open or not, the one there is.
        [one] => Some(one),
        _ => match only {
            NONE => None,
            MANY => best_scored(
                cands.iter().filter(|c| homeward(c, home)).filter(open),
                lid,
                key,
            ),
            i => cands.get(usize::from(i)).filter(open),
        }
        .or_else(|| best_scored(cands.iter().filter(open), lid, key))
        .or_else(|| best_scored(cands.iter(), lid, key)),
    };
    pick.map(|c| c.port)
}

/// A spine's picks among its global cables for `lids`, each with its
/// candidates and its demand (the hosts whose tables send it here): in
/// LID order, each takes its best-scored candidate (rendezvous, as in
/// `pick_group`) that stays within its share of the demand plus the
/// largest single demand, the least-carried one otherwise. The routes,
/// not just the LIDs, spread evenly over the cables to a group, and a
/// lost cable moves little beyond its own LIDs.
fn deal(lids: &[(Lid, &[Candidate], u64)], at: &AtSwitch, lft: &mut Lft) {
    let mut share = vec![0f64; at.ports];
    let mut largest = 0u64;
    for &(_, cands, demand) in lids {
        largest = largest.max(demand);
        let total: u64 = cands.iter().map(|c| c.weight.max(1)).sum();
        for c in cands {
            share[c.port.idx()] += demand as f64 * c.weight.max(1) as f64 / total as f64;
        }
    }
    let cap: Vec<u64> = share
        .iter()
        .map(|s| s.ceil() as u64 + largest / 2)
        .collect();
    let mut carried = vec![0u64; at.ports];
    for &(lid, cands, demand) in lids {
        let pick = match cands {
            // Within its cap or not, the one there is.
            [only] => Some(only),
            _ => best_scored(
                cands
                    .iter()
                    .filter(|c| carried[c.port.idx()] + demand <= cap[c.port.idx()]),
                lid,
                at.own_key,
            )
            .or_else(|| cands.iter().min_by_key(|c| carried[c.port.idx()])),
        };
        if let Some(c) = pick {
            carried[c.port.idx()] += demand;
            lft.set(lid, c.port);
        }
    }
}

/// One destination group's LIDs: all in LID order, and by kind.
struct Group {
    all: Vec<(Lid, SwitchId)>,
    /// CAs' LIDs.
    hosts: Kind,
    /// Switches' own LIDs.
    own: Kind,
}

/// The fabric's LIDs by the group of the switch that delivers them.
struct Lids {
    groups: Vec<Group>,
    is_ca: Vec<bool>,
}

impl Lids {
    /// Every kind's `Kind::by_home` and `Kind::moved`.
    fn set_homes(&mut self, homes: &Homes) {
        for group in &mut self.groups {
            group.hosts.set_homes(&homes.home, &homes.moved);
            group.own.set_homes(&homes.home, &homes.moved);
        }
    }

    fn new(fabric: &Fabric, roles: &Roles) -> Self {
        let mut by_group: Vec<Vec<(Lid, SwitchId)>> = vec![Vec::new(); roles.groups()];
        let mut is_ca = vec![false; fabric.lft_len()];
        for (lid, owner) in fabric.lids() {
            is_ca[lid.idx()] = fabric.switch_id(owner.node).is_none();
            if let Some(t) = fabric.lid_switch(lid) {
                by_group[roles.group(t)].push((lid, t));
            }
        }
        let mut slot = vec![u32::MAX; fabric.graph().switch_count()];
        let is_ca_ref = &is_ca;
        let groups = by_group
            .into_iter()
            .map(|all| {
                let of_kind = |ca: bool| {
                    all.iter()
                        .copied()
                        .filter(move |&(lid, _)| is_ca_ref[lid.idx()] == ca)
                };
                Group {
                    hosts: Kind::new(of_kind(true), &mut slot),
                    own: Kind::new(of_kind(false), &mut slot),
                    all,
                }
            })
            .collect();
        Lids { groups, is_ca }
    }
}

/// The bounds `assign_homes` keeps within one group, on dense arrays.
struct Bounds<'a> {
    towards: &'a [Towards],
    /// Per switch, its CA LIDs in the group.
    count: Vec<u64>,
    /// Per switch, its peers in the Dragonfly+ (a leaf's spines) that are
    /// no home of it: their cable to it is gone.
    lost: Vec<u64>,
    /// Per switch and home (64 slots a switch), the LIDs that took it.
    load: Vec<u32>,
    /// Per (switch, lost peer), the ghosts' claims on that peer.
    ghosts: Vec<(SwitchId, SwitchId, u32)>,
    /// Per home switch, the group's LIDs that took it (or a ghost's
    /// claim on it).
    group_load: Vec<u32>,
    /// The group's LIDs over its spines, rounded up.
    group_cap: u32,
}

/// Which share of a switch's LIDs a home may take (`Bounds::cap_of`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Share {
    /// As if the switch's lost peers still had their cable (one each):
    /// the share every home had before they were lost, so that a lost
    /// cable leaves the other LIDs' homes where they were.
    AsIntact,
    /// Over the homes there are: for the LIDs that lost their home.
    Now,
}

/// `x` rounded up, forgiving float noise below an integer.
fn ceil_cap(x: f64) -> u32 {
    (x - 1e-9).ceil().max(0.0) as u32
}

impl Bounds<'_> {
    fn known(&self, t: SwitchId) -> &[(SwitchId, u64)] {
        self.towards[t.idx()].known()
    }

    /// The share of `t`'s LIDs of a home with `cables` to it.
    fn cap_of(&self, t: SwitchId, cables: u64, share: Share) -> u32 {
        let mut total: u64 = self.known(t).iter().map(|h| h.1).sum();
        if share == Share::AsIntact {
            total += self.lost[t.idx()];
        }
        ceil_cap(self.count[t.idx()] as f64 * cables as f64 / total.max(1) as f64)
    }

    /// The switch home `home` of `t`'s LIDs is.
    fn switch(&self, t: SwitchId, home: Home) -> SwitchId {
        match home {
            Home::Real(k) => self.known(t)[k].0,
            Home::Lost(h) => h,
        }
    }

    /// Whether `home` has had less than its share of `t`'s LIDs. A lost
    /// peer's share is that of one cable, as it had.
    fn open_here(&self, t: SwitchId, home: Home, share: Share) -> bool {
        match home {
            Home::Real(k) => {
                self.load[t.idx() * 64 + k] < self.cap_of(t, self.known(t)[k].1, share)
            }
            Home::Lost(h) => self.lost_load(t, h) < self.cap_of(t, 1, Share::AsIntact),
        }
    }

    fn lost_load(&self, t: SwitchId, h: SwitchId) -> u32 {
        self.ghosts
            .iter()
            .find(|g| (g.0, g.1) == (t, h))
            .map_or(0, |g| g.2)
    }

    fn open_group(&self, h: SwitchId) -> bool {
        self.group_load[h.idx()] < self.group_cap
    }

    /// Whether `home` is open both at `t` and in the group.
    fn open(&self, t: SwitchId, home: Home, share: Share) -> bool {
        self.open_here(t, home, share) && self.open_group(self.switch(t, home))
    }

    fn take(&mut self, t: SwitchId, home: Home) {
        match home {
            Home::Real(k) => self.load[t.idx() * 64 + k] += 1,
            Home::Lost(h) => match self.ghosts.iter_mut().find(|g| (g.0, g.1) == (t, h)) {
                Some(g) => g.2 += 1,
                None => self.ghosts.push((t, h, 1)),
            },
        }
        let h = self.switch(t, home);
        self.group_load[h.idx()] += 1;
    }

    /// Ready for the next group: every count back to zero.
    fn clear(&mut self, lids: &[(Lid, SwitchId)]) {
        for &(_, t) in lids {
            self.count[t.idx()] = 0;
            self.lost[t.idx()] = 0;
            self.load[t.idx() * 64..(t.idx() + 1) * 64].fill(0);
        }
        self.ghosts.clear();
        self.group_load.fill(0);
    }
}

/// Each CA LID's home, one bit of its switch's `Towards::homes` (0: none;
/// switches' own LIDs, management traffic, have none). Per destination
/// group, the CAs' LIDs are dealt over their switch's homes by rendezvous
/// on the homes' GUIDs (the same from every source, so that every
/// switch's picks agree on where a LID enters its switch) within two
/// bounds: each switch's LIDs in proportion to its homes' cables — the
/// hosts of a leaf over its spines, so that no spine → leaf cable carries
/// the routes to two of them while another carries none — and each home's
/// share of the group's LIDs (the group's LIDs over its spines), so that
/// every spine is home to as many of the group's hosts and the cables
/// towards it, up and global, share evenly.
fn assign_homes(
    fabric: &Fabric,
    roles: &Roles,
    lids: &Lids,
    towards: &[Towards],
    keys: &[u64],
) -> Homes {
    let n = fabric.graph().switch_count();
    let mut home = vec![0u64; fabric.lft_len()];
    let mut moved = vec![false; fabric.lft_len()];
    let mut bounds = Bounds {
        towards,
        count: vec![0; n],
        lost: vec![0; n],
        load: vec![0; n * 64],
        ghosts: Vec::new(),
        group_load: vec![0; n],
        group_cap: 0,
    };
    for (g, group) in lids.groups.iter().enumerate() {
        let kind: Vec<(Lid, SwitchId)> = group.hosts.with_switches().collect();
        for &(_, t) in &kind {
            if bounds.count[t.idx()] == 0 {
                bounds.lost[t.idx()] = lost_peers(roles, bounds.known(t), t).count() as u64;
            }
            bounds.count[t.idx()] += 1;
        }
        let spines = roles.plus.spines[g].len().max(1) as f64;
        bounds.group_cap = ceil_cap(kind.len() as f64 / spines);
        let chosen = homes_in_group(roles, keys, &kind, &mut bounds);
        for (&(lid, _), (k, lost)) in kind.iter().zip(chosen) {
            if let Some(k) = k {
                home[lid.idx()] = 1 << k;
            }
            moved[lid.idx()] = lost;
        }
        bounds.clear(&kind);
    }
    Homes { home, moved }
}

/// Per LID, its home (`assign_homes`), and whether a lost cable moved it.
struct Homes {
    home: Vec<u64>,
    moved: Vec<bool>,
}

/// A home of a switch's LIDs: one of its `Towards::known`, or a peer the
/// Dragonfly+ would make one (a leaf's spine) whose cable is gone.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Home {
    Real(usize),
    Lost(SwitchId),
}

/// The homes (indices into their switch's `Towards::known`) of one
/// group's CA LIDs `kind`, so that a lost home moves little beyond its
/// own LIDs. First the homes as if every lost cable were there (each
/// lost peer of a switch a home with one cable, `lost_peers`), in two
/// rounds: every LID claims its best-scored home, the strongest claims
/// (lowest scores) served first within both bounds; then the rest, in
/// LID order, take their best-scored home still open. A LID that this
/// gives a lost peer keeps its claim there (as a *ghost*: no other LID
/// takes its place and moves), and at the end takes its best-scored
/// home still open over the homes there are (`Share::Now`). So the LIDs
/// whose home did not lose its cable keep it: they make the same claims
/// in the same order as before the cable was lost. (Before, the shares
/// counted the homes there were, up to a sixth more for a leaf of six
/// spines, every LID whose best was a lost spine held a place there,
/// and those homed there in the second round went last: other LIDs lost
/// their homes in cascade, three to seven per lost leaf–spine cable on
/// the 4-group unit-test shape.)
fn homes_in_group(
    roles: &Roles,
    keys: &[u64],
    kind: &[(Lid, SwitchId)],
    bounds: &mut Bounds,
) -> Vec<(Option<usize>, bool)> {
    let rank = |lid: Lid, h: SwitchId, w: u64| neg_log2(unit(lid, keys[h.idx()])) / w as f64;
    // Each LID's homes, lost ones too, best-scored first.
    let ranked: Vec<Vec<(f64, Home)>> = kind
        .iter()
        .map(|&(lid, t)| {
            let known = bounds.known(t);
            let mut r: Vec<(f64, Home)> = known
                .iter()
                .enumerate()
                .map(|(k, &(h, w))| (rank(lid, h, w), Home::Real(k)))
                .chain(lost_peers(roles, known, t).map(|h| (rank(lid, h, 1), Home::Lost(h))))
                .collect();
            r.sort_by(|a, b| a.0.total_cmp(&b.0));
            r
        })
        .collect();
    let mut first: Vec<usize> = (0..kind.len()).filter(|&i| !ranked[i].is_empty()).collect();
    first.sort_by(|&a, &b| ranked[a][0].0.total_cmp(&ranked[b][0].0));
    let mut chosen: Vec<Option<Home>> = vec![None; kind.len()];
    for i in first {
        let (t, home) = (kind[i].1, ranked[i][0].1);
        if bounds.open(t, home, Share::AsIntact) {
            bounds.take(t, home);
            chosen[i] = Some(home);
        }
    }
    // The second round: the rest take what is left.
    for i in 0..kind.len() {
        if chosen[i].is_some() || ranked[i].is_empty() {
            continue;
        }
        let t = kind[i].1;
        let home = ranked[i]
            .iter()
            .find(|r| bounds.open(t, r.1, Share::AsIntact))
            .or_else(|| {
                ranked[i]
                    .iter()
                    .find(|r| bounds.open_here(t, r.1, Share::AsIntact))
            })
            .unwrap_or(&ranked[i][0])
            .1;
        bounds.take(t, home);
        chosen[i] = Some(home);
    }
    // Last, those given a lost peer, over the homes there are, so that
    // they push nobody on.
    let moved: Vec<bool> = chosen
        .iter()
        .map(|home| matches!(home, Some(Home::Lost(_))))
        .collect();
    for i in 0..kind.len() {
        if !moved[i] {
            continue;
        }
        let t = kind[i].1;
        let real = || ranked[i].iter().filter(|r| matches!(r.1, Home::Real(_)));
        chosen[i] = real()
            .find(|r| bounds.open(t, r.1, Share::Now))
            .or_else(|| real().find(|r| bounds.open_here(t, r.1, Share::Now)))
            .or_else(|| real().next())
            .map(|r| r.1);
        if let Some(home) = chosen[i] {
            bounds.take(t, home);
        }
    }
    chosen
        .into_iter()
        .zip(moved)
        .map(|(home, moved)| match home {
            Some(Home::Real(k)) => (Some(k), moved),
            _ => (None, moved),
        })
        .collect()
}

/// The switches the Dragonfly+ would make homes of `t`'s LIDs (a leaf's
/// spines, a spine's leaves) that are none (`known`): their cable to `t`
/// is gone.
fn lost_peers<'r>(
    roles: &'r Roles,
    known: &'r [(SwitchId, u64)],
    t: SwitchId,
) -> impl Iterator<Item = SwitchId> + 'r {
    let plus = roles.plus;
    let g = plus.group_of[t.idx()];
    let peers = if plus.is_leaf[t.idx()] {
        &plus.spines[g]
    } else {
        &plus.leaves[g]
    };
    peers
        .iter()
        .copied()
        .filter(move |&h| !known.iter().any(|k| k.0 == h))
}

/// Switch `at.s`'s entries for the LIDs it delivers and for those whose
/// candidates go up or down. CAs' LIDs and switches' own apart: the
/// bounds count hosts' routes, which management LIDs would skew.
fn up_and_down(fabric: &Fabric, lids: &Lids, home: &[u64], at: &AtSwitch, lft: &mut Lft) {
    let mut scratch = Scratch {
        picked: Vec::new(),
        bounds: PortBounds::new(at.ports),
        homeward: Homeward::default(),
    };
    for group in &lids.groups {
        for kind in [&group.hosts, &group.own] {
            pick_kind(fabric, kind, home, at, &mut scratch, lft);
        }
    }
}

/// How switch `at.s` reaches a group's switches by global cables.
#[derive(PartialEq, Eq)]
enum Reach {
    /// It does not: none of its candidates towards them is global.
    NotGlobal,
    /// Each over one cable: nothing to deal.
    OneCable,
    /// Some over a choice of cables: `deal` by demand.
    Choice,
}

fn reach(group: &Group, at: &AtSwitch) -> Reach {
    let mut reach = Reach::NotGlobal;
    for &(t, _) in group.hosts.dests.iter().chain(&group.own.dests) {
        if t != at.s && at.is_global(t) {
            if at.row[t.idx()].len() > 1 {
                return Reach::Choice;
            }
            reach = Reach::OneCable;
        }
    }
    reach
}

/// Demand on switch `at.s`, for each destination group it deals
/// (`Reach::Choice`), per LID of the group (`Group::all`'s order): the
/// hosts of every neighbour whose table sends the LID here. Switches' own
/// LIDs carry management traffic only; counting them would let a few
/// LIDs that every leaf must send through one spine skew the deal.
fn demand(fabric: &Fabric, lids: &Lids, lfts: &[Lft], at: &AtSwitch) -> Vec<(usize, Vec<u32>)> {
    let graph = fabric.graph();
    let feeders: Vec<(SwitchId, u32)> = graph
        .neighbours(at.s)
        .iter()
        .map(|&u| (u, graph.hosts(u)))
        .filter(|&(_, hosts)| hosts > 0)
        .collect();
    let sent_here =
        |u: SwitchId, lid: Lid| graph.switch_behind(u, lfts[u.idx()].get(lid)) == Some(at.s);
    lids.groups
        .iter()
        .enumerate()
        .filter(|(_, group)| reach(group, at) == Reach::Choice)
        .map(|(g, group)| {
            let per_lid = group
                .all
                .iter()
                .map(|&(lid, _)| {
                    feeders
                        .iter()
                        .filter(|&&(u, _)| lids.is_ca[lid.idx()] && sent_here(u, lid))
                        .map(|&(_, hosts)| hosts)
                        .sum()
                })
                .collect();
            (g, per_lid)
        })
        .collect()
}

/// Spine `at.s`'s entries for the LIDs whose candidates are global
/// cables, per destination group, by `demand` where it has a choice.
fn global(lids: &Lids, demand: &[(usize, Vec<u32>)], at: &AtSwitch, lft: &mut Lft) {
    let by_global = |&&(_, t): &&(Lid, SwitchId)| t != at.s && at.is_global(t);
    for (g, group) in lids.groups.iter().enumerate() {
        match reach(group, at) {
            Reach::NotGlobal => {}
            Reach::OneCable => {
                for kind in [&group.hosts, &group.own] {
                    // Per destination, its one global cable (if global).
                    let cable: Vec<Option<PortNum>> = kind
                        .dests
                        .iter()
                        .map(|&(t, _)| match at.row[t.idx()] {
                            [one] if t != at.s && one.global => Some(one.port),
                            _ => None,
                        })
                        .collect();
                    for &(lid, d) in &kind.lids {
                        if let Some(port) = cable[d as usize] {
                            lft.set(lid, port);
                        }
                    }
                }
            }
            Reach::Choice => {
                let demand = demand.iter().find(|d| d.0 == g).map(|d| d.1.as_slice());
                let entries: Vec<(Lid, &[Candidate], u64)> = group
                    .all
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| by_global(e))
                    .map(|(i, &(lid, t))| {
                        let d = demand.and_then(|d| d.get(i)).copied().unwrap_or(0);
                        (lid, at.row[t.idx()], u64::from(d))
                    })
                    .collect();
                deal(&entries, at, lft);
            }
        }
    }
}

/// Per switch, `mix` of its GUID.
fn keys(fabric: &Fabric) -> Vec<u64> {
    fabric
        .graph()
        .ids()
        .map(|s| mix(fabric.switch_node(s).guid))
        .collect()
}

/// Per destination switch, its candidates (on all cores).
fn every_towards(fabric: &Fabric, roles: &Roles, keys: &[u64]) -> Vec<Towards> {
    let mut towards: Vec<Towards> = vec![Towards::default(); fabric.graph().switch_count()];
    let arcs = Arcs::new(fabric, roles);
    crate::parallel::for_each_row(&mut towards, |t, row| {
        *row = candidates(&arcs, keys, SwitchId::new(t));
    });
    towards
}

/// The switches that some leaf reaches only by a detour: where
/// `detours::balance` routes again.
#[cfg(test)]
pub fn reached_by_detours(fabric: &Fabric, roles: &Roles) -> Vec<SwitchId> {
    every_towards(fabric, roles, &keys(fabric))
        .iter()
        .enumerate()
        .filter(|(_, tw)| tw.from_leaves)
        .map(|(t, _)| SwitchId::new(t))
        .collect()
}

/// Every switch's table: per destination switch its candidates (on all
/// cores), each LID's home, then per switch and destination group the up
/// and down picks, then the global ones knowing the demand the first left
/// on each spine.
pub fn forwarding_tables(fabric: &Fabric, roles: &Roles) -> Vec<Lft> {
    let graph = fabric.graph();
    let keys = keys(fabric);
    let towards = every_towards(fabric, roles, &keys);
    let lids = Lids::new(fabric, roles);
    let mut lids = lids;
    let homes = assign_homes(fabric, roles, &lids, &towards, &keys);
    lids.set_homes(&homes);
    let home = homes.home;
    let at = |s: usize| AtSwitch::new(fabric, &towards, &keys, SwitchId::new(s));
    let mut lfts = Routing::empty_lfts(fabric);
    crate::parallel::for_each_row(&mut lfts, |s, lft| {
        up_and_down(fabric, &lids, &home, &at(s), lft);
    });
    let mut demands: Vec<Vec<(usize, Vec<u32>)>> = vec![Vec::new(); graph.switch_count()];
    crate::parallel::for_each_row(&mut demands, |s, row| {
        *row = demand(fabric, &lids, &lfts, &at(s));
    });
    crate::parallel::for_each_row(&mut lfts, |s, lft| {
        global(&lids, &demands[s], &at(s), lft);
    });
    detours::balance(fabric, &towards, &lids, &mut lfts);
    lfts
}

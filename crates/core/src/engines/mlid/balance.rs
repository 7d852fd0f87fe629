//! Which of a switch's candidate cables each LID takes: balanced by
//! counters, as OpenSM's ftree balances, instead of d-mod-k digits.
//!
//! d-mod-k spreads well only when every level's width divides the next
//! (hosts per leaf a multiple of the leaf's up-cables, and so on). Real
//! trees are not like that: 12 hosts and an Aggregation Node over 6
//! up-cables, bundles of 3 to 2 director line chips, empty leaves, CAs on
//! spines. With digits, some spines then carry no destination of a line
//! chip while others carry three (measured: EFI 792 against pssp's 552 on
//! a 2-director twin). Counters do not care about the shape:
//!
//! - Per LID, a *chain* from the destination's switch up to a root: at
//!   every height the up-cable whose down direction carries the fewest
//!   destinations so far. The chain's switches forward the LID down along
//!   it: the cables into a leaf, into a line chip, each carry their share.
//! - Every other switch takes, among its candidate cables (shortest
//!   up*/down* paths, as `UpDownDistances::plan` gives them), the one out
//!   of which the fewest destinations leave so far, preferring cables
//!   that lead to the chain: up-cables to a switch below the chain's root
//!   (so every source's packets meet the chain, the way d-mod-k's do),
//!   down-cables to a switch of the chain.
//!
//! The 2^LMC LIDs of a port are placed one after the other, so each finds
//! the cables its predecessors loaded: they take different up-paths.

use std::cell::Cell;

use crate::fabric::{Cable, Fabric, PortNum, SwitchId};
use crate::routing::NO_PATH;

use super::fill::FAR;
use crate::topology::gft::GenFatTree;

use super::fill::Way;

pub(super) struct Balance {
    /// Per (switch, port, LID offset), flat (`at`): destination LIDs of
    /// that offset that leave there. Each offset is balanced on its own,
    /// so that base LIDs alone spread as well as all of them do.
    load: Vec<u32>,
    /// Per switch: where its ports start in `load` (and, divided by
    /// `classes`, in `is_down`).
    load_base: Vec<usize>,
    /// LIDs per port (2^LMC): the offsets counted apart.
    classes: usize,
    /// The current LID's offset.
    class: usize,
    /// Per switch: its ordinal among the roots (switches without
    /// up-cables), or `usize::MAX`.
    root_of: Vec<usize>,
    /// Per root: a bit set of the switches that reach it going only up.
    below: Vec<Vec<u64>>,
    /// Per (switch, root), flat: the range of `toward_cables` holding the
    /// switch's up-cables to a switch that reaches the root going up.
    toward: Vec<(u32, u32)>,
    toward_cables: Vec<Cable>,
    /// Per switch: the port down along the current LID's chain (`NO_PATH`
    /// off the chain), and the switch behind it.
    chain_port: Vec<PortNum>,
    chain_next: Vec<SwitchId>,
    chain: Vec<SwitchId>,
    /// The chain cables (switch, port down) of the port's earlier LIDs.
    port_chains: Vec<(SwitchId, PortNum)>,
    /// The current chain's root.
    root: usize,
    /// The roots in the order the offsets of a port turn over them, and
    /// each switch's place in it (`usize::MAX` for the others).
    roots_order: Vec<SwitchId>,
    root_pos: Vec<usize>,
    /// The place of the current port's base-LID root in `roots_order`.
    base_pos: usize,
    /// Whether offset o's chain comes down from the root o places after
    /// the base LID's (the path selection's rank rule needs a LID per
    /// root: 2^LMC a multiple of the roots). Kept where the rule does not
    /// fit the tree otherwise (`selection::rank_rule_fits`) and sources
    /// take base LIDs: climbing by all offsets' counters there gave a
    /// busier cable (FT(8,3) 5 % cut, lmc 4: 3,700 routes against 3,436).
    /// Otherwise every source uses the base LID, and the other offsets
    /// only have to spread the routes they carry: their chains climb by
    /// the counters of all offsets.
    by_rank: bool,
    /// Whether the current LID is counted.
    counted: bool,
    /// Per (switch, port), flat (`load_base / classes`): whether the port
    /// is a down-cable.
    is_down: Vec<bool>,
    /// Per (switch, offset): the routes on its down-cables, and per
    /// switch their number (the mean a chain weighs, `chain_key`).
    down_routes: Vec<u64>,
    down_cables: Vec<u32>,
    /// Per (switch, offset): how often its counters of that offset
    /// changed, and the least-loaded candidates the last scan found.
    changes: Vec<u32>,
    scans: Vec<Cell<Scan>>,
}

/// The candidates a switch chooses among: `pick`'s callers name them so
/// that a scan of the same cables can be remembered. `ALL_UP`: every
/// up-cable of the switch (a full tree); `all_candidates` with the
/// destination switch's serial number: the candidates of its plan (two
/// lists: for host LIDs and for switch LIDs); `TOWARD` with a root: the
/// up-cables towards it.
pub(super) type Candidates = u64;
const TOWARD: Candidates = 1 << 62;
const NOT_REMEMBERED: Candidates = u64::MAX;

/// Every up-cable of the switch, whatever the destination.
pub(super) const ALL_UP: Candidates = 1 << 61;

pub(super) fn all_candidates(destination_serial: u32, for_switch_lids: bool) -> Candidates {
    u64::from(destination_serial) << 1 | u64::from(for_switch_lids)
}

/// The least-loaded candidates of one switch for one offset, as a scan
/// found them: while no counter of the switch and offset has changed
/// since (`changes`), the same candidates give the same order. Only
/// scans of switches no route passes are remembered (they change no
/// counter and weigh no other offset), most switches of a full tree:
/// those that cannot reach the chain's root climb to whichever parent
/// the fewest LIDs leave for, the same one LID after LID.
#[derive(Clone, Copy)]
struct Scan {
    changes: u32,
    candidates: Candidates,
    /// Positions in the candidate list, the least load first (the
    /// earlier position among equals); `len` of them.
    best: [u16; SCAN_DEPTH],
    len: u8,
}

/// How many least-loaded candidates a scan keeps: with up to
/// `SCAN_DEPTH - 1` earlier LIDs of the port (lmc ≤ 2), one of them is
/// always free of those LIDs, so the remembered order answers; beyond,
/// a full scan does when all kept ones are taken.
const SCAN_DEPTH: usize = 4;

impl Balance {
    pub(super) fn new(fabric: &Fabric, tree: &GenFatTree) -> Self {
        let graph = fabric.graph();
        let n = graph.switch_count();
        let mut root_of = vec![usize::MAX; n];
        let mut below = Vec::new();
        let words = n.div_ceil(64);
        let mut stack = Vec::new();
        for r in graph.ids().filter(|r| tree.up[r.idx()].is_empty()) {
            root_of[r.idx()] = below.len();
            let mut set = vec![0u64; words];
            stack.push(r);
            while let Some(s) = stack.pop() {
                let (w, b) = (s.idx() / 64, 1u64 << (s.idx() % 64));
                if set[w] & b != 0 {
                    continue;
                }
                set[w] |= b;
                stack.extend(tree.down[s.idx()].iter().map(|c| c.to));
            }
            below.push(set);
        }
        let roots = below.len();
        let mut toward = vec![(0u32, 0u32); n * roots];
        let mut toward_cables = Vec::new();
        for s in graph.ids().filter(|s| !tree.up[s.idx()].is_empty()) {
            for (root, set) in below.iter().enumerate() {
                let start = toward_cables.len() as u32;
                toward_cables.extend(
                    tree.up[s.idx()]
                        .iter()
                        .filter(|c| set[c.to.idx() / 64] & (1u64 << (c.to.idx() % 64)) != 0),
                );
                toward[s.idx() * roots + root] = (start, toward_cables.len() as u32);
            }
        }
        let classes = 1usize << fabric.lmc();
        let roots_order = interleaved_roots(fabric, tree);
        let mut root_pos = vec![usize::MAX; n];
        for (i, r) in roots_order.iter().enumerate() {
            root_pos[r.idx()] = i;
        }
        let by_rank = !roots_order.is_empty() && classes % roots_order.len() == 0;
        let mut load_base = Vec::with_capacity(n + 1);
        let mut ports = 0usize;
        for s in graph.ids() {
            load_base.push(ports * classes);
            ports += graph.port_slots(s);
        }
        load_base.push(ports * classes);
        let mut is_down = vec![false; ports];
        for s in graph.ids() {
            let base = load_base[s.idx()] / classes;
            for c in &tree.down[s.idx()] {
                is_down[base + c.port.idx()] = true;
            }
        }
        Balance {
            by_rank,
            roots_order,
            root_pos,
            base_pos: 0,
            load: vec![0; ports * classes],
            load_base,
            classes,
            class: 0,
            root_of,
            below,
            toward,
            toward_cables,
            chain_port: vec![NO_PATH; n],
            chain_next: vec![SwitchId::default(); n],
            chain: Vec::new(),
            port_chains: Vec::new(),
            root: usize::MAX,
            counted: true,
            is_down,
            down_routes: vec![0; n * classes],
            down_cables: tree.down.iter().map(|d| d.len() as u32).collect(),
            changes: vec![0; n * classes],
            scans: vec![
                Cell::new(Scan {
                    changes: 0,
                    candidates: NOT_REMEMBERED,
                    best: [0; SCAN_DEPTH],
                    len: 0,
                });
                n * classes
            ],
        }
    }

    /// Starts offset `class` of a port (`class` 0: its first LID),
    /// delivered at switch `t`: lays its chain. `down`: the down-hops
    /// from every switch to `t` (`FAR` where there is no way).
    ///
    /// The base LID's chain climbs from `t` by the counters. Offset o's
    /// chain comes down from the root o places further in `roots_order`
    /// than the base LID's, so a source that takes offset (its rank − the
    /// base root's place) climbs to the root of its own rank whatever the
    /// destination: the sources of a leaf or a pod leave it on different
    /// up-paths, and spread as evenly as the base LIDs do (the path
    /// selection, `selection.rs`).
    pub(super) fn start_lid(
        &mut self,
        tree: &GenFatTree,
        down: &[u32],
        (t, class): (SwitchId, usize),
        counted: bool,
    ) {
        for s in self.chain.drain(..) {
            self.chain_port[s.idx()] = NO_PATH;
        }
        self.counted = counted;
        self.class = class.min(self.classes - 1);
        if class == 0 {
            self.port_chains.clear();
        }
        let target = (class > 0 && self.by_rank)
            .then(|| self.roots_order[(self.base_pos + class) % self.roots_order.len()])
            .filter(|r| down[r.idx()] < FAR);
        let x = match target {
            Some(r) => self.chain_down(tree, down, r, t),
            None => self.chain_up(tree, t),
        };
        self.root = self.root_of[x.idx()];
        if class == 0 {
            self.base_pos = self.root_pos[x.idx()].min(self.roots_order.len());
        }
    }

    /// The place of the current port's base-LID root in `roots_order`.
    pub(super) fn base_place(&self) -> usize {
        self.base_pos
    }

    /// The roots the offsets turn over.
    pub(super) fn roots(&self) -> usize {
        self.roots_order.len()
    }

    /// Whether the offsets were placed for the rank rule (`by_rank`).
    pub(super) fn by_rank(&self) -> bool {
        self.by_rank
    }

    /// How often an earlier LID of the port came down this cable, then
    /// the routes of this offset that do (of all offsets, for an extra
    /// LID no source picks by rank: the busiest cable counts them all,
    /// measured: 3,204 -> 2,975 routes on the director twin with
    /// Aggregation Nodes at lmc 2), plus 3/2 of the mean over `s`'s
    /// down-cables. Every switch above a destination routes it down, so
    /// the tables do not say which cable an earlier LID's traffic came
    /// down: its chain does.
    ///
    /// The mean weighs what the chain's root will carry from every other
    /// leaf: the cable alone sees only the destination's side, and a
    /// spine whose own hosts' routes came down first would be skipped by
    /// every leaf's chains, its up-cables idle (hosts on spines: EBB .888
    /// -> .929, pssp .929; the factor 3/2 measured against 1/2 and 1 on
    /// the trees of docs/engines/mlid.md).
    fn chain_key(&self, s: SwitchId, port: PortNum) -> (usize, u32, u32) {
        let reused = self.port_chains.iter().filter(|&&k| k == (s, port)).count();
        let (this, all) = (self.load_of(s, port), self.all_offsets(s, port));
        let all_offsets = self.class > 0 && !self.by_rank;
        let (first, second) = if all_offsets {
            (all, this)
        } else {
            (this, all)
        };
        let mean = self.down_mean(s, all_offsets);
        (
            reused,
            first.saturating_add(mean.saturating_mul(3) / 2),
            second,
        )
    }

    /// The mean routes on `s`'s down-cables, of the current offset or of
    /// all offsets.
    fn down_mean(&self, s: SwitchId, all_offsets: bool) -> u32 {
        let at = s.idx() * self.classes;
        let routes: u64 = if all_offsets {
            self.down_routes[at..at + self.classes].iter().sum()
        } else {
            self.down_routes[at + self.class]
        };
        let cables = u64::from(self.down_cables[s.idx()].max(1));
        u32::try_from(routes / cables).unwrap_or(u32::MAX)
    }

    fn lay(&mut self, s: SwitchId, port: PortNum, next: SwitchId) {
        self.chain_port[s.idx()] = port;
        self.chain_next[s.idx()] = next;
        self.chain.push(s);
        self.port_chains.push((s, port));
    }

    /// A chain climbing from `t` by the counters; its root.
    fn chain_up(&mut self, tree: &GenFatTree, t: SwitchId) -> SwitchId {
        let mut x = t;
        while let Some(c) = tree.up[x.idx()]
            .iter()
            .min_by_key(|c| self.chain_key(c.to, c.far_port))
            .copied()
        {
            self.lay(c.to, c.far_port, x);
            x = c.to;
        }
        x
    }

    /// A chain from root `r` down to `t` by the counters; `r`.
    fn chain_down(
        &mut self,
        tree: &GenFatTree,
        down: &[u32],
        r: SwitchId,
        t: SwitchId,
    ) -> SwitchId {
        let mut x = r;
        while x != t {
            let Some(c) = tree.down[x.idx()]
                .iter()
                .filter(|c| down[c.to.idx()] + 1 == down[x.idx()])
                .min_by_key(|c| self.chain_key(x, c.port))
                .copied()
            else {
                break;
            };
            self.lay(x, c.port, c.to);
            x = c.to;
        }
        r
    }

    /// Where the counter of `port` of `s` for the current offset lives.
    fn at(&self, s: SwitchId, port: PortNum) -> usize {
        self.load_base[s.idx()] + port.idx() * self.classes + self.class
    }

    fn load_of(&self, s: SwitchId, port: PortNum) -> u32 {
        self.load[self.at(s, port)]
    }

    /// Counts the current LID's `weight` routes leaving `s` at `port`.
    pub(super) fn pass(&mut self, s: SwitchId, port: PortNum, weight: u32) {
        self.count(s, port, weight);
    }

    fn count(&mut self, s: SwitchId, port: PortNum, weight: u32) {
        if self.counted && weight > 0 {
            let at = self.at(s, port);
            self.load[at] += weight;
            let here = s.idx() * self.classes + self.class;
            self.changes[here] = self.changes[here].wrapping_add(1);
            if self.is_down[at / self.classes] {
                self.down_routes[here] += u64::from(weight);
            }
        }
    }

    /// The routes of every offset that leave `s` at `port` (ties between
    /// equal loads of one offset go to the cable the others load least:
    /// the busiest cable counts every LID).
    fn all_offsets(&self, s: SwitchId, port: PortNum) -> u32 {
        let at = self.load_base[s.idx()] + port.idx() * self.classes;
        self.load[at..at + self.classes].iter().sum()
    }

    /// The least-loaded of `cables` at `s` (the first of equals; with
    /// `all_offsets`, the one all offsets load least among equals). A
    /// cable's cost is first how many earlier LIDs of the current port
    /// leave there (`earlier`: their entries in `s`'s table, so a port's
    /// LIDs take disjoint paths where there are, the paper's 2^LMC
    /// paths), then the LIDs of its offset already leaving there.
    fn least<'c>(
        &self,
        earlier: &[u8],
        s: SwitchId,
        cables: impl Iterator<Item = &'c Cable>,
        all_offsets: bool,
    ) -> Option<&'c Cable> {
        // The best so far, and its all-offsets load once a tie asked.
        let mut best: Option<((usize, u32), &Cable, Option<u32>)> = None;
        for c in cables {
            let k = (reused(earlier, c.port), self.load_of(s, c.port));
            match &mut best {
                Some((b, _, _)) if k > *b => {}
                Some((b, p, all)) if k == *b => {
                    if all_offsets {
                        let theirs = *all.get_or_insert_with(|| self.all_offsets(s, p.port));
                        let ours = self.all_offsets(s, c.port);
                        if ours < theirs {
                            best = Some((k, c, Some(ours)));
                        }
                    }
                }
                _ => best = Some((k, c, None)),
            }
        }
        best.map(|(_, c, _)| c)
    }

    /// `least` over every one of `cables` for a switch no route passes,
    /// from the remembered scan while `s`'s counters of this offset have
    /// not changed: the first remembered candidate no earlier LID of the
    /// port took is the least (it is the least-loaded, the first of
    /// equals, among those free of earlier LIDs); a full scan otherwise.
    fn least_remembered<'c>(
        &self,
        earlier: &[u8],
        s: SwitchId,
        cables: &'c [Cable],
        candidates: Candidates,
    ) -> Option<&'c Cable> {
        let here = s.idx() * self.classes + self.class;
        let changes = self.changes[here];
        let scan = self.scans[here].get();
        let scan = if scan.changes == changes && scan.candidates == candidates {
            scan
        } else {
            let fresh = self.scan(s, cables, candidates, changes);
            self.scans[here].set(fresh);
            fresh
        };
        scan.best[..scan.len as usize]
            .iter()
            .map(|&i| &cables[i as usize])
            .find(|c| reused(earlier, c.port) == 0)
            .or_else(|| self.least(earlier, s, cables.iter(), false))
    }

    /// The `SCAN_DEPTH` least-loaded of `cables` at `s` for the current
    /// offset, the earlier position first among equals.
    fn scan(&self, s: SwitchId, cables: &[Cable], candidates: Candidates, changes: u32) -> Scan {
        let mut kept: [(u32, u16); SCAN_DEPTH] = [(0, 0); SCAN_DEPTH];
        let mut len = 0usize;
        for (i, c) in cables.iter().enumerate() {
            let load = self.load_of(s, c.port);
            if len == SCAN_DEPTH && load >= kept[SCAN_DEPTH - 1].0 {
                continue;
            }
            // After every kept one of no more load: equals keep their order.
            let mut place = len.min(SCAN_DEPTH - 1);
            while place > 0 && kept[place - 1].0 > load {
                kept[place] = kept[place - 1];
                place -= 1;
            }
            kept[place] = (load, i as u16);
            len = (len + 1).min(SCAN_DEPTH);
        }
        let mut best = [0u16; SCAN_DEPTH];
        for (b, k) in best.iter_mut().zip(&kept[..len]) {
            *b = k.1;
        }
        Scan {
            changes,
            candidates,
            best,
            len: len as u8,
        }
    }

    /// `s`'s up-cables that lead to the current chain's root.
    pub(super) fn toward_root(&self, s: SwitchId) -> &[Cable] {
        let roots = self.below.len();
        let Some(&(a, b)) = (self.root < roots)
            .then(|| self.toward.get(s.idx() * roots + self.root))
            .flatten()
        else {
            return &[];
        };
        &self.toward_cables[a as usize..b as usize]
    }

    fn leads_to_root(&self, s: SwitchId) -> bool {
        self.below
            .get(self.root)
            .is_some_and(|set| set[s.idx() / 64] & (1u64 << (s.idx() % 64)) != 0)
    }

    /// The cable switch `s` forwards the current LID over, among
    /// `cables` (named by `candidates`), and the switch behind it;
    /// `earlier`: `s`'s table entries of the port's earlier LIDs; `flow`:
    /// the sources whose packets to it pass `s` (its own CAs and those of
    /// every switch that forwards it there, known because the fill
    /// visits switches farthest from the destination first). Every
    /// counter is then a count of routes, comparable across switches: a
    /// spine that carries the packets of a leaf cabled to no other spine
    /// weighs them all, and its down-cables balance them.
    pub(super) fn pick(
        &mut self,
        earlier: &[u8],
        s: SwitchId,
        (cables, candidates, way, all_up): (&[Cable], Candidates, Way, bool),
        flow: u32,
    ) -> Option<(PortNum, SwitchId)> {
        let on_chain = self.chain_port[s.idx()];
        if way == Way::Down && on_chain != NO_PATH {
            self.count(s, on_chain, flow);
            return Some((on_chain, self.chain_next[s.idx()]));
        }
        // The candidates the switch prefers, if any: up-cables to a
        // switch below the chain's root, down-cables to a switch of the
        // chain. In a full tree every up-cable is a candidate, and the
        // ones that lead to the chain's root are known in advance.
        let (cables, candidates) = match way {
            Way::Up if all_up => match self.toward_root(s) {
                [] => (cables, candidates),
                toward => (toward, TOWARD | self.root as u64),
            },
            Way::Up => (
                cables,
                self.unless_preferred(cables, |b, c| b.leads_to_root(c.to), candidates),
            ),
            Way::Down => (
                cables,
                self.unless_preferred(
                    cables,
                    |b, c| b.chain_port[c.to.idx()] != NO_PATH,
                    candidates,
                ),
            ),
            Way::Other => (cables, candidates),
        };
        let cable = match cables {
            // One candidate (most switches of a full tree, towards the
            // chain's root or down to the destination): nothing to weigh.
            [] => None,
            [only] => Some(only),
            _ if candidates == NOT_REMEMBERED => {
                let prefer = |c: &&Cable| match way {
                    Way::Up => self.leads_to_root(c.to),
                    Way::Down => self.chain_port[c.to.idx()] != NO_PATH,
                    Way::Other => true,
                };
                let all_offsets = self.classes > 1 && flow > 0;
                self.least(earlier, s, cables.iter().filter(prefer), all_offsets)
            }
            // The all-offsets tie-break spreads routes; a switch no route
            // to this LID passes (flow 0: most switches that cannot reach
            // the chain's root) changes no counter whichever it takes.
            _ if flow == 0 => self.least_remembered(earlier, s, cables, candidates),
            _ => self.least(earlier, s, cables.iter(), self.classes > 1),
        }
        .copied();
        let cable = cable?;
        self.count(s, cable.port, flow);
        Some((cable.port, cable.to))
    }

    /// `candidates` when none of `cables` is preferred (then all are
    /// weighed), `NOT_REMEMBERED` when some are (only those are).
    fn unless_preferred(
        &self,
        cables: &[Cable],
        prefer: impl Fn(&Self, &Cable) -> bool,
        candidates: Candidates,
    ) -> Candidates {
        if cables.iter().any(|c| prefer(self, c)) {
            NOT_REMEMBERED
        } else {
            candidates
        }
    }
}

/// How many of the port's earlier LIDs leave by `port` (`earlier`: their
/// entries in the switch's table).
fn reused(earlier: &[u8], port: PortNum) -> usize {
    earlier.iter().filter(|&&p| p == port.raw()).count()
}

/// The roots in the order a leaf reaches them: level by level from the
/// first leaf, the first up-cable of every switch of a level before the
/// second of any (so consecutive roots lie above different parents of the
/// leaf, as consecutive d-mod-k digits do); roots that leaf does not reach
/// follow, by switch id.
fn interleaved_roots(fabric: &Fabric, tree: &GenFatTree) -> Vec<SwitchId> {
    let graph = fabric.graph();
    let mut seen = vec![false; graph.switch_count()];
    let mut order = Vec::new();
    let mut frontier: Vec<SwitchId> = tree
        .top_down
        .iter()
        .rev()
        .copied()
        .find(|s| tree.height[s.idx()] == 0)
        .into_iter()
        .collect();
    while !frontier.is_empty() {
        let mut next = Vec::new();
        let widest = frontier
            .iter()
            .map(|f| tree.up[f.idx()].len())
            .max()
            .unwrap_or(0);
        for k in 0..widest {
            for f in &frontier {
                if let Some(c) = tree.up[f.idx()].get(k) {
                    if !std::mem::replace(&mut seen[c.to.idx()], true) {
                        next.push(c.to);
                    }
                }
            }
        }
        order.extend(
            frontier
                .iter()
                .copied()
                .filter(|f| tree.up[f.idx()].is_empty()),
        );
        frontier = next;
    }
    for s in graph.ids() {
        if tree.up[s.idx()].is_empty() && !order.contains(&s) {
            order.push(s);
        }
    }
    order
}

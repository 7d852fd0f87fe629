//! Recognising a generalized fat tree (XGFT/PGFT, real cluster trees) in
//! the bare graph: switch heights counted from the hosts up, each switch's
//! up- and down-cables (parallel cables kept one by one), and an order of
//! the hosts that groups them by subtree (the order the routing balances
//! in).
//!
//! Nothing here asks for full levels or equal widths: a cable or a switch
//! may be missing, levels may differ in radix, a pair of switches may
//! share any number of cables (bundles), director chassis appear as line
//! and spine chips, and CAs (Aggregation Nodes, management, storage) may
//! hang off any switch. What must hold is what
//! up*/down* routing needs: every cable joins two adjacent heights.
//!
//! Heights: counted from the leaves, the switches whose share of ports
//! leading to CAs is above half the fullest switch's. A CA alone does not
//! make a leaf: SHARP Aggregation Nodes sit on every switch chip, and
//! management or storage nodes on spines. Where two such leaves are cabled
//! to each other, the one whose ports lead less to hosts is lifted out of
//! the leaves; if both lead to hosts equally the fabric is no tree (a
//! HyperX with a host on every switch). Leaves with few or no hosts are
//! found by their cabling: they share their neighbours with a leaf.
//! Director chassis need nothing special: their line chips are one height,
//! their spine chips the next.

use std::collections::{HashMap, VecDeque};

use crate::fabric::{Cable, Fabric, Peer, PortRef, SwitchGraph, SwitchId};

mod reroot;

#[derive(Clone, Debug)]
pub struct GenFatTree {
    /// Per switch: its height, 0 for the leaves.
    pub height: Vec<usize>,
    /// The highest height.
    pub top: usize,
    /// Per switch: cables one height up, in spreading order: the first
    /// cable of every bundle (parents by switch id, i.e. GUID), then the
    /// second of every bundle, and so on, so consecutive choices reach
    /// different parents before they reuse one.
    pub up: Vec<Vec<Cable>>,
    /// Per switch: cables one height down, in the same order.
    pub down: Vec<Vec<Cable>>,
    /// Per height below the top: the up-cable count most switches there
    /// have (the radix of the up digit taken at that height).
    pub radix: Vec<usize>,
    /// Per height below the top: the number of distinct parents most
    /// switches there have.
    pub parents: Vec<usize>,
    /// Host (CA) ports in d-mod-k order: leaves grouped by subtree, the
    /// hosts of a leaf together, hosts above the leaves last.
    pub host_index: HashMap<PortRef, usize>,
    /// Switches by height, highest first (for top-down passes).
    pub top_down: Vec<SwitchId>,
}

impl GenFatTree {
    /// Up-paths from a leaf to the top of a full tree: the product of the
    /// radixes (parallel cables count as paths of their own).
    pub fn paths(&self) -> usize {
        self.radix
            .iter()
            .fold(1usize, |acc, &r| acc.saturating_mul(r.max(1)))
    }

    pub fn hosts(&self) -> usize {
        self.host_index.len()
    }

    /// The mixed-radix digits of `x`, lowest height first.
    pub fn digits(&self, mut x: usize) -> Vec<usize> {
        self.radix
            .iter()
            .map(|&r| {
                let r = r.max(1);
                let d = x % r;
                x /= r;
                d
            })
            .collect()
    }

    /// The number whose digits are `digits`.
    pub fn compose(&self, digits: &[usize]) -> usize {
        digits
            .iter()
            .zip(&self.radix)
            .rev()
            .fold(0, |acc, (&d, &r)| acc * r.max(1) + d)
    }

    /// "k cables up to w parents" per height, for the log.
    pub fn shape(&self) -> String {
        let widths: Vec<String> = self
            .radix
            .iter()
            .zip(&self.parents)
            .map(|(&r, &w)| format!("{r} up to {w}"))
            .collect();
        format!(
            "{} heights, {}",
            self.top + 1,
            if widths.is_empty() {
                "one switch".into()
            } else {
                widths.join(", ")
            }
        )
    }
}

impl GenFatTree {
    /// Whether no cable or switch is missing: at every height, every
    /// switch has as many up- and down-cables as the others there. Then
    /// the minimal paths between leaves are up*/down* paths.
    pub fn is_complete(&self, fabric: &Fabric) -> bool {
        let graph = fabric.graph();
        (0..=self.top).all(|h| {
            let mut at = graph.ids().filter(|s| self.height[s.idx()] == h);
            let Some(first) = at.next() else { return true };
            let shape = |s: SwitchId| (self.up[s.idx()].len(), self.down[s.idx()].len());
            let want = shape(first);
            at.all(|s| shape(s) == want)
        })
    }

    /// Why OpenSM's ftree would refuse this tree although it is one, if
    /// it would: ftree wants every CA on a leaf and every leaf with the
    /// same number of parent switches ("upward port groups"), and fails
    /// with "CN port ... rank", "different number of upward port groups"
    /// or "more than one root" otherwise. Aggregation Nodes on every chip,
    /// hosts on spines, leaves missing a cable all count. Then minhop,
    /// its fallback, routes minimal paths that are not all up*/down*.
    pub fn ftree_objection(&self, fabric: &Fabric) -> Option<String> {
        let graph = fabric.graph();
        if let Some(s) = graph
            .ids()
            .find(|s| self.height[s.idx()] > 0 && graph.hosts(*s) > 0)
        {
            return Some(format!(
                "{} has CAs (hosts or an Aggregation Node) at height {} above the leaves: ftree takes CAs for \
                 compute nodes on leaves only",
                fabric.describe_switch(s),
                self.height[s.idx()]
            ));
        }
        let parents = |s: SwitchId| {
            let mut p: Vec<SwitchId> = self.up[s.idx()].iter().map(|c| c.to).collect();
            p.sort();
            p.dedup();
            p.len()
        };
        let leaves: Vec<SwitchId> = graph.ids().filter(|s| self.height[s.idx()] == 0).collect();
        let first = leaves.first().map(|&l| parents(l))?;
        if let Some(&odd) = leaves.iter().find(|&&l| parents(l) != first) {
            return Some(format!(
                "{} has {} parent switches where other leaves have {first}: ftree wants the same number of \
                 upward port groups on every leaf",
                fabric.describe_switch(odd),
                parents(odd)
            ));
        }
        if let Some(&empty) = leaves.iter().find(|&&l| graph.hosts(l) == 0) {
            return Some(format!(
                "{} is a leaf without hosts: ftree ranks the tree from the switches with compute nodes",
                fabric.describe_switch(empty)
            ));
        }
        None
    }
}

/// Why a fabric is not a fat tree, naming the switches (as
/// `Fabric::describe_switch` gives them); its `Display` is the decline's
/// wording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotATree {
    NoSwitches,
    NoHosts,
    /// A cable from a switch to itself.
    LoopedCable {
        switch: String,
    },
    /// A switch that no path of switches joins to those with hosts.
    Unconnected {
        switch: String,
    },
    /// Two switches with as large a share of hosts, cabled to each other.
    LeavesCabled {
        a: String,
        b: String,
    },
    /// A cable within one height.
    SameHeight {
        a: String,
        b: String,
        height: usize,
    },
    /// A cable between heights that are not adjacent.
    Skips {
        a: String,
        ha: usize,
        b: String,
        hb: usize,
    },
    /// No cable names itself, yet no heights fit.
    NoHeights,
}

impl std::fmt::Display for NotATree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotATree::NoSwitches => write!(f, "it has no switches"),
            NotATree::NoHosts => write!(f, "no switch has hosts"),
            NotATree::LoopedCable { switch } => write!(f, "{switch} has a cable looped back to itself"),
            NotATree::Unconnected { switch } => {
                write!(f, "{switch} is not connected to the switches with hosts")
            }
            NotATree::LeavesCabled { a, b } => write!(
                f,
                "{a} and {b} both have hosts and a cable between them, and neither has fewer hosts per port to be \
                 the spine above the other"
            ),
            NotATree::SameHeight { a, b, height } => write!(
                f,
                "{a} and {b} are both at height {height} and cabled to each other: fat-tree cables join adjacent levels"
            ),
            NotATree::Skips { a, ha, b, hb } => write!(
                f,
                "{a} (height {ha}) is cabled to {b} (height {hb}): fat-tree cables join adjacent levels"
            ),
            NotATree::NoHeights => {
                write!(f, "no assignment of heights makes every cable join adjacent levels")
            }
        }
    }
}

impl std::error::Error for NotATree {}

pub fn recognize(fabric: &Fabric) -> Result<GenFatTree, NotATree> {
    let graph = fabric.graph();
    let height = heights(fabric)?;
    let top = height.iter().copied().max().unwrap_or(0);
    let (up, down) = up_and_down_cables(graph, &height);
    let (radix, parents) = widths(graph, &height, &up, top);
    let mut top_down: Vec<SwitchId> = graph.ids().collect();
    top_down.sort_by_key(|s| (std::cmp::Reverse(height[s.idx()]), *s));
    let host_index = host_order(fabric, &height, &down, &top_down);
    Ok(GenFatTree {
        height,
        top,
        up,
        down,
        radix,
        parents,
        host_index,
        top_down,
    })
}

/// Every switch's height, counted from the leaves (the switches with the
/// largest share of hosts, then those cabled like a leaf), or why the
/// fabric is no tree.
fn heights(fabric: &Fabric) -> Result<Vec<usize>, NotATree> {
    let graph = fabric.graph();
    let n = graph.switch_count();
    let name = |s: SwitchId| fabric.describe_switch(s);
    if n == 0 {
        return Err(NotATree::NoSwitches);
    }
    let host_count: Vec<usize> = graph.ids().map(|s| graph.hosts(s) as usize).collect();
    for s in graph.ids() {
        if graph.cables(s).iter().any(|c| c.to == s) {
            return Err(NotATree::LoopedCable { switch: name(s) });
        }
    }
    // The share of a switch's cabled ports that lead to hosts, as a
    // fraction (hosts, ports) compared by cross-multiplying.
    let share = |s: SwitchId| {
        let h = host_count[s.idx()] as u64;
        (h, h + graph.cables(s).len() as u64)
    };
    let below = |a: (u64, u64), b: (u64, u64)| a.0 * b.1 < b.0 * a.1;
    let Some(most) = graph
        .ids()
        .filter(|&s| host_count[s.idx()] > 0)
        .map(share)
        .reduce(|a, b| if below(a, b) { b } else { a })
    else {
        return Err(NotATree::NoHosts);
    };
    // The leaves to count heights from: the switches whose share of hosts
    // is above half the fullest one's. A CA on a switch does not make
    // it a leaf: SHARP Aggregation Nodes sit on every chip, management
    // and storage nodes on spines, and a spine with one CA among 36
    // switch cables is a spine. Heights then come from the cabling.
    let half = (most.0, most.1 * 2);
    let mut leaf: Vec<bool> = graph
        .ids()
        .map(|s| host_count[s.idx()] > 0 && below(half, share(s)))
        .collect();
    // A switch cabled to a leaf cannot be a leaf itself: where cables join
    // leaves, those with fewer hosts per port (spines with storage nodes)
    // are lifted out of the leaves one by one until every cable joins
    // adjacent heights.
    let mut suspects: Vec<SwitchId> = graph
        .ids()
        .filter(|&s| leaf[s.idx()] && below(share(s), most))
        .collect();
    suspects.sort_by(|&a, &b| {
        (share(a).0 * share(b).1)
            .cmp(&(share(b).0 * share(a).1))
            .then(a.cmp(&b))
    });
    let first = heights_from(fabric, &leaf)?;
    let first_break = misfit(graph, &first);
    let fitting = |leaf: &[bool]| {
        heights_from(fabric, leaf)
            .ok()
            .filter(|h| misfit(graph, h).is_none())
    };
    let mut height = first_break.is_none().then(|| first.clone());
    for &s in &suspects {
        if height.is_some() {
            break;
        }
        leaf[s.idx()] = false;
        height = fitting(&leaf);
    }
    let Some(mut height) = height else {
        return Err(not_adjacent(fabric, &first, first_break));
    };
    // Leaves with few or no hosts (cabled, not yet populated; only an
    // Aggregation Node) are two heights up from the leaves, cabled only
    // down: recognised by being cabled like a leaf (most of their
    // neighbours are a leaf's neighbours) and put among the leaves.
    let folded = folded_leaves(graph, &height, &leaf);
    if !folded.is_empty() {
        folded.iter().for_each(|s| leaf[s.idx()] = true);
        match fitting(&leaf) {
            Some(h) => height = h,
            None => folded.iter().for_each(|s| leaf[s.idx()] = false),
        }
    }
    let empty = leaf_like(graph, &height, &leaf);
    if !empty.is_empty() {
        empty.iter().for_each(|s| leaf[s.idx()] = true);
        match fitting(&leaf) {
            Some(h) => height = h,
            None => empty.iter().for_each(|s| leaf[s.idx()] = false),
        }
    }
    // Leaves at different depths below the spines can turn the tree
    // upside down (see `reroot`).
    if let Some(h) = reroot::rerooted(graph, &height, |h| misfit(graph, h).is_none()) {
        height = h;
    }
    Ok(height)
}

/// Every switch's cables to the height above and below, in spreading
/// order.
fn up_and_down_cables(graph: &SwitchGraph, height: &[usize]) -> (Vec<Vec<Cable>>, Vec<Vec<Cable>>) {
    let n = graph.switch_count();
    let mut up = vec![Vec::new(); n];
    let mut down = vec![Vec::new(); n];
    for s in graph.ids() {
        let h = height[s.idx()];
        up[s.idx()] = spreading_order(
            graph
                .cables(s)
                .iter()
                .filter(|c| height[c.to.idx()] == h + 1),
        );
        down[s.idx()] = spreading_order(
            graph
                .cables(s)
                .iter()
                .filter(|c| height[c.to.idx()] + 1 == h),
        );
    }
    (up, down)
}

/// Per height: the most common number of up-cables (radix) and of parent
/// switches.
fn widths(
    graph: &SwitchGraph,
    height: &[usize],
    up: &[Vec<Cable>],
    top: usize,
) -> (Vec<usize>, Vec<usize>) {
    let most_common = |values: &mut dyn Iterator<Item = usize>| {
        let mut counts: HashMap<usize, usize> = HashMap::new();
        for v in values {
            *counts.entry(v).or_insert(0) += 1;
        }
        counts
            .into_iter()
            .max_by_key(|&(v, c)| (c, v))
            .map_or(1, |(v, _)| v.max(1))
    };
    let height_ref = height;
    let at = move |h: usize| graph.ids().filter(move |s| height_ref[s.idx()] == h);
    let radix: Vec<usize> = (0..top)
        .map(|h| most_common(&mut at(h).map(|s| up[s.idx()].len())))
        .collect();
    let parents: Vec<usize> = (0..top)
        .map(|h| {
            most_common(&mut at(h).map(|s| {
                graph
                    .neighbours(s)
                    .iter()
                    .filter(|t| height_ref[t.idx()] == h + 1)
                    .count()
            }))
        })
        .collect();
    (radix, parents)
}

/// Why heights counted from the leaves do not make a tree: the first
/// cable that does not join adjacent heights.
fn not_adjacent(fabric: &Fabric, height: &[usize], at: Option<(SwitchId, SwitchId)>) -> NotATree {
    let name = |s: SwitchId| fabric.describe_switch(s);
    let Some((a, b)) = at else {
        return NotATree::NoHeights;
    };
    let (ha, hb) = (height[a.idx()], height[b.idx()]);
    let (a, b) = (name(a), name(b));
    if ha == 0 && hb == 0 {
        NotATree::LeavesCabled { a, b }
    } else if ha == hb {
        NotATree::SameHeight { a, b, height: ha }
    } else {
        NotATree::Skips { a, ha, b, hb }
    }
}

/// Switches that are not leaves but are cabled like one: two heights up,
/// every cable going down, and at least half of their neighbours shared
/// with a single leaf (a spine of a three-level tree shares at most a
/// bundle's worth with any leaf).
fn leaf_like(graph: &crate::fabric::SwitchGraph, height: &[usize], leaf: &[bool]) -> Vec<SwitchId> {
    let mut out = Vec::new();
    let mut shared: HashMap<SwitchId, usize> = HashMap::new();
    for s in graph.ids() {
        let h = height[s.idx()];
        let near = graph.neighbours(s);
        if leaf[s.idx()] || h != 2 || near.is_empty() || near.iter().any(|t| height[t.idx()] != 1) {
            continue;
        }
        shared.clear();
        for &t in near {
            for &l in graph.neighbours(t).iter().filter(|l| leaf[l.idx()]) {
                *shared.entry(l).or_insert(0) += 1;
            }
        }
        if shared.values().any(|&k| 2 * k >= near.len()) {
            out.push(s);
        }
    }
    out
}

/// Leaves without hosts under line chips without hosts: counted from the
/// leaves, such a subtree hangs above the top (a line chip of a director
/// at height 3 below the spines, its empty leaf at 4). The top is half the
/// distance between two leaves in different subtrees, the least such
/// eccentricity of a few leaves (damage only lengthens it); a switch at
/// height h above the top belongs at 2·top − h, and those that land at 0
/// are leaves.
fn folded_leaves(
    graph: &crate::fabric::SwitchGraph,
    height: &[usize],
    leaf: &[bool],
) -> Vec<SwitchId> {
    let leaves: Vec<SwitchId> = graph.ids().filter(|s| leaf[s.idx()]).collect();
    if leaves.len() < 2 {
        return Vec::new();
    }
    let samples = 8.min(leaves.len());
    let mut dist = vec![usize::MAX; graph.switch_count()];
    let mut queue = VecDeque::new();
    let mut diameter = usize::MAX;
    for k in 0..samples {
        let from = leaves[k * leaves.len() / samples];
        dist.fill(usize::MAX);
        dist[from.idx()] = 0;
        queue.push_back(from);
        while let Some(s) = queue.pop_front() {
            for &t in graph.neighbours(s) {
                if dist[t.idx()] == usize::MAX {
                    dist[t.idx()] = dist[s.idx()] + 1;
                    queue.push_back(t);
                }
            }
        }
        let far = leaves
            .iter()
            .map(|l| dist[l.idx()])
            .filter(|&d| d != usize::MAX)
            .max()
            .unwrap_or(0);
        diameter = diameter.min(far);
    }
    let top = diameter.div_ceil(2);
    graph
        .ids()
        .filter(|s| height[s.idx()] > top && height[s.idx()] == 2 * top)
        .collect()
}

/// A cable that does not join adjacent heights, if any.
fn misfit(graph: &crate::fabric::SwitchGraph, height: &[usize]) -> Option<(SwitchId, SwitchId)> {
    graph.ids().find_map(|s| {
        graph
            .cables(s)
            .iter()
            .find(|c| height[s.idx()].abs_diff(height[c.to.idx()]) != 1)
            .map(|c| (s, c.to))
    })
}

/// Heights: hops from the nearest leaf. Every switch must be reached.
fn heights_from(fabric: &Fabric, leaf: &[bool]) -> Result<Vec<usize>, NotATree> {
    let graph = fabric.graph();
    let mut height = vec![usize::MAX; graph.switch_count()];
    let mut queue = VecDeque::new();
    for s in graph.ids().filter(|s| leaf[s.idx()]) {
        height[s.idx()] = 0;
        queue.push_back(s);
    }
    while let Some(s) = queue.pop_front() {
        for &t in graph.neighbours(s) {
            if height[t.idx()] == usize::MAX {
                height[t.idx()] = height[s.idx()] + 1;
                queue.push_back(t);
            }
        }
    }
    match graph.ids().find(|s| height[s.idx()] == usize::MAX) {
        Some(s) => Err(NotATree::Unconnected {
            switch: fabric.describe_switch(s),
        }),
        None => Ok(height),
    }
}

/// Cables sorted by (rank within their bundle, far switch): one cable to
/// every neighbour before a second to any.
fn spreading_order<'a>(cables: impl Iterator<Item = &'a Cable>) -> Vec<Cable> {
    let mut ranked: Vec<(usize, Cable)> = Vec::new();
    let mut seen: HashMap<SwitchId, usize> = HashMap::new();
    for c in cables {
        let r = seen.entry(c.to).or_insert(0);
        ranked.push((*r, *c));
        *r += 1;
    }
    ranked.sort_by_key(|(r, c)| (*r, c.to, c.port));
    ranked.into_iter().map(|(_, c)| c).collect()
}

/// Hosts in d-mod-k order: leaves in the order a depth-first walk down
/// from the top switches (by GUID) first meets them, so each subtree's
/// leaves are consecutive; a leaf's hosts by port GUID; then the hosts of
/// higher switches, so they do not shift the leaves' digits.
fn host_order(
    fabric: &Fabric,
    height: &[usize],
    down: &[Vec<Cable>],
    top_down: &[SwitchId],
) -> HashMap<PortRef, usize> {
    let graph = fabric.graph();
    let mut seen = vec![false; graph.switch_count()];
    let mut leaves = Vec::new();
    for &start in top_down {
        if seen[start.idx()] {
            continue;
        }
        let mut stack = vec![start];
        while let Some(s) = stack.pop() {
            if std::mem::replace(&mut seen[s.idx()], true) {
                continue;
            }
            if height[s.idx()] == 0 {
                leaves.push(s);
            }
            let mut children: Vec<SwitchId> = down[s.idx()].iter().map(|c| c.to).collect();
            children.sort();
            children.dedup();
            stack.extend(children.into_iter().rev());
        }
    }
    let above: Vec<SwitchId> = top_down
        .iter()
        .rev()
        .copied()
        .filter(|s| height[s.idx()] > 0)
        .collect();
    let mut index = HashMap::new();
    for s in leaves.into_iter().chain(above) {
        let mut on: Vec<(u64, PortRef)> = graph
            .peers(s)
            .iter()
            .filter_map(|p| match p {
                Some(Peer::Ca(ca)) => Some(*ca),
                _ => None,
            })
            .map(|ca| (fabric.port(ca).map_or(0, |p| p.guid), ca))
            .collect();
        on.sort();
        for (_, ca) in on {
            let next = index.len();
            index.entry(ca).or_insert(next);
        }
    }
    index
}

#[cfg(test)]
mod tests;

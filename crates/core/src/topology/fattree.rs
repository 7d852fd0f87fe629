//! Recognising an m-port n-tree (Lin, Chung & Huang; mlid-fat-tree-routing.txt
//! §3) in the bare graph and recovering its labels: switch levels, switch
//! labels ⟨w, l⟩ and processing-node labels P(p), such that every cable
//! obeys the paper's connection rule. Nothing here reads names or port
//! numbers; GUIDs only order the choices the tree's symmetry leaves open.
//!
//! A switch's label splits into a *prefix* (its first l digits: which
//! hosts lie below it) and a *replica* part (the other n − 1 − l digits:
//! which of the equivalent switches above those hosts it is). Below a
//! switch lie exactly the leaves whose prefix extends its prefix; above it
//! exactly the roots whose label starts with its replica part. So the
//! prefixes come from the sets of leaves reachable downwards, the replica
//! parts from the sets of roots reachable upwards, both nested level by
//! level.

use std::collections::{HashMap, HashSet};

use crate::fabric::{describe, Bfs, Fabric, NodeId, Peer, SwitchId};

#[derive(Clone, Debug)]
pub struct FatTree {
    /// Ports per switch (m) and half of it (k = m/2).
    pub m: usize,
    pub k: usize,
    /// Levels (n); level 0 holds the roots, level n − 1 the leaves.
    pub n: usize,
    /// Per switch index: its level, prefix digits and replica digits.
    pub level: Vec<usize>,
    pub prefix: Vec<Vec<usize>>,
    pub replica: Vec<Vec<usize>>,
    /// Per switch index: (port, child switch) for each down digit, and
    /// (port, parent switch) for each up digit (the parent's last replica
    /// digit).
    pub down: Vec<Vec<(u8, usize)>>,
    pub up: Vec<Vec<(u8, usize)>>,
    /// Processing-node label P(p) per CA node: n digits.
    pub host_label: HashMap<NodeId, Vec<usize>>,
}

impl FatTree {
    /// PID(P(p)) = Σ p_i·k^(n−1−i): the host's rank among all hosts.
    pub fn pid(&self, label: &[usize]) -> usize {
        label.iter().fold(0, |acc, &d| acc * self.k + d)
    }

    /// Paths between two hosts in different halves of the tree: (m/2)^(n−1).
    pub fn paths(&self) -> usize {
        self.k.pow(self.n as u32 - 1)
    }

    /// The path-selection offset (§4.2): the rank of `src` within its part
    /// of the smallest group holding both hosts.
    pub fn offset(&self, src: &[usize], dst: &[usize]) -> usize {
        let alpha = src.iter().zip(dst).take_while(|(a, b)| a == b).count();
        src.iter()
            .skip(alpha + 1)
            .fold(0, |acc, &d| acc * self.k + d)
    }
}

/// What is not an m-port n-tree, in words for the decline.
pub type NotAFatTree = String;

/// Sets of leaf or root indices as bitsets.
type Set = Vec<u64>;

fn singleton(i: usize, len: usize) -> Set {
    let mut s = vec![0u64; len.div_ceil(64)];
    s[i / 64] |= 1 << (i % 64);
    s
}

fn union_into(a: &mut Set, b: &Set) {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
}

fn is_subset(a: &Set, b: &Set) -> bool {
    a.iter().zip(b).all(|(x, y)| x & !y == 0)
}

pub fn recognize(fabric: &Fabric) -> Result<FatTree, NotAFatTree> {
    let graph = fabric.graph();
    let switches = graph.switch_count();
    let name = |s: usize| fabric.describe_switch(SwitchId::new(s));
    let guid = |s: usize| fabric.switch_node(SwitchId::new(s)).guid;
    if switches < 2 {
        return Err("it has fewer than two switches; there is nothing to spread".into());
    }
    let mut links: Vec<Vec<(u8, usize)>> = vec![Vec::new(); switches];
    let mut hosts: Vec<Vec<(u8, NodeId)>> = vec![Vec::new(); switches];
    for id in graph.ids() {
        let s = id.idx();
        for (p, peer) in graph.peers(id).iter().enumerate().skip(1) {
            match peer {
                Some(Peer::Switch { switch, .. }) => links[s].push((p as u8, switch.idx())),
                Some(Peer::Ca(ca)) => hosts[s].push((p as u8, ca.node)),
                None => {}
            }
        }
        let mut seen = HashSet::new();
        if let Some(&(_, t)) = links[s].iter().find(|(_, t)| !seen.insert(*t)) {
            return Err(format!(
                "{} and {} are joined by more than one cable",
                name(s),
                name(t)
            ));
        }
    }
    // Levels: leaves (switches with hosts) at the bottom, n − 1.
    let leaves_first: Vec<SwitchId> = graph
        .ids()
        .filter(|&s| !hosts[s.idx()].is_empty())
        .collect();
    if leaves_first.is_empty() {
        return Err("no switch has hosts".into());
    }
    let mut bfs = Bfs::new(switches);
    bfs.run_from(graph, &leaves_first);
    let dist: Vec<usize> = graph.ids().map(|s| bfs.dist(s) as usize).collect();
    let queue: Vec<usize> = bfs.order().iter().map(|s| s.idx()).collect();
    if let Some(s) = graph.ids().find(|&s| !bfs.reached(s)).map(SwitchId::idx) {
        return Err(format!(
            "{} is not connected to the switches with hosts",
            name(s)
        ));
    }
    let n = dist.iter().max().copied().unwrap_or(0) + 1;
    let level: Vec<usize> = dist.iter().map(|d| n - 1 - d).collect();
    let mut up: Vec<Vec<(u8, usize)>> = vec![Vec::new(); switches];
    let mut down: Vec<Vec<(u8, usize)>> = vec![Vec::new(); switches];
    for s in 0..switches {
        for &(p, t) in &links[s] {
            match level[t] as isize - level[s] as isize {
                -1 => up[s].push((p, t)),
                1 => down[s].push((p, t)),
                _ => {
                    return Err(format!(
                        "{} (level {}) is cabled to {} (level {}): fat-tree cables join adjacent levels",
                        name(s),
                        level[s],
                        name(t),
                        level[t]
                    ))
                }
            }
        }
    }
    // k: the uplink count most leaves have (a missing cable shows as a
    // leaf short of it, below).
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for &s in queue.iter().filter(|&&s| dist[s] == 0) {
        *counts.entry(up[s].len()).or_insert(0) += 1;
    }
    let k = counts
        .iter()
        .max_by_key(|&(up, n)| (*n, *up))
        .map_or(0, |(up, _)| *up);
    if k == 0 {
        return Err("the switches with hosts have no uplinks".into());
    }
    let m = 2 * k;
    let shape = format!("a {m}-port {n}-tree");
    // Degrees and counts the tree needs.
    let per_level = |l: usize| {
        if l == 0 {
            k.pow(n as u32 - 1)
        } else {
            2 * k.pow(n as u32 - 1)
        }
    };
    for l in 0..n {
        let have = level.iter().filter(|&&x| x == l).count();
        if have != per_level(l) {
            return Err(format!(
                "level {l} has {have} switches; {shape} needs {}",
                per_level(l)
            ));
        }
    }
    for s in 0..switches {
        let (want_up, want_down) = match level[s] {
            0 => (0, m),
            l if l == n - 1 => (k, 0),
            _ => (k, k),
        };
        if up[s].len() != want_up || down[s].len() != want_down {
            return Err(format!(
                "{} (level {}) has {} uplinks and {} downlinks; {shape} needs {want_up} and {want_down}",
                name(s),
                level[s],
                up[s].len(),
                down[s].len()
            ));
        }
        if hosts[s].len() > k {
            return Err(format!(
                "{} has {} hosts; {shape} has at most {k} per leaf",
                name(s),
                hosts[s].len()
            ));
        }
    }
    let by_level = |l: usize| -> Vec<usize> {
        let mut v: Vec<usize> = (0..switches).filter(|&s| level[s] == l).collect();
        v.sort_by_key(|&s| guid(s));
        v
    };
    let leaves = by_level(n - 1);
    let roots = by_level(0);
    // Leaves reachable downwards, roots reachable upwards.
    let mut below: Vec<Set> = vec![Vec::new(); switches];
    for (i, &s) in leaves.iter().enumerate() {
        below[s] = singleton(i, leaves.len());
    }
    for l in (0..n - 1).rev() {
        for s in by_level(l) {
            let mut set = vec![0u64; leaves.len().div_ceil(64)];
            for &(_, c) in &down[s] {
                union_into(&mut set, &below[c]);
            }
            below[s] = set;
        }
    }
    let mut above: Vec<Set> = vec![Vec::new(); switches];
    for (i, &s) in roots.iter().enumerate() {
        above[s] = singleton(i, roots.len());
    }
    for l in 1..n {
        for s in by_level(l) {
            let mut set = vec![0u64; roots.len().div_ceil(64)];
            for &(_, p) in &up[s] {
                union_into(&mut set, &above[p]);
            }
            above[s] = set;
        }
    }
    let prefix = nested_digits(&below, n, &by_level, Direction::Down, k, m)
        .map_err(|e| format!("{e} ({shape})"))?;
    let replica = nested_digits(&above, n, &by_level, Direction::Up, k, m)
        .map_err(|e| format!("{e} ({shape})"))?;
    // The connection rule, cable by cable, and the digits the ports carry.
    let mut labels = HashSet::new();
    for s in 0..switches {
        if !labels.insert((level[s], prefix[s].clone(), replica[s].clone())) {
            return Err(format!(
                "{} has the same position in the tree as another switch",
                name(s)
            ));
        }
    }
    for s in 0..switches {
        let l = level[s];
        let mut down_digits: Vec<(u8, usize)> = Vec::new();
        for &(p, c) in &down[s] {
            let fits = prefix[c][..l] == prefix[s][..]
                && replica[s][..replica[s].len() - 1] == replica[c][..];
            if !fits {
                return Err(format!(
                    "the cable from {} down to {} breaks the m-port n-tree wiring",
                    name(s),
                    name(c)
                ));
            }
            down_digits.push((p, c));
        }
        down_digits.sort_by_key(|&(_, c)| prefix[c][l]);
        if down_digits
            .iter()
            .enumerate()
            .any(|(i, &(_, c))| prefix[c][l] != i)
        {
            return Err(format!(
                "the switches below {} do not cover every branch once",
                name(s)
            ));
        }
        down[s] = down_digits;
        up[s].sort_by_key(|&(_, p)| *replica[p].last().expect("parents have replica digits"));
        if up[s]
            .iter()
            .enumerate()
            .any(|(i, &(_, p))| replica[p].last() != Some(&i))
        {
            return Err(format!(
                "the switches above {} do not cover every branch once",
                name(s)
            ));
        }
    }
    // Hosts: the leaf's prefix and their rank on it (by node GUID).
    let mut host_label = HashMap::new();
    for &leaf in &leaves {
        let mut on_leaf = hosts[leaf].clone();
        on_leaf.sort_by_key(|&(_, ca)| fabric.node(ca).guid);
        for (i, &(_, ca)) in on_leaf.iter().enumerate() {
            let mut label = prefix[leaf].clone();
            label.push(i);
            if host_label.insert(ca, label).is_some() {
                return Err(format!(
                    "{} is cabled to more than one leaf",
                    describe(fabric.node(ca))
                ));
            }
        }
    }
    Ok(FatTree {
        m,
        k,
        n,
        level,
        prefix,
        replica,
        down,
        up,
        host_label,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    /// Prefixes: from sets of leaves below; digits added going down.
    Down,
    /// Replica parts: from sets of roots above; digits added going up.
    Up,
}

/// Digits from nested reachability sets: switches with equal sets form a
/// class; a class's digits are its enclosing class's digits plus its rank
/// among the classes that class encloses (ordered by lowest set member,
/// i.e. by GUID). Down: classes nest from level 1 (enclosed by the root
/// class) towards the leaves. Up: from level n − 2 (enclosed by the leaf
/// class) towards the roots.
fn nested_digits(
    sets: &[Set],
    n: usize,
    by_level: &dyn Fn(usize) -> Vec<usize>,
    dir: Direction,
    k: usize,
    m: usize,
) -> Result<Vec<Vec<usize>>, String> {
    let mut digits = vec![Vec::new(); sets.len()];
    // The first level of each order has no digits (the whole tree).
    let levels: Vec<usize> = match dir {
        Direction::Down => (1..n).collect(),
        Direction::Up => (0..n - 1).rev().collect(),
    };
    let mut enclosing: Vec<usize> = match dir {
        Direction::Down => by_level(0),
        Direction::Up => by_level(n - 1),
    };
    for l in levels {
        let members = by_level(l);
        // Classes at this level, each with its members.
        let mut classes: Vec<(Set, Vec<usize>)> = Vec::new();
        for &s in &members {
            match classes.iter_mut().find(|(set, _)| *set == sets[s]) {
                Some((_, v)) => v.push(s),
                None => classes.push((sets[s].clone(), vec![s])),
            }
        }
        // Group the classes by the enclosing class they sit in.
        let mut by_parent: HashMap<Vec<usize>, Vec<(Set, Vec<usize>)>> = HashMap::new();
        for (set, v) in classes {
            let parent = enclosing
                .iter()
                .copied()
                .find(|&e| is_subset(&set, &sets[e]));
            let Some(parent) = parent else {
                return Err(format!(
                    "the switches at level {l} do not nest in the level above"
                ));
            };
            by_parent
                .entry(digits[parent].clone())
                .or_default()
                .push((set, v));
        }
        let radix = if dir == Direction::Down && l == 1 {
            m
        } else {
            k
        };
        for (parent_digits, mut children) in by_parent {
            if children.len() != radix {
                return Err(format!(
                    "a group at level {l} splits into {} parts instead of {radix}",
                    children.len()
                ));
            }
            children.sort_by_key(|(set, _)| {
                set.iter()
                    .position(|&w| w != 0)
                    .map(|i| (i, set[i].trailing_zeros()))
            });
            for (rank, (_, v)) in children.iter().enumerate() {
                for &s in v {
                    let mut d = parent_digits.clone();
                    d.push(rank);
                    digits[s] = d;
                }
            }
        }
        enclosing = members;
    }
    Ok(digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{self, direct::tests::fabric, fattree::fattree};

    #[test]
    fn labels_follow_the_wiring_whatever_the_port_numbers() {
        for (m, n) in [(4, 3), (8, 3), (4, 4), (8, 2), (4, 2)] {
            let b = gen::shuffle_ports(&fattree(m, n).unwrap(), 3);
            let f = fabric(b);
            let t = recognize(&f).unwrap_or_else(|e| panic!("FT({m},{n}): {e}"));
            assert_eq!((t.m, t.n), (m, n));
            assert_eq!(t.host_label.len(), 2 * (m / 2usize).pow(n as u32));
            // Labels equal the generator's names (its GUIDs follow label
            // order, and equal sets are ranked by GUID).
            for (s, &node) in f.switches().iter().enumerate() {
                let desc = &f.node(node).desc;
                let label: String = t.prefix[s]
                    .iter()
                    .chain(&t.replica[s])
                    .map(|d| d.to_string())
                    .collect();
                assert_eq!(desc, &format!("ft-l{}-{label}", t.level[s]), "FT({m},{n})");
            }
        }
    }

    #[test]
    fn other_fabrics_are_declined_with_the_reason() {
        let ring = {
            let mut g = gen::direct::CablePlan::default();
            let s: Vec<usize> = (0..4).map(|i| g.add_switch(format!("s{i}"))).collect();
            for i in 0..4 {
                g.cable(s[i], s[(i + 1) % 4], 1);
            }
            fabric(g.build(1).unwrap())
        };
        assert!(recognize(&ring).unwrap_err().contains("adjacent levels"));
        let mut b = fattree(4, 3).unwrap();
        let (b2, _) = gen::degrade::drop_switches(&b, 0.05, 1).unwrap();
        let e = recognize(&fabric(b2)).unwrap_err();
        assert!(e.contains("needs"), "{e}");
        gen::degrade::drop_links(&mut b, 0.05, 2).unwrap();
        let e = recognize(&fabric(b)).unwrap_err();
        assert!(e.contains("4-port 3-tree needs"), "{e}");
    }

    #[test]
    fn offsets_are_ranks_within_the_source_group() {
        let t = recognize(&fabric(fattree(4, 3).unwrap())).unwrap();
        // The paper's Fig. 11: P(000), P(001), P(010), P(011) → P(300).
        for (src, want) in [
            ([0, 0, 0], 0),
            ([0, 0, 1], 1),
            ([0, 1, 0], 2),
            ([0, 1, 1], 3),
        ] {
            assert_eq!(t.offset(&src, &[3, 0, 0]), want);
        }
        assert_eq!(t.offset(&[2, 0, 0], &[2, 1, 1]), 0);
        assert_eq!(t.offset(&[2, 0, 1], &[2, 1, 1]), 1);
        assert_eq!(t.pid(&[2, 1, 1]), 11);
    }
}

//! Dragonfly+ (Shpiner et al., HiPINEB 2017) in the bare switch graph:
//! every group a two-level fat tree of leaves (hosts on them) and spines,
//! every leaf cabled to every spine of its group, global cables between
//! spines of different groups. Nothing here looks at GUIDs, names or port
//! numbers.
//!
//! **Leaves and spines.** Hosts sit on leaves, so a switch with more CAs
//! than a spine can have is a leaf: one or more when some switch has none
//! (spines carry no CA), two or more when every switch has one (an
//! Aggregation Node on every switch, as with NVIDIA SHARP: a spine's only
//! CA is its Aggregation Node). The switches cabled to those leaves are
//! spines. What is left must be a leaf that lost its hosts: cabled only to
//! spines. Then the cabling has to agree (where taking every switch with a CA for a leaf
//! fails, e.g. Aggregation Nodes on some spines, those with two or more): no cable between two leaves,
//! groups (the pieces leaf–spine cables hold together) with no cable
//! between two spines of one group, at least two groups, and each group
//! with more than half of its leaf–spine cables (a damaged group, not a
//! sparse one). Missing cables, switches and hosts, parallel global cables,
//! groups of different sizes and hostless leaves are all tolerated.

use crate::fabric::{SwitchGraph, SwitchId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DragonflyPlus {
    /// Group of each switch.
    pub group_of: Vec<usize>,
    /// Whether each switch is a leaf (else a spine).
    pub is_leaf: Vec<bool>,
    /// Leaves of each group, ascending.
    pub leaves: Vec<Vec<SwitchId>>,
    /// Spines of each group, ascending.
    pub spines: Vec<Vec<SwitchId>>,
}

impl DragonflyPlus {
    pub fn groups(&self) -> usize {
        self.leaves.len()
    }

    /// Whether a cable from `a` to `b` is global (spine to spine).
    pub fn is_global(&self, a: SwitchId, b: SwitchId) -> bool {
        self.group_of[a.idx()] != self.group_of[b.idx()]
    }
}

/// Why a switch graph is not a Dragonfly+; the caller names the switches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotAPlus {
    /// No switch carries more CAs than a spine may (one Aggregation Node).
    NoLeaves,
    /// Two switches that hold hosts (leaves) are cabled to each other.
    LeafToLeaf { a: SwitchId, b: SwitchId },
    /// A switch without hosts and not cabled to a leaf, with a neighbour
    /// that is not a spine: neither a leaf nor a spine.
    Unclassified {
        switch: SwitchId,
        neighbour: SwitchId,
    },
    /// Switches without hosts cabled only to spines, too many to be leaves
    /// that lost their hosts: a third tier (a fat tree).
    ThirdTier {
        hostless: usize,
        leaves: usize,
        example: SwitchId,
    },
    /// Two spines of one group are cabled to each other.
    SpineToSpineInGroup { a: SwitchId, b: SwitchId },
    /// A spine with no leaf cable left: no group to put it in.
    SpineWithoutLeaves { spine: SwitchId },
    /// All leaves and spines form a single group: a two-level fat tree.
    OneGroup { switches: usize },
    /// A group with at most half of a full group's leaf–spine cables.
    SparseGroup {
        leaf: SwitchId,
        cables: usize,
        full: usize,
    },
}

/// The leaves, spines and groups of a Dragonfly+, or why it is not one.
/// Leaves are first the switches with a CA; where that makes leaves of
/// spines (Aggregation Nodes), the switches with two or more.
pub fn recognise(graph: &SwitchGraph) -> Result<DragonflyPlus, NotAPlus> {
    let every_switch_has_a_ca = graph.ids().all(|s| graph.hosts(s) >= 1);
    if every_switch_has_a_ca {
        return recognise_with(graph, 2);
    }
    recognise_with(graph, 1).or_else(|first| recognise_with(graph, 2).map_err(|_| first))
}

/// `recognise`, taking switches with at least `floor` CAs for leaves.
fn recognise_with(graph: &SwitchGraph, floor: u32) -> Result<DragonflyPlus, NotAPlus> {
    let n = graph.switch_count();
    let with_hosts: Vec<bool> = graph.ids().map(|s| graph.hosts(s) >= floor).collect();
    if !with_hosts.iter().any(|&l| l) {
        return Err(NotAPlus::NoLeaves);
    }
    let mut is_leaf = with_hosts.clone();
    let mut is_spine = vec![false; n];
    for s in graph.ids().filter(|s| with_hosts[s.idx()]) {
        for &t in graph.neighbours(s) {
            if with_hosts[t.idx()] {
                return Err(NotAPlus::LeafToLeaf { a: s, b: t });
            }
            is_spine[t.idx()] = true;
        }
    }
    // The rest: leaves that lost their hosts, cabled only to spines.
    let mut hostless = Vec::new();
    for s in graph
        .ids()
        .filter(|s| !with_hosts[s.idx()] && !is_spine[s.idx()])
    {
        if let Some(&t) = graph.neighbours(s).iter().find(|t| !is_spine[t.idx()]) {
            return Err(NotAPlus::Unclassified {
                switch: s,
                neighbour: t,
            });
        }
        is_leaf[s.idx()] = true;
        hostless.push(s);
    }
    let hosted = with_hosts.iter().filter(|&&l| l).count();
    if hostless.len() * 4 > hosted {
        return Err(NotAPlus::ThirdTier {
            hostless: hostless.len(),
            leaves: hosted,
            example: hostless[0],
        });
    }
    let group_of = leaf_spine_pieces(graph, &is_leaf);
    for s in graph.ids().filter(|s| !is_leaf[s.idx()]) {
        if let Some(&t) = graph
            .neighbours(s)
            .iter()
            .find(|t| !is_leaf[t.idx()] && group_of[t.idx()] == group_of[s.idx()])
        {
            return Err(NotAPlus::SpineToSpineInGroup { a: s, b: t });
        }
        if !graph.neighbours(s).iter().any(|t| is_leaf[t.idx()]) {
            return Err(NotAPlus::SpineWithoutLeaves { spine: s });
        }
    }
    let groups = group_of.iter().max().map_or(0, |g| g + 1);
    if groups < 2 {
        return Err(NotAPlus::OneGroup { switches: n });
    }
    let mut leaves = vec![Vec::new(); groups];
    let mut spines = vec![Vec::new(); groups];
    for s in graph.ids() {
        if is_leaf[s.idx()] {
            leaves[group_of[s.idx()]].push(s);
        } else {
            spines[group_of[s.idx()]].push(s);
        }
    }
    for g in 0..groups {
        let cables: usize = leaves[g].iter().map(|&l| graph.neighbours(l).len()).sum();
        let full = leaves[g].len() * spines[g].len();
        if cables * 2 <= full {
            return Err(NotAPlus::SparseGroup {
                leaf: leaves[g][0],
                cables,
                full,
            });
        }
    }
    Ok(DragonflyPlus {
        group_of,
        is_leaf,
        leaves,
        spines,
    })
}

/// Numbers the pieces that leaf–spine cables hold together (the groups),
/// in order of their lowest switch.
fn leaf_spine_pieces(graph: &SwitchGraph, is_leaf: &[bool]) -> Vec<usize> {
    let mut group_of = vec![usize::MAX; graph.switch_count()];
    let mut next = 0;
    for start in graph.ids() {
        if group_of[start.idx()] != usize::MAX {
            continue;
        }
        group_of[start.idx()] = next;
        let mut stack = vec![start];
        while let Some(x) = stack.pop() {
            for &y in graph.neighbours(x) {
                let local = is_leaf[x.idx()] != is_leaf[y.idx()];
                if local && group_of[y.idx()] == usize::MAX {
                    group_of[y.idx()] = next;
                    stack.push(y);
                }
            }
        }
        next += 1;
    }
    group_of
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::Fabric;
    use crate::gen::degrade;
    use crate::gen::dragonfly_plus::{dragonfly_plus, role_of, Params};
    use crate::gen::{self, dragonfly, fattree};

    fn build(mut b: crate::FabricBuilder) -> Fabric {
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    /// The recogniser's groups and roles against the generator's names.
    fn agrees_with_names(f: &Fabric, plus: &DragonflyPlus) {
        let mut seen = std::collections::HashMap::new();
        for s in f.switch_ids() {
            let (g, leaf) = role_of(f.switch_node(s)).unwrap();
            assert_eq!(plus.is_leaf[s.idx()], leaf, "{}", f.switch_node(s).desc);
            let found = *seen.entry(g).or_insert(plus.group_of[s.idx()]);
            assert_eq!(found, plus.group_of[s.idx()], "{}", f.switch_node(s).desc);
        }
        assert_eq!(seen.len(), plus.groups());
    }

    #[test]
    fn recognises_generated_shapes_with_and_without_aggregation_nodes() {
        for an in [false, true] {
            for (l, s, h, gp, g, extra) in [
                (4, 4, 4, 2, 9, 0),
                (20, 18, 18, 8, 4, 0),
                (3, 4, 1, 3, 5, 2),
            ] {
                let b = dragonfly_plus(&Params {
                    aggregation_nodes: an,
                    extra_spine_groups: extra,
                    ..Params::new(l, s, h, gp, g)
                })
                .unwrap();
                let f = build(gen::shuffle_ports(&b, 3));
                let plus = recognise(f.graph()).unwrap();
                agrees_with_names(&f, &plus);
            }
        }
    }

    #[test]
    fn tolerates_damage_hostless_leaves_and_lost_switches() {
        for seed in 1..6 {
            let b = dragonfly_plus(&Params {
                aggregation_nodes: seed % 2 == 0,
                ..Params::new(4, 4, 4, 2, 9)
            })
            .unwrap();
            let (b, _) = degrade::drop_switches(&b, 0.05, seed).unwrap();
            let (mut b, _) = degrade::drop_hosts(&b, 0.3, seed).unwrap();
            for (fraction, global) in [(0.1, true), (0.05, false)] {
                degrade::drop_links_where(&mut b, fraction, seed, |x, y| {
                    gen::dragonfly_plus::is_global(x, y) == Some(global)
                })
                .unwrap();
            }
            let f = build(b);
            let plus = recognise(f.graph()).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
            agrees_with_names(&f, &plus);
        }
    }

    #[test]
    fn declines_dragonflies_fat_trees_and_says_why() {
        let f = build(dragonfly::dragonfly(&dragonfly::Params::new(4, 2, 2)).unwrap());
        assert!(matches!(
            recognise(f.graph()),
            Err(NotAPlus::LeafToLeaf { .. })
        ));
        // A two-level fat tree is one group.
        let f = build(fattree::fattree(4, 2).unwrap());
        assert!(
            matches!(recognise(f.graph()), Err(NotAPlus::OneGroup { .. })),
            "{:?}",
            recognise(f.graph())
        );
        // A three-level one has a hostless top tier.
        let f = build(fattree::fattree(4, 3).unwrap());
        assert!(
            matches!(recognise(f.graph()), Err(NotAPlus::ThirdTier { .. })),
            "{:?}",
            recognise(f.graph())
        );
    }
}

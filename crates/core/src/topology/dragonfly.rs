//! Dragonfly groups: which switches form a group (a clique of local
//! cables, possibly damaged) in the bare switch graph.
//!
//! Two ways to find them. The DLA paper's stage 1 (after D3R): in a
//! Dragonfly whose groups are fully connected, two switches of one group
//! share the whole group in their closed neighbourhoods, while the two ends
//! of a global link share next to nothing; from each switch we grow the
//! largest clique that prefers the neighbours it shares most neighbours
//! with, and accept the result when every member of a group finds the same
//! group and all groups have one size. When switches or local cables are
//! missing that fails, and link equivalence (`topology::mapping`, the
//! direct-topologies paper §2.2) finds the groups instead. Nothing here
//! looks at GUIDs, names or port numbers.

use crate::fabric::{SwitchGraph, SwitchId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Groups {
    /// Group number of each switch.
    pub of_switch: Vec<usize>,
    /// Switches of each group, ascending.
    pub members: Vec<Vec<SwitchId>>,
}

/// Why a switch graph is not a Dragonfly with fully connected groups and
/// fully connected groups-of-groups. The caller names the switches.
#[derive(Clone, Debug, PartialEq)]
pub enum NotADragonfly {
    Empty,
    /// `switch` finds group `its_group`, but `member` (in it) finds `member_group`.
    Inconsistent {
        switch: SwitchId,
        its_group: Vec<SwitchId>,
        member: SwitchId,
        member_group: Vec<SwitchId>,
    },
    /// The groups are too small or too few for a Dragonfly: most have
    /// fewer than 3 switches (e.g. the edges of a fat tree's leaf–spine
    /// cabling), or there is only one.
    TooSmall {
        switch: SwitchId,
        size: usize,
        groups: usize,
    },
    /// A group's size differs from the most common size.
    GroupSize {
        switch: SwitchId,
        size: usize,
        expected: usize,
    },
    /// The groups hold too few of the local cables a Dragonfly's cliques
    /// would have: `share` of them, where a Dragonfly dla routes keeps at
    /// least `MIN_LOCAL_SHARE`. `sparsest` is a switch of the group that
    /// lacks the most.
    SparseGroups {
        sparsest: SwitchId,
        share: f64,
    },
}

/// The least share of their cliques' local cables that the groups of a
/// Dragonfly dla routes keep. Damaged Dragonflies within what dla is made
/// for (5 % of local cables gone, 5 % of switches, up to 40 % of switches
/// where link equivalence still finds the groups) keep 0.90 to 0.96;
/// random regular graphs, which link equivalence also cuts into dense
/// clusters, give 0.33 to 0.81 in most draws (16 to 32 switches of degree
/// 4 to 6, the cases that pass the other rules).
pub const MIN_LOCAL_SHARE: f64 = 0.85;

fn common_count(a: &[SwitchId], b: &[SwitchId]) -> usize {
    let (mut i, mut j, mut c) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                c += 1;
                i += 1;
                j += 1;
            }
        }
    }
    c
}

/// The clique grown from `s`, neighbours taken in order of shared
/// neighbourhood (most first, then by switch id for determinism).
fn closed_neighbourhood_clique(s: SwitchId, graph: &SwitchGraph) -> Vec<SwitchId> {
    let nbrs = |x: SwitchId| graph.neighbours(x);
    let mut candidates: Vec<(usize, SwitchId)> = nbrs(s)
        .iter()
        .map(|&u| (common_count(nbrs(s), nbrs(u)), u))
        .collect();
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut clique = vec![s];
    for (_, u) in candidates {
        if clique
            .iter()
            .all(|&m| m == s || nbrs(u).binary_search(&m).is_ok())
        {
            clique.push(u);
        }
    }
    clique.sort_unstable();
    clique
}

pub fn discover_groups(graph: &SwitchGraph) -> Result<Groups, NotADragonfly> {
    let n = graph.switch_count();
    if n == 0 {
        return Err(NotADragonfly::Empty);
    }
    let cliques: Vec<Vec<SwitchId>> = graph
        .ids()
        .map(|s| closed_neighbourhood_clique(s, graph))
        .collect();

    let mut of_switch = vec![usize::MAX; n];
    let mut members: Vec<Vec<SwitchId>> = Vec::new();
    for s in graph.ids() {
        if of_switch[s.idx()] != usize::MAX {
            continue;
        }
        let group = &cliques[s];
        for &m in group {
            if cliques[m] != *group {
                return Err(NotADragonfly::Inconsistent {
                    switch: s,
                    its_group: group.clone(),
                    member: m,
                    member_group: cliques[m].clone(),
                });
            }
            of_switch[m.idx()] = members.len();
        }
        members.push(group.clone());
    }

    // The most common size is what the fabric was meant to have.
    let mut sizes: Vec<usize> = members.iter().map(Vec::len).collect();
    sizes.sort_unstable();
    let expected = mode(&sizes);
    if let Some(bad) = members.iter().find(|g| g.len() != expected) {
        return Err(NotADragonfly::GroupSize {
            switch: bad[0],
            size: bad.len(),
            expected,
        });
    }
    Ok(Groups { of_switch, members })
}

/// Groups by link equivalence (`topology::mapping`), which tolerates
/// groups of different sizes (switches lost) and groups missing local
/// cables.
pub fn groups_by_mapping(graph: &SwitchGraph) -> Groups {
    let of_switch = super::mapping::map_dragonfly_groups(graph);
    let g = of_switch.iter().max().map_or(0, |m| m + 1);
    let mut members = vec![Vec::new(); g];
    for (s, &gi) in graph.ids().zip(&of_switch) {
        members[gi].push(s);
    }
    Groups { of_switch, members }
}

/// The groups of a Dragonfly, intact or damaged: the paper's closed
/// neighbourhoods where they are consistent, link equivalence otherwise.
pub fn find_groups(graph: &SwitchGraph) -> Result<Groups, NotADragonfly> {
    if graph.switch_count() == 0 {
        return Err(NotADragonfly::Empty);
    }
    Ok(discover_groups(graph).unwrap_or_else(|_| groups_by_mapping(graph)))
}

/// Whether groups have the size and cabling of a Dragonfly's: at least two
/// groups, most of them of at least 3 switches (a clique of 2 is just a
/// cable, and every fabric is full of those), holding at least
/// `MIN_LOCAL_SHARE` of their cliques' local cables.
pub fn check_shape(graph: &SwitchGraph, groups: &Groups) -> Result<(), NotADragonfly> {
    let mut sizes: Vec<usize> = groups.members.iter().map(Vec::len).collect();
    sizes.sort_unstable();
    if sizes.is_empty() {
        return Err(NotADragonfly::Empty);
    }
    let typical = mode(&sizes);
    if typical < 3 || sizes.len() < 2 {
        let example = groups
            .members
            .iter()
            .find(|m| m.len() == typical)
            .map_or(SwitchId::new(0), |m| m[0]);
        return Err(NotADragonfly::TooSmall {
            switch: example,
            size: typical,
            groups: sizes.len(),
        });
    }
    let share = local_share(graph, groups);
    if share < MIN_LOCAL_SHARE {
        let missing = |m: &Vec<SwitchId>| {
            let pairs = m.len() * m.len().saturating_sub(1) / 2;
            pairs - cabled_pairs(graph, m)
        };
        let sparsest = groups
            .members
            .iter()
            .max_by_key(|m| missing(m))
            .map_or(SwitchId::new(0), |m| m[0]);
        return Err(NotADragonfly::SparseGroups { sparsest, share });
    }
    Ok(())
}

/// The share of the local cables a Dragonfly with these groups would have
/// that are there: switch pairs inside a group that are cabled, over all
/// pairs inside groups (1 where no group has two switches).
pub fn local_share(graph: &SwitchGraph, groups: &Groups) -> f64 {
    let (mut cabled, mut pairs) = (0usize, 0usize);
    for members in &groups.members {
        pairs += members.len() * members.len().saturating_sub(1) / 2;
        cabled += cabled_pairs(graph, members);
    }
    if pairs == 0 {
        1.0
    } else {
        cabled as f64 / pairs as f64
    }
}

/// How many pairs of `members` are cabled to each other: the
/// local cables of a group, parallel cables counted once.
pub fn cabled_pairs(graph: &SwitchGraph, members: &[SwitchId]) -> usize {
    members
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            members[i + 1..]
                .iter()
                .filter(|&&b| graph.neighbours(a).binary_search(&b).is_ok())
                .count()
        })
        .sum()
}

fn mode(sorted: &[usize]) -> usize {
    let (mut best, mut best_run, mut run) = (sorted[0], 0, 0);
    for (i, &v) in sorted.iter().enumerate() {
        run = if i > 0 && sorted[i - 1] == v {
            run + 1
        } else {
            1
        };
        if run > best_run {
            best_run = run;
            best = v;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{Fabric, PortRef};
    use crate::gen::dragonfly::{dragonfly, Params};

    fn fabric(b: crate::FabricBuilder) -> Fabric {
        b.build().unwrap()
    }

    /// The generator's group of every switch, from its name ("df-g3-s1").
    fn true_groups(f: &Fabric) -> Vec<String> {
        f.switch_ids()
            .map(|s| f.switch_node(s).desc.split('-').nth(1).unwrap().to_string())
            .collect()
    }

    #[test]
    fn finds_groups_of_canonical_dragonflies() {
        for (a, h) in [(3, 1), (4, 2), (6, 3), (8, 4)] {
            let f = fabric(dragonfly(&Params::new(a, h, 1)).unwrap());
            let groups = discover_groups(f.graph()).unwrap();
            assert_eq!(groups.members.len(), a * h + 1, "a={a} h={h}");
            let truth = true_groups(&f);
            for m in &groups.members {
                assert_eq!(m.len(), a);
                assert!(
                    m.iter().all(|s| truth[s.idx()] == truth[m[0].idx()]),
                    "a={a} h={h}: {m:?}"
                );
            }
        }
    }

    /// The builder of a Dragonfly without the cables `cut` chooses, by the
    /// two switches' names.
    fn without(a: usize, h: usize, cut: impl Fn(&str, &str) -> bool) -> Fabric {
        let mut b = dragonfly(&Params::new(a, h, 1)).unwrap();
        let doomed: Vec<PortRef> = b
            .nodes()
            .iter()
            .enumerate()
            .flat_map(|(id, n)| {
                n.links()
                    .map(move |(p, r)| (PortRef::new(crate::fabric::NodeId::new(id), p), r))
            })
            .filter(|(x, r)| cut(&b.node(x.node).desc, &b.node(r.node).desc))
            .map(|(x, _)| x)
            .collect();
        for at in doomed {
            b.disconnect(at);
        }
        fabric(b)
    }

    #[test]
    fn missing_global_cables_leave_the_groups_alone() {
        // Every global cable of switch 0 of group 0.
        let f = without(4, 2, |x, y| {
            let group = |n: &str| n.split('-').nth(1).unwrap_or("").to_string();
            (x == "df-g0-s0" || y == "df-g0-s0")
                && group(x) != group(y)
                && !x.contains("-h")
                && !y.contains("-h")
        });
        let groups = discover_groups(f.graph()).unwrap();
        assert_eq!(groups.members.len(), 9);
        assert_eq!(find_groups(f.graph()).unwrap(), groups);
    }

    #[test]
    fn groups_of_two_or_a_single_group_are_no_dragonfly() {
        // A Dragonfly of four groups of 3, switches numbered group by group.
        let f = fabric(dragonfly(&Params::new(3, 1, 1)).unwrap());
        let check_shape = |groups: &Groups| check_shape(f.graph(), groups);
        let of = |members: Vec<Vec<usize>>| Groups {
            of_switch: Vec::new(),
            members: members
                .into_iter()
                .map(|m| m.into_iter().map(SwitchId::new).collect())
                .collect(),
        };
        assert!(matches!(
            check_shape(&of(vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7, 8]])),
            Err(NotADragonfly::TooSmall {
                size: 2,
                groups: 4,
                ..
            })
        ));
        assert!(matches!(
            check_shape(&of(vec![vec![0, 1, 2, 3]])),
            Err(NotADragonfly::TooSmall { groups: 1, .. })
        ));
        assert_eq!(
            check_shape(&of(vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7]])),
            Ok(())
        );
    }

    /// Link equivalence cuts a small random regular graph into dense
    /// clusters of 1 to 5 switches, which pass for groups by their sizes;
    /// their local cabling tells them from a Dragonfly's, and a Dragonfly
    /// with 5 % of its local cables and switches gone keeps enough.
    #[test]
    fn clusters_of_a_random_graph_are_no_dragonfly_a_damaged_one_is() {
        use crate::gen::{degrade, random_regular::random_regular};
        let f = fabric(random_regular(16, 4, 2, 1).unwrap());
        let groups = find_groups(f.graph()).unwrap();
        let sizes: Vec<usize> = groups.members.iter().map(Vec::len).collect();
        assert!(sizes.iter().filter(|&&n| n >= 3).count() >= 3, "{sizes:?}");
        assert!(
            matches!(
                check_shape(f.graph(), &groups),
                Err(NotADragonfly::SparseGroups { share, .. }) if share < MIN_LOCAL_SHARE
            ),
            "{sizes:?}: {:?}",
            check_shape(f.graph(), &groups)
        );
        for (a, h, seed) in [(4, 2, 1), (6, 3, 2), (8, 4, 3)] {
            let b = dragonfly(&Params::new(a, h, 1)).unwrap();
            let (mut b, _) = degrade::drop_switches(&b, 0.05, seed).unwrap();
            let group = |n: &crate::fabric::Node| n.desc.split('-').nth(1).map(str::to_string);
            degrade::drop_links_where(&mut b, 0.05, seed, |x, y| group(x) == group(y)).unwrap();
            let f = fabric(b);
            let groups = find_groups(f.graph()).unwrap();
            assert_eq!(check_shape(f.graph(), &groups), Ok(()), "a={a} h={h}");
        }
    }

    #[test]
    fn a_broken_group_is_found_by_link_equivalence() {
        // One local cable inside group 0: it is no longer a clique.
        let f = without(4, 2, |x, y| {
            (x, y) == ("df-g0-s0", "df-g0-s1") || (y, x) == ("df-g0-s0", "df-g0-s1")
        });
        assert!(discover_groups(f.graph()).is_err());
        let groups = find_groups(f.graph()).unwrap();
        let truth = true_groups(&f);
        assert_eq!(groups.members.len(), 9);
        for m in &groups.members {
            assert!(
                m.iter().all(|s| truth[s.idx()] == truth[m[0].idx()]),
                "{m:?}"
            );
        }
    }
}

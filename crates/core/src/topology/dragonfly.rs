//! Dragonfly group discovery by closed neighbourhoods (the DLA paper's
//! stage 1, after D3R).
//!
//! In a Dragonfly whose groups are fully connected, two switches of one group
//! share the whole group in their closed neighbourhoods, while the two ends
//! of a global link share next to nothing. So, from each switch, we grow the
//! largest clique that prefers the neighbours it shares most neighbours
//! with; that clique is the switch's group. The result is accepted only when
//! every member of a group finds the same group, all groups have one size and
//! every pair of groups is joined by at least one global link. Nothing here
//! looks at GUIDs, names or port numbers.

/// Switch-to-switch adjacency: per switch index, (port, neighbour, neighbour port).
pub type Adjacency = [Vec<(u8, usize, u8)>];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Groups {
    /// Group number of each switch index.
    pub of_switch: Vec<usize>,
    /// Switch indices of each group, ascending.
    pub members: Vec<Vec<usize>>,
}

/// Why a switch graph is not a Dragonfly with fully connected groups and
/// fully connected groups-of-groups. Switches are named by switch index;
/// the caller turns them into GUIDs and names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotADragonfly {
    Empty,
    /// `switch` finds group `its_group`, but `member` (in it) finds `member_group`.
    Inconsistent { switch: usize, its_group: Vec<usize>, member: usize, member_group: Vec<usize> },
    /// A group's size differs from the most common size.
    GroupSize { switch: usize, size: usize, expected: usize },
    /// The groups of switches `a` and `b` have no global link between them.
    NotFullyConnected { a: usize, b: usize },
    /// Switches `a` and `b` are in one group but not cabled to each other.
    LocalLinkMissing { a: usize, b: usize },
}

fn sorted_neighbours(adj: &Adjacency) -> Vec<Vec<usize>> {
    adj.iter()
        .enumerate()
        .map(|(s, links)| {
            let mut n: Vec<usize> = links.iter().map(|l| l.1).filter(|&t| t != s).collect();
            n.sort_unstable();
            n.dedup();
            n
        })
        .collect()
}

fn common_count(a: &[usize], b: &[usize]) -> usize {
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
/// neighbourhood (most first, then by index for determinism).
fn closed_neighbourhood_clique(s: usize, nbrs: &[Vec<usize>]) -> Vec<usize> {
    let mut candidates: Vec<(usize, usize)> =
        nbrs[s].iter().map(|&u| (common_count(&nbrs[s], &nbrs[u]), u)).collect();
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut clique = vec![s];
    for (_, u) in candidates {
        if clique.iter().all(|&m| m == s || nbrs[u].binary_search(&m).is_ok()) {
            clique.push(u);
        }
    }
    clique.sort_unstable();
    clique
}

pub fn discover_groups(adj: &Adjacency) -> Result<Groups, NotADragonfly> {
    let n = adj.len();
    if n == 0 {
        return Err(NotADragonfly::Empty);
    }
    let nbrs = sorted_neighbours(adj);
    let cliques: Vec<Vec<usize>> = (0..n).map(|s| closed_neighbourhood_clique(s, &nbrs)).collect();

    let mut of_switch = vec![usize::MAX; n];
    let mut members: Vec<Vec<usize>> = Vec::new();
    for s in 0..n {
        if of_switch[s] != usize::MAX {
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
            of_switch[m] = members.len();
        }
        members.push(group.clone());
    }

    // The most common size is what the fabric was meant to have.
    let mut sizes: Vec<usize> = members.iter().map(Vec::len).collect();
    sizes.sort_unstable();
    let expected = mode(&sizes);
    if let Some(bad) = members.iter().find(|g| g.len() != expected) {
        return Err(NotADragonfly::GroupSize { switch: bad[0], size: bad.len(), expected });
    }

    all_pairs_joined(adj, &of_switch, &members)?;
    Ok(Groups { of_switch, members })
}

/// Groups by link equivalence (`topology::mapping`), which tolerates
/// groups of different sizes (switches lost); accepted when every group is
/// fully connected inside and every pair of groups is joined.
pub fn groups_by_mapping(adj: &Adjacency) -> Result<Groups, NotADragonfly> {
    if adj.is_empty() {
        return Err(NotADragonfly::Empty);
    }
    let neighbours: Vec<Vec<usize>> = adj.iter().map(|l| l.iter().map(|&(_, t, _)| t).collect()).collect();
    let of_switch = super::mapping::map_dragonfly_groups(&neighbours);
    let g = of_switch.iter().max().map_or(0, |m| m + 1);
    let mut members = vec![Vec::new(); g];
    for (s, &gi) in of_switch.iter().enumerate() {
        members[gi].push(s);
    }
    let nbrs = sorted_neighbours(adj);
    for m in &members {
        for (i, &a) in m.iter().enumerate() {
            if let Some(&b) = m[i + 1..].iter().find(|b| nbrs[a].binary_search(b).is_err()) {
                return Err(NotADragonfly::LocalLinkMissing { a, b });
            }
        }
    }
    all_pairs_joined(adj, &of_switch, &members)?;
    Ok(Groups { of_switch, members })
}

/// Every pair of groups has a global link between them.
fn all_pairs_joined(adj: &Adjacency, of_switch: &[usize], members: &[Vec<usize>]) -> Result<(), NotADragonfly> {
    let g = members.len();
    let mut joined = vec![false; g * g];
    for (s, links) in adj.iter().enumerate() {
        for &(_, t, _) in links {
            joined[of_switch[s] * g + of_switch[t]] = true;
        }
    }
    for a in 0..g {
        for b in a + 1..g {
            if !joined[a * g + b] {
                return Err(NotADragonfly::NotFullyConnected { a: members[a][0], b: members[b][0] });
            }
        }
    }
    Ok(())
}

fn mode(sorted: &[usize]) -> usize {
    let (mut best, mut best_run, mut run) = (sorted[0], 0, 0);
    for (i, &v) in sorted.iter().enumerate() {
        run = if i > 0 && sorted[i - 1] == v { run + 1 } else { 1 };
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

    /// Canonical fully connected Dragonfly: a switches per group, h global
    /// links each, a*h+1 groups, global link j of group g goes to group
    /// (g + j + 1) mod G. Adjacency with fake port numbers.
    pub(crate) fn dragonfly_adjacency(a: usize, h: usize) -> Vec<Vec<(u8, usize, u8)>> {
        let groups = a * h + 1;
        let mut adj = vec![Vec::new(); a * groups];
        let add = |x: usize, y: usize, adj: &mut Vec<Vec<(u8, usize, u8)>>| {
            let px = adj[x].len() as u8 + 1;
            let py = adj[y].len() as u8 + 1;
            adj[x].push((px, y, py));
            adj[y].push((py, x, px));
        };
        for g in 0..groups {
            for i in 0..a {
                for j in i + 1..a {
                    add(g * a + i, g * a + j, &mut adj);
                }
            }
        }
        for g in 0..groups {
            for k in 0..a * h {
                let other = (g + k + 1) % groups;
                if other < g {
                    continue;
                }
                // Link k of g leaves switch k / h; it arrives at group
                // `other` as that group's link (groups - 1 - k - ...).
                let back = (g + groups - other - 1) % groups;
                add(g * a + k / h, other * a + back / h, &mut adj);
            }
        }
        adj
    }

    #[test]
    fn finds_groups_of_canonical_dragonflies() {
        for (a, h) in [(3, 1), (4, 2), (6, 3), (8, 4)] {
            let adj = dragonfly_adjacency(a, h);
            let groups = discover_groups(&adj).unwrap();
            assert_eq!(groups.members.len(), a * h + 1, "a={a} h={h}");
            for (gi, m) in groups.members.iter().enumerate() {
                assert_eq!(m.len(), a);
                // Canonical numbering: group gi holds switches gi*a..
                let first = m[0] / a;
                assert!(m.iter().all(|s| s / a == first), "group {gi}: {m:?}");
            }
        }
    }

    #[test]
    fn missing_global_link_is_named() {
        let mut adj = dragonfly_adjacency(4, 2);
        // Cut every global link leaving switch 0 (group 0).
        let globals: Vec<_> = adj[0].iter().filter(|l| l.1 >= 4).copied().collect();
        for (_, t, _) in globals {
            adj[0].retain(|l| l.1 != t);
            adj[t].retain(|l| l.1 != 0);
        }
        let err = discover_groups(&adj).unwrap_err();
        assert!(matches!(err, NotADragonfly::NotFullyConnected { a: 0, .. }), "{err:?}");
    }

    #[test]
    fn broken_group_is_inconsistent_or_wrong_size() {
        let mut adj = dragonfly_adjacency(4, 2);
        // Remove one local link inside group 0: it is no longer a clique.
        adj[0].retain(|l| l.1 != 1);
        adj[1].retain(|l| l.1 != 0);
        assert!(discover_groups(&adj).is_err());
    }
}

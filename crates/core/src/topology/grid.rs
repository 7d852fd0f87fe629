//! FlatFly/HyperX, hypercube and torus coordinates recovered from the bare
//! switch graph by link equivalence (direct-topologies paper §2, extended
//! here to rings).
//!
//! In a FlatFly each link class (`mapping::link_classes`, rectangle rule
//! on) is one dimension, and cutting its links splits the switches into
//! that dimension's positions: a switch's coordinate in dimension i is the
//! part it lands in when the links of all other dimensions are kept.
//!
//! In a torus the rectangle rule only joins the cables between two
//! neighbouring positions of a ring (a "slab"); cutting one slab leaves the
//! graph in one piece, which is how slabs are told apart. At every switch
//! the two cables of one ring lead to switches that share no neighbour but
//! it, while cables of two different dimensions span a square; such pairs
//! join their slabs into the ring's dimension, whose positions are then put
//! in cyclic order. Rings of 3 are triangles and rings of 4 squares, which
//! map as one clique dimension and as two binary ones; DOR routes those
//! minimally without datelines, so only rings of 5 or more are rings here.
//!
//! Damage (missing cables and switches) breaks rectangles. A cable whose
//! rectangles are all broken can be left in a tiny class of its own; such
//! classes (under an eighth of the largest) say nothing about the
//! dimensions and are left out of the mapping (the cable is still routed
//! over). A broken square can also leave two cables of different
//! dimensions at a switch with no common neighbour but it, so slabs are
//! joined into a ring only where that is so at more switches than not, and
//! at three at least (one broken square shows it at two).

use std::collections::{HashMap, HashSet};

use petgraph::unionfind::UnionFind;

use super::mapping::{dense_classes, link_classes};
use crate::fabric::SwitchGraph;

#[derive(Clone, Debug)]
pub struct GridMap {
    /// `coords[s][i]`: coordinate of switch s in dimension i.
    pub coords: Vec<Vec<usize>>,
    /// Values each dimension's coordinate takes.
    pub extent: Vec<usize>,
    /// Whether dimension i is a ring: its coordinates are in cyclic order
    /// and a switch is cabled only to the positions ±1 (mod extent).
    /// Otherwise every position of a line is cabled to every other.
    pub ring: Vec<bool>,
}

/// Coordinates of every switch of the graph, or why it is no grid.
pub fn map_grid(graph: &SwitchGraph) -> Result<GridMap, String> {
    let n = graph.switch_count();
    let classes = link_classes(graph, true);
    if classes.count == 0 {
        return Err("there are no inter-switch links".into());
    }
    // Part of each switch when the links of the classes `cut` are removed.
    let parts_without = |cut: &dyn Fn(usize) -> bool| -> Vec<usize> {
        let mut uf = UnionFind::new(n);
        for (&(a, b), &c) in classes.links.iter().zip(&classes.class) {
            if !cut(c) {
                uf.union(a, b);
            }
        }
        dense_classes(&mut uf, n)
    };
    let mut size = vec![0usize; classes.count];
    for &c in &classes.class {
        size[c] += 1;
    }
    let largest = size.iter().copied().max().unwrap_or(0);
    let kept: Vec<bool> = size.iter().map(|&n| n * 8 >= largest).collect();
    let slab: Vec<bool> = (0..classes.count)
        .map(|c| {
            kept[c]
                && parts_without(&|x| x == c || !kept[x])
                    .iter()
                    .all(|&part| part == 0)
        })
        .collect();
    let joined = join_slabs_into_rings(graph, &classes.links, &classes.class, &slab);
    // Dimensions numbered over the kept classes only.
    let mut number: HashMap<usize, usize> = HashMap::new();
    let dimension_of_class: Vec<usize> = (0..classes.count)
        .map(|c| match kept[c] {
            true => {
                let next = number.len();
                *number.entry(joined[c]).or_insert(next)
            }
            false => usize::MAX,
        })
        .collect();
    let dims = number.len();
    let mut coords = vec![Vec::with_capacity(dims); n];
    let mut extent = Vec::with_capacity(dims);
    let mut ring = Vec::with_capacity(dims);
    for i in 0..dims {
        let mut values = parts_without(&|c| dimension_of_class[c] == i || !kept[c]);
        let k = values.iter().max().map_or(0, |m| m + 1);
        let is_ring = (0..classes.count).any(|c| dimension_of_class[c] == i && slab[c]);
        if is_ring {
            let dim_links = classes
                .links
                .iter()
                .zip(&classes.class)
                .filter(|(_, &c)| dimension_of_class[c] == i);
            let cyclic = cyclic_order(k, dim_links.map(|(&(a, b), _)| (values[a], values[b])))?;
            for v in &mut values {
                *v = cyclic[*v];
            }
        }
        extent.push(k);
        ring.push(is_ring);
        for (s, v) in values.into_iter().enumerate() {
            coords[s].push(v);
        }
    }
    let mut seen = HashMap::new();
    for (s, c) in coords.iter().enumerate() {
        if let Some(other) = seen.insert(c.clone(), s) {
            return Err(format!(
                "switches #{other} and #{s} get the same coordinates {c:?}: the links do not form a FlatFly, \
                 hypercube or torus"
            ));
        }
    }
    Ok(GridMap {
        coords,
        extent,
        ring,
    })
}

/// Dimension number per link class: every non-slab class is a dimension
/// of its own; two slabs are joined where switches with cables in both
/// more often see them lead to switches with no common neighbour but
/// themselves (a ring's two directions) than not (a square), and at three
/// at least.
fn join_slabs_into_rings(
    graph: &SwitchGraph,
    links: &[(usize, usize)],
    class: &[usize],
    slab: &[bool],
) -> Vec<usize> {
    let class_of: HashMap<(usize, usize), usize> =
        links.iter().copied().zip(class.iter().copied()).collect();
    let distinct: Vec<HashSet<usize>> = graph
        .ids()
        .map(|s| graph.neighbours(s).iter().map(|t| t.idx()).collect())
        .collect();
    let count = slab.len();
    // (class, class) -> (switches seeing a ring, switches seeing a square).
    let mut votes: HashMap<(usize, usize), (usize, usize)> = HashMap::new();
    for (u, around) in distinct.iter().enumerate() {
        let slab_cables: Vec<(usize, usize)> = around
            .iter()
            .map(|&v| (v, class_of[&(u.min(v), u.max(v))]))
            .filter(|&(_, c)| slab[c])
            .collect();
        for (i, &(v, cv)) in slab_cables.iter().enumerate() {
            for &(x, cx) in &slab_cables[i + 1..] {
                if cv != cx {
                    let vote = votes.entry((cv.min(cx), cv.max(cx))).or_default();
                    match distinct[v]
                        .iter()
                        .all(|&w| w == u || !distinct[x].contains(&w))
                    {
                        true => vote.0 += 1,
                        false => vote.1 += 1,
                    }
                }
            }
        }
    }
    let mut uf = UnionFind::new(count);
    let mut pairs: Vec<_> = votes.into_iter().collect();
    pairs.sort_unstable();
    for ((a, b), (ring, square)) in pairs {
        // Two slabs of different dimensions meet at the four corners of
        // one square per line of the other dimensions: a broken corner
        // makes at most two of them look like a ring.
        if ring > square && ring >= 3 {
            uf.union(a, b);
        }
    }
    dense_classes(&mut uf, count)
}

/// Positions 0..k of a ring, given its cables as pairs of (arbitrarily
/// numbered) parts: the new number of each part, walking the cycle from
/// part 0 towards its lower-numbered neighbour.
fn cyclic_order(
    k: usize,
    cables: impl Iterator<Item = (usize, usize)>,
) -> Result<Vec<usize>, String> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (a, b) in cables {
        for (x, y) in [(a, b), (b, a)] {
            if x != y && !next[x].contains(&y) {
                next[x].push(y);
            }
        }
    }
    if let Some(part) = next.iter().position(|n| n.len() != 2) {
        return Err(format!(
            "a ring dimension's position {part} of {k} is cabled to {} other positions, not 2: not a torus",
            next[part].len()
        ));
    }
    let mut order = vec![usize::MAX; k];
    let (mut prev, mut at) = (0, 0);
    for position in 0..k {
        if order[at] != usize::MAX {
            return Err(format!(
                "a ring dimension's {k} positions do not form one cycle: not a torus"
            ));
        }
        order[at] = position;
        let step = if position == 0 {
            *next[at].iter().min().expect("two")
        } else {
            next[at][usize::from(next[at][0] == prev)]
        };
        (prev, at) = (at, step);
    }
    if at != 0 {
        return Err(format!(
            "a ring dimension's {k} positions do not form one cycle: not a torus"
        ));
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen;
    use crate::topology::mapping::tests::{named_coords, neighbours, same_mapping};

    /// Every cable joins switches that differ in one coordinate, by ±1
    /// (mod extent) in a ring dimension.
    fn cables_follow_the_grid(m: &GridMap, neighbours: &[Vec<usize>]) -> bool {
        neighbours.iter().enumerate().all(|(s, list)| {
            list.iter().all(|&t| {
                let differ: Vec<usize> = (0..m.extent.len())
                    .filter(|&i| m.coords[s][i] != m.coords[t][i])
                    .collect();
                differ.len() == 1 && {
                    let i = differ[0];
                    let k = m.extent[i];
                    !m.ring[i]
                        || (m.coords[s][i] + 1) % k == m.coords[t][i]
                        || (m.coords[t][i] + 1) % k == m.coords[s][i]
                }
            })
        })
    }

    #[test]
    fn tori_map_to_rings_in_cyclic_order() {
        // Rings of 5 and more are rings; a ring of 4 maps as two binary
        // dimensions and a ring of 3 as a clique.
        for (dims, widths, rings) in [
            (vec![5, 5], vec![1, 1], vec![5, 5]),
            (vec![6, 5, 7], vec![1, 2, 1], vec![5, 6, 7]),
            (vec![5, 4, 3, 6], vec![1, 1, 1, 1], vec![5, 6]),
        ] {
            let f = gen::direct::tests::fabric(gen::torus::torus(&dims, &widths, 1).unwrap());
            let g = neighbours(&f);
            let m = map_grid(f.graph()).unwrap_or_else(|e| panic!("{dims:?}: {e}"));
            let mut found: Vec<usize> = (0..m.extent.len())
                .filter(|&i| m.ring[i])
                .map(|i| m.extent[i])
                .collect();
            found.sort_unstable();
            assert_eq!(found, rings, "{dims:?}");
            assert!(cables_follow_the_grid(&m, &g), "{dims:?}");
            if !dims.contains(&4) {
                assert!(same_mapping(&m.coords, &named_coords(&f)), "{dims:?}");
            }
        }
    }

    #[test]
    fn flatflies_and_hypercubes_have_no_rings() {
        for b in [
            gen::hyperx::hyperx(&[4, 5, 3], &[2, 1, 1], 1).unwrap(),
            gen::hyperx::hypercube(5, 1, 1).unwrap(),
        ] {
            let f = gen::direct::tests::fabric(b);
            let m = map_grid(f.graph()).unwrap();
            assert!(m.ring.iter().all(|r| !r));
            assert!(same_mapping(&m.coords, &named_coords(&f)));
        }
    }
}

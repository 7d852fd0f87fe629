//! Graph isomorphism by individualisation and refinement, for recognising
//! a fabric as a known construction (e.g. Slim Fly's MMS graph) and so
//! recovering the construction's labels.
//!
//! Both graphs are coloured alike: start uniform, then repeatedly give
//! each vertex the colour of (its colour, the multiset of its neighbours'
//! colours), numbered by one table shared by both graphs, until the number
//! of colours stops growing. Different class sizes in the two graphs mean
//! no isomorphism extends the choices made so far. While a class has more
//! than one vertex, one vertex of the first graph is paired with each
//! candidate of the second in turn (both get a fresh colour) and the
//! search recurses. Symmetric graphs such as the MMS graphs need only a
//! few such choices, most of which succeed at once; a budget on refinements
//! bounds the rest.

use std::collections::HashMap;

/// A bijection `map[v]` from `g`'s vertices to `h`'s that preserves
/// adjacency, or `None` if there is none or `budget` refinements did not
/// find one. Neighbour lists must not repeat a vertex.
pub fn find_isomorphism(g: &[Vec<usize>], h: &[Vec<usize>], budget: usize) -> Option<Vec<usize>> {
    if g.len() != h.len() || edge_count(g) != edge_count(h) {
        return None;
    }
    let mut search = Search { g, h, budget };
    search.extend(vec![0; g.len()], vec![0; h.len()])
}

fn edge_count(g: &[Vec<usize>]) -> usize {
    g.iter().map(Vec::len).sum()
}

struct Search<'a> {
    g: &'a [Vec<usize>],
    h: &'a [Vec<usize>],
    budget: usize,
}

impl Search<'_> {
    fn extend(&mut self, mut cg: Vec<usize>, mut ch: Vec<usize>) -> Option<Vec<usize>> {
        if self.budget == 0 {
            return None;
        }
        self.budget -= 1;
        if !self.refine(&mut cg, &mut ch) {
            return None;
        }
        let mut size: HashMap<usize, usize> = HashMap::new();
        for &c in &cg {
            *size.entry(c).or_default() += 1;
        }
        let Some(colour) = cg
            .iter()
            .copied()
            .filter(|c| size[c] > 1)
            .min_by_key(|c| (size[c], *c))
        else {
            return self.discrete_map(&cg, &ch);
        };
        let v = cg
            .iter()
            .position(|&c| c == colour)
            .expect("class is not empty");
        let fresh = cg.iter().max().expect("not empty") + 1;
        for w in (0..ch.len()).filter(|&w| ch[w] == colour) {
            let (mut cg2, mut ch2) = (cg.clone(), ch.clone());
            cg2[v] = fresh;
            ch2[w] = fresh;
            if let Some(map) = self.extend(cg2, ch2) {
                return Some(map);
            }
            if self.budget == 0 {
                return None;
            }
        }
        None
    }

    /// Refines both colourings to a fixed point; false when their class
    /// sizes differ.
    fn refine(&self, cg: &mut Vec<usize>, ch: &mut Vec<usize>) -> bool {
        let mut classes = count_distinct(cg);
        loop {
            let mut table: HashMap<(usize, Vec<usize>), usize> = HashMap::new();
            let mut recolour = |graph: &[Vec<usize>], colours: &[usize]| -> Vec<usize> {
                (0..graph.len())
                    .map(|v| {
                        let mut around: Vec<usize> = graph[v].iter().map(|&u| colours[u]).collect();
                        around.sort_unstable();
                        let next = table.len();
                        *table.entry((colours[v], around)).or_insert(next)
                    })
                    .collect()
            };
            let (ng, nh) = (recolour(self.g, cg), recolour(self.h, ch));
            if histogram(&ng) != histogram(&nh) {
                return false;
            }
            (*cg, *ch) = (ng, nh);
            let now = count_distinct(cg);
            if now == classes {
                return true;
            }
            classes = now;
        }
    }

    /// With every class a single vertex: the pairing, if it keeps edges.
    fn discrete_map(&self, cg: &[usize], ch: &[usize]) -> Option<Vec<usize>> {
        let at: HashMap<usize, usize> = ch.iter().enumerate().map(|(w, &c)| (c, w)).collect();
        let map: Vec<usize> = cg.iter().map(|c| at[c]).collect();
        let keeps_edges =
            (0..self.g.len()).all(|v| self.g[v].iter().all(|&u| self.h[map[v]].contains(&map[u])));
        keeps_edges.then_some(map)
    }
}

fn count_distinct(colours: &[usize]) -> usize {
    let mut seen = colours.to_vec();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

fn histogram(colours: &[usize]) -> HashMap<usize, usize> {
    let mut h = HashMap::new();
    for &c in colours {
        *h.entry(c).or_default() += 1;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(n: usize) -> Vec<Vec<usize>> {
        (0..n).map(|v| vec![(v + 1) % n, (v + n - 1) % n]).collect()
    }

    fn relabel(g: &[Vec<usize>], perm: &[usize]) -> Vec<Vec<usize>> {
        let mut h = vec![Vec::new(); g.len()];
        for (v, around) in g.iter().enumerate() {
            h[perm[v]] = around.iter().map(|&u| perm[u]).collect();
        }
        h
    }

    fn is_isomorphism(g: &[Vec<usize>], h: &[Vec<usize>], map: &[usize]) -> bool {
        g.iter()
            .enumerate()
            .all(|(v, around)| around.iter().all(|&u| h[map[v]].contains(&map[u])))
    }

    #[test]
    fn finds_a_mapping_of_a_shuffled_symmetric_graph() {
        // The Petersen graph (vertex-transitive, every vertex alike to 1-WL).
        let mut petersen = vec![Vec::new(); 10];
        for i in 0..5 {
            for (a, b) in [(i, (i + 1) % 5), (i, i + 5), (i + 5, (i + 2) % 5 + 5)] {
                petersen[a].push(b);
                petersen[b].push(a);
            }
        }
        let perm = [3, 7, 1, 9, 0, 5, 8, 2, 6, 4];
        let shuffled = relabel(&petersen, &perm);
        let map = find_isomorphism(&petersen, &shuffled, 1000).unwrap();
        assert!(is_isomorphism(&petersen, &shuffled, &map));
    }

    #[test]
    fn tells_apart_graphs_that_look_alike_locally() {
        // One 6-cycle versus two triangles: both 2-regular on 6 vertices.
        let two_triangles: Vec<Vec<usize>> = (0..6)
            .map(|v| {
                if v < 3 {
                    vec![(v + 1) % 3, (v + 2) % 3]
                } else {
                    vec![3 + (v + 1) % 3, 3 + (v + 2) % 3]
                }
            })
            .collect();
        assert!(find_isomorphism(&cycle(6), &two_triangles, 1000).is_none());
        assert!(find_isomorphism(&cycle(6), &cycle(6), 1000).is_some());
    }
}

//! Up*/down* next hops on a small graph (the positions of one damaged
//! line of a dimension, or the whole switch graph for detours): nodes are
//! ranked by breadth-first level from a root, "up" is towards a lower
//! rank, and a path may go up any number of times and then only down.
//!
//! No channel dependency then turns from a down link to an up link, and
//! links of one kind follow the ranks strictly, so the paths' dependencies
//! close no cycle on one VL. The next hops are destination-based: a node
//! goes up where that is strictly shorter than going down only (or it
//! cannot go down), and down otherwise; a node that some node going down
//! sends packets to goes down too (repeated until no such node goes up),
//! so no packet turns from down to up. Every node reaches some target
//! this way, since the root reaches every node of its component by going
//! down the breadth-first tree.
//! Where several neighbours are equally near, all are offered, so that
//! callers can spread destinations over them: each is a legal next hop
//! for any packet that reaches the node.

use std::collections::VecDeque;

/// Where a node sends a packet for the targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// The node is a target.
    Here,
    /// The equally near next hops, ascending.
    Via(Vec<usize>),
    /// No target in the node's component.
    Unreachable,
}

/// Ranks of the nodes `present` of a graph given as adjacency lists.
#[derive(Clone, Debug)]
pub struct UpDown {
    /// Rank per node (lower is up); absent nodes `usize::MAX`.
    rank: Vec<usize>,
    /// Present nodes, by rank.
    by_rank: Vec<usize>,
}

impl UpDown {
    /// Breadth-first levels from the best-connected node of each
    /// component (lowest number on ties), components one after another.
    pub fn new(adj: &[Vec<usize>], present: &[bool]) -> Self {
        let n = adj.len();
        let mut rank = vec![usize::MAX; n];
        let mut by_rank = Vec::with_capacity(n);
        let mut roots: Vec<usize> = (0..n).filter(|&v| present[v]).collect();
        roots.sort_by_key(|&v| (std::cmp::Reverse(adj[v].len()), v));
        for root in roots {
            if rank[root] != usize::MAX {
                continue;
            }
            rank[root] = by_rank.len();
            by_rank.push(root);
            let mut queue = VecDeque::from([root]);
            while let Some(v) = queue.pop_front() {
                for &w in &adj[v] {
                    if present[w] && rank[w] == usize::MAX {
                        rank[w] = by_rank.len();
                        by_rank.push(w);
                        queue.push_back(w);
                    }
                }
            }
        }
        UpDown { rank, by_rank }
    }

    /// Next hops of every node towards the nearest target (shortest legal
    /// path under the rule above; every neighbour on one).
    pub fn next_hops(&self, adj: &[Vec<usize>], target: &[bool]) -> Vec<Next> {
        let seed: Vec<Option<usize>> = target.iter().map(|&t| t.then_some(0)).collect();
        self.next_hops_from(adj, &seed)
    }

    /// `next_hops` where reaching target v costs `seed[v]` more hops (the
    /// rest of its own path), so that nodes head for the target that
    /// makes the whole path shortest.
    pub fn next_hops_from(&self, adj: &[Vec<usize>], seed: &[Option<usize>]) -> Vec<Next> {
        const FAR: usize = usize::MAX;
        let n = adj.len();
        let down = |v: usize, w: usize| self.rank[w] != usize::MAX && self.rank[w] > self.rank[v];
        let up = |v: usize, w: usize| self.rank[w] < self.rank[v];
        let best = |v: usize, dist: &[usize], legal: &dyn Fn(usize, usize) -> bool| {
            let near = adj[v]
                .iter()
                .copied()
                .filter(|&w| legal(v, w) && dist[w] != FAR)
                .map(|w| dist[w])
                .min()?;
            let mut all: Vec<usize> = adj[v]
                .iter()
                .copied()
                .filter(|&w| legal(v, w) && dist[w] == near)
                .collect();
            all.sort_unstable();
            all.dedup();
            Some((near, all))
        };
        let mut by_down = vec![FAR; n];
        for &v in self.by_rank.iter().rev() {
            if let Some(rest) = seed[v] {
                by_down[v] = rest;
            } else if let Some((near, _)) = best(v, &by_down, &down) {
                by_down[v] = near + 1;
            }
        }
        // A node goes up when that is strictly shorter than its way down,
        // unless a node going down sends packets to it (those may only go
        // on down): such nodes are made to go down, until none is left.
        let mut must_go_down = vec![false; n];
        loop {
            let mut legal = vec![FAR; n];
            let mut next = vec![Next::Unreachable; n];
            let mut goes_down = vec![false; n];
            for &v in &self.by_rank {
                if let Some(rest) = seed[v] {
                    legal[v] = rest;
                    next[v] = Next::Here;
                    continue;
                }
                let upward = best(v, &legal, &up)
                    .filter(|(near, _)| !must_go_down[v] && near + 1 < by_down[v]);
                if let Some((near, all)) = upward {
                    legal[v] = near + 1;
                    next[v] = Next::Via(all);
                } else if by_down[v] != FAR {
                    legal[v] = by_down[v];
                    goes_down[v] = true;
                    next[v] = best(v, &by_down, &down)
                        .map_or(Next::Unreachable, |(_, all)| Next::Via(all));
                }
            }
            let mut changed = false;
            for v in (0..n).filter(|&v| goes_down[v]) {
                if let Next::Via(all) = &next[v] {
                    for &w in all {
                        if seed[w].is_none() && !goes_down[w] && !must_go_down[w] {
                            must_go_down[w] = true;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                return next;
            }
        }
    }

    /// Whether the hop from `v` to `w` goes down.
    #[cfg(test)]
    pub fn is_down(&self, v: usize, w: usize) -> bool {
        self.rank[w] > self.rank[v]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Follows next hops from `v`: the path, which must reach a target.
    fn walk(next: &[Next], mut v: usize) -> Vec<usize> {
        let mut path = vec![v];
        while let Next::Via(all) = &next[v] {
            v = all[path.len() % all.len()];
            path.push(v);
            assert!(path.len() <= next.len(), "a forwarding loop");
        }
        assert_eq!(next[v], Next::Here, "from {}", path[0]);
        path
    }

    #[test]
    fn paths_go_up_then_down_and_reach_every_target() {
        // A 6-cycle with a chord: every pair, every path legal, whichever
        // of the equally near next hops is taken.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0), (1, 4)];
        let mut adj = vec![Vec::new(); 6];
        for (a, b) in edges {
            adj[a].push(b);
            adj[b].push(a);
        }
        let ud = UpDown::new(&adj, &[true; 6]);
        for t in 0..6 {
            let mut target = [false; 6];
            target[t] = true;
            let next = ud.next_hops(&adj, &target);
            for v in 0..6 {
                let path = walk(&next, v);
                let turns: Vec<bool> = path.windows(2).map(|w| ud.is_down(w[0], w[1])).collect();
                assert!(
                    turns.windows(2).all(|t| !t[0] || t[1]),
                    "{path:?} turns down then up"
                );
            }
        }
    }

    #[test]
    fn other_components_are_unreachable() {
        let adj = vec![vec![1], vec![0], vec![]];
        let ud = UpDown::new(&adj, &[true; 3]);
        let next = ud.next_hops(&adj, &[true, false, false]);
        assert_eq!(
            next,
            vec![Next::Here, Next::Via(vec![0]), Next::Unreachable]
        );
    }
}

//! The lines of a mapped grid: for a dimension i, the switches that agree
//! in every other coordinate, by their coordinate in i. Dimension-order
//! routing corrects coordinate i by moving along such a line.
//!
//! A complete line of a FlatFly is a clique (one hop to any position); a
//! complete ring (torus) is travelled the short way round. A damaged line
//! (a cable or a switch missing) is routed by up*/down* over the positions
//! that are left (`updown`): inside a clique that is the detour through a
//! third position, on a broken ring the way round that is left. A target
//! position the line cannot reach (its switch is gone, or the line fell
//! apart) leaves the packet to a detour through other dimensions.

use std::collections::HashMap;

use super::updown::{Next, UpDown};
use crate::fabric::{Lid, SwitchGraph, SwitchId};
use crate::topology::grid::GridMap;

#[derive(Clone, Debug)]
pub struct Line {
    /// Switch at each position, if it is there.
    slots: Vec<Option<SwitchId>>,
    /// A ring dimension's line.
    ring: bool,
    /// A ring with every switch and cable: short way round, datelines.
    intact_ring: bool,
    /// Whether every position is there and cabled as the dimension wants.
    complete: bool,
    /// Per target position, next position from each position (up*/down*);
    /// empty for intact rings.
    towards: Vec<Vec<Next>>,
}

impl Line {
    /// The next switch from position `from` towards position `to`, or
    /// `None` when the line cannot take the packet there. Equally near
    /// detours are spread over destination LIDs; without `detours`, a
    /// clique line offers direct hops only (a broken ring always offers
    /// the way round that is left).
    pub fn next(&self, from: usize, to: usize, lid: Lid, detours: bool) -> Option<SwitchId> {
        let position = if self.intact_ring {
            ring_step(from, to, self.slots.len(), lid).0
        } else {
            match &self.towards[to][from] {
                Next::Via(all) if detours || self.ring || all.contains(&to) => {
                    all[lid.idx() % all.len()]
                }
                Next::Via(_) | Next::Here | Next::Unreachable => return None,
            }
        };
        self.slots[position]
    }
}

/// Every line of every dimension of a mapped grid.
#[derive(Clone, Debug)]
pub struct Lines {
    /// `line_of[s][i]`: the line of dimension i through switch s.
    line_of: Vec<Vec<usize>>,
    lines: Vec<Line>,
}

impl Lines {
    pub fn new(graph: &SwitchGraph, map: &GridMap) -> Self {
        let dims = map.extent.len();
        let mut line_of = vec![vec![0; dims]; graph.switch_count()];
        let mut lines: Vec<Line> = Vec::new();
        for i in 0..dims {
            let k = map.extent[i];
            let mut by_key: HashMap<Vec<usize>, usize> = HashMap::new();
            let mut slots: Vec<Vec<Option<SwitchId>>> = Vec::new();
            for s in graph.ids() {
                let mut key = map.coords[s].clone();
                key[i] = usize::MAX;
                let next = slots.len();
                let line = *by_key.entry(key).or_insert(next);
                if line == next {
                    slots.push(vec![None; k]);
                }
                slots[line][map.coords[s][i]] = Some(s);
                line_of[s][i] = lines.len() + line;
            }
            lines.extend(
                slots
                    .into_iter()
                    .map(|slots| Line::build(graph, slots, map.ring[i])),
            );
        }
        Lines { line_of, lines }
    }

    /// The line of dimension `dim` through `s`.
    pub fn of(&self, s: SwitchId, dim: usize) -> &Line {
        &self.lines[self.line_of[s][dim]]
    }

    /// Lines that miss a switch or a cable.
    pub fn damaged(&self) -> usize {
        self.lines.iter().filter(|l| !l.complete).count()
    }
}

impl Line {
    fn build(graph: &SwitchGraph, slots: Vec<Option<SwitchId>>, ring: bool) -> Line {
        let k = slots.len();
        let cabled = |a: usize, b: usize| match (slots[a], slots[b]) {
            (Some(x), Some(y)) => !graph.bundle(x, y).is_empty(),
            _ => false,
        };
        let full = slots.iter().all(Option::is_some);
        let intact_ring = ring && full && (0..k).all(|a| cabled(a, (a + 1) % k));
        let complete = full
            && if ring {
                intact_ring
            } else {
                (0..k).all(|a| (a + 1..k).all(|b| cabled(a, b)))
            };
        let towards = if intact_ring {
            Vec::new()
        } else {
            let adj: Vec<Vec<usize>> = (0..k)
                .map(|a| (0..k).filter(|&b| b != a && cabled(a, b)).collect())
                .collect();
            let present: Vec<bool> = slots.iter().map(Option::is_some).collect();
            let updown = UpDown::new(&adj, &present);
            (0..k)
                .map(|to| {
                    let target: Vec<bool> = (0..k).map(|p| p == to && present[p]).collect();
                    updown.next_hops(&adj, &target)
                })
                .collect()
        };
        Line {
            slots,
            ring,
            intact_ring,
            complete,
            towards,
        }
    }
}

/// One hop along a ring of `k` from `from` towards `to`, the short way
/// round (half-way ties: up for even LIDs, down for odd): the next
/// position, and whether the path from `from` crosses the dateline
/// (the cable between k-1 and 0).
pub fn ring_step(from: usize, to: usize, k: usize, lid: Lid) -> (usize, bool) {
    let up = (to + k - from) % k;
    if up == 0 {
        return (from, false);
    }
    if up < k - up || (up == k - up && lid.raw() % 2 == 0) {
        ((from + 1) % k, to < from)
    } else {
        ((from + k - 1) % k, to > from)
    }
}

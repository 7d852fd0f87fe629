//! A group's tree grown branch by branch against the kept dependencies:
//! from a root, the member switch nearest to the tree joins next, by the
//! first path to the tree (at most `DETOUR` hops longer than the
//! shortest, nearer switches first) whose new turns, staged one switch at
//! a time with those already staged, close no cycle. Trees cut from fixed
//! candidates fail as a whole when one of their turns closes a cycle;
//! growing lets each branch go around the turns unicast and the kept
//! floods rule out.
//!
//! Every step is staged (and unstaged when its branch is given up)
//! before the next is tried, so the grown tree's whole flood is in the
//! kept state when it is committed: the same guarantee as a candidate
//! checked whole. The search stops after `STEPS_PER_SWITCH` steps per
//! member switch, so it is not monotone: against more kept turns it can
//! prune sooner and reach a branch it did not reach before.

use std::collections::VecDeque;

use super::flood::{for_each_dependency, for_each_dependency_from};
use super::kept::KeptDependencies;
use super::tree::attachment;
use super::GroupMft;
use crate::analysis::credit::Channel;
use crate::fabric::{Fabric, Peer, PortNum, PortRef, SwitchId};
use crate::routing::Routing;

/// Group `mlid`'s tree grown from `root` with its flood kept in `kept`,
/// or None (nothing of it kept) when some member switch has no path to
/// the tree that fits. The group's old flood is dropped either way.
pub fn grow(
    fabric: &Fabric,
    routing: &Routing,
    kept: &mut KeptDependencies,
    root: SwitchId,
    mlid: u16,
    sl: u8,
    members: &[PortRef],
) -> Option<GroupMft> {
    let graph = fabric.graph();
    let sl2vl = routing.sl2vl.as_ref();
    let mut group = GroupMft::new(fabric, mlid, sl);
    let mut ports: Vec<Vec<PortNum>> = vec![Vec::new(); fabric.switch_count()];
    for &m in members {
        if let Some((s, p)) = attachment(fabric, m) {
            ports[s].push(p);
        }
    }
    let mut in_tree = vec![false; fabric.switch_count()];
    let mut waiting: Vec<SwitchId> = graph.ids().filter(|&s| !ports[s].is_empty()).collect();
    kept.begin_group(mlid);
    // The root's own members: turns into member ports only, which lead
    // nowhere (a CA's channel has no dependency of its own).
    in_tree[root] = true;
    for &p in &ports[root] {
        group.add(root, p);
    }
    waiting.retain(|&s| s != root);
    let mut deps: Vec<(Channel, Channel)> = Vec::new();
    while !waiting.is_empty() {
        let to_tree = distances_to(fabric, &in_tree);
        let (at, next) = waiting
            .iter()
            .enumerate()
            .min_by_key(|&(_, &s)| (to_tree[s], s))
            .map(|(i, &s)| (i, s))?;
        waiting.swap_remove(at);
        if to_tree[next] == u32::MAX {
            kept.abort_group();
            return None;
        }
        let mut search = Join {
            fabric,
            sl2vl,
            kept: &mut *kept,
            ports: &ports,
            in_tree: &in_tree,
            to_tree: &to_tree,
            group: &mut group,
            path: vec![next],
            longest: to_tree[next] + DETOUR,
            budget: STEPS_PER_SWITCH,
            deps: Vec::new(),
        };
        for &p in &ports[next] {
            search.group.add(next, p);
        }
        if !search.extend() {
            kept.abort_group();
            return None;
        }
        for s in std::mem::take(&mut search.path) {
            in_tree[s] = true;
        }
        waiting.retain(|&s| !in_tree[s]);
    }
    deps.clear();
    for_each_dependency(fabric, sl2vl, &group, &mut |a, b| deps.push((a, b)));
    kept.commit_group(graph, mlid, &deps);
    Some(group)
}

/// Per switch, its hop distance to the nearest switch of the tree.
fn distances_to(fabric: &Fabric, in_tree: &[bool]) -> Vec<u32> {
    let graph = fabric.graph();
    let mut dist = vec![u32::MAX; in_tree.len()];
    let mut queue: VecDeque<SwitchId> = graph.ids().filter(|&s| in_tree[s]).collect();
    for &s in &queue {
        dist[s] = 0;
    }
    while let Some(s) = queue.pop_front() {
        for &t in graph.neighbours(s) {
            if dist[t] == u32::MAX {
                dist[t] = dist[s] + 1;
                queue.push_back(t);
            }
        }
    }
    dist
}

/// Hops a branch may take beyond the shortest way to the tree.
const DETOUR: u32 = 2;

/// Switches a branch search may step to per member switch.
const STEPS_PER_SWITCH: usize = 64;

/// The search for a branch from a member switch to the tree: a path
/// extended one switch at a time, each step's new turns staged (and
/// unstaged when the branch is given up), so only turns that close no
/// cycle are ever extended from.
struct Join<'a> {
    fabric: &'a Fabric,
    sl2vl: Option<&'a crate::routing::Sl2Vl>,
    kept: &'a mut KeptDependencies,
    ports: &'a [Vec<PortNum>],
    in_tree: &'a [bool],
    to_tree: &'a [u32],
    group: &'a mut GroupMft,
    path: Vec<SwitchId>,
    longest: u32,
    budget: usize,
    deps: Vec<(Channel, Channel)>,
}

impl Join<'_> {
    /// Extends the path from its last switch until it reaches the tree;
    /// false (path, masks and staged turns as they were) when no way fits.
    fn extend(&mut self) -> bool {
        let graph = self.fabric.graph();
        let at = *self
            .path
            .last()
            .expect("a path starts at its member switch");
        let hops = self.path.len() as u32 - 1;
        // Nearer the tree first, then the lowest GUID.
        let mut next: Vec<SwitchId> = graph
            .neighbours(at)
            .iter()
            .copied()
            .filter(|&t| !self.path.contains(&t) && hops + 1 + self.to_tree[t] <= self.longest)
            .collect();
        next.sort_by_key(|&t| (self.to_tree[t], t));
        for t in next {
            if self.budget == 0 {
                return false;
            }
            self.budget -= 1;
            let mark = self.kept.staged_mark();
            let added = self.step(at, t);
            if self.stage(at, t) {
                self.path.push(t);
                if self.in_tree[t] || self.extend() {
                    return true;
                }
                self.path.pop();
            }
            self.kept.unstage_to(mark);
            for (s, p) in added {
                self.group.ports[s].retain(|&q| q != p);
            }
        }
        false
    }

    /// Adds the cable `at`-`t` and `t`'s member ports to the masks: the
    /// ports that were not there before.
    fn step(&mut self, at: SwitchId, t: SwitchId) -> Vec<(SwitchId, PortNum)> {
        let graph = self.fabric.graph();
        let up = graph.bundle(at, t)[0];
        let mut added = Vec::new();
        let mut add = |group: &mut GroupMft, s: SwitchId, p: PortNum| {
            if !group.mask(s).contains(&p) {
                group.add(s, p);
                added.push((s, p));
            }
        };
        add(self.group, at, up);
        if let Some(Peer::Switch { port: down, .. }) = graph.peer(at, up) {
            add(self.group, t, down);
        }
        if !self.in_tree[t] {
            for &p in &self.ports[t] {
                add(self.group, t, p);
            }
        }
        added
    }

    /// Stages the dependencies the masks of `at` and `t` now make.
    fn stage(&mut self, at: SwitchId, t: SwitchId) -> bool {
        let graph = self.fabric.graph();
        let mut from: Vec<SwitchId> = [at, t]
            .iter()
            .flat_map(|&s| graph.neighbours(s).iter().copied().chain([s]))
            .collect();
        from.sort_unstable();
        from.dedup();
        self.deps.clear();
        let deps = &mut self.deps;
        for_each_dependency_from(self.fabric, self.sl2vl, self.group, from, &mut |a, b| {
            deps.push((a, b))
        });
        self.kept.stage(graph, &self.deps)
    }
}

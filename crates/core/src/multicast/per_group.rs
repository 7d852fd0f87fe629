//! Trees checked one group at a time, for groups no master tree serves
//! (an SL no master tree passed on, or members no tree of their SL
//! holds): candidate trees for that group alone, each cut to its members,
//! smallest first; the first whose flood (only this group's member ports
//! and the tree's switches: what its MFTs really forward) keeps the
//! engine's kept dependencies (unicast, the master trees' whole floods and
//! the floods of the groups kept so far) free of cycles is kept, and its
//! flood with it. None passing, the group gets OpenSM's kind of tree,
//! unchecked (`build_group_checked` in the module root).
//!
//! Why loop-free: every dependency any group on a covered SL can make is
//! in the kept state (the master trees' whole floods), and every group
//! checked here has its own flood in it, so unicast plus every group
//! served either way is a subgraph of one acyclic graph. A group rebuilt
//! (OpenSM calls `mcast_build_stree` per group on every membership change
//! and sweep) first drops its old flood; a group OpenSM deleted is never
//! called for, so the caller drops its flood with `forget_gone` (OpenSM
//! tells which MLIDs still have a group); the state is rebuilt with the
//! rule after each routing pass.
//!
//! Candidates, in the order tried among trees of equal size (ports
//! forwarded to): the master trees and master candidates that hold every
//! member's switch (the group's pruned subtree of each), breadth-first
//! trees hung from the switches nearest to all members (each switch from
//! its lowest-GUID neighbour one hop nearer the root, then from one
//! chosen by the group's MLID), and OpenSM's kind of tree where its
//! masks make a tree (every member gets one copy of each packet); then
//! trees grown branch by branch from the four nearest roots (`grown`),
//! for groups on at most `MAX_GROWN_SWITCHES` switches.

use super::flood::for_each_dependency_from;
use super::grown::grow;
use super::kept::KeptDependencies;
use super::opensm_like::opensm_like;
use super::rules::{MasterTrees, TreeRule};
use super::tree::{attachment, cut, spread, Tree};
use super::verified::{add_kept_floods, breadth_first, candidates, sl_classes, unicast_union};
use super::GroupMft;
use crate::fabric::{Fabric, Peer, PortRef, SwitchId};
use crate::routing::Routing;

/// Roots of the breadth-first trees tried per group.
const GROUP_ROOTS: usize = 4;

/// Roots trees are grown from per group, where no whole candidate fits.
const GROWN_ROOTS: usize = 4;

/// Groups with members on more switches than this are not grown: each
/// branch searched costs a walk, and on the fabrics measured such groups
/// (the broadcast group) never found a tree that way.
const MAX_GROWN_SWITCHES: usize = 32;

/// The kept dependencies of one routing pass and the trees groups are
/// cut from when checked alone.
#[derive(Clone, Debug)]
pub struct GroupChecker {
    kept: KeptDependencies,
    /// Trees tried for every group whose switches they hold.
    trees: Vec<Tree>,
}

impl GroupChecker {
    /// The checker for `rule` (None: the engine has no rule for this
    /// routing, every group is checked alone) of `routing`: unicast's
    /// dependencies and the whole flood of every master tree on the SLs
    /// it serves. `extra` trees are tried beside the master candidates
    /// (mlid's trees hung down from each top switch). Fails where trees
    /// cannot be checked at routing time (too many routes, a fabric in
    /// pieces, unicast alone cyclic), and for mlid's fat-tree rule, whose
    /// groups are served by an argument rather than kept floods.
    pub fn new(
        fabric: &Fabric,
        routing: &Routing,
        rule: Option<&TreeRule>,
        extra: &[Tree],
    ) -> Result<Self, String> {
        let none = MasterTrees::none();
        let masters = match rule {
            None => &none,
            Some(TreeRule::Masters(m)) => m,
            Some(TreeRule::FatTree(_)) => {
                return Err(
                    "the fat-tree rule's groups keep no floods to check a group against".into(),
                )
            }
        };
        let mut kept = unicast_union(fabric, routing)?;
        let class = sl_classes(routing);
        let everyone = super::verified::everyone(fabric);
        if !add_kept_floods(fabric, routing, &mut kept, masters, &class, &everyone) {
            return Err("the master trees close a credit loop when added again".into());
        }
        let mut trees: Vec<Tree> = Vec::new();
        for t in masters
            .trees
            .iter()
            .cloned()
            .chain(candidates(fabric, None))
            .chain(extra.iter().cloned())
        {
            if !trees
                .iter()
                .any(|k| k.root == t.root && k.parent == t.parent)
            {
                trees.push(t);
            }
        }
        Ok(GroupChecker { kept, trees })
    }

    /// A tree for group `mlid` on `sl` with `members` whose flood keeps
    /// the kept dependencies acyclic, its flood kept in place of the one
    /// the group had; None (and the group's old flood dropped) when no
    /// candidate passes.
    pub fn build(
        &mut self,
        fabric: &Fabric,
        routing: &Routing,
        mlid: u16,
        sl: u8,
        members: &[PortRef],
    ) -> Option<GroupMft> {
        self.forget(mlid);
        let mut switches: Vec<SwitchId> = members
            .iter()
            .filter_map(|&m| attachment(fabric, m).map(|(s, _)| s))
            .collect();
        switches.sort_unstable();
        switches.dedup();
        if members.len() < 2 || switches.is_empty() {
            return Some(GroupMft::new(fabric, mlid, sl));
        }
        let mut tried: Vec<GroupMft> = Vec::new();
        let roots = nearest_roots(fabric, &switches);
        let own = self
            .trees
            .iter()
            .filter(|t| switches.iter().all(|&s| t.contains(s)))
            .cloned()
            .chain(
                roots
                    .iter()
                    .flat_map(|&r| [breadth_first(fabric, r), hung_by_mlid(fabric, r, mlid)]),
            );
        for tree in own {
            let Ok(group) = cut(fabric, &tree, mlid, sl, members) else {
                continue;
            };
            if !tried.contains(&group) {
                tried.push(group);
            }
        }
        // Stable: equal sizes keep the order above.
        tried.sort_by_key(GroupMft::size);
        if let Ok(group) = opensm_like(fabric, routing, mlid, sl, members) {
            if !tried.contains(&group) && is_tree(fabric, &group) {
                tried.push(group);
            }
        }
        let whole = tried
            .into_iter()
            .find(|group| keep_whole(fabric, routing, &mut self.kept, group));
        if whole.is_some() || switches.len() > MAX_GROWN_SWITCHES {
            return whole;
        }
        roots
            .iter()
            .take(GROWN_ROOTS)
            .find_map(|&r| grow(fabric, routing, &mut self.kept, r, mlid, sl, members))
    }

    /// Drops group `mlid`'s kept flood (the group is gone, or rebuilt
    /// on a master tree).
    pub fn forget(&mut self, mlid: u16) {
        self.kept.drop_group(mlid);
    }

    /// Drops the kept floods of the groups `exists` says are gone, and
    /// returns their MLIDs in order. OpenSM deletes a group when its last
    /// member leaves and clears its MFTs without calling the engine, so
    /// its flood would otherwise stay until the next routing pass: no
    /// loop can come of that, but later groups would be refused for turns
    /// no forwarding table makes. A deleted group's MLID taken by a new
    /// group exists again and keeps the flood until that group is built,
    /// which replaces it.
    pub fn forget_gone(&mut self, mut exists: impl FnMut(u16) -> bool) -> Vec<u16> {
        let mut gone: Vec<u16> = self.kept.group_mlids().filter(|&m| !exists(m)).collect();
        gone.sort_unstable();
        for &mlid in &gone {
            self.forget(mlid);
        }
        gone
    }

    /// Groups whose floods are kept.
    pub fn kept_groups(&self) -> usize {
        self.kept.group_count()
    }

    /// Dependencies kept: unicast's, the master trees' and the groups'.
    pub fn kept_dependencies(&self) -> usize {
        self.kept.edge_count()
    }
}

/// Up to `GROUP_ROOTS` switches whose farthest member switch is nearest
/// (then the least total distance, then the lowest GUID).
fn nearest_roots(fabric: &Fabric, switches: &[SwitchId]) -> Vec<SwitchId> {
    let graph = fabric.graph();
    let mut roots: Vec<(u16, u32, SwitchId)> = graph
        .ids()
        .map(|r| {
            let row = graph.dist_row(r);
            let far = switches.iter().map(|&s| row[s]).max().unwrap_or(0);
            let total = switches.iter().map(|&s| row[s] as u32).sum();
            (far, total, r)
        })
        .collect();
    roots.sort_unstable();
    roots
        .into_iter()
        .take(GROUP_ROOTS)
        .map(|(_, _, r)| r)
        .collect()
}

/// A breadth-first tree from `root` whose switches each hang from a
/// neighbour one hop nearer the root chosen by `mlid` (other turns than
/// the lowest-GUID parents of `breadth_first`).
fn hung_by_mlid(fabric: &Fabric, root: SwitchId, mlid: u16) -> Tree {
    let graph = fabric.graph();
    let dist = graph.dist_row(root);
    let parent = graph
        .ids()
        .map(|s| {
            if s == root {
                return None;
            }
            let nearer: Vec<SwitchId> = graph
                .neighbours(s)
                .iter()
                .copied()
                .filter(|&t| dist[t] + 1 == dist[s])
                .collect();
            (!nearer.is_empty()).then(|| nearer[spread(mlid, s.idx()) % nearer.len()])
        })
        .collect();
    Tree {
        root,
        parent,
        same_cables: true,
    }
}

/// Keeps `group`'s flood in `kept` (in place of the one its MLID had),
/// or none of it when it closes a cycle. Staged switch by switch, so a
/// candidate that fails stops at the first switch whose turns close a
/// cycle rather than after its whole flood is listed.
fn keep_whole(
    fabric: &Fabric,
    routing: &Routing,
    kept: &mut KeptDependencies,
    group: &GroupMft,
) -> bool {
    let graph = fabric.graph();
    kept.begin_group(group.mlid);
    let mut all = Vec::new();
    let mut deps = Vec::new();
    for s in group.switches() {
        deps.clear();
        for_each_dependency_from(fabric, routing.sl2vl.as_ref(), group, [s], &mut |a, b| {
            deps.push((a, b))
        });
        if !kept.stage(graph, &deps) {
            kept.abort_group();
            return false;
        }
        all.extend_from_slice(&deps);
    }
    kept.commit_group(graph, group.mlid, &all);
    true
}

/// Whether `group`'s masks join its switches as one tree, every cable in
/// both ends' masks: then every member gets one copy of each packet.
/// OpenSM's kind of tree follows unicast next hops from the root, whose
/// paths may meet again (a cheaper test than flooding from every member).
fn is_tree(fabric: &Fabric, group: &GroupMft) -> bool {
    let graph = fabric.graph();
    let mut switches = 0usize;
    let mut cable_ends = 0usize;
    for s in group.switches() {
        switches += 1;
        for &p in group.mask(s) {
            if let Some(Peer::Switch { switch, port }) = graph.peer(s, p) {
                if switch == s || !group.mask(switch).contains(&port) {
                    return false;
                }
                cable_ends += 1;
            }
        }
    }
    let Some(start) = group.switches().next() else {
        return true;
    };
    // n - 1 cables and all switches reached: a tree.
    let mut seen = vec![false; fabric.switch_count()];
    seen[start] = true;
    let mut stack = vec![start];
    let mut reached = 1;
    while let Some(s) = stack.pop() {
        for &p in group.mask(s) {
            if let Some(Peer::Switch { switch, .. }) = graph.peer(s, p) {
                if !seen[switch] {
                    seen[switch] = true;
                    reached += 1;
                    stack.push(switch);
                }
            }
        }
    }
    cable_ends == 2 * (switches - 1) && reached == switches
}

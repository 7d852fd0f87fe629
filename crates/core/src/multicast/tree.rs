//! Trees over switches and a group's MFTs cut from one: the switches on the
//! tree paths between the group's members, the cables between them (one
//! of any parallel cables, chosen per group), and the members' own ports.
//!
//! A group's MFTs hold a subset of the tree's (switch, in-port, out-port)
//! turns, so its floods create a subset of the dependencies the whole tree
//! would: whatever makes a tree loop-free with unicast makes every group
//! cut from it loop-free (`rules` says, per engine, why its trees are).

use super::GroupMft;
use crate::fabric::{Fabric, PortNum, PortRef, SwitchId};

/// A tree over some of the switches: the parent of every switch in it but
/// the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    pub root: SwitchId,
    /// Per switch: its parent; `None` for the root and for switches
    /// outside the tree.
    pub parent: Vec<Option<SwitchId>>,
    /// Every group takes the same one of parallel cables (a tree checked
    /// as a whole); otherwise each group picks by its MLID.
    pub same_cables: bool,
}

impl Tree {
    pub fn contains(&self, s: SwitchId) -> bool {
        s == self.root || self.parent[s].is_some()
    }
}

/// A number that spreads groups over equivalent choices (parallel cables,
/// parents, roots): the same for the same group and switch on every pass.
pub fn spread(mlid: u16, salt: usize) -> usize {
    let mut x = (mlid as u64)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(salt as u64);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as usize
}

/// Where a member's packets enter the switches: the switch and port its
/// port is cabled to (port 0 for a switch that is itself a member).
pub fn attachment(fabric: &Fabric, member: PortRef) -> Option<(SwitchId, PortNum)> {
    if let Some(s) = fabric.switch_id(member.node) {
        return Some((s, PortNum::new(0)));
    }
    let remote = fabric.port(member)?.remote?;
    Some((fabric.switch_id(remote.node)?, remote.port))
}

/// The MFTs of group `mlid` (on `sl`) for `members`, cut from `tree`.
/// Members not cabled to a switch are skipped; a member behind a switch
/// outside the tree is an error (the tree does not fit this fabric).
pub fn cut(
    fabric: &Fabric,
    tree: &Tree,
    mlid: u16,
    sl: u8,
    members: &[PortRef],
) -> Result<GroupMft, String> {
    let graph = fabric.graph();
    let mut group = GroupMft::new(fabric, mlid, sl);
    let mut joined = vec![false; fabric.switch_count()];
    joined[tree.root] = true;
    for &m in members {
        let Some((s, port)) = attachment(fabric, m) else {
            continue;
        };
        if !tree.contains(s) {
            return Err(format!(
                "member {} is behind {}, which the tree does not reach",
                crate::fabric::describe(fabric.node(m.node)),
                fabric.describe_switch(s)
            ));
        }
        group.add(s, port);
        // Up the tree until a switch already on it.
        let mut at = s;
        while !joined[at] {
            joined[at] = true;
            let parent = tree.parent[at].ok_or("a tree switch without a parent")?;
            let bundle = graph.bundle(at, parent);
            if bundle.is_empty() {
                return Err(format!(
                    "the tree joins {} to {}, which are not cabled",
                    fabric.describe_switch(at),
                    fabric.describe_switch(parent)
                ));
            }
            let pick = if tree.same_cables {
                0
            } else {
                spread(mlid, at.idx())
            };
            let up = bundle[pick % bundle.len()];
            let Some(crate::fabric::Peer::Switch { port: down, .. }) = graph.peer(at, up) else {
                return Err("a bundle port without a switch behind it".into());
            };
            group.add(at, up);
            group.add(parent, down);
            at = parent;
        }
    }
    // The root only forwards if it has at least two tree ports or a member.
    prune_idle_root(fabric, &mut group, tree);
    Ok(group)
}

/// A root with a single tree port and no member of its own would only
/// bounce packets back: walk the root down the one branch it has, so the
/// MFTs hold no switch that forwards nothing.
fn prune_idle_root(fabric: &Fabric, group: &mut GroupMft, tree: &Tree) {
    let graph = fabric.graph();
    let mut at = tree.root;
    loop {
        let mask = group.mask(at).to_vec();
        let [only] = mask[..] else { return };
        let Some(crate::fabric::Peer::Switch { switch: next, port }) = graph.peer(at, only) else {
            return;
        };
        if tree.parent[next] != Some(at) {
            return;
        }
        group.ports[at].clear();
        group.ports[next].retain(|&p| p != port);
        at = next;
    }
}

//! Multicast: the forwarding state of groups (one port set per switch per
//! MLID, as switches hold it in their MFTs), what a flood through it does
//! (members reached, channel dependencies), and the trees our engines
//! build so that multicast adds no credit loop to unicast.
//!
//! A switch forwards a multicast packet that enters on port `i` to every
//! port of the MLID's mask but `i`, on the VL its SL2VL table gives for
//! (`i`, out-port, the packet's SL). The packet keeps the group's SL on
//! every hop, so multicast shares the unicast VLs: its dependencies must
//! be checked together with unicast's (`check`).

pub mod check;
pub mod fat_tree;
pub mod flood;
pub mod grown;
pub mod kept;
pub mod opensm_like;
pub mod per_group;
pub mod rules;
pub mod tree;
pub mod verified;

use crate::fabric::{Fabric, PortNum, PortRef, SwitchId};

/// First multicast LID (0xC000, also the IPoIB broadcast group's MLID in
/// OpenSM's default partition).
pub const MLID_START: u16 = 0xC000;

/// One group's forwarding state: per switch (by `SwitchId`), the ports of
/// its MFT mask for `mlid`, ascending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupMft {
    pub mlid: u16,
    /// The group's SL (every hop of its packets uses it).
    pub sl: u8,
    pub ports: Vec<Vec<PortNum>>,
}

impl GroupMft {
    /// An empty group on `fabric`'s switches.
    pub fn new(fabric: &Fabric, mlid: u16, sl: u8) -> Self {
        GroupMft {
            mlid,
            sl,
            ports: vec![Vec::new(); fabric.switch_count()],
        }
    }

    /// Adds `port` to `switch`'s mask (kept ascending, no duplicates).
    pub fn add(&mut self, switch: SwitchId, port: PortNum) {
        let mask = &mut self.ports[switch];
        if let Err(at) = mask.binary_search(&port) {
            mask.insert(at, port);
        }
    }

    pub fn mask(&self, switch: SwitchId) -> &[PortNum] {
        &self.ports[switch]
    }

    /// Ports forwarded to, over all switches.
    pub fn size(&self) -> usize {
        self.ports.iter().map(Vec::len).sum()
    }

    /// Switches with a non-empty mask.
    pub fn switches(&self) -> impl Iterator<Item = SwitchId> + '_ {
        self.ports
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.is_empty())
            .map(|(s, _)| SwitchId::new(s))
    }
}

/// The MFTs of group `mlid` on `sl` for `members` (end ports: CA ports, or
/// a switch's port 0) under `rule`: the tree the rule gives cut to the
/// members, or OpenSM's kind of tree on an SL the rule does not cover.
/// Fewer than two members need no forwarding: empty MFTs.
pub fn build_group(
    fabric: &Fabric,
    rule: &rules::TreeRule,
    routing: &crate::routing::Routing,
    mlid: u16,
    sl: u8,
    members: &[PortRef],
) -> Result<GroupMft, String> {
    if !rule.covers(sl) {
        return opensm_like::opensm_like(fabric, routing, mlid, sl, members);
    }
    let mut switches: Vec<SwitchId> = members
        .iter()
        .filter_map(|&m| tree::attachment(fabric, m).map(|(s, _)| s))
        .collect();
    if members.len() < 2 {
        return Ok(GroupMft::new(fabric, mlid, sl));
    }
    switches.sort_unstable();
    switches.dedup();
    // Of the trees the group may use, the one where its members are
    // closest (fewest ports to forward to): small groups stay local
    // rather than all crossing every tree's root.
    let mut best: Option<GroupMft> = None;
    for t in rule.trees_for(fabric, mlid, sl, &switches)? {
        let group = tree::cut(fabric, &t, mlid, sl, members)?;
        if best.as_ref().is_none_or(|b| group.size() < b.size()) {
            best = Some(group);
        }
    }
    best.ok_or_else(|| "no tree".to_string())
}

/// How a group's tree was made safe, if it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Cut from a master tree (or the rule's argument) covering its SL.
    Master,
    /// Its own tree, checked at creation against the kept dependencies
    /// (`per_group`).
    Alone,
    /// OpenSM's kind of tree, which nothing checked: why no checked tree.
    Unchecked(String),
}

/// The MFTs of group `mlid` on `sl` for `members`: cut from the rule's
/// trees where they serve the group, else its own tree checked by
/// `checker` (the engine's kept dependencies, which keep its flood), else
/// OpenSM's kind of tree, unchecked, with the reason. `rule` is None
/// where the engine has none for this routing; `checker` where groups
/// cannot be checked alone. A group served by the rule has no flood of
/// its own kept (an earlier one on another SL is dropped).
pub fn build_group_checked(
    fabric: &Fabric,
    rule: Option<&rules::TreeRule>,
    checker: Option<&mut per_group::GroupChecker>,
    routing: &crate::routing::Routing,
    mlid: u16,
    sl: u8,
    members: &[PortRef],
) -> Result<(GroupMft, Checked), String> {
    match from_rule(fabric, rule, routing, mlid, sl, members) {
        Ok(group) => {
            if let Some(checker) = checker {
                checker.forget(mlid);
            }
            Ok((group, Checked::Master))
        }
        Err(why) => alone_or_unchecked(fabric, checker, routing, mlid, sl, members, why),
    }
}

/// The first step of `build_group_checked`: the group cut from the rule's
/// trees for its SL, or why they do not serve it. Apart so that a caller
/// can make the checker of the second step only when it is needed.
pub fn from_rule(
    fabric: &Fabric,
    rule: Option<&rules::TreeRule>,
    routing: &crate::routing::Routing,
    mlid: u16,
    sl: u8,
    members: &[PortRef],
) -> Result<GroupMft, String> {
    match rule {
        Some(rule) if rule.covers(sl) => build_group(fabric, rule, routing, mlid, sl, members),
        Some(rule) => Err(format!(
            "SL {sl} is not among the SLs whose master trees are checked ({:?})",
            rule.covered_sls()
        )),
        None => Err("no tree rule for this routing".to_string()),
    }
}

/// The second step of `build_group_checked`, for a group the rule's
/// trees do not serve (`why`): its own tree checked alone, else OpenSM's
/// kind of tree with the reason.
pub fn alone_or_unchecked(
    fabric: &Fabric,
    checker: Option<&mut per_group::GroupChecker>,
    routing: &crate::routing::Routing,
    mlid: u16,
    sl: u8,
    members: &[PortRef],
    why: String,
) -> Result<(GroupMft, Checked), String> {
    let why = match checker {
        Some(checker) => match checker.build(fabric, routing, mlid, sl, members) {
            Some(group) => return Ok((group, Checked::Alone)),
            None => format!("{why}, and each tree of its own tried closes a credit loop"),
        },
        None => why,
    };
    let group = opensm_like::opensm_like(fabric, routing, mlid, sl, members)?;
    Ok((group, Checked::Unchecked(why)))
}

#[cfg(test)]
mod per_group_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tree_tests;

//! Multicast trees of our engines inside OpenSM (safe side): per routing
//! pass, the tree rule of the engine for the fabric it routed
//! (`osmroute_core::multicast::rules`); per group, the MFT entries cut
//! from it for the members OpenSM names; for a group the rule's trees do
//! not serve, a tree of its own checked against the pass's kept
//! dependencies (`multicast::per_group`, worked out on the first such
//! group), or OpenSM's kind of tree where none passes. `osm::mcast` is
//! the FFI side.
//!
//! The kept dependencies live as long as the pass's plan: OpenSM rebuilds
//! a group (same MLID) on every membership change and sweep, which
//! replaces its flood, and a group down to fewer than two members drops
//! it (`forget`); the next routing pass starts afresh. A group OpenSM
//! deleted (its last full member left) gets no callback: its flood is dropped
//! when the next group is checked alone, OpenSM telling which MLIDs still
//! have a group.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Mutex;

use osmroute_core::fabric::{Fabric, PortRef};
use osmroute_core::multicast::fat_tree::downward_candidates;
use osmroute_core::multicast::per_group::GroupChecker;
use osmroute_core::multicast::rules::{rule_for, TreeRule};
use osmroute_core::multicast::{alone_or_unchecked, from_rule, Checked, GroupMft};
use osmroute_core::Routing;

/// What one routing pass leaves for the multicast passes that follow it.
pub struct MulticastPlan {
    engine: String,
    rule: Result<TreeRule, String>,
    /// Groups the rule's trees do not serve are checked alone against
    /// these (None until the first such group; an error where the fabric
    /// allows no check at routing time).
    checker: Mutex<Option<Result<GroupChecker, String>>>,
    /// End ports by port GUID (OpenSM names members by port GUID).
    port_by_guid: HashMap<u64, PortRef>,
    /// SLs (a bit each) whose unchecked trees were already warned about.
    warned_sls: AtomicU16,
}

impl MulticastPlan {
    pub fn new(engine: &str, fabric: &Fabric, routing: &Routing) -> Self {
        MulticastPlan {
            engine: engine.to_string(),
            rule: rule_for(engine, fabric, routing),
            checker: Mutex::new(None),
            port_by_guid: fabric.end_ports().map(|(at, p)| (p.guid, at)).collect(),
            warned_sls: AtomicU16::new(0),
        }
    }

    /// Why this routing has no trees of ours (its groups get OpenSM's kind
    /// of tree then).
    pub fn problem(&self) -> Option<&str> {
        self.rule.as_ref().err().map(String::as_str)
    }

    /// The SLs whose groups get checked trees, when that is not all.
    pub fn partial(&self) -> Option<Vec<u8>> {
        let sls = self.rule.as_ref().ok()?.covered_sls();
        (sls.len() < osmroute_core::routing::NUM_SLS).then_some(sls)
    }

    /// Whether the rule covers SL 0 (OpenSM's default SL and the IPoIB
    /// broadcast group's).
    pub fn covers_sl0(&self) -> bool {
        self.rule.as_ref().is_ok_and(|r| r.covers(0))
    }

    /// Warns once per SL when a group gets OpenSM's kind of tree, which
    /// nothing checked (`why`: what the rule and the check alone said).
    fn warn_unchecked(&self, mlid: u16, sl: u8, why: &str) {
        let bit = 1u16 << (sl & 0xf);
        if self.warned_sls.fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            log::debug!("multicast MLID {mlid:#06X}: {why}; OpenSM's kind of tree");
            return;
        }
        log::warn!(
            "multicast MLID {mlid:#06X} (and any other group on SL {sl} that fits no checked tree): {why}; it \
             gets OpenSM's kind of tree, which nothing checks against credit loops"
        );
    }

    /// The checker for groups the rule's trees do not serve, worked out
    /// on first use (it traces unicast's routes once).
    fn checker<'c>(
        &self,
        slot: &'c mut Option<Result<GroupChecker, String>>,
        fabric: &Fabric,
        routing: &Routing,
    ) -> Option<&'c mut GroupChecker> {
        slot.get_or_insert_with(|| {
            let started = std::time::Instant::now();
            // mlid's trees hung down from each top switch turn only as
            // up*/down* unicast does: good candidates on its fat trees.
            let extra = match self.engine.as_str() {
                "mlid" => downward_candidates(fabric).unwrap_or_default(),
                _ => Vec::new(),
            };
            let checker = GroupChecker::new(fabric, routing, self.rule.as_ref().ok(), &extra);
            match &checker {
                Ok(_) => log::info!(
                    "{}: multicast: groups no master tree serves are checked one by one against unicast and the \
                     groups kept so far (set up in {:.1} ms)",
                    self.engine,
                    started.elapsed().as_secs_f64() * 1e3
                ),
                Err(e) => log::warn!(
                    "{}: multicast: groups no master tree serves cannot be checked one by one: {e}",
                    self.engine
                ),
            }
            checker
        })
        .as_mut()
        .ok()
    }

    /// Drops group `mlid`'s kept flood, if it has one (the group is down
    /// to fewer than two members: no forwarding, nothing to keep).
    pub fn forget(&self, mlid: u16) {
        if let Ok(mut slot) = self.checker.lock() {
            if let Some(Ok(checker)) = slot.as_mut() {
                checker.forget(mlid);
            }
        }
    }

    /// The MFT entries of group `mlid` for the member ports `guids`: per
    /// switch node GUID, the ports to set. Cut from the rule's trees
    /// where they serve the group, else a tree of its own checked alone
    /// (after dropping the floods of groups `group_exists` says OpenSM
    /// deleted), else OpenSM's kind of tree (with a warning, once per
    /// SL). Member GUIDs this routing's fabric does not know (ports gone
    /// since the routing pass; the next sweep routes without them) are
    /// left out with a warning rather than failing the group, which
    /// OpenSM would leave without any entries.
    pub fn entries(
        &self,
        fabric: &Fabric,
        routing: &Routing,
        mlid: u16,
        sl: u8,
        guids: &[u64],
        group_exists: &dyn Fn(u16) -> bool,
    ) -> Result<(GroupMft, Vec<(u64, u8)>), String> {
        let mut members: Vec<PortRef> = Vec::with_capacity(guids.len());
        for g in guids {
            match self.port_by_guid.get(g) {
                Some(&at) => members.push(at),
                None => log::warn!(
                    "multicast MLID {mlid:#06X}: member port {g:#018x} is not in the routed subnet; left out until the next sweep"
                ),
            }
        }
        let rule = self.rule.as_ref().ok();
        // OpenSM calls us under its lock, one group at a time; a poisoned
        // lock (a panic caught earlier) still holds a consistent state:
        // every change to it is whole or undone.
        let mut slot = self.checker.lock().unwrap_or_else(|e| e.into_inner());
        let group = match from_rule(fabric, rule, routing, mlid, sl, &members) {
            Ok(group) => {
                // Served by the rule: no flood of its own to keep (a
                // checker not made yet holds none).
                if let Some(Ok(checker)) = slot.as_mut() {
                    checker.forget(mlid);
                }
                group
            }
            Err(why) => {
                let mut checker = self.checker(&mut slot, fabric, routing);
                // Only here, where kept floods can refuse the group: a
                // group the rule serves pays nothing for it.
                if let Some(checker) = checker.as_mut() {
                    for gone in checker.forget_gone(group_exists) {
                        log::info!(
                            "multicast MLID {gone:#06X}: OpenSM no longer has the group (its last full member left); its \
                             kept flood is dropped before MLID {mlid:#06X} is checked"
                        );
                    }
                }
                let (group, how) =
                    alone_or_unchecked(fabric, checker, routing, mlid, sl, &members, why)?;
                match how {
                    Checked::Unchecked(why) => self.warn_unchecked(mlid, sl, &why),
                    Checked::Alone => log::debug!(
                        "multicast MLID {mlid:#06X} (SL {sl}): a tree of its own, checked"
                    ),
                    Checked::Master => {}
                }
                group
            }
        };
        let mut out = Vec::new();
        for s in group.switches() {
            let guid = fabric.switch_node(s).guid;
            out.extend(group.mask(s).iter().map(|p| (guid, p.raw())));
        }
        Ok((group, out))
    }
}

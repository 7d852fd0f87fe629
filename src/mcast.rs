//! Multicast trees of our engines inside OpenSM (safe side): per routing
//! pass, the tree rule of the engine for the fabric it routed
//! (`osmroute_core::multicast::rules`); per group, the MFT entries cut
//! from it for the members OpenSM names, or OpenSM's kind of tree without
//! a rule. `osm::mcast` is the FFI side.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, Ordering};

use osmroute_core::fabric::{Fabric, PortRef};
use osmroute_core::multicast::opensm_like::opensm_like;
use osmroute_core::multicast::rules::{rule_for, TreeRule};
use osmroute_core::multicast::{build_group, GroupMft};
use osmroute_core::Routing;

/// What one routing pass leaves for the multicast passes that follow it.
pub struct MulticastPlan {
    rule: Result<TreeRule, String>,
    /// End ports by port GUID (OpenSM names members by port GUID).
    port_by_guid: HashMap<u64, PortRef>,
    /// SLs (a bit each) whose unchecked trees were already warned about.
    warned_sls: AtomicU16,
}

impl MulticastPlan {
    pub fn new(engine: &str, fabric: &Fabric, routing: &Routing) -> Self {
        MulticastPlan {
            rule: rule_for(engine, fabric, routing),
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

    /// Warns once per SL when a group lands on an SL the checked trees do
    /// not cover, where SL 0 is covered (only groups created on one of
    /// unicast's SLs then land there; without SL 0 the pass's warning
    /// already said so).
    fn warn_unchecked(&self, rule: &TreeRule, mlid: u16, sl: u8) {
        let bit = 1u16 << (sl & 0xf);
        if rule.covers(sl)
            || !rule.covers(0)
            || self.warned_sls.fetch_or(bit, Ordering::Relaxed) & bit != 0
        {
            return;
        }
        log::warn!(
            "multicast MLID {mlid:#06X} (and any other group on SL {sl}): SL {sl} is not among the SLs whose \
             trees are checked ({:?}); it gets OpenSM's kind of tree, which nothing checks against credit loops",
            rule.covered_sls()
        );
    }

    /// The MFT entries of group `mlid` for the member ports `guids`: per
    /// switch node GUID, the ports to set. Member GUIDs this routing's
    /// fabric does not know (ports gone since the routing pass; the next
    /// sweep routes without them) are left out with a warning rather than
    /// failing the group, which OpenSM would leave without any entries.
    pub fn entries(
        &self,
        fabric: &Fabric,
        routing: &Routing,
        mlid: u16,
        sl: u8,
        guids: &[u64],
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
        let group = match &self.rule {
            Ok(rule) => {
                self.warn_unchecked(rule, mlid, sl);
                // A tree of the rule that cannot hold these members (a
                // switch's own port on a top the trees do not reach, say)
                // leaves the group to OpenSM's kind of tree, not without
                // entries.
                build_group(fabric, rule, routing, mlid, sl, &members).or_else(|e| {
                    log::warn!(
                        "multicast MLID {mlid:#06X}: {e}; it gets OpenSM's kind of tree, which nothing checks \
                         against credit loops"
                    );
                    opensm_like(fabric, routing, mlid, sl, &members)
                })?
            }
            Err(_) => opensm_like(fabric, routing, mlid, sl, &members)?,
        };
        let mut out = Vec::new();
        for s in group.switches() {
            let guid = fabric.switch_node(s).guid;
            out.extend(group.mask(s).iter().map(|p| (guid, p.raw())));
        }
        Ok((group, out))
    }
}

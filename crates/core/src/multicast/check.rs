//! Multicast in the credit-loop analysis: every group's flood
//! dependencies added to unicast's, one cycle search over the union, and
//! per group what its tree looks like (members, root, depth, whether each
//! member gets exactly one copy).

use super::flood::{self, Delivery};
use super::GroupMft;
use crate::analysis::credit::{Channel, DependencyGraph};
use crate::fabric::{Fabric, PortRef, SwitchId};
use crate::routing::walk::Walk;
use crate::routing::Routing;

/// One group as the check saw it.
#[derive(Clone, Debug)]
pub struct GroupReport {
    pub mlid: u16,
    pub sl: u8,
    pub members: usize,
    /// See `flood::root_and_depth`.
    pub root: Option<SwitchId>,
    pub depth: u32,
    pub delivery: Delivery,
}

impl GroupReport {
    /// Every member gets exactly one copy of every other member's packet.
    pub fn sound(&self) -> bool {
        self.delivery == Delivery::default()
    }
}

/// One dependency of a cycle: the channel held, and what creates the
/// dependency on the next channel of the cycle.
#[derive(Clone, Debug)]
pub struct CycleStep {
    pub channel: Channel,
    /// "unicast <example route>" and/or "group 0xC001" entries.
    pub made_by: Vec<String>,
}

pub struct MulticastReport {
    pub groups: Vec<GroupReport>,
    /// Dependencies multicast adds to unicast's.
    pub added_dependencies: usize,
    /// A cycle of unicast and multicast dependencies together, if any.
    pub credit_loop: Option<Vec<CycleStep>>,
}

impl MulticastReport {
    pub fn ok(&self) -> bool {
        self.credit_loop.is_none() && self.groups.iter().all(GroupReport::sound)
    }
}

/// Checks `groups` on top of `unicast` (the dependencies of `routing`'s
/// CA-to-CA routes, from `analysis::report::analyze_with_dependencies`).
pub fn check(
    fabric: &Fabric,
    routing: &Routing,
    groups: &[GroupMft],
    unicast: &DependencyGraph<'_>,
) -> MulticastReport {
    let sl2vl = routing.sl2vl.as_ref();
    let mut all = unicast.clone();
    let before = all.edge_count();
    for g in groups {
        flood::for_each_dependency(fabric, sl2vl, g, &mut |a, b| all.add(a, b));
    }
    all.sort();
    let added_dependencies = all.edge_count() - before;
    let credit_loop = all.find_cycle().map(|cycle| {
        let n = cycle.len();
        (0..n)
            .map(|i| {
                let (a, b) = (cycle[i], cycle[(i + 1) % n]);
                let mut made_by = Vec::new();
                if unicast.contains(a, b) {
                    made_by.push(match unicast_route_with(fabric, routing, a, b) {
                        Some(route) => format!("unicast {route}"),
                        None => "unicast".to_string(),
                    });
                }
                for g in groups {
                    let mut found = false;
                    flood::for_each_dependency(fabric, sl2vl, g, &mut |x, y| {
                        found |= x == a && y == b
                    });
                    if found {
                        made_by.push(format!("group {:#06X}", g.mlid));
                    }
                }
                CycleStep {
                    channel: a,
                    made_by,
                }
            })
            .collect()
    });
    let groups = groups
        .iter()
        .map(|g| {
            let (root, depth) =
                flood::root_and_depth(fabric, g).map_or((None, 0), |(r, d)| (Some(r), d));
            GroupReport {
                mlid: g.mlid,
                sl: g.sl,
                members: flood::members(fabric, g).len(),
                root,
                depth,
                delivery: flood::deliveries(fabric, g),
            }
        })
        .collect();
    MulticastReport {
        groups,
        added_dependencies,
        credit_loop,
    }
}

/// Whether `groups` close a credit loop with `unicast` (the cycle search
/// of `check` alone, for checks at routing time).
pub fn closes_loop(
    fabric: &Fabric,
    routing: &Routing,
    groups: &[GroupMft],
    unicast: &DependencyGraph<'_>,
) -> bool {
    let mut all = unicast.clone();
    for g in groups {
        flood::for_each_dependency(fabric, routing.sl2vl.as_ref(), g, &mut |a, b| all.add(a, b));
    }
    all.find_cycle().is_some()
}

/// A CA-to-CA route of `routing` that holds `a` while waiting for `b`, as
/// "source -> LID d" (searched only to explain a cycle found).
fn unicast_route_with(
    fabric: &Fabric,
    routing: &Routing,
    a: Channel,
    b: Channel,
) -> Option<String> {
    for src in fabric.cas() {
        let node = fabric.node(src);
        for (p, port) in (1..node.port_slots()).filter_map(|p| Some((p, node.port(p as u8)?))) {
            let src_port = PortRef::new(src, p as u8);
            for (dlid, owner) in fabric.ca_lids() {
                if owner.node == src {
                    continue;
                }
                let sl = routing.path_sl.sl(port.lid, dlid);
                let mut prev: Option<Channel> = None;
                for hop in Walk::from_port(fabric, &routing.lfts, src_port, dlid) {
                    let Ok(hop) = hop else { break };
                    let here = Channel {
                        switch: hop.switch,
                        port: hop.out_port,
                        vl: flood::vl(
                            routing.sl2vl.as_ref(),
                            hop.switch,
                            hop.in_port,
                            hop.out_port,
                            sl,
                        ),
                    };
                    if prev == Some(a) && here == b {
                        return Some(format!(
                            "{} -> LID {dlid} (SL {sl})",
                            crate::fabric::describe(node)
                        ));
                    }
                    prev = Some(here);
                }
            }
        }
    }
    None
}

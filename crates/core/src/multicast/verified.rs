//! The rule for engines without a structural argument (pssp and layered's
//! VL layering, hxdor's dimension order, sfmin): one master tree per
//! fabric, accepted only after the credit-loop analysis found no cycle in
//! the engine's unicast dependencies together with the whole tree's flood
//! (every switch port of the tree and every host a member) on every SL.
//! Every group is cut from that tree with the same cables, so its
//! dependencies are a subset of the tree's and the one check covers every
//! group, whatever its members.
//!
//! For sfmin on an intact Slim Fly the check cannot fail: its SL2VL tables
//! put a packet from a host on VL 0 and one from a switch on VL 1 for every
//! SL, and unicast never leaves a VL-1 channel but towards a host; the VL-1
//! dependencies are then the tree's own, and one tree alone has no cycle
//! (a cycle would be a closed walk over tree cables that never turns back).
//!
//! Candidates: on a Dragonfly dla's hub tree (`rules`), then trees from
//! the most central switches (least eccentricity, then the lowest GUID),
//! eight at most; the tree from a root is a
//! breadth-first one (each switch hung from its lowest-GUID neighbour one
//! hop nearer the root). The check traces every route, so it is skipped on
//! fabrics with more than `MAX_ROUTES` CA-to-CA routes, which then keep
//! OpenSM's own trees.

use super::check::closes_loop;
use super::tree::{cut, Tree};
use crate::analysis::report::analyze_with_dependencies;
use crate::fabric::{Fabric, PortRef, SwitchId};
use crate::routing::Routing;

/// Largest routing (CA ports times CA LIDs) checked at routing time.
pub const MAX_ROUTES: u64 = 4_000_000;

const CANDIDATE_ROOTS: usize = 8;

/// The first candidate tree with no credit loop on any SL, or why none.
pub fn verified_master(fabric: &Fabric, routing: &Routing) -> Result<Tree, String> {
    let graph = fabric.graph();
    let hosts: Vec<PortRef> = fabric
        .end_ports()
        .map(|(at, _)| at)
        .filter(|at| !fabric.node(at.node).is_switch())
        .collect();
    let routes = hosts.len() as u64 * fabric.ca_lids().count() as u64;
    if routes > MAX_ROUTES {
        return Err(format!(
            "{routes} routes are too many to check a multicast tree against at routing time (at most {MAX_ROUTES})"
        ));
    }
    if !graph.is_connected() {
        return Err("the fabric is in pieces".into());
    }
    let (_, unicast) = analyze_with_dependencies(fabric, routing, &|_, _| {});
    let mut roots: Vec<SwitchId> = graph.ids().collect();
    roots.sort_by_key(|&s| (graph.dist_row(s).iter().copied().max().unwrap_or(0), s));
    let mut tried = Vec::new();
    // On a Dragonfly, dla's hub tree first (its shape keeps tree paths to
    // at most two global cables).
    let hub = super::rules::dragonfly_master(fabric).ok().map(|t| Tree {
        same_cables: true,
        ..t
    });
    let candidates = hub.into_iter().chain(
        roots
            .iter()
            .take(CANDIDATE_ROOTS)
            .map(|&r| breadth_first(fabric, r)),
    );
    for tree in candidates {
        let root = tree.root;
        // The whole tree on every SL at once: groups of any SLs together.
        let whole: Result<Vec<_>, String> = (0..16u8)
            .map(|sl| cut(fabric, &tree, 0xC000, sl, &hosts))
            .collect();
        match whole {
            Ok(whole) if !closes_loop(fabric, routing, &whole, &unicast) => return Ok(tree),
            _ => tried.push(fabric.describe_switch(root)),
        }
    }
    Err(format!(
        "each of {} candidate trees (rooted at {}{}) closes a credit loop with this unicast routing",
        tried.len(),
        tried.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
        if tried.len() > 3 { ", ..." } else { "" }
    ))
}

/// A breadth-first tree from `root` whose groups all use the same cables.
fn breadth_first(fabric: &Fabric, root: SwitchId) -> Tree {
    let graph = fabric.graph();
    let dist = graph.dist_row(root);
    let parent = graph
        .ids()
        .map(|s| {
            (s != root)
                .then(|| {
                    graph
                        .neighbours(s)
                        .iter()
                        .copied()
                        .find(|&t| dist[t] + 1 == dist[s])
                })
                .flatten()
        })
        .collect();
    Tree {
        root,
        parent,
        same_cables: true,
    }
}

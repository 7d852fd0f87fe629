//! The rule for engines without a structural argument (pssp and layered's
//! VL layering, hxdor's dimension order, sfmin), and the extra trees of
//! dla's: master trees accepted one by one, each only after the
//! credit-loop analysis found no cycle in the engine's unicast dependencies
//! together with the whole flood (every host a member) of every tree
//! accepted so far and this one, on every SL. Every group is cut from one
//! of them (chosen by MLID, so groups spread over the trees) with the
//! tree's fixed cables, so its dependencies are a subset of the union and
//! the one check covers every group, whatever its members.
//!
//! For sfmin on an intact Slim Fly the check cannot fail: its SL2VL tables
//! put a packet from a host on VL 0 and one from a switch on VL 1 for every
//! SL, and unicast never leaves a VL-1 channel but towards a host; the VL-1
//! dependencies are then the tree's own, and one tree alone has no cycle
//! (a cycle would be a closed walk over tree cables that never turns back).
//!
//! Candidates: on a Dragonfly dla's hub tree (`rules`), then trees from
//! the most central switches (least eccentricity, then the lowest GUID),
//! eight at most; the tree from a root is a breadth-first one (each switch
//! hung from its lowest-GUID neighbour one hop nearer the root). When none
//! passes on every SL, the first candidate covers the SLs on which it
//! passes alone and which share no VL with the other SLs on any hop (SLs
//! the unicast leaves alone); groups on other SLs get OpenSM's kind of
//! tree (`opensm_like`). pssp and layered leave SL 0 alone on VL 0 when
//! their layering has room (`virtual_layers::MULTICAST_VL`), so SL 0, the
//! IPoIB broadcast group's, is among those SLs. The check traces every route, so it is skipped on
//! fabrics with more than `MAX_ROUTES` CA-to-CA routes, which then keep
//! OpenSM's own trees.

use super::flood::for_each_dependency;
use super::tree::{cut, Tree};
use crate::analysis::credit::DependencyGraph;
use crate::analysis::report::analyze_with_dependencies;
use crate::fabric::{Fabric, PortNum, PortRef, SwitchId};
use crate::routing::Routing;

/// Largest routing (CA ports times CA LIDs) checked at routing time.
pub const MAX_ROUTES: u64 = 4_000_000;

const CANDIDATE_ROOTS: usize = 8;

/// Whether `fabric` is small enough to check trees at routing time.
pub fn checkable(fabric: &Fabric) -> bool {
    routes(fabric) <= MAX_ROUTES
}

/// CA-to-CA routes the check traces.
fn routes(fabric: &Fabric) -> u64 {
    fabric.cas().count() as u64 * fabric.ca_lids().count() as u64
}

/// Every SL (a bit per SL).
pub const ALL_SLS: u16 = 0xffff;

/// Most master trees a fabric gets (groups are spread over them by MLID).
const MAX_TREES: usize = 4;

/// Master trees whose floods together with unicast's have no credit loop
/// on any SL: `first` (if given) and the candidates, each taken when the
/// union of unicast and every tree taken so far stays free of cycles, up
/// to `MAX_TREES`, with the SLs they were checked for (all 16). When no
/// tree passes on every SL: the first candidate alone and the SLs on which
/// it passes (an SL no unicast route uses, say); or why none.
pub fn verified_masters(
    fabric: &Fabric,
    routing: &Routing,
    first: Option<Tree>,
) -> Result<(Vec<Tree>, u16), String> {
    let graph = fabric.graph();
    let hosts: Vec<PortRef> = fabric
        .end_ports()
        .map(|(at, _)| at)
        .filter(|at| !fabric.node(at.node).is_switch())
        .collect();
    let routes = routes(fabric);
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
    // On a Dragonfly, dla's hub tree early (its shape keeps tree paths to
    // at most two global cables).
    let hub = match first {
        Some(_) => None,
        None => super::rules::dragonfly_master(fabric).ok(),
    };
    let candidates: Vec<Tree> = first
        .into_iter()
        .chain(hub)
        .chain(
            roots
                .iter()
                .take(CANDIDATE_ROOTS)
                .map(|&r| breadth_first(fabric, r)),
        )
        .map(|t| Tree {
            same_cables: true,
            ..t
        })
        .collect();
    let (taken, tried) =
        take_while_acyclic(fabric, routing, &candidates, &hosts, &unicast, ALL_SLS);
    if !taken.is_empty() {
        return Ok((taken, ALL_SLS));
    }
    if let Some(tree) = candidates.first().cloned() {
        let sls = (0..16u8)
            .filter(|&sl| {
                let mut with = unicast.clone();
                cut(fabric, &tree, 0xC000, sl, &hosts).is_ok_and(|whole| {
                    for_each_dependency(fabric, routing.sl2vl.as_ref(), &whole, &mut |a, b| {
                        with.add(a, b)
                    });
                    with.find_cycle().is_none()
                })
            })
            .fold(0u16, |mask, sl| mask | 1 << sl);
        let sls = apart_from_the_rest(fabric, routing, sls);
        if sls != 0 {
            // Trees whose floods on the covered SLs, all at once, keep
            // unicast acyclic: several, so that groups spread over them as
            // on every SL. (Each SL alone passed with the first tree; should
            // their union not, that tree alone, checked SL by SL, stays.)
            let (taken, _) =
                take_while_acyclic(fabric, routing, &candidates, &hosts, &unicast, sls);
            if !taken.is_empty() {
                return Ok((taken, sls));
            }
            return Ok((vec![tree], sls));
        }
    }
    Err(format!(
        "each of {} candidate trees (rooted at {}{}) closes a credit loop with this unicast routing",
        tried.len(),
        tried.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
        if tried.len() > 3 { ", ..." } else { "" }
    ))
}

/// The SLs of `sls` that no other SL shares a VL with on any switch hop:
/// groups on the SLs left out get unchecked trees, whose dependencies must
/// not land on the VLs the checked ones were checked on. Repeated until
/// stable (an SL dropped joins the unchecked ones).
fn apart_from_the_rest(fabric: &Fabric, routing: &Routing, mut sls: u16) -> u16 {
    let Some(tables) = routing.sl2vl.as_ref() else {
        return if sls == ALL_SLS { sls } else { 0 }; // one VL for all
    };
    loop {
        let before = sls;
        for s in fabric.switch_ids() {
            let ports = tables.switch_ports(s) as u8;
            for (i, o) in (0..ports).flat_map(|i| (0..ports).map(move |o| (i, o))) {
                let t = tables.switch_table(s, PortNum::new(i), PortNum::new(o));
                let shared = (0..16)
                    .filter(|&c| sls & (1 << c) != 0)
                    .filter(|&c| (0..16).any(|u| sls & (1 << u) == 0 && t[u] == t[c]))
                    .fold(0u16, |m, c| m | 1 << c);
                sls &= !shared;
            }
        }
        if sls == before {
            return sls;
        }
    }
}

/// Of `candidates` in order, those whose whole floods on `sls` keep the
/// union with `unicast` and the trees taken before free of cycles, up to
/// `MAX_TREES`; and the roots of those refused.
fn take_while_acyclic<'a>(
    fabric: &'a Fabric,
    routing: &Routing,
    candidates: &[Tree],
    hosts: &[PortRef],
    unicast: &DependencyGraph<'a>,
    sls: u16,
) -> (Vec<Tree>, Vec<String>) {
    let (mut taken, mut tried) = (Vec::new(), Vec::new());
    let mut union = unicast.clone();
    for tree in candidates {
        let mut with = union.clone();
        let fits = add_whole_tree(fabric, routing, tree, hosts, sls, &mut with).is_ok()
            && with.find_cycle().is_none();
        if fits {
            union = with;
            taken.push(tree.clone());
            if taken.len() == MAX_TREES {
                break;
            }
        } else {
            tried.push(fabric.describe_switch(tree.root));
        }
    }
    (taken, tried)
}

/// The flood dependencies of `tree` with every host a member, on the SLs
/// of `sls` at once (groups of any of them may share it).
fn add_whole_tree<'a>(
    fabric: &'a Fabric,
    routing: &Routing,
    tree: &Tree,
    hosts: &[PortRef],
    sls: u16,
    graph: &mut DependencyGraph<'a>,
) -> Result<(), String> {
    for sl in (0..16u8).filter(|&sl| sls & (1 << sl) != 0) {
        let whole = cut(fabric, tree, 0xC000, sl, hosts)?;
        for_each_dependency(fabric, routing.sl2vl.as_ref(), &whole, &mut |a, b| {
            graph.add(a, b)
        });
    }
    Ok(())
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

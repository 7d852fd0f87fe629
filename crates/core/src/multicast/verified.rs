//! The rule for engines without a structural argument (pssp, layered and
//! mlid's VL layering, hxdor's dimension order, sfmin), and the extra
//! trees of dla's: master trees accepted one by one, each only after the
//! credit-loop analysis found no cycle in the engine's unicast dependencies
//! together with the whole flood (every end port a member) of every tree
//! accepted so far and this one. Every group is cut from one of the trees
//! its SL may use (the one it forwards to the fewest ports on, MLID order
//! on ties, so groups spread over them) with the
//! tree's fixed cables, so its dependencies are a subset of the union and
//! the one check covers every group, whatever its members.
//!
//! Trees are taken for every SL at once first, then SL by SL: SLs that map
//! to the same VL on every hop form a class and share their trees (SL 0's
//! class first), and a class takes the candidates whose flood on its VLs
//! keeps the union acyclic. Groups of a class left without a tree are
//! checked one by one (`per_group`), and get OpenSM's kind of tree
//! (`opensm_like`), unchecked, where none of theirs passes; a class that
//! shares a VL with one on some hop is left without too, so unchecked
//! trees never add dependencies to a VL a master tree was checked on.
//!
//! For sfmin on an intact Slim Fly the check cannot fail: its SL2VL tables
//! put a packet from a host on VL 0 and one from a switch on VL 1 for every
//! SL, and unicast never leaves a VL-1 channel but towards a host; the VL-1
//! dependencies are then the tree's own, and one tree alone has no cycle
//! (a cycle would be a closed walk over tree cables that never turns back).
//! pssp and layered keep VL 0 for SL 0 alone when their layering has room
//! (`virtual_layers::MULTICAST_VL`): there too only trees meet. And
//! where there is no room, their layering places unicast around a
//! candidate's turns (`layering_seeds`, `virtual_layers::MULTICAST_TREE`),
//! the first one that a layer on SL 0 keeps: that tree passes on SL 0 by
//! construction, and the check, trying the candidates in the same order,
//! finds it (or an earlier one that fits).
//!
//! Candidates: on a Dragonfly dla's hub tree (`rules`), then trees from
//! the most central switches (least eccentricity, then the lowest GUID),
//! eight at most; the tree from a root is a breadth-first one (each switch
//! hung from its lowest-GUID neighbour one hop nearer the root). The check
//! traces every route, so it is skipped on fabrics with more than
//! `MAX_ROUTES` routes to trace, which then keep OpenSM's own trees.

use super::flood::for_each_dependency;
use super::kept::KeptDependencies;
use super::rules::MasterTrees;
use super::tree::{attachment, cut, Tree};
use crate::analysis::credit::Channel;
use crate::analysis::report::analyze_with_dependencies;
use crate::fabric::{Fabric, PortRef, SwitchId};
use crate::routing::{Routing, ALL_VL0, NUM_SLS};

/// Largest routing checked at routing time, in routes traced: switches
/// with CAs times CA LIDs (the analysis traces one route per switch and
/// LID where the switch's CAs share their SL2VL rows). The 5,256-host
/// Dragonfly a=12, h=6, p=6 (4.6 M) takes dla's rule 0.8 s, pssp's 2 s
/// offline; the 16,512-host one (34 M) is left out.
pub const MAX_ROUTES: u64 = 10_000_000;

const CANDIDATE_ROOTS: usize = 8;

/// Whether `fabric` is small enough to check trees at routing time.
pub fn checkable(fabric: &Fabric) -> bool {
    routes(fabric) <= MAX_ROUTES
}

/// Routes the check traces.
fn routes(fabric: &Fabric) -> u64 {
    let graph = fabric.graph();
    let sources = graph.ids().filter(|&s| graph.hosts(s) > 0).count() as u64;
    sources * fabric.ca_lids().count() as u64
}

/// Most master trees the groups of one SL are spread over.
const MAX_TREES: usize = 4;

/// Most master trees in all (a bit each in `MasterTrees::per_sl`).
const MAX_DISTINCT: usize = 8;

/// Master trees whose floods, each on the SLs that may use it, close no
/// credit loop with unicast's dependencies; or why there are none.
pub fn verified_masters(
    fabric: &Fabric,
    routing: &Routing,
    first: Option<Tree>,
) -> Result<MasterTrees, String> {
    let union = unicast_union(fabric, routing)?;
    let candidates = candidates(fabric, first);
    let mut taking = Taking {
        fabric,
        routing,
        candidates: &candidates,
        everyone: everyone(fabric),
        union,
        taken: Vec::new(),
        per_sl: [0; NUM_SLS],
    };
    let class = sl_classes(routing);
    let mut reps: Vec<u8> = (0..NUM_SLS as u8)
        .filter(|&sl| class[sl as usize] == sl)
        .collect();
    taking.take(&reps, &class);
    // SL 0's class first: the default SL and the IPoIB broadcast group's.
    reps.sort_by_key(|&r| (r != class[0], r));
    for &rep in &reps {
        taking.take(&[rep], &class);
    }
    let per_sl = apart_from_the_rest(routing, taking.per_sl);
    if per_sl.iter().all(|&t| t == 0) {
        return Err(format!(
            "each of {} candidate trees (rooted at {}{}) closes a credit loop with this unicast routing on every SL",
            candidates.len(),
            candidates
                .iter()
                .take(3)
                .map(|t| fabric.describe_switch(t.root))
                .collect::<Vec<_>>()
                .join(", "),
            if candidates.len() > 3 { ", ..." } else { "" }
        ));
    }
    Ok(MasterTrees {
        trees: taking
            .taken
            .iter()
            .map(|&i| candidates[i].clone())
            .collect(),
        per_sl,
    })
}

/// Unicast's dependencies, ready for trees to be added; or why trees
/// cannot be checked against them at routing time.
pub(super) fn unicast_union(
    fabric: &Fabric,
    routing: &Routing,
) -> Result<KeptDependencies, String> {
    let routes = routes(fabric);
    if routes > MAX_ROUTES {
        return Err(format!(
            "{routes} routes are too many to check a multicast tree against at routing time (at most {MAX_ROUTES})"
        ));
    }
    if !fabric.graph().is_connected() {
        return Err("the fabric is in pieces".into());
    }
    let (_, unicast) = analyze_with_dependencies(fabric, routing, &|_, _| {});
    KeptDependencies::from_unicast(&unicast)
        .ok_or_else(|| "unicast alone closes a credit loop".to_string())
}

/// Most trees of a family (a bit each in `MasterTrees::per_sl`).
const MAX_FAMILY: usize = 32;

/// A family of trees that need not span the fabric (mlid's trees hung
/// down from each top switch), beside trees `kept` already checked on
/// some SL classes: each family tree is taken on the classes `kept` has
/// no tree for, where its whole flood (every end port behind a switch it
/// reaches a member) keeps unicast plus the kept floods plus every flood
/// taken so far free of cycles, SL 0's class first, every tree tried on
/// every such class. A group is cut from one whose switches hold all its
/// members, so its dependencies are a subset of the union checked. At
/// most `MAX_FAMILY` trees in all.
pub fn verified_family(
    fabric: &Fabric,
    routing: &Routing,
    kept: MasterTrees,
    candidates: &[Tree],
) -> Result<MasterTrees, String> {
    let mut union = unicast_union(fabric, routing)?;
    let everyone = everyone(fabric);
    let class = sl_classes(routing);
    let mut reps: Vec<u8> = (0..NUM_SLS as u8)
        .filter(|&sl| class[sl as usize] == sl)
        .collect();
    reps.sort_by_key(|&r| (r != class[0], r));
    // The kept floods first, on the classes they were checked on (a
    // subset of what their check accepted: they fit).
    if !add_kept_floods(fabric, routing, &mut union, &kept, &class, &everyone) {
        return Err("the trees checked before close a credit loop when added again".into());
    }
    let trees: Vec<Tree> = kept
        .trees
        .iter()
        .cloned()
        .chain(candidates.iter().cloned())
        .take(MAX_FAMILY)
        .collect();
    let mut per_sl = kept.per_sl;
    for &rep in reps.iter().filter(|&&r| kept.per_sl[r as usize] == 0) {
        for (i, tree) in trees.iter().enumerate().skip(kept.trees.len()) {
            let fits = whole_flood(fabric, routing, tree, &everyone, &[rep])
                .is_ok_and(|deps| union.try_add(fabric.graph(), &deps));
            if fits {
                for sl in (0..NUM_SLS).filter(|&sl| class[sl] == rep) {
                    per_sl[sl] |= 1 << i;
                }
            }
        }
    }
    let per_sl = apart_from_the_rest(routing, per_sl);
    let used = per_sl.iter().fold(0u32, |a, &b| a | b);
    if used == 0 {
        return Err(format!(
            "each of {} trees closes a credit loop with this unicast routing on every SL",
            trees.len()
        ));
    }
    // Renumbered to the trees taken.
    let taken: Vec<usize> = (0..trees.len()).filter(|&i| used & (1 << i) != 0).collect();
    Ok(MasterTrees {
        trees: taken.iter().map(|&i| trees[i].clone()).collect(),
        per_sl: per_sl.map(|m| {
            taken
                .iter()
                .enumerate()
                .filter(|&(_, &i)| m & (1 << i) != 0)
                .fold(0u32, |a, (bit, _)| a | 1 << bit)
        }),
    })
}

/// Adds to `union` the whole flood of every tree of `kept`, on the SL
/// classes (by their representative in `class`) it was kept for; false
/// where together they close a cycle (they were checked on the same
/// unicast, so they fit unless that changed).
pub(super) fn add_kept_floods(
    fabric: &Fabric,
    routing: &Routing,
    union: &mut KeptDependencies,
    kept: &MasterTrees,
    class: &[u8; NUM_SLS],
    everyone: &[PortRef],
) -> bool {
    kept.trees.iter().enumerate().all(|(i, tree)| {
        let on: Vec<u8> = (0..NUM_SLS as u8)
            .filter(|&sl| class[sl as usize] == sl && kept.per_sl[sl as usize] & (1 << i) != 0)
            .collect();
        on.is_empty()
            || whole_flood(fabric, routing, tree, everyone, &on)
                .is_ok_and(|deps| union.try_add(fabric.graph(), &deps))
    })
}

/// Per SL, the lowest SL that maps to the same VL on every hop (its
/// class): groups of one class make the same dependencies.
pub(super) fn sl_classes(routing: &Routing) -> [u8; NUM_SLS] {
    let tables = routing
        .sl2vl
        .as_ref()
        .map_or(&[ALL_VL0][..], |t| t.tables());
    std::array::from_fn(|sl| {
        (0..=sl)
            .find(|&c| tables.iter().all(|t| t[c] == t[sl]))
            .unwrap_or(sl) as u8
    })
}

/// The candidates taken so far and the union they were checked in.
struct Taking<'a> {
    fabric: &'a Fabric,
    routing: &'a Routing,
    candidates: &'a [Tree],
    everyone: Vec<PortRef>,
    union: KeptDependencies,
    /// Candidates (by index) taken, in the order of their bits.
    taken: Vec<usize>,
    per_sl: [u32; NUM_SLS],
}

impl Taking<'_> {
    /// Takes candidates, in order, for the classes of the SLs `reps` all
    /// at once, while their floods on those SLs keep the union acyclic: up
    /// to `MAX_TREES` per SL, `MAX_DISTINCT` in all.
    fn take(&mut self, reps: &[u8], class: &[u8; NUM_SLS]) {
        let of_reps: Vec<usize> = (0..NUM_SLS)
            .filter(|&sl| reps.contains(&class[sl]))
            .collect();
        for (i, tree) in self.candidates.iter().enumerate() {
            let bit = match self.taken.iter().position(|&t| t == i) {
                Some(b) => b,
                None if self.taken.len() < MAX_DISTINCT => self.taken.len(),
                None => continue,
            };
            let room = reps
                .iter()
                .all(|&r| (self.per_sl[r as usize].count_ones() as usize) < MAX_TREES);
            if !room {
                return;
            }
            if reps
                .iter()
                .any(|&r| self.per_sl[r as usize] & (1 << bit) != 0)
            {
                continue;
            }
            let fits = whole_flood(self.fabric, self.routing, tree, &self.everyone, reps)
                .is_ok_and(|deps| self.union.try_add(self.fabric.graph(), &deps));
            if fits {
                if bit == self.taken.len() {
                    self.taken.push(i);
                }
                for &sl in &of_reps {
                    self.per_sl[sl] |= 1 << bit;
                }
            }
        }
    }
}

/// `per_sl` without the trees of SLs that share a VL on some hop with an
/// SL left without any: those SLs' groups get unchecked trees, whose
/// dependencies must not land on a VL a check covered. Repeated until
/// stable (an SL dropped joins the unchecked ones).
pub(super) fn apart_from_the_rest(routing: &Routing, mut per_sl: [u32; NUM_SLS]) -> [u32; NUM_SLS] {
    let tables = routing
        .sl2vl
        .as_ref()
        .map_or(&[ALL_VL0][..], |t| t.tables());
    loop {
        let mut changed = false;
        for c in 0..NUM_SLS {
            let shares = per_sl[c] != 0
                && (0..NUM_SLS).any(|u| per_sl[u] == 0 && tables.iter().any(|t| t[u] == t[c]));
            if shares {
                per_sl[c] = 0;
                changed = true;
            }
        }
        if !changed {
            return per_sl;
        }
    }
}

/// The flood dependencies of `tree` with every end port a member, on the
/// SLs `sls` at once (groups of any of them may share it).
fn whole_flood(
    fabric: &Fabric,
    routing: &Routing,
    tree: &Tree,
    everyone: &[PortRef],
    sls: &[u8],
) -> Result<Vec<(Channel, Channel)>, String> {
    // The end ports behind the tree's switches: all of them for a tree
    // that spans the fabric.
    let within: Vec<PortRef> = everyone
        .iter()
        .copied()
        .filter(|&m| attachment(fabric, m).is_some_and(|(s, _)| tree.contains(s)))
        .collect();
    let mut deps = Vec::new();
    for &sl in sls {
        let whole = cut(fabric, tree, super::MLID_START, sl, &within)?;
        for_each_dependency(fabric, routing.sl2vl.as_ref(), &whole, &mut |a, b| {
            deps.push((a, b))
        });
    }
    Ok(deps)
}

/// Every end port a member (CA ports, and switches' port 0, which
/// in-band management joins groups with): the whole flood of a tree,
/// whose dependencies include those of any group cut from it.
pub(super) fn everyone(fabric: &Fabric) -> Vec<PortRef> {
    fabric.end_ports().map(|(at, _)| at).collect()
}

/// The master trees to try, in order, all with fixed cables: `first`
/// (else dla's hub tree on a Dragonfly, whose shape keeps tree paths to
/// at most two global cables), then breadth-first trees from the most
/// central switches (least eccentricity, then the lowest GUID).
pub(super) fn candidates(fabric: &Fabric, first: Option<Tree>) -> Vec<Tree> {
    let graph = fabric.graph();
    let mut roots: Vec<SwitchId> = graph.ids().collect();
    roots.sort_by_key(|&s| (graph.dist_row(s).iter().copied().max().unwrap_or(0), s));
    let hub = match first {
        Some(_) => None,
        None => super::rules::dragonfly_master(fabric).ok(),
    };
    first
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
        .collect()
}

/// Per candidate tree, in the order the check tries them, the
/// dependencies (switch-graph channel numbers on one VL) of its whole
/// flood: what the VL layering places unicast paths around
/// (`deadlock::virtual_layers`), so that a tree it keeps passes the check
/// on the SLs of the layers that kept it by construction. Seeds are made
/// as they are taken (each is a flood of the whole fabric); none for a
/// fabric in pieces.
pub fn layering_seeds(fabric: &Fabric) -> impl Iterator<Item = Vec<(u32, u32)>> + '_ {
    let trees = match fabric.graph().is_connected() {
        true => candidates(fabric, None),
        false => Vec::new(),
    };
    trees
        .into_iter()
        .map_while(move |tree| layering_seed(fabric, &tree))
}

/// The whole flood of `tree` as a layering seed (see `layering_seeds`).
fn layering_seed(fabric: &Fabric, tree: &Tree) -> Option<Vec<(u32, u32)>> {
    let graph = fabric.graph();
    let whole = cut(fabric, tree, super::MLID_START, 0, &everyone(fabric)).ok()?;
    let mut pairs = Vec::new();
    for_each_dependency(fabric, None, &whole, &mut |a, b| {
        pairs.push((
            graph.channel(a.switch, a.port) as u32,
            graph.channel(b.switch, b.port) as u32,
        ))
    });
    pairs.sort_unstable();
    pairs.dedup();
    Some(pairs)
}

/// A breadth-first tree from `root` whose groups all use the same cables.
pub(super) fn breadth_first(fabric: &Fabric, root: SwitchId) -> Tree {
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

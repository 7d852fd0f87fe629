//! Per engine family, the trees its groups are cut from and why those add
//! no credit loop to the engine's unicast routing.
//!
//! - **Dragonfly (`dla`, intact)**: the hub tree (plus up to three more
//!   trees where the check of `verified` accepts them). Group 0 (the
//!   group of the lowest-GUID switch) is the hub: its lowest switch `R` is
//!   the root and every other switch of group 0 hangs off `R`; every other
//!   group hangs off group 0 by a global cable between them, its
//!   entry switch `E` being the parent of the rest of its group. dla's
//!   unicast routes are local (VL 0) -> global (VL 0) -> local (VL 1) -> CA,
//!   so a unicast dependency never leads from a VL-1 local channel or from
//!   a channel into a non-hub group back to anything but a CA. The tree's
//!   own turns are, in order along any tree path: leaf switch -> `E` (VL 0),
//!   `E` -> group 0 (global), group-0 switch -> `R` (VL 1 after a global
//!   hop, else VL 0), `R` -> group-0 switch (VL 0), group-0 switch -> `E'`
//!   (global), `E'` -> its group (VL 1 or 0) -> CA. Every dependency,
//!   unicast's or the tree's, goes forward in this order or into a channel
//!   unicast only leaves towards a CA; no cycle can close. It needs the
//!   intact shape (fully connected groups, one or more global cables
//!   between every pair of groups), since that is what keeps dla's unicast
//!   minimal; damaged fabrics get a tree checked at routing time
//!   (`verified`), or OpenSM's own when every candidate closes a loop.
//! - **Fat trees (`mlid`)**: per group a tree hung down from a top
//!   switch, through one turning switch to the other tops where hosts sit
//!   on two or more (`fat_tree` gives the argument), for the SLs whose VL
//!   carries only up*/down* unicast; other mlid routings (paths on virtual
//!   layers) get checked trees: spanning ones where one passes on SL 0,
//!   with trees hung down from each top switch beside them on the SLs they
//!   left out, else those trees alone, which turn only as up*/down*
//!   unicast does (`fat_tree::downward_candidates`). A spanning tree
//!   passes on SL 0 there only with VL 0 kept for it (`mlid.multicast_vl`,
//!   on by default): Aggregation Nodes on line chips of two directors
//!   reach each other only down through a leaf and up again, and the
//!   layering puts such turns from one director into the other on unicast
//!   layer 0 at every leaf; a tree that joins both directors turns through
//!   a leaf both ways, and with layer 0's up*/down* routes that closes a
//!   cycle through the leaf's two line chips. Placing unicast around such
//!   a tree instead takes a third layer too (the turning paths of both
//!   directions close cycles among themselves): a VL more either way.
//! - pssp, layered, sfmin, hxdor: master trees checked at routing time
//!   against the engine's unicast (`verified`), on every SL or, failing
//!   that, on the SLs where the check passes.

use super::fat_tree::{downward_candidates, fat_tree_rule, FatTreeLevels};
use super::tree::{spread, Tree};
use super::verified::{verified_family, verified_masters};
use crate::fabric::{Fabric, SwitchId};
use crate::routing::{Routing, NUM_SLS};
use crate::topology::dragonfly::discover_groups;

/// How an engine's groups get their trees.
#[derive(Clone, Debug)]
pub enum TreeRule {
    /// Master trees, each group cut from the one it forwards to the fewest
    /// ports on among those its SL may use (`build_group`).
    Masters(MasterTrees),
    /// Per group a tree hung down from a top switch of a fat tree.
    FatTree(FatTreeLevels),
}

/// Master trees, and per SL the ones its groups may be cut from (a bit
/// per tree): on an SL without any, groups get OpenSM's kind of tree
/// (`opensm_like`), which nothing checks.
#[derive(Clone, Debug)]
pub struct MasterTrees {
    pub trees: Vec<Tree>,
    pub per_sl: [u32; NUM_SLS],
}

impl MasterTrees {
    /// No tree on any SL.
    pub fn none() -> Self {
        MasterTrees {
            trees: Vec::new(),
            per_sl: [0; NUM_SLS],
        }
    }

    /// Every tree on every SL (at most 32 trees).
    pub fn everywhere(trees: Vec<Tree>) -> Self {
        let all = (1u64 << trees.len().min(32)) - 1;
        MasterTrees {
            trees,
            per_sl: [all as u32; NUM_SLS],
        }
    }
}

/// The rule for `engine`'s `routing` of `fabric`, or why it has none
/// (then OpenSM's own trees are used).
pub fn rule_for(engine: &str, fabric: &Fabric, routing: &Routing) -> Result<TreeRule, String> {
    let why = |e: String| {
        format!(
            "{e}; each group then gets a tree of its own checked against unicast and the groups kept so far where \
             the fabric allows and one passes, else OpenSM's kind of tree, which nothing checks against credit loops{}",
            remedy(engine)
        )
    };
    match engine {
        // Intact: the hub tree, and more trees where the check accepts
        // them. Damaged: no structural argument, but checked trees may do.
        "dla" => match dragonfly_master(fabric) {
            Ok(hub) if !super::verified::checkable(fabric) => {
                Ok(TreeRule::Masters(MasterTrees::everywhere(vec![hub])))
            }
            Ok(hub) => verified_masters(fabric, routing, Some(hub)).map(TreeRule::Masters),
            Err(why) => verified_masters(fabric, routing, None)
                .map(TreeRule::Masters)
                .map_err(|e| format!("{why}; {e}")),
        },
        // Up*/down* on the VL of SL 0 (the default and the broadcast
        // group's): the argument. Where paths are on virtual layers:
        // the spanning candidates of `verified` where one passes on SL 0
        // (every group fits them; with `mlid.multicast_vl`, the default,
        // VL 0 holds only trees and they pass by construction), and trees
        // hung down from each top switch checked beside them on the SL
        // classes they left without a tree; else those trees alone (and
        // the same grown to every switch).
        "mlid" => match fat_tree_rule(fabric, routing) {
            Ok(levels) if levels.covers(0) => Ok(TreeRule::FatTree(levels)),
            other => {
                let why = other.err();
                let downward = downward_candidates(fabric);
                match verified_masters(fabric, routing, None) {
                    Ok(m) if m.per_sl[0] != 0 => {
                        let beside = match &downward {
                            Ok(c) if m.per_sl.contains(&0) => {
                                verified_family(fabric, routing, m.clone(), c).ok()
                            }
                            _ => None,
                        };
                        Ok(TreeRule::Masters(beside.unwrap_or(m)))
                    }
                    spanning => {
                        let alone = downward.and_then(|c| {
                            verified_family(fabric, routing, MasterTrees::none(), &c)
                        });
                        match alone {
                            Ok(m) if m.per_sl[0] != 0 => Ok(TreeRule::Masters(m)),
                            _ => spanning.map(TreeRule::Masters).map_err(|e| match &why {
                                Some(why) => format!("{why}; {e}"),
                                None => e,
                            }),
                        }
                    }
                }
            }
        },
        "pssp" | "layered" | "sfmin" | "hxdor" => {
            verified_masters(fabric, routing, None).map(TreeRule::Masters)
        }
        other => Err(format!("{other} has no multicast tree rule")),
    }
    .map_err(why)
}

/// What gives the groups of `engine`'s routing checked trees where no
/// tree passes: VL 0 for multicast alone.
fn remedy(engine: &str) -> String {
    match engine {
        "pssp" | "layered" => format!(
            " (one VL more than the layering needs, through max_op_vls or {engine}.max_vls, keeps VL 0 for \
             SL 0: {engine}.multicast_vl)"
        ),
        "mlid" => " (mlid.multicast_vl TRUE keeps VL 0 for SL 0, one VL more)".to_string(),
        _ => String::new(),
    }
}

impl TreeRule {
    /// The trees group `mlid` on `sl` with members on `switches` may be
    /// cut from, the one its MLID picks first (groups spread over equal
    /// choices).
    pub fn trees_for(
        &self,
        fabric: &Fabric,
        mlid: u16,
        sl: u8,
        switches: &[SwitchId],
    ) -> Result<Vec<Tree>, String> {
        match self {
            TreeRule::Masters(m) => {
                let usable = m.per_sl[sl as usize & 0xf];
                // Trees that do not span the fabric (mlid's hung down from
                // a top) serve only groups whose switches they hold.
                let mut allowed: Vec<Tree> = m
                    .trees
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| usable & (1 << i) != 0)
                    .filter(|(_, t)| switches.iter().all(|&s| t.contains(s)))
                    .map(|(_, t)| t.clone())
                    .collect();
                if allowed.is_empty() {
                    return Err(if usable == 0 {
                        format!("no master tree for SL {sl}")
                    } else {
                        format!("no tree checked on SL {sl} holds every member's switch")
                    });
                }
                let first = spread(mlid, 0x5eed) % allowed.len();
                allowed.rotate_left(first);
                Ok(allowed)
            }
            TreeRule::FatTree(levels) => {
                Ok(vec![levels.tree_for(fabric.graph(), mlid, switches)?])
            }
        }
    }

    /// Whether groups on `sl` get a tree the rule covers.
    pub fn covers(&self, sl: u8) -> bool {
        match self {
            TreeRule::Masters(m) => m.per_sl[sl as usize & 0xf] != 0,
            TreeRule::FatTree(levels) => levels.covers(sl),
        }
    }

    /// The SLs covered, for messages.
    pub fn covered_sls(&self) -> Vec<u8> {
        (0..NUM_SLS as u8).filter(|&sl| self.covers(sl)).collect()
    }
}

/// The Dragonfly master tree described in the module comment.
pub fn dragonfly_master(fabric: &Fabric) -> Result<Tree, String> {
    let graph = fabric.graph();
    let groups = discover_groups(graph).map_err(|e| {
        format!("not an intact Dragonfly ({e:?}); no loop-free tree argument for it")
    })?;
    let n = graph.switch_count();
    let group_of = &groups.of_switch;
    for members in &groups.members {
        for (i, &a) in members.iter().enumerate() {
            for &b in &members[i + 1..] {
                if graph.bundle(a, b).is_empty() {
                    return Err(format!(
                        "{} and {} are in one group but not cabled: a damaged Dragonfly, for which dla's \
                         unicast is not minimal",
                        fabric.describe_switch(a),
                        fabric.describe_switch(b)
                    ));
                }
            }
        }
    }
    let hub = group_of[0];
    let root = groups.members[hub][0];
    let mut parent: Vec<Option<SwitchId>> = vec![None; n];
    for &s in groups.members[hub].iter().filter(|&&s| s != root) {
        parent[s] = Some(root);
    }
    for (g, members) in groups.members.iter().enumerate().filter(|(g, _)| *g != hub) {
        // The entry: the first switch (by GUID) with a cable to the hub.
        let entry = members.iter().find_map(|&s| {
            graph
                .neighbours(s)
                .iter()
                .find(|&&t| group_of[t] == hub)
                .map(|&t| (s, t))
        });
        let Some((entry, into)) = entry else {
            return Err(format!(
                "group {g} has no global cable to group {hub}: a damaged Dragonfly, for which dla's unicast \
                 is not minimal"
            ));
        };
        parent[entry] = Some(into);
        for &s in members.iter().filter(|&&s| s != entry) {
            parent[s] = Some(entry);
        }
    }
    // Every other pair of groups must be joined too, or dla detours.
    let g = groups.members.len();
    let mut joined = vec![false; g * g];
    for s in graph.ids() {
        for &t in graph.neighbours(s) {
            joined[group_of[s] * g + group_of[t]] = true;
        }
    }
    if let Some(pair) = (0..g * g).find(|&i| i / g != i % g && !joined[i]) {
        return Err(format!(
            "groups {} and {} have no global cable between them: dla detours there, and the tree \
             argument needs minimal unicast",
            pair / g,
            pair % g
        ));
    }
    Ok(Tree {
        root,
        parent,
        same_cables: false,
    })
}

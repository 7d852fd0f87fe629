//! Trees for fat trees routed up*/down* (mlid), with an argument rather
//! than a check.
//!
//! Heights are the fat tree's (`topology::gft`: every cable joins two
//! adjacent heights), so every channel goes up or down. The rule covers
//! the SLs whose VL (the same on every hop) carries only up*/down*
//! CA-to-CA routes; that premise is read off the routing's tables at
//! routing time (`updown_sls`), so the rule stays true whatever the engine
//! does on its other VLs (mlid's down-then-up paths on VL 1, say).
//!
//! Each group's tree hangs from a top switch chosen by its MLID, every
//! switch below from an upper neighbour chosen by MLID, so that groups
//! spread over the tops and cables. Its turns go up, up to down, or down:
//! a cycle of channels must turn from down to up somewhere, and neither
//! unicast (up*/down*) nor these turns ever do. With hosts on two or more
//! tops, the tops are reached through one switch `X` one height below
//! them, cabled to every top with hosts: every group hangs the tops other
//! than its root from `X`, so the only down-to-up turns, of every group,
//! are at `X`, from a top into a top. A cycle through such a turn leaves
//! `X` for a top `T`, from which every channel leads down, never to `X`
//! (a route back from `T` to `X` right after `X` -> `T` would visit `X`
//! twice, and a group's tree uses one cable between them), and a chain
//! going down never again holds a channel out of a top, which the next
//! down-to-up turn at `X` needs: no cycle, with any number of groups.

use super::tree::{spread, Tree};
use crate::fabric::{Fabric, Lid, Peer, SwitchGraph, SwitchId};
use crate::routing::{Routing, NUM_SLS};
use crate::topology::gft;

/// A fat tree's heights and where its groups' trees are rooted.
#[derive(Clone, Debug)]
pub struct FatTreeLevels {
    /// Per switch: its height, 0 for the leaves.
    pub level: Vec<u32>,
    /// The tops a group's tree may hang from: every top, or with a turning
    /// switch the tops cabled to it.
    pub tops: Vec<SwitchId>,
    /// The switch where trees turn from down to up into the tops (hosts
    /// on two or more tops).
    pub turn: Option<SwitchId>,
    /// SLs covered (a bit each): those on a VL whose unicast routes are
    /// all up*/down*.
    pub sls: u16,
}

/// The fat-tree rule for `routing` of `fabric`, or why it does not apply.
pub fn fat_tree_rule(fabric: &Fabric, routing: &Routing) -> Result<FatTreeLevels, String> {
    let tree = gft::recognize(fabric).map_err(|e| format!("not a fat tree ({e})"))?;
    let graph = fabric.graph();
    let level: Vec<u32> = tree.height.iter().map(|&h| h as u32).collect();
    let top = tree.top as u32;
    let all_tops: Vec<SwitchId> = graph.ids().filter(|&s| level[s] == top).collect();
    let hosted: Vec<SwitchId> = all_tops
        .iter()
        .copied()
        .filter(|&s| graph.hosts(s) > 0)
        .collect();
    let turn = match hosted.len() {
        0 | 1 => None,
        _ => Some(turning_switch(graph, &level, &hosted).ok_or_else(|| {
            format!(
                "hosts on {} top switches and no switch below them cabled to every one of them, where the \
                 trees could turn up to them",
                hosted.len()
            )
        })?),
    };
    let tops = match turn {
        Some(x) => all_tops
            .into_iter()
            .filter(|&t| !graph.bundle(x, t).is_empty())
            .collect(),
        None => all_tops,
    };
    let sls = updown_sls(fabric, routing, &level)?;
    if sls == 0 {
        return Err("every VL carries unicast routes that turn from down to up".into());
    }
    Ok(FatTreeLevels {
        level,
        tops,
        turn,
        sls,
    })
}

/// The first switch (by GUID) one height below the tops and cabled to
/// every top in `hosted`.
fn turning_switch(graph: &SwitchGraph, level: &[u32], hosted: &[SwitchId]) -> Option<SwitchId> {
    let below = level[hosted[0]].checked_sub(1)?;
    graph
        .ids()
        .find(|&x| level[x] == below && hosted.iter().all(|&t| !graph.bundle(x, t).is_empty()))
}

/// What the route from a switch to a LID does, as far as the heights go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Unknown,
    /// On the walk being followed (met again: the tables loop).
    Visiting,
    /// Only down (or delivered right here).
    Down,
    /// Up, then only down.
    UpDown,
    /// Turns from down to up, or does not deliver.
    Turns,
}

/// The SLs (a bit each) on a VL that no down-to-up unicast route uses,
/// where every hop maps each SL to one VL; an error when the tables map
/// an SL to different VLs on different hops.
fn updown_sls(fabric: &Fabric, routing: &Routing, level: &[u32]) -> Result<u16, String> {
    let sl_vl = match routing.sl2vl.as_ref() {
        None => [0u8; NUM_SLS],
        Some(t) => match t.tables() {
            [one] => *one,
            many if many.iter().all(|x| x == &many[0]) => many[0],
            _ => return Err("the SL2VL tables differ between hops".into()),
        },
    };
    let graph = fabric.graph();
    // Per switch with CAs, the source LIDs whose path SLs to ask for (one
    // where every port on a switch shares them).
    let per_switch = routing.path_sl.same_per_switch();
    let mut sources: Vec<(SwitchId, Vec<Lid>)> = Vec::new();
    for s in graph.ids() {
        let mut lids: Vec<Lid> = fabric
            .switch_node(s)
            .links()
            .filter(|(_, remote)| !fabric.node(remote.node).is_switch())
            .filter_map(|(_, remote)| fabric.port(remote).map(|p| p.lid))
            .filter(|l| !l.is_none())
            .collect();
        if per_switch {
            lids.truncate(1);
        }
        if !lids.is_empty() {
            sources.push((s, lids));
        }
    }
    let mut turning_vls = 0u16;
    let mut memo = vec![Shape::Unknown; graph.switch_count()];
    let mut walk = Vec::new();
    for (dlid, _) in fabric.ca_lids() {
        memo.fill(Shape::Unknown);
        for (s, slids) in &sources {
            if shape(graph, routing, level, dlid, *s, &mut memo, &mut walk) == Shape::Turns {
                for &slid in slids {
                    let sl = routing.path_sl.sl(slid, dlid);
                    turning_vls |= 1 << (sl_vl[sl as usize & 0xf] & 0xf);
                }
            }
        }
    }
    Ok((0..NUM_SLS)
        .filter(|&sl| turning_vls & (1 << sl_vl[sl]) == 0)
        .fold(0u16, |m, sl| m | 1 << sl))
}

/// The shape of the route from `from` to `dlid`, filling `memo` for every
/// switch it passes (a DP over the forwarding tables: each switch's shape
/// follows from its next hop's).
fn shape(
    graph: &SwitchGraph,
    routing: &Routing,
    level: &[u32],
    dlid: Lid,
    from: SwitchId,
    memo: &mut [Shape],
    walk: &mut Vec<SwitchId>,
) -> Shape {
    walk.clear();
    let mut at = from;
    // Where the walk stopped: the shape from there on, and the switch it
    // met whose shape was known (none: the last switch walked ends it).
    let (mut after, mut next) = loop {
        match memo[at] {
            Shape::Unknown => {}
            Shape::Visiting => break (Shape::Turns, None),
            known => break (known, Some(at)),
        }
        memo[at] = Shape::Visiting;
        walk.push(at);
        match graph.peer(at, routing.lfts[at].get(dlid)) {
            Some(Peer::Switch { switch, .. }) if switch != at => at = switch,
            Some(Peer::Ca(_)) => break (Shape::Down, None),
            _ => break (Shape::Turns, None),
        }
    };
    while let Some(s) = walk.pop() {
        let here = match next {
            None => after,
            Some(_) if after == Shape::Turns => Shape::Turns,
            Some(t) if level[t] > level[s] => Shape::UpDown,
            Some(_) if after == Shape::Down => Shape::Down,
            Some(_) => Shape::Turns,
        };
        memo[s] = here;
        after = here;
        next = Some(s);
    }
    memo[from]
}

impl FatTreeLevels {
    /// Whether groups on `sl` get a tree of this rule.
    pub fn covers(&self, sl: u8) -> bool {
        self.sls & (1 << (sl & 0xf)) != 0
    }

    /// The tree of group `mlid` with members on `switches`: from a top
    /// chosen by `mlid` (the first from there on whose tree reaches every
    /// member switch), each switch below hung from one of its upper
    /// neighbours (chosen by `mlid`), the other tops hung from the turning
    /// switch.
    pub fn tree_for(
        &self,
        graph: &SwitchGraph,
        mlid: u16,
        switches: &[SwitchId],
    ) -> Result<Tree, String> {
        let tops = &self.tops;
        let start = spread(mlid, usize::MAX) % tops.len().max(1);
        for k in 0..tops.len() {
            let root = tops[(start + k) % tops.len()];
            let mut tree = hang_below(graph, &self.level, root, mlid);
            if let Some(x) = self.turn {
                for &t in tops.iter().filter(|&&t| t != root) {
                    tree.parent[t] = Some(x);
                }
            }
            if switches.iter().all(|&s| tree.contains(s)) {
                return Ok(tree);
            }
        }
        Err("no top switch reaches every member going down only".into())
    }
}

fn hang_below(graph: &SwitchGraph, level: &[u32], root: SwitchId, mlid: u16) -> Tree {
    let n = graph.switch_count();
    let mut parent: Vec<Option<SwitchId>> = vec![None; n];
    let mut frontier = vec![root];
    let mut reached = vec![false; n];
    reached[root] = true;
    while !frontier.is_empty() {
        let mut below: Vec<SwitchId> = frontier
            .iter()
            .flat_map(|&u| graph.neighbours(u).iter().copied())
            .filter(|&c| !reached[c] && level[c] + 1 == level[frontier[0]])
            .collect();
        below.sort_unstable();
        below.dedup();
        for &c in &below {
            reached[c] = true;
            let uppers: Vec<SwitchId> = graph
                .neighbours(c)
                .iter()
                .copied()
                .filter(|&u| frontier.binary_search(&u).is_ok())
                .collect();
            parent[c] = Some(uppers[spread(mlid, c.idx()) % uppers.len()]);
        }
        frontier = below;
    }
    Tree {
        root,
        parent,
        same_cables: false,
    }
}

/// The trees mlid's groups are cut from where it places paths on virtual
/// layers (no VL carries up*/down* unicast alone), to be checked at
/// routing time (`verified::verified_family`): first, per top switch,
/// the tree hung down from it (each switch below from an upper neighbour,
/// chosen per top so that the trees spread over the cables); then, per
/// top, the same tree grown to every switch by hanging what it misses
/// from a tree switch below (`bridged`).
///
/// A tree hung down from a top only turns up to up, up to down or down
/// to down: no down-to-up turn, the turn every cycle of channels over a
/// fat tree's heights needs somewhere. So its flood adds no cycle where
/// that VL's unicast is up*/down*, and where the layering put turning
/// paths on the VL the check decides. Such a tree reaches every leaf
/// (a top of a fat tree is above every leaf, parallel director chassis
/// included), but no switch beside or above its root: a group with
/// members on chips of both directors, or on two tops (Aggregation
/// Nodes), has no such tree, and takes a bridged one where that passed,
/// else OpenSM's kind of tree with a warning.
pub fn downward_candidates(fabric: &Fabric) -> Result<Vec<Tree>, String> {
    let tree = gft::recognize(fabric).map_err(|e| format!("not a fat tree ({e})"))?;
    let graph = fabric.graph();
    let level: Vec<u32> = tree.height.iter().map(|&h| h as u32).collect();
    let top = tree.top as u32;
    let tops: Vec<SwitchId> = graph.ids().filter(|&s| level[s] == top).collect();
    let down: Vec<Tree> = tops
        .iter()
        .map(|&t| Tree {
            same_cables: true,
            ..hang_below(graph, &level, t, t.idx() as u16)
        })
        .collect();
    // Only where growing adds switches: otherwise the same tree twice.
    let bridged: Vec<Tree> = down
        .iter()
        .filter_map(|d| Some(bridged(graph, &level, d.clone())).filter(|b| b != d))
        .collect();
    Ok(down.into_iter().chain(bridged).collect())
}

/// `tree` grown to every switch connected to it: the switches it misses
/// hang from a tree switch one height below (a down-to-up turn there),
/// then what lies below those from them, until no switch is left.
fn bridged(graph: &SwitchGraph, level: &[u32], mut tree: Tree) -> Tree {
    let salt = tree.root.idx() as u16;
    loop {
        let ups = hangings(graph, level, &tree, salt, Below);
        if ups.is_empty() {
            return tree;
        }
        for (s, p) in ups {
            tree.parent[s] = Some(p);
        }
        // Down again from what was added.
        loop {
            let downs = hangings(graph, level, &tree, salt, Above);
            if downs.is_empty() {
                break;
            }
            for (s, p) in downs {
                tree.parent[s] = Some(p);
            }
        }
    }
}

/// Where a switch outside a tree may hang from one inside it.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    /// A tree switch one height below (the packet turns up there).
    Below,
    /// A tree switch one height above.
    Above,
}
use Side::{Above, Below};

/// Every switch outside `tree` with a neighbour in it on `side`, each with
/// the neighbour it hangs from (spread by `salt` where there are several).
fn hangings(
    graph: &SwitchGraph,
    level: &[u32],
    tree: &Tree,
    salt: u16,
    side: Side,
) -> Vec<(SwitchId, SwitchId)> {
    graph
        .ids()
        .filter(|&s| !tree.contains(s))
        .filter_map(|s| {
            let near: Vec<SwitchId> = graph
                .neighbours(s)
                .iter()
                .copied()
                .filter(|&n| {
                    tree.contains(n)
                        && match side {
                            Below => level[n] + 1 == level[s],
                            Above => level[n] == level[s] + 1,
                        }
                })
                .collect();
            (!near.is_empty()).then(|| (s, near[spread(salt, s.idx()) % near.len()]))
        })
        .collect()
}

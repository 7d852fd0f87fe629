//! dla on a Dragonfly+ (`topology::dragonfly_plus`): minimal paths
//! leaf → spine → [global cable] → spine → leaf, spread over spines and
//! over the cables of each pair of groups (`choice`); where cables or
//! switches are gone, the shortest detours (a bounce through another leaf
//! round a missing leaf–spine cable, a middle group for a pair of groups
//! without a cable left); paths to spines that turn back as little as they
//! can (`spines`); SLs by class of path (`rules`) and VLs that keep all of
//! them free of credit loops (`lanes`).
//!
//! **Why an intact Dragonfly+ needs one VL for its hosts.** Order the
//! channels between switches by class: up (leaf → spine) before global
//! (spine → spine of another group) before down (spine → leaf); among the
//! globals, rising ones (to a group numbered higher) before falling ones,
//! rising by their far group ascending, falling by it descending. A
//! minimal path between hosts takes at most one of each class, in that
//! order, so every channel dependency (the channel a packet holds → the
//! one it asks for next) goes from a lower channel to a higher one, and no
//! chain of dependencies can come back to where it started: no cycle, no
//! credit loop. A path that turns backwards — down then up (a bounce
//! through a leaf) or falling then rising (through a middle group below
//! both its neighbours, a valley) — breaks the order; `lanes` moves such a
//! path to the next VL at every backward turn, which restores the order
//! within each VL. A middle group that is no valley costs no VL.
//!
//! **Why the tables need a second VL even intact.** Spines of one group are
//! not cabled to each other, so a path from a spine to another spine of
//! its group must bounce through a leaf, and so must a path that arrives
//! in a group at a spine other than the one it is for. Such bounces close
//! cycles on one VL: with spines X and Y and leaves L and M of one group,
//! the bounces X → L → Y and Y → M → X (paths between the two spines, or
//! to Aggregation Nodes on them) and the host paths L → Y → M and
//! M → X → L make the dependencies X→L, L→Y, Y→M, M→X, X→L a ring. So
//! paths that start or end at a spine use VL 1, and where a spine's global
//! cables reach few groups (one cable per pair of groups, 4 per spine: the
//! canonical shape) a path from a spine to a spine of another group must
//! bounce at both ends (a search of every path, by kind of turn, finds
//! none that turns back less for most pairs of spines there): VL 2.

mod choice;
mod lanes;
mod rules;
mod spines;
#[cfg(test)]
mod tests;
mod valiant;

use crate::error::Error;
use crate::fabric::{Fabric, SwitchId};
use crate::routing::{Lft, Routing};
use crate::topology::dragonfly_plus::DragonflyPlus;

/// The class of a channel, in the order minimal paths take them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// From or to a CA, or the switch itself: no channel between switches.
    Terminal,
    /// Leaf → spine.
    Up,
    /// Spine → spine of a group with a higher number.
    Rise,
    /// Spine → spine of a group with a lower number.
    Fall,
    /// Spine → leaf.
    Down,
}

impl Class {
    /// Whether the channel is a global cable (spine to spine).
    pub fn is_global(self) -> bool {
        matches!(self, Class::Rise | Class::Fall)
    }

    /// Which class a switch prefers among equally good cables: up, then
    /// down (stay in the group), then global, rising before falling. The
    /// two global classes differ so that all the best cables of a switch
    /// share one class, and a path's turns do not depend on which of them
    /// a LID takes.
    fn preference(self) -> u8 {
        match self {
            Class::Up => 0,
            Class::Down => 1,
            Class::Rise => 2,
            Class::Fall => 3,
            Class::Terminal => 4,
        }
    }
}

/// Whether the turn from a channel of class `from` to one of class `to`
/// goes backwards in the order of channels up < rise < fall < down (rising
/// globals among themselves by their far group ascending, falling ones by
/// their far group descending): down → up (a bounce through a leaf) or
/// fall → rise (through a middle group numbered below both its
/// neighbours on the path, a valley). Every other turn a Dragonfly+
/// allows goes forwards: up → anything, rise → rise (the far groups
/// ascend), fall → fall (they descend), rise → fall (a peak), any global
/// → down. Up → up and down → down cannot occur (leaves are cabled only
/// to spines).
pub fn backward(from: Class, to: Class) -> bool {
    matches!(
        (from, to),
        (Class::Down, Class::Up) | (Class::Fall, Class::Rise)
    )
}

/// Leaves and spines of the recognised Dragonfly+.
pub struct Roles<'p> {
    plus: &'p DragonflyPlus,
}

impl Roles<'_> {
    pub fn groups(&self) -> usize {
        self.plus.groups()
    }

    pub fn group(&self, s: SwitchId) -> usize {
        self.plus.group_of[s.idx()]
    }

    /// The class of the channel from switch `a` to switch `b`.
    pub fn class(&self, a: SwitchId, b: SwitchId) -> Class {
        match (self.plus.is_leaf[a.idx()], self.plus.is_leaf[b.idx()]) {
            (true, _) => Class::Up,
            (false, true) => Class::Down,
            (false, false) if self.group(b) > self.group(a) => Class::Rise,
            (false, false) => Class::Fall,
        }
    }
}

/// Routes a recognised Dragonfly+ with `base` as the SL of minimal paths.
pub fn route(fabric: &Fabric, plus: &DragonflyPlus, base: u8) -> Result<Routing, Error> {
    let roles = Roles { plus };
    let started = std::time::Instant::now();
    let mut minimal = choice::forwarding_tables(fabric, &roles);
    spines::route_to_spines(fabric, &roles, &mut minimal);
    let t1 = started.elapsed();
    let assign = |lfts: &[Lft]| {
        lanes::assign(fabric, &roles, lfts, base)
            .map_err(|(code, why)| Error::declined(super::NAME, code, why))
    };
    // Non-minimal extra LIDs are a bonus: first one intermediate group per
    // LID for every source group; where those paths do not fit the SLs or
    // need a reserve layer above the three VLs, intermediates chosen by
    // colour, for the source groups whose paths fit the SL rules; where
    // neither fits, the extra LIDs stay minimal.
    let mut through_groups = None;
    let mut why = Vec::new();
    for by_colour in [false, true] {
        let Some((lfts, valiant)) = valiant::route_extra_lids(fabric, &roles, &minimal, by_colour)
        else {
            break;
        };
        match lanes::assign(fabric, &roles, &lfts, base) {
            Ok(lanes) if lanes.vls <= lanes::LANE_VLS => {
                through_groups = Some((lfts, lanes, valiant));
                break;
            }
            Ok(lanes) => why.push(format!("{} VLs", lanes.vls)),
            Err((_, e)) => why.push(e),
        }
    }
    let (lfts, lanes, valiant) = match through_groups {
        Some(found) => found,
        None => {
            if !why.is_empty() {
                log::warn!(
                    "dla: the extra LIDs (LMC > 0) keep minimal paths: through intermediate groups they would \
                     need more SLs or VLs than fit ({})",
                    why.join("; ")
                );
            }
            let lanes = assign(&minimal)?;
            (minimal, lanes, 0)
        }
    };
    log::debug!(
        "dla: Dragonfly+ tables in {} ms, lanes in {} ms",
        t1.as_millis(),
        (started.elapsed() - t1).as_millis()
    );
    let sizes = |v: &[Vec<SwitchId>]| {
        let (lo, hi) = (
            v.iter().map(Vec::len).min().unwrap_or(0),
            v.iter().map(Vec::len).max().unwrap_or(0),
        );
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo} to {hi}")
        }
    };
    log::info!(
        "dla: Dragonfly+ of {} groups of {} leaves and {} spines; {} LIDs routed ({valiant} extra LIDs through an \
         intermediate group) on {} SL(s) by class of path, {} per-hop lane(s) and {} reserve layer(s) from SL \
         {base} on, {} VL(s)",
        plus.groups(),
        sizes(&plus.leaves),
        sizes(&plus.spines),
        fabric.lids().count(),
        lanes.programs,
        lanes.hop_lanes,
        lanes.reserve_layers,
        lanes.vls
    );
    Ok(Routing {
        engine: super::NAME.to_string(),
        lfts,
        sl2vl: lanes.sl2vl,
        path_sl: lanes.path_sl,
    })
}

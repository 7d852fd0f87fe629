//! dla on a Dragonfly+ (`topology::dragonfly_plus`): minimal paths
//! leaf → spine → [global cable] → spine → leaf, spread over spines and
//! over the cables of each pair of groups (`choice`); where cables or
//! switches are gone, the shortest detours (a bounce through another leaf
//! round a missing leaf–spine cable, a middle group for a pair of groups
//! without a cable left), on lanes of VLs that keep them free of credit
//! loops (`lanes`).
//!
//! **Why an intact Dragonfly+ needs one VL.** Order the channels between
//! switches by class: up (leaf → spine) before global (spine → spine of
//! another group) before down (spine → leaf). A minimal path takes at most
//! one of each, in that order, so every channel dependency (the channel a
//! packet holds → the one it asks for next) goes from a lower class to a
//! higher one, and no chain of dependencies can come back to where it
//! started: no cycle, no credit loop. A path that turns backwards — down
//! then up (a bounce through a leaf) or global then global (through a
//! middle group) — breaks the order; `lanes` moves such a path to the next
//! VL at every backward turn, which restores the order within each VL.

mod choice;
mod lanes;
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
    /// Spine → spine of another group.
    Global,
    /// Spine → leaf.
    Down,
}

impl Class {
    /// Whether the channel is a global cable (spine to spine).
    pub fn is_global(self) -> bool {
        self == Class::Global
    }

    /// Which class a switch prefers among equally good cables: up, then
    /// down (stay in the group), then global.
    fn preference(self) -> u8 {
        match self {
            Class::Up => 0,
            Class::Down => 1,
            Class::Global => 2,
            Class::Terminal => 3,
        }
    }
}

/// Whether the turn from a channel of class `from` to one of class `to`
/// goes backwards in the order up < global < down: down → up (a bounce
/// through a leaf) or global → global (through a middle group). Up → up
/// and down → down cannot occur (leaves are cabled only to spines).
pub fn backward(from: Class, to: Class) -> bool {
    matches!(
        (from, to),
        (Class::Down, Class::Up) | (Class::Global, Class::Global)
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
            (false, false) => Class::Global,
        }
    }
}

/// Routes a recognised Dragonfly+ with `base` as the SL of minimal paths.
pub fn route(fabric: &Fabric, plus: &DragonflyPlus, base: u8) -> Result<Routing, Error> {
    let roles = Roles { plus };
    let started = std::time::Instant::now();
    let minimal = choice::forwarding_tables(fabric, &roles);
    let through_groups = valiant::route_extra_lids(fabric, &roles, &minimal);
    let t1 = started.elapsed();
    let assign = |lfts: &[Lft]| {
        lanes::assign(fabric, &roles, lfts, base)
            .map_err(|(code, why)| Error::declined(super::NAME, code, why))
    };
    let (lfts, lanes, valiant) = match through_groups {
        Some((lfts, valiant)) => match lanes::assign(fabric, &roles, &lfts, base) {
            Ok(lanes) => (lfts, lanes, valiant),
            // Non-minimal extra LIDs are a bonus: where their lanes do not
            // fit the SLs or VLs, the extra LIDs stay minimal.
            Err((_, why)) => {
                log::warn!(
                    "dla: the extra LIDs (LMC > 0) keep minimal paths: through intermediate groups they would \
                     need more lanes than fit ({why})"
                );
                let lanes = assign(&minimal)?;
                (minimal, lanes, 0)
            }
        },
        None => {
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
         intermediate group) on {} lane(s) and {} reserve layer(s), {} VL(s)",
        plus.groups(),
        sizes(&plus.leaves),
        sizes(&plus.spines),
        fabric.lids().count(),
        lanes.lanes,
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

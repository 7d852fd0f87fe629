//! Non-minimal paths for a host's extra LIDs (LMC > 0): Valiant's scheme
//! on a Dragonfly+, as forwarding-table entries.
//!
//! Minimal paths cap a group-to-group pattern (every host of one group
//! sending to another group) at the cables of that group pair. A host
//! that spreads its traffic over the LIDs of its destination escapes the
//! cap when those LIDs take different pairs: offset `j > 0` of a host in
//! group D goes through an intermediate group I (a different one per
//! offset, rotated by the host's base LID so that intermediates spread).
//! Its entries are, per switch:
//! - in D and in I: the minimal entries towards the host (as for the base
//!   LID), so a packet that reaches I or D goes on minimally;
//! - elsewhere: the entry towards the LID of `x`, a spine of I with a
//!   global cable to D, so a packet makes for I first. (Taking each
//!   group's own cables into I instead gives paths whose turns fall in
//!   more different places, and needed more SLs than a switch has.)
//!
//! **Colours.** Such a path turns up → global in its source group and
//! again in I, and where a spine's global cables reach few groups (the
//! canonical shape) it bounces through a leaf of I between them, and from
//! a spine of the source group through a leaf there too. The SL rules
//! (`super::rules`) key a turn by its kind and its group's colour (group
//! number mod 3), so they tell the two up → global turns apart only where
//! the source group and I differ in colour, and I and D must differ too
//! (D's turn down comes after I's on a higher VL). No one I suits every
//! source group, so a LID has up to two: a *primary* I of a colour other
//! than D's, and for the source groups of the primary's colour a
//! *secondary* one of the third colour (which itself keeps minimal
//! entries, as the primary does). Each source group is checked: every one
//! of its switches' paths must fit a program of the rules; one that does
//! not, with either I, keeps minimal entries (and its hosts the minimal
//! path on this LID).
//!
//! These entries never loop, and the check proves it per LID: a packet
//! outside the intermediates and D follows the loop-free minimal entries
//! towards x until it reaches I or D; from I it follows the minimal
//! entries towards the host, which must stay within I and D
//! (intermediates whose minimal routes to the host pass through a third
//! group are not used for it), and in D it is delivered. A source group
//! that keeps minimal entries goes minimally to the host, and should its
//! path cross a group with Valiant entries, the walk of every switch's
//! path under the LID's final entries (`super::lanes::Column`, which
//! marks a path that comes back to itself or is not delivered unfit)
//! catches it: every switch's path must be delivered and fit a program
//! wherever its minimal path did, else the groups whose paths do not
//! fit take minimal entries too, down to all of them (the minimal tables,
//! loop-free). The turns such a path makes (global → global at the
//! intermediate spine, a bounce through a leaf of I) are backward turns;
//! `super::lanes` puts the path on the VLs that keep it free of credit
//! loops, as it does for detours, and when they need more SLs or VLs than
//! there are, the caller keeps the extra LIDs minimal. Base LIDs keep
//! their minimal paths.

use super::lanes::{Column, Ports};
use super::rules::{self, Program, Turns};
use super::{Class, Roles};
use crate::fabric::{Fabric, Lid, PortNum, SwitchId};
use crate::rng::mix;
use crate::routing::{Lft, NO_PATH};

/// `minimal`'s tables with the entries of every CA LID with an offset > 0
/// rewritten (see the module comment), and the number of LIDs given a
/// Valiant path; `None` where no LID got one (LMC 0, fewer than three
/// groups), so that the minimal tables are copied only when they change.
/// `by_colour`: intermediates chosen by colour, and every source group's
/// paths checked against the SL rules (module comment); else one
/// intermediate per LID for every source group, whatever its paths need
/// (more of them take intermediates, where the SLs suffice).
pub fn route_extra_lids(
    fabric: &Fabric,
    roles: &Roles,
    minimal: &[Lft],
    by_colour: bool,
) -> Option<(Vec<Lft>, usize)> {
    let graph = fabric.graph();
    let groups = roles.groups();
    if groups < 3 {
        return None;
    }
    let switch_lid = |s: SwitchId| {
        fabric
            .switch_node(s)
            .port(0)
            .map(|p| p.lid)
            .filter(|l| !l.is_none())
    };
    let extra: Vec<(Lid, Lid, SwitchId)> = fabric
        .lids()
        .filter(|(_, owner)| fabric.switch_id(owner.node).is_none())
        .filter_map(|(lid, owner)| {
            let base = fabric.port(owner)?.lid;
            (lid != base).then_some((lid, base, fabric.lid_switch(lid)?))
        })
        .collect();
    if extra.is_empty() {
        return None;
    }
    // Per group pair (I, D): I's spines with a global cable into D.
    let mut entries: Vec<Vec<SwitchId>> = vec![Vec::new(); groups * groups];
    for s in graph.ids() {
        for c in graph.cables(s) {
            let (i, d) = (roles.group(s), roles.group(c.to));
            if i != d && !entries[i * groups + d].contains(&s) {
                entries[i * groups + d].push(s);
            }
        }
    }
    let spines_into = |g: usize, i: usize| &entries[g * groups + i];
    let ports = Ports::new(fabric, roles);
    let valiant = Valiant {
        roles,
        by_colour,
        ports: &ports,
        down: graph
            .ids()
            .map(|s| {
                graph
                    .cables(s)
                    .iter()
                    .filter(|c| roles.class(s, c.to) == Class::Down)
                    .map(|c| c.port)
                    .collect()
            })
            .collect(),
        library: rules::library(2),
        members: (0..groups)
            .map(|g| graph.ids().filter(|&s| roles.group(s) == g).collect())
            .collect(),
    };
    let mut column = Column::new(&ports);
    let mut lfts = minimal.to_vec();
    let mut routed = 0;
    for (lid, base, t) in extra {
        let d = roles.group(t);
        let offset = usize::from(lid.raw() - base.raw());
        let start = mix(u64::from(base.raw())) as usize;
        let pick =
            |s: SwitchId, n: usize| mix(u64::from(lid.raw()) ^ mix(s.idx() as u64)) as usize % n;
        // The other groups from this offset's place in the rotation that
        // can be intermediates: with a spine cabled into D, and minimal
        // routes from them to the host that stay within them and D.
        let rotation: Vec<usize> = (0..groups - 1)
            .map(|step| (d + 1 + (start + offset - 1 + step) % (groups - 1)) % groups)
            .collect();
        let usable = |i: usize| -> Option<Lid> {
            let spines = spines_into(i, d);
            if spines.is_empty() {
                return None;
            }
            let towards_x = switch_lid(spines[pick(t, spines.len())])?;
            stays_within(fabric, roles, &lfts, lid, i, d).then_some(towards_x)
        };
        let colour = rules::colour;
        let primary = rotation
            .iter()
            .filter(|&&i| !by_colour || colour(i) != colour(d))
            .chain(&rotation)
            .find_map(|&i| usable(i).map(|x| (i, x)));
        let Some(primary) = primary else {
            continue;
        };
        let everywhere = || -> Option<Via> {
            Some(
                (0..groups)
                    .map(|g| (g != d && g != primary.0).then_some(primary))
                    .collect(),
            )
        };
        let chosen = if !by_colour {
            everywhere()
        } else {
            valiant.choose(&mut column, &lfts, lid, t, primary, || {
                rotation
                    .iter()
                    .filter(|&&i| i != primary.0 && colour(i) != colour(primary.0))
                    .filter(|&&i| colour(i) != colour(d))
                    .find_map(|&i| usable(i).map(|x| (i, x)))
            })
        };
        let Some(via) = chosen else {
            continue;
        };
        let out: Vec<PortNum> = (0..graph.switch_count())
            .map(|x| valiant.out(&lfts, lid, &via, x))
            .collect();
        for (lft, port) in lfts.iter_mut().zip(out) {
            lft.set(lid, port);
        }
        routed += 1;
    }
    (routed > 0).then_some((lfts, routed))
}

/// Per group, the intermediate group its switches make for and the LID
/// of the spine there they forward towards; `None` for minimal entries.
type Via = Vec<Option<(usize, Lid)>>;

/// What the choice of intermediates per LID works with.
struct Valiant<'a> {
    roles: &'a Roles<'a>,
    by_colour: bool,
    ports: &'a Ports,
    /// Per switch, its ports to leaves of its group (none for a leaf).
    down: Vec<Vec<PortNum>>,
    /// The SL rules' programs for up to two backward turns.
    library: Vec<Program>,
    /// The switches of each group.
    members: Vec<Vec<SwitchId>>,
}

impl Valiant<'_> {
    /// Whether a path with `turns` fits a program of the rules.
    fn fits(&self, turns: Turns) -> bool {
        turns.is_flat() || self.library.iter().any(|p| p.fits(turns))
    }

    /// The switches' paths to `lid` (delivered by `t`) under `via`, into
    /// `column`.
    fn walk(&self, column: &mut Column, lfts: &[Lft], lid: Lid, t: SwitchId, via: &Via) {
        column.fill(t.idx(), |x| self.out(lfts, lid, via, x));
    }

    /// The port switch `x` forwards `lid` through under `via`: towards
    /// the intermediate's spine, or minimally. A spine whose way there
    /// does not cross straight into the intermediate group sends the
    /// packet down to a leaf of its group instead, which takes it on as
    /// it does its hosts' packets: the spines' own ways to another spine
    /// chain global cables through several groups (`super::spines`), each
    /// with entries of its own for the LID, and such paths fit no SL's
    /// program; a bounce at the source's end does (*through*).
    fn out(&self, lfts: &[Lft], lid: Lid, via: &Via, x: usize) -> PortNum {
        let minimal = lfts[x].get(lid);
        let Some((i, towards_x)) = via[self.roles.group(SwitchId::new(x))] else {
            return minimal;
        };
        let port = lfts[x].get(towards_x);
        if port == NO_PATH {
            return minimal;
        }
        let down = &self.down[x];
        let into_i = self
            .ports
            .next(x, port)
            .is_some_and(|y| self.roles.group(SwitchId::new(y)) == i);
        if !self.by_colour || down.is_empty() || into_i {
            port
        } else {
            down[mix(u64::from(lid.raw()) ^ x as u64) as usize % down.len()]
        }
    }

    /// Per switch, whether its path to `lid` under `via` reaches `t` (no
    /// loop, no dead end).
    fn delivered(&self, lfts: &[Lft], lid: Lid, t: SwitchId, via: &Via) -> Vec<bool> {
        const UNKNOWN: u8 = 0;
        const ON_PATH: u8 = 1;
        const YES: u8 = 2;
        const NO: u8 = 3;
        let n = self.roles.plus.group_of.len();
        let mut state = vec![UNKNOWN; n];
        state[t.idx()] = YES;
        let mut path = Vec::new();
        for start in 0..n {
            let mut x = start;
            let reached = loop {
                match state[x] {
                    YES => break YES,
                    // A loop, or a switch known not to deliver.
                    ON_PATH | NO => break NO,
                    _ => {}
                }
                state[x] = ON_PATH;
                path.push(x);
                match self.ports.next(x, self.out(lfts, lid, via, x)) {
                    Some(y) => x = y,
                    None => break NO,
                }
            };
            for p in path.drain(..) {
                state[p] = reached;
            }
        }
        state.iter().map(|&s| s == YES).collect()
    }

    /// Per group, whether every one of its switches' paths fits where
    /// its minimal one did (`fit_before`).
    fn suited(&self, column: &Column, fit_before: &[bool]) -> Vec<bool> {
        self.members
            .iter()
            .map(|m| {
                m.iter()
                    .all(|s| !fit_before[s.idx()] || self.fits(column.tail[s.idx()]))
            })
            .collect()
    }

    /// The intermediates of `lid` per source group (module comment):
    /// `primary` for every group it suits, `secondary()` for those of the
    /// primary's colour where that makes more groups' paths fit, minimal
    /// entries for the rest; `None` where no group takes an intermediate.
    fn choose(
        &self,
        column: &mut Column,
        lfts: &[Lft],
        lid: Lid,
        t: SwitchId,
        primary: (usize, Lid),
        secondary: impl FnOnce() -> Option<(usize, Lid)>,
    ) -> Option<Via> {
        let d = self.roles.group(t);
        let groups = self.members.len();
        // Paths that already fit no program with minimal entries are not
        // the intermediates' doing.
        let minimal: Via = vec![None; groups];
        self.walk(column, lfts, lid, t, &minimal);
        let fit_before: Vec<bool> = column.tail.iter().map(|&tt| self.fits(tt)).collect();
        let mut via: Via = (0..groups)
            .map(|g| (g != d && g != primary.0).then_some(primary))
            .collect();
        self.walk(column, lfts, lid, t, &via);
        let suited = self.suited(column, &fit_before);
        let count = |via: &Via, suited: &[bool]| {
            via.iter()
                .zip(suited)
                .filter(|&(v, &ok)| v.is_some() && ok)
                .count()
        };
        if via.iter().zip(&suited).any(|(v, &ok)| v.is_some() && !ok) {
            if let Some(second) = secondary() {
                let mut other = via.clone();
                other[second.0] = None;
                for (g, v) in other.iter_mut().enumerate() {
                    if v.is_some() && !suited[g] {
                        *v = Some(second);
                    }
                }
                self.walk(column, lfts, lid, t, &other);
                let suited_other = self.suited(column, &fit_before);
                if count(&other, &suited_other) > count(&via, &suited) {
                    via = other;
                }
            }
        }
        // Groups whose paths do not fit keep minimal entries, until every
        // switch's path is delivered and fits where its minimal one did.
        loop {
            self.walk(column, lfts, lid, t, &via);
            let suited = self.suited(column, &fit_before);
            if suited.iter().all(|&ok| ok) {
                break;
            }
            let mut flip = vec![false; groups];
            for (g, _) in suited.iter().enumerate().filter(|(_, &ok)| !ok) {
                if via[g].is_some() {
                    flip[g] = true;
                    continue;
                }
                // A minimal path made unfit by entries of another group
                // it crosses: that group's switches go minimal too.
                for s in &self.members[g] {
                    if !fit_before[s.idx()] || self.fits(column.tail[s.idx()]) {
                        continue;
                    }
                    let mut x = s.idx();
                    for _ in 0..self.roles.plus.group_of.len() {
                        let h = self.roles.group(SwitchId::new(x));
                        if via[h].is_some() {
                            flip[h] = true;
                            break;
                        }
                        match self.ports.next(x, self.out(lfts, lid, &via, x)) {
                            Some(y) if y != t.idx() => x = y,
                            _ => break,
                        }
                    }
                }
            }
            if !flip.iter().any(|&f| f) {
                return None;
            }
            for (v, f) in via.iter_mut().zip(flip) {
                if f {
                    *v = None;
                }
            }
        }
        if !via.iter().any(Option::is_some) {
            return None;
        }
        // The walks above mark a path that loops unfit, but not apart from
        // one that turns back too often: a switch whose minimal path did
        // not fit could still loop.
        let before = self.delivered(lfts, lid, t, &minimal);
        let after = self.delivered(lfts, lid, t, &via);
        before
            .iter()
            .zip(&after)
            .all(|(&b, &a)| a || !b)
            .then_some(via)
    }
}

/// Whether the minimal entries for `lid` take every switch of group `i`
/// to group `d` without leaving `i` and `d`.
fn stays_within(
    fabric: &Fabric,
    roles: &Roles,
    lfts: &[Lft],
    lid: Lid,
    i: usize,
    d: usize,
) -> bool {
    let graph = fabric.graph();
    graph.ids().filter(|&s| roles.group(s) == i).all(|s| {
        let mut at = s;
        for _ in 0..=graph.switch_count() {
            if roles.group(at) == d {
                return true;
            }
            if roles.group(at) != i {
                return false;
            }
            match graph.switch_behind(at, lfts[at.idx()].get(lid)) {
                Some(next) => at = next,
                None => return false,
            }
        }
        false
    })
}

#[cfg(test)]
mod tests {
    use crate::analysis::group_shift::group_shift;
    use crate::analysis::report::analyze;
    use crate::engines::dla::{route, DlaOptions};
    use crate::fabric::{Fabric, PortRef};
    use crate::gen::dragonfly_plus::Params;
    use crate::routing::walk::trace;
    use crate::testkit::TestFabric;

    /// A Dragonfly+ with LMC `lmc`, ports shuffled, and fractions of
    /// switches, global and leaf–spine cables gone.
    fn fabric(params: &Params, lmc: u8, damage: (f64, f64, f64), seed: u64) -> Fabric {
        let b = super::super::tests::damaged_builder(params, damage, seed);
        TestFabric::of(b).shuffled(seed).lmc(lmc).build()
    }

    /// With LMC 2, a sender that spreads over its destination's four LIDs
    /// gets well over twice the group-shift bandwidth minimal routing
    /// allows; base LIDs keep minimal paths (at most three hops between
    /// switches), and the whole routing is delivered and free of credit
    /// loops.
    #[test]
    fn extra_lids_through_intermediate_groups_lift_the_group_shift_cap() {
        let f = fabric(&Params::new(4, 4, 4, 2, 9), 2, (0.0, 0.0, 0.0), 1);
        let r = route(&f, &DlaOptions::default()).unwrap();
        let report = analyze(&f, &r);
        assert!(report.delivered(), "{:?}", report.failures);
        assert!(report.credit_loop.is_none());
        let shift = group_shift(&f, &r).unwrap();
        // One cable per group pair, 16 hosts per group.
        assert!((shift.minimal - 1.0 / 16.0).abs() < 1e-9, "{shift:?}");
        assert!(shift.spread > 2.0 * shift.minimal, "{shift:?}");
        for src in f.cas() {
            let at = PortRef::new(src, 1);
            for (dlid, owner) in f.ca_lids().filter(|(_, o)| o.node != src) {
                if f.port(owner).unwrap().lid != dlid {
                    continue;
                }
                let hops = trace(&f, &r.lfts, at, dlid).unwrap();
                assert!(hops.len() <= 4, "{src} -> {dlid}: {} switches", hops.len());
            }
        }
    }

    /// Damaged, with LMC 1: delivered and free of credit loops, whether the
    /// extra LIDs went through intermediate groups or stayed minimal.
    #[test]
    fn damaged_with_extra_lids_stays_loop_free() {
        for seed in 1..=3 {
            let f = fabric(&Params::new(4, 4, 4, 2, 9), 1, (0.05, 0.1, 0.05), seed);
            let r =
                route(&f, &DlaOptions::default()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let report = analyze(&f, &r);
            assert!(
                report.delivered() && report.credit_loop.is_none(),
                "seed {seed}: {:?}",
                report.failures
            );
        }
    }
}

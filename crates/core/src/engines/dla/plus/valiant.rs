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
//! These entries never loop: a packet outside I and D follows the
//! loop-free minimal entries towards x until it reaches I or D; from I it
//! follows the minimal entries towards the host, which must stay within I
//! and D (intermediates whose minimal routes to the host pass through a
//! third group are not used for it), and in D it is delivered. The turns
//! such a path makes (global → global at the intermediate spine, or a
//! bounce through a leaf of I) are backward turns; `super::lanes` puts the
//! path on the VLs that keep it free of credit loops, as it does for
//! detours, and when they need more SLs or VLs than there are, the caller
//! keeps the extra LIDs minimal. Base LIDs keep their minimal paths.

use super::Roles;
use crate::fabric::{Fabric, Lid, SwitchId};
use crate::rng::mix;
use crate::routing::{Lft, NO_PATH};

/// `minimal`'s tables with the entries of every CA LID with an offset > 0
/// rewritten (see the module comment), and the number of LIDs given a
/// Valiant path; `None` where no LID got one (LMC 0, fewer than three
/// groups), so that the minimal tables are copied only when they change.
pub fn route_extra_lids(
    fabric: &Fabric,
    roles: &Roles,
    minimal: &[Lft],
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
    let mut lfts = minimal.to_vec();
    let mut routed = 0;
    for (lid, base, t) in extra {
        let d = roles.group(t);
        let offset = usize::from(lid.raw() - base.raw());
        let start = mix(u64::from(base.raw())) as usize;
        let pick =
            |s: SwitchId, n: usize| mix(u64::from(lid.raw()) ^ mix(s.idx() as u64)) as usize % n;
        // Try the other groups from this offset's place in the rotation.
        let chosen = (0..groups - 1).find_map(|step| {
            let i = (d + 1 + (start + offset - 1 + step) % (groups - 1)) % groups;
            let spines = spines_into(i, d);
            if spines.is_empty() {
                return None;
            }
            let x = spines[pick(t, spines.len())];
            let towards_x = switch_lid(x)?;
            stays_within(fabric, roles, &lfts, lid, i, d).then_some((i, towards_x))
        });
        let Some((i, towards_x)) = chosen else {
            continue;
        };
        for s in graph.ids() {
            let g = roles.group(s);
            let port = lfts[s.idx()].get(towards_x);
            if g != i && g != d && port != NO_PATH {
                lfts[s.idx()].set(lid, port);
            }
        }
        routed += 1;
    }
    (routed > 0).then_some((lfts, routed))
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

//! The group-shift traffic pattern of Dragonflies: every host of group g
//! sends to its counterpart in group g + k, for every shift k. It is the
//! adversarial case of minimal routing: all of a group's traffic crowds
//! onto the cables to one other group, so a stream gets at most (cables
//! per group pair) / (hosts per group) of a link, where random bisections
//! spread over every pair. Non-minimal paths through intermediate groups
//! (Valiant) lift that cap, at the price of longer paths; an engine that
//! gives a host's extra LIDs such paths lets a sender that spreads its
//! traffic over the destination's LIDs have them. Measured here both
//! ways: every stream to the destination's base LID (`minimal`: what a
//! sender that uses one LID gets), and every stream split evenly over all
//! the destination's LIDs (`spread`).
//!
//! Bandwidth as in the effective bisection (`super::ebb`): per direction
//! of a cable, a stream gets its share of the link divided by the highest
//! load along its path; split streams are fluid, each part weighing
//! 1 / (LIDs per host), and a channel whose parts weigh L in total gives
//! each part its weight / max(1, L).

use super::ebb::Streams;
use crate::fabric::{Fabric, Lid, PortRef, SwitchId};
use crate::routing::Routing;
use crate::topology::{dragonfly, dragonfly_plus};

/// The pattern's bandwidth, as a fraction of every stream at full speed.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupShift {
    /// Groups found (a Dragonfly's or a Dragonfly+'s).
    pub groups: usize,
    /// Streams per shift, averaged over the shifts.
    pub streams: usize,
    /// LIDs per destination host (2^LMC).
    pub lids_per_host: usize,
    /// Mean over the shifts, every stream to the base LID.
    pub minimal: f64,
    /// Mean over the shifts, every stream split over all the LIDs.
    pub spread: f64,
}

/// The group of every switch, when the fabric is a Dragonfly+ or a
/// Dragonfly as dla's recognisers see it.
pub fn groups_of(fabric: &Fabric) -> Option<Vec<usize>> {
    let graph = fabric.graph();
    if let Ok(plus) = dragonfly_plus::recognise(graph) {
        return Some(plus.group_of);
    }
    let groups = dragonfly::find_groups(graph).ok()?;
    dragonfly::check_shape(graph, &groups).ok()?;
    Some(groups.of_switch)
}

/// The group-shift bandwidth of `routing`, or `None` where the fabric has
/// no groups (see `groups_of`) or fewer than two with hosts.
pub fn group_shift(fabric: &Fabric, routing: &Routing) -> Option<GroupShift> {
    let group_of = groups_of(fabric)?;
    let groups = group_of.iter().max().map_or(0, |g| g + 1);
    // Hosts by group, in LID order: the i-th of one group talks to the
    // i-th of another.
    let mut hosts: Vec<Vec<(PortRef, Lid, u8)>> = vec![Vec::new(); groups];
    for (at, port) in fabric.end_ports() {
        if fabric.node(at.node).is_switch() {
            continue;
        }
        let switch = port
            .remote
            .and_then(|r| fabric.switch_id(r.node))
            .map(SwitchId::idx);
        if let Some(s) = switch {
            hosts[group_of[s]].push((at, port.lid, port.lmc));
        }
    }
    for h in &mut hosts {
        h.sort_by_key(|&(_, lid, _)| lid);
    }
    if hosts.iter().filter(|h| !h.is_empty()).count() < 2 {
        return None;
    }
    let mut streams = Streams::new(fabric);
    let (mut minimal, mut spread, mut stream_count) = (0.0, 0.0, 0usize);
    for k in 1..groups {
        let pairs: Vec<(PortRef, Lid, u8)> = (0..groups)
            .flat_map(|g| {
                let to = &hosts[(g + k) % groups];
                hosts[g]
                    .iter()
                    .zip(to)
                    .map(|(&(src, _, _), &(_, lid, lmc))| (src, lid, lmc))
            })
            .collect();
        stream_count += pairs.len();
        minimal += bandwidth(&mut streams, fabric, routing, &pairs, false);
        spread += bandwidth(&mut streams, fabric, routing, &pairs, true);
    }
    let shifts = (groups - 1) as f64;
    Some(GroupShift {
        groups,
        streams: stream_count / (groups - 1),
        lids_per_host: hosts
            .iter()
            .flatten()
            .map(|h| 1usize << h.2)
            .max()
            .unwrap_or(1),
        minimal: minimal / shifts,
        spread: spread / shifts,
    })
}

/// The mean share of full speed the streams `pairs` (source, the
/// destination's base LID and LMC) get, each sent to the base LID or split
/// over all the destination's LIDs.
fn bandwidth(
    streams: &mut Streams,
    fabric: &Fabric,
    routing: &Routing,
    pairs: &[(PortRef, Lid, u8)],
    split: bool,
) -> f64 {
    if pairs.is_empty() {
        return 0.0;
    }
    for &(src, base, lmc) in pairs {
        let lids = if split { 1u16 << lmc } else { 1 };
        for offset in 0..lids {
            streams.add(
                fabric,
                routing,
                src,
                base.offset(offset),
                1.0 / f64::from(lids),
            );
        }
    }
    streams.delivered() / pairs.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::dla;
    use crate::gen::dragonfly_plus::{dragonfly_plus, Params};
    use crate::testkit::TestFabric;

    /// A canonical Dragonfly+ (one cable per group pair, 8 hosts per
    /// group): minimal routing caps a group-shift stream at 1/8 of a link,
    /// whatever the engine does, and random bisections get far more.
    #[test]
    fn minimal_routing_is_capped_by_the_cables_of_a_group_pair() {
        let f = TestFabric::of(dragonfly_plus(&Params::new(2, 2, 4, 4, 5)).unwrap()).build();
        let r = dla::route(&f, &dla::DlaOptions::default()).unwrap();
        let shift = group_shift(&f, &r).expect("a Dragonfly+ has groups");
        assert_eq!(shift.groups, 5);
        assert_eq!(shift.streams, 5 * 8);
        assert_eq!(shift.lids_per_host, 1);
        // 8 hosts per group over 2 cables to each other group: 1/4 at most.
        assert!(shift.minimal <= 0.25 + 1e-9, "{shift:?}");
        assert_eq!(
            shift.minimal, shift.spread,
            "one LID per host: nothing to spread"
        );
        let ebb = crate::analysis::ebb::effective_bisection(&f, &r, 200, 1);
        assert!(ebb > 2.0 * shift.minimal, "EBB {ebb} against {shift:?}");
    }

    #[test]
    fn fabrics_without_groups_have_no_group_shift() {
        let f = TestFabric::of(crate::gen::fattree::fattree(4, 2).unwrap()).build();
        let r = crate::engines::pssp::route(&f, &Default::default()).unwrap();
        assert_eq!(group_shift(&f, &r), None);
    }
}

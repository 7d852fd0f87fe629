//! `sfmin`: minimal routing for Slim Fly (MMS graphs) and other fabrics of
//! switch diameter 2, deadlock-free with 2 VLs (Prisacari et al.'s
//! direct-topologies paper, §3.6): a packet that comes from a host (or the
//! switch itself) travels on VL 0, one that comes from another switch on
//! VL 1. A path has at most two inter-switch hops, so every channel
//! dependency goes from VL 0 to VL 1 and none can close a cycle.
//!
//! Routes follow the paper's label algebra where the fabric is an MMS graph:
//! its (t, x, y) labels are recovered from the bare graph
//! (`topology::slimfly`), the algebra names the intermediates of every
//! two-hop pair, and where it names several (the "yy" and "ty"/"yt" cases)
//! the destination LID picks one, so a switch's hosts spread over them.
//! Any other diameter-2 fabric gets pssp's balanced minimal paths, which
//! need no labels.
//!
//! A damaged Slim Fly (a cable or a switch gone) no longer has diameter 2:
//! pairs that lost their two-hop path are 3 hops apart, and on an MMS
//! graph of girth 5 two switches whose cable died are 4 apart. Such
//! fabrics, and any other of switch diameter 3 or 4, get balanced minimal
//! paths too, two hops where they exist and the shortest detour
//! otherwise, on hop-position VLs: the k-th inter-switch hop of a path
//! travels on VL k, so every channel dependency goes from VL k to VL k + 1
//! and none closes a cycle. Paths of up to two hops keep SL 0 (VL 0 from a
//! host, VL 1 from a switch, as above); longer paths get spare SLs under
//! which every switch on them maps their hops to their positions
//! (`deadlock::hop_vls`). Three VLs are all the scheme uses: a path of
//! four hops (the few whose own cable died) keeps two consecutive hops on
//! one VL, chosen so that these same-VL dependencies, the only ones there
//! are, form no cycle (checked as each is added). Diameters above 4 are
//! declined.

use std::collections::HashMap;

use crate::deadlock::hop_vls::{HopVlPlan, PlannedHop};
use crate::deadlock::vl_layers::why_too_few_vls;
use crate::engines::balance::BundleSpreader;
use crate::engines::pssp::{balanced_minimal, destinations};
use crate::error::{Decline, Error};
use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchGraph, SwitchId, UNREACHABLE};
use crate::routing::walk::{Hop, Walk};
use crate::routing::{Lft, PathSl, Routing, Sl2Vl, SwitchSls, NUM_SLS};
use crate::topology::slimfly::{recover_labels, SlimFlyLabels};

use crate::config::{ConfigError, OptionSpec, Section};
use crate::engines::{EngineInfo, Outcome};

pub const NAME: &str = "sfmin";

const SEED: OptionSpec = OptionSpec {
    key: "seed",
    default: "0",
    help: "fabrics that are not Slim Flies: order of the balanced minimal paths, as pssp.seed",
};

/// sfmin's options (`sfmin.*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SfminOptions {
    /// Seed of the balanced minimal paths for diameter-2 fabrics without
    /// MMS labels (as `pssp.seed`).
    pub seed: u64,
}

impl SfminOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        Ok(SfminOptions {
            seed: s.number(&SEED, 0, u64::MAX)?,
        })
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "minimal routing for Slim Fly (by MMS labels recovered from the graph) and other diameter-2 fabrics, \
              VL 0 from hosts, VL 1 between switches; damaged ones (diameter 3) on hop-position VLs",
    needs_qos: true,
    options: &[&[SEED]],
    build: |s| {
        let options = SfminOptions::read(s)?;
        Ok(Box::new(super::Configured { options, route: |f, o| route(f, o).map(Outcome::from) }))
    },
};

/// Two switches farthest apart and their distance in switch hops
/// (`usize::MAX` when some pair is not connected).
fn farthest_pair(g: &SwitchGraph) -> (SwitchId, SwitchId, usize) {
    let mut worst = (SwitchId::default(), SwitchId::default(), 0);
    for a in g.ids() {
        for (b, &d) in g.ids().zip(g.dist_row(a)) {
            let d = if d == UNREACHABLE {
                usize::MAX
            } else {
                d as usize
            };
            if d > worst.2 {
                worst = (a, b, d);
            }
        }
    }
    worst
}

pub fn route(fabric: &Fabric, options: &SfminOptions) -> Result<Routing, Error> {
    if fabric.switch_count() == 0 {
        return Err(Error::declined(
            NAME,
            Decline::NoSwitches,
            "the fabric has no switches; nothing to route",
        ));
    }
    let name = |s: SwitchId| fabric.describe_switch(s);
    let graph = fabric.graph();
    let (a, b, d) = farthest_pair(graph);
    if d == usize::MAX {
        return Err(Error::declined(
            NAME,
            Decline::Disconnected,
            format!("{} and {} are not connected", name(a), name(b)),
        ));
    }
    if d > MAX_SWITCH_HOPS + 1 {
        return Err(Error::declined(
            NAME,
            Decline::PathsTooLong,
            format!(
                "minimal paths need up to {d} switch hops ({} to {}); its hop-position VLs cover paths of up to \
                 {} (Slim Flies and their damaged forms); use pssp or layered here",
                name(a),
                name(b),
                MAX_SWITCH_HOPS + 1
            ),
        ));
    }
    let vls = d.clamp(2, MAX_SWITCH_HOPS);
    if (fabric.vl_budget().usable() as usize) < vls {
        let why = why_too_few_vls(NAME, fabric, 0);
        return Err(Error::declined(
            NAME,
            Decline::TooFewVls,
            format!("it needs {vls} VLs for paths of {d} switch hops; {why}"),
        ));
    }
    // Labels are recovered on switch ids (GUID order), so that the SM's
    // node order and a net file's give the same labels.
    let lfts = match recover_labels(graph).and_then(|labels| {
        let q = labels.mms.field.order();
        label_routes(fabric, &labels).map(|lfts| (q, lfts))
    }) {
        Ok((q, lfts)) => {
            log::info!("{NAME}: Slim Fly q = {q}: MMS labels recovered; routes by their algebra");
            lfts
        }
        Err(why) => {
            log::info!("{NAME}: no MMS labels ({why}); balanced minimal paths");
            balanced_minimal(fabric, options.seed, NAME).lfts
        }
    };
    let mut sl2vl = Sl2Vl::new(fabric, [1; NUM_SLS]);
    for s in graph.ids() {
        let ports = graph.peers(s);
        let outs = ports.len() as u8;
        for (inp, peer) in ports.iter().enumerate() {
            if !matches!(peer, Some(Peer::Switch { .. })) {
                for out in 0..outs {
                    sl2vl.set_switch(s, PortNum::new(inp as u8), PortNum::new(out), [0; NUM_SLS]);
                }
            }
        }
    }
    for sl in 0..NUM_SLS as u8 {
        sl2vl.set_ca(sl, 0);
    }
    let path_sl = if d <= 2 {
        PathSl::Uniform(0)
    } else {
        let (sls, long, spare_used) = hop_position_sls(fabric, &lfts, &mut sl2vl)?;
        log::info!("{NAME}: {long} path(s) of 3 or 4 switch hops on hop-position VLs, on {spare_used} spare SL(s)");
        PathSl::PerSourceSwitch(sls)
    };
    // "deadlock removal needed N" is what `osmroute compare` reads.
    log::info!(
        "{NAME}: minimal paths (diameter {d}); deadlock removal needed {vls} VLs: VL k for the k-th inter-switch hop"
    );
    Ok(Routing {
        engine: NAME.to_string(),
        lfts,
        sl2vl: Some(sl2vl),
        path_sl,
    })
}

/// VLs of the hop-position scheme (as the layered engine's): paths of this
/// many inter-switch hops get one VL per hop, paths of one more share one.
const MAX_SWITCH_HOPS: usize = 3;

/// Dependencies between consecutive hops on the same VL (the only kind
/// that could close a cycle), per VL, kept acyclic.
#[derive(Default)]
struct SameVlDependencies {
    after: HashMap<(u8, usize), Vec<usize>>,
}

impl SameVlDependencies {
    /// Whether channel `to` is reached from `from` by dependencies on `vl`.
    fn reaches(&self, vl: u8, from: usize, to: usize) -> bool {
        let mut stack = vec![from];
        let mut seen = std::collections::HashSet::new();
        while let Some(c) = stack.pop() {
            if c == to {
                return true;
            }
            if seen.insert(c) {
                stack.extend(self.after.get(&(vl, c)).into_iter().flatten());
            }
        }
        false
    }

    /// Adds a dependency of channel `to` on `from`, both on `vl`, unless it
    /// would close a cycle.
    fn try_add(&mut self, vl: u8, from: usize, to: usize) -> bool {
        if self.reaches(vl, to, from) {
            return false;
        }
        self.after.entry((vl, from)).or_default().push(to);
        true
    }
}

/// SL per (source switch, LID): 0 for paths of up to two inter-switch
/// hops, a spare SL mapping hop k to VL k for the longer ones (written into
/// `sl2vl`; four-hop paths share one VL between two consecutive hops).
/// Returns the SLs, the number of long paths and of spare SLs used, or a
/// decline when the long paths contradict each other on more port pairs
/// than the 15 spare SLs can tell apart.
fn hop_position_sls(
    fabric: &Fabric,
    lfts: &[Lft],
    sl2vl: &mut Sl2Vl,
) -> Result<(SwitchSls, usize, usize), Error> {
    let mut sls = SwitchSls::new(fabric);
    let mut plan = HopVlPlan::new((1..NUM_SLS as u8).collect());
    let mut long = 0;
    let mut same_vl = SameVlDependencies::default();
    let graph = fabric.graph();
    for s in fabric.switch_ids() {
        for (lid, _) in fabric.lids() {
            let path = Walk::from_switch(fabric, lfts, s, lid)
                .collect_path()
                .map_err(|e| {
                    Error::declined(
                        NAME,
                        Decline::Internal,
                        format!("balanced minimal paths from {s} to LID {lid}: {e}"),
                    )
                })?;
            // Every hop but the last leaves for another switch.
            let between = &path[..path.len() - 1];
            if between.len() <= 2 {
                continue;
            }
            long += 1;
            let vls = position_vls(between, graph, &mut same_vl).ok_or_else(|| {
                Error::declined(
                    NAME,
                    Decline::TooDamaged,
                    format!(
                        "every way of putting the 4 hops from {} to LID {lid} on 3 VLs closes a dependency cycle; \
                         use pssp or layered",
                        fabric.describe_switch(s)
                    ),
                )
            })?;
            let hops: Vec<PlannedHop> = between
                .iter()
                .zip(vls)
                .enumerate()
                .map(|(k, (h, vl))| PlannedHop {
                    switch: h.switch,
                    in_port: (k > 0).then_some(h.in_port),
                    out_port: h.out_port,
                    vl,
                })
                .collect();
            let sl = plan.place(&hops).ok_or_else(|| {
                Error::declined(
                    NAME,
                    Decline::OutOfSls,
                    format!(
                        "the paths of 3 switch hops cross each other at different positions on more port pairs \
                         than the {} spare SLs tell apart; use pssp or layered",
                        NUM_SLS - 1
                    ),
                )
            })?;
            sls.set(s, lid, sl);
        }
    }
    plan.write(fabric, sl2vl);
    Ok((sls, long, plan.sls_used()))
}

/// VL per inter-switch hop: its position, for up to three hops; for four,
/// the first of (0,1,2,2), (0,1,1,2), (0,0,1,2) whose same-VL dependency
/// closes no cycle with those already there (`None`: each would).
fn position_vls(
    hops: &[Hop],
    graph: &SwitchGraph,
    same_vl: &mut SameVlDependencies,
) -> Option<Vec<u8>> {
    if hops.len() <= MAX_SWITCH_HOPS {
        return Some((0..hops.len() as u8).collect());
    }
    let channel = |k: usize| graph.channel(hops[k].switch, hops[k].out_port);
    for shared in (0..MAX_SWITCH_HOPS).rev() {
        if same_vl.try_add(shared as u8, channel(shared), channel(shared + 1)) {
            return Some(
                (0..hops.len())
                    .map(|k| if k <= shared { k as u8 } else { k as u8 - 1 })
                    .collect(),
            );
        }
    }
    None
}

/// LFTs from the MMS labels: one hop to a neighbour, else through one of
/// the intermediates the label algebra names, picked by destination LID.
fn label_routes(fabric: &Fabric, labels: &SlimFlyLabels) -> Result<Vec<Lft>, String> {
    let graph = fabric.graph();
    let mut lfts = Routing::empty_lfts(fabric);
    let mut by_switch: Vec<Vec<(Lid, PortNum)>> = vec![Vec::new(); graph.switch_count()];
    for (lid, owner) in fabric.lids() {
        let Some(t) = fabric.lid_switch(lid) else {
            continue;
        };
        by_switch[t].push((lid, fabric.delivery_port(owner)));
    }
    for (t, lids) in graph.ids().zip(&by_switch) {
        for s in graph.ids() {
            if s == t {
                for &(lid, last_port) in lids {
                    lfts[s].set(lid, last_port);
                }
                continue;
            }
            let via: Vec<&[PortNum]> = match graph.bundle(s, t) {
                [] => labels
                    .intermediates(s.idx(), t.idx())
                    .into_iter()
                    .map(|m| graph.bundle(s, SwitchId::new(m)))
                    .collect(),
                direct => vec![direct],
            };
            if via.is_empty() || via.iter().any(|ports| ports.is_empty()) {
                // The labels were checked against every cable, so this
                // would be a flaw in the algebra; say so rather than guess.
                return Err(format!("the label algebra names no route from {s} to {t}"));
            }
            for &(lid, _) in lids {
                let ports = via[lid.idx() % via.len()];
                lfts[s].set(lid, ports[lid.idx() / via.len() % ports.len()]);
            }
        }
    }
    // The algebra picks a bundle per LID; which of its cables each LID
    // takes is left to the spreading, which evens the cables out
    // whatever the LIDs' numbers.
    if BundleSpreader::has_bundles(graph) {
        let lids: Vec<Lid> = destinations(fabric, 0)
            .into_iter()
            .flat_map(|(_, lids)| lids)
            .collect();
        BundleSpreader::new(graph).spread(fabric, &mut lfts, &lids);
    }
    Ok(lfts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::analyze;
    use crate::gen;
    use crate::testkit::TestFabric;

    fn fabric(b: crate::FabricBuilder, vls: u8) -> Fabric {
        TestFabric::of(b).shuffled(2).vls(vls).build()
    }

    #[test]
    fn slim_flies_route_minimally_on_two_vls_without_loops() {
        for q in [5, 7, 9] {
            let f = fabric(gen::slimfly::slimfly(q, 2).unwrap(), 8);
            let r = route(&f, &SfminOptions::default()).unwrap();
            let report = analyze(&f, &r);
            assert!(report.delivered(), "q={q}: {:?}", report.failures);
            assert!(report.max_hops() <= 2);
            assert_eq!(r.vls_needed(), 2);
            assert!(report.credit_loop.is_none(), "q={q}");
            // The routes are the label algebra's.
            let labels = recover_labels(f.graph()).unwrap();
            assert_eq!(r.lfts, label_routes(&f, &labels).unwrap(), "q={q}");
            // The same paths on one VL do have credit loops.
            let flat = Routing { sl2vl: None, ..r };
            assert!(
                analyze(&f, &flat).credit_loop.is_some(),
                "q={q}: the check must be able to fail"
            );
        }
    }

    #[test]
    fn other_diameter_two_fabrics_get_balanced_minimal_paths() {
        // A 4 × 4 HyperX has switch diameter 2 but no MMS labels.
        let f = fabric(gen::hyperx::hyperx(&[4, 4], &[1, 1], 2).unwrap(), 8);
        let r = route(&f, &SfminOptions::default()).unwrap();
        let report = analyze(&f, &r);
        assert!(
            report.delivered() && report.max_hops() <= 2,
            "{:?}",
            report.failures
        );
        assert!(report.credit_loop.is_none());
        assert_eq!(
            r.lfts,
            balanced_minimal(&f, SfminOptions::default().seed, NAME).lfts
        );
    }

    #[test]
    fn declines_larger_diameters_and_one_vl() {
        let torus = fabric(gen::torus::torus(&[6, 6], &[1, 1], 1).unwrap(), 8);
        let e = route(&torus, &SfminOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("up to 6 switch hops") && e.contains("use pssp or layered"),
            "{e}"
        );
        let sf = fabric(gen::slimfly::slimfly(5, 1).unwrap(), 1);
        let e = route(&sf, &SfminOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs 2 VLs"), "{e}");
    }

    #[test]
    fn damaged_slim_flies_route_on_hop_position_vls_without_loops() {
        let mut long_paths = false;
        for q in [5, 7] {
            for (switches, links, seed) in [
                (0.0, 0.01, 1),
                (0.0, 0.03, 2),
                (0.0, 0.05, 3),
                (0.02, 0.0, 1),
                (0.04, 0.03, 2),
            ] {
                let what = format!("q={q} -{switches} switches -{links} links seed {seed}");
                let (mut b, _) = gen::degrade::drop_switches(
                    &gen::slimfly::slimfly(q, 2).unwrap(),
                    switches,
                    seed,
                )
                .unwrap();
                gen::degrade::drop_links(&mut b, links, seed).unwrap();
                let f = fabric(b, 8);
                let r =
                    route(&f, &SfminOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
                let report = analyze(&f, &r);
                assert!(report.delivered(), "{what}: {:?}", report.failures);
                assert!(report.credit_loop.is_none(), "{what}: credit loop");
                assert!(r.vls_needed() <= 3, "{what}: {} VLs", r.vls_needed());
                // Minimal: no path longer than the switches' distance.
                assert!(report.max_hops() <= f.graph().diameter() as usize, "{what}");
                if report.max_hops() >= 3 {
                    long_paths = true;
                    assert_eq!(r.vls_needed(), 3, "{what}");
                    let flat = Routing {
                        sl2vl: None,
                        ..r.clone()
                    };
                    assert!(
                        analyze(&f, &flat).credit_loop.is_some(),
                        "{what}: the check must be able to fail"
                    );
                }
            }
        }
        assert!(long_paths, "the damage must lengthen some paths");
    }

    #[test]
    fn a_damaged_slim_fly_on_two_vls_is_declined_saying_why() {
        let mut b = gen::slimfly::slimfly(5, 1).unwrap();
        gen::degrade::drop_links(&mut b, 0.03, 1).unwrap();
        let e = route(&fabric(b, 2), &SfminOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs 3 VLs for paths of 4 switch hops"), "{e}");
    }
}

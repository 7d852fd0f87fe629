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
//! Any other diameter-2 fabric (a Slim Fly with a cable missing, say) gets
//! pssp's balanced minimal paths, which need no labels.

use crate::deadlock::vl_layers::why_too_few_vls;
use crate::engines::pssp::balanced_minimal;
use crate::error::Error;
use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchGraph, SwitchId, UNREACHABLE};
use crate::routing::{Lft, PathSl, Routing, Sl2Vl, NUM_SLS};
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
        Ok(SfminOptions { seed: s.number(&SEED, 0, u64::MAX)? })
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "minimal routing for Slim Fly (by MMS labels recovered from the graph) and other diameter-2 fabrics; \
              VL 0 from hosts, VL 1 between switches",
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
            let d = if d == UNREACHABLE { usize::MAX } else { d as usize };
            if d > worst.2 {
                worst = (a, b, d);
            }
        }
    }
    worst
}

pub fn route(fabric: &Fabric, options: &SfminOptions) -> Result<Routing, Error> {
    if fabric.switch_count() == 0 {
        return Err(Error::declined(NAME, "the fabric has no switches; nothing to route"));
    }
    let name = |s: SwitchId| fabric.describe_switch(s);
    let graph = fabric.graph();
    let (a, b, d) = farthest_pair(graph);
    if d == usize::MAX {
        return Err(Error::declined(NAME, format!("{} and {} are not connected", name(a), name(b))));
    }
    if d > 2 {
        return Err(Error::declined(
            NAME,
            format!(
                "minimal paths need up to {d} switch hops ({} to {}); its two-VL scheme covers diameter-2 \
                 fabrics such as Slim Fly; use pssp or layered here",
                name(a),
                name(b)
            ),
        ));
    }
    if fabric.vl_budget().usable() < 2 {
        return Err(Error::declined(
            NAME,
            format!("it needs 2 VLs; {}", why_too_few_vls(NAME, fabric, 0)),
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
    // "deadlock removal needed N" is what `osmroute compare` reads.
    log::info!(
        "{NAME}: minimal paths (diameter {d}); deadlock removal needed 2 VLs: VL 0 from hosts, VL 1 between switches"
    );
    Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: Some(sl2vl), path_sl: PathSl::Uniform(0) })
}

/// LFTs from the MMS labels: one hop to a neighbour, else through one of
/// the intermediates the label algebra names, picked by destination LID.
fn label_routes(fabric: &Fabric, labels: &SlimFlyLabels) -> Result<Vec<Lft>, String> {
    let graph = fabric.graph();
    let mut lfts = Routing::empty_lfts(fabric);
    let mut by_switch: Vec<Vec<(Lid, PortNum)>> = vec![Vec::new(); graph.switch_count()];
    for (lid, owner) in fabric.lids() {
        let Some(t) = fabric.lid_switch(lid) else { continue };
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
                [] => labels.intermediates(s.idx(), t.idx()).into_iter().map(|m| graph.bundle(s, SwitchId::new(m))).collect(),
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
    Ok(lfts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::analyze;
    use crate::fabric::VlBudget;
    use crate::gen;

    fn fabric(b: crate::FabricBuilder, vls: u8) -> Fabric {
        let mut b = gen::shuffle_ports(&b, 2);
        b.assign_lids_sequential(0).unwrap();
        b.set_vl_budget(VlBudget { data_vls: vls, limited_by: format!("the test offers {vls}"), ..VlBudget::default() });
        b.build().unwrap()
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
            assert!(analyze(&f, &flat).credit_loop.is_some(), "q={q}: the check must be able to fail");
        }
    }

    #[test]
    fn other_diameter_two_fabrics_get_balanced_minimal_paths() {
        // A 4 × 4 HyperX has switch diameter 2 but no MMS labels.
        let f = fabric(gen::hyperx::hyperx(&[4, 4], &[1, 1], 2).unwrap(), 8);
        let r = route(&f, &SfminOptions::default()).unwrap();
        let report = analyze(&f, &r);
        assert!(report.delivered() && report.max_hops() <= 2, "{:?}", report.failures);
        assert!(report.credit_loop.is_none());
        assert_eq!(r.lfts, balanced_minimal(&f, SfminOptions::default().seed, NAME).lfts);
    }

    #[test]
    fn declines_larger_diameters_and_one_vl() {
        let torus = fabric(gen::torus::torus(&[4, 4], &[1, 1], 1).unwrap(), 8);
        let e = route(&torus, &SfminOptions::default()).unwrap_err().to_string();
        assert!(e.contains("up to 4 switch hops") && e.contains("use pssp or layered"), "{e}");
        let sf = fabric(gen::slimfly::slimfly(5, 1).unwrap(), 1);
        let e = route(&sf, &SfminOptions::default()).unwrap_err().to_string();
        assert!(e.contains("needs 2 VLs"), "{e}");
    }
}

//! `sfmin`: minimal routing for Slim Fly (MMS graphs) and other fabrics of
//! switch diameter 2, deadlock-free with 2 VLs (Prisacari et al.'s
//! direct-topologies paper, §3.6): a packet that comes from a host (or the
//! switch itself) travels on VL 0, one that comes from another switch on
//! VL 1. A path has at most two inter-switch hops, so every channel
//! dependency goes from VL 0 to VL 1 and none can close a cycle.
//!
//! The paper picks among equally short paths with the MMS labels' algebra;
//! here the paths are pssp's balanced minimal ones (each destination's tree
//! takes the least loaded of the minimal next hops), which needs no labels
//! and works for any diameter-2 fabric.

use crate::deadlock::vl_layers::why_too_few_vls;
use crate::topology::switch_graph::GuidOrder;
use crate::engines::pssp::{balanced_minimal, MinimalTables};
use crate::error::Error;
use crate::fabric::{describe, Fabric, Peer};
use crate::routing::{PathSl, Routing, Sl2Vl, NUM_SLS};
use crate::Config;

pub const NAME: &str = "sfmin";

/// Two switches farthest apart and their distance in switch hops
/// (`usize::MAX` when some pair is not connected).
fn farthest_pair(fabric: &Fabric) -> (usize, usize, usize) {
    let order = GuidOrder::new(fabric);
    let g = &order.graph;
    let mut worst = (0, 0, 0);
    for a in 0..g.switch_count() {
        for b in 0..g.switch_count() {
            let d = match g.dist(a, b) {
                u16::MAX => usize::MAX,
                d => d as usize,
            };
            if d > worst.2 {
                worst = (order.switch_at[a], order.switch_at[b], d);
            }
        }
    }
    worst
}

pub fn route(fabric: &Fabric, config: &Config) -> Result<Routing, Error> {
    if fabric.switches().is_empty() {
        return Err(Error::declined(NAME, "the fabric has no switches; nothing to route"));
    }
    let name = |s: usize| describe(fabric.node(fabric.switches()[s]));
    let (a, b, d) = farthest_pair(fabric);
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
    let MinimalTables { lfts, edge_forwarding_index, .. } = balanced_minimal(fabric, config.pssp.seed, NAME);
    let mut sl2vl = Sl2Vl::new(fabric, [1; NUM_SLS]);
    for (s, ports) in fabric.switch_port_peers().iter().enumerate() {
        let outs = ports.len() as u8;
        for (inp, peer) in ports.iter().enumerate() {
            if !matches!(peer, Some(Peer::Switch(_))) {
                for out in 0..outs {
                    sl2vl.set_switch(s, inp as u8, out, [0; NUM_SLS]);
                }
            }
        }
    }
    for sl in 0..NUM_SLS as u8 {
        sl2vl.set_ca(sl, 0);
    }
    // "deadlock removal needed N" is what `osmroute compare` reads.
    log::info!(
        "{NAME}: minimal paths (diameter {d}), edge forwarding index {edge_forwarding_index}; \
         deadlock removal needed 2 VLs: VL 0 from hosts, VL 1 between switches"
    );
    Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: Some(sl2vl), path_sl: PathSl::Uniform(0) })
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
            let r = route(&f, &Config::default()).unwrap();
            let report = analyze(&f, &r);
            assert!(report.delivered(), "q={q}: {:?}", report.failures);
            assert!(report.max_hops() <= 2);
            assert_eq!(r.vls_needed(), 2);
            assert!(report.credit_loop.is_none(), "q={q}");
            // The same paths on one VL do have credit loops.
            let flat = Routing { sl2vl: None, ..r };
            assert!(analyze(&f, &flat).credit_loop.is_some(), "q={q}: the check must be able to fail");
        }
    }

    #[test]
    fn declines_larger_diameters_and_one_vl() {
        let torus = fabric(gen::torus::torus(&[4, 4], &[1, 1], 1).unwrap(), 8);
        let e = route(&torus, &Config::default()).unwrap_err().to_string();
        assert!(e.contains("up to 4 switch hops") && e.contains("use pssp or layered"), "{e}");
        let sf = fabric(gen::slimfly::slimfly(5, 1).unwrap(), 1);
        let e = route(&sf, &Config::default()).unwrap_err().to_string();
        assert!(e.contains("needs 2 VLs"), "{e}");
    }
}

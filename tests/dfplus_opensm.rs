//! `routing_engine dla` in the distribution's OpenSM on ibsim-simulated
//! Dragonfly+ fabrics with an Aggregation Node on every switch, intact and
//! damaged: tables read back from the simulated switches, every route
//! delivered, the same tables as an offline run, and no credit loop by
//! `osmroute check`'s analysis or by ibdmchk; and live, in a long-running
//! OpenSM while leaf–spine and global cables and whole switches fail and
//! return through ibsim's console.

mod harness;

use std::time::Duration;

use harness::live::Live;
use harness::readback::{assert_same_as_offline, ibdmchk, read_back};
use harness::Sim;
use osmroute_core::analysis::report::analyze;
use osmroute_core::gen::{self, degrade, dragonfly_plus};
use osmroute_core::io::netfile;

const ROUTED: &str = "dla tables configured on all switches";
const UP: &str = "SUBNET UP";

/// 7 groups of 3 leaves x 2 hosts and 3 spines (4 global ports each, two
/// cables per pair of groups): 42 switches, 42 hosts, 42 Aggregation
/// Nodes; damaged: 10 % of the global and 5 % of the leaf-spine cables
/// gone.
fn params() -> dragonfly_plus::Params {
    dragonfly_plus::Params {
        aggregation_nodes: true,
        ..dragonfly_plus::Params::new(3, 3, 2, 4, 7)
    }
}

fn net(damaged: bool, seed: u64) -> String {
    let params = params();
    let mut b = dragonfly_plus::dragonfly_plus(&params).expect("valid parameters");
    if damaged {
        for (fraction, global) in [(0.10, true), (0.05, false)] {
            degrade::drop_links_where(&mut b, fraction, seed, |x, y| {
                dragonfly_plus::is_global(x, y) == Some(global)
            })
            .expect("valid fraction");
        }
    }
    netfile::write(&gen::shuffle_ports(&b, seed))
}

fn check(name: &str, damaged: bool, seed: u64) {
    let net = net(damaged, seed);
    let mut sim = Sim::start(name, &net);
    let osm = sim.opensm(&["routing_engine dla", "qos TRUE"], &[]);
    osm.wait_for(UP, Duration::from_secs(180));
    assert!(
        osm.log().contains(ROUTED),
        "dla did not configure the tables"
    );
    osm.assert_no_errors();

    let (fabric, live) = read_back(&sim, &net);
    let offline = assert_same_as_offline("dla", &fabric, &live);
    // The read-back tables with dla's SLs and SL2VL tables.
    let report = analyze(&fabric, &offline);
    assert!(report.delivered(), "{:?}", report.failures);
    assert!(report.routes > 0);
    assert!(report.credit_loop.is_none());
    // Three VLs for the lanes; a reserve layer above them only where a
    // path would turn back three times.
    assert!(offline.vls_needed() <= 4, "{} VLs", offline.vls_needed());

    let verdict = ibdmchk(
        &osm.dir,
        &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"],
    );
    assert!(
        verdict.contains("no credit loops found"),
        "ibdmchk: {verdict}"
    );
    assert!(
        !verdict.lines().any(|l| l.starts_with("-E-")),
        "ibdmchk errors: {verdict}"
    );
}

#[test]
fn dla_on_an_intact_dragonfly_plus_with_aggregation_nodes() {
    check("dfp-intact", false, 3);
}

#[test]
fn dla_on_a_damaged_dragonfly_plus_with_aggregation_nodes() {
    check("dfp-damaged", true, 5);
}

/// A leaf-spine cable, a global cable, a whole spine and a whole leaf fail
/// one after the other; every re-sweep is dla's, read back equal to the
/// offline routing, delivered and free of credit loops (`Live::check`);
/// relinked, the tables and SL files are the first ones again. Ports (no
/// shuffling): a leaf's hosts, then one per spine; a spine's leaves, then
/// its global ports. The SM's host is dfp-g0-l0-h0: group 0 stays whole.
#[test]
fn dla_routes_every_resweep_while_dragonfly_plus_cables_and_switches_fail() {
    let p = params();
    let mut live = Live::start(
        "dfp-faults",
        "dla",
        netfile::write(&dragonfly_plus::dragonfly_plus(&p).expect("valid parameters")),
    );
    let (_, first, _) = live.check();
    let first = live.first_pass(first);
    let steps = [
        format!("unlink \"dfp-g1-l0\"[{}]", p.hosts + 1),
        format!("unlink \"dfp-g2-s1\"[{}]", p.leaves + 1),
        "unlink \"dfp-g3-s2\"".to_string(),
        "unlink \"dfp-g4-l1\"".to_string(),
    ];
    for step in &steps {
        live.faults(std::slice::from_ref(step));
        live.check();
    }
    live.undo_and_expect(&steps, &first);
}

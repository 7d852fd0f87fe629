//! `routing_engine hxdor` in the distribution's OpenSM on ibsim: on a
//! HyperX, a hypercube and a torus (shuffled ports, so nothing but the
//! graph shows the dimensions) the tables read back from the switches
//! equal an offline run on OpenSM's LIDs, so do the path SLs (each
//! destination's dimension order and, on the torus, the datelines
//! crossed), and ibdmchk and `osmroute check` find no credit loops; a
//! Slim Fly is declined. Live: while cables and a switch of a HyperX fail
//! and come back, every re-sweep is hxdor's (`harness::live`).

mod harness;

use std::time::Duration;

use harness::live::Live;
use harness::offline::{assert_dumped_path_sls, assert_switches_hold_offline_run};
use harness::readback::{ibdmchk, read_back};
use harness::{check_loop_free, Sim};

fn generate(family: &[&str]) -> String {
    harness::generate_shuffled(family, 8)
}

fn check_hxdor(name: &str, family: &[&str], orders: usize) {
    let net = generate(family);
    let mut sim = Sim::start(name, &net);
    let osm = sim.opensm(&["routing_engine hxdor", "qos TRUE"], &[]);
    osm.wait_for("SUBNET UP", Duration::from_secs(180));
    assert!(osm
        .log()
        .contains("hxdor tables configured on all switches"));
    osm.assert_no_errors();
    let (read_fabric, read) = read_back(&sim, &net);
    let (fabric, offline) =
        assert_switches_hold_offline_run(&osm, &net, (&read_fabric, &read), "hxdor", "");
    assert_eq!(offline.vls_needed() as usize, orders);
    assert_dumped_path_sls(&osm, &fabric, &offline);
    let report = ibdmchk(
        &osm.dir,
        &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"],
    );
    assert!(
        report.contains("no credit loops found"),
        "ibdmchk: {report}"
    );
    check_loop_free(&osm.dir, &["--patterns", "100"]);
}

#[test]
fn hyperx_3x3x3() {
    check_hxdor("hxdor3", &["hyperx", "--dims", "3,3,3", "--p", "2"], 3);
}

#[test]
fn hypercube_4() {
    check_hxdor("hxdorcube", &["hypercube", "--dim", "4", "--p", "1"], 4);
}

#[test]
fn torus_5x6_on_datelines() {
    // Two rings: SL = order · 4 + dateline bits; 2 orders × 2 VLs.
    check_hxdor(
        "hxdortorus",
        &["torus", "--dims", "5,6", "--widths", "1,1", "--p", "2"],
        4,
    );
}

#[test]
fn a_slim_fly_is_declined_and_opensm_falls_back() {
    let net = generate(&["slimfly", "--q", "5", "--p", "1"]);
    let mut sim = Sim::start("hxdorsf", &net);
    let osm = sim.opensm(&["routing_engine hxdor,minhop", "qos TRUE"], &[]);
    osm.wait_for(
        "minhop tables configured on all switches",
        Duration::from_secs(180),
    );
    let declines = osm.lines_with("ERR osmroute: hxdor declines");
    assert_eq!(declines.len(), 1, "{declines:#?}");
}

/// A cable inside a dimension (detoured through a third position of its
/// line), a whole switch (paths that needed it detour through other
/// dimensions on the detour VL) and a second cable fail one after the
/// other under a running OpenSM; every re-sweep is hxdor's, loop-free and
/// on no more VLs than the whole HyperX; relinked, the tables, SL2VL and
/// path SLs are the first ones again.
#[test]
fn hxdor_routes_every_resweep_while_cables_and_a_switch_fail() {
    let mut live = Live::start(
        "direct-damage-hx",
        "hxdor",
        generate(&["hyperx", "--dims", "3,3,3", "--p", "1"]),
    );
    let (fabric, first, offline) = live.check();
    let vls = offline.vls_needed();
    assert_eq!(vls, 3);
    let first = live.first_pass(first);
    // The SM's host hangs off hx-0-0-0: its switch stays.
    let steps = [
        format!(
            "unlink \"hx-1-1-1\"[{}]",
            live.outage.switch_ports("hx-1-1-1")[0]
        ),
        "unlink \"hx-2-1-0\"".to_string(),
        format!(
            "unlink \"hx-0-2-1\"[{}]",
            live.outage.switch_ports("hx-0-2-1")[1]
        ),
    ];
    for step in &steps {
        live.faults(std::slice::from_ref(step));
        let (now, _, offline) = live.check();
        assert!(now.switch_count() <= fabric.switch_count());
        assert!(
            offline.vls_needed() <= vls,
            "{step}: {} VLs",
            offline.vls_needed()
        );
    }
    let detoured = live.osm.lines_with("detour through other dimensions");
    assert!(
        detoured
            .iter()
            .any(|l| !l.contains(", 0 (source switch, LID)")),
        "no detour through other dimensions: {detoured:#?}"
    );
    live.undo_and_expect(&steps, &first);
}

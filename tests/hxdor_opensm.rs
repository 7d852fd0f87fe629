//! `routing_engine hxdor` in the distribution's OpenSM on ibsim: on a
//! HyperX, a hypercube and a torus (shuffled ports, so nothing but the
//! graph shows the dimensions) the tables read back from the switches
//! equal an offline run on OpenSM's LIDs, so do the path SLs (each
//! destination's dimension order and, on the torus, the datelines
//! crossed), and ibdmchk and `osmroute check` find no credit loops; a
//! Slim Fly is declined.

mod harness;

use std::time::Duration;

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
    assert!(osm.log().contains("hxdor tables configured on all switches"));
    osm.assert_no_errors();
    let (read_fabric, read) = read_back(&sim, &net);
    let (fabric, offline) =
        assert_switches_hold_offline_run(&osm, &net, (&read_fabric, &read), "hxdor", "");
    assert_eq!(offline.vls_needed() as usize, orders);
    assert_dumped_path_sls(&osm, &fabric, &offline);
    let report = ibdmchk(&osm.dir, &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"]);
    assert!(report.contains("no credit loops found"), "ibdmchk: {report}");
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
    check_hxdor("hxdortorus", &["torus", "--dims", "5,6", "--widths", "1,1", "--p", "2"], 4);
}

#[test]
fn a_slim_fly_is_declined_and_opensm_falls_back() {
    let net = generate(&["slimfly", "--q", "5", "--p", "1"]);
    let mut sim = Sim::start("hxdorsf", &net);
    let osm = sim.opensm(&["routing_engine hxdor,minhop", "qos TRUE"], &[]);
    osm.wait_for("minhop tables configured on all switches", Duration::from_secs(180));
    let declines = osm.lines_with("ERR osmroute: hxdor declines");
    assert_eq!(declines.len(), 1, "{declines:#?}");
}

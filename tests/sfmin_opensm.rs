//! `routing_engine sfmin` in the distribution's OpenSM on ibsim: a Slim Fly
//! (shuffled ports) gets its MMS labels recovered and the label algebra's
//! minimal paths (read back from the switches, equal to an offline run),
//! SL2VL VL 0 for packets from hosts and VL 1 between switches (read back
//! with smpquery), no credit loops by ibdmchk and `osmroute check`;
//! fabrics of larger diameter, and `qos FALSE`, fall back. Live: while a
//! cable and a switch of a Slim Fly fail and come back, every re-sweep is
//! sfmin's, on at most 3 VLs (`harness::live`).

mod harness;

use std::time::Duration;

use harness::live::Live;
use harness::offline::assert_switches_hold_offline_run;
use harness::readback::{ibdmchk, read_back, sl2vl_rows};
use harness::{check_loop_free, OpenSm, Sim};
use osmroute_core::fabric::{PortNum, SwitchId};
use osmroute_core::routing::walk::trace;

const TIMEOUT: Duration = Duration::from_secs(180);

fn generate(family: &[&str]) -> String {
    harness::generate_shuffled(family, 6)
}

fn fell_back(osm: &OpenSm, why: &str) {
    osm.wait_for("minhop tables configured on all switches", TIMEOUT);
    let declines = osm.lines_with("ERR osmroute: sfmin declines");
    assert_eq!(declines.len(), 1, "{declines:#?}");
    assert!(declines[0].contains(why), "{}", declines[0]);
}

#[test]
fn slim_fly_is_minimal_and_loop_free_on_two_vls() {
    let net = generate(&["slimfly", "--q", "5", "--p", "2"]);
    let mut sim = Sim::start("sfmin", &net);
    let osm = sim.opensm(&["routing_engine sfmin", "qos TRUE"], &[]);
    osm.wait_for("SUBNET UP", TIMEOUT);
    assert!(osm
        .log()
        .contains("sfmin tables configured on all switches"));
    assert!(osm
        .log()
        .contains("sfmin: Slim Fly q = 5: MMS labels recovered"));
    osm.assert_no_errors();

    let (fabric, routing) = read_back(&sim, &net);
    // The switches hold what the label algebra gives offline on OpenSM's LIDs.
    assert_switches_hold_offline_run(&osm, &net, (&fabric, &routing), "sfmin", "");
    let cas: Vec<_> = fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
        .collect();
    assert_eq!(cas.len(), 100);
    for &(src, _) in &cas {
        for &(dst, port) in &cas {
            if src.node != dst.node {
                let hops = trace(&fabric, &routing.lfts, src, port.lid)
                    .unwrap_or_else(|e| panic!("{src:?} -> {}: {e}", port.lid));
                assert!(
                    hops.len() <= 3,
                    "{src:?} -> LID {}: {} switches",
                    port.lid,
                    hops.len()
                );
            }
        }
    }

    // VL 0 for packets from hosts, VL 1 for packets from switches.
    let s = SwitchId::new(0);
    let lid = fabric.switch_node(s).port(0).unwrap().lid.raw();
    let out = fabric.graph().cables(s)[0].port.raw();
    let rows = sl2vl_rows(&sim, lid, out);
    let mut seen = [false; 2];
    for (inp, vls) in rows.iter().filter(|(i, _)| *i != 0 && *i != out) {
        let from_switch = fabric
            .graph()
            .switch_behind(s, PortNum::new(*inp))
            .is_some();
        let want = u8::from(from_switch);
        assert!(
            vls[..16].iter().all(|&v| v == want),
            "in {inp} out {out}: {vls:?}"
        );
        seen[want as usize] = true;
    }
    assert_eq!(seen, [true, true], "both kinds of in-port were read back");

    let report = ibdmchk(
        &osm.dir,
        &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"],
    );
    assert!(
        report.contains("no credit loops found"),
        "ibdmchk: {report}"
    );
    check_loop_free(&osm.dir, &["--patterns", "100", "--max-hops", "2"]);
}

/// A Slim Fly with doubled cables: the label algebra picks the pair of
/// cables, and with the LIDs OpenSM deals (a switch's hosts need not have
/// consecutive LIDs) the LIDs are still spread over both cables of each
/// pair: the EFI read back is the average load, the optimum.
#[test]
fn doubled_slim_fly_spreads_over_both_cables_of_each_pair() {
    let net = generate(&["slimfly", "--q", "5", "--p", "2", "--parallel-cables", "2"]);
    let mut sim = Sim::start("sfmin2", &net);
    let osm = sim.opensm(&["routing_engine sfmin", "qos TRUE"], &[]);
    osm.wait_for("SUBNET UP", TIMEOUT);
    assert!(osm
        .log()
        .contains("sfmin: Slim Fly q = 5: MMS labels recovered"));
    osm.assert_no_errors();
    let (fabric, routing) = read_back(&sim, &net);
    assert_switches_hold_offline_run(&osm, &net, (&fabric, &routing), "sfmin", "");
    let report = osmroute_core::analysis::report::analyze(&fabric, &routing);
    assert!(
        report.delivered() && report.max_hops() <= 2,
        "{:?}",
        report.failures
    );
    assert_eq!(
        report.edge_forwarding_index(),
        osmroute_core::analysis::bounds::minimal_routing_average(&fabric)
    );
    let ibdm = ibdmchk(
        &osm.dir,
        &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"],
    );
    assert!(ibdm.contains("no credit loops found"), "ibdmchk: {ibdm}");
    check_loop_free(&osm.dir, &["--patterns", "100", "--max-hops", "2"]);
}

#[test]
fn a_torus_and_qos_off_fall_back() {
    let torus = generate(&["torus", "--dims", "6,6", "--p", "1"]);
    let mut sim = Sim::start("sfmintorus", &torus);
    fell_back(
        &sim.opensm(&["routing_engine sfmin,minhop", "qos TRUE"], &[]),
        "use pssp here",
    );
    let sf = generate(&["slimfly", "--q", "5", "--p", "1"]);
    let mut sim = Sim::start("sfminnoqos", &sf);
    fell_back(
        &sim.opensm(&["routing_engine sfmin,minhop", "qos FALSE"], &[]),
        "set `qos TRUE`",
    );
}

/// A cable (its two switches are then 4 hops apart on the girth-5 MMS
/// graph), a whole switch and a second cable fail under a running OpenSM:
/// every re-sweep is sfmin's, minimal, loop-free (ours and ibdmchk) on at
/// most 3 VLs; relinked, the tables, SL2VL and path SLs are the first ones.
#[test]
fn sfmin_routes_every_resweep_while_cables_and_a_switch_fail() {
    let mut live = Live::start(
        "direct-damage-sf",
        "sfmin",
        generate(&["slimfly", "--q", "5", "--p", "1"]),
    );
    let (fabric, first, offline) = live.check();
    assert_eq!(offline.vls_needed(), 2);
    let first = live.first_pass(first);
    // The SM's host hangs off sf-0-0-0: its switch stays.
    let steps = [
        format!(
            "unlink \"sf-0-1-2\"[{}]",
            live.outage.switch_ports("sf-0-1-2")[0]
        ),
        "unlink \"sf-1-3-4\"".to_string(),
        format!(
            "unlink \"sf-1-2-0\"[{}]",
            live.outage.switch_ports("sf-1-2-0")[2]
        ),
    ];
    for step in &steps {
        live.faults(std::slice::from_ref(step));
        let (now, read, offline) = live.check();
        assert!(now.switch_count() <= fabric.switch_count());
        assert!(
            offline.vls_needed() <= 3,
            "{step}: {} VLs",
            offline.vls_needed()
        );
        let report = osmroute_core::analysis::report::analyze(&now, &read);
        assert!(
            report.max_hops() <= now.graph().diameter() as usize,
            "{step}: not minimal"
        );
    }
    assert!(!live
        .osm
        .lines_with("path(s) of 3 or 4 switch hops on hop-position VLs")
        .is_empty());
    live.undo_and_expect(&steps, &first);
}

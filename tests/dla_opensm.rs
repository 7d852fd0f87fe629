//! `routing_engine dla` in the distribution's OpenSM on ibsim-simulated
//! Dragonflies: the tables are read back from the simulated switches (as on
//! real hardware) and checked here and by ibdmchk.

mod harness;

use std::time::Duration;

use harness::readback::{assert_same_as_offline, ibdmchk, read_back, sl2vl_rows, write_flat_sl2vl};
use harness::{OpenSm, Sim};
use osmroute_core::fabric::{Lid, PortRef, SwitchId};
use osmroute_core::gen::{self, dragonfly};
use osmroute_core::io::netfile;
use osmroute_core::routing::walk::trace;
use osmroute_core::topology::dragonfly::discover_groups;

const ROUTED: &str = "dla tables configured on all switches";
const UP: &str = "SUBNET UP";

fn dragonfly_net(a: usize, h: usize, p: usize, shuffle_seed: u64) -> String {
    net_of(&dragonfly::Params::new(a, h, p), shuffle_seed)
}

fn net_of(params: &dragonfly::Params, shuffle_seed: u64) -> String {
    let b = dragonfly::dragonfly(params).expect("valid parameters");
    netfile::write(&gen::shuffle_ports(&b, shuffle_seed))
}

use harness::timeout_for;

fn assert_routed_cleanly(osm: &OpenSm) {
    assert!(
        osm.log().contains(ROUTED),
        "dla did not configure the tables"
    );
    osm.assert_no_errors();
}

/// Each pass logs the plugin's own heap (its share of OpenSM's memory):
/// some was used, and what the pass keeps for the SA is no more than its
/// peak.
fn assert_heap_logged(osm: &OpenSm) {
    let lines = osm.lines_with("osmroute: dla: plugin heap peak");
    let line = lines.first().expect("the pass logs the plugin's heap");
    let after = |text: &str| -> f64 {
        let rest = &line[line.find(text).expect(text) + text.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    let (peak, kept) = (after("plugin heap peak "), after("MiB, "));
    assert!(peak > 0.0 && kept <= peak, "{line}");
}

/// Everything issue #2 asks of a routed Dragonfly, on tables read back from
/// the simulated switches.
fn check_dragonfly(params: dragonfly::Params, seed: u64, sampled_switches: usize) {
    let dragonfly::Params {
        a, h, p, groups: g, ..
    } = params;
    let net = net_of(&params, seed);
    let mut sim = Sim::start(&format!("df{a}{h}{p}g{g}"), &net);
    let osm = sim.opensm(&["routing_engine dla", "qos TRUE"], &[]);
    osm.wait_for(UP, timeout_for(&net));
    assert_routed_cleanly(&osm);
    assert_heap_logged(&osm);

    let (fabric, routing) = read_back(&sim, &net);
    assert_eq!(fabric.switches().len(), a * g);
    let groups = discover_groups(fabric.graph()).expect("the generated fabric is a Dragonfly");
    let group = |s: SwitchId| groups.of_switch[s.idx()];
    let ca_lids: Vec<Lid> = fabric.ca_lids().map(|(l, _)| l).collect();
    assert_eq!(ca_lids.len(), a * p * g, "every host got a LID");
    let mut pairs = 0;
    for src in fabric.cas() {
        for &dlid in &ca_lids {
            let path = trace(&fabric, &routing.lfts, PortRef::new(src, 1), dlid)
                .unwrap_or_else(|e| panic!("host {src} -> LID {dlid}: {e}"));
            let switch_hops = path.len() - 1;
            let global = path
                .windows(2)
                .filter(|w| group(w[0].switch) != group(w[1].switch))
                .count();
            assert!(
                switch_hops <= 3,
                "host {src} -> LID {dlid}: {switch_hops} inter-switch hops"
            );
            assert!(
                global <= 1,
                "host {src} -> LID {dlid}: {global} global hops"
            );
            pairs += 1;
        }
    }
    assert!(pairs > 0);

    assert_same_as_offline("dla", &fabric, &routing);

    // SL2VL on sampled switches, against Figure 8 computed here from the
    // read-back topology: VL 1 iff in-port global and out-port local.
    let class = |si: SwitchId, port: u8| -> &'static str {
        match fabric.switch_node(si).port(port).and_then(|p| p.remote) {
            None => "unused",
            Some(r) => match fabric.switch_id(r.node) {
                None => "terminal",
                Some(t) if group(t) == group(si) => "local",
                Some(_) => "global",
            },
        }
    };
    let step = (fabric.switches().len() / sampled_switches).max(1);
    let mut checked = 0;
    for si in fabric.switch_ids().step_by(step).take(sampled_switches) {
        let node = fabric.switch_node(si);
        let lid = node.port(0).expect("switch port 0").lid.raw();
        for out in 1..node.port_slots() as u8 {
            if class(si, out) == "unused" {
                continue;
            }
            let rows = sl2vl_rows(&sim, lid, out);
            assert!(
                !rows.is_empty(),
                "no SL2VL rows for switch LID {lid} out {out}"
            );
            for (inp, vls) in rows {
                if inp == out || class(si, inp) == "unused" && inp != 0 {
                    continue;
                }
                let want = u8::from(class(si, inp) == "global" && class(si, out) == "local");
                assert_eq!(
                    vls,
                    vec![want; 16],
                    "switch LID {lid} in {inp} ({}) out {out} ({})",
                    class(si, inp),
                    class(si, out)
                );
                checked += 1;
            }
        }
    }
    assert!(
        checked > sampled_switches * 4,
        "only {checked} SL2VL pairs checked"
    );

    // The independent check, with the SLs and SL2VL tables the plugin dumped.
    let report = ibdmchk(
        &osm.dir,
        &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"],
    );
    assert!(
        report.contains("no credit loops found"),
        "ibdmchk: {report}"
    );
    assert!(report.contains("1 SLs, 2 VLs used"), "ibdmchk: {report}");
    assert!(
        !report.lines().any(|l| l.starts_with("-E-")),
        "ibdmchk errors: {report}"
    );
}

#[test]
fn dla_on_72_host_dragonfly_is_minimal_and_credit_loop_free() {
    check_dragonfly(dragonfly::Params::new(4, 2, 2), 11, 12);
}

#[test]
fn dla_on_342_host_dragonfly_is_minimal_and_credit_loop_free() {
    check_dragonfly(dragonfly::Params::new(6, 3, 3), 23, 8);
}

/// Five groups with h=2: two global cables join every pair of groups, and
/// dla spreads destinations over both.
#[test]
fn dla_with_parallel_global_cables_is_minimal_and_credit_loop_free() {
    check_dragonfly(
        dragonfly::Params {
            groups: 5,
            ..dragonfly::Params::new(4, 2, 2)
        },
        31,
        6,
    );
}

/// The same routing with every SL on VL 0 has credit loops: ibdmchk's
/// verdict above depends on the SL2VL tables, it is not vacuous.
/// Without OpenSM's routing dumps nothing reads the switches' hop tables
/// (our engines build the multicast trees), so the plugin makes none of
/// their rows; the switches still get the tables an offline run computes.
#[test]
fn without_routing_dumps_no_hop_rows_are_made_and_the_tables_are_the_same() {
    let net = dragonfly_net(4, 2, 2, 7);
    let mut sim = Sim::start("df-no-dumps", &net);
    // The last log_flags line wins: errors and info, no routing dumps.
    let osm = sim.opensm(&["routing_engine dla", "qos TRUE", "log_flags 0x03"], &[]);
    osm.wait_for(UP, timeout_for(&net));
    assert_routed_cleanly(&osm);
    let routed = osm.lines_with("dla: routed");
    assert!(
        routed.iter().all(|l| l.contains("no hop-table rows")),
        "hop rows made without dumps: {routed:?}"
    );
    assert!(
        !osm.dir.join("opensm-lid-matrix.dump").exists(),
        "OpenSM wrote its routing dumps"
    );
    let (fabric, routing) = read_back(&sim, &net);
    assert_same_as_offline("dla", &fabric, &routing);
}

#[test]
fn without_the_vl_shift_ibdmchk_finds_credit_loops() {
    let net = dragonfly_net(4, 2, 2, 5);
    let mut sim = Sim::start("df-novl", &net);
    let osm = sim.opensm(&["routing_engine dla", "qos TRUE"], &[]);
    osm.wait_for(UP, timeout_for(&net));
    write_flat_sl2vl(&osm.dir, "flat-sl2vl.txt");
    let report = ibdmchk(
        &osm.dir,
        &["-c", "osmroute-path-sl.txt", "-d", "flat-sl2vl.txt"],
    );
    assert!(
        !report.contains("no credit loops found"),
        "ibdmchk: {report}"
    );
    assert!(
        report.contains("Found credit loop on:"),
        "ibdmchk: {report}"
    );
    assert!(report.contains("1 SLs, 1 VLs used"), "ibdmchk: {report}");
}

#[test]
fn dla_declines_a_ring_and_opensm_falls_back_to_pssp() {
    let mut net = String::new();
    for i in 0..6 {
        net += &format!("Hca 1 \"h{i}\"\n[1] \"s{i}\"[1]\n\n");
    }
    for i in 0..6 {
        net += &format!(
            "Switch 3 \"s{i}\"\n[1] \"h{i}\"[1]\n[2] \"s{}\"[3]\n[3] \"s{}\"[2]\n\n",
            (i + 1) % 6,
            (i + 5) % 6
        );
    }
    let mut sim = Sim::start("ring", &net);
    let osm = sim.opensm(&["routing_engine dla,pssp", "qos TRUE"], &[]);
    osm.wait_for("pssp tables configured on all switches", timeout_for(&net));
    let declines = osm.lines_with("ERR osmroute: dla declines [osmroute-D003]");
    assert_eq!(
        declines.len(),
        1,
        "one decline line: {:#?}",
        osm.lines_with("osmroute")
    );
    assert!(
        declines[0].contains("(s"),
        "names the switches: {}",
        declines[0]
    );
    assert!(!osm.log().contains(ROUTED));
}

#[test]
fn dla_declines_without_qos_and_opensm_falls_back() {
    let net = dragonfly_net(4, 2, 2, 3);
    let mut sim = Sim::start("noqos", &net);
    let osm = sim.opensm(&["routing_engine dla,minhop", "qos FALSE"], &[]);
    osm.wait_for(
        "minhop tables configured on all switches",
        timeout_for(&net),
    );
    let declines = osm.lines_with("ERR osmroute: dla declines");
    assert_eq!(declines.len(), 1, "{declines:#?}");
    assert!(declines[0].contains("set `qos TRUE`"), "{}", declines[0]);
}

#[test]
fn a_bad_config_line_makes_dla_decline_naming_key_and_file() {
    let net = dragonfly_net(4, 2, 2, 4);
    let mut sim = Sim::start("badconf", &net);
    let conf = sim.dir.join("osmroute.conf");
    std::fs::write(&conf, "# options\ndla.sl 42\n").expect("write config");
    let conf_s = conf.display().to_string();
    let osm = sim.opensm(
        &["routing_engine dla,pssp", "qos TRUE"],
        &[("OSMROUTE_CONFIG", &conf_s)],
    );
    osm.wait_for("pssp tables configured on all switches", timeout_for(&net));
    let errs = osm.lines_with("ERR osmroute:");
    assert!(
        errs.iter()
            .any(|l| l.contains(&format!("{conf_s}:2: key 'dla.sl'"))
                && l.contains("not a number from 0 to 15")),
        "{errs:#?}"
    );
    assert!(errs.iter().any(|l| l.contains("dla declines")), "{errs:#?}");
}

#[test]
fn configured_sl_reaches_path_sl_and_the_host_sl2vl_tables() {
    let net = dragonfly_net(4, 2, 2, 6);
    let mut sim = Sim::start("sl3", &net);
    let osm = sim.opensm_configured(&["routing_engine dla", "qos TRUE"], "dla.sl = 3\n");
    osm.wait_for(UP, timeout_for(&net));
    assert_routed_cleanly(&osm);
    let path_sl = osm.file("osmroute-path-sl.txt");
    assert_eq!(path_sl.lines().count(), 72 * 71);
    assert!(
        path_sl.lines().all(|l| l.ends_with(" 3")),
        "every path on SL 3"
    );
    // Host port SL2VL: SL 3 on VL 0 (LID 1 is the first host, the SM's).
    let rows = sim.tool("smpquery", &["sl2vl", "1"]);
    let vls: Vec<u8> = rows
        .lines()
        .find(|l| l.starts_with("ports:"))
        .and_then(|l| l.split_once(':').map(|x| x.1))
        .and_then(|l| l.split_once(':').map(|x| x.1))
        .map(|l| l.split('|').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_default();
    assert_eq!(vls.get(3), Some(&0), "host SL2VL: {rows}");
}

#[test]
fn a_heavy_resweep_routes_again() {
    let net = dragonfly_net(4, 2, 2, 8);
    let mut sim = Sim::start("resweep", &net);
    let osm = sim.opensm(&["routing_engine dla", "qos TRUE"], &[]);
    osm.wait_for(UP, timeout_for(&net));
    assert_eq!(osm.lines_with("osmroute: dla: routed").len(), 1);
    osm.resweep();
    osm.wait_for_n("osmroute: dla: routed", 2, Duration::from_secs(60));
    osm.wait_for_n(ROUTED, 2, Duration::from_secs(60));
    assert_routed_cleanly(&osm);
}

/// A Dragonfly that lost a switch: dla finds the groups by itself (its
/// default `dla.groups auto`) and routes minimally without credit loops;
/// told to use only the paper's closed neighbourhoods, it declines, points
/// to `auto`, and the fallback OpenSM names (our pssp) routes instead.
#[test]
fn dla_routes_a_dragonfly_that_lost_a_switch() {
    let net = harness::generate_shuffled(
        &[
            "dragonfly",
            "--a",
            "5",
            "--h",
            "2",
            "--p",
            "1",
            "--groups",
            "6",
            "--drop-switches",
            "0.03",
        ],
        1,
    );
    let mut sim = Sim::start("df-mapping", &net);
    let osm = sim.opensm_configured(
        &["routing_engine dla,pssp", "qos TRUE"],
        "dla.groups neighbourhood\n",
    );
    osm.wait_for("pssp tables configured on all switches", timeout_for(&net));
    let declines = osm.lines_with("ERR osmroute: dla declines");
    assert!(
        declines.len() == 1 && declines[0].contains("dla.groups auto"),
        "{declines:#?}"
    );
    drop(osm);

    let osm = sim.opensm(&["routing_engine dla,pssp", "qos TRUE"], &[]);
    osm.wait_for(UP, timeout_for(&net));
    assert_routed_cleanly(&osm);
    let (fabric, routing) = read_back(&sim, &net);
    for src in fabric.cas() {
        for (dlid, _) in fabric
            .lids()
            .filter(|(_, o)| !fabric.node(o.node).is_switch())
        {
            let path = trace(&fabric, &routing.lfts, PortRef::new(src, 1), dlid)
                .unwrap_or_else(|e| panic!("{src} -> {dlid}: {e}"));
            assert!(
                path.len() <= 4,
                "{src} -> LID {dlid}: {} switches",
                path.len()
            );
        }
    }
    let report = ibdmchk(
        &osm.dir,
        &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"],
    );
    assert!(
        report.contains("no credit loops found"),
        "ibdmchk: {report}"
    );
}

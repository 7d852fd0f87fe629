//! `routing_engine dla` in the distribution's OpenSM on ibsim-simulated
//! Dragonflies: the tables are read back from the simulated switches (as on
//! real hardware) and checked here and by ibdmchk.

mod harness;

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use harness::{OpenSm, Sim};
use osmroute_core::analysis::paths::trace;
use osmroute_core::fabric::{NodeKind, PortRef};
use osmroute_core::gen::{self, dragonfly};
use osmroute_core::io::netfile;
use osmroute_core::routing::{PathSl, Routing};
use osmroute_core::topology::dragonfly::discover_groups;
use osmroute_core::Fabric;

const ROUTED: &str = "dla tables configured on all switches";
const UP: &str = "SUBNET UP";

fn dragonfly_net(a: usize, h: usize, p: usize, shuffle_seed: u64) -> String {
    net_of(&dragonfly::Params::new(a, h, p), shuffle_seed)
}

fn net_of(params: &dragonfly::Params, shuffle_seed: u64) -> String {
    let b = dragonfly::dragonfly(params).expect("valid parameters");
    netfile::write(&gen::shuffle_ports(&b, shuffle_seed))
}

fn timeout_for(net: &str) -> Duration {
    Duration::from_secs(120 + net.lines().count() as u64 / 50)
}

/// (node GUID, LID) of every switch, as `ibswitches` reports them.
fn switches(sim: &Sim) -> Vec<(u64, u16)> {
    sim.tool("ibswitches", &[])
        .lines()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let guid = u64::from_str_radix(words.get(2)?.trim_start_matches("0x"), 16).ok()?;
            let lid = words.iter().position(|w| *w == "lid").and_then(|i| words.get(i + 1))?.parse().ok()?;
            Some((guid, lid))
        })
        .collect()
}

/// The fabric of `net` with the LIDs OpenSM assigned, and the LFTs read back
/// from every simulated switch with `ibroute`.
fn read_back(sim: &Sim, net: &str) -> (Fabric, Routing) {
    let mut b = netfile::read(net).expect("our own net file parses");
    let mut port_by_guid = HashMap::new();
    for (id, n) in b.nodes().iter().enumerate() {
        for (num, p) in n.ports.iter().enumerate() {
            if let Some(p) = p {
                let end_port = if n.kind == NodeKind::Switch { num == 0 } else { num > 0 };
                if end_port {
                    port_by_guid.insert(p.guid, PortRef::new(id, num as u8));
                }
            }
        }
    }
    let mut tables: HashMap<u64, Vec<(u16, u8)>> = HashMap::new();
    for (guid, lid) in switches(sim) {
        let mut entries = Vec::new();
        for line in sim.tool("ibroute", &[&lid.to_string()]).lines() {
            // 0x0001 003 : (Channel Adapter portguid 0x0000000000100001: 'h0')
            let words: Vec<&str> = line.split_whitespace().collect();
            let (Some(l), Some(port)) = (words.first(), words.get(1)) else { continue };
            let (Some(l), Ok(port)) = (l.strip_prefix("0x"), port.parse::<u8>()) else { continue };
            let Ok(l) = u16::from_str_radix(l, 16) else { continue };
            entries.push((l, port));
            let owner = words.iter().position(|w| *w == "portguid").and_then(|i| words.get(i + 1));
            if let Some(g) = owner.and_then(|g| u64::from_str_radix(g.trim_end_matches(':').trim_start_matches("0x"), 16).ok()) {
                if let Some(&at) = port_by_guid.get(&g) {
                    b.set_lid(at, l, 0).expect("port exists");
                }
            }
        }
        tables.insert(guid, entries);
    }
    let fabric = b.build().expect("read-back LIDs are consistent");
    let mut lfts = Routing::empty_lfts(&fabric);
    for (si, &node) in fabric.switches().iter().enumerate() {
        let entries = tables.get(&fabric.node(node).guid).expect("ibswitches lists every switch");
        for &(lid, port) in entries {
            if let Some(slot) = lfts[si].get_mut(lid as usize) {
                *slot = port;
            }
        }
    }
    (fabric, Routing { engine: "read back".into(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) })
}

/// SL2VL rows of `smpquery sl2vl LID OUT`: (in-port, VL per SL).
fn sl2vl_rows(sim: &Sim, lid: u16, out: u8) -> Vec<(u8, Vec<u8>)> {
    sim.tool("smpquery", &["sl2vl", &lid.to_string(), &out.to_string()])
        .lines()
        .filter_map(|l| {
            // ports: in  6, out  5: | 1| 1| ... |
            let rest = l.strip_prefix("ports: in")?;
            let (inp, rest) = rest.split_once(',')?;
            let (_, vls) = rest.split_once(':')?;
            let vls: Vec<u8> = vls.split('|').filter_map(|v| v.trim().parse().ok()).collect();
            Some((inp.trim().parse().ok()?, vls))
        })
        .collect()
}

fn ibdmchk(dir: &std::path::Path, extra: &[&str]) -> String {
    let out = Command::new("ibdmchk")
        .current_dir(dir)
        .args(["-s", "opensm-subnet.lst", "-f", "opensm.fdbs", "-m", "opensm.mcfdbs"])
        .args(extra)
        .output()
        .expect("run ibdmchk (install ibutils)");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

fn assert_routed_cleanly(osm: &OpenSm) {
    let log = osm.log();
    assert!(log.contains(ROUTED), "dla did not configure the tables");
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERR")).collect();
    assert!(errors.is_empty(), "ERR lines in OpenSM's log: {errors:#?}");
}

/// Everything issue #2 asks of a routed Dragonfly, on tables read back from
/// the simulated switches.
fn check_dragonfly(params: dragonfly::Params, seed: u64, sampled_switches: usize) {
    let dragonfly::Params { a, h, p, groups: g, .. } = params;
    let net = net_of(&params, seed);
    let mut sim = Sim::start(&format!("df{a}{h}{p}g{g}"), &net);
    let osm = sim.opensm(&["routing_engine dla", "qos TRUE"], &[]);
    osm.wait_for(UP, timeout_for(&net));
    assert_routed_cleanly(&osm);

    let (fabric, routing) = read_back(&sim, &net);
    assert_eq!(fabric.switches().len(), a * g);
    let groups = discover_groups(&fabric.switch_adjacency()).expect("the generated fabric is a Dragonfly");
    let ca_lids: Vec<u16> = fabric.lids().filter(|(_, o)| !fabric.node(o.node).is_switch()).map(|(l, _)| l).collect();
    assert_eq!(ca_lids.len(), a * p * g, "every host got a LID");
    let mut pairs = 0;
    for src in fabric.cas() {
        for &dlid in &ca_lids {
            let path = trace(&fabric, &routing, PortRef::new(src, 1), dlid)
                .unwrap_or_else(|e| panic!("host {src} -> LID {dlid}: {e}"));
            let switch_hops = path.len() - 1;
            let global = path.windows(2).filter(|w| groups.of_switch[w[0].switch] != groups.of_switch[w[1].switch]).count();
            assert!(switch_hops <= 3, "host {src} -> LID {dlid}: {switch_hops} inter-switch hops");
            assert!(global <= 1, "host {src} -> LID {dlid}: {global} global hops");
            pairs += 1;
        }
    }
    assert!(pairs > 0);

    // The plugin and an offline run agree on the same fabric and LIDs.
    let offline = osmroute_core::engines::route("dla", &fabric, &Default::default()).expect("offline dla");
    for (si, (live, mine)) in routing.lfts.iter().zip(&offline.lfts).enumerate() {
        for (lid, _) in fabric.lids() {
            assert_eq!(live[lid as usize], mine[lid as usize], "switch index {si}, LID {lid}: switch vs offline");
        }
    }

    // SL2VL on sampled switches, against Figure 8 computed here from the
    // read-back topology: VL 1 iff in-port global and out-port local.
    let class = |si: usize, port: u8| -> &'static str {
        match fabric.node(fabric.switches()[si]).port(port).and_then(|p| p.remote) {
            None => "unused",
            Some(r) => match fabric.switch_index(r.node) {
                None => "terminal",
                Some(t) if groups.of_switch[t] == groups.of_switch[si] => "local",
                Some(_) => "global",
            },
        }
    };
    let step = (fabric.switches().len() / sampled_switches).max(1);
    let mut checked = 0;
    for si in (0..fabric.switches().len()).step_by(step).take(sampled_switches) {
        let node = fabric.node(fabric.switches()[si]);
        let lid = node.port(0).expect("switch port 0").lid;
        for out in 1..node.port_slots() as u8 {
            if class(si, out) == "unused" {
                continue;
            }
            let rows = sl2vl_rows(&sim, lid, out);
            assert!(!rows.is_empty(), "no SL2VL rows for switch LID {lid} out {out}");
            for (inp, vls) in rows {
                if inp == out || class(si, inp) == "unused" && inp != 0 {
                    continue;
                }
                let want = u8::from(class(si, inp) == "global" && class(si, out) == "local");
                assert_eq!(vls, vec![want; 16], "switch LID {lid} in {inp} ({}) out {out} ({})", class(si, inp), class(si, out));
                checked += 1;
            }
        }
    }
    assert!(checked > sampled_switches * 4, "only {checked} SL2VL pairs checked");

    // The independent check, with the SLs and SL2VL tables the plugin dumped.
    let report = ibdmchk(&osm.dir, &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"]);
    assert!(report.contains("no credit loops found"), "ibdmchk: {report}");
    assert!(report.contains("1 SLs, 2 VLs used"), "ibdmchk: {report}");
    assert!(!report.lines().any(|l| l.starts_with("-E-")), "ibdmchk errors: {report}");
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
    check_dragonfly(dragonfly::Params { groups: 5, ..dragonfly::Params::new(4, 2, 2) }, 31, 6);
}

/// The same routing with every SL on VL 0 has credit loops: ibdmchk's
/// verdict above depends on the SL2VL tables, it is not vacuous.
#[test]
fn without_the_vl_shift_ibdmchk_finds_credit_loops() {
    let net = dragonfly_net(4, 2, 2, 5);
    let mut sim = Sim::start("df-novl", &net);
    let osm = sim.opensm(&["routing_engine dla", "qos TRUE"], &[]);
    osm.wait_for(UP, timeout_for(&net));
    let flat: String = osm
        .file("osmroute-sl2vl.txt")
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            format!("{} {} {} {}\n", w[0], w[1], w[2], ["0x00"; 8].join(" "))
        })
        .collect();
    std::fs::write(osm.dir.join("flat-sl2vl.txt"), flat).expect("write");
    let report = ibdmchk(&osm.dir, &["-c", "osmroute-path-sl.txt", "-d", "flat-sl2vl.txt"]);
    assert!(!report.contains("no credit loops found"), "ibdmchk: {report}");
    assert!(report.contains("Found credit loop on:"), "ibdmchk: {report}");
    assert!(report.contains("1 SLs, 1 VLs used"), "ibdmchk: {report}");
}

#[test]
fn dla_declines_a_ring_and_opensm_falls_back_to_minhop() {
    let mut net = String::new();
    for i in 0..6 {
        net += &format!("Hca 1 \"h{i}\"\n[1] \"s{i}\"[1]\n\n");
    }
    for i in 0..6 {
        net += &format!("Switch 3 \"s{i}\"\n[1] \"h{i}\"[1]\n[2] \"s{}\"[3]\n[3] \"s{}\"[2]\n\n", (i + 1) % 6, (i + 5) % 6);
    }
    let mut sim = Sim::start("ring", &net);
    let osm = sim.opensm(&["routing_engine dla,minhop", "qos TRUE"], &[]);
    osm.wait_for("minhop tables configured on all switches", timeout_for(&net));
    let declines = osm.lines_with("ERR osmroute: dla declines: not a Dragonfly");
    assert_eq!(declines.len(), 1, "one decline line: {:#?}", osm.lines_with("osmroute"));
    assert!(declines[0].contains("(s"), "names the switches: {}", declines[0]);
    assert!(!osm.log().contains(ROUTED));
}

#[test]
fn dla_declines_without_qos_and_opensm_falls_back_to_minhop() {
    let net = dragonfly_net(4, 2, 2, 3);
    let mut sim = Sim::start("noqos", &net);
    let osm = sim.opensm(&["routing_engine dla,minhop", "qos FALSE"], &[]);
    osm.wait_for("minhop tables configured on all switches", timeout_for(&net));
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
    let osm = sim.opensm(&["routing_engine dla,minhop", "qos TRUE"], &[("OSMROUTE_CONFIG", &conf_s)]);
    osm.wait_for("minhop tables configured on all switches", timeout_for(&net));
    let errs = osm.lines_with("ERR osmroute:");
    assert!(
        errs.iter().any(|l| l.contains(&format!("{conf_s}:2: key 'dla.sl'")) && l.contains("not a number from 0 to 15")),
        "{errs:#?}"
    );
    assert!(errs.iter().any(|l| l.contains("dla declines")), "{errs:#?}");
}

#[test]
fn configured_sl_reaches_path_sl_and_the_host_sl2vl_tables() {
    let net = dragonfly_net(4, 2, 2, 6);
    let mut sim = Sim::start("sl3", &net);
    let conf = sim.dir.join("osmroute.conf");
    std::fs::write(&conf, "dla.sl = 3\n").expect("write config");
    let conf_s = conf.display().to_string();
    let osm = sim.opensm(&["routing_engine dla", "qos TRUE"], &[("OSMROUTE_CONFIG", &conf_s)]);
    osm.wait_for(UP, timeout_for(&net));
    assert_routed_cleanly(&osm);
    let path_sl = osm.file("osmroute-path-sl.txt");
    assert_eq!(path_sl.lines().count(), 72 * 71);
    assert!(path_sl.lines().all(|l| l.ends_with(" 3")), "every path on SL 3");
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

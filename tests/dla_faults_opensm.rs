//! dla while cables and switches fail: the distribution's OpenSM runs
//! long (`sweep_interval 2`, no `-o`) on an ibsim Dragonfly, and cables
//! and whole switches are unlinked and relinked through ibsim's console.
//! Every re-sweep must be routed by dla itself (no decline, no fallback,
//! no ERR line), the tables read back from the simulated switches must be
//! the ones dla computes offline for the fabric as it now is, deliver
//! every pair and be free of credit loops (our check and ibdmchk), and
//! once everything is relinked the tables must equal those of the start.

mod harness;

use std::time::{Duration, Instant};

use harness::readback::{ibdmchk, read_back_of};
use harness::{OpenSm, Sim};
use osmroute_core::analysis::report::analyze;
use osmroute_core::fabric::{NodeId, PortRef};
use osmroute_core::gen::{degrade, dragonfly};
use osmroute_core::io::netfile;
use osmroute_core::routing::Routing;
use osmroute_core::{Fabric, FabricBuilder};

const ROUTED: &str = "tables configured on all switches";
const UP: &str = "SUBNET UP";

/// A running OpenSM on a live simulation, and what has been unlinked.
struct Live {
    sim: Sim,
    osm: OpenSm,
    net: String,
    /// Routing passes seen so far.
    passes: usize,
    /// Cables unlinked, by one end ("NAME", port).
    cut: Vec<(String, u8)>,
    /// Switches with every cable unlinked.
    dead: Vec<String>,
}

impl Live {
    fn start(name: &str, params: &dragonfly::Params) -> Live {
        let net = netfile::write(&dragonfly::dragonfly(params).expect("valid parameters"));
        let mut sim = Sim::start_live(name, &net);
        let osm = sim.opensm(&["routing_engine dla", "qos TRUE", "sweep_interval 2"], &[]);
        let mut live = Live { sim, osm, net, passes: 0, cut: Vec::new(), dead: Vec::new() };
        live.wait_for_pass();
        live
    }

    /// Sends ibsim console commands (`unlink`/`relink` a cable or a
    /// switch) at once, then waits for OpenSM to route the result.
    fn faults(&mut self, commands: &[String]) {
        for command in commands {
            self.sim.console(command);
            let (verb, target) = command.split_once(' ').expect("VERB TARGET");
            let (node, port) = match target.split_once('[') {
                Some((node, port)) => (node, Some(port.trim_end_matches(']').parse::<u8>().expect("port number"))),
                None => (target, None),
            };
            let node = node.trim_matches('"').to_string();
            match (verb, port) {
                ("unlink", Some(p)) => self.cut.push((node, p)),
                ("relink", Some(p)) => self.cut.retain(|c| *c != (node.clone(), p)),
                ("unlink", None) => self.dead.push(node),
                ("relink", None) => self.dead.retain(|d| *d != node),
                _ => panic!("unexpected console command {command}"),
            }
        }
        self.wait_for_pass();
    }

    /// Waits for a routing pass after the last one seen, and for OpenSM
    /// to settle (no further pass for two sweep intervals), then checks
    /// that every pass was dla's and nothing was logged as an error.
    fn wait_for_pass(&mut self) {
        let start = Instant::now();
        let count = |text: &str| self.osm.log().matches(text).count();
        let mut last = (count(ROUTED), Instant::now());
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let now = count(ROUTED);
            if now != last.0 {
                last = (now, Instant::now());
            }
            let settled = last.0 > self.passes && count(UP) >= last.0 && last.1.elapsed() > Duration::from_secs(5);
            if settled {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(180), "no routing pass after {:?}; log:\n{}", self.cut, self.osm.log());
        }
        self.passes = last.0;
        self.osm.assert_no_errors();
        let passes = self.osm.lines_with(ROUTED);
        assert!(passes.iter().all(|l| l.contains("dla tables configured")), "a pass not routed by dla: {passes:#?}");
        assert!(self.osm.lines_with("declines").is_empty(), "dla declined: {:#?}", self.osm.lines_with("declines"));
    }

    /// The fabric as it now is: the net file without the unlinked cables
    /// and switches.
    fn current_fabric(&self) -> FabricBuilder {
        let mut b = netfile::read(&self.net).expect("our own net file parses");
        let by_name = |b: &FabricBuilder, name: &str| -> NodeId {
            NodeId::range(b.node_count()).find(|&i| b.node(i).desc == name).unwrap_or_else(|| panic!("no node {name}"))
        };
        for (name, port) in &self.cut {
            let at = PortRef::new(by_name(&b, name), *port);
            b.disconnect(at);
        }
        let dead: Vec<NodeId> = self.dead.iter().map(|name| by_name(&b, name)).collect();
        degrade::without_switches(&b, &dead).expect("a consistent fabric")
    }

    /// The far end of the cable at `name`'s `port` in the net file.
    fn peer(&self, name: &str, port: u8) -> (String, u8) {
        let b = netfile::read(&self.net).expect("our own net file parses");
        let id = NodeId::range(b.node_count()).find(|&i| b.node(i).desc == name).expect("node");
        let far = b.node(id).links().find(|&(p, _)| p == port).expect("cabled port").1;
        (b.node(far.node).desc.clone(), far.port.raw())
    }

    /// Reads the tables back from the simulated switches and checks them
    /// (module comment); returns them.
    fn check(&self) -> (Fabric, Routing) {
        let (fabric, read) = read_back_of(&self.sim, self.current_fabric());
        let offline = osmroute_core::pipeline::route_by_name("dla", &fabric)
            .unwrap_or_else(|e| panic!("offline dla after {:?} / {:?}: {e}", self.cut, self.dead))
            .routing;
        for s in fabric.switch_ids() {
            for (lid, _) in fabric.lids() {
                assert_eq!(read.lfts[s].get(lid), offline.lfts[s].get(lid), "{}: LID {lid}", fabric.describe_switch(s));
            }
        }
        let report = analyze(&fabric, &offline);
        assert!(report.delivered(), "undelivered after {:?} / {:?}: {:?}", self.cut, self.dead, report.failures);
        assert!(report.credit_loop.is_none(), "credit loop after {:?} / {:?}", self.cut, self.dead);
        let ibdm = ibdmchk(&self.osm.dir, &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"]);
        assert!(ibdm.contains("no credit loops found"), "ibdmchk after {:?}: {ibdm}", self.cut);
        assert!(!ibdm.lines().any(|l| l.starts_with("-E-")), "ibdmchk errors: {ibdm}");
        (fabric, read)
    }
}

/// Port `i` (0-based) of the generator's local ports of a switch, and of
/// its global ports (hosts come first, then a-1 local, then h global).
fn local_port(params: &dragonfly::Params, i: usize) -> u8 {
    (params.p + 1 + i) as u8
}

fn global_port(params: &dragonfly::Params, i: usize) -> u8 {
    (params.p + params.a + i) as u8
}

fn same_tables(fabric: &Fabric, a: &Routing, b: &Routing) -> bool {
    fabric.switch_ids().all(|s| fabric.lids().all(|(lid, _)| a.lfts[s].get(lid) == b.lfts[s].get(lid)))
}

/// A global cable, a local cable and a whole switch fail one after the
/// other, each re-sweep is dla's and checked; relinked, the tables are the
/// first ones again (and so are the SL2VL and path-SL files).
#[test]
fn dla_routes_every_resweep_while_cables_and_a_switch_fail() {
    let params = dragonfly::Params::new(4, 2, 2);
    let mut live = Live::start("df-faults", &params);
    let (fabric, first) = live.check();
    let first_sl2vl = live.osm.file("osmroute-sl2vl.txt");
    let first_path_sl = live.osm.file("osmroute-path-sl.txt");
    // The SM's own host is df-g0-s0-h0: its switch stays.
    let steps = [
        format!("unlink \"df-g1-s0\"[{}]", global_port(&params, 0)),
        format!("unlink \"df-g2-s1\"[{}]", local_port(&params, 0)),
        "unlink \"df-g5-s2\"".to_string(),
        format!("unlink \"df-g7-s3\"[{}]", global_port(&params, 1)),
    ];
    for step in &steps {
        live.faults(std::slice::from_ref(step));
        let (now, _) = live.check();
        assert!(now.switch_count() <= fabric.switch_count());
    }
    assert!(live.osm.log().contains("pair(s) of groups without a global cable"));
    let relinks: Vec<String> = steps.iter().rev().map(|s| s.replacen("unlink", "relink", 1)).collect();
    live.faults(&relinks);
    let (again, last) = live.check();
    assert!(same_tables(&again, &first, &last), "relinked, the tables differ from the first pass");
    assert_eq!(live.osm.file("osmroute-sl2vl.txt"), first_sl2vl);
    assert_eq!(live.osm.file("osmroute-path-sl.txt"), first_path_sl);
}

/// Damage at once on the 342-host Dragonfly: a tenth of the global cables
/// (every pair of groups has one), two local cables and a switch, then all
/// back; and a global cable flapping. Every pass is dla's.
#[test]
fn dla_routes_heavy_damage_and_flaps_live() {
    let params = dragonfly::Params::new(6, 3, 3);
    let mut live = Live::start("df-damage", &params);
    let (_, first) = live.check();
    let g = params.a * params.h + 1;
    // Every group's first global port on every third group: about a tenth
    // of the 171 global cables (one end named; ibsim takes the cable down).
    let mut damage: Vec<String> = (1..g)
        .step_by(3)
        .map(|group| format!("unlink \"df-g{group}-s{}\"[{}]", group % params.a, global_port(&params, group % params.h)))
        .collect();
    damage.push(format!("unlink \"df-g4-s0\"[{}]", local_port(&params, 1)));
    damage.push(format!("unlink \"df-g9-s5\"[{}]", local_port(&params, 3)));
    damage.push("unlink \"df-g12-s3\"".to_string());
    live.faults(&damage);
    live.check();
    // A global cable of group 0 that the damage left up.
    let damaged_ends: Vec<(String, u8)> = live.cut.iter().flat_map(|(n, p)| [(n.clone(), *p), live.peer(n, *p)]).collect();
    let flapping = (0..params.h)
        .map(|i| ("df-g0-s1".to_string(), global_port(&params, i)))
        .find(|end| !damaged_ends.contains(end) && !damaged_ends.contains(&live.peer(&end.0, end.1)))
        .map(|(n, p)| format!("\"{n}\"[{p}]"))
        .expect("a global cable of df-g0-s1 is up");
    for _ in 0..3 {
        live.faults(&[format!("unlink {flapping}")]);
        live.faults(&[format!("relink {flapping}")]);
    }
    let relinks: Vec<String> = damage.iter().map(|s| s.replacen("unlink", "relink", 1)).collect();
    live.faults(&relinks);
    let (again, last) = live.check();
    assert!(same_tables(&again, &first, &last), "relinked, the tables differ from the first pass");
}

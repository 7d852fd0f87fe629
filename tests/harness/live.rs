//! An engine while cables and switches fail: the distribution's OpenSM runs
//! long (`sweep_interval 2`, no `-o`) on an ibsim fabric whose cables and
//! whole switches are unlinked and relinked through ibsim's console. Every
//! re-sweep must be routed by the engine itself (no decline, no fallback,
//! no ERR line); `check` reads the tables back from the simulated switches
//! and holds them to an offline run of the engine on the fabric as it now
//! is, to delivery, and to credit-loop freedom (ours and ibdmchk's).

use std::time::{Duration, Instant};

use super::readback::{ibdmchk, read_back_of};
use super::{OpenSm, Sim};
use osmroute_core::analysis::report::analyze;
use osmroute_core::fabric::{NodeId, PortRef};
use osmroute_core::gen::degrade;
use osmroute_core::io::netfile;
use osmroute_core::routing::Routing;
use osmroute_core::{Fabric, FabricBuilder};

const ROUTED: &str = "tables configured on all switches";
const UP: &str = "SUBNET UP";

/// A running OpenSM on a live simulation, and what has been unlinked.
pub struct Live {
    pub sim: Sim,
    pub osm: OpenSm,
    engine: String,
    net: String,
    /// Routing passes seen so far.
    passes: usize,
    /// Cables unlinked, by one end ("NAME", port).
    pub cut: Vec<(String, u8)>,
    /// Switches with every cable unlinked.
    pub dead: Vec<String>,
}

impl Live {
    /// Simulates `net` (ibsim socket named after `name`) under an OpenSM
    /// routing with `engine` alone, and waits for its first pass.
    pub fn start(name: &str, engine: &str, net: String) -> Live {
        let mut sim = Sim::start_live(name, &net);
        let routing = format!("routing_engine {engine}");
        let osm = sim.opensm(&[&routing, "qos TRUE", "sweep_interval 2"], &[]);
        let mut live = Live { sim, osm, engine: engine.to_string(), net, passes: 0, cut: Vec::new(), dead: Vec::new() };
        live.wait_for_pass();
        live
    }

    /// Sends ibsim console commands (`unlink`/`relink` a cable or a
    /// switch) at once, then waits for OpenSM to route the result.
    pub fn faults(&mut self, commands: &[String]) {
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
    /// that every pass was the engine's and nothing was logged as an error.
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
        let ours = format!("{} tables configured", self.engine);
        assert!(passes.iter().all(|l| l.contains(&ours)), "a pass not routed by {}: {passes:#?}", self.engine);
        let declines = self.osm.lines_with("declines");
        assert!(declines.is_empty(), "{} declined: {declines:#?}", self.engine);
    }

    /// The fabric as it now is: the net file without the unlinked cables
    /// and switches.
    pub fn current_fabric(&self) -> FabricBuilder {
        let mut b = netfile::read(&self.net).expect("our own net file parses");
        for (name, port) in &self.cut {
            let at = PortRef::new(node_named(&b, name), *port);
            b.disconnect(at);
        }
        let dead: Vec<NodeId> = self.dead.iter().map(|name| node_named(&b, name)).collect();
        degrade::without_switches(&b, &dead).expect("a consistent fabric")
    }

    /// The far end of the cable at `name`'s `port` in the net file.
    pub fn peer(&self, name: &str, port: u8) -> (String, u8) {
        let b = netfile::read(&self.net).expect("our own net file parses");
        let far = b.node(node_named(&b, name)).links().find(|&(p, _)| p == port).expect("cabled port").1;
        (b.node(far.node).desc.clone(), far.port.raw())
    }

    /// Ports of switch `name` cabled to other switches in the net file.
    pub fn switch_ports(&self, name: &str) -> Vec<u8> {
        let b = netfile::read(&self.net).expect("our own net file parses");
        let node = b.node(node_named(&b, name));
        node.links().filter(|(_, far)| b.node(far.node).is_switch()).map(|(p, _)| p.raw()).collect()
    }

    /// Reads the tables back from the simulated switches and checks them
    /// (module comment); returns them with the offline routing.
    pub fn check(&self) -> (Fabric, Routing, Routing) {
        let (fabric, read) = read_back_of(&self.sim, self.current_fabric());
        let offline = osmroute_core::pipeline::route_by_name(&self.engine, &fabric)
            .unwrap_or_else(|e| panic!("offline {} after {:?} / {:?}: {e}", self.engine, self.cut, self.dead))
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
        (fabric, read, offline)
    }
}

fn node_named(b: &FabricBuilder, name: &str) -> NodeId {
    NodeId::range(b.node_count()).find(|&i| b.node(i).desc == name).unwrap_or_else(|| panic!("no node {name}"))
}

/// Whether two routings of one fabric have the same forwarding tables.
pub fn same_tables(fabric: &Fabric, a: &Routing, b: &Routing) -> bool {
    fabric.switch_ids().all(|s| fabric.lids().all(|(lid, _)| a.lfts[s].get(lid) == b.lfts[s].get(lid)))
}

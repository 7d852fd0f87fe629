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

/// What ibsim's console has taken down in a simulated net file, and the
/// fabric that leaves.
pub struct Outage {
    net: String,
    /// Cables unlinked, by one end ("NAME", port).
    pub cut: Vec<(String, u8)>,
    /// Switches with every cable unlinked.
    pub dead: Vec<String>,
}

impl Outage {
    pub fn new(net: String) -> Self {
        Outage {
            net,
            cut: Vec::new(),
            dead: Vec::new(),
        }
    }

    fn parsed(&self) -> FabricBuilder {
        netfile::read(&self.net).expect("our own net file parses")
    }

    /// Sends ibsim console commands (`unlink`/`relink` of `"NODE"[PORT]`
    /// or `"NODE"`) to `sim` and remembers what is down; relinking either
    /// end of a cable brings it back.
    pub fn apply(&mut self, sim: &mut Sim, commands: &[String]) {
        for command in commands {
            sim.console(command);
            let (verb, target) = command.split_once(' ').expect("VERB TARGET");
            let (node, port) = match target.split_once('[') {
                Some((node, port)) => (
                    node,
                    Some(
                        port.trim_end_matches(']')
                            .parse::<u8>()
                            .expect("port number"),
                    ),
                ),
                None => (target, None),
            };
            let node = node.trim_matches('"').to_string();
            match (verb, port) {
                ("unlink", Some(p)) => self.cut.push((node, p)),
                ("relink", Some(p)) => {
                    let far = self.peer(&node, p);
                    self.cut.retain(|c| *c != (node.clone(), p) && *c != far)
                }
                ("unlink", None) => self.dead.push(node),
                ("relink", None) => self.dead.retain(|d| *d != node),
                _ => panic!("unexpected console command {command}"),
            }
        }
    }

    /// The fabric as it now is: the net file without the unlinked cables
    /// and switches.
    pub fn current_fabric(&self) -> FabricBuilder {
        let mut b = self.parsed();
        for (name, port) in &self.cut {
            let at = PortRef::new(node_named(&b, name), *port);
            b.disconnect(at);
        }
        let dead: Vec<NodeId> = self.dead.iter().map(|name| node_named(&b, name)).collect();
        degrade::without_switches(&b, &dead).expect("a consistent fabric")
    }

    /// The far end of the cable at `name`'s `port` in the net file.
    pub fn peer(&self, name: &str, port: u8) -> (String, u8) {
        let b = self.parsed();
        let far = b
            .node(node_named(&b, name))
            .links()
            .find(|&(p, _)| p == port)
            .expect("a cabled port")
            .1;
        (b.node(far.node).desc.clone(), far.port.raw())
    }

    /// Ports of switch `name` cabled to other switches in the net file.
    pub fn switch_ports(&self, name: &str) -> Vec<u8> {
        let b = self.parsed();
        let node = b.node(node_named(&b, name));
        node.links()
            .filter(|(_, far)| b.node(far.node).is_switch())
            .map(|(p, _)| p.raw())
            .collect()
    }
}

/// Waits for a routing pass after the `seen` first ones and for OpenSM to
/// settle (every pass ended in SUBNET UP, none new for five seconds);
/// returns the passes there are then. Panics with the log's tail after
/// three minutes, naming `after`.
pub fn wait_for_settled_pass(osm: &OpenSm, seen: usize, after: &str) -> usize {
    let start = Instant::now();
    let count = |text: &str| osm.log().matches(text).count();
    let mut last = (count(ROUTED), Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(250));
        let now = count(ROUTED);
        if now != last.0 {
            last = (now, Instant::now());
        }
        if last.0 > seen && count(UP) >= last.0 && last.1.elapsed() > Duration::from_secs(5) {
            return last.0;
        }
        if start.elapsed() > Duration::from_secs(180) {
            let log = osm.log();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            panic!(
                "no routing pass after {after}; last log lines:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
    }
}

/// A pass's tables and plugin files, kept to compare a later pass with.
pub struct FirstPass {
    tables: Routing,
    sl2vl: String,
    path_sl: String,
}

/// A running OpenSM on a live simulation, and what has been unlinked.
pub struct Live {
    pub sim: Sim,
    pub osm: OpenSm,
    engine: String,
    /// Routing passes seen so far.
    passes: usize,
    pub outage: Outage,
}

impl Live {
    /// Simulates `net` (ibsim socket named after `name`) under an OpenSM
    /// routing with `engine` alone, and waits for its first pass.
    pub fn start(name: &str, engine: &str, net: String) -> Live {
        Self::start_with(name, engine, net, &[])
    }

    /// `start` with OpenSM given `env` (e.g. `OSMROUTE_CONFIG`).
    pub fn start_with(name: &str, engine: &str, net: String, env: &[(&str, &str)]) -> Live {
        let mut sim = Sim::start_live(name, &net);
        let routing = format!("routing_engine {engine}");
        let osm = sim.opensm(&[&routing, "qos TRUE", "sweep_interval 2"], env);
        let mut live = Live {
            sim,
            osm,
            engine: engine.to_string(),
            passes: 0,
            outage: Outage::new(net),
        };
        live.wait_for_pass();
        live
    }

    /// Sends ibsim console commands (`unlink`/`relink` a cable or a
    /// switch) at once, then waits for OpenSM to route the result.
    pub fn faults(&mut self, commands: &[String]) {
        self.outage.apply(&mut self.sim, commands);
        self.wait_for_pass();
    }

    /// Waits for the next settled pass, then checks that every pass was
    /// the engine's and nothing was logged as an error.
    fn wait_for_pass(&mut self) {
        let after = format!("{:?} / {:?}", self.outage.cut, self.outage.dead);
        self.passes = wait_for_settled_pass(&self.osm, self.passes, &after);
        self.osm.assert_no_errors();
        let passes = self.osm.lines_with(ROUTED);
        let ours = format!("{} tables configured", self.engine);
        assert!(
            passes.iter().all(|l| l.contains(&ours)),
            "a pass not routed by {}: {passes:#?}",
            self.engine
        );
        let declines = self.osm.lines_with("declines");
        assert!(
            declines.is_empty(),
            "{} declined: {declines:#?}",
            self.engine
        );
    }

    /// Relinks what `steps` unlinked, last first, and asserts that the
    /// pass that follows has the tables (read back), SL2VL and path-SL
    /// files of `first`, the pass before any fault.
    pub fn undo_and_expect(&mut self, steps: &[String], first: &FirstPass) {
        let relinks: Vec<String> = steps
            .iter()
            .rev()
            .map(|s| s.replacen("unlink", "relink", 1))
            .collect();
        self.faults(&relinks);
        let (again, last, _) = self.check();
        assert!(
            same_tables(&again, &first.tables, &last),
            "relinked, the tables differ from the first pass"
        );
        assert_eq!(
            self.osm.file("osmroute-sl2vl.txt"),
            first.sl2vl,
            "relinked, the SL2VL tables differ"
        );
        assert_eq!(
            self.osm.file("osmroute-path-sl.txt"),
            first.path_sl,
            "relinked, the path SLs differ"
        );
    }

    /// The pass now in place, `tables` being its tables read back.
    pub fn first_pass(&self, tables: Routing) -> FirstPass {
        FirstPass {
            tables,
            sl2vl: self.osm.file("osmroute-sl2vl.txt"),
            path_sl: self.osm.file("osmroute-path-sl.txt"),
        }
    }

    /// Reads the tables back from the simulated switches and checks them
    /// (module comment); returns them with the offline routing.
    pub fn check(&self) -> (Fabric, Routing, Routing) {
        let (fabric, read) = read_back_of(&self.sim, self.outage.current_fabric());
        let offline = osmroute_core::pipeline::route_by_name(&self.engine, &fabric)
            .unwrap_or_else(|e| {
                panic!(
                    "offline {} after {:?} / {:?}: {e}",
                    self.engine, self.outage.cut, self.outage.dead
                )
            })
            .routing;
        for s in fabric.switch_ids() {
            for (lid, _) in fabric.lids() {
                assert_eq!(
                    read.lfts[s].get(lid),
                    offline.lfts[s].get(lid),
                    "{}: LID {lid}",
                    fabric.describe_switch(s)
                );
            }
        }
        let report = analyze(&fabric, &offline);
        assert!(
            report.delivered(),
            "undelivered after {:?} / {:?}: {:?}",
            self.outage.cut,
            self.outage.dead,
            report.failures
        );
        assert!(
            report.credit_loop.is_none(),
            "credit loop after {:?} / {:?}",
            self.outage.cut,
            self.outage.dead
        );
        let ibdm = ibdmchk(
            &self.osm.dir,
            &["-c", "osmroute-path-sl.txt", "-d", "osmroute-sl2vl.txt"],
        );
        assert!(
            ibdm.contains("no credit loops found"),
            "ibdmchk after {:?}: {ibdm}",
            self.outage.cut
        );
        assert!(
            !ibdm.lines().any(|l| l.starts_with("-E-")),
            "ibdmchk errors: {ibdm}"
        );
        (fabric, read, offline)
    }
}

/// The node described `name` in `b`.
pub fn node_named(b: &FabricBuilder, name: &str) -> NodeId {
    NodeId::range(b.node_count())
        .find(|&i| b.node(i).desc == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}

/// Whether two routings of one fabric have the same forwarding tables.
pub fn same_tables(fabric: &Fabric, a: &Routing, b: &Routing) -> bool {
    fabric.switch_ids().all(|s| {
        fabric
            .lids()
            .all(|(lid, _)| a.lfts[s].get(lid) == b.lfts[s].get(lid))
    })
}

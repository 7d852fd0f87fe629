//! Live operation: the distribution's OpenSM runs long (`sweep_interval
//! 2`, no `-o`) with the plugin on ibsim fabrics while ibsim's console
//! fails and restores cables and switches, osmroute.conf is edited and
//! OpenSM is sent SIGHUP, and an engine declines and recovers. After every
//! re-sweep:
//!
//! - the pass was routed by the engine expected (ours, or the fallback
//!   while ours declines);
//! - OpenSM's log gained no ERR line except the expected decline;
//! - the dump directory holds only files of that pass: OpenSM's dumps and
//!   each osmroute-* file there were written after the previous pass
//!   settled, and none of ours is left when another engine routed;
//! - the forwarding tables read back from the simulated switches are the
//!   ones OpenSM dumped, and they deliver every pair with no credit loop
//!   (`osmroute check` with the pass's SLs and VLs, and ibdmchk);
//! - OpenSM's resident memory (VmRSS) after the last cycle stays within
//!   10 % of what it was after the first cycle, counted from when every
//!   kind of step has run once (see `Soak::start_cycles`).
//!
//! `.ci/soak` runs the same kind of cycles hundreds of times (not in CI).

mod harness;

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use harness::live::{node_named, same_tables, wait_for_settled_pass, Outage};
use harness::readback::{ibdmchk, ibdmchk_lmc_with, read_back_of, with_enhanced_port0};
use harness::{check_loop_free, OpenSm, Sim};
use osmroute_core::dumps::bundle::OUR_FILES;
use osmroute_core::dumps::lfts;
use osmroute_core::engines::ENGINES;
use osmroute_core::io::netfile;
use osmroute_core::routing::Routing;
use osmroute_core::Fabric;

const ROUTED: &str = "tables configured on all switches";
const UP: &str = "SUBNET UP";

/// One long-running OpenSM on a live simulation.
struct Soak {
    sim: Sim,
    osm: OpenSm,
    lmc: u8,
    /// The osmroute.conf OSMROUTE_CONFIG names.
    config: PathBuf,
    /// Routing passes seen so far, and log lines already judged.
    passes: usize,
    log_lines_seen: usize,
    /// When the previous pass had settled (file-system clock): files of a
    /// new pass are not older.
    settled_at: SystemTime,
    /// What the console has taken down.
    outage: Outage,
    /// VmRSS after each verified pass, in kB.
    resident_kb: Vec<u64>,
    /// Where the compared cycles start in `resident_kb` (`start_cycles`).
    cycles_from: usize,
}

impl Soak {
    fn start(name: &str, net: String, lmc: u8, conf: &[&str], osmroute_conf: &str) -> Soak {
        let mut sim = Sim::start_live(name, &net);
        let config = sim.dir.join("osmroute.conf");
        std::fs::write(&config, osmroute_conf).expect("write osmroute.conf");
        let lmc_line = format!("lmc {lmc}");
        let mut lines = vec!["sweep_interval 2", "qos TRUE", "lmc_esp0 TRUE", &lmc_line];
        lines.extend_from_slice(conf);
        let config_env = config.display().to_string();
        let osm = sim.opensm(&lines, &[("OSMROUTE_CONFIG", &config_env)]);
        Soak {
            sim,
            osm,
            outage: Outage::new(net),
            lmc,
            config,
            passes: 0,
            log_lines_seen: 0,
            settled_at: SystemTime::UNIX_EPOCH,
            resident_kb: Vec::new(),
            cycles_from: 1,
        }
    }

    /// Sends ibsim console commands and remembers what is down.
    fn console(&mut self, commands: &[String]) {
        self.outage.apply(&mut self.sim, commands);
    }

    /// A new osmroute.conf, then SIGHUP (OpenSM re-reads its configuration
    /// and sweeps; the plugin re-reads osmroute.conf because it changed).
    fn edit_config_and_hup(&mut self, text: &str) {
        std::fs::write(&self.config, text).expect("write osmroute.conf");
        self.osm.resweep();
    }

    /// Waits for a routing pass after the last one seen and for OpenSM to
    /// settle.
    fn wait_for_pass(&mut self, after: &str) {
        self.passes = wait_for_settled_pass(&self.osm, self.passes, after);
    }

    /// Waits for the pass `after` caused and checks it (module comment).
    /// `engine` must have routed it; ERR lines must contain one of
    /// `expected_errors`. Returns the tables read back.
    fn verify(&mut self, after: &str, engine: &str, expected_errors: &[&str]) -> (Fabric, Routing) {
        self.wait_for_pass(after);
        let log = self.osm.log();
        let new_lines: Vec<&str> = log.lines().skip(self.log_lines_seen).collect();
        self.log_lines_seen += new_lines.len();
        let routed_by = new_lines
            .iter()
            .rev()
            .find_map(|l| l.split(ROUTED).next().filter(|_| l.contains(ROUTED)))
            .and_then(|head| head.split_whitespace().last())
            .expect("a routing pass in the new lines");
        assert_eq!(
            routed_by, engine,
            "after {after}: the pass was routed by {routed_by}"
        );
        let unexpected: Vec<&&str> = new_lines
            .iter()
            .filter(|l| l.contains("ERR") && !expected_errors.iter().any(|e| l.contains(e)))
            .collect();
        assert!(
            unexpected.is_empty(),
            "after {after}: ERR lines in OpenSM's log: {unexpected:#?}"
        );

        // Only files of this pass in the dump directory.
        let dir = &self.osm.dir;
        let modified = |name: &str| {
            std::fs::metadata(dir.join(name))
                .and_then(|m| m.modified())
                .ok()
        };
        for name in ["opensm-lfts.dump", "opensm-subnet.lst", "opensm.fdbs"] {
            let at =
                modified(name).unwrap_or_else(|| panic!("after {after}: OpenSM wrote no {name}"));
            assert!(
                at >= self.settled_at,
                "after {after}: {name} is of an earlier pass"
            );
        }
        let ours = ENGINES.iter().any(|e| e.name == engine);
        for name in OUR_FILES {
            match modified(name) {
                Some(at) => {
                    assert!(
                        ours,
                        "after {after}: {name} left over while {engine} routed"
                    );
                    assert!(
                        at >= self.settled_at,
                        "after {after}: {name} is of an earlier pass"
                    );
                }
                None => assert!(
                    !ours || *name != "osmroute-path-sl.txt",
                    "after {after}: {engine} wrote no {name}"
                ),
            }
        }

        // The switches hold what OpenSM dumped, and it is sound.
        let (fabric, read) = read_back_of(&self.sim, self.outage.current_fabric());
        let dumped =
            lfts::read(&self.osm.file("opensm-lfts.dump")).expect("OpenSM's LFT dump parses");
        let dumped = lfts::to_lfts(&fabric, &dumped).expect("a table per switch");
        for s in fabric.switch_ids() {
            for (lid, _) in fabric.lids() {
                assert_eq!(
                    read.lfts[s].get(lid),
                    dumped[s].get(lid),
                    "after {after}: {} LID {lid}",
                    fabric.describe_switch(s)
                );
            }
        }
        let lmc = self.lmc.to_string();
        check_loop_free(dir, &["--lmc", &lmc, "--patterns", "20"]);
        let has = |name: &str| dir.join(name).exists();
        let ibdm = if self.lmc > 0 {
            ibdmchk_lmc_with(
                dir,
                self.lmc,
                has("osmroute-sl2vl.txt").then_some("osmroute-sl2vl.txt"),
            )
        } else {
            let mut args = Vec::new();
            if has("osmroute-path-sl.txt") {
                args.extend(["-c", "osmroute-path-sl.txt"]);
            }
            if has("osmroute-sl2vl.txt") {
                args.extend(["-d", "osmroute-sl2vl.txt"]);
            }
            ibdmchk(dir, &args)
        };
        assert!(
            ibdm.contains("no credit loops found"),
            "after {after}: ibdmchk: {ibdm}"
        );
        assert!(
            !ibdm.lines().any(|l| l.starts_with("-E-")),
            "after {after}: ibdmchk errors: {ibdm}"
        );

        self.resident_kb.push(self.osm.resident_kb());
        self.settled_at = self.file_clock();
        (fabric, read)
    }

    /// The time on the file system's clock, which runs a tick behind
    /// `SystemTime::now()`: a file written right after this call may be
    /// stamped with the same time, never an earlier one.
    fn file_clock(&self) -> SystemTime {
        let marker = self.sim.dir.join("settled");
        std::fs::write(&marker, "").expect("write a marker file");
        std::fs::metadata(&marker)
            .and_then(|m| m.modified())
            .expect("the marker's time")
    }

    /// The passes after this are the cycles whose memory is compared. Call
    /// it once every kind of step has run: the first run of a code path
    /// (OpenSM's fallback engine, a decline, a re-read) pages in code of
    /// OpenSM, libc and the plugin, which VmRSS counts; a leak grows on.
    fn start_cycles(&mut self) {
        self.cycles_from = self.resident_kb.len();
    }

    /// Resident memory after the last cycle within 10 % of the first's.
    fn assert_memory_flat(&self) {
        let (first, last) = (
            self.resident_kb[self.cycles_from],
            *self.resident_kb.last().expect("cycles"),
        );
        eprintln!(
            "{}: OpenSM VmRSS per cycle (kB): {:?}",
            self.sim.dir.display(),
            self.resident_kb
        );
        assert!(
            last * 10 <= first * 11,
            "OpenSM grew from {first} kB after cycle 1 to {last} kB: {:?}",
            self.resident_kb
        );
    }
}

/// The first switch-to-switch cable of `switch` in `net`, as a console
/// target `"NAME"[PORT]`.
fn switch_cable(net: &str, switch: &str) -> String {
    let b = netfile::read(net).expect("net file");
    let node = b.node(node_named(&b, switch));
    let (port, _) = node
        .links()
        .find(|(p, r)| p.raw() > 0 && b.node(r.node).kind == node.kind)
        .expect("a switch cable");
    format!("\"{switch}\"[{port}]")
}

/// Every SL in the plugin's path-SL file.
fn path_sls(osm: &OpenSm) -> Vec<u8> {
    osm.file("osmroute-path-sl.txt")
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
        .collect()
}

/// A Dragonfly with dla and updn (with a root) as the fallback: a global
/// cable and a switch fail and come back, osmroute.conf is edited (dla.sl)
/// and re-read on SIGHUP, then broken (dla declines, updn routes, none of
/// dla's files stay) and fixed (dla again, the first tables again), and a
/// global cable flaps while memory is watched.
#[test]
fn dragonfly_with_dla_through_faults_config_edits_and_a_decline() {
    let net = netfile::write(
        &osmroute_core::gen::dragonfly::dragonfly(&osmroute_core::gen::dragonfly::Params::new(
            4, 2, 2,
        ))
        .expect("params"),
    );
    // updn needs roots on a Dragonfly; ibsim numbers switches from 0x200000 in file order.
    let dir = std::env::temp_dir();
    let roots = dir.join(format!("osmroute-soak-roots-{}", std::process::id()));
    std::fs::write(&roots, "0x0000000000200000\n").expect("root GUID file");
    let root_line = format!("root_guid_file {}", roots.display());
    let mut soak = Soak::start(
        "soak-df",
        net.clone(),
        0,
        &["routing_engine dla,updn", &root_line],
        "",
    );
    let (fabric, first) = soak.verify("start", "dla", &[]);
    assert!(path_sls(&soak.osm).iter().all(|&sl| sl == 0));

    // Port p + a + 0 is a switch's first global cable (hosts, then locals).
    let global = "\"df-g1-s0\"[6]".to_string();
    assert_eq!(
        soak.outage
            .peer("df-g1-s0", 6)
            .0
            .split('-')
            .nth(1)
            .map(|g| g != "g1"),
        Some(true),
        "port 6 is a global cable"
    );
    soak.console(&[format!("unlink {global}")]);
    soak.verify("a global cable failed", "dla", &[]);
    soak.console(&["unlink \"df-g5-s2\"".to_string()]);
    soak.verify("a switch failed", "dla", &[]);
    soak.console(&[
        "relink \"df-g5-s2\"".to_string(),
        format!("relink {global}"),
    ]);
    let (again, back) = soak.verify("switch and cable back", "dla", &[]);
    assert!(
        same_tables(&again, &first, &back),
        "everything back, the tables differ from the first pass"
    );

    soak.edit_config_and_hup("dla.sl 2\n");
    soak.verify("dla.sl 2 and SIGHUP", "dla", &[]);
    assert!(
        soak.osm.log().contains("configuration changed"),
        "the plugin did not re-read osmroute.conf"
    );
    let sls = path_sls(&soak.osm);
    assert!(
        !sls.is_empty() && sls.iter().all(|&sl| sl == 2),
        "the pass after SIGHUP did not use dla.sl 2"
    );

    soak.edit_config_and_hup("dla.sl 2\ndla.bogus 1\n");
    soak.verify(
        "a bad key and SIGHUP",
        "updn",
        &["ERR osmroute: dla declines"],
    );
    assert!(
        soak.osm
            .lines_with("dla declines")
            .iter()
            .any(|l| l.contains("dla.bogus")),
        "dla's decline names the bad key"
    );

    soak.edit_config_and_hup("# fixed\n");
    let (again, back) = soak.verify("the fix and SIGHUP", "dla", &[]);
    assert!(
        same_tables(&again, &first, &back) && again.switch_count() == fabric.switch_count(),
        "dla recovered with other tables"
    );
    assert!(path_sls(&soak.osm).iter().all(|&sl| sl == 0));

    soak.start_cycles();
    for cycle in 0..3 {
        soak.console(&[format!("unlink {global}")]);
        soak.verify(&format!("flap {cycle} down"), "dla", &[]);
        soak.console(&[format!("relink {global}")]);
        soak.verify(&format!("flap {cycle} up"), "dla", &[]);
    }
    soak.assert_memory_flat();
    let _ = std::fs::remove_file(&roots);
}

/// A Slim Fly with pssp: a cable and a switch fail and come back.
#[test]
fn slim_fly_with_pssp_through_cable_and_switch_faults() {
    let net = harness::generate_shuffled(&["slimfly", "--q", "5", "--p", "1"], 7);
    let mut soak = Soak::start(
        "soak-sf",
        net.clone(),
        0,
        &["routing_engine pssp,minhop"],
        "",
    );
    let (fabric, first) = soak.verify("start", "pssp", &[]);
    // sf-0-0-0 holds the SM's host: its cables stay.
    let cable = switch_cable(&net, "sf-0-1-2");
    soak.console(&[format!("unlink {cable}")]);
    soak.verify("a cable failed", "pssp", &[]);
    soak.console(&["unlink \"sf-1-3-4\"".to_string()]);
    soak.verify("a switch failed", "pssp", &[]);
    soak.console(&["relink \"sf-1-3-4\"".to_string(), format!("relink {cable}")]);
    let (again, back) = soak.verify("everything back", "pssp", &[]);
    assert!(same_tables(&again, &first, &back) && again.switch_count() == fabric.switch_count());
    soak.start_cycles();
    soak.console(&[format!("unlink {cable}")]);
    soak.verify("the cable failed again", "pssp", &[]);
    soak.console(&[format!("relink {cable}")]);
    soak.verify("the cable back again", "pssp", &[]);
    soak.assert_memory_flat();
}

/// A 4-port 3-tree with mlid at LMC 2 and updn as the fallback (ftree
/// refuses LMC > 0): a root switch fails (still a fat tree, one root
/// short: mlid routes around it, its path selection stays) and comes
/// back (the first tables again), then a cable.
#[test]
fn fat_tree_with_mlid_routing_around_failures_and_recovering() {
    let net = with_enhanced_port0(&harness::generate_shuffled(
        &["fattree", "--m", "4", "--n", "3"],
        4,
    ));
    let mut soak = Soak::start("soak-ft", net.clone(), 2, &["routing_engine mlid,updn"], "");
    let (_, first) = soak.verify("start", "mlid", &[]);
    assert!(soak.osm.dir.join("osmroute-path-select.txt").exists());
    soak.console(&["unlink \"ft-l0-11\"".to_string()]);
    soak.verify("a root switch failed", "mlid", &[]);
    assert!(soak.osm.dir.join("osmroute-path-select.txt").exists());
    assert!(soak.osm.lines_with("mlid declines").is_empty());
    soak.console(&["relink \"ft-l0-11\"".to_string()]);
    let (again, back) = soak.verify("the root switch back", "mlid", &[]);
    assert!(
        same_tables(&again, &first, &back),
        "mlid recovered with other tables"
    );
    soak.start_cycles();
    let cable = switch_cable(&net, "ft-l1-21");
    soak.console(&[format!("unlink {cable}")]);
    soak.verify("a cable failed", "mlid", &[]);
    soak.console(&[format!("relink {cable}")]);
    soak.verify("the cable back", "mlid", &[]);
    soak.assert_memory_flat();
}

/// What the README advises against: `mlid,ftree` with LMC > 0. When mlid
/// declines, ftree refuses LMC > 0 and OpenSM routes with minhop.
#[test]
fn mlid_then_ftree_with_lmc_falls_to_minhop() {
    let net = with_enhanced_port0(&harness::generate_shuffled(
        &["fattree", "--m", "4", "--n", "3"],
        4,
    ));
    let mut sim = Sim::start("ftree-lmc", &net);
    let conf = sim.dir.join("osmroute.conf");
    std::fs::write(&conf, "mlid.bogus 1\n").expect("write osmroute.conf");
    let conf = conf.display().to_string();
    let osm = sim.opensm(
        &["routing_engine mlid,ftree", "lmc 2", "lmc_esp0 TRUE"],
        &[("OSMROUTE_CONFIG", &conf)],
    );
    osm.wait_for(UP, Duration::from_secs(120));
    assert_eq!(osm.lines_with("ERR osmroute: mlid declines").len(), 1);
    assert_eq!(
        osm.lines_with("LMC > 0 is not supported by fat-tree routing")
            .len(),
        1,
        "{}",
        osm.log()
    );
    assert_eq!(
        osm.lines_with("ftree: cannot build lid matrices").len(),
        1,
        "{}",
        osm.log()
    );
    let routed = osm.lines_with(ROUTED);
    assert!(
        !routed.is_empty()
            && routed
                .iter()
                .all(|l| l.contains("minhop tables configured")),
        "{routed:#?}"
    );
}

/// OSMROUTE_CONFIG naming a file that is not there (a typo in the
/// service's drop-in) is an error, not silently the defaults: every
/// engine of ours declines, saying which file is missing, and the
/// fallback routes.
#[test]
fn a_missing_osmroute_config_makes_our_engines_decline() {
    let net = harness::generate_shuffled(&["fattree", "--m", "4", "--n", "3"], 4);
    let mut sim = Sim::start("missing-conf", &net);
    let missing = sim.dir.join("no-such-osmroute.conf").display().to_string();
    let osm = sim.opensm(
        &["routing_engine mlid,updn"],
        &[("OSMROUTE_CONFIG", &missing)],
    );
    osm.wait_for(UP, Duration::from_secs(120));
    let routed = osm.lines_with(ROUTED);
    assert!(
        !routed.is_empty() && routed.iter().all(|l| l.contains("updn tables configured")),
        "{routed:#?}"
    );
    let declines = osm.lines_with("ERR osmroute: mlid declines");
    assert!(!declines.is_empty(), "{}", osm.log());
    assert!(
        declines
            .iter()
            .all(|l| l.contains(&missing) && l.contains("no such file")),
        "{declines:#?}"
    );
}

//! `osmroute doctor`: one test per diagnosis, each on a configuration that
//! has the problem and (where the diagnosis depends on it) one that has not.

use std::path::{Path, PathBuf};

mod common;

use common::{run as osmroute, scratch, Run};

/// A plugin and an OpenSM executable of the given versions, as files that
/// carry the version strings where the real ones do.
fn binaries(dir: &Path, plugin: &str, opensm: &str) -> (String, String) {
    let (lib, exe) = (dir.join("libosmroute.so"), dir.join("opensm"));
    std::fs::write(
        &lib,
        format!("\x7fELF\0OpenSM version mismatch\0{plugin}\0"),
    )
    .unwrap();
    std::fs::write(&exe, format!("\x7fELF\0usage\0{opensm}\0")).unwrap();
    (lib.display().to_string(), exe.display().to_string())
}

struct Doctor {
    dir: PathBuf,
    lib: String,
    exe: String,
}

impl Doctor {
    fn new(name: &str) -> Self {
        let dir = scratch(name);
        let (lib, exe) = binaries(&dir, "OpenSM 3.3.23", "OpenSM 3.3.23");
        let empty = dir.join("osmroute.conf");
        std::fs::write(&empty, "").unwrap();
        Doctor { dir, lib, exe }
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    fn gen(&self, name: &str, args: &[&str]) -> String {
        let p = self.dir.join(name).display().to_string();
        let mut all = vec!["gen"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", &p]);
        let r = osmroute(&all);
        assert_eq!(r.code, Some(0), "{}", r.out);
        p
    }

    fn run(&self, conf: &str, extra: &[&str]) -> Run {
        let opensm_conf = self.file("opensm.conf", conf);
        let config = self.dir.join("osmroute.conf").display().to_string();
        let mut args = vec![
            "doctor",
            "--opensm-conf",
            &opensm_conf,
            "--config",
            &config,
            "--plugin",
            &self.lib,
            "--opensm",
            &self.exe,
        ];
        args.extend_from_slice(extra);
        osmroute(&args)
    }
}

const GOOD: &str = "event_plugin_name osmroute\nrouting_engine dla,pssp,nue\nqos TRUE\n";

#[test]
fn a_sound_configuration_passes() {
    let d = Doctor::new("sound");
    let df = d.gen("df.net", &["dragonfly", "--a", "4", "--h", "2", "--p", "2"]);
    let r = d.run(GOOD, &["--fabric", &df]);
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(
        r.out.contains("ok: dla routes this fabric with 2 VL(s)"),
        "{}",
        r.out
    );
    assert!(r.out.contains("0 error(s), 0 warning(s)"), "{}", r.out);
}

#[test]
fn the_plugin_not_named() {
    let d = Doctor::new("unnamed");
    let r = d.run(
        "routing_engine dla,pssp,nue\nqos TRUE\nevent_plugin_name other\n",
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out
            .contains("opensm.conf:3: event_plugin_name does not name osmroute"),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("change to: event_plugin_name other osmroute"),
        "{}",
        r.out
    );
}

#[test]
fn qos_off_with_an_engine_that_needs_vls() {
    let d = Doctor::new("qos");
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine dla,pssp,nue\nqos FALSE\n",
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out
            .contains("opensm.conf:3: qos is off, and dla needs more than one VL"),
        "{}",
        r.out
    );
    assert!(r.out.contains("change to: qos TRUE"), "{}", r.out);
    // mlid routes on one VL: qos does not matter to it.
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine mlid,updn\nlmc 2\n",
        &[],
    );
    assert!(!r.out.contains("qos is off"), "{}", r.out);
}

/// mlid routes on one VL, but hosts on two top switches need a second:
/// with qos off mlid declines (it never leaves routes undelivered), and
/// the doctor passes on its reason: set qos TRUE.
#[test]
fn qos_off_leaves_routes_that_need_a_second_vl() {
    let d = Doctor::new("qos-mlid");
    let tree = [
        "pgft",
        "--down",
        "4,4,3",
        "--up",
        "1,2,2",
        "--parallel",
        "1,2,1",
        "--top-hosts",
        "2",
        "--seed",
        "3",
    ];
    let ft = d.gen("pgft.net", &tree);
    let conf = |qos: &str| {
        format!("event_plugin_name osmroute\nrouting_engine mlid,updn\nqos {qos}\nlmc 3\n")
    };
    let r = d.run(&conf("FALSE"), &["--fabric", &ft]);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("mlid declines") && r.out.contains("set `qos TRUE`"),
        "{}",
        r.out
    );
    let r = d.run(&conf("TRUE"), &["--fabric", &ft]);
    assert!(
        r.out.contains("ok: mlid routes this fabric with 2 VL(s)"),
        "{}",
        r.out
    );
    assert!(!r.out.contains("undelivered"), "{}", r.out);
}

#[test]
fn a_chain_that_can_end_in_credit_loops() {
    let d = Doctor::new("chain");
    let df = d.gen("df.net", &["dragonfly", "--a", "4", "--h", "2", "--p", "2"]);
    let unsafe_end = "event_plugin_name osmroute\nrouting_engine dla,minhop\nqos TRUE\n";
    let r = d.run(unsafe_end, &["--fabric", &df]);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out
            .contains("OpenSM routes with minhop; this fabric is not a fat tree"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("change to: routing_engine dla,minhop,nue"),
        "{}",
        r.out
    );
    // Without a fabric the doctor cannot know the topology: a warning.
    let r = d.run(unsafe_end, &[]);
    assert_eq!(r.code, Some(3), "{}", r.out);
    // On a fat tree minhop's minimal paths are up*/down*: no loop to fear.
    let ft = d.gen("ft.net", &["fattree", "--m", "4", "--n", "3"]);
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine mlid,minhop\nqos TRUE\nlmc 2\n",
        &["--fabric", &ft],
    );
    assert!(!r.out.contains("OpenSM routes with minhop"), "{}", r.out);
    // updn is safe off trees only with root GUIDs.
    let r = d.run("event_plugin_name osmroute\nrouting_engine dla,updn\nqos TRUE\nroot_guid_file /etc/opensm/roots\n", &["--fabric", &df]);
    assert_eq!(r.code, Some(0), "{}", r.out);
}

/// A director twin with an Aggregation Node on every chip: ftree refuses
/// it, so the doctor names the switch and the reason and recommends
/// mlid,pssp (both checked offline); with mlid first it stays quiet about
/// ftree.
#[test]
fn ftree_refuses_a_director_twin_with_aggregation_nodes() {
    let d = Doctor::new("ftree-field");
    let net = d.gen(
        "dir.net",
        &[
            "director",
            "--directors",
            "2",
            "--line-chips",
            "4",
            "--spine-chips",
            "2",
            "--leaves-per-line",
            "2",
            "--hosts",
            "3",
            "--bundle",
            "2",
            "--aggregation-nodes",
        ],
    );
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine ftree\nqos TRUE\n",
        &["--fabric", &net],
    );
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("a fat tree that OpenSM's ftree refuses")
            && r.out.contains("above the leaves")
            && r.out.contains("dir"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("change to: routing_engine mlid,pssp"),
        "{}",
        r.out
    );
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine mlid,pssp\nqos TRUE\n",
        &["--fabric", &net],
    );
    assert!(!r.out.contains("ftree refuses"), "{}", r.out);
    // 2 for unicast's layers, and VL 0 kept for multicast on SL 0
    // (mlid.multicast_vl).
    assert!(
        r.out.contains("mlid routes this fabric with 3 VL(s)"),
        "{}",
        r.out
    );
}

#[test]
fn ftree_as_fallback_with_lmc() {
    let d = Doctor::new("ftree");
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine mlid,ftree\nlmc 4\n",
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out
            .contains("ftree is in routing_engine but refuses lmc 4 > 0"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("change to: routing_engine mlid,updn"),
        "{}",
        r.out
    );
}

#[test]
fn an_lmc_the_engine_cannot_use() {
    let d = Doctor::new("lmc");
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine layered,nue\nqos TRUE\n",
        &[],
    );
    assert_eq!(r.code, Some(3), "{}", r.out);
    assert!(r.out.contains("lmc 0 gives layered one layer"), "{}", r.out);
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine mlid,nue\nlmc 9\n",
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("lmc 9 is not a number from 0 to 7"),
        "{}",
        r.out
    );
}

/// 30 switches and 360 hosts at lmc 7 (128 LIDs each): OpenSM's own
/// numbering may need 49,920 LIDs, packed they need 46,208.
#[test]
fn an_lmc_whose_lids_fit_only_with_the_switches_first() {
    let d = Doctor::new("lidspace");
    let net = d.gen("ls.net", &["pgft", "--down", "18,20", "--up", "1,10"]);
    let conf = "event_plugin_name osmroute\nrouting_engine updn\nlmc 7\n";
    let r = d.run(conf, &["--fabric", &net]);
    assert!(r.out.contains("may need up to 49920 LIDs"), "{}", r.out);
    assert!(r.out.contains("they need 46208"), "{}", r.out);
    assert!(
        r.out
            .contains(&format!("osmroute lids --fabric {net} --lmc 7")),
        "{}",
        r.out
    );
    // One LID per port less and OpenSM's numbering fits anyway.
    let r = d.run(&conf.replace("lmc 7", "lmc 6"), &["--fabric", &net]);
    assert!(!r.out.contains("osmroute lids"), "{}", r.out);
}

#[test]
fn a_plugin_built_for_another_opensm() {
    let d = Doctor::new("version");
    let (lib, exe) = binaries(&d.dir, "OpenSM 3.3.21", "OpenSM 3.3.23");
    let conf = d.file("opensm.conf", GOOD);
    let r = osmroute(&[
        "doctor",
        "--opensm-conf",
        &conf,
        "--config",
        &d.file("osmroute.conf", ""),
        "--plugin",
        &lib,
        "--opensm",
        &exe,
    ]);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("was built for OpenSM 3.3.21, but"),
        "{}",
        r.out
    );
    let missing = d.dir.join("nowhere.so").display().to_string();
    let r = osmroute(&[
        "doctor",
        "--opensm-conf",
        &conf,
        "--config",
        &d.file("osmroute.conf", ""),
        "--plugin",
        &missing,
        "--opensm",
        &exe,
    ]);
    assert!(
        r.out.contains("cannot read") && r.code == Some(1),
        "{}",
        r.out
    );
}

#[test]
fn osmroute_conf_keys_that_are_wrong() {
    let d = Doctor::new("keys");
    d.file("osmroute.conf", "dla.no_such_key 1\npssp.seed many\n");
    let r = d.run(GOOD, &[]);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("unknown key") && r.out.contains("no_such_key"),
        "{}",
        r.out
    );
    assert!(r.out.contains("seed"), "{}", r.out);
}

#[test]
fn an_engine_that_declines_this_fabric_and_one_that_routes_it() {
    let d = Doctor::new("decline");
    let ft = d.gen("ft.net", &["fattree", "--m", "4", "--n", "3"]);
    let r = d.run(GOOD, &["--fabric", &ft]);
    assert_eq!(r.code, Some(3), "{}", r.out);
    assert!(r.out.contains("dla declines [osmroute-D003]"), "{}", r.out);
    assert!(
        r.out
            .contains("change to: routing_engine mlid,dla,pssp,nue"),
        "{}",
        r.out
    );
}

#[test]
fn a_dragonfly_plus_gets_dla() {
    let d = Doctor::new("dfplus");
    let args = [
        "dragonfly-plus",
        "--leaves",
        "4",
        "--spines",
        "4",
        "--hosts",
        "2",
        "--global-ports",
        "2",
        "--groups",
        "9",
    ];
    let dfp = d.gen("dfp.net", &args);
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine pssp,nue\nqos TRUE\n",
        &["--fabric", &dfp],
    );
    assert!(
        r.out
            .contains("is a Dragonfly+ of 9 groups (36 leaves and 36 spines)"),
        "{}",
        r.out
    );
    assert!(
        r.out.contains("change to: routing_engine dla,pssp,nue"),
        "{}",
        r.out
    );
    let r = d.run(GOOD, &["--fabric", &dfp]);
    assert!(r.out.contains("dla routes it"), "{}", r.out);
    assert!(
        r.out.contains("ok: dla routes this fabric with"),
        "{}",
        r.out
    );
}

#[test]
fn dumps_whose_tables_have_credit_loops() {
    let d = Doctor::new("dumps");
    let df = d.gen("df.net", &["dragonfly", "--a", "4", "--h", "2", "--p", "2"]);
    let out = d.dir.join("routed").display().to_string();
    let r = osmroute(&["route", "--engine", "dla", "--fabric", &df, "-o", &out]);
    assert_eq!(r.code, Some(0), "{}", r.out);
    let r = d.run(GOOD, &["--dumps", &out]);
    assert_eq!(r.code, Some(0), "{}", r.out);
    // Without its SL2VL tables dla's routing runs on one VL: loops.
    std::fs::remove_file(Path::new(&out).join("osmroute-sl2vl.txt")).unwrap();
    let r = d.run(GOOD, &["--dumps", &out]);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.out.contains("the tables of this pass have a credit loop"),
        "{}",
        r.out
    );
}

#[test]
fn an_unreadable_configuration_is_exit_2() {
    let r = osmroute(&["doctor", "--opensm-conf", "/nonexistent/opensm.conf"]);
    assert_eq!(r.code, Some(2), "{}", r.out);
    assert!(
        r.out.contains("cannot read /nonexistent/opensm.conf"),
        "{}",
        r.out
    );
}

/// The recommendation follows the engine matrix's rule: an engine that
/// declines a fabric (dla on a HyperX, which is no Dragonfly) gets the
/// advice to put the engine made for it first. (An engine that routes a
/// fabric it is not made for, less well, gets the same advice as a
/// warning; since every engine's recogniser declines what it is not made
/// for, no generated family shows that case.)
#[test]
fn the_engine_made_for_the_fabric_is_recommended() {
    let d = Doctor::new("fit");
    let hx = d.gen("hx.net", &["hyperx", "--dims", "3,3,3", "--p", "2"]);
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine dla,pssp\nqos TRUE\n",
        &["--fabric", &hx],
    );
    assert!(r.out.contains("dla declines [osmroute-D003]"), "{}", r.out);
    assert!(r.out.contains("routing_engine hxdor,dla,pssp"), "{}", r.out);
    let tree = d.gen(
        "ls.net",
        &["pgft", "--down", "8,6", "--up", "1,2", "--parallel", "1,2"],
    );
    let r = d.run(
        "event_plugin_name osmroute\nrouting_engine hxdor,pssp\nqos TRUE\n",
        &["--fabric", &tree],
    );
    assert!(r.out.contains("hxdor declines"), "{}", r.out);
    assert!(
        r.out.contains("whose lines are not cliques or rings"),
        "{}",
        r.out
    );
}

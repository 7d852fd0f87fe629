//! Every generator family through ibsim and the distribution's OpenSM
//! (minhop): ibsim accepts the net file, OpenSM finds every node and routes
//! every pair, `osmroute check` reads OpenSM's own dumps, and its
//! credit-loop verdict agrees with ibdmchk's on the same files; what
//! `ibnetdiscover` reports of the simulated fabric routes offline.

mod harness;

use std::process::Command;
use std::time::Duration;

use harness::Sim;

use harness::osmroute_seen as osmroute;

fn counted(report: &str, prefix: &str) -> Option<usize> {
    let rest = report.lines().find_map(|l| l.strip_prefix(prefix))?;
    rest.split_whitespace().next()?.parse().ok()
}

/// Generates `family` (shuffled ports), routes it with OpenSM's minhop on
/// ibsim and checks what the module comment promises. Returns whether
/// credit loops were found.
fn route_with_minhop(name: &str, family: &[&str]) -> bool {
    let dir = std::env::temp_dir().join(format!("osmroute-gen-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let net_path = dir.join("fabric.net");
    let mut args = vec!["gen"];
    args.extend_from_slice(family);
    args.extend_from_slice(&[
        "--shuffle-ports",
        "--seed",
        "7",
        "-o",
        net_path.to_str().expect("utf-8 path"),
    ]);
    let (code, out) = osmroute(&args);
    assert_eq!(code, 0, "gen {family:?}: {out}");
    let net = std::fs::read_to_string(&net_path).expect("net file");
    let _ = std::fs::remove_dir_all(&dir);
    let switches = net.lines().filter(|l| l.starts_with("Switch")).count();
    let hosts = net.lines().filter(|l| l.starts_with("Hca")).count();
    assert!(
        out.contains(&format!("{switches} switches, {hosts} hosts")),
        "{out}"
    );

    let mut sim = Sim::start(name, &net);
    let osm = sim.opensm(&["routing_engine minhop"], &[]);
    osm.wait_for(
        "SUBNET UP",
        Duration::from_secs(120 + net.lines().count() as u64 / 50),
    );
    assert!(osm
        .log()
        .contains("minhop tables configured on all switches"));

    let dir = osm.dir.to_str().expect("utf-8 path");
    let (code, report) = osmroute(&["check", dir, "--patterns", "50"]);
    assert!(
        code == 0 || code == 1,
        "check could not read OpenSM's dumps: {report}"
    );
    assert!(
        report.contains(&format!("fabric: {switches} switches, {hosts} CAs")),
        "OpenSM found every node: {report}"
    );
    assert_eq!(
        counted(&report, "routes (CA port -> CA LID): "),
        Some(hosts * (hosts - 1)),
        "{report}"
    );
    assert!(report.contains("delivery: all routes arrive"), "{report}");
    let ours = report.contains("credit loops: FOUND");
    assert!(ours || report.contains("credit loops: none"), "{report}");

    // ibnetdiscover's view of the simulated fabric routes offline too, with
    // the LIDs OpenSM gave it.
    let discovered = osm.dir.join("ibnetdiscover.txt");
    std::fs::write(&discovered, sim.tool("ibnetdiscover", &[]))
        .expect("write ibnetdiscover output");
    let offline = osm.dir.join("offline");
    let (code, summary) = osmroute(&[
        "route",
        "--engine",
        "pssp",
        "--fabric",
        discovered.to_str().unwrap(),
        "-o",
        offline.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{summary}");
    // "S switches, C CAs, L LIDs", as check read OpenSM's dumps.
    let seen_by_opensm = report
        .lines()
        .find_map(|l| l.strip_prefix("fabric: "))
        .expect("fabric line");
    assert!(
        summary.contains(seen_by_opensm),
        "ibnetdiscover gives OpenSM's nodes and LIDs: {summary} vs {seen_by_opensm}"
    );

    let out = Command::new("ibdmchk")
        .current_dir(&osm.dir)
        .args([
            "-s",
            "opensm-subnet.lst",
            "-f",
            "opensm.fdbs",
            "-m",
            "opensm.mcfdbs",
        ])
        .output()
        .expect("run ibdmchk (install ibutils)");
    let ibdm = String::from_utf8_lossy(&out.stdout).into_owned();
    let theirs = ibdm.contains("Found credit loop");
    assert!(
        theirs || ibdm.contains("no credit loops found"),
        "ibdmchk gave no verdict: {ibdm}"
    );
    assert_eq!(
        ours, theirs,
        "osmroute check and ibdmchk disagree on credit loops:\n{report}\n{ibdm}"
    );
    ours
}

#[test]
fn slimfly_q5() {
    route_with_minhop("sf5", &["slimfly", "--q", "5", "--p", "2"]);
}

#[test]
fn slimfly_q4_over_gf4() {
    route_with_minhop("sf4", &["slimfly", "--q", "4", "--p", "1"]);
}

#[test]
fn hyperx_3x3x3() {
    route_with_minhop(
        "hx",
        &["hyperx", "--dims", "3,3,3", "--widths", "1,2,1", "--p", "1"],
    );
}

#[test]
fn hypercube_4d() {
    route_with_minhop("cube", &["hypercube", "--dim", "4", "--p", "2"]);
}

#[test]
fn torus_4x4_has_credit_loops_under_minhop() {
    assert!(route_with_minhop(
        "torus",
        &["torus", "--dims", "4,4", "--p", "1"]
    ));
}

#[test]
fn fattree_4_port_3_tree_is_credit_loop_free_under_minhop() {
    assert!(!route_with_minhop(
        "ft",
        &["fattree", "--m", "4", "--n", "3"]
    ));
}

#[test]
fn random_regular() {
    route_with_minhop(
        "rr",
        &["random", "--switches", "20", "--degree", "4", "--p", "1"],
    );
}

#[test]
fn degraded_dragonfly() {
    route_with_minhop(
        "dfdrop",
        &[
            "dragonfly",
            "--a",
            "4",
            "--h",
            "2",
            "--p",
            "1",
            "--drop-links",
            "0.05",
        ],
    );
}

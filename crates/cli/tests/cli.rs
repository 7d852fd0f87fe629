//! The `osmroute` command end to end: gen -> route -> check.

use std::path::PathBuf;
use std::process::{Command, Output};

fn osmroute(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_osmroute")).args(args).output().expect("run osmroute")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("osmroute-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn gen_route_check_dla() {
    let dir = scratch("dla");
    let net = dir.join("df.net");
    let out = osmroute(&["gen", "dragonfly", "--a", "4", "--h", "2", "--p", "2", "--shuffle-ports", "--seed", "3", "-o", net.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&net).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("Switch")).count(), 36);
    assert_eq!(text.lines().filter(|l| l.starts_with("Hca")).count(), 72);

    let routed = dir.join("routed");
    let out = osmroute(&["route", "--engine", "dla", "--fabric", net.to_str().unwrap(), "-o", routed.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for f in ["opensm-subnet.lst", "opensm-lfts.dump", "osmroute-sl2vl.txt", "osmroute-path-sl.txt", "summary.txt"] {
        assert!(routed.join(f).exists(), "{f} written");
    }

    let out = osmroute(&["check", routed.to_str().unwrap(), "--max-hops", "3"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("routes (CA port -> CA LID): 5112"), "{report}");
    assert!(report.contains("delivery: all routes arrive"), "{report}");
    assert!(report.contains("VLs used: [0, 1]"), "{report}");
    let ebb: f64 = report
        .lines()
        .find_map(|l| l.strip_prefix("effective bisection bandwidth: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("an EBB line");
    assert!(ebb > 0.0 && ebb <= 1.0, "{ebb}");
    assert!(report.contains("credit loops: none"), "{report}");

    // A stricter hop limit fails.
    let out = osmroute(&["check", routed.to_str().unwrap(), "--max-hops", "2"]);
    assert_eq!(out.status.code(), Some(1));

    // Without the SL2VL tables everything runs on VL 0: credit loops.
    std::fs::remove_file(routed.join("osmroute-sl2vl.txt")).unwrap();
    let out = osmroute(&["check", routed.to_str().unwrap()]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(report.contains("credit loops: FOUND"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_says_what_is_wrong() {
    let out = osmroute(&["gen", "dragonfly", "--a", "4", "--h", "2", "--p", "1", "--groups", "4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("multiple of groups - 1"));

    let dir = scratch("missing");
    let out = osmroute(&["check", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no opensm-subnet.lst"));

    let out = osmroute(&["route", "--engine", "nope", "--fabric", "/nonexistent.net", "-o", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

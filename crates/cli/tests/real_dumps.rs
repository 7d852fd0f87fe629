//! Real dumps as operators have them, end to end: the ports reports of two
//! real clusters (hwloc's plafrim and plafrim2, `ibnetdiscover -v -p`), an
//! ibnetdiscover file pasted from a terminal (BOM, CRLF, prompts), and
//! `--lmc` on input that carries LIDs.

mod common;

use std::process::Output;

use common::{osmroute, scratch};

fn fixture(name: &str) -> String {
    format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Everything `osmroute` printed, standard output then standard error.
fn text(o: &Output) -> String {
    common::text(&o.stdout) + &common::text(&o.stderr)
}

/// Routes `fabric` with `engine` (extra args after), checks the result with
/// `check_args`, and returns (route output, check output).
fn route_and_check(
    name: &str,
    engine: &str,
    fabric: &str,
    extra: &[&str],
    check_args: &[&str],
) -> (String, String) {
    let out = scratch(name);
    let o = out.to_str().unwrap();
    let mut args = vec!["route", "--engine", engine, "--fabric", fabric, "-o", o];
    args.extend_from_slice(extra);
    let r = osmroute(&args);
    assert!(r.status.success(), "route: {}", text(&r));
    let mut args = vec!["check", "--patterns", "50"];
    args.extend_from_slice(check_args);
    args.push(o);
    let c = osmroute(&args);
    assert!(c.status.success(), "check: {}", text(&c));
    (text(&r), text(&c))
}

#[test]
fn the_plafrim_ports_reports_read_route_and_check() {
    // Switch and CA counts as the files' own discovery trace counts them
    // ("new Switch" / "new Channel Adapter" lines).
    for (file, switches, cas) in [
        ("plafrim.ibnetdiscover-p", 9, 125),
        ("plafrim2.ibnetdiscover-p", 7, 96),
    ] {
        let (route, check) = route_and_check(file, "pssp", &fixture(file), &[], &[]);
        assert!(
            route.contains(&format!("({switches} switches, {cas} CAs,")),
            "{route}"
        );
        assert!(route.contains("discovery trace lines"), "{route}");
        assert!(check.contains("delivery: all routes arrive"), "{check}");
        assert!(check.contains("credit loops: none"), "{check}");
    }
}

#[test]
fn lmc_on_discovered_lids_renumbers_and_says_so() {
    let f = fixture("plafrim.ibnetdiscover-p");
    let (route, check) = route_and_check("lmc2", "pssp", &f, &["--lmc", "2"], &["--lmc", "2"]);
    assert!(route.contains("every LID re-numbered"), "{route}");
    assert!(route.contains("LMC 2)"), "{route}");
    assert!(check.contains("verdict: ok"), "{check}");
    // Without --lmc the file's LIDs stay, and nothing is said.
    let (route, _) = route_and_check("lmc-none", "pssp", &f, &[], &[]);
    assert!(!route.contains("re-numbered"), "{route}");
    assert!(route.contains("LMC 0)"), "{route}");
}

#[test]
fn a_pasted_ibnetdiscover_file_reads_with_warnings_naming_the_lines() {
    let dir = scratch("dumps-pasted");
    let real = std::fs::read_to_string(fixture("x5-voltaire.ibnetdiscover")).unwrap();
    let pasted = format!(
        "\u{feff}[admin@x5 ~]$ sudo ibnetdiscover\r\n{}[admin@x5 ~]$ logout\r\n",
        real.replace('\n', "\r\n")
    );
    let file = dir.join("x5.txt");
    std::fs::write(&file, pasted).unwrap();
    let lines = real.lines().count();
    let (route, check) = route_and_check("pasted-route", "pssp", file.to_str().unwrap(), &[], &[]);
    assert!(
        route.contains(
            "line 1: skipped, not part of the topology: \"[admin@x5 ~]$ sudo ibnetdiscover\""
        ),
        "{route}"
    );
    assert!(
        route.contains(&format!("line {}: skipped", lines + 2)),
        "{route}"
    );
    assert!(check.contains("verdict: ok"), "{check}");
    // A damaged line between records is an error naming it.
    let mut broken: Vec<&str> = real.lines().collect();
    let at = broken.len() / 2;
    broken.insert(at, "this is not ibnetdiscover");
    std::fs::write(&file, broken.join("\n")).unwrap();
    let o = scratch("dumps-pasted-broken");
    let r = osmroute(&[
        "route",
        "--engine",
        "pssp",
        "--fabric",
        file.to_str().unwrap(),
        "-o",
        o.to_str().unwrap(),
    ]);
    assert!(!r.status.success());
    assert!(
        text(&r).contains(&format!(
            "line {}: unknown line starting with 'this'",
            at + 1
        )),
        "{}",
        text(&r)
    );
}

#[test]
fn doctor_reads_a_ports_report() {
    let dir = scratch("dumps-doctor");
    let conf = dir.join("opensm.conf");
    std::fs::write(&conf, "routing_engine pssp\nqos TRUE\n").unwrap();
    let r = osmroute(&[
        "doctor",
        "--opensm-conf",
        conf.to_str().unwrap(),
        "--fabric",
        &fixture("plafrim2.ibnetdiscover-p"),
    ]);
    let out = text(&r);
    assert!(out.contains("pssp routes this fabric"), "{out}");
}

#[test]
fn the_engine_matrix_names_an_engine_for_every_fabric() {
    let f = fixture("plafrim2.ibnetdiscover-p");
    let r = osmroute(&[
        "compare",
        "--matrix",
        "--patterns",
        "20",
        "--matrix-fabric",
        &f,
    ]);
    let out = text(&r);
    assert!(r.status.success(), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| fabric"))
        .collect();
    assert!(rows.len() >= 11, "{out}");
    for row in &rows {
        assert!(!row.ends_with("| none of ours |"), "{row}");
    }
    let grid = rows.iter().find(|r| r.starts_with("| hyperx")).unwrap();
    assert!(grid.ends_with("| hxdor |"), "{grid}");
    let sf = rows.iter().find(|r| r.starts_with("| slim fly")).unwrap();
    assert!(sf.ends_with("| sfmin |"), "{sf}");
    assert!(
        out.contains("plafrim2.ibnetdiscover-p: hxdor declines"),
        "{out}"
    );
}

//! The `osmroute` command end to end: gen -> route -> check.

mod common;

use common::{osmroute, scratch};

#[test]
fn gen_route_check_dla() {
    let dir = scratch("dla");
    let net = dir.join("df.net");
    let out = osmroute(&[
        "gen",
        "dragonfly",
        "--a",
        "4",
        "--h",
        "2",
        "--p",
        "2",
        "--shuffle-ports",
        "--seed",
        "3",
        "-o",
        net.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&net).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("Switch")).count(), 36);
    assert_eq!(text.lines().filter(|l| l.starts_with("Hca")).count(), 72);

    let routed = dir.join("routed");
    let out = osmroute(&[
        "route",
        "--engine",
        "dla",
        "--fabric",
        net.to_str().unwrap(),
        "-o",
        routed.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "opensm-subnet.lst",
        "opensm-lfts.dump",
        "osmroute-sl2vl.txt",
        "osmroute-path-sl.txt",
        "summary.txt",
    ] {
        assert!(routed.join(f).exists(), "{f} written");
    }

    let out = osmroute(&["check", routed.to_str().unwrap(), "--max-hops", "3"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("routes (CA port -> CA LID): 5112"),
        "{report}"
    );
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
    let out = osmroute(&[
        "gen",
        "dragonfly",
        "--a",
        "4",
        "--h",
        "2",
        "--p",
        "1",
        "--groups",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("multiple of groups - 1"));

    let dir = scratch("missing");
    let out = osmroute(&["check", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no opensm-subnet.lst"));

    let out = osmroute(&[
        "route",
        "--engine",
        "nope",
        "--fabric",
        "/nonexistent.net",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two routings of one fabric (the dla tables with and without their SL2VL
/// tables) side by side, as a table and as JSON, and check's histograms.
#[test]
fn compare_json_and_plots() {
    let dir = scratch("compare");
    let net = dir.join("df.net");
    assert!(osmroute(&[
        "gen",
        "dragonfly",
        "--a",
        "4",
        "--h",
        "2",
        "--p",
        "1",
        "-o",
        net.to_str().unwrap()
    ])
    .status
    .success());
    let (with, without) = (dir.join("dla"), dir.join("flat"));
    for d in [&with, &without] {
        let out = osmroute(&[
            "route",
            "--engine",
            "dla",
            "--fabric",
            net.to_str().unwrap(),
            "-o",
            d.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_file(without.join("osmroute-sl2vl.txt")).unwrap();

    let out = osmroute(&[
        "compare",
        with.to_str().unwrap(),
        without.to_str().unwrap(),
        "--patterns",
        "100",
    ]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    let row = |name: &str| -> Vec<String> {
        let line = table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row: {table}"));
        line[name.len()..]
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // Without its SL2VL file the second is judged on VL 0 only, and says so.
    assert_eq!(row("VLs used"), ["2", "1*"], "{table}");
    assert_eq!(row("credit loops"), ["none", "FOUND*"], "{table}");
    assert!(
        table.contains(
            "* flat: no osmroute-sl2vl.txt or opensm-sl2vl.dump: every SL assumed on VL 0"
        ),
        "{table}"
    );
    assert_eq!(row("max hops"), ["3", "3"], "{table}");

    let out = osmroute(&[
        "compare",
        with.to_str().unwrap(),
        without.to_str().unwrap(),
        "--patterns",
        "100",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let runs = json.as_array().expect("one object per directory");
    assert_eq!(runs.len(), 2);
    // Same tables, same bisection patterns: same EBB.
    assert_eq!(runs[0]["ebb"], runs[1]["ebb"]);
    assert!(runs[0]["ebb"].as_f64().is_some_and(|e| e > 0.0 && e <= 1.0));
    assert_eq!(runs[0]["routes"], 36 * 35);
    assert!(runs[0]["credit_loop"].is_null() && runs[1]["credit_loop"].is_array());
    let channels: u64 = runs[0]["link_load"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    // 36 switches with 3 local and 2 global ports each.
    assert_eq!(
        channels,
        36 * 5,
        "every directed inter-switch channel is in the histogram once"
    );

    let plots = dir.join("plots");
    let out = osmroute(&[
        "check",
        with.to_str().unwrap(),
        "--patterns",
        "0",
        "--plot",
        plots.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let hops = std::fs::read_to_string(plots.join("hops.svg")).expect("hops.svg");
    assert!(hops.starts_with("<svg"));
    // One host per switch: no 0-hop routes.
    assert_eq!(
        hops.matches("<rect x=").count(),
        3,
        "bars for 1, 2 and 3 hops"
    );
    assert!(std::fs::read_to_string(plots.join("link-load.svg"))
        .expect("link-load.svg")
        .starts_with("<svg"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// mlid offline: the path-selection file, the per-pair query, `check
/// --dlid-choice`, and the layers report on LID offsets.
#[test]
fn mlid_path_selection_query_and_check() {
    let dir = scratch("mlid");
    let net = dir.join("ft.net");
    let out = osmroute(&[
        "gen",
        "fattree",
        "--m",
        "4",
        "--n",
        "3",
        "--shuffle-ports",
        "-o",
        net.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let routed = dir.join("routed");
    let out = osmroute(&[
        "route",
        "--engine",
        "mlid",
        "--lmc",
        "2",
        "--fabric",
        net.to_str().unwrap(),
        "-o",
        routed.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let select = std::fs::read_to_string(routed.join("osmroute-path-select.txt")).unwrap();
    assert_eq!(
        select.lines().filter(|l| !l.starts_with('#')).count(),
        16 * 15
    );

    // The paper's Fig. 11: P(011) reaches P(300) by its 4th LID, via root 11.
    let out = osmroute(&[
        "mlid-path",
        "--fabric",
        net.to_str().unwrap(),
        "--lmc",
        "2",
        "--from",
        "ft-p011",
        "--to",
        "ft-p300",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("(offset 3 of 4)"), "{text}");
    assert!(
        text.contains("path: ft-l2-01 -> ft-l1-01 -> ft-l0-11 -> ft-l1-31 -> ft-l2-30"),
        "{text}"
    );

    let out = osmroute(&[
        "check",
        routed.to_str().unwrap(),
        "--lmc",
        "2",
        "--dlid-choice",
        "--patterns",
        "200",
    ]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("effective bisection bandwidth with the path-selection DLIDs"),
        "{report}"
    );
    let out = osmroute(&["layers", routed.to_str().unwrap(), "--lmc", "2"]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("4 layers"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Dumps as other engines and QoS policies leave them: an SL2VL file with
/// a different table on almost every port pair (thousands of distinct
/// tables) is read and judged; `layers` and `churn` read no SL2VL file at
/// all (a corrupt one does not stop them); without the path-SL file
/// `check` says what it assumed.
#[test]
fn many_distinct_sl2vl_tables_and_missing_sl_files() {
    let dir = scratch("sl2vl-many");
    let net = dir.join("df.net");
    let out = osmroute(&[
        "gen",
        "dragonfly",
        "--a",
        "6",
        "--h",
        "3",
        "--p",
        "1",
        "-o",
        net.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let routed = dir.join("routed");
    let out = osmroute(&[
        "route",
        "--engine",
        "dla",
        "--fabric",
        net.to_str().unwrap(),
        "-o",
        routed.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every table of the plugin's file replaced by a different one (the
    // line number in octal, one digit per SL: VLs 0..7).
    let sl2vl = routed.join("osmroute-sl2vl.txt");
    let text = std::fs::read_to_string(&sl2vl).unwrap();
    let mut distinct = std::collections::HashSet::new();
    let rewritten: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(n, line)| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let vl = |k: usize| ((n + 1) >> (3 * k)) & 7;
            let bytes: Vec<String> = (0..8)
                .map(|b| format!("0x{:x}{:x}", vl(2 * b), vl(2 * b + 1)))
                .collect();
            distinct.insert(bytes.join(" "));
            format!("{} {} {} {}", words[0], words[1], words[2], bytes.join(" "))
        })
        .collect();
    assert!(distinct.len() > 1000, "{} distinct tables", distinct.len());
    std::fs::write(&sl2vl, rewritten.join("\n") + "\n").unwrap();
    let out = osmroute(&["check", routed.to_str().unwrap(), "--patterns", "0"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_ne!(
        out.status.code(),
        Some(2),
        "read: {report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("credit loops: "), "{report}");

    // layers and churn never open the SL2VL file.
    std::fs::write(&sl2vl, "not an SL2VL table\n").unwrap();
    let out = osmroute(&["check", routed.to_str().unwrap(), "--patterns", "0"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a corrupt SL2VL file is an error for check"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("osmroute-sl2vl.txt"));
    let out = osmroute(&["layers", routed.to_str().unwrap(), "--lmc", "0"]);
    assert!(
        out.status.success(),
        "layers: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = osmroute(&["churn", routed.to_str().unwrap(), routed.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "churn: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("changed: 0 "));

    // No SL files at all: everything on SL 0 and VL 0, and check says so.
    std::fs::remove_file(&sl2vl).unwrap();
    std::fs::remove_file(routed.join("osmroute-path-sl.txt")).unwrap();
    let _ = std::fs::remove_file(routed.join("osmroute-switch-sl.txt"));
    let out = osmroute(&["check", routed.to_str().unwrap(), "--patterns", "0"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_ne!(out.status.code(), Some(2), "{report}");
    assert!(
        report.contains("assum"),
        "the report names its assumptions: {report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `gen pgft` and `--parallel-cables`: a leaf-spine with 2 cables per pair
/// (4 leaves of 4 hosts, 2 spines), routed by pssp, reaches the optimal
/// edge forwarding index: a leaf's 4 hosts send to 12 others over its 4
/// up-cables, 12 routes each. A bad PGFT says what is wrong.
#[test]
fn gen_pgft_and_parallel_cables() {
    let dir = scratch("pgft");
    let net = dir.join("ls.net");
    let out = osmroute(&[
        "gen",
        "pgft",
        "--down",
        "4,4",
        "--up",
        "1,2",
        "--parallel",
        "1,2",
        "--shuffle-ports",
        "-o",
        net.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("6 switches, 16 hosts, 32 cables"),
        "{stderr}"
    );
    let routed = dir.join("routed");
    let out = osmroute(&[
        "route",
        "--engine",
        "pssp",
        "--fabric",
        net.to_str().unwrap(),
        "-o",
        routed.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = osmroute(&["check", routed.to_str().unwrap(), "--patterns", "50"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("edge forwarding index 12,"), "{report}");

    // Every cable doubled: a Slim Fly keeps its switches and hosts.
    let out = osmroute(&[
        "gen",
        "slimfly",
        "--q",
        "5",
        "--p",
        "1",
        "--parallel-cables",
        "2",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("50 switches, 50 hosts, 400 cables"));

    let out = osmroute(&["gen", "pgft", "--down", "4,4", "--up", "2,2"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("first up"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

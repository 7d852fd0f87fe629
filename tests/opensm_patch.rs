//! opensm-patch on ibsim: OpenSM built by `opensm-patch/build.sh` (cached
//! in target/opensm-patched, so a rerun only checks its stamp) loads the
//! same libosmroute.so as the distribution's OpenSM. With `mlid` and `lmc
//! 4` on the 8-port 3-tree its SA answers every host pair's PathRecord
//! (Get by GIDs) and MultiPathRecord (GetMulti) first with the DLID of
//! `osmroute-path-select.txt`; `saquery -p --sgid-to-dgid` agrees on a
//! seeded sample; a query that fixes the DLID gets exactly it; the EBB
//! hosts get from the SA's answers is the path-selection file's. The stock
//! OpenSM with the same plugin answers base LIDs; `layered` spreads
//! sources over layers by rank; under `dla` (no DLID choice) and OpenSM's
//! `minhop` (no callback) the patched SA answers exactly as the stock one.

mod harness;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use harness::readback::with_enhanced_port0;
use harness::{build_dir, check_loop_free, generate_shuffled, OpenSm, Sim};
use osmroute_core::dumps::path_select::{self, PATH_SELECT_FILE};
use osmroute_core::dumps::subnet_lst;
use osmroute_core::fabric::Lid;
use osmroute_core::routing::DlidChoice;
use osmroute_core::Fabric;

const UP: &str = "SUBNET UP";
const TIMEOUT: Duration = Duration::from_secs(240);
const PATCHED_MODE: &str = "OpenSM with opensm-patch: the SA answers PathRecords";
const STOCK_MODE: &str = "stock OpenSM: the SA answers PathRecords with its own LID pairs";

/// target/opensm-patched: the patched OpenSM and the SA client, built once
/// per test run (build.sh itself does nothing when they are up to date).
fn patched() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = build_dir()
            .parent()
            .expect("target/")
            .join("opensm-patched");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("opensm-patch/build.sh");
        let run = Command::new("bash")
            .arg(&script)
            .arg(&out)
            .output()
            .expect("run opensm-patch/build.sh");
        assert!(
            run.status.success(),
            "opensm-patch/build.sh failed:\n{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        out
    })
}

fn eight_port_three_tree() -> String {
    with_enhanced_port0(&generate_shuffled(&["fattree", "--m", "8", "--n", "3"], 4))
}

/// The fabric as OpenSM dumped it (port GUIDs, LIDs).
fn dumped_fabric(osm: &OpenSm, lmc: u8) -> Fabric {
    subnet_lst::read(&osm.file("opensm-subnet.lst"), lmc)
        .expect("opensm-subnet.lst")
        .build()
        .expect("fabric")
}

/// (port GUID, base LID) of every host port.
fn hosts(fabric: &Fabric) -> Vec<Host> {
    fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
        .map(|(_, p)| (p.guid, p.lid))
        .collect()
}

/// A host port: (port GUID, base LID).
type Host = (u64, Lid);
/// An ordered pair of host ports.
type Pair = (Host, Host);
/// The SA's first answer per (source GUID, destination GUID): (SLID, DLID).
type Answers = BTreeMap<(u64, u64), (u16, u16)>;

/// Every ordered pair of distinct hosts.
fn all_pairs(hosts: &[Host]) -> Vec<Pair> {
    hosts
        .iter()
        .flat_map(|&s| hosts.iter().filter(move |&&d| d != s).map(move |&d| (s, d)))
        .collect()
}

/// The first path the SA answers for each pair, as (SLID, DLID): a
/// PathRecord Get by GIDs, or (`multipath`) a MultiPathRecord GetMulti.
fn first_paths(sim: &Sim, pairs: &[Pair], multipath: bool) -> Answers {
    let input: String = pairs
        .iter()
        .map(|((s, _), (d, _))| format!("{s:x} {d:x}\n"))
        .collect();
    let client = patched().join("sa-first-path");
    let client = client.to_str().expect("UTF-8 path");
    let out = sim.tool_with_input(client, if multipath { &["-m"] } else { &[] }, &input);
    let answers: Answers = out
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let hex = |s: &str| u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("{l}: {e}"));
            let num = |s: &str| s.parse::<u16>().unwrap_or_else(|e| panic!("{l}: {e}"));
            ((hex(w[0]), hex(w[1])), (num(w[2]), num(w[3])))
        })
        .collect();
    assert_eq!(
        answers.len(),
        pairs.len(),
        "sa-first-path answered {} of {} pairs:\n{out}",
        answers.len(),
        pairs.len()
    );
    answers
}

/// The SA's answers as a path selection: (source base LID, destination
/// base LID) -> the DLID answered first.
fn choice_of(pairs: &[Pair], answers: &Answers) -> DlidChoice {
    let mut choice = DlidChoice::new();
    for &((s, slid), (d, dbase)) in pairs {
        let (_, dlid) = answers[&(s, d)];
        choice.insert(slid, dbase, Lid::from_raw(dlid));
    }
    choice
}

/// `saquery -p --sgid-to-dgid` (the GID resolution clients make) between
/// two ports (link-local GIDs of their port GUIDs): its output.
fn saquery_by_gids(sim: &Sim, src: u64, dst: u64) -> String {
    sim.tool(
        "saquery",
        &[
            "-p",
            "--sgid-to-dgid",
            &format!("{}-{}", gid(src), gid(dst)),
        ],
    )
}

/// A port's link-local GID (fe80::/64 and its port GUID), as saquery reads it.
fn gid(guid: u64) -> String {
    format!(
        "fe80::{:x}:{:x}:{:x}:{:x}",
        guid >> 48,
        (guid >> 32) & 0xffff,
        (guid >> 16) & 0xffff,
        guid & 0xffff
    )
}

/// The (SLID, DLID) of the first record `saquery -p --sgid-to-dgid` answers.
fn saquery_first(sim: &Sim, src: u64, dst: u64) -> (u16, u16) {
    let out = saquery_by_gids(sim, src, dst);
    first_record(&out)
        .unwrap_or_else(|| panic!("saquery -p --sgid-to-dgid {src:x}-{dst:x}: no record in {out}"))
}

/// (slid, dlid) of the first PathRecord in saquery's output.
fn first_record(out: &str) -> Option<(u16, u16)> {
    let field = |name: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(name))?
            .rsplit('.')
            .next()?
            .trim()
            .parse::<u16>()
            .ok()
    };
    Some((field("slid")?, field("dlid")?))
}

/// saquery's PathRecords that arrived whole. Under umad2sim a GetTable
/// response is cut after its first MAD: 200 bytes of data, so the fourth
/// record is a fragment (LIDs 0, bytes of whatever memory saquery had).
fn complete_records(out: &str) -> String {
    out.split("PathRecord dump:")
        .filter(|r| first_record(r).is_some_and(|(s, d)| s != 0 && d != 0))
        .collect()
}

/// `n` pairs drawn from `pairs` with a small seeded generator.
fn sample<T: Copy>(pairs: &[T], n: usize, mut seed: u64) -> Vec<T> {
    (0..n)
        .map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            pairs[(seed >> 33) as usize % pairs.len()]
        })
        .collect()
}

/// EBB lines of `osmroute check --dlid-choice` on `dir`: (base LIDs, the
/// directory's path selection).
fn ebbs(dir: &Path) -> (f64, f64) {
    let check = check_loop_free(dir, &["--lmc", "4", "--patterns", "200", "--dlid-choice"]);
    let ebb = |prefix: &str| harness::first_number_after(&check, prefix);
    (
        ebb("effective bisection bandwidth:"),
        ebb("effective bisection bandwidth with"),
    )
}

/// A copy of OpenSM's dump directory whose path selection is `choice`.
fn dumps_with_choice(osm: &OpenSm, name: &str, choice: &DlidChoice) -> PathBuf {
    let dir = osm.dir.join(name);
    std::fs::create_dir_all(&dir).expect("create directory");
    for entry in std::fs::read_dir(&osm.dir)
        .expect("dump directory")
        .flatten()
    {
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy dump");
        }
    }
    let mut text = Vec::new();
    path_select::write(choice, &mut text).expect("write path selection");
    std::fs::write(dir.join(PATH_SELECT_FILE), text).expect("write path selection");
    dir
}

/// mlid with lmc 4 on the 8-port 3-tree under `binary`, routed and up.
fn mlid_run(name: &str, binary: &Path) -> (Sim, OpenSm) {
    let mut sim = Sim::start(name, &eight_port_three_tree());
    let osm = sim.opensm_from(
        binary,
        &["routing_engine mlid", "lmc 4", "lmc_esp0 TRUE"],
        &[],
    );
    osm.wait_for(UP, TIMEOUT);
    assert!(
        osm.log().contains("mlid tables configured on all switches"),
        "mlid did not route"
    );
    (sim, osm)
}

#[test]
fn patched_sa_answers_mlids_path_selection() {
    let (sim, osm) = mlid_run("patchmlid", &patched().join("opensm"));
    assert_eq!(
        osm.lines_with(PATCHED_MODE).len(),
        1,
        "the plugin should detect the patched OpenSM"
    );
    let fabric = dumped_fabric(&osm, 4);
    let hosts = hosts(&fabric);
    assert_eq!(hosts.len(), 128);
    let pairs = all_pairs(&hosts);
    let file = path_select::read(&osm.file(PATH_SELECT_FILE)).expect("path-selection file");
    // A rule (one line per host), with a choice for every pair.
    assert!(pairs
        .iter()
        .all(|&((_, slid), (_, dbase))| file.get(slid, dbase).is_some()));

    // Get and GetMulti, every pair: the file's DLID, from the source's base LID.
    let mut off_diagonal = 0;
    for multipath in [false, true] {
        let answers = first_paths(&sim, &pairs, multipath);
        for &((s, slid), (d, dbase)) in &pairs {
            let want = file.get(slid, dbase).expect("a choice for every host pair");
            assert_eq!(
                answers[&(s, d)],
                (slid.raw(), want.raw()),
                "{s:x} -> {d:x} (multipath {multipath})"
            );
            off_diagonal += usize::from(want != dbase);
        }
        // The EBB hosts get from the SA's answers is the file's.
        let from_sa = dumps_with_choice(
            &osm,
            if multipath { "from-mpr" } else { "from-pr" },
            &choice_of(&pairs, &answers),
        );
        let (base, chosen) = ebbs(&osm.dir);
        let (sa_base, from_answers) = ebbs(&from_sa);
        assert_eq!(
            (sa_base, from_answers),
            (base, chosen),
            "EBB from the SA's answers"
        );
        // Sources' up-paths (the choice) spread as well as the base LIDs'
        // d-mod-k over random bisections: not worse than noise.
        assert!(
            chosen >= 0.97 * base,
            "the path selection lost against base LIDs: {chosen} vs {base}"
        );
    }
    assert!(
        off_diagonal > pairs.len(),
        "most pairs should use a DLID other than the base: {off_diagonal}"
    );

    // saquery, as clients resolve GIDs, on a seeded sample; and by source
    // LID with the DLID left open (destination by GID).
    for ((s, slid), (d, dbase)) in sample(&pairs, 40, 17) {
        let want = file.get(slid, dbase).unwrap();
        assert_eq!(
            saquery_first(&sim, s, d),
            (slid.raw(), want.raw()),
            "saquery {s:x} -> {d:x}"
        );
        let out = sim.tool(
            "saquery",
            &["-p", "--slid", &slid.raw().to_string(), "--dgid", &gid(d)],
        );
        assert_eq!(
            first_record(&out),
            Some((slid.raw(), want.raw())),
            "saquery --slid {slid} --dgid {d:x}: {out}"
        );
    }

    // A query that fixes the DLID gets exactly that DLID.
    for ((_, slid), (_, dbase)) in sample(&pairs, 8, 5) {
        let fixed = dbase.offset(7);
        let (slid_s, dlid_s) = (slid.raw().to_string(), fixed.raw().to_string());
        let out = sim.tool("saquery", &["-p", "--slid", &slid_s, "--dlid", &dlid_s]);
        assert_eq!(first_record(&out), Some((slid.raw(), fixed.raw())), "{out}");
    }
    osm.assert_no_errors();
}

#[test]
fn stock_opensm_with_the_same_plugin_answers_base_lids() {
    let (sim, osm) = mlid_run("patchstock", Path::new("opensm"));
    assert_eq!(
        osm.lines_with(STOCK_MODE).len(),
        1,
        "the plugin should see a stock OpenSM"
    );
    let fabric = dumped_fabric(&osm, 4);
    let pairs = all_pairs(&hosts(&fabric));
    let answers = first_paths(&sim, &pairs, false);
    for &((s, slid), (d, dbase)) in &pairs {
        assert_eq!(
            answers[&(s, d)],
            (slid.raw(), dbase.raw()),
            "{s:x} -> {d:x}"
        );
    }
    // Hosts that take the SA's answer get the base-LID EBB, which mlid
    // spreads d-mod-k: at least 0.95 × ftree's 0.759 on this tree
    // (README, mlid), about what the path selection gets.
    let from_sa = dumps_with_choice(&osm, "from-pr", &choice_of(&pairs, &answers));
    let (base, chosen) = ebbs(&osm.dir);
    let (_, from_answers) = ebbs(&from_sa);
    assert_eq!(from_answers, base);
    assert!(
        from_answers >= 0.95 * 0.759 && from_answers >= 0.97 * chosen,
        "{from_answers} vs {chosen}"
    );
    osm.assert_no_errors();
}

#[test]
fn layered_spreads_sources_over_layers_by_rank() {
    let net = with_enhanced_port0(&generate_shuffled(&["slimfly", "--q", "5", "--p", "1"], 3));
    let mut sim = Sim::start("patchlayered", &net);
    let osm = sim.opensm_from(
        &patched().join("opensm"),
        &["routing_engine layered", "lmc 2", "qos TRUE"],
        &[],
    );
    osm.wait_for(UP, TIMEOUT);
    assert!(
        osm.log()
            .contains("layered tables configured on all switches"),
        "layered did not route"
    );
    let fabric = dumped_fabric(&osm, 2);
    let hosts = hosts(&fabric);
    let pairs = all_pairs(&hosts);
    let answers = first_paths(&sim, &pairs, false);
    // Ranks in base-LID order; offset (source rank + destination rank) mod 4.
    let mut by_lid: Vec<Lid> = hosts.iter().map(|h| h.1).collect();
    by_lid.sort_unstable();
    let rank = |lid: Lid| by_lid.iter().position(|&l| l == lid).unwrap() as u16;
    let mut layers_used = [0usize; 4];
    for &((s, slid), (d, dbase)) in &pairs {
        let offset = (rank(slid) + rank(dbase)) % 4;
        assert_eq!(
            answers[&(s, d)],
            (slid.raw(), dbase.offset(offset).raw()),
            "{s:x} -> {d:x}"
        );
        layers_used[offset as usize] += 1;
    }
    assert!(
        layers_used.iter().all(|&n| n * 5 > pairs.len()),
        "every layer should carry about a quarter: {layers_used:?}"
    );
    osm.assert_no_errors();
}

/// `engine` (with `conf`) under the patched OpenSM answers every host
/// pair's PathRecord and MultiPathRecord, and saquery's GetTables, exactly
/// as under the stock OpenSM.
fn answers_as_under_stock(engine: &str, conf: &[&str]) {
    let net = generate_shuffled(&["dragonfly", "--a", "4", "--h", "2", "--p", "2"], 11);
    let routing_engine = format!("routing_engine {engine}");
    let conf: Vec<&str> = [&[routing_engine.as_str(), "lmc 2"][..], conf].concat();
    let mut answers = Vec::new();
    for (run, binary) in [
        ("patched", patched().join("opensm")),
        ("stock", PathBuf::from("opensm")),
    ] {
        let mut sim = Sim::start(&format!("{run}{engine}"), &net);
        let osm = sim.opensm_from(&binary, &conf, &[]);
        osm.wait_for(UP, TIMEOUT);
        assert!(
            osm.log()
                .contains(&format!("{engine} tables configured on all switches")),
            "{engine} did not route"
        );
        let fabric = dumped_fabric(&osm, 2);
        let pairs = all_pairs(&hosts(&fabric));
        let saquery: Vec<String> = sample(&pairs, 10, 3)
            .into_iter()
            .map(|((s, slid), (d, dbase))| {
                let (slid, dlid) = (slid.raw().to_string(), dbase.raw().to_string());
                let by_lids = sim.tool("saquery", &["-p", "--slid", &slid, "--dlid", &dlid]);
                complete_records(&(by_lids + &saquery_by_gids(&sim, s, d)))
            })
            .collect();
        answers.push((
            first_paths(&sim, &pairs, false),
            first_paths(&sim, &pairs, true),
            saquery,
        ));
        osm.assert_no_errors();
    }
    let (patched, stock) = (&answers[0], &answers[1]);
    assert_eq!(patched.0, stock.0, "{engine}: PathRecord answers");
    assert_eq!(patched.1, stock.1, "{engine}: MultiPathRecord answers");
    for (p, s) in patched.2.iter().zip(&stock.2) {
        assert!(
            p.matches("dlid").count() >= 3,
            "saquery answered too little: {p}"
        );
        assert_eq!(p, s, "{engine}: saquery output");
    }
    assert!(
        patched.0.values().all(|&(s, d)| s % 4 == 0 && d % 4 == 0),
        "{engine}: no preference, so diagonal pairs"
    );
}

/// Our engine without a DLID choice: the callback answers "no preference".
#[test]
fn dla_answers_exactly_as_under_stock_opensm() {
    answers_as_under_stock("dla", &["qos TRUE"]);
}

/// OpenSM's own engine: no callback at all.
#[test]
fn minhop_answers_exactly_as_under_stock_opensm() {
    answers_as_under_stock("minhop", &[]);
}

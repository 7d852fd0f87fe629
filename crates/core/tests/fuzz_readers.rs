//! Every reader of outside input, fed random text and mutations of valid
//! files (written by our own writers from generated fabrics): each must
//! return a clean error or a result the rest of the toolkit can use —
//! never panic, never hang. A result that reads is also pushed through
//! what consumes it (building the fabric, applying the LIDs, the routing
//! analysis `osmroute check` runs, the engines' option readers).
//!
//! Case counts are small so the whole file takes seconds; failures that
//! proptest finds are kept as plain tests at the end.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;

use osmroute_core::analysis::report::analyze;
use osmroute_core::analysis::report::analyze_with_dependencies;
use osmroute_core::config::Settings;
use osmroute_core::dumps::bundle::DumpOptions;
use osmroute_core::dumps::{ibdmchk, lfts, mcfdbs, osm_sl2vl, path_select, subnet_lst, switch_sl};
use osmroute_core::engines::{config_sections, ENGINES};
use osmroute_core::gen::{dragonfly, fattree};
use osmroute_core::io::guid2lid::Guid2Lid;
use osmroute_core::io::{detect, ibnetdiscover, netfile, ports_report};
use osmroute_core::multicast::{check::check, GroupMft};
use osmroute_core::pipeline::route_by_name;
use osmroute_core::{Fabric, FabricBuilder, PathSl, Routing};

/// How long one parse may take before it counts as a hang (the inputs are
/// a few kB; a parse takes microseconds).
const HANG: Duration = Duration::from_secs(20);

/// Runs `f` on its own thread: a panic or a hang fails the property.
fn no_panic_no_hang<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(HANG) {
        Ok(v) => {
            let _ = worker.join();
            v
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no answer after {HANG:?} (a hang)"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked (see above)"),
    }
}

/// One edit of a text.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
    /// Replace the n-th whitespace-separated word of a line.
    ReplaceWord(usize, usize, &'static str),
    /// Insert a word at a byte offset.
    Insert(usize, &'static str),
    /// Replace one character (by index) with another.
    ReplaceChar(usize, char),
}

/// Words that sit on parsers' edges: numbers at and past the limits of
/// ports, LIDs, SLs and GUIDs, signs, separators, quotes and brackets.
const EDGE_WORDS: &[&str] = &[
    "0",
    "1",
    "15",
    "16",
    "254",
    "255",
    "256",
    "-1",
    "65535",
    "65536",
    "49151",
    "49152",
    "0x0",
    "0xffff",
    "0x10000",
    "0xffffffffffffffff",
    "0x1ffffffffffffffff",
    "99999999999999999999",
    "0x",
    "",
    " ",
    "\t",
    "\"",
    "\"\"",
    "[",
    "]",
    "[]",
    "[0]",
    "[255]",
    "(",
    ")",
    "#",
    ":",
    ",",
    "=",
    "lid",
    "lmc",
    "Switch",
    "Hca",
    "Ca",
    "guid",
    "port",
    "é",
    "\u{0}",
    "nan",
    "TRUE",
    "+",
    "0x0000000000200000",
    "Unicast lids [0-1] of switch Lid 1 guid 0x0000000000200000 ('s'):",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let word = prop::sample::select(EDGE_WORDS);
    let chars = prop::sample::select(vec![
        '0', '9', 'f', 'x', ' ', '\n', '"', '[', ']', '#', ':', '-', 'é', '\t', '{', '}',
    ]);
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>(), word.clone())
            .prop_map(|(l, w, s)| Mutation::ReplaceWord(l, w, s)),
        (any::<usize>(), word).prop_map(|(at, s)| Mutation::Insert(at, s)),
        (any::<usize>(), chars).prop_map(|(at, c)| Mutation::ReplaceChar(at, c)),
    ]
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut text = text.to_string();
    for m in mutations {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let n = lines.len().max(1);
        match *m {
            Mutation::DeleteLine(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Mutation::DuplicateLine(i) if !lines.is_empty() => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::SwapLines(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
            Mutation::ReplaceWord(l, w, s) if !lines.is_empty() => {
                let line = &mut lines[l % n];
                let mut words: Vec<&str> = line.split_whitespace().collect();
                if !words.is_empty() {
                    let at = w % words.len();
                    words[at] = s;
                    *line = words.join(" ");
                }
            }
            Mutation::Truncate(at) => {
                let cut = char_boundary(&text, at % (text.len() + 1));
                text.truncate(cut);
                continue;
            }
            Mutation::Insert(at, s) => {
                let at = char_boundary(&text, at % (text.len() + 1));
                text.insert_str(at, s);
                continue;
            }
            Mutation::ReplaceChar(at, c) => {
                let chars: Vec<char> = text.chars().collect();
                if !chars.is_empty() {
                    let i = at % chars.len();
                    text = chars[..i]
                        .iter()
                        .chain(std::iter::once(&c))
                        .chain(&chars[i + 1..])
                        .collect();
                }
                continue;
            }
            _ => {}
        }
        text = lines.join("\n") + "\n";
    }
    text
}

fn char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Random text: edge words and arbitrary characters on a few lines.
fn random_text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(EDGE_WORDS), 0..60)
            .prop_map(|w| w.join(" ").replace("# ", "\n")),
        prop::collection::vec(any::<char>(), 0..400).prop_map(|c| c.into_iter().collect()),
        prop::collection::vec(any::<u8>(), 0..400)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

/// A valid text mutated, or random text.
fn input(valid: String) -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(mutation(), 1..6).prop_map(move |m| apply(&valid, &m)),
        1 => random_text(),
    ]
}

fn small_dragonfly() -> FabricBuilder {
    dragonfly::dragonfly(&dragonfly::Params::new(3, 1, 1)).expect("a=3, h=1, p=1")
}

fn built(mut b: FabricBuilder, lmc: u8) -> Fabric {
    b.assign_lids_sequential(lmc).expect("LIDs");
    b.build().expect("a generated fabric builds")
}

/// The Dragonfly routed by dla (SL2VL tables, path SLs) and a fat tree
/// routed by mlid (a DLID choice), their files as our writers write them.
struct Valid {
    dragonfly: Arc<Fabric>,
    dla: Routing,
    pssp: Routing,
    fat_tree: Arc<Fabric>,
    mlid_choice: String,
}

fn valid() -> &'static Valid {
    static VALID: std::sync::OnceLock<Valid> = std::sync::OnceLock::new();
    VALID.get_or_init(|| {
        let dragonfly = built(small_dragonfly(), 0);
        let dla = route_by_name("dla", &dragonfly)
            .expect("dla routes")
            .routing;
        let pssp = route_by_name("pssp", &dragonfly)
            .expect("pssp routes")
            .routing;
        let fat_tree = built(fattree::fattree(4, 2).expect("FT(4,2)"), 1);
        let choice = route_by_name("mlid", &fat_tree)
            .expect("mlid routes")
            .dlid_choice
            .expect("a DLID choice");
        let mut mlid_choice = Vec::new();
        path_select::write(&choice, &mut mlid_choice).expect("write");
        Valid {
            dragonfly: Arc::new(dragonfly),
            dla,
            pssp,
            fat_tree: Arc::new(fat_tree),
            mlid_choice: String::from_utf8(mlid_choice).expect("UTF-8"),
        }
    })
}

fn written(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    f(&mut out).expect("write");
    String::from_utf8(out).expect("UTF-8")
}

/// A fabric a reader gave: it builds or says why; if it builds, it goes
/// through the analysis with empty tables (nothing delivered, no panic)
/// and writes as a net file that reads back with as many cables. A net
/// file has no LIDs: `assign` gives them.
fn use_fabric(mut b: FabricBuilder, assign: bool) {
    let cables = |b: &FabricBuilder| b.nodes().iter().map(|n| n.links().count()).sum::<usize>();
    let before = cables(&b);
    let again = netfile::read(&netfile::write(&b)).expect("our net file of a read fabric reads");
    assert_eq!(
        cables(&again),
        before,
        "the net file round trip kept every cable"
    );
    if assign && b.assign_lids_sequential(0).is_err() {
        return;
    }
    if let Ok(fabric) = b.build() {
        let routing = Routing {
            engine: "none".into(),
            lfts: Routing::empty_lfts(&fabric),
            sl2vl: None,
            path_sl: PathSl::Uniform(0),
        };
        let _ = analyze(&fabric, &routing);
    }
}

/// The OpenSM SL2VL dump of a routing (the format `osm_sl2vl` reads).
fn osm_sl2vl_dump(fabric: &Fabric, routing: &Routing) -> String {
    let sl2vl = routing.sl2vl.as_ref().expect("SL2VL tables");
    let mut out = String::new();
    for s in fabric.switch_ids() {
        let node = fabric.switch_node(s);
        let lid = node.port(0).map_or(0, |p| p.lid.raw());
        out += &format!("Switch 0x{:016x}, base LID {lid}, \"{}\"\n#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15\n", node.guid, node.desc);
        for (out_port, _) in node.links() {
            for (in_port, _) in std::iter::once((osmroute_core::fabric::PortNum::new(0), ()))
                .chain(node.links().map(|(p, _)| (p, ())))
            {
                let vls: Vec<String> = (0..16)
                    .map(|sl| sl2vl.vl(s, in_port, out_port, sl).to_string())
                    .collect();
                out += &format!(
                    "{}   {}   : {}\n",
                    in_port.raw(),
                    out_port.raw(),
                    vls.join("  ")
                );
            }
        }
        out += "#--------------------------------------------------------\n\n";
    }
    out
}

/// Cases per reader: `FUZZ_CASES` in the environment for a longer hunt.
fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(500)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn net_files(text in input(netfile::write(&small_dragonfly()))) {
        no_panic_no_hang("netfile::read", move || {
            if let Ok(b) = netfile::read(&text) {
                use_fabric(b, true);
            }
        });
    }

    #[test]
    fn pasted_ibdiagnet2_output(text in input(pasted_ibdiagnet2())) {
        no_panic_no_hang("ibnetdiscover::read_with_notes", move || {
            if let Ok(d) = ibnetdiscover::read_with_notes(&text) {
                use_fabric(d.builder, false);
            }
        });
    }

    #[test]
    fn ports_reports(text in input(PORTS_REPORT.to_string())) {
        no_panic_no_hang("ports_report::read", move || {
            if let Ok(d) = ports_report::read(&text) {
                use_fabric(d.builder, false);
            }
        });
    }

    /// A real cluster's report, read in whatever form it is detected as
    /// after the mutation.
    #[test]
    fn a_real_ports_report_detected(text in input(PLAFRIM2.to_string())) {
        no_panic_no_hang("detect::read", move || {
            if let Ok(r) = detect::read(&text, None) {
                use_fabric(r.builder, !r.form.has_lids());
            }
        });
    }

    #[test]
    fn ibnetdiscover_output(text in input(IBNETDISCOVER.to_string())) {
        no_panic_no_hang("ibnetdiscover::read", move || {
            if let Ok(b) = ibnetdiscover::read(&text) {
                use_fabric(b, false);
            }
        });
    }

    #[test]
    fn guid2lid_files(text in input(guid2lid_of(&valid().dragonfly))) {
        no_panic_no_hang("Guid2Lid::read", move || {
            if let Ok(g) = Guid2Lid::read(&text) {
                let mut b = small_dragonfly();
                if g.apply(&mut b).is_ok() {
                    let _ = b.build();
                }
            }
        });
    }

    #[test]
    fn subnet_lists(text in input(subnet_lst::write(&valid().dragonfly)), lmc in 0u8..3) {
        no_panic_no_hang("subnet_lst::read", move || {
            if let Ok(b) = subnet_lst::read(&text, lmc) {
                use_fabric(b, false);
            }
        });
    }

    #[test]
    fn lft_dumps(text in input(lfts::write(&valid().dragonfly, &valid().dla))) {
        let fabric = valid().dragonfly.clone();
        no_panic_no_hang("lfts::read", move || {
            if let Ok(tables) = lfts::read(&text) {
                if let Ok(lfts) = lfts::to_lfts(&fabric, &tables) {
                    let routing = Routing { engine: "read".into(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) };
                    let _ = analyze(&fabric, &routing);
                }
            }
        });
    }

    #[test]
    fn opensm_sl2vl_dumps(text in input(osm_sl2vl_dump(&valid().dragonfly, &valid().dla))) {
        let fabric = valid().dragonfly.clone();
        let lfts = valid().dla.lfts.clone();
        no_panic_no_hang("osm_sl2vl::read", move || {
            if let Ok(sl2vl) = osm_sl2vl::read(&fabric, &text) {
                assert!(sl2vl.vls_used() <= 16);
                let routing = Routing { engine: "read".into(), lfts, sl2vl: Some(sl2vl), path_sl: PathSl::Uniform(0) };
                let _ = analyze(&fabric, &routing);
            }
        });
    }

    #[test]
    fn our_sl2vl_files(text in input(written(|w| ibdmchk::write_sl2vl(&valid().dragonfly, &valid().dla, w)))) {
        let fabric = valid().dragonfly.clone();
        let lfts = valid().dla.lfts.clone();
        no_panic_no_hang("ibdmchk::read_sl2vl", move || {
            if let Ok(sl2vl) = ibdmchk::read_sl2vl(&fabric, &text) {
                assert!(sl2vl.vls_used() <= 16);
                let routing = Routing { engine: "read".into(), lfts, sl2vl: Some(sl2vl), path_sl: PathSl::Uniform(0) };
                let _ = analyze(&fabric, &routing);
            }
        });
    }

    #[test]
    fn path_sl_files(text in input(written(|w| ibdmchk::write_path_sl(&valid().dragonfly, &valid().dla, w)))) {
        let fabric = valid().dragonfly.clone();
        let dla = valid().dla.clone();
        no_panic_no_hang("ibdmchk::read_path_sl", move || {
            if let Ok(path_sl) = ibdmchk::read_path_sl(&fabric, &text) {
                assert!(path_sl.sls_used().iter().all(|&sl| sl < 16), "{:?}", path_sl.sls_used());
                let _ = analyze(&fabric, &Routing { path_sl, ..dla });
            }
        });
    }

    #[test]
    fn switch_sl_files(text in input(written(|w| switch_sl::write(&valid().dragonfly, &valid().pssp.path_sl, w)))) {
        let fabric = valid().dragonfly.clone();
        let pssp = valid().pssp.clone();
        no_panic_no_hang("switch_sl::read", move || {
            if let Ok(path_sl) = switch_sl::read(&fabric, &text) {
                assert!(path_sl.sls_used().iter().all(|&sl| sl < 16), "{:?}", path_sl.sls_used());
                let _ = analyze(&fabric, &Routing { path_sl, ..pssp });
            }
        });
    }

    #[test]
    fn multicast_dumps(text in input(mcfdbs::write(&valid().dragonfly, &[a_group(&valid().dragonfly)]))) {
        let fabric = valid().dragonfly.clone();
        let dla = valid().dla.clone();
        no_panic_no_hang("mcfdbs::read", move || {
            if let Ok(tables) = mcfdbs::read(&text) {
                if let Ok(groups) = mcfdbs::to_groups(&fabric, &tables, &|m| (m % 16) as u8) {
                    let (_, unicast) = analyze_with_dependencies(&fabric, &dla, &|_, _| {});
                    let _ = check(&fabric, &dla, &groups, &unicast);
                }
            }
        });
    }

    #[test]
    fn path_select_files(text in input(valid().mlid_choice.clone())) {
        let fabric = valid().fat_tree.clone();
        no_panic_no_hang("path_select::read", move || {
            if let Ok(choice) = path_select::read(&text) {
                for (slid, base, _) in choice.entries() {
                    let _ = choice.get(slid, base);
                }
                let _ = fabric.lids().count();
            }
        });
    }

    #[test]
    fn osmroute_conf(text in input(every_option_at_its_default())) {
        no_panic_no_hang("Settings::parse", move || {
            let settings = Settings::parse(&text, "fuzz.conf", &config_sections());
            for e in settings.errors() {
                assert!(!e.to_string().is_empty());
            }
            for engine in ENGINES {
                let _ = osmroute_core::pipeline::config_problem(engine, &settings);
                let _ = (engine.build)(&settings.section(engine.name));
            }
            let _ = DumpOptions::read(&settings.section(osmroute_core::config::DUMP_SECTION));
        });
    }
}

/// A group over every switch: its CA ports and its first cable (not a
/// tree: the reader must take any masks).
fn a_group(fabric: &Fabric) -> GroupMft {
    let mut g = GroupMft::new(fabric, 0xC000, 0);
    let graph = fabric.graph();
    for s in fabric.switch_ids() {
        for (p, peer) in graph.peers(s).iter().enumerate() {
            if matches!(peer, Some(osmroute_core::Peer::Ca(_))) {
                g.add(s, osmroute_core::PortNum::new(p as u8));
            }
        }
        if let Some(c) = graph.cables(s).first() {
            g.add(s, c.port);
        }
    }
    g
}

/// OpenSM's guid2lid cache for `fabric`'s LIDs.
fn guid2lid_of(fabric: &Fabric) -> String {
    fabric
        .end_ports()
        .map(|(_, p)| {
            format!(
                "0x{:016x} 0x{:04x} 0x{:04x}\n\n",
                p.guid,
                p.lid.raw(),
                p.lid.raw() + p.lid_count() as u16 - 1
            )
        })
        .collect()
}

/// An osmroute.conf that sets every option of every engine (and the dump
/// section) to its default.
fn every_option_at_its_default() -> String {
    let mut text = String::from("# every option\n");
    for engine in ENGINES {
        for option in engine.options.iter().flat_map(|list| list.iter()) {
            text += &format!("{}.{} {}\n", engine.name, option.key, option.default);
        }
    }
    for option in osmroute_core::dumps::bundle::OPTIONS {
        text += &format!("dump.{} = {}\n", option.key, option.default);
    }
    text
}

/// ibnetdiscover output of two switches, three CAs (one dual-ported) with
/// LMC 1, as ibnetdiscover prints it for a simulated fabric.
const IBNETDISCOVER: &str = "#\n# Topology file: generated on Sun Nov 22 12:00:00 2026\n#\n\
vendid=0x0\ndevid=0x0\nsysimgguid=0x200000\nswitchguid=0x200000(200000)\n\
Switch\t8 \"S-0000000000200000\"\t\t# \"s0\" base port 0 lid 4 lmc 0\n\
[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"h0\" lid 2 4xSDR\n\
[2]\t\"H-0000000000100003\"[1](100004) \t\t# \"h1\" lid 8 4xSDR\n\
[5]\t\"S-0000000000200001\"[5]\t\t# \"s1\" lid 5 4xSDR\n\
[6]\t\"S-0000000000200001\"[6]\t\t# \"s1\" lid 5 4xSDR\n\n\
vendid=0x0\ndevid=0x0\nsysimgguid=0x200001\nswitchguid=0x200001(200001)\n\
Switch\t8 \"S-0000000000200001\"\t\t# \"s1\" base port 0 lid 5 lmc 0\n\
[1]\t\"H-0000000000100000\"[2](100002) \t\t# \"h0\" lid 6 4xSDR\n\
[2]\t\"H-0000000000100005\"[1](100006) \t\t# \"h2\" lid 10 4xSDR\n\
[5]\t\"S-0000000000200000\"[5]\t\t# \"s0\" lid 4 4xSDR\n\
[6]\t\"S-0000000000200000\"[6]\t\t# \"s0\" lid 4 4xSDR\n\n\
vendid=0x0\ndevid=0x0\nsysimgguid=0x100003\ncaguid=0x100003\n\
Ca\t1 \"H-0000000000100003\"\t\t# \"h1\"\n\
[1](100004) \t\"S-0000000000200000\"[2]\t\t# lid 8 lmc 1 \"s0\" lid 4 4xSDR\n\n\
vendid=0x0\ndevid=0x0\nsysimgguid=0x100005\ncaguid=0x100005\n\
Ca\t1 \"H-0000000000100005\"\t\t# \"h2\"\n\
[1](100006) \t\"S-0000000000200001\"[2]\t\t# lid 10 lmc 1 \"s1\" lid 5 4xSDR\n\n\
vendid=0x0\ndevid=0x0\nsysimgguid=0x100000\ncaguid=0x100000\n\
Ca\t2 \"H-0000000000100000\"\t\t# \"h0\"\n\
[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 2 lmc 1 \"s0\" lid 4 4xSDR\n\
[2](100002) \t\"S-0000000000200001\"[1]\t\t# lid 6 lmc 1 \"s1\" lid 5 4xSDR\n";

/// `IBNETDISCOVER` as ibdiagnet2 labels ports and a terminal pastes it:
/// BOM, CRLF, a prompt above and below, `[n](a/b/c)` on switch ports.
fn pasted_ibdiagnet2() -> String {
    let labelled = IBNETDISCOVER
        .replace("[1]\t\"H-", "[1](1/1/1)\t\"H-")
        .replace("[2]\t\"H-", "[2](1/1/2)\t\"H-")
        .replace("[5]\t\"S-", "[5](65)\t\"S-");
    format!(
        "\u{feff}admin@mgmt:~$ cat ibdiagnet2.ibnetdiscover\r\n{}admin@mgmt:~$ \r\n",
        labelled.replace('\n', "\r\n")
    )
}

/// `IBNETDISCOVER`'s fabric as `ibnetdiscover -v -p` prints it (trace
/// line, both ends of every cable, an uncabled port).
const PORTS_REPORT: &str =
    "DR path slid 0; dlid 0; 0 -> new Channel Adapter {0000000000100000} portnum 1 lid 0-0 \"\"\n\
CA     6  2 0x0000000000100002 4x SDR - SW     5  1 0x0000000000200001 ( 'h0' - 's1' )\n\
CA     2  1 0x0000000000100001 4x SDR - SW     4  1 0x0000000000200000 ( 'h0' - 's0' )\n\
CA     8  1 0x0000000000100004 4x SDR - SW     4  2 0x0000000000200000 ( 'h1' - 's0' )\n\
CA    10  1 0x0000000000100006 4x SDR - SW     5  2 0x0000000000200001 ( 'h2' - 's1' )\n\
SW     4  1 0x0000000000200000 4x SDR - CA     2  1 0x0000000000100001 ( 's0' - 'h0' )\n\
SW     4  2 0x0000000000200000 4x SDR - CA     8  1 0x0000000000100004 ( 's0' - 'h1' )\n\
SW     4  5 0x0000000000200000 4x SDR - SW     5  5 0x0000000000200001 ( 's0' - 's1' )\n\
SW     4  6 0x0000000000200000 4x SDR - SW     5  6 0x0000000000200001 ( 's0' - 's1' )\n\
SW     4  8 0x0000000000200000 4x ???                                    's0'\n\
SW     5  1 0x0000000000200001 4x SDR - CA     6  2 0x0000000000100002 ( 's1' - 'h0' )\n\
SW     5  2 0x0000000000200001 4x SDR - CA    10  1 0x0000000000100006 ( 's1' - 'h2' )\n\
SW     5  5 0x0000000000200001 4x SDR - SW     4  5 0x0000000000200000 ( 's1' - 's0' )\n\
SW     5  6 0x0000000000200001 4x SDR - SW     4  6 0x0000000000200000 ( 's1' - 's0' )\n";

/// A real cluster's ports report (see tests/fixtures/README.md).
const PLAFRIM2: &str = include_str!("../../../tests/fixtures/plafrim2.ibnetdiscover-p");

/// The valid inputs themselves read back (so the mutations start from
/// files the readers accept).
#[test]
fn the_valid_inputs_read() {
    let v = valid();
    let df = &v.dragonfly;
    let mut b = netfile::read(&netfile::write(&small_dragonfly())).unwrap();
    b.assign_lids_sequential(0).unwrap();
    b.build().unwrap();
    ibnetdiscover::read(IBNETDISCOVER).unwrap().build().unwrap();
    let d = ibnetdiscover::read_with_notes(&pasted_ibdiagnet2()).unwrap();
    assert_eq!(d.skipped.len(), 2, "{:?}", d.skipped);
    assert_eq!(d.builder.build().unwrap().cas().count(), 3);
    let f = ports_report::read(PORTS_REPORT)
        .unwrap()
        .builder
        .build()
        .unwrap();
    assert_eq!((f.switch_count(), f.cas().count()), (2, 3));
    let r = detect::read(PLAFRIM2, None).unwrap();
    assert_eq!(r.form, detect::Form::PortsReport);
    r.builder.build().unwrap();
    let g = Guid2Lid::read(&guid2lid_of(df)).unwrap();
    let mut b = small_dragonfly();
    g.apply(&mut b).unwrap();
    b.build().unwrap();
    subnet_lst::read(&subnet_lst::write(df), 0)
        .unwrap()
        .build()
        .unwrap();
    lfts::to_lfts(df, &lfts::read(&lfts::write(df, &v.dla)).unwrap()).unwrap();
    let (dumped, routed) = (
        osm_sl2vl::read(df, &osm_sl2vl_dump(df, &v.dla)).unwrap(),
        v.dla.sl2vl.as_ref().unwrap(),
    );
    for s in df.switch_ids() {
        let ports: Vec<_> = df.switch_node(s).links().map(|(p, _)| p).collect();
        for (&i, &o) in ports.iter().flat_map(|i| ports.iter().map(move |o| (i, o))) {
            assert!((0..16).all(|sl| dumped.vl(s, i, o, sl) == routed.vl(s, i, o, sl)));
        }
    }
    assert_eq!(dumped.vls_used(), 2);
    ibdmchk::read_sl2vl(df, &written(|w| ibdmchk::write_sl2vl(df, &v.dla, w))).unwrap();
    ibdmchk::read_path_sl(df, &written(|w| ibdmchk::write_path_sl(df, &v.dla, w))).unwrap();
    switch_sl::read(df, &written(|w| switch_sl::write(df, &v.pssp.path_sl, w))).unwrap();
    let group = a_group(df);
    let back = mcfdbs::to_groups(
        df,
        &mcfdbs::read(&mcfdbs::write(df, std::slice::from_ref(&group))).unwrap(),
        &|_| 0,
    )
    .unwrap();
    assert_eq!(back, vec![group]);
    assert!(!path_select::read(&v.mlid_choice).unwrap().is_empty());
    let settings = Settings::parse(
        &every_option_at_its_default(),
        "all.conf",
        &config_sections(),
    );
    assert!(settings.errors().is_empty(), "{:?}", settings.errors());
    for engine in ENGINES {
        assert!(
            (engine.build)(&settings.section(engine.name)).is_ok(),
            "{}",
            engine.name
        );
    }
}

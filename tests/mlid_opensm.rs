//! `routing_engine mlid` in the distribution's OpenSM on ibsim: on m-port
//! n-trees with the LMC the paper asks for, every LID of every host is
//! reachable, the tables read back from the switches go down as the
//! paper's equation (1) says (computed here from the generator's node
//! names, independently of the plugin's recognition, which reads none) and
//! a host's LIDs climb to as many different roots;
//! no credit loops by `osmroute check` and ibdmchk; the plugin's
//! path-selection file is what an offline run says; a low `lmc` routes the
//! LIDs there are and says which to set; `mlid.raise_lmc` makes OpenSM
//! reassign the LIDs; other fabrics fall back; hosts on two top switches
//! reach each other on VL 1.

mod harness;

use std::time::Duration;

use harness::offline::fabric_with_opensm_lids;
use harness::readback::{ibdmchk_lmc_with, read_back, with_enhanced_port0};
use harness::{check_loop_free, generate_shuffled, osmroute, Sim};
use osmroute_core::analysis::report::analyze;
use osmroute_core::dumps::path_select::{self, PATH_SELECT_FILE};
use osmroute_core::engines::mlid;
use osmroute_core::fabric::{Peer, PortNum, SwitchId};
use osmroute_core::io::guid2lid::{Guid2Lid, LidRange};
use osmroute_core::Fabric;

const ROUTED: &str = "mlid tables configured on all switches";
const UP: &str = "SUBNET UP";
const TIMEOUT: Duration = Duration::from_secs(240);

/// `osmroute gen fattree` with shuffled ports and enhanced switch port 0.
fn fat_tree(m: usize, n: usize) -> String {
    with_enhanced_port0(&generate_shuffled(
        &["fattree", "--m", &m.to_string(), "--n", &n.to_string()],
        4,
    ))
}

/// Digits of a generated node name: "ft-l1-30" -> [3, 0], "ft-p300" -> [3, 0, 0].
fn digits(name: &str) -> Vec<usize> {
    name.rsplit(['-', 'p'])
        .next()
        .unwrap()
        .chars()
        .map(|c| c.to_digit(10).unwrap() as usize)
        .collect()
}

/// Equation (1) of the paper: from switch ⟨w, l⟩ of an FT(2k, n) above
/// host P(p), the one way down towards it (the node name); `None` where
/// the switch lies beside p's subtree and must go up (equation (2) picks
/// the up-port; mlid balances that choice by counters instead, checked
/// by the up-paths' distinctness below).
fn down_next(n: usize, (w, l): (&[usize], usize), p: &[usize]) -> Option<String> {
    let text = |d: &[usize]| d.iter().map(|x| x.to_string()).collect::<String>();
    if w[..l] != p[..l] {
        return None;
    }
    if l == n - 1 {
        return Some(format!("ft-p{}", text(p)));
    }
    let mut child = w[..n - 2].to_vec();
    child.insert(l, p[l]);
    Some(format!("ft-l{}-{}", l + 1, text(&child)))
}

/// Routes FT(m, n) with mlid at `lmc` and checks the tables against the
/// equations, reachability, credit loops and the path-selection file.
fn check_mlid(name: &str, m: usize, n: usize, lmc: u8) {
    let net = fat_tree(m, n);
    let mut sim = Sim::start(name, &net);
    let lmc_line = format!("lmc {lmc}");
    let osm = sim.opensm(&["routing_engine mlid", &lmc_line, "lmc_esp0 TRUE"], &[]);
    osm.wait_for(UP, TIMEOUT);
    assert!(
        osm.log().contains(ROUTED),
        "mlid did not configure the tables"
    );
    osm.assert_no_errors();
    let (fabric, read) = read_back(&sim, &net);

    // Every LID of every host, on every switch: down as equation (1)
    // says above the host, up (one level) beside it; and from a leaf of
    // another pod the host's 2^lmc LIDs climb to 2^lmc different roots
    // (the paper's disjoint up-paths).
    let k = m / 2;
    let name_of = |s: SwitchId, port: PortNum| match fabric.graph().peer(s, port) {
        Some(Peer::Switch { switch, .. }) => fabric.switch_node(switch).desc.clone(),
        Some(Peer::Ca(ca)) => fabric.node(ca.node).desc.clone(),
        None => format!("nothing (port {port})"),
    };
    let level = |s: SwitchId| -> usize { fabric.switch_node(s).desc[4..5].parse().unwrap() };
    let mut checked = 0;
    for (at, port) in fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
    {
        assert_eq!(
            port.lid_count(),
            1 << lmc,
            "{:?}",
            fabric.node(at.node).desc
        );
        let p = digits(&fabric.node(at.node).desc);
        for lid in port.lids() {
            for s in fabric.switch_ids() {
                let sw = &fabric.switch_node(s).desc;
                let l = level(s);
                let next = name_of(s, read.lfts[s].get(lid));
                match down_next(n, (&digits(sw), l), &p) {
                    Some(want) => assert_eq!(next, want, "{sw}, LID {lid}"),
                    None => assert!(
                        next.starts_with(&format!("ft-l{}-", l.wrapping_sub(1))),
                        "{sw}, LID {lid}: not up but to {next}"
                    ),
                }
                checked += 1;
            }
        }
        // From a leaf of another pod, up to the roots.
        let leaf = fabric
            .switch_ids()
            .find(|&s| level(s) == n - 1 && digits(&fabric.switch_node(s).desc)[0] != p[0])
            .unwrap();
        let mut roots = std::collections::BTreeSet::new();
        for lid in port.lids() {
            let mut s = leaf;
            while level(s) > 0 {
                match fabric.graph().peer(s, read.lfts[s].get(lid)) {
                    Some(Peer::Switch { switch, .. }) => s = switch,
                    other => panic!("LID {lid} leaves the tree at {s:?}: {other:?}"),
                }
            }
            roots.insert(s);
        }
        assert_eq!(roots.len(), 1 << lmc, "{:?}", fabric.node(at.node).desc);
    }
    assert_eq!(
        checked,
        2 * k.pow(n as u32) * (1 << lmc) * (2 * n - 1) * k.pow(n as u32 - 1)
    );
    let report = analyze(&fabric, &read);
    assert!(report.delivered(), "{:?}", report.failures);

    // Credit loops, and the EBB with the sources' own DLID choice.
    let report = ibdmchk_lmc_with(&osm.dir, lmc, None);
    assert!(
        report.contains("no credit loops found"),
        "ibdmchk: {report}"
    );
    let hosts = 2 * k.pow(n as u32);
    assert!(
        report.contains(&format!(
            "Scanned:{} CA to CA paths",
            hosts * (hosts - 1) * (1 << lmc)
        )),
        "{report}"
    );
    let lmc_arg = lmc.to_string();
    let check = check_loop_free(
        &osm.dir,
        &["--lmc", &lmc_arg, "--patterns", "200", "--dlid-choice"],
    );
    let ebb = |prefix: &str| harness::first_number_after(&check, prefix);
    let (base, chosen) = (
        ebb("effective bisection bandwidth:"),
        ebb("effective bisection bandwidth with"),
    );
    // Sources' up-paths (the choice) and destinations' (base LIDs,
    // d-mod-k) spread equally over random bisections; the choice must not
    // lose more than noise.
    assert!(
        chosen >= 0.97 * base,
        "the path selection lost against base LIDs: {chosen} vs {base}"
    );

    // The plugin's path selection is the offline one on OpenSM's LIDs.
    let offline_fabric: Fabric = fabric_with_opensm_lids(&osm, &net, &fabric);
    let dumped = path_select::read(&osm.file(PATH_SELECT_FILE)).expect("path-selection file");
    assert_eq!(dumped, mlid::path_selection(&offline_fabric).unwrap());
}

#[test]
fn four_port_three_tree_with_lmc_2() {
    check_mlid("mlid43", 4, 3, 2);
}

#[test]
fn eight_port_three_tree_with_lmc_4() {
    check_mlid("mlid83", 8, 3, 4);
}

/// `osmroute lids` numbers the switches first and the hosts' LMC blocks
/// after them without gaps (what lets the 36-port three-level tree have
/// all its LIDs at lmc 2, where OpenSM's own numbering runs out). OpenSM
/// takes that numbering from its cache as it is, and mlid routes it.
#[test]
fn opensm_keeps_the_numbering_osmroute_lids_writes() {
    let net = fat_tree(4, 3);
    let mut sim = Sim::start("mlidlids", &net);
    let file = sim.dir.join("guid2lid");
    let netfile = sim.netfile.display().to_string();
    let (ok, out) = osmroute(&[
        "lids",
        "--fabric",
        &netfile,
        "--lmc",
        "2",
        "-o",
        &file.display().to_string(),
    ]);
    assert!(ok, "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(sim.next_cache_dir().join("guid2lid"), &text).unwrap();
    let osm = sim.opensm(&["routing_engine mlid", "lmc 2"], &[]);
    osm.wait_for(UP, TIMEOUT);
    assert!(osm.log().contains(ROUTED), "mlid did not route");
    osm.assert_no_errors();
    let (fabric, read) = read_back(&sim, &net);
    let wanted = Guid2Lid::read(&text).unwrap();
    let switches = fabric.switch_ids().count() as u16;
    for (at, port) in fabric.end_ports() {
        let node = fabric.node(at.node);
        let range = wanted.get(port.guid);
        assert_eq!(
            range,
            Some(LidRange {
                base: port.lid.raw(),
                lmc: port.lmc
            }),
            "{}: OpenSM gave LID {} (lmc {})",
            node.desc,
            port.lid,
            port.lmc
        );
        // Switches on 1..=S, every host block above them.
        assert_eq!(
            node.is_switch(),
            port.lid.raw() <= switches,
            "{}",
            node.desc
        );
    }
    let report = analyze(&fabric, &read);
    assert!(report.delivered(), "{:?}", report.failures);
}

#[test]
fn a_low_lmc_routes_what_there_is_and_names_the_lmc_to_set() {
    let net = fat_tree(4, 3);
    let mut sim = Sim::start("mlidlow", &net);
    let osm = sim.opensm(&["routing_engine mlid", "lmc 1"], &[]);
    osm.wait_for(UP, TIMEOUT);
    assert!(osm.log().contains(ROUTED));
    let hint = osm.lines_with("mlid: routing with lmc 1");
    assert!(
        hint.len() == 1 && hint[0].contains("set `lmc 2`"),
        "{hint:#?}"
    );
    let (fabric, read) = read_back(&sim, &net);
    let report = analyze(&fabric, &read);
    assert!(report.delivered() && report.credit_loop.is_none());
}

#[test]
fn raise_lmc_makes_opensm_reassign_the_lids() {
    let net = fat_tree(4, 3);
    let mut sim = Sim::start("mlidraise", &net);
    let osm = sim.opensm_configured(&["routing_engine mlid", "lmc 0"], "mlid.raise_lmc TRUE\n");
    osm.wait_for_n(ROUTED, 2, TIMEOUT);
    osm.wait_for_n(UP, 2, TIMEOUT);
    let raised = osm.lines_with("raising OpenSM's lmc from 0 to 2");
    assert_eq!(raised.len(), 1, "{:#?}", osm.lines_with("osmroute"));
    assert!(
        osm.lines_with("mlid: routing with lmc").len() == 1,
        "only the first pass lacked LIDs"
    );
    osm.assert_no_errors();
    let (fabric, read) = read_back(&sim, &net);
    for (at, port) in fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
    {
        assert_eq!(
            port.lid_count(),
            4,
            "{} has LIDs {}..",
            fabric.node(at.node).desc,
            port.lid
        );
        assert_eq!(port.lid.raw() % 4, 0);
    }
    let report = analyze(&fabric, &read);
    assert!(
        report.delivered() && report.credit_loop.is_none(),
        "{:?}",
        report.failures
    );
}

#[test]
fn a_torus_is_declined_and_opensm_falls_back() {
    let net = generate_shuffled(&["torus", "--dims", "4,4", "--p", "1"], 4);
    let mut sim = Sim::start("mlidtorus", &net);
    let osm = sim.opensm(&["routing_engine mlid,minhop"], &[]);
    osm.wait_for("minhop tables configured on all switches", TIMEOUT);
    let declines = osm.lines_with("ERR osmroute: mlid declines");
    assert_eq!(declines.len(), 1, "{declines:#?}");
    assert!(declines[0].contains("not a fat tree"), "{}", declines[0]);
}

/// mlid on a generated tree other than an ideal m-port n-tree: routed by
/// the plugin under OpenSM at `lmc`, the tables read back from the
/// switches deliver every host route over up*/down* paths without credit
/// loops (osmroute check and ibdmchk), within `max_hops` inter-switch
/// hops, and the plugin's path-selection file is the offline one.
fn check_general_tree(name: &str, family: &[&str], seed: u64, lmc: u8, max_hops: usize) {
    check_tree_net(
        name,
        &with_enhanced_port0(&generate_shuffled(family, seed)),
        lmc,
        max_hops,
    );
}

/// `check_general_tree` on a given net file.
fn check_tree_net(name: &str, net: &str, lmc: u8, max_hops: usize) {
    let net = net.to_string();
    let mut sim = Sim::start(name, &net);
    let lmc_line = format!("lmc {lmc}");
    let osm = sim.opensm(&["routing_engine mlid", &lmc_line, "lmc_esp0 TRUE"], &[]);
    osm.wait_for(UP, TIMEOUT);
    assert!(
        osm.log().contains(ROUTED),
        "mlid did not configure the tables: {:#?}",
        osm.lines_with("osmroute")
    );
    osm.assert_no_errors();
    let (fabric, read) = read_back(&sim, &net);
    let report = analyze(&fabric, &read);
    assert!(report.delivered(), "{:?}", report.failures);
    assert!(report.credit_loop.is_none());
    assert!(report.max_hops() <= max_hops, "{} hops", report.max_hops());
    let ibdm = ibdmchk_lmc_with(&osm.dir, lmc, None);
    assert!(ibdm.contains("no credit loops found"), "ibdmchk: {ibdm}");
    let lmc_arg = lmc.to_string();
    check_loop_free(
        &osm.dir,
        &["--lmc", &lmc_arg, "--patterns", "100", "--dlid-choice"],
    );
    let offline_fabric: Fabric = fabric_with_opensm_lids(&osm, &net, &fabric);
    let dumped = path_select::read(&osm.file(PATH_SELECT_FILE)).expect("path-selection file");
    assert_eq!(dumped, mlid::path_selection(&offline_fabric).unwrap());
}

/// A 3-level PGFT with two cables between each leaf and its parents, a
/// storage host on a top switch and 5 % of the cables cut (seeded).
#[test]
fn pgft_with_parallel_cables_cut_cables_and_a_host_on_top() {
    let family = [
        "pgft",
        "--down",
        "4,4,3",
        "--up",
        "1,2,2",
        "--parallel",
        "1,2,1",
        "--top-hosts",
        "1",
        "--drop-links",
        "0.05",
    ];
    check_general_tree("mlidpgft", &family, 5, 3, 4);
}

/// A leaf–spine with three cables per pair, two management hosts on
/// spines.
#[test]
fn leaf_spine_with_three_cables_per_pair_and_hosts_on_spines() {
    let family = [
        "pgft",
        "--down",
        "6,8",
        "--up",
        "1,4",
        "--parallel",
        "1,3",
        "--top-hosts",
        "2",
    ];
    check_general_tree("mlidls", &family, 2, 4, 2);
}

/// The 4-port 3-tree with a middle switch missing (seeded), and the
/// 8-port 3-tree with 5 % of its cables cut: routed around.
#[test]
fn m_port_n_trees_with_a_missing_switch_or_cut_cables() {
    check_general_tree(
        "mlidnosw",
        &["fattree", "--m", "4", "--n", "3", "--drop-switches", "0.05"],
        3,
        2,
        4,
    );
    check_general_tree(
        "mlidcut",
        &["fattree", "--m", "8", "--n", "3", "--drop-links", "0.05"],
        3,
        4,
        6,
    );
}

/// Two storage hosts on two different top switches of a 3-level PGFT
/// (`gen pgft --top-hosts 2`, seed 3 puts them on two): no up*/down* path
/// joins them, so with `qos TRUE` mlid routes them down, then up, on SL 1,
/// which every port maps to VL 1. The tables read back from the switches
/// deliver every pair and are the offline run's; the switches hold SL 0 →
/// VL 0, SL 1 → VL 1 on every port pair; the plugin's path SLs are the
/// offline ones; `osmroute check` and ibdmchk with the plugin's path-SL
/// and SL2VL files find no credit loop; the path-selection file is the
/// offline one; the SA answers PathRecords with SL 1 between the two
/// (OpenSM asks the plugin's path_sl), SL 0 otherwise.
#[test]
fn hosts_on_two_top_switches_reach_each_other_on_vl_1() {
    use harness::offline::{assert_dumped_path_sls, assert_switches_hold_offline_run};
    use harness::readback::{sl2vl_rows, write_flat_sl2vl};
    let family = [
        "pgft",
        "--down",
        "4,4,3",
        "--up",
        "1,2,2",
        "--parallel",
        "1,2,1",
        "--top-hosts",
        "2",
    ];
    let net = with_enhanced_port0(&generate_shuffled(&family, 3));
    let mut sim = Sim::start("mlidtopvl", &net);
    let osm = sim.opensm(
        &["routing_engine mlid", "lmc 3", "lmc_esp0 TRUE", "qos TRUE"],
        &[],
    );
    osm.wait_for(UP, TIMEOUT);
    assert!(
        osm.log().contains(ROUTED),
        "mlid did not configure the tables: {:#?}",
        osm.lines_with("osmroute")
    );
    osm.assert_no_errors();
    let vl1 = osm.lines_with("routed down, then up, on SL 1 / VL 1");
    assert!(
        vl1.len() == 1 && vl1[0].contains("mlid: 2 host-switch/destination pairs"),
        "{:#?}",
        osm.lines_with("mlid")
    );
    assert!(
        osm.lines_with("stay unrouted").is_empty(),
        "{:#?}",
        osm.lines_with("stay unrouted")
    );

    let (fabric, read) = read_back(&sim, &net);
    let (offline_fabric, offline) =
        assert_switches_hold_offline_run(&osm, &net, (&fabric, &read), "mlid", "");
    assert_dumped_path_sls(&osm, &offline_fabric, &offline);
    let with_vls = osmroute_core::Routing {
        lfts: read.lfts.clone(),
        ..offline.clone()
    };
    let report = analyze(&fabric, &with_vls);
    assert!(report.delivered(), "{:?}", report.failures);
    assert!(report.credit_loop.is_none());
    assert_eq!(
        (report.sls_used.clone(), report.vls_used.clone()),
        (vec![0, 1], vec![0, 1])
    );

    // What the switches hold: SL 0 on VL 0, SL 1 on VL 1, every port pair.
    let mut checked = 0;
    for s in fabric.switch_ids() {
        let node = fabric.switch_node(s);
        let lid = node.port(0).expect("switch port 0").lid.raw();
        for out in (1..node.port_slots() as u8)
            .filter(|&p| node.port(p).is_some_and(|p| p.remote.is_some()))
        {
            for (inp, vls) in sl2vl_rows(&sim, lid, out) {
                if inp != out {
                    assert_eq!(
                        (vls[0], vls[1]),
                        (0, 1),
                        "{} in {inp} out {out}: {vls:?}",
                        node.desc
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(
        checked > fabric.switch_ids().count() * 4,
        "only {checked} SL2VL rows checked"
    );

    check_loop_free(
        &osm.dir,
        &["--lmc", "3", "--patterns", "100", "--dlid-choice"],
    );
    let ibdm = harness::readback::ibdmchk_lmc(&osm.dir, 3);
    assert!(ibdm.contains("no credit loops found"), "ibdmchk: {ibdm}");
    assert!(ibdm.contains("2 SLs, 2 VLs used"), "ibdmchk: {ibdm}");
    let hosts = fabric.cas().count();
    assert!(
        ibdm.contains(&format!(
            "Scanned:{} CA to CA paths",
            hosts * (hosts - 1) * 8
        )),
        "{ibdm}"
    );
    // The same tables with every SL on VL 0 have a credit loop: VL 1 is
    // what keeps the down-then-up paths from closing one.
    write_flat_sl2vl(&osm.dir, "flat-sl2vl.txt");
    let flat = ibdmchk_lmc_with(&osm.dir, 3, Some("flat-sl2vl.txt"));
    assert!(
        flat.contains("2 SLs, 1 VLs used") && flat.contains("Found credit loop on:"),
        "ibdmchk on one VL: {flat}"
    );

    let dumped = path_select::read(&osm.file(PATH_SELECT_FILE)).expect("path-selection file");
    assert_eq!(dumped, mlid::path_selection(&offline_fabric).unwrap());

    // The SA answers PathRecords with the path SLs (OpenSM asks the
    // plugin's path_sl): SL 1 between the two top hosts, SL 0 elsewhere.
    let on_switch = |at: osmroute_core::fabric::PortRef| {
        fabric
            .switch_id(fabric.port(at).unwrap().remote.unwrap().node)
            .unwrap()
    };
    let hosts: Vec<_> = fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
        .map(|(at, p)| (at, p.guid))
        .collect();
    let top: Vec<_> = hosts
        .iter()
        .filter(|(at, _)| fabric.graph().hosts(on_switch(*at)) == 1)
        .collect();
    assert_eq!(
        top.len(),
        2,
        "the two storage hosts are alone on their switches"
    );
    let leaf_host = hosts
        .iter()
        .find(|(at, _)| fabric.graph().hosts(on_switch(*at)) > 1)
        .unwrap();
    for (from, to, want) in [
        (top[0], top[1], 1),
        (top[1], top[0], 1),
        (top[0], leaf_host, 0),
        (leaf_host, top[1], 0),
    ] {
        let out = sim.tool(
            "saquery",
            &[
                "-p",
                "--sgid-to-dgid",
                &format!("{}-{}", gid(from.1), gid(to.1)),
            ],
        );
        // "sl......................0x1"
        let sl = out.lines().find_map(|l| {
            let hex = l
                .trim_start()
                .strip_prefix("sl")?
                .trim_start_matches('.')
                .trim()
                .strip_prefix("0x")?;
            u8::from_str_radix(hex, 16).ok()
        });
        assert_eq!(
            sl,
            Some(want),
            "PathRecord {:?} -> {:?}: {out}",
            from.0,
            to.0
        );
    }
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

/// The `ibnetdiscover` output of a real cluster (tests/fixtures/README.md:
/// the PSMN's X5, 11 Voltaire and Mellanox switches, 89 hosts, parallel
/// cables, hosts on more than one level). Offline, on the LIDs it was
/// discovered with (lmc 0) and at lmc 2: every route arrives, no credit
/// loop, one VL, up*/down* within the tree's 2 × 2 levels. Under ibsim and
/// OpenSM at lmc 2: as `check_general_tree`.
#[test]
fn a_real_clusters_ibnetdiscover_dump_routes() {
    use osmroute_core::io::{ibnetdiscover, netfile};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/x5-voltaire.ibnetdiscover"
    ))
    .expect("the fixture");
    let discovered = ibnetdiscover::read(&text).expect("ibnetdiscover output parses");
    for lmc in [None, Some(2)] {
        let mut b = discovered.clone();
        if let Some(lmc) = lmc {
            b.assign_lids_sequential(lmc).unwrap();
            b.set_lmc(lmc);
        }
        let fabric = b.build().expect("fabric");
        assert_eq!((fabric.switch_count(), fabric.cas().count()), (11, 89));
        let outcome = osmroute_core::pipeline::route_by_name("mlid", &fabric)
            .unwrap_or_else(|e| panic!("lmc {lmc:?}: {e}"));
        let report = analyze(&fabric, &outcome.routing);
        assert!(report.delivered(), "lmc {lmc:?}: {:?}", report.failures);
        assert!(
            report.credit_loop.is_none() && outcome.routing.vls_needed() == 1,
            "lmc {lmc:?}"
        );
        assert!(
            report.max_hops() <= 4,
            "lmc {lmc:?}: {} hops",
            report.max_hops()
        );
    }
    check_tree_net(
        "mlidx5",
        &with_enhanced_port0(&netfile::write(&discovered)),
        2,
        4,
    );
}

/// A director twin as the field cables it: two chassis seen as line and
/// spine chips, bundles of two cables from every leaf, a leaf without
/// hosts, and a SHARP Aggregation Node on every chip. Under OpenSM with
/// qos on, mlid routes every CA, Aggregation Nodes included: the tables
/// read back from the switches are the offline run's, every route
/// arrives, and `osmroute check` and ibdmchk (with the path SLs and
/// SL2VL tables) find no credit loop.
#[test]
fn a_director_twin_with_aggregation_nodes_delivers_every_route() {
    use harness::offline::{assert_dumped_path_sls, assert_switches_hold_offline_run};
    let family = [
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
        "--empty-leaves",
        "1",
        "--aggregation-nodes",
    ];
    let net = with_enhanced_port0(&generate_shuffled(&family, 2));
    let mut sim = Sim::start("mliddir", &net);
    let osm = sim.opensm(
        &["routing_engine mlid", "lmc 1", "lmc_esp0 TRUE", "qos TRUE"],
        &[],
    );
    osm.wait_for(UP, TIMEOUT);
    assert!(
        osm.log().contains(ROUTED),
        "mlid did not configure the tables: {:#?}",
        osm.lines_with("mlid")
    );
    osm.assert_no_errors();
    let (fabric, read) = read_back(&sim, &net);
    let (offline_fabric, offline) =
        assert_switches_hold_offline_run(&osm, &net, (&fabric, &read), "mlid", "");
    assert_dumped_path_sls(&osm, &offline_fabric, &offline);
    let with_vls = osmroute_core::Routing {
        lfts: read.lfts.clone(),
        ..offline.clone()
    };
    let report = analyze(&fabric, &with_vls);
    assert!(report.delivered(), "{:?}", report.failures);
    assert!(report.credit_loop.is_none());
    assert!(report.vls_used.len() <= 2, "{:?}", report.vls_used);
    // 8 leaves (one empty) x 3 hosts + 20 Aggregation Nodes.
    let cas = fabric.cas().count();
    assert_eq!(cas, 7 * 3 + 20);
    check_loop_free(
        &osm.dir,
        &["--lmc", "1", "--patterns", "100", "--dlid-choice"],
    );
    let ibdm = harness::readback::ibdmchk_lmc(&osm.dir, 1);
    assert!(ibdm.contains("no credit loops found"), "ibdmchk: {ibdm}");
    assert!(
        ibdm.contains(&format!("Scanned:{} CA to CA paths", cas * (cas - 1) * 2)),
        "{ibdm}"
    );
    let dumped = path_select::read(&osm.file(PATH_SELECT_FILE)).expect("path-selection file");
    assert_eq!(dumped, mlid::path_selection(&offline_fabric).unwrap());
}

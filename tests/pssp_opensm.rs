//! `routing_engine pssp` in the distribution's OpenSM on ibsim: minimal
//! paths read back from the simulated switches, credit-loop freedom by
//! ibdmchk and by `osmroute check` on the plugin's path-SL and SL2VL files,
//! path SLs as the SA hands them out, LMC multipath, and the refusals.

mod harness;

use std::collections::VecDeque;

use harness::offline::{assert_dumped_path_sls, assert_switches_hold_offline_run};
use harness::readback::{
    ibdmchk, ibdmchk_lmc, read_back, sl2vl_rows, switches, with_enhanced_port0,
};
use harness::{check_loop_free, OpenSm, Sim};
use osmroute_core::analysis::bounds;
use osmroute_core::routing::walk::trace;
use osmroute_core::{Fabric, SwitchId};

const ROUTED: &str = "pssp tables configured on all switches";
const UP: &str = "SUBNET UP";

fn generate(family: &[&str]) -> String {
    harness::generate_shuffled(family, 5)
}

use harness::timeout_for;

/// Switch-to-switch hop distances, by a search of the test's own over the
/// nodes' cables (not the switch graph the engines use).
fn distances(f: &Fabric) -> Vec<Vec<usize>> {
    let n = f.switch_count();
    let next = |s: usize| -> Vec<usize> {
        f.switch_node(SwitchId::new(s))
            .links()
            .filter_map(|(_, r)| f.switch_id(r.node))
            .map(|t| t.idx())
            .collect()
    };
    (0..n)
        .map(|s| {
            let mut d = vec![usize::MAX; n];
            d[s] = 0;
            let mut q = VecDeque::from([s]);
            while let Some(x) = q.pop_front() {
                for y in next(x) {
                    if d[y] == usize::MAX {
                        d[y] = d[x] + 1;
                        q.push_back(y);
                    }
                }
            }
            d
        })
        .collect()
}

/// SL of the path record the SA returns for slid -> dlid.
fn sa_path_sl(sim: &Sim, slid: u16, dlid: u16) -> Option<u8> {
    let out = sim.tool(
        "saquery",
        &["-p", "--src-to-dst", &format!("{slid}:{dlid}")],
    );
    let line = out.lines().find(|l| l.trim_start().starts_with("sl."))?;
    u8::from_str_radix(line.rsplit("0x").next()?.trim(), 16).ok()
}

/// Routes `net` with pssp and checks everything the issue asks of a routed
/// fabric. Returns the run (for more checks) and the read-back routing.
fn check_pssp(name: &str, net: &str, lmc: u8) -> (Sim, OpenSm, Fabric, osmroute_core::Routing) {
    let mut sim = Sim::start(name, net);
    let lmc_line = format!("lmc {lmc}");
    // With LMC, switches get LID ranges too (for ibdmchk's `-l`).
    let osm = sim.opensm(
        &[
            "routing_engine pssp",
            "qos TRUE",
            &lmc_line,
            "lmc_esp0 TRUE",
        ],
        &[],
    );
    osm.wait_for(UP, timeout_for(net));
    assert!(
        osm.log().contains(ROUTED),
        "pssp did not configure the tables"
    );
    osm.assert_no_errors();

    // Minimal paths for every CA port and every LID of every other CA.
    let (fabric, routing) = read_back(&sim, net);
    let dist = distances(&fabric);
    let cas: Vec<_> = fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
        .map(|(at, p)| (at, p.lid, p.lid_count()))
        .collect();
    assert_eq!(cas.len(), fabric.cas().count(), "every CA got a LID");
    for &(src, _, _) in &cas {
        let from = fabric
            .switch_id(fabric.port(src).unwrap().remote.unwrap().node)
            .unwrap()
            .idx();
        for &(dst, base, count) in &cas {
            if dst.node == src.node {
                continue;
            }
            let to = fabric
                .switch_id(fabric.port(dst).unwrap().remote.unwrap().node)
                .unwrap()
                .idx();
            for lid in (0..count as u16).map(|k| base.offset(k)) {
                let path = trace(&fabric, &routing.lfts, src, lid)
                    .unwrap_or_else(|e| panic!("{src:?} -> LID {lid}: {e}"));
                assert_eq!(
                    path.len() - 1,
                    dist[from][to],
                    "{src:?} -> LID {lid} is not minimal"
                );
            }
        }
    }

    // Credit loops: ibdmchk and osmroute check on the plugin's files. A
    // routing on one layer (fat trees) has SL 0 everywhere: no SL2VL or
    // per-switch SL file.
    let layers = osm.dir.join("osmroute-sl2vl.txt").exists();
    let report = if lmc == 0 {
        let mut args = vec!["-c", "osmroute-path-sl.txt"];
        if layers {
            args.extend(["-d", "osmroute-sl2vl.txt"]);
        }
        ibdmchk(&osm.dir, &args)
    } else {
        ibdmchk_lmc(&osm.dir, lmc)
    };
    assert!(
        report.contains("no credit loops found"),
        "ibdmchk: {report}"
    );
    let check = check_loop_free(&osm.dir, &["--patterns", "100", "--lmc", &lmc.to_string()]);
    assert!(
        check.contains("osmroute-switch-sl.txt") == layers,
        "{check}"
    );

    // The SLs OpenSM's SA hands out are the layers in the dump.
    let dump = osm.file("osmroute-path-sl.txt");
    let guid_lid: std::collections::HashMap<u64, u16> = cas
        .iter()
        .map(|&(at, lid, _)| (fabric.node(at.node).guid, lid.raw()))
        .collect();
    let mut sls_seen = std::collections::BTreeSet::new();
    for line in dump.lines().step_by(dump.lines().count() / 12 + 1) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let guid = u64::from_str_radix(w[0].trim_start_matches("0x"), 16).unwrap();
        let (dlid, sl): (u16, u8) = (w[1].parse().unwrap(), w[2].parse().unwrap());
        assert_eq!(
            sa_path_sl(&sim, guid_lid[&guid], dlid),
            Some(sl),
            "SA path record {line}"
        );
        sls_seen.insert(sl);
    }
    assert!(!sls_seen.is_empty());

    // SL2VL on a switch read back: SL i on VL i for every layer in use
    // (SLs 1.. when VL 0 is kept for multicast), and SL 0 on VL 0.
    let sls: Vec<usize> = check
        .lines()
        .find_map(|l| l.strip_prefix("SLs used: ["))
        .and_then(|l| l.split(']').next())
        .expect("SLs line")
        .split(',')
        .map(|w| w.trim().parse().expect("an SL"))
        .collect();
    let (_, lid) = switches(&sim)[0];
    for (_, vls) in sl2vl_rows(&sim, lid, 1) {
        for sl in sls.iter().copied().chain([0]) {
            assert_eq!(vls[sl] as usize, sl, "SL {sl} -> VL {}", vls[sl]);
        }
    }
    (sim, osm, fabric, routing)
}

/// Also: an offline run on the same fabric with OpenSM's LIDs computes the
/// very tables and path SLs the plugin gave OpenSM.
#[test]
fn pssp_on_a_dragonfly_matches_an_offline_run() {
    let net = generate(&["dragonfly", "--a", "4", "--h", "2", "--p", "2"]);
    let (_sim, osm, read_back_fabric, read) = check_pssp("psspdf", &net, 0);
    let (fabric, offline) =
        assert_switches_hold_offline_run(&osm, &net, (&read_back_fabric, &read), "pssp", "");
    assert_dumped_path_sls(&osm, &fabric, &offline);
}

#[test]
fn pssp_on_a_slim_fly() {
    let net = generate(&["slimfly", "--q", "5", "--p", "1"]);
    check_pssp("psspsf", &net, 0);
}

#[test]
fn pssp_on_a_torus_needs_and_gets_several_layers() {
    let net = generate(&["torus", "--dims", "4,4", "--p", "1"]);
    let (_sim, osm, _, _) = check_pssp("pssptorus", &net, 0);
    let layers = osm.lines_with("pssp: deadlock removal needed");
    assert!(
        layers.iter().any(|l| !l.contains("needed 1 virtual")),
        "{layers:?}"
    );
}

/// With LMC 1 every LID is routed, and the two LIDs of a port take
/// different paths where the HyperX offers several.
#[test]
fn pssp_with_lmc_spreads_the_lids_of_a_port() {
    let net = with_enhanced_port0(&generate(&["hyperx", "--dims", "3,3", "--p", "1"]));
    let (_sim, _osm, fabric, routing) = check_pssp("psspLmc", &net, 1);
    let mut differing = 0;
    for (at, p) in fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
    {
        assert_eq!(p.lid_count(), 2, "{at:?}");
        for lft in &routing.lfts {
            if lft.get(p.lid) != lft.get(p.lid.offset(1)) {
                differing += 1;
            }
        }
    }
    assert!(
        differing > fabric.cas().count(),
        "only {differing} (switch, port) entries differ between a port's LIDs"
    );
}

#[test]
fn pssp_declines_without_qos_when_layers_are_needed() {
    let net = generate(&["torus", "--dims", "4,4", "--p", "1"]);
    let mut sim = Sim::start("psspnoqos", &net);
    let osm = sim.opensm(&["routing_engine pssp,minhop", "qos FALSE"], &[]);
    osm.wait_for(
        "minhop tables configured on all switches",
        timeout_for(&net),
    );
    let declines = osm.lines_with("ERR osmroute: pssp declines");
    assert_eq!(declines.len(), 1, "{declines:#?}");
    assert!(
        declines[0].contains("set `qos TRUE`") && declines[0].contains("pssp.best_effort"),
        "{}",
        declines[0]
    );
}

#[test]
fn pssp_max_vls_too_low_declines_naming_the_option() {
    let net = generate(&["torus", "--dims", "4,4", "--p", "1"]);
    let mut sim = Sim::start("psspmaxvl", &net);
    let osm = sim.opensm_configured(
        &["routing_engine pssp,minhop", "qos TRUE"],
        "pssp.max_vls 1\n",
    );
    osm.wait_for(
        "minhop tables configured on all switches",
        timeout_for(&net),
    );
    let declines = osm.lines_with("ERR osmroute: pssp declines");
    assert_eq!(declines.len(), 1, "{declines:#?}");
    assert!(declines[0].contains("pssp.max_vls is 1"), "{}", declines[0]);
}

/// Best effort routes anyway, says so loudly, and ibdmchk confirms the
/// credit loops it warned about.
#[test]
fn pssp_best_effort_routes_with_a_loud_warning() {
    let net = generate(&["torus", "--dims", "4,4", "--p", "1"]);
    let mut sim = Sim::start("psspbest", &net);
    let osm = sim.opensm_configured(
        &["routing_engine pssp", "qos FALSE"],
        "pssp.best_effort TRUE\n",
    );
    osm.wait_for(UP, timeout_for(&net));
    assert!(osm.log().contains(ROUTED));
    let warnings = osm.lines_with("NOT guaranteed deadlock-free");
    assert_eq!(warnings.len(), 1, "{:#?}", osm.lines_with("osmroute"));
    let report = ibdmchk(&osm.dir, &[]);
    assert!(report.contains("Found credit loop"), "ibdmchk: {report}");
}

/// The best cut bound over every leaf and, on a multi-level tree, every
/// pod (what stays connected below the top level).
fn tree_cut_bound(f: &Fabric) -> u64 {
    let sets = [bounds::host_switches(f), bounds::tree_pods(f)].concat();
    sets.iter()
        .map(|set| bounds::cut(f, set, 1))
        .max()
        .unwrap_or(0)
}

/// Routes per inter-switch channel of the read-back tables, and whether
/// every cable of every bundle of parallel cables carries some.
fn every_parallel_cable_used(f: &Fabric, r: &osmroute_core::Routing) -> bool {
    let report = osmroute_core::analysis::report::analyze(f, r);
    let g = f.graph();
    g.ids().all(|s| {
        g.bundles(s)
            .iter()
            .filter(|b| b.len() > 1)
            .flatten()
            .all(|&p| report.channel_load.get(&(s, p)).is_some_and(|&l| l > 0))
    })
}

/// A leaf–spine with 2 cables per leaf–spine pair: the tables OpenSM
/// programs reach the optimal edge forwarding index (the cut bound).
#[test]
fn pssp_on_a_leaf_spine_with_parallel_cables_reaches_the_cut_bound() {
    let net = generate(&["pgft", "--down", "8,6", "--up", "1,4", "--parallel", "1,2"]);
    let (_sim, _osm, fabric, read) = check_pssp("psspls2", &net, 0);
    let efi = osmroute_core::analysis::report::analyze(&fabric, &read).edge_forwarding_index();
    assert_eq!(efi, tree_cut_bound(&fabric));
}

/// A 3-level PGFT with two cables between each leaf and middle switch:
/// the pods' cables are the bottleneck, and the tables reach their cut
/// bound.
#[test]
fn pssp_on_a_three_level_pgft_reaches_the_pod_cut_bound() {
    let net = generate(&[
        "pgft",
        "--down",
        "8,4,4",
        "--up",
        "1,4,4",
        "--parallel",
        "1,2,1",
    ]);
    let (_sim, _osm, fabric, read) = check_pssp("psspp3", &net, 0);
    let efi = osmroute_core::analysis::report::analyze(&fabric, &read).edge_forwarding_index();
    assert_eq!(efi, tree_cut_bound(&fabric));
}

/// A Dragonfly and a Slim Fly with every cable doubled, against the same
/// fabrics with single cables, all routed by the plugin in OpenSM:
/// minimal and deadlock-free (ibdmchk), every parallel cable carries
/// routes, the EFI drops and the EBB does not. On the doubled Slim Fly,
/// with the LIDs OpenSM dealt, the EFI is the average load (the optimum):
/// no cable of a pair carries more than its share.
#[test]
fn pssp_on_a_dragonfly_and_a_slim_fly_with_doubled_cables() {
    for (name, family) in [
        (
            "psspdf",
            &["dragonfly", "--a", "4", "--h", "2", "--p", "2"][..],
        ),
        ("psspsf", &["slimfly", "--q", "5", "--p", "2"][..]),
    ] {
        let quality = |name: &str, family: &[&str]| {
            let net = generate(family);
            let (_sim, _osm, fabric, read) = check_pssp(name, &net, 0);
            let efi =
                osmroute_core::analysis::report::analyze(&fabric, &read).edge_forwarding_index();
            let ebb = osmroute_core::analysis::ebb::effective_bisection(&fabric, &read, 300, 1);
            (
                efi,
                ebb,
                every_parallel_cable_used(&fabric, &read),
                bounds::minimal_routing_average(&fabric),
            )
        };
        let (efi1, ebb1, _, _) = quality(&format!("{name}1"), family);
        let (efi2, ebb2, all_used, average) = quality(
            &format!("{name}2"),
            &[family, &["--parallel-cables", "2"]].concat(),
        );
        assert!(all_used, "{name}: a parallel cable carries nothing");
        assert!(
            efi2 < efi1,
            "{name}: EFI {efi2} with doubled cables, {efi1} with single ones"
        );
        assert!(
            ebb2 >= ebb1,
            "{name}: EBB {ebb2} with doubled cables, {ebb1} with single ones"
        );
        if name == "psspsf" {
            assert_eq!(
                efi2, average,
                "{name}: EFI above the average load with doubled cables"
            );
        }
    }
}

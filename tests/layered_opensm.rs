//! `routing_engine layered` in the distribution's OpenSM on ibsim: with
//! `lmc 2` and `lmc 3` the tables for every LID offset (layer) read back
//! from the simulated switches equal an offline run on OpenSM's LIDs,
//! and ibdmchk and `osmroute check` find no credit loop, with either
//! deadlock scheme; with `lmc 0` one layer and a hint; refusals fall back.

mod harness;

use std::time::Duration;

use harness::offline::{assert_dumped_path_sls, assert_switches_hold_offline_run};
use harness::readback::{
    ibdmchk_lmc, ibdmchk_lmc_with, read_back, sl2vl_rows, with_enhanced_port0, write_flat_sl2vl,
};
use harness::{check_loop_free, generate_shuffled, osmroute, Sim};
use osmroute_core::analysis::bounds;
use osmroute_core::fabric::{Lid, PortNum, SwitchId};
use osmroute_core::{Fabric, Routing};

const ROUTED: &str = "layered tables configured on all switches";
const UP: &str = "SUBNET UP";
const TIMEOUT: Duration = Duration::from_secs(180);

/// A Slim Fly q = 5 (50 switches) with one host per switch, shuffled
/// ports, and switches with enhanced port 0: with `lmc_esp0 TRUE` OpenSM
/// gives their port 0 an LID range too, which ibdmchk's `-l` assumes of
/// every port.
fn slim_fly() -> String {
    with_enhanced_port0(&generate_shuffled(&["slimfly", "--q", "5", "--p", "1"], 3))
}

/// Routes the Slim Fly with `layered` at `lmc` and the given osmroute.conf,
/// then checks the tables, SLs and credit loops. Returns what was routed.
fn check_layered(name: &str, lmc: u8, conf: &str) -> (Sim, Fabric, Routing) {
    let net = slim_fly();
    let mut sim = Sim::start(name, &net);
    let lmc_line = format!("lmc {lmc}");
    // lmc_esp0: switches get 2^LMC LIDs too, as ibdmchk's `-l` expects.
    let osm = sim.opensm_configured(
        &[
            "routing_engine layered",
            "qos TRUE",
            &lmc_line,
            "lmc_esp0 TRUE",
        ],
        conf,
    );
    osm.wait_for(UP, TIMEOUT);
    assert!(
        osm.log().contains(ROUTED),
        "layered did not configure the tables"
    );
    osm.assert_no_errors();

    // Every LID of every port, i.e. every layer, as an offline run says.
    let (read_fabric, read) = read_back(&sim, &net);
    let (fabric, offline) =
        assert_switches_hold_offline_run(&osm, &net, (&read_fabric, &read), "layered", conf);
    assert_dumped_path_sls(&osm, &fabric, &offline);
    // The layers are different routes, not copies of layer 0.
    let ca_lids: Vec<Lid> = fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
        .map(|(_, p)| p.lid)
        .collect();
    let differing = ca_lids
        .iter()
        .filter(|&&lid| {
            read.lfts
                .iter()
                .any(|t| (1..1 << lmc).any(|l: u16| t.get(lid.offset(l)) != t.get(lid)))
        })
        .count();
    assert_eq!(
        differing,
        ca_lids.len(),
        "every port's other LIDs take other paths somewhere"
    );

    // SL2VL as programmed on a switch: what the routing asked for.
    let sl2vl = offline.sl2vl.as_ref().expect("layered programs SL2VL");
    let s = SwitchId::new(0);
    let lid = fabric.switch_node(s).port(0).unwrap().lid.raw();
    let out = fabric.graph().cables(s)[0].port.raw();
    let rows = sl2vl_rows(&sim, lid, out);
    assert!(rows.len() > 1, "smpquery sl2vl gave {rows:?}");
    for (inp, vls) in rows.iter().filter(|(i, _)| *i != 0 && *i != out) {
        let table = sl2vl.switch_table(s, PortNum::new(*inp), PortNum::new(out));
        assert_eq!(&vls[..16], &table[..], "{s} in {inp} out {out}");
    }

    // Credit loops: ibdmchk, and osmroute check on the plugin's files.
    // ibdmchk looks at base LIDs only unless told the LMC.
    let lmc_arg = lmc.to_string();
    let report = ibdmchk_lmc(&osm.dir, lmc);
    assert!(
        report.contains("no credit loops found"),
        "ibdmchk: {report}"
    );
    let paths = 50 * 49 * (1 << lmc);
    assert!(
        report.contains(&format!("Scanned:{paths} CA to CA paths")),
        "ibdmchk: {report}"
    );
    // The check has teeth: the same paths all on VL 0 have credit loops.
    write_flat_sl2vl(&osm.dir, "osmroute-sl2vl.txt.flat");
    let flat_report = ibdmchk_lmc_with(&osm.dir, lmc, Some("osmroute-sl2vl.txt.flat"));
    assert!(
        flat_report.contains("Found credit loop"),
        "ibdmchk on one VL: {flat_report}"
    );
    let dir = osm.dir.to_str().unwrap();
    check_loop_free(&osm.dir, &["--patterns", "100", "--lmc", &lmc_arg]);
    let (ok, layers) = osmroute(&["layers", dir, "--lmc", &lmc_arg]);
    assert!(ok, "{layers}");
    assert!(layers.contains(&format!("{} layers", 1 << lmc)), "{layers}");
    (sim, fabric, offline)
}

#[test]
fn lmc_2_with_virtual_layers() {
    check_layered("layeredvl2", 2, "");
}

#[test]
fn lmc_3_with_virtual_layers() {
    check_layered("layeredvl3", 3, "layered.seed 11\n");
}

#[test]
fn lmc_2_with_hop_positions() {
    let (_sim, _, routing) = check_layered(
        "layeredhop2",
        2,
        "layered.deadlock hop_position\nlayered.max_vls 3\n",
    );
    assert_eq!(routing.vls_needed(), 3);
}

#[test]
fn lmc_3_with_hop_positions() {
    check_layered("layeredhop3", 3, "layered.deadlock hop_position\n");
}

#[test]
fn lmc_0_routes_one_layer_and_says_how_to_get_more() {
    let net = slim_fly();
    let mut sim = Sim::start("layered0", &net);
    let osm = sim.opensm(&["routing_engine layered", "qos TRUE"], &[]);
    osm.wait_for(UP, TIMEOUT);
    assert!(osm.log().contains(ROUTED));
    let hint = osm.lines_with("layered: lmc is 0");
    assert!(
        hint.len() == 1 && hint[0].contains("set `lmc 2`"),
        "{hint:#?}"
    );
}

#[test]
fn hop_positions_without_three_vls_fall_back() {
    let net = slim_fly();
    let mut sim = Sim::start("layeredfew", &net);
    let osm = sim.opensm_configured(
        &["routing_engine layered,minhop", "qos TRUE", "lmc 1"],
        "layered.deadlock hop_position\nlayered.max_vls 2\n",
    );
    osm.wait_for("minhop tables configured on all switches", TIMEOUT);
    let declines = osm.lines_with("ERR osmroute: layered declines");
    assert_eq!(declines.len(), 1, "{declines:#?}");
    assert!(
        declines[0].contains("needs 3 VLs") && declines[0].contains("layered.max_vls is 2"),
        "{}",
        declines[0]
    );
}

/// Trees with parallel cables: a leaf–spine with 4 cables per leaf–spine
/// pair with `lmc 2`, and a 3-level PGFT with 2 cables between leaves and
/// middle switches with `lmc 0`. A leaf–spine has no path one or two hops
/// longer than a minimal one (its paths between two leaves have even
/// lengths, and 4 hops is more than the diameter + 1), so all four layers
/// are minimal; the 3-level tree has 4-hop detours inside a pod, which
/// layers 1..3 take, so only its layer 0 is judged. The tables read back
/// from the simulated switches reach the cut bound computed from the
/// fabric: the routes to every LID of every host outside a leaf (or a
/// pod) over the cables leaving it. No credit loop (ibdmchk and `osmroute
/// check` over every LID offset).
#[test]
fn trees_with_parallel_cables_reach_the_cut_bound() {
    for (name, family, pods, lmc) in [
        (
            "layeredls4",
            &["pgft", "--down", "8,6", "--up", "1,2", "--parallel", "1,4"][..],
            false,
            2u8,
        ),
        (
            "layeredp3",
            &[
                "pgft",
                "--down",
                "8,4,4",
                "--up",
                "1,4,4",
                "--parallel",
                "1,2,1",
            ][..],
            true,
            0,
        ),
    ] {
        let net = with_enhanced_port0(&generate_shuffled(family, 3));
        let mut sim = Sim::start(name, &net);
        let lmc_line = format!("lmc {lmc}");
        let osm = sim.opensm(
            &[
                "routing_engine layered",
                "qos TRUE",
                &lmc_line,
                "lmc_esp0 TRUE",
            ],
            &[],
        );
        osm.wait_for(UP, TIMEOUT);
        assert!(
            osm.log().contains(ROUTED),
            "{name}: layered did not configure the tables"
        );
        osm.assert_no_errors();
        let (fabric, read) = read_back(&sim, &net);
        // Leaves, and on three levels the pods (what stays connected
        // below the top level).
        let mut sets = bounds::host_switches(&fabric);
        if pods {
            sets.extend(bounds::tree_pods(&fabric));
        }
        let bound = sets
            .iter()
            .map(|inside| bounds::cut(&fabric, inside, 1 << lmc))
            .max()
            .unwrap();
        let efi = osmroute_core::analysis::report::analyze(&fabric, &read).edge_forwarding_index();
        assert_eq!(efi, bound, "{name}: every layer");
        let report = ibdmchk_lmc(&osm.dir, lmc);
        assert!(
            report.contains("no credit loops found"),
            "{name}: ibdmchk: {report}"
        );
        check_loop_free(&osm.dir, &["--patterns", "100", "--lmc", &lmc.to_string()]);
    }
}

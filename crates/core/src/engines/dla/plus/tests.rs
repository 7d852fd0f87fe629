use super::super::{route, DlaOptions};
use crate::analysis::report::analyze;
use crate::fabric::{Fabric, SwitchId};
use crate::gen::{self, degrade, dragonfly_plus::Params};
use crate::routing::walk::trace;
use crate::routing::{PathSl, Routing};

fn build(b: crate::FabricBuilder, seed: u64) -> Fabric {
    crate::testkit::TestFabric::of(b).shuffled(seed).build()
}

/// A Dragonfly+ from the generator, ports shuffled.
pub fn intact(params: &Params, seed: u64) -> Fabric {
    build(gen::dragonfly_plus::dragonfly_plus(params).unwrap(), seed)
}

/// With fractions of switches, global and leaf–spine cables gone.
pub fn damaged(params: &Params, damage: (f64, f64, f64), seed: u64) -> Fabric {
    build(damaged_builder(params, damage, seed), seed)
}

/// The builder of `damaged`'s fabric, before ports are shuffled.
pub fn damaged_builder(
    params: &Params,
    (switches, global, local): (f64, f64, f64),
    seed: u64,
) -> crate::FabricBuilder {
    let b = gen::dragonfly_plus::dragonfly_plus(params).unwrap();
    let (mut b, _) = degrade::drop_switches(&b, switches, seed).unwrap();
    for (fraction, want) in [(global, true), (local, false)] {
        degrade::drop_links_where(&mut b, fraction, seed, |x, y| {
            gen::dragonfly_plus::is_global(x, y) == Some(want)
        })
        .unwrap();
    }
    b
}

/// The same fabric (same LIDs) without the cable on port `port` of `s`.
fn without_cable(f: &Fabric, s: SwitchId, port: crate::fabric::PortNum) -> Fabric {
    let mut b = crate::FabricBuilder::new();
    for n in f.nodes() {
        b.add_node(n.kind, n.guid, n.desc.clone(), n.port_slots() as u8 - 1);
    }
    for id in f.node_ids() {
        for (p, peer) in f.node(id).links() {
            let here = crate::fabric::PortRef::new(id, p);
            if here < peer {
                b.connect(here, peer).unwrap();
            }
        }
    }
    for (at, p) in f.end_ports() {
        b.set_lid(at, p.lid, p.lmc).unwrap();
    }
    b.disconnect(crate::fabric::PortRef::new(f.switches()[s], port));
    b.build().unwrap()
}

/// Every CA-to-CA route, as the switches it crosses.
fn each_path(f: &Fabric, r: &Routing, mut visit: impl FnMut(&[SwitchId])) {
    for src in f.cas() {
        let at = crate::fabric::PortRef::new(src, 1);
        if f.port(at).and_then(|p| p.remote).is_none() {
            continue;
        }
        for (dlid, owner) in f.ca_lids().filter(|(_, o)| o.node != src) {
            let hops =
                trace(f, &r.lfts, at, dlid).unwrap_or_else(|e| panic!("{src} -> {owner:?}: {e}"));
            let switches: Vec<SwitchId> = hops.iter().map(|h| h.switch).collect();
            visit(&switches);
        }
    }
}

#[test]
fn intact_paths_are_minimal_on_one_sl_and_one_vl() {
    for (params, an) in [
        (Params::new(4, 4, 4, 2, 9), false),
        (Params::new(5, 3, 3, 4, 4), true),
    ] {
        let params = Params {
            aggregation_nodes: an,
            ..params
        };
        let f = intact(&params, 7);
        let r = route(&f, &DlaOptions::default()).unwrap();
        let report = analyze(&f, &r);
        assert!(report.delivered(), "{:?}", report.failures);
        assert!(report.credit_loop.is_none());
        let g = f.graph();
        let plus = crate::topology::dragonfly_plus::recognise(g).unwrap();
        let mut longest = 0;
        each_path(&f, &r, |path| {
            let (a, z) = (path[0], *path.last().unwrap());
            // Minimal to leaves: as short as the switch graph allows;
            // between leaves at most one global cable. Paths to an
            // Aggregation Node on a spine turn back as little as they can
            // first (module `spines`), at most two hops longer.
            if plus.is_leaf[z.idx()] {
                assert_eq!(path.len() - 1, g.dist(a, z) as usize, "{path:?}");
            } else {
                assert!(path.len() - 1 <= g.dist(a, z) as usize + 2, "{path:?}");
            }
            if plus.is_leaf[a.idx()] && plus.is_leaf[z.idx()] {
                let globals = path
                    .windows(2)
                    .filter(|w| plus.is_global(w[0], w[1]))
                    .count();
                assert!(globals <= 1);
                longest = longest.max(path.len() - 1);
            }
        });
        assert_eq!(longest, 3, "leaf, spine, spine, leaf");
        if !an {
            // Host-to-host paths start and end at leaves: up, across,
            // down, all on SL 0 and VL 0.
            assert_eq!(
                (report.sls_used.as_slice(), report.vls_used.as_slice()),
                (&[0u8][..], &[0u8][..])
            );
        } else {
            // Aggregation Nodes on spines send to groups their spine has no
            // cable to through a middle group or a leaf: VL 1 for those.
            assert!(report.vls_used.len() <= 2);
        }
        // Paths between spines' own LIDs (management) may turn backwards
        // twice (global, global, global): the tables use VLs 1 and 2 for
        // those, never more.
        assert!(
            r.vls_needed() <= 3,
            "aggregation nodes {an}: {} VLs",
            r.vls_needed()
        );
    }
}

#[test]
fn intact_spreads_over_spines_and_cables_of_a_group_pair() {
    // 4 groups, 6 spines x 4 global ports: 8 cables per pair.
    let f = intact(&Params::new(6, 6, 4, 4, 4), 3);
    let r = route(&f, &DlaOptions::default()).unwrap();
    let report = analyze(&f, &r);
    let plus = crate::topology::dragonfly_plus::recognise(f.graph()).unwrap();
    let g = f.graph();
    let (mut global, mut up) = (Vec::new(), Vec::new());
    for s in g.ids() {
        for c in g.cables(s) {
            let load = report.channel_load.get(&(s, c.port)).copied().unwrap_or(0);
            if plus.is_global(s, c.to) {
                global.push(load);
            } else if plus.is_leaf[s.idx()] {
                up.push(load);
            }
        }
    }
    let spread = |v: &[u64]| {
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        (
            *v.iter().max().unwrap() as f64 / mean,
            *v.iter().min().unwrap() as f64 / mean,
        )
    };
    let (hi, lo) = spread(&global);
    assert!(
        hi < 1.35 && lo > 0.65,
        "global cables {hi:.2} / {lo:.2} of the mean"
    );
    let (hi, lo) = spread(&up);
    assert!(
        hi < 1.35 && lo > 0.65,
        "leaf-to-spine cables {hi:.2} / {lo:.2} of the mean"
    );
}

/// Routes `params` with damage on `seeds`, Aggregation Nodes on every
/// third: every route delivered (at most `slack` hops beyond the
/// shortest, to stay within the lanes VLs), shortest and free of credit
/// loops; the most VLs any seed needed.
fn damaged_worst_vls(
    params: &Params,
    damage: (f64, f64, f64),
    seeds: std::ops::RangeInclusive<u64>,
    slack: usize,
) -> u8 {
    damaged_worst_vls_with(params, damage, seeds, slack, |seed| seed % 3 == 0)
}

/// `damaged_worst_vls`, with Aggregation Nodes where `an(seed)`.
fn damaged_worst_vls_with(
    params: &Params,
    damage: (f64, f64, f64),
    seeds: std::ops::RangeInclusive<u64>,
    slack: usize,
    an: impl Fn(u64) -> bool,
) -> u8 {
    let mut worst = 0;
    for seed in seeds {
        let params = Params {
            aggregation_nodes: an(seed),
            ..*params
        };
        let f = damaged(&params, damage, seed);
        if !f.graph().is_connected() {
            continue;
        }
        let r = route(&f, &DlaOptions::default()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let report = analyze(&f, &r);
        assert!(report.delivered(), "seed {seed}: {:?}", report.failures);
        assert!(report.credit_loop.is_none(), "seed {seed}");
        let g = f.graph();
        let plus = crate::topology::dragonfly_plus::recognise(g).unwrap();
        each_path(&f, &r, |path| {
            let (a, z) = (path[0], *path.last().unwrap());
            // Paths to spines (Aggregation Nodes) may take two hops more
            // to turn back less (module `spines`).
            let spine = usize::from(!plus.is_leaf[z.idx()]) * 2;
            assert!(
                path.len() - 1 <= g.dist(a, z) as usize + slack + spine,
                "seed {seed}: {path:?}"
            );
        });
        worst = worst.max(r.vls_needed());
    }
    worst
}

#[test]
fn damaged_niagara_shapes_take_shortest_detours_on_two_vls() {
    // Many cables per pair of groups (4 groups, 18 per pair): 10 % of the
    // global cables, 5 % of the leaf-spine ones and 5 % of the switches
    // gone leave every pair joined, so detours are bounces through a
    // leaf, one backward turn.
    let worst = damaged_worst_vls(&Params::new(6, 6, 3, 6, 4), (0.05, 0.10, 0.05), 1..=8, 0);
    assert_eq!(worst, 2);
}

#[test]
fn damaged_canonical_shapes_are_loop_free_and_shortest() {
    // One or two cables per pair of groups: 10 % of the global cables gone
    // leaves pairs without a cable, whose traffic crosses a middle group;
    // with bounces on top a path may turn back twice, or three times
    // where the middle group is a valley: a path up to two hops longer
    // within three VLs is taken instead (a middle group that is not a
    // valley costs no VL). Every seed, Aggregation Nodes on every third,
    // within three VLs.
    let two = damaged_worst_vls(&Params::new(4, 4, 2, 4, 9), (0.05, 0.10, 0.05), 1..=6, 2);
    assert_eq!(two, 3);
    let one = damaged_worst_vls(&Params::new(4, 4, 4, 2, 9), (0.05, 0.10, 0.05), 1..=6, 2);
    assert_eq!(one, 3);
    // Lighter damage: within three VLs.
    let light = damaged_worst_vls(&Params::new(4, 4, 2, 4, 9), (0.0, 0.05, 0.02), 1..=6, 2);
    assert!(light <= 3, "{light}");
}

/// The damage the issue bounds (10 % of the global cables, 5 % of the
/// leaf–spine cables, 5 % of the switches gone) on the 9-group shapes,
/// with and without Aggregation Nodes, 24 seeds each: never a fourth VL.
/// Paths between two spines that both lost their global cables turn back
/// three times whatever their length (seeds 8, 12, 21 among these); they
/// stay on the top VL past their second turn where that closes no cycle
/// (`lanes::onto_the_top_vl`), which it has on every seed here (a reserve
/// layer, a fourth VL, before).
#[test]
fn damaged_fabrics_within_the_issues_bounds_need_three_vls() {
    for params in [Params::new(4, 4, 4, 2, 9), Params::new(4, 4, 2, 4, 9)] {
        for an in [false, true] {
            let worst = damaged_worst_vls_with(&params, (0.05, 0.10, 0.05), 1..=24, 2, |_| an);
            assert!(
                worst <= 3,
                "{params:?}, aggregation nodes {an}: {worst} VLs"
            );
        }
    }
}

#[test]
fn the_lanes_are_what_keeps_detours_loop_free() {
    // Without the SL2VL tables (every hop on VL 0) damaged fabrics have
    // credit loops: the lanes are doing the work.
    let mut loops = 0;
    for seed in 1..=12 {
        let f = damaged(&Params::new(4, 4, 4, 2, 9), (0.0, 0.10, 0.05), seed);
        let mut r = route(&f, &DlaOptions::default()).unwrap();
        assert!(analyze(&f, &r).credit_loop.is_none());
        r.sl2vl = None;
        r.path_sl = PathSl::Uniform(0);
        loops += usize::from(analyze(&f, &r).credit_loop.is_some());
    }
    assert!(loops > 0);
}

/// What failing every cable of a fabric in turn did (`further_failures`).
struct Failures {
    /// Cables failed and routed again.
    failed: usize,
    /// Failures that left no Dragonfly+ (dla declined).
    declined: usize,
    /// Those whose failure changed more than twice the entries whose
    /// routes crossed the cable.
    over: Vec<String>,
    /// The largest ratio of entries changed to entries crossed.
    worst: f64,
}

/// Fails, one at a time, every global and leaf–spine cable of `f` (each
/// where the rest stays connected) and asserts that the new tables
/// deliver every route without a credit loop.
fn further_failures(f: &Fabric, what: &str) -> Failures {
    let before = route(f, &DlaOptions::default()).unwrap();
    let plus = crate::topology::dragonfly_plus::recognise(f.graph()).unwrap();
    let g = f.graph();
    let mut out = Failures {
        failed: 0,
        declined: 0,
        over: Vec::new(),
        worst: 0.0,
    };
    for s in g.ids() {
        // Each cable once, from its end with the lower (switch, port).
        for c in g
            .cables(s)
            .iter()
            .filter(|c| (s, c.port) < (c.to, c.far_port))
        {
            let broken = without_cable(f, s, c.port);
            if !broken.graph().is_connected() {
                continue;
            }
            // A failure that leaves no Dragonfly+ (on the damaged
            // 9-group fabric of seed 5, spines of one group cabled to
            // each other once the group falls apart) is declined, and
            // `dla,pssp` routes it with pssp: nothing to compare.
            let Ok(after) = route(&broken, &DlaOptions::default()) else {
                out.declined += 1;
                continue;
            };
            out.failed += 1;
            let churn = crate::analysis::churn::churn((f, &before.lfts), (&broken, &after.lfts));
            assert_eq!(churn.cables_lost, 1);
            assert!(churn.crossed > 0, "{what}: {s} port {}", c.port);
            out.worst = out.worst.max(churn.changed as f64 / churn.crossed as f64);
            if churn.changed > 2 * churn.crossed {
                let kind = if plus.is_global(s, c.to) {
                    "global"
                } else {
                    "leaf-spine"
                };
                out.over.push(format!(
                    "{kind} {s} port {}: {} changed, {} crossed",
                    c.port, churn.changed, churn.crossed
                ));
            }
            let report = analyze(&broken, &after);
            assert!(
                report.delivered() && report.credit_loop.is_none(),
                "{what}: without {s} port {}",
                c.port
            );
        }
    }
    out
}

/// `further_failures`, none over the bound; the cables failed. Prints the
/// worst ratio (`--nocapture`).
fn every_failure_moves_at_most_twice_what_crossed_it(f: &Fabric, what: &str) -> usize {
    let Failures {
        failed,
        declined,
        over,
        worst,
    } = further_failures(f, what);
    eprintln!(
        "{what}: {} of {failed} failures over twice what crossed them, worst {worst:.2} \
         ({declined} declined)",
        over.len()
    );
    assert!(
        over.is_empty(),
        "{what}: {} of {failed} failures move more than twice what crossed them: {over:#?}",
        over.len()
    );
    failed
}

/// A Dragonfly+ whose leaf `leaf` of group `group` has no hosts.
fn with_a_hostless_leaf(params: &Params, group: usize, leaf: usize, seed: u64) -> Fabric {
    let b = gen::dragonfly_plus::dragonfly_plus(params).unwrap();
    let prefix = format!("dfp-g{group}-l{leaf}-h");
    let gone: Vec<bool> = b
        .nodes()
        .iter()
        .map(|n| n.desc.starts_with(&prefix))
        .collect();
    build(degrade::without_nodes(&b, &gone).unwrap(), seed)
}

/// Every cable of intact shapes: the 4-group one of 6 spines with 4
/// global ports (8 cables per pair of groups, two parallel cables
/// between some spines), the 9-group one (one cable per pair), a small
/// one with Aggregation Nodes, and the 4-group one with a leaf without
/// hosts. Before homes kept their shares as if lost cables were there
/// (`choice::homes_in_group`), 23 of the 4-group shape's 144 leaf–spine
/// cables moved more than twice what crossed them (seed 5; the worst 248
/// entries against 72).
#[test]
fn every_failed_cable_moves_at_most_twice_what_crossed_it() {
    let an = Params {
        aggregation_nodes: true,
        ..Params::new(5, 3, 3, 4, 4)
    };
    let mut failed = 0;
    for (what, f) in [
        ("6,6,4,4,4 seed 1", intact(&Params::new(6, 6, 4, 4, 4), 1)),
        ("6,6,4,4,4 seed 5", intact(&Params::new(6, 6, 4, 4, 4), 5)),
        ("4,4,4,2,9 seed 1", intact(&Params::new(4, 4, 4, 2, 9), 1)),
        ("5,3,3,4,4 with Aggregation Nodes", intact(&an, 7)),
        (
            "6,6,4,4,4 with a hostless leaf",
            with_a_hostless_leaf(&Params::new(6, 6, 4, 4, 4), 1, 2, 3),
        ),
    ] {
        failed += every_failure_moves_at_most_twice_what_crossed_it(&f, what);
    }
    // Every cable of every shape but the bridges (none here).
    // Every cable of every shape (none is a bridge).
    assert_eq!(failed, 192 + 192 + 180 + 84 + 192);
}

/// The same on fabrics already damaged, where detours are balanced by
/// load (`choice::detours`): a further failure changes the loads the
/// detours of other LIDs meet, which must not move them in cascade. The
/// 9-group shape (one global cable per pair of groups: most leaves are
/// reached by detours) on seeds 1–6, and seed 5 with Aggregation Nodes;
/// the 4-group one on seeds 1 and 2. When each detour LID met the loads
/// of the LIDs routed before it only, seeds 1, 3 and 5 had 1, 2 and 10
/// cables over the bound (the worst 2.57 times), seed 5 with Aggregation
/// Nodes 13; now the worst is 1.66. About 12 s in release.
#[test]
fn a_further_failure_on_a_damaged_fabric_moves_at_most_twice_what_crossed_it() {
    let damage = (0.05, 0.10, 0.05);
    let nine = Params::new(4, 4, 4, 2, 9);
    let mut fabrics: Vec<(Params, u64)> = (1..=6).map(|seed| (nine, seed)).collect();
    let with_an = Params {
        aggregation_nodes: true,
        ..nine
    };
    fabrics.push((with_an, 5));
    fabrics.extend([
        (Params::new(6, 6, 4, 4, 4), 1),
        (Params::new(6, 6, 4, 4, 4), 2),
    ]);
    for (p, seed) in fabrics {
        let f = damaged(&p, damage, seed);
        let an = if p.aggregation_nodes { " with ANs" } else { "" };
        let what = format!(
            "{},{},{},{},{}{an} damaged, seed {seed}",
            p.leaves, p.spines, p.hosts, p.global_ports, p.groups
        );
        every_failure_moves_at_most_twice_what_crossed_it(&f, &what);
    }
}

/// Where leaves reach leaves by detours, each detour switch weighs the
/// routes already on its candidates' paths (`choice::detours`): the
/// busiest channel is no more loaded than with pssp's P-SSSP tables (on
/// all shortest paths, any number of VLs) but for 1 %, and the effective
/// bisection bandwidth within 0.01 of pssp's. Before, the 9-group fabric's
/// seed 1 had 784 routes on its busiest channel, pssp 612.
#[test]
fn damaged_detours_are_balanced_by_load() {
    let (mut dla_sum, mut pssp_sum) = (0, 0);
    for seed in 1..=8 {
        let f = damaged(&Params::new(4, 4, 4, 2, 9), (0.05, 0.10, 0.05), seed);
        if !f.graph().is_connected() {
            continue;
        }
        let dla = route(&f, &DlaOptions::default()).unwrap();
        let pssp = crate::engines::pssp::route(&f, &Default::default()).unwrap();
        let busiest = |r: &Routing| {
            let report = analyze(&f, r);
            assert!(report.delivered() && report.credit_loop.is_none());
            report.channel_load.values().copied().max().unwrap_or(0)
        };
        let (d, p) = (busiest(&dla), busiest(&pssp));
        assert!(
            d * 100 <= p * 101,
            "seed {seed}: busiest channel {d}, pssp {p}"
        );
        (dla_sum, pssp_sum) = (dla_sum + d, pssp_sum + p);
        let ebb = |r| crate::analysis::ebb::effective_bisection(&f, r, 300, 1);
        let (e, q) = (ebb(&dla), ebb(&pssp));
        eprintln!("seed {seed}: busiest channel {d} (pssp {p}), EBB {e:.4} (pssp {q:.4})");
        assert!(e >= q - 0.01, "seed {seed}: EBB {e:.4}, pssp {q:.4}");
    }
    assert!(dla_sum < pssp_sum, "{dla_sum} vs {pssp_sum}");
}

/// A 9-switch two-level cluster (6 leaves of 4 hosts, 3 spines): one
/// group of a Dragonfly+ (a fat tree), and to the Dragonfly recogniser
/// "groups" of 1-2 switches; dla declines it, saying both.
#[test]
fn declines_a_two_level_cluster_naming_why() {
    let tree = gen::pgft::Pgft {
        down: vec![4, 6],
        up: vec![1, 3],
        parallel: vec![1, 1],
    };
    let mut b = gen::pgft::pgft(&tree).unwrap();
    b.assign_lids_sequential(0).unwrap();
    let f = b.build().unwrap();
    assert_eq!(f.switch_count(), 9);
    let err = route(&f, &DlaOptions::default()).unwrap_err().to_string();
    assert!(err.contains("not a Dragonfly: "), "{err}");
    assert!(err.contains("at least two groups of at least 3"), "{err}");
    assert!(
        err.contains("two-level fat tree, not a Dragonfly+"),
        "{err}"
    );
}

/// The matrix's hand-built Dragonfly+ (4 groups of 3 leaves x 2 hosts and
/// 3 spines, spine i of every group cabled to spine i of every other): each
/// leaf's hosts enter it through different spines, the same from every
/// source (their homes), so that no spine → leaf cable carries the routes
/// to both; dla's EBB is then as good as pssp's (measured 0.892 both, dla
/// 0.818 when every source leaf chose its spines alone).
#[test]
fn hosts_of_a_leaf_enter_it_through_different_spines() {
    let mut b = crate::engines::hand_built::dragonfly_plus(4, 3, 3, 2);
    b.assign_lids_sequential(0).unwrap();
    let f = b.build().unwrap();
    let r = route(&f, &DlaOptions::default()).unwrap();
    let report = analyze(&f, &r);
    assert!(report.delivered() && report.credit_loop.is_none());
    // Every CA-to-CA route's last switch hop: per (spine, leaf) cable,
    // which destination hosts it carries.
    let mut into: std::collections::HashMap<
        (SwitchId, SwitchId),
        std::collections::BTreeSet<crate::fabric::Lid>,
    > = Default::default();
    for src in f.cas() {
        let at = crate::fabric::PortRef::new(src, 1);
        for (dlid, owner) in f.ca_lids().filter(|(_, o)| o.node != src) {
            let hops = trace(&f, &r.lfts, at, dlid).unwrap();
            if let [.., a, z] = hops.as_slice() {
                into.entry((a.switch, z.switch)).or_default().insert(dlid);
            }
            let _ = owner;
        }
    }
    assert!(!into.is_empty());
    for (cable, lids) in &into {
        assert_eq!(lids.len(), 1, "{cable:?} carries the routes to {lids:?}");
    }
    let ebb = crate::analysis::ebb::effective_bisection(&f, &r, 200, 1);
    assert!(ebb > 0.88, "{ebb}");
}

/// The SLs follow the kinds of path, not the fabric's size: an intact
/// Dragonfly+ of 9 and one of 17 groups need about as many, few of them,
/// from `dla.sl` on without a gap; host paths stay on the base SL.
#[test]
fn sls_are_few_from_the_base_sl_on_and_do_not_grow_with_the_fabric() {
    let mut counts = Vec::new();
    for (params, base) in [
        (Params::new(4, 4, 4, 2, 9), 0u8),
        (Params::new(4, 4, 4, 4, 17), 3),
    ] {
        let f = intact(&params, 2);
        let options = DlaOptions {
            sl: base,
            ..DlaOptions::default()
        };
        let r = route(&f, &options).unwrap();
        let report = analyze(&f, &r);
        assert!(report.delivered() && report.credit_loop.is_none());
        assert_eq!(report.sls_used, vec![base], "host paths on the base SL");
        let sls = r.path_sl.sls_used();
        let k = sls.len() as u8;
        assert_eq!(sls, (base..base + k).collect::<Vec<_>>());
        assert!(r.vls_needed() <= 3);
        counts.push(sls.len());
    }
    assert!(counts.iter().all(|&n| n <= 9), "{counts:?}");
    assert!(counts[1] <= counts[0] + 2, "{counts:?}");
}

/// The load-aware pass over detours (`choice::detours`) routes again only
/// the LIDs of leaves that some leaf reaches by a detour: none on an
/// intact Dragonfly+ of any shape (so its tables stay as they were, with
/// or without Aggregation Nodes, whose spines reach groups they have no
/// cable to by detours), some once cables are gone.
#[test]
fn only_damaged_fabrics_have_detours_between_leaves() {
    let detours = |f: &Fabric| {
        let plus = crate::topology::dragonfly_plus::recognise(f.graph()).unwrap();
        super::choice::reached_by_detours(f, &super::Roles { plus: &plus }).len()
    };
    for (params, an) in [
        (Params::new(4, 4, 4, 2, 9), false),
        (Params::new(4, 4, 4, 2, 9), true),
        (Params::new(4, 4, 2, 4, 17), true),
        (Params::new(6, 6, 4, 4, 4), false),
    ] {
        let params = Params {
            aggregation_nodes: an,
            ..params
        };
        assert_eq!(detours(&intact(&params, 3)), 0, "{params:?}");
    }
    let f = damaged(&Params::new(4, 4, 4, 2, 9), (0.05, 0.10, 0.05), 1);
    assert!(detours(&f) > 0);
}

/// Where spines reach few groups (one cable per pair of groups, four per
/// spine: the canonical shape, one host per leaf), one intermediate group
/// per extra LID for every source group needs more SLs than there are;
/// chosen by colour, the extra LIDs of LMC 2 still go through
/// intermediate groups, within three VLs, every route delivered and free
/// of credit loops, and a group shift spread over all LIDs gets well over
/// what base LIDs get.
#[test]
fn extra_lids_go_through_intermediate_groups_where_spines_reach_few_groups() {
    let b = gen::dragonfly_plus::dragonfly_plus(&Params::new(8, 8, 1, 4, 33)).unwrap();
    let f = crate::testkit::TestFabric::of(b).shuffled(1).lmc(2).build();
    let plus = crate::topology::dragonfly_plus::recognise(f.graph()).unwrap();
    let roles = super::Roles { plus: &plus };
    let mut minimal = super::choice::forwarding_tables(&f, &roles);
    super::spines::route_to_spines(&f, &roles, &mut minimal);
    let (anyhow, _) = super::valiant::route_extra_lids(&f, &roles, &minimal, false).unwrap();
    let fits =
        super::lanes::assign(&f, &roles, &anyhow, 0).is_ok_and(|l| l.vls <= super::lanes::LANE_VLS);
    assert!(
        !fits,
        "one intermediate per LID fits: the test shows nothing"
    );
    let r = route(&f, &DlaOptions::default()).unwrap();
    let report = analyze(&f, &r);
    assert!(report.delivered(), "{:?}", report.failures);
    assert!(report.credit_loop.is_none());
    assert!(r.vls_needed() <= 3, "{} VLs", r.vls_needed());
    let group = |s: SwitchId| plus.group_of[s.idx()];
    let (mut extra, mut through) = (0, 0);
    for src in f.cas() {
        let at = crate::fabric::PortRef::new(src, 1);
        for (dlid, owner) in f.ca_lids().filter(|(_, o)| o.node != src) {
            if f.port(owner).map(|p| p.lid) == Some(dlid) {
                continue;
            }
            let hops = trace(&f, &r.lfts, at, dlid).unwrap();
            let (a, z) = (hops[0].switch, hops[hops.len() - 1].switch);
            if group(a) == group(z) {
                continue;
            }
            extra += 1;
            through += usize::from(
                hops.iter()
                    .any(|h| group(h.switch) != group(a) && group(h.switch) != group(z)),
            );
        }
    }
    // Most extra LIDs between groups go through a third group (those of
    // a source group that is one of a LID's intermediates stay minimal).
    assert!(through * 10 >= extra * 8, "{through} of {extra}");
    let shift = crate::analysis::group_shift::group_shift(&f, &r).unwrap();
    assert!(shift.spread > 2.0 * shift.minimal, "{shift:?}");
}

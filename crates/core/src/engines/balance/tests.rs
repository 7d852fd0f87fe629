//! Balance on trees, parallel cables and direct networks, for every engine
//! that routes with `TreeBalancer`: the edge forwarding index (EFI) against
//! lower bounds worked out here from the fabric alone, the effective
//! bisection bandwidth against a reference routing built here, and credit
//! loops as `osmroute check` finds them.

use crate::analysis::bounds;
use crate::analysis::ebb::effective_bisection;
use crate::analysis::report::analyze;
use crate::fabric::{Fabric, FabricBuilder, PortNum, SwitchId, VlBudget};
use crate::gen::{self, dragonfly, pgft, slimfly};
use crate::routing::{PathSl, Routing};
use crate::testkit::TestFabric;

fn fabric(builder: FabricBuilder, lmc: u8) -> Fabric {
    TestFabric::of(builder).lmc(lmc).vls(8).build()
}

/// Bound from forced hops: when every minimal path from switch a to
/// switch b goes from x to y, all hosts(a) * hosts(b) routes cross the
/// bundle x -> y, so one of its w cables carries ⌈routes / w⌉ of them
/// (minimal routing only). Path counts on the switch graph, by BFS.
fn forced_bound(f: &Fabric) -> u64 {
    let g = f.graph();
    let n = g.switch_count();
    // paths[a * n + b]: minimal switch-level paths from a to b.
    let mut paths = vec![0u64; n * n];
    for a in g.ids() {
        let row = &mut paths[a.idx() * n..(a.idx() + 1) * n];
        row[a.idx()] = 1;
        let mut by_dist: Vec<SwitchId> = g.ids().collect();
        by_dist.sort_by_key(|&s| g.dist(a, s));
        for &s in &by_dist[1..] {
            row[s.idx()] = g
                .neighbours(s)
                .iter()
                .filter(|&&t| g.dist(a, t) + 1 == g.dist(a, s))
                .map(|t| row[t.idx()])
                .sum();
        }
    }
    let mut forced = vec![0u64; n * n];
    for a in g.ids().filter(|&a| g.hosts(a) > 0) {
        for b in g.ids().filter(|&b| b != a && g.hosts(b) > 0) {
            let (d, all) = (g.dist(a, b), paths[a.idx() * n + b.idx()]);
            for x in g.ids().filter(|&x| g.dist(a, x) < d) {
                for &y in g.neighbours(x) {
                    let through = paths[a.idx() * n + x.idx()] * paths[y.idx() * n + b.idx()];
                    if g.dist(a, x) + 1 + g.dist(y, b) == d && through == all {
                        forced[x.idx() * n + y.idx()] += u64::from(g.hosts(a) * g.hosts(b));
                    }
                }
            }
        }
    }
    g.ids()
        .flat_map(|x| g.neighbours(x).iter().map(move |&y| (x, y)))
        .map(|(x, y)| forced[x.idx() * n + y.idx()].div_ceil(g.bundle(x, y).len() as u64))
        .max()
        .unwrap_or(0)
}

/// The best lower bound on the EFI of minimal routing these give: every
/// switch with hosts as a cut, the extra `sets`, forced hops and the
/// average.
fn efi_bound(f: &Fabric, sets: &[Vec<bool>]) -> u64 {
    bounds::host_switches(f)
        .iter()
        .chain(sets)
        .map(|set| bounds::cut(f, set, 1))
        .chain([forced_bound(f), bounds::minimal_routing_average(f)])
        .max()
        .unwrap_or(0)
}

/// The reference for a leaf–spine tree: destination-mod-k routing as
/// fat-tree routing does it, built here: the k-th host LID goes down
/// through spine k mod spines, on that spine's cable (k / spines) mod w to
/// the leaf; every leaf sends it up on the cable of the same index.
fn leaf_spine_reference(f: &Fabric) -> Routing {
    let g = f.graph();
    let spines: Vec<SwitchId> = g.ids().filter(|&s| g.hosts(s) == 0).collect();
    let mut lfts = Routing::empty_lfts(f);
    let lids: Vec<_> = f
        .end_ports()
        .filter(|(at, _)| !f.node(at.node).is_switch())
        .map(|(at, p)| (at, p.lid))
        .collect();
    for (k, &(at, lid)) in lids.iter().enumerate() {
        let leaf = f.lid_switch(lid).unwrap();
        let spine = spines[k % spines.len()];
        let pick = |ports: &[PortNum]| ports[(k / spines.len()) % ports.len()];
        for s in g.ids() {
            let out = if s == leaf {
                f.delivery_port(at)
            } else if s == spine || g.hosts(s) == 0 {
                pick(g.bundle(s, leaf))
            } else {
                pick(g.bundle(s, spine))
            };
            lfts[s].set(lid, out);
        }
    }
    Routing {
        engine: "d-mod-k".into(),
        lfts,
        sl2vl: None,
        path_sl: PathSl::Uniform(0),
    }
}

/// Every engine that balances with `TreeBalancer`, on one fabric: its
/// routing, delivered and free of credit loops, with its EFI and EBB.
fn balanced_routings(f: &Fabric, with_sfmin: bool) -> Vec<(&'static str, Routing, u64, f64)> {
    let mut names = vec!["pssp", "layered"];
    if with_sfmin {
        names.push("sfmin");
    }
    names
        .into_iter()
        .map(|name| {
            let r = crate::pipeline::route_by_name(name, f).unwrap().routing;
            let report = analyze(f, &r);
            assert!(report.delivered(), "{name}: {:?}", report.failures);
            assert!(
                report.credit_loop.is_none(),
                "{name}: credit loop {:?}",
                report.credit_loop
            );
            let ebb = effective_bisection(f, &r, 300, 1);
            (name, r, report.edge_forwarding_index(), ebb)
        })
        .collect()
}

fn leaf_spine_reaches_the_optimum(leaves: usize, hosts: usize, spines: usize, width: usize) {
    let b = pgft::pgft(&pgft::Pgft::leaf_spine(leaves, hosts, spines, width)).unwrap();
    let f = fabric(gen::shuffle_ports(&b, 7), 0);
    let bound = efi_bound(&f, &[]);
    let reference = leaf_spine_reference(&f);
    let (reference_efi, reference_ebb) = (
        analyze(&f, &reference).edge_forwarding_index(),
        effective_bisection(&f, &reference, 300, 1),
    );
    assert_eq!(
        reference_efi, bound,
        "the bound is reached by d-mod-k, so it is the optimum"
    );
    for (name, _, efi, ebb) in balanced_routings(&f, true) {
        assert_eq!(
            efi, bound,
            "{name} on {leaves} leaves x {hosts} hosts, {spines} spines x {width} cables"
        );
        assert!(
            ebb >= reference_ebb - 0.01,
            "{name}: EBB {ebb} below d-mod-k's {reference_ebb}"
        );
    }
}

#[test]
fn leaf_spine_with_two_parallel_cables_reaches_the_optimal_efi() {
    leaf_spine_reaches_the_optimum(8, 8, 4, 2);
}

#[test]
fn leaf_spine_with_four_parallel_cables_reaches_the_optimal_efi() {
    leaf_spine_reaches_the_optimum(8, 8, 2, 4);
}

#[test]
fn leaf_spine_with_single_cables_reaches_the_optimal_efi() {
    leaf_spine_reaches_the_optimum(6, 6, 6, 1);
}

/// The fabric with its switches' GUIDs permuted (seeded): another
/// numbering of the same switches, as another SM or net file gives.
fn renumber_switches(b: &FabricBuilder, seed: u64) -> FabricBuilder {
    let mut guids: Vec<u64> = b
        .nodes()
        .iter()
        .filter(|n| n.is_switch())
        .map(|n| n.guid)
        .collect();
    crate::rng::Rng::new(seed).shuffle(&mut guids);
    let mut next = guids.into_iter();
    let mut out = FabricBuilder::new();
    for n in b.nodes() {
        let guid = if n.is_switch() {
            next.next().unwrap()
        } else {
            n.guid
        };
        out.add_node(n.kind, guid, n.desc.clone(), (n.port_slots() - 1) as u8);
    }
    for (id, n) in crate::fabric::NodeId::range(b.node_count()).zip(b.nodes()) {
        for (port, r) in n.links() {
            let a = crate::fabric::PortRef::new(id, port.raw());
            if a < r {
                out.connect(a, r).unwrap();
            }
        }
    }
    out
}

/// 3-level PGFTs with parallel cables (between leaves and middle
/// switches, and between middle and top switches too), under two switch
/// numberings: the EFI equals the best of the leaf and pod cut bounds,
/// which is the optimum here since the pods' cables are the bottleneck
/// (checked). (EBB against OpenSM's engines: `.ci/bench-pssp`.)
#[test]
fn three_level_pgfts_with_parallel_cables_reach_the_pod_cut_bound() {
    let trees = [
        pgft::Pgft {
            down: vec![8, 4, 4],
            up: vec![1, 4, 4],
            parallel: vec![1, 2, 1],
        },
        pgft::Pgft {
            down: vec![6, 4, 3],
            up: vec![1, 3, 2],
            parallel: vec![1, 2, 2],
        },
    ];
    for (k, p3) in trees.iter().enumerate() {
        for numbering in [0, 11] {
            let b = gen::shuffle_ports(&pgft::pgft(p3).unwrap(), 7);
            let b = if numbering == 0 {
                b
            } else {
                renumber_switches(&b, numbering)
            };
            let f = fabric(b, 0);
            let pods = bounds::tree_pods(&f);
            let leaf_bound = efi_bound(&f, &[]);
            let bound = efi_bound(&f, &pods);
            assert!(
                bound > leaf_bound,
                "tree {k}: the pods' cables are the bottleneck: {bound} vs {leaf_bound}"
            );
            for (name, _, efi, _) in balanced_routings(&f, false) {
                assert_eq!(efi, bound, "{name} on tree {k}, numbering {numbering}");
            }
        }
    }
}

/// Doubling cables must not cost bandwidth and must spread over both:
/// a Dragonfly with parallel global cables and a Slim Fly with doubled
/// cables against the same fabrics with single cables, and the EFI
/// against the lower bound. On the doubled Slim Fly that bound is the
/// average load, which every engine must reach: no cable of a bundle
/// may carry more than its share (`balance::bundles`). On the Dragonfly
/// minimal routing's optimum is not known.
#[test]
fn dragonfly_and_slim_fly_with_parallel_cables() {
    let df = dragonfly::dragonfly(&dragonfly::Params::new(4, 2, 2)).unwrap();
    let df2 =
        gen::parallel_cables(&df, 2, |x, y| dragonfly::is_global(x, y) == Some(true)).unwrap();
    let sf = slimfly::slimfly(5, 4).unwrap();
    let sf2 = gen::parallel_cables(&sf, 2, |_, _| true).unwrap();
    for (name, single, double, sfmin) in
        [("dragonfly", df, df2, false), ("slim fly", sf, sf2, true)]
    {
        let single = fabric(gen::shuffle_ports(&single, 7), 0);
        let double = fabric(gen::shuffle_ports(&double, 7), 0);
        let bound = efi_bound(&double, &[]);
        let before = balanced_routings(&single, sfmin);
        for ((engine, _, efi, ebb), (_, _, efi1, ebb1)) in
            balanced_routings(&double, sfmin).into_iter().zip(before)
        {
            assert!(
                efi >= bound,
                "{name} {engine}: {efi} below a lower bound {bound}"
            );
            assert!(
                efi < efi1,
                "{name} {engine}: EFI {efi} with doubled cables, {efi1} with single ones"
            );
            assert!(
                efi <= 2 * bound,
                "{name} {engine}: EFI {efi}, bound {bound}"
            );
            if name == "slim fly" {
                assert_eq!(efi, bound, "{name} {engine}: EFI above the average load");
            }
            assert!(
                ebb >= ebb1,
                "{name} {engine}: EBB {ebb} with doubled cables, {ebb1} with single ones"
            );
        }
    }
}

/// The fabric with LIDs dealt to its ports in a seeded random order, as an
/// SM's discovery order may deal them: a switch's hosts need not have
/// consecutive LIDs, nor LIDs of both parities.
fn fabric_with_scattered_lids(builder: FabricBuilder, seed: u64) -> Fabric {
    let mut b = builder;
    let mut ports = b.end_ports();
    crate::rng::Rng::new(seed).shuffle(&mut ports);
    for (k, at) in ports.into_iter().enumerate() {
        b.set_lid(at, crate::fabric::Lid::from_raw(k as u16 + 1), 0)
            .unwrap();
    }
    b.set_vl_budget(VlBudget {
        data_vls: 8,
        limited_by: "the test offers 8".into(),
        ..VlBudget::default()
    });
    b.build().unwrap()
}

fn doubled_slim_fly() -> FabricBuilder {
    gen::shuffle_ports(
        &gen::parallel_cables(&slimfly::slimfly(5, 4).unwrap(), 2, |_, _| true).unwrap(),
        7,
    )
}

/// sfmin's label routes pick a bundle by the algebra and a cable by the
/// LID's number; with LIDs as an SM deals them that put whole bundles'
/// traffic on one cable (EFI 208, twice the average). Every engine must
/// reach the average load whatever the numbering.
#[test]
fn doubled_slim_fly_cables_are_even_whatever_the_lid_numbers() {
    for seed in [1, 2, 3] {
        let f = fabric_with_scattered_lids(doubled_slim_fly(), seed);
        let bound = efi_bound(&f, &[]);
        assert_eq!(
            bound,
            bounds::minimal_routing_average(&f),
            "the average is the bound here"
        );
        for (name, _, efi, _) in balanced_routings(&f, true) {
            assert_eq!(efi, bound, "{name}, LIDs dealt with seed {seed}");
        }
    }
}

/// The spreading moves LIDs between the cables of one bundle and nowhere
/// else: every LID keeps its next switch everywhere, and tables with
/// every LID piled on the first cable of its bundle come out even.
#[test]
fn spreading_moves_lids_only_between_a_bundles_cables() {
    let f = fabric(doubled_slim_fly(), 0);
    let g = f.graph();
    let lids: Vec<crate::fabric::Lid> = f.lids().map(|(lid, _)| lid).collect();
    let next_switches = |lfts: &[crate::routing::Lft]| -> Vec<Option<SwitchId>> {
        g.ids()
            .flat_map(|s| {
                lids.iter()
                    .map(move |&lid| g.switch_behind(s, lfts[s.idx()].get(lid)))
            })
            .collect()
    };
    let efi = |lfts: &[crate::routing::Lft]| {
        let r = Routing {
            engine: "test".into(),
            lfts: lfts.to_vec(),
            sl2vl: None,
            path_sl: PathSl::Uniform(0),
        };
        analyze(&f, &r).edge_forwarding_index()
    };
    let mut lfts = crate::engines::pssp::balanced_minimal(&f, 0, "test").lfts;
    let paths = next_switches(&lfts);
    for s in g.ids() {
        for &lid in &lids {
            if let Some(to) = g.switch_behind(s, lfts[s.idx()].get(lid)) {
                lfts[s.idx()].set(lid, g.bundle(s, to)[0]);
            }
        }
    }
    let bound = bounds::minimal_routing_average(&f);
    let piled = efi(&lfts);
    assert!(
        piled > bound,
        "piled on one cable of each pair: EFI {piled}, average {bound}"
    );
    let mut spreader = super::BundleSpreader::new(g);
    spreader.spread(&f, &mut lfts, &lids);
    assert_eq!(next_switches(&lfts), paths, "the spreading changed a path");
    assert_eq!(efi(&lfts), bound);
    assert_eq!(
        spreader.edge_forwarding_index(),
        bound,
        "the spreader's own count"
    );
}

use super::lines::ring_step;
use super::*;
use crate::analysis::report::analyze;
use crate::fabric::{Lid, VlBudget};
use crate::gen;

fn fabric(b: crate::FabricBuilder) -> Fabric {
    crate::testkit::TestFabric::of(b).shuffled(4).build()
}

fn config(orders: u8) -> HxdorOptions {
    HxdorOptions { orders }
}

#[test]
fn orders_are_a_latin_square() {
    let o = orders(4, 4);
    for pos in 0..4 {
        let mut column: Vec<usize> = o.iter().map(|r| r[pos]).collect();
        column.sort_unstable();
        assert_eq!(column, vec![0, 1, 2, 3]);
    }
}

#[test]
fn hyperx_and_hypercube_route_minimally_without_loops() {
    for (b, dims) in [
        (gen::hyperx::hyperx(&[4, 4, 4], &[2, 1, 1], 2).unwrap(), 3),
        (gen::hyperx::hypercube(6, 1, 2).unwrap(), 6),
    ] {
        let f = fabric(b);
        for orders in [1, 0] {
            let r = route(&f, &config(orders)).unwrap();
            let report = analyze(&f, &r);
            assert!(report.delivered(), "{:?}", report.failures);
            assert!(
                report.max_hops() <= dims,
                "{} hops in {dims}-D",
                report.max_hops()
            );
            assert!(report.credit_loop.is_none(), "orders {orders}");
            // Every order on its own VL (8 offered): min(dims, 8).
            assert_eq!(
                r.vls_needed() as usize,
                if orders == 1 { 1 } else { dims.min(8) }
            );
        }
    }
}

#[test]
fn mixed_orders_on_one_vl_would_have_loops() {
    let f = fabric(gen::hyperx::hyperx(&[3, 3, 3], &[1, 1, 1], 3).unwrap());
    let r = route(&f, &config(0)).unwrap();
    assert_eq!(r.vls_needed(), 3);
    let flat = Routing { sl2vl: None, ..r };
    assert!(
        analyze(&f, &flat).credit_loop.is_some(),
        "the check must be able to fail"
    );
}

#[test]
fn tori_route_minimally_on_datelines_without_loops() {
    // Rings of 5 and more take datelines; the ring of 4 maps as two
    // binary dimensions, the ring of 3 as a clique. Mixed DOR: orders
    // up to the dimensions, 8 VLs / 2 and 16 SLs / 2^rings.
    for (dims, widths, mixed_vls) in [
        (vec![5, 5], vec![1, 1], 2 * 2),
        (vec![6, 5, 7], vec![1, 2, 1], 2 * 2),
        (vec![5, 4, 3, 6], vec![1, 1, 1, 1], 2 * 4),
        (vec![5, 5, 5, 5], vec![1, 1, 1, 1], 2),
    ] {
        let f = fabric(gen::torus::torus(&dims, &widths, 2).unwrap());
        let diameter: usize = dims.iter().map(|k| k / 2).sum();
        for orders in [1, 0] {
            let r = route(&f, &config(orders)).unwrap_or_else(|e| panic!("{dims:?}: {e}"));
            let report = analyze(&f, &r);
            assert!(report.delivered(), "{dims:?}: {:?}", report.failures);
            assert_eq!(report.max_hops(), diameter, "{dims:?}: not minimal");
            assert!(report.credit_loop.is_none(), "{dims:?} orders {orders}");
            assert!(
                r.path_sl.sls_used().len() > 1,
                "{dims:?}: datelines must show in the SLs"
            );
            assert_eq!(
                r.vls_needed(),
                if orders == 1 { 2 } else { mixed_vls },
                "{dims:?} orders {orders}"
            );
            if orders == 1 {
                // Without the dateline VL the rings are credit loops.
                let flat = Routing { sl2vl: None, ..r };
                assert!(
                    analyze(&f, &flat).credit_loop.is_some(),
                    "{dims:?}: the check must be able to fail"
                );
            }
        }
    }
}

#[test]
fn ring_steps_go_the_short_way_and_know_their_dateline() {
    assert_eq!(ring_step(1, 3, 5, Lid::from_raw(0)), (2, false));
    assert_eq!(ring_step(4, 1, 5, Lid::from_raw(0)), (0, true));
    assert_eq!(ring_step(1, 4, 5, Lid::from_raw(0)), (0, true));
    assert_eq!(ring_step(3, 1, 5, Lid::from_raw(0)), (2, false));
    // A half-way tie on a ring of 6: even LIDs up, odd LIDs down.
    assert_eq!(ring_step(4, 1, 6, Lid::from_raw(2)), (5, true));
    assert_eq!(ring_step(4, 1, 6, Lid::from_raw(3)), (3, false));
}

/// `b` with a fraction of its switches and then of its cables gone.
fn damaged(b: crate::FabricBuilder, switches: f64, links: f64, seed: u64) -> Fabric {
    let (mut b, _) = gen::degrade::drop_switches(&b, switches, seed).unwrap();
    gen::degrade::drop_links(&mut b, links, seed).unwrap();
    fabric(b)
}

/// Routes a damaged grid and checks delivery, credit loops and the VL
/// bound; returns the routing.
fn route_damaged(f: &Fabric, what: &str, intact_vls: u8) -> Routing {
    let r = route(f, &HxdorOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let report = analyze(f, &r);
    assert!(report.delivered(), "{what}: {:?}", report.failures);
    assert!(report.credit_loop.is_none(), "{what}: credit loop");
    assert!(
        r.vls_needed() <= intact_vls.max(1) + 1,
        "{what}: {} VLs, the intact grid {intact_vls}",
        r.vls_needed()
    );
    r
}

#[test]
fn damaged_flatflies_and_hypercubes_route_without_loops_up_to_the_mappings_tolerance() {
    // (generator, VLs of the intact grid, damage levels: switches, links).
    let hyperx = || gen::hyperx::hyperx(&[4, 4, 4], &[1, 1, 1], 2).unwrap();
    let cube = || gen::hyperx::hypercube(6, 1, 2).unwrap();
    let mut detoured = 0;
    for (name, make, intact_vls) in [
        (
            "hyperx 4x4x4",
            &hyperx as &dyn Fn() -> crate::FabricBuilder,
            3,
        ),
        ("hypercube 6", &cube, 6),
    ] {
        let levels: &[(f64, f64)] = if name.starts_with("hyperx") {
            &[
                (0.0, 0.02),
                (0.0, 0.05),
                (0.0, 0.15),
                (0.05, 0.05),
                (0.20, 0.15),
            ]
        } else {
            &[
                (0.0, 0.02),
                (0.0, 0.05),
                (0.0, 0.10),
                (0.05, 0.05),
                (0.15, 0.10),
            ]
        };
        for &(switches, links) in levels {
            for seed in 1..=2 {
                let what = format!("{name} -{switches} switches -{links} links seed {seed}");
                let f = damaged(make(), switches, links, seed);
                let r = route_damaged(&f, &what, intact_vls);
                // Detours through other dimensions take an order's VL,
                // so no more VLs than the complete grid.
                assert!(
                    r.vls_needed() <= intact_vls,
                    "{what}: {} VLs",
                    r.vls_needed()
                );
                if r.path_sl
                    .sls_used()
                    .iter()
                    .any(|&sl| sl as usize >= r.vls_needed() as usize - 1)
                {
                    detoured += 1;
                }
            }
        }
    }
    assert!(
        detoured > 0,
        "some damage must need detours through other dimensions"
    );
}

#[test]
fn a_clique_missing_cables_detours_inside_its_dimension_when_one_vl_is_all_there_is() {
    // A 1-D FlatFly (one clique of 6) missing two cables, on one VL:
    // no room for the detour VL, so the two switches of a dead cable
    // reach each other through a third, inside the dimension. With
    // 8 VLs the same pairs detour on a VL of their own.
    let mut b = gen::hyperx::hyperx(&[6], &[1], 1).unwrap();
    gen::degrade::drop_links(&mut b, 0.14, 3).unwrap();
    let mut one_vl = gen::shuffle_ports(&b, 4);
    one_vl.assign_lids_sequential(0).unwrap();
    one_vl.set_vl_budget(VlBudget {
        data_vls: 1,
        limited_by: "the test offers 1".into(),
        ..VlBudget::default()
    });
    let f = one_vl.build().unwrap();
    let r = route_damaged(&f, "K6 minus 2 cables on 1 VL", 1);
    assert_eq!(r.vls_needed(), 1);
    assert_eq!(analyze(&f, &r).max_hops(), 2);
    let f = fabric(b);
    let r = route_damaged(&f, "K6 minus 2 cables", 1);
    assert_eq!(r.vls_needed(), 2);
    assert_eq!(analyze(&f, &r).max_hops(), 2);
}

#[test]
fn damaged_tori_keep_their_datelines_without_loops() {
    // On a 5 × 5 a switch and a cable gone can leave too few switches
    // to tell a ring's two slabs from a broken square (topology::grid):
    // switches go on the 3-D torus only.
    let cables = [(0.0, 0.01, 1), (0.0, 0.03, 2), (0.0, 0.05, 3)];
    let switches = [
        (0.0, 0.01, 1),
        (0.0, 0.05, 3),
        (0.01, 0.0, 1),
        (0.02, 0.0, 2),
        (0.02, 0.02, 4),
    ];
    for (dims, levels) in [(vec![5, 5], &cables[..]), (vec![6, 5, 7], &switches[..])] {
        let intact_vls = 4;
        let widths = vec![1; dims.len()];
        let make = || gen::torus::torus(&dims, &widths, 2).unwrap();
        for &(switches, links, seed) in levels {
            let what = format!("torus {dims:?} -{switches} switches -{links} links seed {seed}");
            let f = damaged(make(), switches, links, seed);
            let r = route_damaged(&f, &what, intact_vls);
            assert!(r.vls_needed() <= 4, "{what}: {} VLs", r.vls_needed());
            // Intact rings still cross their datelines on the second VL.
            let sls = r.path_sl.sls_used();
            assert!(
                sls.iter().any(|&sl| sl % 4 != 0),
                "{what}: no dateline bit in {sls:?}"
            );
        }
    }
    // A single cut cable: its ring is travelled the way round that is
    // left, with no detour VL (2 orders × 2 VLs, as intact).
    let mut b = gen::torus::torus(&[5, 5], &[1, 1], 1).unwrap();
    gen::degrade::drop_links(&mut b, 0.02, 1).unwrap();
    let f = fabric(b);
    let r = route_damaged(&f, "5x5 minus a cable", 4);
    assert_eq!(r.vls_needed(), 4);
    let flat = Routing { sl2vl: None, ..r };
    assert!(
        analyze(&f, &flat).credit_loop.is_some(),
        "the check must be able to fail"
    );
}

#[test]
fn declines_what_it_cannot_route() {
    let five_rings = fabric(gen::torus::torus(&[5, 5, 5, 5, 5], &[1, 1, 1, 1, 1], 1).unwrap());
    let e = route(&five_rings, &HxdorOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("5-ring torus needs a dateline bit per ring"),
        "{e}"
    );
    let sf = fabric(gen::slimfly::slimfly(5, 1).unwrap());
    let e = route(&sf, &HxdorOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("hxdor declines"), "{e}");
}

use super::*;
use crate::analysis::report::analyze;
use crate::gen;
use crate::testkit::TestFabric;

fn fabric(b: crate::FabricBuilder, vls: u8) -> Fabric {
    TestFabric::of(b).shuffled(2).vls(vls).build()
}

#[test]
fn slim_flies_route_minimally_on_two_vls_without_loops() {
    for q in [5, 7, 9] {
        let f = fabric(gen::slimfly::slimfly(q, 2).unwrap(), 8);
        let r = route(&f, &SfminOptions::default()).unwrap();
        let report = analyze(&f, &r);
        assert!(report.delivered(), "q={q}: {:?}", report.failures);
        assert!(report.max_hops() <= 2);
        assert_eq!(r.vls_needed(), 2);
        assert!(report.credit_loop.is_none(), "q={q}");
        // The routes are the label algebra's.
        let labels = crate::topology::slimfly::recover_labels(f.graph()).unwrap();
        assert_eq!(r.lfts, label_routes(&f, &labels).unwrap(), "q={q}");
        // The same paths on one VL do have credit loops.
        let flat = Routing { sl2vl: None, ..r };
        assert!(
            analyze(&f, &flat).credit_loop.is_some(),
            "q={q}: the check must be able to fail"
        );
    }
}

#[test]
fn other_fabrics_are_declined_even_of_diameter_two() {
    // Diameter 2, but no Slim Fly: a 4 × 4 HyperX, a leaf-spine, and
    // a Dragonfly+.
    for (name, b, reason) in [
        (
            "hyperx 4x4",
            gen::hyperx::hyperx(&[4, 4], &[1, 1], 2).unwrap(),
            "not a Slim Fly",
        ),
        (
            "leaf-spine",
            gen::pgft::pgft(&gen::pgft::Pgft::leaf_spine(8, 4, 4, 2)).unwrap(),
            "not a Slim Fly",
        ),
        (
            "dragonfly+",
            crate::engines::hand_built::dragonfly_plus(4, 4, 4, 2),
            "not a Slim Fly",
        ),
    ] {
        let f = fabric(b, 8);
        let e = route(&f, &SfminOptions::default()).unwrap_err().to_string();
        assert!(e.contains(reason), "{name}: {e}");
    }
    // A random regular graph of a Slim Fly's size and degree has no
    // labels and lost nothing: not taken for a damaged one.
    let f = fabric(gen::random_regular::random_regular(50, 7, 2, 1).unwrap(), 8);
    let e = route(&f, &SfminOptions::default()).unwrap_err().to_string();
    assert!(e.contains("not a Slim Fly"), "{e}");
}

#[test]
fn declines_larger_diameters_and_one_vl() {
    let torus = fabric(gen::torus::torus(&[6, 6], &[1, 1], 1).unwrap(), 8);
    let e = route(&torus, &SfminOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("up to 6 switch hops") && e.contains("use pssp here"),
        "{e}"
    );
    let sf = fabric(gen::slimfly::slimfly(5, 1).unwrap(), 1);
    let e = route(&sf, &SfminOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs 2 VLs"), "{e}");
}

#[test]
fn damaged_slim_flies_route_on_hop_position_vls_without_loops() {
    let mut long_paths = false;
    for q in [5, 7] {
        for (switches, links, seed) in [
            (0.0, 0.01, 1),
            (0.0, 0.03, 2),
            (0.0, 0.05, 3),
            (0.02, 0.0, 1),
            (0.04, 0.03, 2),
        ] {
            let what = format!("q={q} -{switches} switches -{links} links seed {seed}");
            let (mut b, _) =
                gen::degrade::drop_switches(&gen::slimfly::slimfly(q, 2).unwrap(), switches, seed)
                    .unwrap();
            gen::degrade::drop_links(&mut b, links, seed).unwrap();
            let f = fabric(b, 8);
            let r = route(&f, &SfminOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
            let report = analyze(&f, &r);
            assert!(report.delivered(), "{what}: {:?}", report.failures);
            assert!(report.credit_loop.is_none(), "{what}: credit loop");
            assert!(r.vls_needed() <= 3, "{what}: {} VLs", r.vls_needed());
            // Minimal: no path longer than the switches' distance.
            assert!(report.max_hops() <= f.graph().diameter() as usize, "{what}");
            if report.max_hops() >= 3 {
                long_paths = true;
                assert_eq!(r.vls_needed(), 3, "{what}");
                let flat = Routing {
                    sl2vl: None,
                    ..r.clone()
                };
                assert!(
                    analyze(&f, &flat).credit_loop.is_some(),
                    "{what}: the check must be able to fail"
                );
            }
        }
    }
    assert!(long_paths, "the damage must lengthen some paths");
}

#[test]
fn a_damaged_slim_fly_on_two_vls_is_declined_saying_why() {
    let mut b = gen::slimfly::slimfly(5, 1).unwrap();
    gen::degrade::drop_links(&mut b, 0.03, 1).unwrap();
    let e = route(&fabric(b, 2), &SfminOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs 3 VLs for paths of 4 switch hops"), "{e}");
}

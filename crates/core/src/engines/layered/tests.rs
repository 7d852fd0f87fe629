use super::*;
use crate::analysis::report::analyze;
use crate::gen::{self, slimfly::slimfly};
use crate::testkit::TestFabric;

fn fabric(builder: crate::FabricBuilder, lmc: u8, vls: u8) -> Fabric {
    TestFabric::of(builder).lmc(lmc).vls(vls).build()
}

fn config(deadlock: LayeredDeadlock) -> LayeredOptions {
    LayeredOptions {
        deadlock,
        ..LayeredOptions::default()
    }
}

/// Routes, then checks delivery and credit loops the way `check` does.
fn route_checked(f: &Fabric, deadlock: LayeredDeadlock) -> Routing {
    let r = route(f, &config(deadlock)).unwrap();
    let report = analyze(f, &r);
    assert!(report.delivered(), "{:?}", report.failures);
    assert!(
        report.credit_loop.is_none(),
        "{deadlock:?}: credit loop {:?}",
        report.credit_loop
    );
    r
}

#[test]
fn slim_fly_layers_are_loop_free_with_either_scheme() {
    let f = fabric(slimfly(5, 2).unwrap(), 2, 8);
    let vl = route_checked(&f, LayeredDeadlock::VlLayers);
    let hop = route_checked(&f, LayeredDeadlock::HopPosition);
    assert_eq!(
        vl.lfts, hop.lfts,
        "the scheme changes SLs and VLs, not paths"
    );
    let report = analyze(&f, &hop);
    assert!(
        report.max_hops() <= 3,
        "hop-position needs ≤ 3 hops, got {}",
        report.max_hops()
    );
    assert_eq!(
        hop.vls_needed(),
        8,
        "the three hop classes spread over all VLs offered"
    );
    let mut three = config(LayeredDeadlock::HopPosition);
    three.layering.max_vls = 3;
    let r = route(&f, &three).unwrap();
    assert_eq!(r.vls_needed(), 3);
    assert!(analyze(&f, &r).credit_loop.is_none());
}

/// Switch hops from host port `from` to `lid` in the tables (None: lost).
fn hops(
    f: &Fabric,
    lfts: &[crate::routing::Lft],
    from: crate::PortRef,
    lid: crate::fabric::Lid,
) -> Option<usize> {
    let channels: Result<Vec<_>, _> =
        crate::routing::walk::Walk::from_port(f, lfts, from, lid).collect();
    channels.ok().map(|c| c.len() - 1)
}

fn host_ports(f: &Fabric) -> Vec<(crate::PortRef, crate::fabric::Lid, SwitchId)> {
    f.end_ports()
        .filter(|(at, _)| !f.node(at.node).is_switch())
        .map(|(at, p)| (at, p.lid, f.lid_switch(p.lid).unwrap()))
        .collect()
}

#[test]
fn layer_zero_is_minimal_and_later_layers_almost_minimal() {
    let f = fabric(slimfly(5, 1).unwrap(), 2, 8);
    let layers = layers_for(&f, &LayeredOptions::default()).unwrap();
    let g = f.graph();
    assert_eq!(layers.count(), 4);
    let (mut longer, mut pairs) = (0, 0);
    let hosts = host_ports(&f);
    for &(from, _, s) in &hosts {
        for &(_, lid, d) in hosts.iter().filter(|h| h.2 != s) {
            let minimal = g.dist(s, d) as usize;
            assert_eq!(hops(&f, &layers.lfts, from, lid), Some(minimal));
            for l in 1..4 {
                let len = hops(&f, &layers.lfts, from, lid.offset(l)).unwrap();
                if minimal == 1 {
                    // The Hoffman–Singleton graph has girth 5: adjacent
                    // switches have no path of 2 or 3 hops besides the link.
                    assert_eq!(len, 1);
                    continue;
                }
                assert!(len == 2 || len == 3, "{s}->{d} layer {l}: {len} hops");
                pairs += 1;
                longer += usize::from(len == 3);
            }
        }
    }
    // The rest are sub-paths of earlier almost-minimal paths (§B.1.4).
    assert!(
        longer * 2 > pairs,
        "{longer} of {pairs} distance-2 paths have 3 hops"
    );
}

#[test]
fn layer_l_is_lid_offset_l_and_follows_its_inserted_paths() {
    let f = fabric(slimfly(5, 1).unwrap(), 1, 8);
    let r = route(&f, &LayeredOptions::default()).unwrap();
    let layers = layers_for(&f, &LayeredOptions::default()).unwrap();
    assert_eq!(r.lfts, layers.lfts);
    let mut followed = 0;
    for &(_, lid, dest) in &host_ports(&f) {
        for s in f.switch_ids().filter(|&s| s != dest) {
            let Some(fixed) = layers.fixed(1, s.idx(), dest.idx()) else {
                continue;
            };
            let next = f
                .graph()
                .switch_behind(s, r.lfts[s].get(lid.offset(1)))
                .unwrap();
            assert_eq!(next.idx(), fixed);
            followed += 1;
        }
    }
    assert!(followed > 0, "layer 1 has inserted paths");
}

/// Layer 0 is pssp's balanced minimal routing of the base LIDs, table for
/// table, with any LMC.
#[test]
fn layer_zero_is_pssps_minimal_routing() {
    let leaf_spine = gen::pgft::pgft(&gen::pgft::Pgft::leaf_spine(6, 4, 2, 2)).unwrap();
    for (name, b) in [
        ("slim fly", slimfly(5, 2).unwrap()),
        ("leaf-spine", gen::shuffle_ports(&leaf_spine, 3)),
    ] {
        let plain = fabric(b.clone(), 0, 8);
        let minimal = crate::engines::pssp::balanced_minimal(&plain, 0, "test").lfts;
        assert_eq!(
            layers_for(&plain, &LayeredOptions::default()).unwrap().lfts,
            minimal,
            "{name}"
        );
        let multi = fabric(b, 2, 8);
        let layers = layers_for(&multi, &LayeredOptions::default()).unwrap();
        // The same LIDs hold the same ports (base LIDs at lmc 2 are 4
        // apart): compare entry by entry through the port order.
        let base = |f: &Fabric| {
            host_ports(f)
                .into_iter()
                .map(|(_, lid, _)| lid)
                .collect::<Vec<_>>()
        };
        for (a, b) in base(&plain).into_iter().zip(base(&multi)) {
            for s in plain.switch_ids() {
                assert_eq!(
                    minimal[s].get(a),
                    layers.lfts[s].get(b),
                    "{name}: {s}, LID {a}/{b}"
                );
            }
        }
    }
}

#[test]
fn same_seed_same_tables_other_seed_other_tables() {
    let f = fabric(slimfly(5, 1).unwrap(), 2, 8);
    let a = route(&f, &LayeredOptions::default()).unwrap();
    let b = route(&f, &LayeredOptions::default()).unwrap();
    assert_eq!(a.lfts, b.lfts);
    let other = LayeredOptions {
        seed: 99,
        ..LayeredOptions::default()
    };
    assert_ne!(a.lfts, route(&f, &other).unwrap().lfts);
}

#[test]
fn lmc_zero_routes_one_minimal_layer() {
    let f = fabric(slimfly(5, 1).unwrap(), 0, 8);
    let r = route_checked(&f, LayeredDeadlock::VlLayers);
    assert!(analyze(&f, &r).max_hops() <= 2);
}

#[test]
fn hop_position_declines_without_three_vls_or_on_long_paths() {
    let f = fabric(slimfly(5, 1).unwrap(), 1, 2);
    let e = route(&f, &config(LayeredDeadlock::HopPosition))
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs 3 VLs") && e.contains("vl_layers"), "{e}");
    // A 3-D HyperX has diameter 3: almost-minimal paths of 4 hops.
    let f = fabric(
        gen::hyperx::hyperx(&[3, 3, 3], &[1, 1, 1], 1).unwrap(),
        1,
        8,
    );
    let e = route(&f, &config(LayeredDeadlock::HopPosition))
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most 3 switch hops"), "{e}");
    route_checked(&f, LayeredDeadlock::VlLayers);
}

#[test]
fn parallel_links_and_shuffled_ports_still_loop_free() {
    let mut b = gen::hyperx::hyperx(&[3, 3], &[2, 1], 2).unwrap();
    b = gen::shuffle_ports(&b, 5);
    let f = fabric(b, 2, 8);
    route_checked(&f, LayeredDeadlock::VlLayers);
    route_checked(&f, LayeredDeadlock::HopPosition);
}

#[test]
fn disconnected_fabric_is_declined_by_name() {
    let mut b = crate::FabricBuilder::new();
    for i in 0..2u64 {
        let sw = b.add_node(crate::NodeKind::Switch, 0x10 + i, format!("sw{i}"), 2);
        let ca = b.add_node(crate::NodeKind::Ca, 0x100 + i, format!("h{i}"), 1);
        b.connect(crate::PortRef::new(ca, 1), crate::PortRef::new(sw, 1))
            .unwrap();
    }
    let f = fabric(b, 0, 8);
    let e = route(&f, &LayeredOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no path between them"), "{e}");
}

#[test]
fn slim_fly_disjoint_paths_grow_with_layers() {
    // Hoffman–Singleton (q = 5): 350 of the 2,450 ordered switch pairs are
    // adjacent and have a single path of ≤ 3 hops, so at most 85.7 % of
    // pairs can reach 3 disjoint paths.
    let share = |lmc| {
        let f = fabric(slimfly(5, 4).unwrap(), lmc, 8);
        let r = route(&f, &LayeredOptions::default()).unwrap();
        let report = crate::analysis::layers::layer_report(&f, &r);
        assert_eq!((report.pairs, report.undelivered), (2450, 0));
        report.disjoint_at_least(3)
    };
    let (four, eight) = (share(2), share(3));
    assert!(
        four > 0.5 && eight > 0.8 && eight <= 2100.0 / 2450.0,
        "{four} {eight}"
    );
}

#[test]
fn defaults_are_what_the_options_say() {
    assert_eq!(
        LayeredOptions::read(&Section::empty(NAME)).unwrap(),
        LayeredOptions::default()
    );
    let settings = crate::config::Settings::parse(
        "layered.deadlock hop_position\nlayered.max_vls 6\nlayered.seed 3\n",
        "x",
        &crate::engines::config_sections(),
    );
    let o = LayeredOptions::read(&settings.section(NAME)).unwrap();
    assert_eq!(
        (o.deadlock, o.layering.max_vls, o.seed),
        (LayeredDeadlock::HopPosition, 6, 3)
    );
    let bad = crate::config::Settings::parse(
        "layered.deadlock dfsssp\n",
        "x",
        &crate::engines::config_sections(),
    );
    let e = LayeredOptions::read(&bad.section(NAME)).unwrap_err();
    assert!(e.message.contains("vl_layers, hop_position"), "{e}");
}

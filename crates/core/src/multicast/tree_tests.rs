//! Trees of our engines, checked: with the broadcast group and 100 random
//! groups, unicast plus multicast has no credit loop, and every member of
//! every group gets exactly one copy. The same check on OpenSM's way of
//! building trees (root with the least maximum hops, unicast next hops
//! from it) finds the cycle pssp's unicast closes with the broadcast tree.

use super::check::check;
use super::rules::{rule_for, MasterTrees, TreeRule};
use super::{build_group, GroupMft};
use crate::analysis::report::analyze_with_dependencies;
use crate::fabric::{Fabric, PortRef, SwitchId};
use crate::pipeline::route_by_name;
use crate::rng::Rng;
use crate::routing::Routing;

fn built(b: crate::FabricBuilder) -> Fabric {
    crate::testkit::TestFabric::of(b).build()
}

fn dragonfly(a: usize, h: usize, p: usize) -> Fabric {
    built(crate::gen::dragonfly::dragonfly(&crate::gen::dragonfly::Params::new(a, h, p)).unwrap())
}

fn ca_ports(f: &Fabric) -> Vec<PortRef> {
    f.cas().map(|n| PortRef::new(n, 1)).collect()
}

/// The broadcast group (every host) and `n` groups of 2-24 random hosts.
fn memberships(f: &Fabric, n: usize, seed: u64) -> Vec<(u16, Vec<PortRef>)> {
    let hosts = ca_ports(f);
    let mut rng = Rng::new(seed);
    let mut out = vec![(0xC000, hosts.clone())];
    for i in 0..n {
        let mut pick = hosts.clone();
        rng.shuffle(&mut pick);
        pick.truncate(2 + rng.below(23).min(hosts.len() - 2));
        out.push((0xC001 + i as u16, pick));
    }
    out
}

fn groups_of(
    f: &Fabric,
    rule: &TreeRule,
    r: &Routing,
    members: &[(u16, Vec<PortRef>)],
) -> Vec<GroupMft> {
    groups_on(f, rule, r, members, 0)
}

fn groups_on(
    f: &Fabric,
    rule: &TreeRule,
    r: &Routing,
    members: &[(u16, Vec<PortRef>)],
    sl: u8,
) -> Vec<GroupMft> {
    members
        .iter()
        .map(|(mlid, m)| build_group(f, rule, r, *mlid, sl, m).unwrap())
        .collect()
}

/// Unicast plus `groups` have no credit loop, every group is sound, and
/// the groups add dependencies of their own.
fn assert_loop_free(f: &Fabric, r: &Routing, groups: &[GroupMft]) {
    assert!(loop_free(f, r, groups) > 0);
}

/// Asserts that unicast plus `groups` have no credit loop and every group
/// is sound; the dependencies the groups add to unicast's (none where
/// unicast turns wherever the trees do).
pub(super) fn loop_free(f: &Fabric, r: &Routing, groups: &[GroupMft]) -> usize {
    let (report, unicast) = analyze_with_dependencies(f, r, &|_, _| {});
    assert!(report.credit_loop.is_none(), "unicast alone");
    let m = check(f, r, groups, &unicast);
    assert!(m.credit_loop.is_none(), "{:?}", m.credit_loop);
    for g in &m.groups {
        assert!(g.sound(), "group {:#x}: {:?}", g.mlid, g.delivery);
    }
    m.added_dependencies
}

#[test]
fn dla_trees_add_no_credit_loop_on_dragonflies() {
    for (a, h, p) in [(4, 2, 2), (3, 1, 2), (4, 1, 1), (6, 3, 3)] {
        let f = dragonfly(a, h, p);
        let r = route_by_name("dla", &f).unwrap().routing;
        let rule = rule_for("dla", &f, &r).unwrap();
        let members = memberships(&f, 106, 7);
        let groups = groups_of(&f, &rule, &r, &members);
        assert_eq!(
            groups[0].switches().count(),
            f.switch_count(),
            "broadcast spans all"
        );
        assert_loop_free(&f, &r, &groups);
    }
}

#[test]
fn mlid_trees_add_no_credit_loop_on_fat_trees_and_spread_over_the_tops() {
    let fabrics = [
        built(crate::gen::fattree::fattree(4, 3).unwrap()),
        built(crate::gen::pgft::pgft(&crate::gen::pgft::Pgft::leaf_spine(6, 4, 4, 2)).unwrap()),
    ];
    for f in &fabrics {
        let r = route_by_name("mlid", f).unwrap().routing;
        let rule = rule_for("mlid", f, &r).unwrap();
        let members = memberships(f, 106, 3);
        let groups = groups_of(f, &rule, &r, &members);
        assert_loop_free(f, &r, &groups);
        let TreeRule::FatTree(levels) = &rule else {
            panic!("mlid's rule is per group")
        };
        // Roots: the top switches the groups' trees hang from.
        let mut roots: Vec<SwitchId> = members
            .iter()
            .map(|(mlid, m)| {
                let mut s: Vec<SwitchId> = m
                    .iter()
                    .filter_map(|&p| super::tree::attachment(f, p).map(|a| a.0))
                    .collect();
                s.sort_unstable();
                s.dedup();
                rule.trees_for(f, *mlid, 0, &s).unwrap()[0].root
            })
            .collect();
        roots.sort_unstable();
        roots.dedup();
        assert_eq!(
            roots.len(),
            levels.tops.len(),
            "every top switch roots some group"
        );
    }
}

/// The fat trees where mlid needs VL 1 for down-then-up paths between
/// hosts on two or more tops: the PGFT of the issue with 3 hosts on its
/// tops, and a leaf-spine with an Aggregation Node on every switch.
fn fat_trees_with_hosts_on_the_tops() -> Vec<(&'static str, Fabric)> {
    use crate::gen::field::aggregation_nodes;
    use crate::gen::pgft::{pgft, pgft_with_top_hosts, Pgft};
    let issue = Pgft {
        down: vec![4, 6],
        up: vec![1, 3],
        parallel: vec![1, 2],
    };
    vec![
        (
            "top hosts",
            built(pgft_with_top_hosts(&issue, 3, 1).unwrap()),
        ),
        (
            "aggregation nodes",
            built(aggregation_nodes(&pgft(&Pgft::leaf_spine(6, 4, 3, 2)).unwrap()).unwrap()),
        ),
    ]
}

/// Hosts on two or more tops: mlid's down-then-up paths are on SL 1 / VL
/// 1, up*/down* ones on VL 0. Every tree turns up into the tops at one
/// switch, so groups on the SLs of VL 0 get trees free of credit loops
/// with unicast, while two turning switches (one per group) close one.
#[test]
fn mlid_trees_turn_up_to_hosts_on_the_tops_at_one_switch() {
    for (name, f) in fat_trees_with_hosts_on_the_tops() {
        let r = route_by_name("mlid", &f).unwrap().routing;
        assert_eq!(r.vls_needed(), 2, "{name}");
        let rule = rule_for("mlid", &f, &r).unwrap();
        let TreeRule::FatTree(levels) = &rule else {
            panic!("{name}: {rule:?}")
        };
        assert!(levels.turn.is_some(), "{name}: a turning switch");
        assert!(!rule.covers(1), "{name}: SL 1 is VL 1's, down-then-up");
        assert_eq!(rule.covered_sls().len(), 15, "{name}");
        let hosted_tops: Vec<PortRef> = ca_ports(&f)
            .into_iter()
            .filter(|&p| {
                let s = super::tree::attachment(&f, p).unwrap().0;
                levels.tops.contains(&s)
            })
            .collect();
        assert!(hosted_tops.len() >= 2, "{name}");
        let mut members = memberships(&f, 106, 17);
        members.push((0xC100, hosted_tops.clone()));
        let groups = groups_of(&f, &rule, &r, &members);
        assert_loop_free(&f, &r, &groups);
        // The premise is read off the tables: with the down-then-up paths
        // on VL 0 as well, no VL is up*/down* only.
        let flat = Routing {
            sl2vl: None,
            path_sl: crate::routing::PathSl::Uniform(0),
            ..r.clone()
        };
        assert!(super::fat_tree::fat_tree_rule(&f, &flat).is_err(), "{name}");
        if name == "aggregation nodes" {
            assert_one_turning_switch_matters(&f, &r, &rule, &hosted_tops);
        }
    }
}

/// The same trees, each group turning at a switch of its own: groups of
/// the top hosts alone, one turning at X, the other at another switch
/// cabled to every top, close a loop with unicast (over cables the groups
/// pick by MLID from the bundles: 32 groups each). It needs unicast
/// routes between leaves through two tops with hosts, which the
/// Aggregation Nodes' leaf-spine has (on the other tree mlid routes the
/// leaves' LIDs through the top without hosts and one other).
fn assert_one_turning_switch_matters(
    f: &Fabric,
    r: &Routing,
    rule: &TreeRule,
    hosted_tops: &[PortRef],
) {
    let TreeRule::FatTree(levels) = rule else {
        panic!("{rule:?}")
    };
    let g = f.graph();
    let other = g
        .ids()
        .find(|&y| {
            Some(y) != levels.turn && levels.tops.iter().all(|&t| !g.bundle(y, t).is_empty())
        })
        .expect("another switch below every top");
    let elsewhere = TreeRule::FatTree(super::fat_tree::FatTreeLevels {
        turn: Some(other),
        ..levels.clone()
    });
    let (_, unicast) = analyze_with_dependencies(f, r, &|_, _| {});
    let twisted: Vec<GroupMft> = (0..32)
        .flat_map(|k| {
            let mlid = 0xC200 + k;
            [
                build_group(f, rule, r, mlid, 0, hosted_tops).unwrap(),
                build_group(f, &elsewhere, r, mlid + 0x100, 0, hosted_tops).unwrap(),
            ]
        })
        .collect();
    assert!(check(f, r, &twisted, &unicast).credit_loop.is_some());
}

/// mlid routed with the settings `conf` (osmroute.conf lines).
fn mlid_with(f: &Fabric, conf: &str) -> Routing {
    let settings = crate::config::Settings::parse(conf, "test", &crate::engines::config_sections());
    crate::pipeline::route(crate::engines::find("mlid").unwrap(), &settings, f)
        .unwrap()
        .routing
}

/// The small director twin with an Aggregation Node on every chip, whole
/// and with 5 % of its cables cut (two seeds): mlid places the paths of
/// Aggregation Nodes on line chips of two directors on virtual layers.
fn director_twins_with_aggregation_nodes() -> Vec<(String, Fabric)> {
    use crate::gen::field::{aggregation_nodes, directors, Directors};
    let twin = || aggregation_nodes(&directors(&Directors::small_twin()).unwrap()).unwrap();
    let mut out = vec![("whole".to_string(), built(twin()))];
    for seed in [3, 4] {
        let mut cut = twin();
        let n = crate::gen::degrade::drop_links(&mut cut, 0.05, seed).unwrap();
        out.push((format!("{n} cables cut (seed {seed})"), built(cut)));
    }
    out
}

/// The IPoIB broadcast group when every CA joins, Aggregation Nodes on
/// the chips of both directors and on every spine included, gets a
/// checked tree on SL 0 and every SL sharing its VL (3-15) on the
/// director twin, whole and with cables cut: mlid keeps VL 0 for them by
/// default (`mlid.multicast_vl`), where the spanning candidates pass;
/// trees hung down from the tops pass on unicast's own SLs (1, 2) beside
/// them, for groups of hosts. With 100 random groups on every SL of
/// VL 0 and 12 host groups on SLs 1 and 2, unicast plus every flood has
/// no credit loop, and every member of every group gets one copy.
/// Without the VL for multicast no tree that joins both directors fits
/// beside unicast layer 0, which turns at the leaves from one director
/// into the other: the broadcast group then fits no checked tree.
#[test]
fn mlid_gives_the_broadcast_group_of_every_ca_a_checked_tree_on_director_twins() {
    for (name, f) in director_twins_with_aggregation_nodes() {
        let r = route_by_name("mlid", &f).unwrap().routing;
        assert_eq!(
            r.path_sl.sls_used(),
            vec![1, 2],
            "{name}: unicast on SLs 1.."
        );
        assert!(
            !turns_up_at_a_leaf_on_vl0(&f, &r),
            "{name}: VL 0 for trees alone"
        );
        let rule = rule_for("mlid", &f, &r).unwrap();
        assert_eq!(
            rule.covered_sls().len(),
            16,
            "{name}: {:?}",
            rule.covered_sls()
        );
        let everyone = ca_ports(&f);
        let g = f.graph();
        let hosts: Vec<PortRef> = everyone
            .iter()
            .copied()
            .filter(|&p| super::tree::attachment(&f, p).is_some_and(|(s, _)| g.hosts(s) > 1))
            .collect();
        let mut groups = Vec::new();
        for sl in (0..16u8).filter(|sl| ![1, 2].contains(sl)) {
            let broadcast = build_group(&f, &rule, &r, 0xC000, sl, &everyone)
                .unwrap_or_else(|e| panic!("{name}, SL {sl}: {e}"));
            assert_eq!(
                broadcast.switches().count(),
                f.switch_count(),
                "{name}, SL {sl}: a CA on every switch"
            );
            groups.push(broadcast);
            for (mlid, members) in memberships(&f, 100, 29 + sl as u64).into_iter().skip(1) {
                groups.push(build_group(&f, &rule, &r, mlid, sl, &members).unwrap());
            }
        }
        let mut rng = Rng::new(31);
        for sl in [1u8, 2] {
            for k in 0..12u16 {
                let mut pick = hosts.clone();
                rng.shuffle(&mut pick);
                pick.truncate(2 + rng.below(23));
                let mlid = 0xC100 + 16 * k + sl as u16;
                groups.push(build_group(&f, &rule, &r, mlid, sl, &pick).unwrap());
            }
        }
        assert_loop_free(&f, &r, &groups);

        let r = mlid_with(&f, "mlid.multicast_vl FALSE\n");
        assert!(
            r.path_sl.sls_used().contains(&0),
            "{name}: unicast layer 0 on SL 0"
        );
        assert!(
            turns_up_at_a_leaf_on_vl0(&f, &r),
            "{name}: why no tree joining both directors fits beside unicast layer 0"
        );
        let rule = rule_for("mlid", &f, &r).unwrap();
        assert!(rule.covers(0), "{name}: {:?}", rule.covered_sls());
        assert!(
            build_group(&f, &rule, &r, 0xC000, 0, &everyone).is_err(),
            "{name}: a checked tree for the broadcast group beside unicast layer 0"
        );
    }
}

/// Whether unicast on VL 0 turns from down to up at a leaf (from a line
/// chip of one director into one of the other, the only switches above a
/// leaf): a tree joining both directors turns there both ways, and one
/// such unicast turn at the leaf it crosses closes a cycle with it.
fn turns_up_at_a_leaf_on_vl0(f: &Fabric, r: &Routing) -> bool {
    use crate::fabric::Peer;
    let level = crate::topology::gft::recognize(f).unwrap().height;
    let g = f.graph();
    let (_, unicast) = analyze_with_dependencies(f, r, &|_, _| {});
    let turns = unicast.edge_ids().any(|(a, b)| {
        let (from, _) = g.channel_port(a as usize / 16);
        let (at, out) = g.channel_port(b as usize / 16);
        let up = matches!(g.peer(at, out), Some(Peer::Switch { switch, .. }) if level[switch] > level[at]);
        a % 16 == 0 && level[at] == 0 && level[from] > 0 && up
    });
    turns
}

/// The director twins where mlid places paths on virtual layers
/// (Aggregation Nodes, with and without cables cut) without a VL for
/// multicast (`mlid.multicast_vl FALSE`, unicast layer 0 on SL 0), and
/// the plain twin (up*/down* on one VL, the fat-tree rule): groups of hosts on every SL
/// the rule covers, all at once, close no credit loop with unicast, and
/// every member gets one copy. Where paths are layered the groups are cut
/// from trees hung down from a top (no down-to-up turn), so each of them
/// spans a single top; groups with an Aggregation Node above their root's
/// level take a grown tree or none.
#[test]
fn mlid_trees_hung_down_from_the_tops_on_director_twins() {
    use crate::gen::field::{aggregation_nodes, directors, Directors};
    let twin = || directors(&Directors::small_twin()).unwrap();
    let mut cut = aggregation_nodes(&twin()).unwrap();
    crate::gen::degrade::drop_links(&mut cut, 0.05, 3).unwrap();
    let fabrics = [
        ("plain", built(twin()), false),
        (
            "aggregation nodes",
            built(aggregation_nodes(&twin()).unwrap()),
            true,
        ),
        ("aggregation nodes, cables cut", built(cut), true),
    ];
    for (name, f, layered) in &fabrics {
        let r = mlid_with(f, "mlid.multicast_vl FALSE\n");
        let rule = rule_for("mlid", f, &r).unwrap();
        let sls = rule.covered_sls();
        eprintln!("{name}: {} VLs, covered {sls:?}", r.vls_needed());
        assert!(sls.contains(&0), "{name}: {sls:?}");
        let g = f.graph();
        let hosts: Vec<PortRef> = ca_ports(f)
            .into_iter()
            .filter(|&p| super::tree::attachment(f, p).is_some_and(|(s, _)| g.hosts(s) > 1))
            .collect();
        assert!(hosts.len() >= 24, "{name}");
        let mut rng = Rng::new(23);
        let mut groups = Vec::new();
        for &sl in &sls {
            for k in 0..12u16 {
                let mut pick = hosts.clone();
                rng.shuffle(&mut pick);
                pick.truncate(2 + rng.below(23));
                let mlid = 0xC000 + 16 * k + sl as u16;
                groups.push(build_group(f, &rule, &r, mlid, sl, &pick).unwrap());
            }
            groups.push(build_group(f, &rule, &r, 0xC100 + sl as u16, sl, &hosts).unwrap());
        }
        loop_free(f, &r, &groups);
        if *layered {
            let TreeRule::Masters(m) = &rule else {
                panic!("{name}: {rule:?}")
            };
            // Host groups fit a tree hung down from a top: no group
            // climbs above its root's level after going down.
            let level = crate::topology::gft::recognize(f).unwrap().height;
            for t in m.trees.iter().filter(|t| {
                g.ids()
                    .filter_map(|s| t.parent[s].map(|p| (s, p)))
                    .all(|(s, p)| level[p] == level[s] + 1)
            }) {
                assert_eq!(level[t.root], level.iter().copied().max().unwrap());
            }
            assert!(
                m.trees.iter().any(|t| g
                    .ids()
                    .filter_map(|s| t.parent[s].map(|p| (s, p)))
                    .all(|(s, p)| level[p] == level[s] + 1)),
                "{name}: some downward tree taken"
            );
        }
    }
}

#[test]
fn damaged_dragonflies_get_a_checked_tree_and_unknown_engines_none() {
    let mut b =
        crate::gen::dragonfly::dragonfly(&crate::gen::dragonfly::Params::new(4, 2, 2)).unwrap();
    crate::gen::degrade::drop_links(&mut b, 0.05, 1).unwrap();
    let damaged = built(b);
    let r = route_by_name("dla", &damaged).unwrap().routing;
    assert!(super::rules::dragonfly_master(&damaged).is_err());
    // The checked fallback (a tree that passed here).
    let rule = rule_for("dla", &damaged, &r).unwrap();
    assert_loop_free(
        &damaged,
        &r,
        &groups_of(&damaged, &rule, &r, &memberships(&damaged, 106, 9)),
    );
    let f = dragonfly(4, 2, 2);
    let pssp = route_by_name("pssp", &f).unwrap().routing;
    assert!(rule_for("nue", &f, &pssp).is_err());
}

/// pssp as before `pssp.multicast_vl` and `pssp.multicast_tree`: unicast
/// layer 0 on SL 0 / VL 0, not placed around a tree.
fn pssp_without_multicast_vl(f: &Fabric) -> Routing {
    let settings = crate::config::Settings::parse(
        "pssp.multicast_vl FALSE\npssp.multicast_tree FALSE\n",
        "test",
        &crate::engines::config_sections(),
    );
    crate::pipeline::route(crate::engines::find("pssp").unwrap(), &settings, f)
        .unwrap()
        .routing
}

/// OpenSM's tree on an SL that pssp's unicast uses (SL 0 when VL 0 is not
/// kept for multicast).
#[test]
fn pssp_with_opensm_default_broadcast_tree_has_a_credit_loop() {
    let f = dragonfly(4, 2, 2);
    let pssp = pssp_without_multicast_vl(&f);
    assert!(pssp.path_sl.sls_used().contains(&0));
    let (report, unicast) = analyze_with_dependencies(&f, &pssp, &|_, _| {});
    assert!(
        report.credit_loop.is_none(),
        "pssp's unicast alone is acyclic"
    );
    let broadcast = super::opensm_like::opensm_like(&f, &pssp, 0xC000, 0, &ca_ports(&f)).unwrap();
    let m = check(&f, &pssp, std::slice::from_ref(&broadcast), &unicast);
    assert!(m.groups[0].sound(), "{:?}", m.groups[0].delivery);
    let cycle = m
        .credit_loop
        .expect("OpenSM's tree closes a cycle with pssp's unicast");
    assert!(cycle
        .iter()
        .any(|s| s.made_by.iter().any(|b| b == "group 0xC000")));
    assert!(cycle
        .iter()
        .any(|s| s.made_by.iter().any(|b| b.starts_with("unicast"))));
    // By default VL 0 is multicast's: even OpenSM's tree has no loop there.
    let pssp = route_by_name("pssp", &f).unwrap().routing;
    let (_, unicast) = analyze_with_dependencies(&f, &pssp, &|_, _| {});
    let broadcast = super::opensm_like::opensm_like(&f, &pssp, 0xC000, 0, &ca_ports(&f)).unwrap();
    let m = check(&f, &pssp, &[broadcast], &unicast);
    assert!(m.credit_loop.is_none(), "{:?}", m.credit_loop);
}

/// pssp, sfmin and hxdor on their fabrics: the verified master trees
/// carry the broadcast group and 106 random groups without a credit loop
/// on every SL they cover. pssp's layering on the Dragonfly a=4, h=2, p=2
/// and layered's on the Slim Fly leave VL 0 to SL 0
/// (`virtual_layers::MULTICAST_VL`), and the check, SL class by SL class,
/// finds a tree for some of unicast's SLs too (pssp: the layer of the
/// paths to switch LIDs; layered: its second layer), not for all.
#[test]
fn verified_trees_add_no_credit_loop_on_the_sls_they_cover() {
    let slimfly = built(crate::gen::slimfly::slimfly(5, 1).unwrap());
    let hyperx = built(crate::gen::hyperx::hyperx(&[3, 3], &[1, 1], 2).unwrap());
    let fat_tree = built(crate::gen::fattree::fattree(4, 3).unwrap());
    for (engine, f, every_sl) in [
        ("pssp", fat_tree, true),
        ("sfmin", slimfly.clone(), true),
        ("hxdor", hyperx, true),
        ("pssp", dragonfly(4, 2, 2), false),
        ("layered", slimfly, false),
    ] {
        let r = route_by_name(engine, &f).unwrap().routing;
        let rule = rule_for(engine, &f, &r).unwrap_or_else(|e| panic!("{engine}: {e}"));
        let members = memberships(&f, 106, 5);
        let sls = rule.covered_sls();
        assert_eq!(sls.len() == 16, every_sl, "{engine}: {sls:?}");
        assert!(rule.covers(0), "{engine}: SL 0 (IPoIB broadcast) {sls:?}");
        // (On a unicast SL the trees may turn only where unicast does.)
        let added: usize = sls
            .iter()
            .map(|&sl| loop_free(&f, &r, &groups_on(&f, &rule, &r, &members, sl)))
            .sum();
        assert!(added > 0, "{engine}");
        if !every_sl {
            // Some of unicast's SLs are covered, not all.
            let unicast_sls = r.path_sl.sls_used();
            assert!(!unicast_sls.contains(&0), "{engine}: {unicast_sls:?}");
            let on_unicast = unicast_sls.iter().filter(|&&sl| rule.covers(sl)).count();
            assert!(
                (1..unicast_sls.len()).contains(&on_unicast),
                "{engine}: {sls:?}"
            );
        }
    }
}

/// SL 0 covered for the layered engines by default, and when the layering
/// needs every VL the fabric offers (unicast layer 0 on SL 0, no VL left
/// for multicast): unicast is placed around the first candidate tree in
/// layer 0, which then passes on SL 0 by construction. Without that
/// (`multicast_tree FALSE`) no tree passes on SL 0, and OpenSM's kind of
/// tree closes a loop there, as the check finds.
#[test]
fn sl0_groups_get_a_checked_tree_when_no_vl_is_left() {
    let dragonfly_422 =
        || crate::gen::dragonfly::dragonfly(&crate::gen::dragonfly::Params::new(4, 2, 2)).unwrap();
    let slimfly_5 = || crate::gen::slimfly::slimfly(5, 1).unwrap();
    let cases: [(&str, &dyn Fn() -> crate::FabricBuilder, u8); 2] =
        [("pssp", &dragonfly_422, 4), ("layered", &slimfly_5, 3)];
    for (engine, make, vls_needed) in cases {
        let f = built(make());
        let r = route_by_name(engine, &f).unwrap().routing;
        assert_eq!(
            r.vls_needed(),
            vls_needed,
            "{engine}: unicast layers + VL 0"
        );
        let rule = rule_for(engine, &f, &r).unwrap();
        let everyone = memberships(&f, 106, 13);
        // Unicast, the broadcast group and the random groups, all on SL 0.
        assert_loop_free(&f, &r, &groups_on(&f, &rule, &r, &everyone, 0));

        // The layering alone fills the fabric's VLs.
        let tight = crate::testkit::TestFabric::of(make())
            .vls(vls_needed - 1)
            .build();
        let r = route_by_name(engine, &tight).unwrap().routing;
        assert_eq!(r.vls_needed(), vls_needed - 1, "{engine}");
        assert!(r.path_sl.sls_used().contains(&0), "{engine}");
        let rule = rule_for(engine, &tight, &r).unwrap();
        assert!(rule.covers(0), "{engine}: {:?}", rule.covered_sls());
        loop_free(&tight, &r, &groups_on(&tight, &rule, &r, &everyone, 0));

        // Placed without the tree: as before, SL 0 is left to OpenSM's kind
        // of tree, which closes a loop with unicast layer 0.
        let settings = crate::config::Settings::parse(
            &format!("{engine}.multicast_tree FALSE\n"),
            "test",
            &crate::engines::config_sections(),
        );
        let info = crate::engines::find(engine).unwrap();
        let r = crate::pipeline::route(info, &settings, &tight)
            .unwrap()
            .routing;
        let rule = rule_for(engine, &tight, &r).unwrap();
        assert!(!rule.covers(0), "{engine}: {:?}", rule.covered_sls());
        let (_, unicast) = analyze_with_dependencies(&tight, &r, &|_, _| {});
        let on_sl0 = groups_on(&tight, &rule, &r, &everyone[..1], 0);
        assert!(
            check(&tight, &r, &on_sl0, &unicast).credit_loop.is_some(),
            "{engine}"
        );
    }
}

/// Where no layering with every layer seeded keeps the first candidate
/// tree in layer 0 within the layers unicast needs, the layering tries the
/// other candidates, then seeds one layer alone and puts it on SL 0: on
/// these fabrics at as many VLs as unicast needs (a second candidate on
/// the random 16-switch one, layer 1 seeded alone on the random 30-switch
/// one and on the Dragonfly), SL 0 is covered, with no VL more, and unicast plus the whole
/// flood (every end port a member, switches' port 0 included) of every
/// master tree on SL 0, and every group cut from them, close no credit
/// loop. Before, the first try alone was made and SL 0 was left uncovered
/// on all three.
#[test]
fn sl0_groups_get_a_checked_tree_where_the_first_candidate_does_not_fit() {
    let random = |switches, degree, seed| {
        move || crate::gen::random_regular::random_regular(switches, degree, 1, seed).unwrap()
    };
    let dragonfly_541 =
        || crate::gen::dragonfly::dragonfly(&crate::gen::dragonfly::Params::new(5, 4, 1)).unwrap();
    let cases: [(&str, &dyn Fn() -> crate::FabricBuilder); 3] = [
        ("pssp", &random(16, 3, 3)),
        ("pssp", &random(30, 3, 2)),
        ("layered", &dragonfly_541),
    ];
    for (engine, make) in cases {
        let roomy = built(make());
        let layers = route_by_name(engine, &roomy).unwrap().routing.vls_needed() - 1;
        let tight = crate::testkit::TestFabric::of(make()).vls(layers).build();
        let r = route_by_name(engine, &tight).unwrap().routing;
        assert_eq!(r.vls_needed(), layers, "{engine}: no layer more");
        let rule =
            rule_for(engine, &tight, &r).unwrap_or_else(|e| panic!("{engine}: no tree rule: {e}"));
        assert!(rule.covers(0), "{engine}: {:?}", rule.covered_sls());
        let TreeRule::Masters(masters) = &rule else {
            panic!("{engine}: master trees")
        };
        let everyone = super::verified::everyone(&tight);
        let whole_floods: Vec<GroupMft> = masters
            .trees
            .iter()
            .enumerate()
            .filter(|&(i, _)| masters.per_sl[0] & (1 << i) != 0)
            .map(|(_, tree)| super::tree::cut(&tight, tree, 0xC000, 0, &everyone).unwrap())
            .collect();
        assert!(loop_free(&tight, &r, &whole_floods) > 0, "{engine}");
        let groups = groups_on(&tight, &rule, &r, &memberships(&tight, 106, 17), 0);
        assert!(loop_free(&tight, &r, &groups) > 0, "{engine}");
    }
}

/// Groups per inter-switch channel: (the most on one channel, the average
/// over all channels), for the 100 random groups of `memberships`.
fn channel_sharing(f: &Fabric, groups: &[GroupMft]) -> (u32, f64) {
    let g = f.graph();
    let mut per = std::collections::HashMap::new();
    for grp in &groups[1..] {
        for s in grp.switches() {
            for &p in grp
                .mask(s)
                .iter()
                .filter(|&&p| g.switch_behind(s, p).is_some())
            {
                *per.entry((s, p)).or_insert(0u32) += 1;
            }
        }
    }
    let channels: usize = g.ids().map(|s| g.cables(s).len()).sum();
    let total: u32 = per.values().sum();
    (
        per.values().copied().max().unwrap_or(0),
        total as f64 / channels as f64,
    )
}

/// How the groups share cables (printed with --nocapture): the checked
/// extra trees take load off dla's hub tree.
#[test]
fn groups_spread_over_the_trees() {
    let cases: Vec<(&str, Fabric)> = vec![
        ("dla", dragonfly(4, 2, 2)),
        ("dla", dragonfly(6, 3, 3)),
        (
            "mlid",
            built(crate::gen::pgft::pgft(&crate::gen::pgft::Pgft::leaf_spine(6, 8, 4, 2)).unwrap()),
        ),
        ("sfmin", built(crate::gen::slimfly::slimfly(5, 2).unwrap())),
        (
            "hxdor",
            built(crate::gen::hyperx::hyperx(&[3, 3], &[1, 1], 4).unwrap()),
        ),
        ("pssp", built(crate::gen::fattree::fattree(4, 3).unwrap())),
        // SL-0 groups on VL 0, unicast on SLs 1..
        ("pssp", dragonfly(4, 2, 2)),
        (
            "layered",
            built(crate::gen::slimfly::slimfly(5, 2).unwrap()),
        ),
    ];
    for (engine, f) in cases {
        let r = route_by_name(engine, &f).unwrap().routing;
        let rule = rule_for(engine, &f, &r).unwrap();
        let members = memberships(&f, 100, 11);
        let (max, avg) = channel_sharing(&f, &groups_of(&f, &rule, &r, &members));
        let trees = match &rule {
            TreeRule::Masters(m) => format!(
                "{} master trees ({} on SL 0)",
                m.trees.len(),
                m.per_sl[0].count_ones()
            ),
            TreeRule::FatTree(_) => "a tree per group".to_string(),
        };
        eprintln!(
            "{engine} on {} switches, {trees}: at most {max} of 100 groups on one channel, {avg:.1} on average",
            f.switch_count()
        );
        if engine == "dla" {
            let hub = TreeRule::Masters(MasterTrees::everywhere(vec![
                super::rules::dragonfly_master(&f).unwrap(),
            ]));
            let (alone, _) = channel_sharing(&f, &groups_of(&f, &hub, &r, &members));
            eprintln!("  with the hub tree alone: at most {alone}");
            assert!(max < alone, "the extra trees take load off the hub tree");
        }
        if let TreeRule::Masters(m) = rule.clone() {
            let sl0 = m.per_sl[0].trailing_zeros() as usize;
            let first = TreeRule::Masters(MasterTrees {
                trees: vec![m.trees[sl0].clone()],
                per_sl: m.per_sl.map(|t| u32::from(t != 0)),
            });
            let (alone, _) = channel_sharing(&f, &groups_of(&f, &first, &r, &members));
            eprintln!("  with the first tree alone: at most {alone}");
            assert!(max <= alone, "{engine}: more trees on the covered SLs");
            let (by_mlid, _) = channel_sharing(&f, &groups_by_mlid(&f, &m, &members));
            eprintln!("  each group on the tree its MLID picks: at most {by_mlid}");
            assert_smallest_cuts(&f, &rule, &r, &members);
        }
    }
}

/// The groups cut from the tree their MLID picks, as before groups took
/// the tree where they are smallest.
fn groups_by_mlid(f: &Fabric, m: &MasterTrees, members: &[(u16, Vec<PortRef>)]) -> Vec<GroupMft> {
    let rule = TreeRule::Masters(m.clone());
    members
        .iter()
        .map(|(mlid, ports)| {
            let t = &rule.trees_for(f, *mlid, 0, &[]).unwrap()[0];
            super::tree::cut(f, t, *mlid, 0, ports).unwrap()
        })
        .collect()
}

/// Every group forwards to no more ports than it would on any other tree
/// its SL may use.
fn assert_smallest_cuts(f: &Fabric, rule: &TreeRule, r: &Routing, members: &[(u16, Vec<PortRef>)]) {
    for (mlid, ports) in members {
        let built = build_group(f, rule, r, *mlid, 0, ports).unwrap();
        for t in rule.trees_for(f, *mlid, 0, &[]).unwrap() {
            let other = super::tree::cut(f, &t, *mlid, 0, ports).unwrap();
            assert!(built.size() <= other.size(), "group {mlid:#x}");
        }
    }
}

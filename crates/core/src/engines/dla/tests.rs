use super::*;
use crate::analysis::report::analyze;
use crate::fabric::{FabricBuilder, Lid, NodeKind, PortNum, PortRef};
use crate::gen::{self, degrade, dragonfly::Params};
use crate::routing::walk::trace;

/// A fully connected Dragonfly from the generator, LIDs assigned,
/// port numbers shuffled when `shuffle` is set.
fn dragonfly(a: usize, h: usize, p: usize, groups: usize, shuffle: Option<u64>) -> Fabric {
    let params = Params {
        groups,
        ..Params::new(a, h, p)
    };
    let fabric = crate::testkit::TestFabric::of(gen::dragonfly::dragonfly(&params).unwrap());
    match shuffle {
        Some(seed) => fabric.shuffled(seed),
        None => fabric,
    }
    .build()
}

/// Damage as the issue names it: fractions of switches, global and local
/// cables removed at random (seeded), ports shuffled.
fn damaged(a: usize, h: usize, p: usize, damage: (f64, f64, f64), seed: u64) -> Fabric {
    damaged_without_hosts(a, h, p, damage, 0.0, seed)
}

/// As `damaged`, and a fraction of the hosts gone too.
fn damaged_without_hosts(
    a: usize,
    h: usize,
    p: usize,
    (switches, global, local): (f64, f64, f64),
    hosts: f64,
    seed: u64,
) -> Fabric {
    let b = gen::dragonfly::dragonfly(&Params::new(a, h, p)).unwrap();
    let (b, _) = degrade::drop_switches(&b, switches, seed).unwrap();
    let (mut b, _) = degrade::drop_hosts(&b, hosts, seed).unwrap();
    for (fraction, want_global) in [(global, true), (local, false)] {
        degrade::drop_links_where(&mut b, fraction, seed, |x, y| {
            gen::dragonfly::is_global(x, y) == Some(want_global)
        })
        .unwrap();
    }
    let mut b = gen::shuffle_ports(&b, seed);
    b.assign_lids_sequential(0).unwrap();
    b.build().unwrap()
}

/// The generator's group of every switch.
fn true_group(f: &Fabric, s: SwitchId) -> usize {
    gen::dragonfly::group_of(f.switch_node(s)).unwrap()
}

/// What every host pair's path looks like.
#[derive(Debug, Default)]
struct Paths {
    pairs: usize,
    /// Most switch hops beyond the shortest path between the two switches.
    max_excess: usize,
    /// Pairs whose groups are joined and whose path is not Figure 4's
    /// (one global hop, at most one local hop either side) although the
    /// cables for it exist.
    not_minimal: usize,
    most_global_hops: usize,
}

fn paths(f: &Fabric, r: &Routing) -> Paths {
    let g = f.graph();
    let mut out = Paths::default();
    let cabled = |x: SwitchId, y: SwitchId| x == y || g.slot(x, y).is_some();
    for src in f.cas() {
        let Some(first) = f
            .port(PortRef::new(src, 1))
            .and_then(|p| p.remote)
            .and_then(|r| f.switch_id(r.node))
        else {
            continue;
        };
        for (dlid, owner) in f.ca_lids().filter(|(_, o)| o.node != src) {
            let hops = trace(f, &r.lfts, PortRef::new(src, 1), dlid)
                .unwrap_or_else(|e| panic!("{src} -> {dlid}: {e}"));
            let last = hops.last().unwrap().switch;
            assert_eq!(Some(last), f.lid_switch(dlid), "{owner:?}");
            let switches: Vec<SwitchId> = hops.iter().map(|h| h.switch).collect();
            let globals = switches
                .windows(2)
                .filter(|w| true_group(f, w[0]) != true_group(f, w[1]))
                .count();
            out.most_global_hops = out.most_global_hops.max(globals);
            let excess = switches.len() - 1 - g.dist(first, last) as usize;
            out.max_excess = out.max_excess.max(excess);
            let (ga, gb) = (true_group(f, first), true_group(f, last));
            if ga != gb {
                // Figure 4's path exists when some cable joins the groups
                // from a switch cabled to `first` to one cabled to `last`.
                let figure_4 = g.ids().any(|o| {
                    true_group(f, o) == ga
                        && cabled(first, o)
                        && g.cables(o)
                            .iter()
                            .any(|c| true_group(f, c.to) == gb && cabled(c.to, last))
                });
                let direct = g.ids().any(|o| {
                    true_group(f, o) == ga && g.cables(o).iter().any(|c| true_group(f, c.to) == gb)
                });
                if direct && figure_4 && (globals != 1 || switches.len() > 4) {
                    out.not_minimal += 1;
                }
            }
            out.pairs += 1;
        }
    }
    out
}

#[test]
fn defaults_are_what_the_options_say() {
    assert_eq!(
        DlaOptions::read(&Section::empty(NAME)).unwrap(),
        DlaOptions::default()
    );
}

#[test]
fn every_pair_takes_a_minimal_dragonfly_path() {
    for shuffle in [None, Some(7)] {
        let f = dragonfly(4, 2, 2, 9, shuffle);
        let r = route(&f, &DlaOptions::default()).unwrap();
        let p = paths(&f, &r);
        assert_eq!((p.not_minimal, p.most_global_hops), (0, 1), "{p:?}");
        assert_eq!(r.path_sl, crate::routing::PathSl::Uniform(0));
        assert_eq!(r.vls_needed(), 2);
    }
}

#[test]
fn groups_do_not_depend_on_port_numbering() {
    let plain = discover_groups(dragonfly(4, 2, 2, 9, None).graph()).unwrap();
    let shuffled = discover_groups(dragonfly(4, 2, 2, 9, Some(99)).graph()).unwrap();
    assert_eq!(plain, shuffled);
    assert_eq!(plain.members.len(), 9);
    assert!(plain.members.iter().all(|m| m.len() == 4));
}

#[test]
fn sl2vl_follows_figure_8() {
    let f = dragonfly(4, 2, 2, 9, Some(3));
    let r = route(
        &f,
        &DlaOptions {
            sl: 5,
            ..DlaOptions::default()
        },
    )
    .unwrap();
    let groups = discover_groups(f.graph()).unwrap();
    let sl2vl = r.sl2vl.as_ref().unwrap();
    let kind = |s: SwitchId, port: u8| -> &'static str {
        match f.switch_node(s).port(port).and_then(|p| p.remote) {
            None => "none",
            Some(r) => match f.switch_id(r.node) {
                None => "terminal",
                Some(t) if groups.of_switch[t.idx()] == groups.of_switch[s.idx()] => "local",
                Some(_) => "global",
            },
        }
    };
    let mut shifted = 0;
    for s in f.switch_ids() {
        let ports = f.switch_node(s).port_slots() as u8;
        for i in 0..ports {
            for o in 1..ports {
                let want = if kind(s, i) == "global" && kind(s, o) == "local" {
                    1
                } else {
                    0
                };
                shifted += want;
                let table = sl2vl.switch_table(s, PortNum::new(i), PortNum::new(o));
                assert_eq!(table, &[want; 16], "{s} in {i} out {o}");
            }
        }
    }
    // Each switch: h global in-ports times a-1 local out-ports.
    assert_eq!(shifted, 36 * 2 * 3);
    assert_eq!(r.path_sl.sl(Lid::from_raw(1), Lid::from_raw(2)), 5);
    assert_eq!(sl2vl.ca_table(&[9; 16])[5], 0);
    assert_eq!(
        sl2vl.ca_table(&[9; 16])[4],
        9,
        "other SLs keep OpenSM's mapping on CA ports"
    );
    assert_eq!(r.vls_needed(), 2);
}

#[test]
fn destinations_spread_evenly_over_parallel_global_links() {
    // 5 groups of 4 switches with h=2: 8 global ports per group, 4 other
    // groups, so two links join every pair of groups.
    let f = dragonfly(4, 2, 1, 5, None);
    let r = route(&f, &DlaOptions::default()).unwrap();
    let groups = discover_groups(f.graph()).unwrap();
    let group = |s: SwitchId| groups.of_switch[s.idx()];
    let mut per_link = std::collections::BTreeMap::new();
    for (dlid, owner) in f.ca_lids() {
        if group(f.lid_switch(dlid).unwrap()) != 1 {
            continue;
        }
        for &s in &groups.members[0] {
            let out = r.lfts[s].get(dlid);
            if f.graph().switch_behind(s, out).map(group) == Some(1) {
                per_link
                    .entry((s, out))
                    .or_insert_with(Vec::new)
                    .push((dlid, owner));
            }
        }
    }
    let counts: Vec<usize> = per_link.values().map(Vec::len).collect();
    assert_eq!(
        counts.len(),
        2,
        "two global links from group 0 to group 1: {per_link:?}"
    );
    assert!(
        counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1,
        "{counts:?}"
    );
}

#[test]
fn table_shortcuts_give_the_ports_next_hop_gives() {
    for f in [
        dragonfly(4, 2, 2, 9, Some(3)),
        dragonfly(4, 2, 1, 5, Some(4)),
        damaged(6, 3, 1, (0.05, 0.1, 0.05), 3),
    ] {
        let plan = Plan::new(f.graph(), find_groups(f.graph()).unwrap()).unwrap();
        let dests = tables::destinations(&f, &plan);
        let detours = tables::DetourRoutes::new(&plan, &dests);
        let filled = tables::forwarding_tables(&f, &plan, &dests, &detours, 0);
        for (s, lft) in f.switch_ids().zip(&filled.lfts) {
            for d in &dests {
                assert_eq!(
                    lft.get(d.lid),
                    tables::next_hop(&plan, &detours, s, d).0,
                    "{s}, LID {}",
                    d.lid
                );
            }
        }
    }
}

/// The damage, all at once, on Dragonflies of 72, 342 and 1,056
/// hosts: every host pair delivered on Figure 4's path where the fabric
/// still has it, no credit loop, at most 3 VLs (no reserve layer), and the
/// loops found when the VLs go. Detours are at most 2 switch hops longer
/// than the fabric's shortest path: where a local detour would be longer,
/// an entry through a neighbouring group or a switch's own cable into one
/// (`entry`) takes the two global hops.
/// Hosts missing as well (a third of them, leaving switches without any):
/// dla routes by switches, so the hosts that remain are delivered on the
/// same paths, loop-free.
#[test]
fn missing_hosts_change_nothing_but_the_destinations() {
    for seed in 1..=3 {
        let f = damaged_without_hosts(6, 3, 3, (0.05, 0.10, 0.05), 0.34, seed);
        let hostless = f.graph().ids().filter(|&s| f.graph().hosts(s) == 0).count();
        assert!(
            hostless > 0,
            "seed {seed}: the test needs switches without hosts"
        );
        let r = route(&f, &DlaOptions::default()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let report = analyze(&f, &r);
        assert!(report.delivered(), "seed {seed}: {:?}", report.failures);
        assert!(
            report.credit_loop.is_none(),
            "seed {seed}: credit loop {:?}",
            report.credit_loop
        );
        assert!(r.vls_needed() <= 3, "seed {seed}: {} VLs", r.vls_needed());
        assert_eq!(paths(&f, &r).not_minimal, 0, "seed {seed}");
    }
}

#[test]
fn damaged_dragonflies_are_routed_without_credit_loops() {
    let mut detoured = 0;
    for (a, h, p, seeds) in [(4, 2, 2, 1..=6), (6, 3, 3, 1..=4), (8, 4, 4, 1..=2)] {
        for seed in seeds {
            let f = damaged(a, h, p, (0.05, 0.10, 0.05), seed);
            let r = route(&f, &DlaOptions::default())
                .unwrap_or_else(|e| panic!("a={a} seed {seed}: {e}"));
            let report = analyze(&f, &r);
            assert!(
                report.delivered(),
                "a={a} seed {seed}: {:?}",
                report.failures
            );
            assert!(
                report.credit_loop.is_none(),
                "a={a} seed {seed}: credit loop {:?}",
                report.credit_loop
            );
            assert!(
                r.vls_needed() <= 3,
                "a={a} seed {seed}: {} VLs",
                r.vls_needed()
            );
            let p = paths(&f, &r);
            assert_eq!(p.not_minimal, 0, "a={a} seed {seed}: {p:?}");
            assert!(p.max_excess <= 2, "a={a} seed {seed}: {p:?}");
            detoured += usize::from(p.most_global_hops == 2);
            if seed == 1 {
                let flat = Routing { sl2vl: None, ..r };
                assert!(
                    analyze(&f, &flat).credit_loop.is_some(),
                    "a={a}: the check must be able to fail"
                );
            }
        }
    }
    assert_eq!(
        detoured, 12,
        "every fabric lost some pair of groups' cables"
    );
}

/// Local damage alone: every pair of groups keeps its cables, so paths
/// take one global hop, but for entries through a neighbouring group
/// (`entry`) where the cable lands far from the destination or a switch
/// has a shorter way out of its own: those are the only paths with two
/// global hops, on the entry SLs, and the VLs stay at 3.
#[test]
fn local_damage_alone_takes_two_global_hops_only_on_entries() {
    let mut entries = 0;
    for seed in 1..=4 {
        let f = damaged(6, 3, 2, (0.0, 0.0, 0.08), seed);
        let r = route(&f, &DlaOptions::default()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let report = analyze(&f, &r);
        assert!(
            report.delivered() && report.credit_loop.is_none(),
            "seed {seed}"
        );
        let p = paths(&f, &r);
        assert!(
            p.most_global_hops <= 2 && p.not_minimal == 0,
            "seed {seed}: {p:?}"
        );
        assert!(r.vls_needed() <= 3, "seed {seed}");
        if r.path_sl == crate::routing::PathSl::Uniform(0) {
            assert_eq!(r.vls_needed(), 2, "seed {seed}");
            continue;
        }
        let entry_sls = plan::ENTRY_OFFSET..=plan::LAST_ENTRY_OFFSET;
        for src in f.cas() {
            let (slid, _) = f.lids().find(|(_, o)| o.node == src).unwrap();
            for (dlid, owner) in f.ca_lids().filter(|(_, o)| o.node != src) {
                let hops = trace(&f, &r.lfts, PortRef::new(src, 1), dlid).unwrap();
                let globals = hops
                    .windows(2)
                    .filter(|w| true_group(&f, w[0].switch) != true_group(&f, w[1].switch))
                    .count();
                let sl = r.path_sl.sl(slid, dlid);
                if globals == 2 {
                    assert!(
                        entry_sls.contains(&sl),
                        "seed {seed}: {src} -> {owner:?} has two global hops on SL {sl}"
                    );
                    entries += 1;
                }
            }
        }
    }
    assert!(entries > 0, "some switch or group takes an entry");
}

/// The link-equivalence mapping's tolerance (40 % of switches and 10 % of
/// cables gone, `topology::mapping`'s test) on the paper's Dragonfly with
/// groups of 16, in both global arrangements. Some pairs of groups are
/// three global hops apart there, which no middle group bridges: their
/// paths take the reserve layers, and dla still routes the fabric.
#[test]
fn dragonflies_at_the_mappings_tolerance_are_routed() {
    let consecutive = Params::new(16, 8, 1);
    let palmtree = Params {
        arrangement: gen::dragonfly::Arrangement::Palmtree,
        ..consecutive
    };
    for (seed, params) in [(1, consecutive), (2, palmtree)] {
        let b = gen::dragonfly::dragonfly(&params).unwrap();
        let (mut b, _) = degrade::drop_switches(&b, 0.40, seed).unwrap();
        degrade::drop_links(&mut b, 0.10, seed).unwrap();
        assert!(degrade::switches_connected(&b));
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let r = route(&f, &DlaOptions::default()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let report = analyze(&f, &r);
        assert!(
            report.delivered() && report.credit_loop.is_none(),
            "seed {seed}: {:?}",
            report.failures
        );
        assert!(
            r.vls_needed() > 3,
            "seed {seed}: the reserve layers were needed"
        );
        assert!(r.vls_needed() <= 8, "seed {seed}: {} VLs", r.vls_needed());
    }
}

/// Reserve layers are checked like the rest: without their own VLs (every
/// reserve SL sent on VL 0) the same fabric has a credit loop.
#[test]
fn reserve_layers_need_their_own_vls() {
    let b = gen::dragonfly::dragonfly(&Params::new(16, 8, 1)).unwrap();
    let (mut b, _) = degrade::drop_switches(&b, 0.40, 1).unwrap();
    degrade::drop_links(&mut b, 0.10, 1).unwrap();
    b.assign_lids_sequential(0).unwrap();
    let f = b.build().unwrap();
    let mut r = route(&f, &DlaOptions::default()).unwrap();
    let sl2vl = r.sl2vl.as_mut().unwrap();
    for s in f.switch_ids() {
        let ports = f.switch_node(s).port_slots() as u8;
        for (i, o) in (0..ports).flat_map(|i| (0..ports).map(move |o| (i, o))) {
            let (i, o) = (PortNum::new(i), PortNum::new(o));
            let mut table = *sl2vl.switch_table(s, i, o);
            table[1 + plan::LAST_ENTRY_OFFSET as usize..].fill(0);
            sl2vl.set_switch(s, i, o, table);
        }
    }
    assert!(analyze(&f, &r).credit_loop.is_some());
}

/// One global cable fails: only routes that crossed it move.
#[test]
fn one_failed_global_cable_moves_only_what_crossed_it() {
    let intact = dragonfly(6, 3, 3, 19, Some(2));
    let before = route(&intact, &DlaOptions::default()).unwrap();
    let g = intact.graph();
    let (s, cable) = g
        .ids()
        .flat_map(|s| g.cables(s).iter().map(move |c| (s, *c)))
        .find(|&(s, c)| true_group(&intact, s) != true_group(&intact, c.to))
        .unwrap();
    let mut b = FabricBuilder::new();
    for n in intact.nodes() {
        b.add_node(n.kind, n.guid, n.desc.clone(), n.port_slots() as u8 - 1);
    }
    for id in intact.node_ids() {
        for (port, peer) in intact.node(id).links() {
            b.connect(PortRef::new(id, port), peer).unwrap();
        }
    }
    for (at, port) in intact.end_ports() {
        b.set_lid(at, port.lid, port.lmc).unwrap();
    }
    b.disconnect(PortRef::new(intact.switches()[s], cable.port));
    let broken = b.build().unwrap();
    let after = route(&broken, &DlaOptions::default()).unwrap();
    let churn = crate::analysis::churn::churn((&intact, &before.lfts), (&broken, &after.lfts));
    assert_eq!(churn.cables_lost, 1);
    assert!(churn.crossed > 0);
    assert!(churn.changed <= 2 * churn.crossed, "{churn:?}");
    let report = analyze(&broken, &after);
    assert!(report.delivered() && report.credit_loop.is_none());
}

#[test]
fn declines_what_is_not_a_dragonfly_and_names_switches() {
    // A ring: no switch closes a triangle with its neighbours.
    let mut b = FabricBuilder::new();
    let s: Vec<_> = (0..6)
        .map(|i| b.add_node(NodeKind::Switch, 0x10 + i, format!("ring{i}"), 3))
        .collect();
    for i in 0..6 {
        b.connect(PortRef::new(s[i], 1), PortRef::new(s[(i + 1) % 6], 2))
            .unwrap();
        let h = b.add_node(NodeKind::Ca, 0x100 + i as u64 * 2, "", 1);
        b.connect(PortRef::new(h, 1), PortRef::new(s[i], 3))
            .unwrap();
    }
    b.assign_lids_sequential(0).unwrap();
    let err = route(&b.build().unwrap(), &DlaOptions::default()).unwrap_err();
    assert_eq!(err.decline(), Some(Decline::NotItsTopology), "{err}");
    let err = err.to_string();
    assert!(
        err.contains("not a Dragonfly:") && err.contains("(ring"),
        "{err}"
    );
    // A fat tree: no triangles either.
    let mut tree = gen::fattree::fattree(4, 3).unwrap();
    tree.assign_lids_sequential(0).unwrap();
    let err = route(&tree.build().unwrap(), &DlaOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a Dragonfly"), "{err}");
}

#[test]
fn declines_a_fabric_in_pieces() {
    let full = dragonfly(3, 1, 1, 4, None);
    let mut b = FabricBuilder::new();
    for n in full.nodes() {
        b.add_node(n.kind, n.guid, n.desc.clone(), n.port_slots() as u8 - 1);
    }
    // Keep only local cables and hosts: four separate groups.
    for id in full.node_ids() {
        for (port, peer) in full.node(id).links() {
            let global = match (full.switch_id(id), full.switch_id(peer.node)) {
                (Some(x), Some(y)) => true_group(&full, x) != true_group(&full, y),
                _ => false,
            };
            if !global {
                b.connect(PortRef::new(id, port), peer).unwrap();
            }
        }
    }
    b.assign_lids_sequential(0).unwrap();
    let err = route(&b.build().unwrap(), &DlaOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("the fabric is in pieces"), "{err}");
}

#[test]
fn neighbourhood_discovery_alone_declines_damage_and_points_to_auto() {
    let f = damaged(5, 2, 1, (0.0, 0.0, 0.1), 1);
    let options = DlaOptions {
        groups: GroupDiscovery::Neighbourhood,
        ..DlaOptions::default()
    };
    let err = route(&f, &options).unwrap_err().to_string();
    assert!(err.contains("dla.groups auto"), "{err}");
    assert!(route(&f, &DlaOptions::default()).is_ok());
}

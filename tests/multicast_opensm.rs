//! Multicast under the distribution's OpenSM on ibsim, with hosts joining
//! groups by SA MCMemberRecord Set: the broadcast group and 100 random
//! groups of 2-24 hosts. Our engines build the trees; the MFTs read back
//! from the switches equal OpenSM's dump; `osmroute check` finds no credit
//! loop in unicast and multicast together and every member reached once;
//! groups survive a re-sweep after a cable fails. pssp keeps VL 0 for
//! multicast on SL 0, or places unicast around the tree where no VL is
//! left, so every group on SL 0 gets a checked tree; for contrast, pssp
//! without either (`pssp.multicast_vl FALSE`, `pssp.multicast_tree
//! FALSE`, as before) and OpenSM's own default trees (or its own rule's
//! OpenSM-like tree on SL 0) has the cycle the broadcast tree closes with
//! its unicast.

mod harness;

use std::collections::HashMap;
use std::time::Duration;

use harness::live::Live;
use harness::multicast::{
    hosts, join_all, join_all_on, members_per_group, random_groups, read_back_mfts, sa_group,
    settled_mcfdbs, BROADCAST,
};
use harness::{osmroute, OpenSm, Sim};
use osmroute_core::gen::{self, dragonfly};
use osmroute_core::io::netfile;

fn dragonfly_net(a: usize, h: usize, p: usize) -> String {
    let b = dragonfly::dragonfly(&dragonfly::Params::new(a, h, p)).expect("valid parameters");
    netfile::write(&gen::shuffle_ports(&b, 5))
}

/// `osmroute check` on the pass's dumps: its report, and whether it passed.
fn check(osm: &OpenSm) -> (bool, String) {
    check_on(osm, 0)
}

/// `check` with the groups on `sl`.
fn check_on(osm: &OpenSm, sl: u8) -> (bool, String) {
    let sl = sl.to_string();
    osmroute(&[
        "check",
        osm.dir.to_str().expect("UTF-8"),
        "--patterns",
        "0",
        "--mcast-sl",
        &sl,
    ])
}

/// Joins, waits for the trees and checks everything the trees must meet;
/// returns the members per MLID.
fn join_and_check(
    sim: &Sim,
    osm: &OpenSm,
    net: &str,
    groups: &[(String, Vec<String>)],
) -> HashMap<u16, usize> {
    join_and_check_on(sim, osm, net, groups, 0)
}

/// `join_and_check` with every group on `sl`.
fn join_and_check_on(
    sim: &Sim,
    osm: &OpenSm,
    net: &str,
    groups: &[(String, Vec<String>)],
    sl: u8,
) -> HashMap<u16, usize> {
    let mlids = join_all_on(sim, groups, sl);
    assert_eq!(
        mlids.get(BROADCAST),
        Some(&0xC000),
        "OpenSM's own broadcast group"
    );
    let dumped = settled_mcfdbs(osm, groups.len());
    for (mgid, _) in groups {
        assert_eq!(
            sa_group(sim, mgid),
            vec![(mgid.clone(), mlids[mgid])],
            "saquery MCMR --mgid {mgid}"
        );
    }
    assert_eq!(
        read_back_mfts(sim),
        dumped,
        "the switches hold what OpenSM dumped"
    );
    let members = members_per_group(&dumped, net);
    for (mgid, hosts) in groups {
        let mlid = mlids[mgid];
        assert_eq!(
            members.get(&mlid),
            Some(&hosts.len()),
            "{mgid} (MLID {mlid:#x})"
        );
    }
    let (ok, report) = check_on(osm, sl);
    assert!(
        ok && report.contains("credit loops with multicast: none") && !report.contains("FAIL"),
        "{report}"
    );
    assert!(
        report.contains(&format!("multicast groups: {}", groups.len())),
        "{report}"
    );
    osm.assert_no_errors();
    members
}

#[test]
fn dla_builds_loop_free_trees_on_a_dragonfly_intact_and_damaged() {
    let net = dragonfly_net(4, 2, 2);
    let mut live = Live::start("mcast-dla", "dla", net.clone());
    let groups = random_groups(&hosts(&net), 100, 11);
    let before = join_and_check(&live.sim, &live.osm, &net, &groups);
    assert!(
        live.osm.lines_with("multicast:").is_empty(),
        "dla has trees of its own here: {:?}",
        live.osm.lines_with("multicast:")
    );
    // A local cable of group 3 fails: dla routes the damaged Dragonfly and
    // its groups get a tree checked at routing time.
    let (switch, port) = cable_between(&net, "df-g3-s0", "df-g3-s1");
    live.faults(&[format!("unlink \"{switch}\"[{port}]")]);
    after_the_failure(&live, &net, groups.len(), &before);
}

/// After a cable failure and the re-sweep: the MFTs on the switches equal
/// the dump, every group keeps its members, no credit loop, and the trees
/// are still the engine's.
fn after_the_failure(live: &Live, net: &str, groups: usize, before: &HashMap<u16, usize>) {
    let dumped = settled_mcfdbs(&live.osm, groups);
    assert_eq!(read_back_mfts(&live.sim), dumped);
    assert_eq!(
        &members_per_group(&dumped, net),
        before,
        "every group keeps its members"
    );
    let (ok, report) = check(&live.osm);
    assert!(
        ok && report.contains("credit loops with multicast: none") && !report.contains("FAIL"),
        "{report}"
    );
    live.osm.assert_no_errors();
    let fallback = unchecked_trees(&live.osm);
    assert!(
        fallback.is_empty(),
        "the engine's own checked trees, not OpenSM's: {fallback:?}"
    );
}

/// The log lines that say some groups get trees nothing checked.
fn unchecked_trees(osm: &OpenSm) -> Vec<String> {
    let mut lines = osm.lines_with("which nothing checks");
    lines.extend(osm.lines_with("checked against credit loops only"));
    lines
}

/// An inter-switch cable of the last switch (by GUID) with hosts, away
/// from the SM's host (the first node of the net file): (switch, port).
fn a_cable_away_from_the_sm(net: &str) -> (String, u8) {
    let fabric = fabric_of(net);
    let g = fabric.graph();
    let switch = fabric
        .switch_ids()
        .filter(|&s| g.hosts(s) > 0 && !g.cables(s).is_empty())
        .last()
        .expect("a switch with hosts and cables");
    let port = g.cables(switch)[0].port;
    (fabric.switch_node(switch).desc.clone(), port.raw())
}

/// Joins 100 random groups and the broadcast group under `engine`, checks
/// them, fails a cable and checks them again after the re-sweep; the
/// simulation, for more questions to its log.
fn groups_survive_a_cable_failure(
    name: &str,
    engine: &str,
    net: String,
    env: &[(&str, &str)],
) -> Live {
    let mut live = Live::start_with(name, engine, net.clone(), env);
    let groups = random_groups(&hosts(&net), 100, 13);
    let before = join_and_check(&live.sim, &live.osm, &net, &groups);
    assert!(
        unchecked_trees(&live.osm).is_empty(),
        "{engine}: {:?}",
        live.osm.lines_with("multicast")
    );
    let (switch, port) = a_cable_away_from_the_sm(&net);
    live.faults(&[format!("unlink \"{switch}\"[{port}]")]);
    after_the_failure(&live, &net, groups.len(), &before);
    live
}

/// The port of switch `a` cabled to switch `b` (net-file names).
fn cable_between(net: &str, a: &str, b: &str) -> (String, u8) {
    let fabric = fabric_of(net);
    let find = |name: &str| {
        fabric
            .switch_ids()
            .find(|&s| fabric.switch_node(s).desc == name)
            .unwrap_or_else(|| panic!("no switch {name}"))
    };
    let (sa, sb) = (find(a), find(b));
    let port = fabric.graph().bundle(sa, sb)[0];
    (a.to_string(), port.raw())
}

fn fabric_of(net: &str) -> osmroute_core::Fabric {
    let mut b = netfile::read(net).expect("net");
    b.assign_lids_sequential(0).expect("LIDs");
    b.build().expect("fabric")
}

#[test]
fn mlid_trees_survive_a_cable_failure_on_a_fat_tree() {
    // 6 leaves of 8 hosts, 4 spines, 2 cables between every leaf and spine.
    let b = gen::pgft::pgft(&gen::pgft::Pgft::leaf_spine(6, 8, 4, 2)).expect("PGFT");
    let net = netfile::write(&gen::shuffle_ports(&b, 3));
    let mut live = Live::start("mcast-mlid", "mlid", net.clone());
    let groups = random_groups(&hosts(&net), 100, 12);
    let before = join_and_check(&live.sim, &live.osm, &net, &groups);
    // A leaf-spine cable of a leaf the SM's host is not on.
    let victim = last_leaf_uplink(&net);
    live.faults(&[format!("unlink \"{}\"[{}]", victim.0, victim.1)]);
    let dumped = settled_mcfdbs(&live.osm, groups.len());
    assert_eq!(read_back_mfts(&live.sim), dumped);
    let after = members_per_group(&dumped, &net);
    assert_eq!(before, after, "every group keeps its members");
    let (ok, report) = check(&live.osm);
    assert!(
        ok && report.contains("credit loops with multicast: none"),
        "{report}"
    );
}

/// The small director twin with an Aggregation Node on every chip, ports
/// shuffled: mlid places paths on virtual layers there. The Aggregation
/// Nodes get short node ids (`AN leaf000`), their real description as
/// the ibnetdiscover comment: umad2sim passes ibsim at most 31
/// characters of SIM_HOST, too few for `Mellanox Technologies
/// Aggregation Node leaf000`, and they join groups like hosts.
fn director_twin_with_aggregation_nodes() -> String {
    let net = harness::generate_shuffled(
        &[
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
            "--aggregation-nodes",
        ],
        5,
    );
    let long = format!("{} ", osmroute_core::gen::field::AGGREGATION_DESC);
    net.lines()
        .map(|line| {
            let short = line.replace(&long, "AN ");
            match line.strip_prefix("Hca").and_then(|l| l.split('"').nth(1)) {
                Some(name) if name.starts_with(&long) => format!("{short} # \"{name}\""),
                _ => short,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// mlid where it places paths on virtual layers (Aggregation Nodes on the
/// line chips of two directors), by default with VL 0 kept for SL 0
/// (`mlid.multicast_vl`): the broadcast group, joined by every CA,
/// Aggregation Nodes on every chip of both directors included, and 100
/// groups of hosts get checked trees (no warning of an unchecked tree),
/// and keep them after a cable fails; `osmroute check` finds no credit
/// loop with multicast either time.
#[test]
fn mlid_checked_trees_for_every_ca_on_a_director_twin_with_aggregation_nodes() {
    let net = director_twin_with_aggregation_nodes();
    let every_ca = hosts(&net);
    let hosts: Vec<String> = every_ca
        .iter()
        .filter(|h| !h.starts_with("AN "))
        .cloned()
        .collect();
    assert!(every_ca.len() > hosts.len(), "Aggregation Nodes to join");
    let mut live = Live::start("mcast-mlid-twin", "mlid", net.clone());
    let mut groups = random_groups(&hosts, 100, 17);
    groups[0].1 = every_ca;
    let before = join_and_check(&live.sim, &live.osm, &net, &groups);
    assert!(
        unchecked_trees(&live.osm).is_empty(),
        "{:?}",
        live.osm.lines_with("multicast")
    );
    let (switch, port) = a_cable_away_from_the_sm(&net);
    live.faults(&[format!("unlink \"{switch}\"[{port}]")]);
    after_the_failure(&live, &net, groups.len(), &before);
}

/// The same twin with `mlid.multicast_vl FALSE` (unicast layer 0 on SL 0,
/// as before it was on by default): no checked tree holds the broadcast
/// group of every CA, which gets OpenSM's kind of tree with a warning.
#[test]
fn mlid_without_a_multicast_vl_leaves_the_broadcast_group_of_every_ca_unchecked() {
    let net = director_twin_with_aggregation_nodes();
    let mut sim = Sim::start("mcast-mlid-novl", &net);
    let osm = sim.opensm_configured(
        &["routing_engine mlid", "qos TRUE"],
        "mlid.multicast_vl FALSE\n",
    );
    osm.wait_for("SUBNET UP", Duration::from_secs(120));
    let groups = vec![(BROADCAST.to_string(), hosts(&net))];
    join_all(&sim, &groups);
    settled_mcfdbs(&osm, 1);
    let warned = osm.lines_with("multicast MLID 0xC000");
    assert!(
        warned
            .iter()
            .any(|l| l.contains("holds every member's switch")
                && l.contains("OpenSM's kind of tree")),
        "{:?}",
        osm.lines_with("multicast")
    );
}

/// A cable from the last leaf of the net file up to a spine: (leaf, port).
fn last_leaf_uplink(net: &str) -> (String, u8) {
    let fabric = fabric_of(net);
    let g = fabric.graph();
    let leaf = fabric
        .switch_ids()
        .filter(|&s| g.hosts(s) > 0)
        .last()
        .expect("a leaf");
    let port = g.cables(leaf)[0].port;
    (fabric.switch_node(leaf).desc.clone(), port.raw())
}

/// Engines whose tree is checked at routing time: sfmin on a Slim Fly and
/// hxdor on a HyperX, with the broadcast group and 100 random groups,
/// before and after a cable fails.
#[test]
fn sfmin_and_hxdor_build_checked_trees_that_survive_a_cable_failure() {
    for (engine, family) in [
        ("sfmin", &["slimfly", "--q", "5", "--p", "2"][..]),
        ("hxdor", &["hyperx", "--dims", "3,3", "--p", "4"][..]),
    ] {
        let net = harness::generate_shuffled(family, 7);
        groups_survive_a_cable_failure(&format!("mcast-{engine}"), engine, net, &[]);
    }
}

/// mlid on the PGFT of issue 30 with 3 hosts on its top switches (its two
/// VL case: down-then-up paths on VL 1): every tree turns up into the tops
/// at one switch below them, so SL-0 groups get trees of the rule, with no
/// warning, before and after a leaf's cable fails.
#[test]
fn mlid_trees_reach_hosts_on_the_top_switches() {
    let net = harness::generate_shuffled(
        &[
            "pgft",
            "--down",
            "4,6",
            "--up",
            "1,3",
            "--parallel",
            "1,2",
            "--top-hosts",
            "3",
        ],
        5,
    );
    groups_survive_a_cable_failure("mcast-mlid-tops", "mlid", net, &[]);
}

/// pssp with as many VLs as its layering needs (`pssp.max_vls 3` on the
/// Dragonfly a=4, h=2, p=2): no VL is left for multicast, unicast layer 0
/// shares VL 0 with SL 0, and the layering places it around the master
/// tree, so SL-0 groups still get checked trees, before and after a cable
/// fails.
#[test]
fn pssp_without_a_multicast_vl_places_unicast_around_the_tree() {
    let net = dragonfly_net(4, 2, 2);
    let dir = std::env::temp_dir().join(format!("osmroute-mcast-tight-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let conf = dir.join("tight.conf");
    std::fs::write(&conf, "pssp.max_vls 3\n").expect("write osmroute.conf");
    let conf = conf.display().to_string();
    groups_survive_a_cable_failure(
        "mcast-pssp-tight",
        "pssp",
        net,
        &[("OSMROUTE_CONFIG", conf.as_str())],
    );
}

/// OpenSM's own default tree (the plugin told to leave the trees to it)
/// with pssp's unicast on SL 0 too and not placed around a tree
/// (`pssp.multicast_vl FALSE`, `pssp.multicast_tree FALSE`): the cycle the
/// issue measured. pssp's own rule then gives SL-0 groups the same kind of
/// tree, with a warning.
#[test]
fn pssp_with_opensm_default_broadcast_tree_has_a_credit_loop() {
    for opensm_trees in [true, false] {
        pssp_broadcast_on_sl0(opensm_trees);
    }
}

fn pssp_broadcast_on_sl0(opensm_trees: bool) {
    let net = dragonfly_net(4, 2, 2);
    let mut sim = Sim::start("mcast-pssp", &net);
    let conf = sim.dir.join("no-multicast-vl.conf");
    std::fs::write(
        &conf,
        "pssp.multicast_vl FALSE\npssp.multicast_tree FALSE\n",
    )
    .expect("write osmroute.conf");
    let conf = conf.display().to_string();
    let mut env = vec![("OSMROUTE_CONFIG", conf.as_str())];
    if opensm_trees {
        env.push(("OSMROUTE_OPENSM_MULTICAST", "1"));
    }
    let osm = sim.opensm(&["routing_engine pssp", "qos TRUE"], &env);
    osm.wait_for("SUBNET UP", Duration::from_secs(120));
    let all = hosts(&net);
    join_all(&sim, &[(BROADCAST.to_string(), all.clone())]);
    let dumped = settled_mcfdbs(&osm, 1);
    assert_eq!(
        members_per_group(&dumped, &net).get(&0xC000),
        Some(&all.len())
    );
    let fallback = osm.lines_with("pssp: multicast:");
    if opensm_trees {
        assert!(osm.log().contains("OSMROUTE_OPENSM_MULTICAST is set"));
        assert!(fallback.is_empty(), "OpenSM's own trees: {fallback:?}");
    } else {
        assert!(
            fallback
                .iter()
                .filter(|l| l.contains("checked against credit loops only"))
                .count()
                == 1,
            "pssp's master trees do not pass the check on SL 0 here: {fallback:?}"
        );
        // Checked alone, the broadcast group fits no tree either: it keeps
        // OpenSM's kind, with the reason.
        let refused = osm.lines_with("multicast MLID 0xC000");
        assert!(
            refused.iter().any(
                |l| l.contains("each tree of its own tried closes a credit loop")
                    && l.contains("OpenSM's kind of tree")
            ),
            "{refused:?}"
        );
    }
    let (ok, report) = check(&osm);
    assert!(!ok, "{report}");
    assert!(
        report.contains("credit loops: none ("),
        "unicast alone is acyclic: {report}"
    );
    assert!(
        report.contains("credit loops with multicast: FOUND") && report.contains("group 0xC000"),
        "{report}"
    );
}

/// pssp by default: unicast on SLs 1.., VL 0 left to SL 0, so the
/// broadcast group and 100 random groups on SL 0 (no partitions.conf)
/// get checked trees, with no credit loop and no warning, before and after
/// a cable fails.
#[test]
fn pssp_groups_on_sl0_get_checked_trees_by_default() {
    let live =
        groups_survive_a_cable_failure("mcast-pssp-sl0", "pssp", dragonfly_net(4, 2, 2), &[]);
    assert!(
        !live.osm.lines_with("VL 0 carries only SL 0").is_empty(),
        "the layering left VL 0 to multicast"
    );
}

/// Groups of two hosts on one switch or on two cabled switches: their
/// trees turn between switches nowhere (a packet from a switch goes only
/// to a host, whose channel leads nowhere), so each passes checked alone
/// whatever unicast does on its SL.
fn pairs_without_turns(net: &str, n: usize) -> Vec<(String, Vec<String>)> {
    use osmroute_core::fabric::Peer;
    let fabric = fabric_of(net);
    let g = fabric.graph();
    let hosts_of = |s| -> Vec<String> {
        g.peers(s)
            .iter()
            .filter_map(|p| match p {
                Some(Peer::Ca(ca)) => Some(fabric.node(ca.node).desc.clone()),
                _ => None,
            })
            .collect()
    };
    let mut out = Vec::new();
    for s in fabric.switch_ids() {
        let here = hosts_of(s);
        let Some(t) = g
            .neighbours(s)
            .iter()
            .copied()
            .find(|&t| !hosts_of(t).is_empty())
        else {
            continue;
        };
        if here.len() >= 2 {
            out.push(vec![here[0].clone(), here[1].clone()]);
        }
        if let Some(h) = here.first() {
            out.push(vec![h.clone(), hosts_of(t)[0].clone()]);
        }
    }
    out.into_iter()
        .take(n)
        .enumerate()
        .map(|(i, hosts)| (format!("ff12:5678::{:x}", i + 1), hosts))
        .collect()
}

/// pssp keeps VL 0 for SL 0 and checks master trees on SLs 0 and 3-15;
/// groups created on its unicast SL 2 get trees of their own, checked at
/// creation against unicast and the groups kept before (before, OpenSM's
/// kind of tree, unchecked, with a warning): no unchecked tree is
/// logged, the switches hold what OpenSM dumped, and `osmroute check`
/// with the groups on SL 2 finds no credit loop.
#[test]
fn pssp_groups_on_a_unicast_sl_get_trees_checked_alone() {
    let net = dragonfly_net(4, 2, 2);
    let mut sim = Sim::start("mcast-pssp-alone", &net);
    let osm = sim.opensm(&["routing_engine pssp", "qos TRUE"], &[]);
    osm.wait_for("SUBNET UP", Duration::from_secs(120));
    let groups = pairs_without_turns(&net, 12);
    assert_eq!(groups.len(), 12);
    let mlids = join_all_on(&sim, &groups, 2);
    let dumped = settled_mcfdbs(&osm, groups.len());
    assert_eq!(
        read_back_mfts(&sim),
        dumped,
        "the switches hold what OpenSM dumped"
    );
    assert!(
        !osm.lines_with("are checked one by one against unicast")
            .is_empty(),
        "{:?}",
        osm.lines_with("multicast")
    );
    assert!(
        unchecked_trees(&osm).is_empty(),
        "{:?}",
        osm.lines_with("multicast")
    );
    let per_group: Vec<String> = mlids.values().map(|m| format!("{m:#06X}=2")).collect();
    let mut args = vec!["check", osm.dir.to_str().expect("UTF-8"), "--patterns", "0"];
    for sl in &per_group {
        args.extend(["--mcast-sl", sl.as_str()]);
    }
    let (ok, report) = osmroute(&args);
    assert!(
        ok && report.contains("credit loops with multicast: none") && !report.contains("FAIL"),
        "{report}"
    );
    osm.assert_no_errors();
}

/// OpenSM deletes a group when its last full member leaves, clearing its
/// MFTs without calling the engine, so the plugin learns of it only by
/// asking OpenSM which MLIDs still have a group, which it does before it
/// checks the next group alone: the deleted group's kept flood is dropped
/// then, with a log line naming its MLID. On pssp's unicast SL 2 (no
/// master tree): group B gets one member, group A a full member and a
/// non-member (a tree of its own, checked, its flood kept); A's full
/// member leaves, which deletes A with both ports (the plugin never sees
/// it shrink); nothing is dropped until B's second member joins, and then
/// A's flood, and nothing else, is.
#[test]
fn pssp_drops_the_flood_of_a_group_opensm_deleted() {
    use harness::multicast::{join, join_as, leave, FULL_MEMBER, NON_MEMBER};
    const DROPPED: &str = "OpenSM no longer has the group";
    let net = dragonfly_net(4, 2, 2);
    let mut sim = Sim::start("mcast-pssp-gone", &net);
    let osm = sim.opensm(&["routing_engine pssp", "qos TRUE"], &[]);
    osm.wait_for("SUBNET UP", Duration::from_secs(120));
    let pairs = pairs_without_turns(&net, 2);
    let [(mgid_b, hosts_b), (mgid_a, hosts_a)] = [pairs[0].clone(), pairs[1].clone()];
    let mlid_of = |joined: Vec<(String, u16)>| joined[0].1;
    let mlid_b = mlid_of(join(&sim, &hosts_b[0], &[&mgid_b], 2));
    let mlid_a = mlid_of(join(&sim, &hosts_a[0], &[&mgid_a], 2));
    join_as(&sim, &hosts_a[1], &[&mgid_a], 2, NON_MEMBER);
    assert_ne!(mlid_a, mlid_b);
    let with_a = settled_mcfdbs(&osm, 1);
    assert!(
        with_a.values().any(|t| t.contains_key(&mlid_a)),
        "{with_a:?}"
    );
    assert!(
        !osm.lines_with("are checked one by one against unicast")
            .is_empty(),
        "A was not checked alone: {:?}",
        osm.lines_with("multicast")
    );

    leave(&sim, &hosts_a[0], &[&mgid_a], FULL_MEMBER);
    settled_mcfdbs(&osm, 0);
    assert!(
        osm.lines_with(DROPPED).is_empty(),
        "dropped before any group was checked: {:?}",
        osm.lines_with(DROPPED)
    );

    join(&sim, &hosts_b[1], &[&mgid_b], 2);
    let with_b = settled_mcfdbs(&osm, 1);
    assert!(
        with_b.values().any(|t| t.contains_key(&mlid_b)),
        "{with_b:?}"
    );
    osm.wait_for(DROPPED, Duration::from_secs(30));
    let dropped = osm.lines_with(DROPPED);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert!(
        dropped[0].contains(&format!("MLID {mlid_a:#06X}: "))
            && dropped[0].contains(&format!("before MLID {mlid_b:#06X}")),
        "{dropped:?}"
    );
    assert!(
        unchecked_trees(&osm).is_empty(),
        "{:?}",
        osm.lines_with("multicast")
    );
    osm.assert_no_errors();
}

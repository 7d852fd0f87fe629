//! Groups no master tree serves, checked one by one (`per_group`).

use super::check::check;
use super::per_group::GroupChecker;
use super::rules::{rule_for, TreeRule};
use super::tree_tests::loop_free;
use super::{build_group_checked, Checked, GroupMft};
use crate::analysis::report::analyze_with_dependencies;
use crate::fabric::{Fabric, PortRef};
use crate::pipeline::route_by_name;
use crate::rng::Rng;
use crate::routing::Routing;

fn built(b: crate::FabricBuilder) -> Fabric {
    crate::testkit::TestFabric::of(b).build()
}

fn ca_ports(f: &Fabric) -> Vec<PortRef> {
    f.cas().map(|n| PortRef::new(n, 1)).collect()
}

fn routed(engine: &str, f: &Fabric, conf: &str) -> Routing {
    let settings = crate::config::Settings::parse(conf, "test", &crate::engines::config_sections());
    crate::pipeline::route(crate::engines::find(engine).unwrap(), &settings, f)
        .unwrap()
        .routing
}

/// `n` groups of 2-24 random members of `pool`, from MLID `first` on.
fn random_groups(pool: &[PortRef], n: usize, first: u16, seed: u64) -> Vec<(u16, Vec<PortRef>)> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let mut pick = pool.to_vec();
            rng.shuffle(&mut pick);
            pick.truncate(2 + rng.below(23).min(pool.len() - 2));
            (first + i as u16, pick)
        })
        .collect()
}

/// Every group served on `sl`, in order, with how each was made safe.
fn serve(
    f: &Fabric,
    r: &Routing,
    rule: Option<&TreeRule>,
    checker: &mut GroupChecker,
    groups: &[(u16, Vec<PortRef>)],
    sl: u8,
) -> Vec<(GroupMft, Checked)> {
    groups
        .iter()
        .map(|(mlid, m)| {
            build_group_checked(f, rule, Some(&mut *checker), r, *mlid, sl, m).unwrap()
        })
        .collect()
}

fn count(served: &[(GroupMft, Checked)], what: fn(&Checked) -> bool) -> usize {
    served.iter().filter(|(_, c)| what(c)).count()
}

fn dragonfly_422() -> Fabric {
    built(crate::gen::dragonfly::dragonfly(&crate::gen::dragonfly::Params::new(4, 2, 2)).unwrap())
}

/// The broadcast group (every host) and 100 random groups of 2-24 hosts.
fn broadcast_and_random(f: &Fabric, first: u16, seed: u64) -> Vec<(u16, Vec<PortRef>)> {
    let hosts = ca_ports(f);
    let mut groups = vec![(first, hosts.clone())];
    groups.extend(random_groups(&hosts, 100, first + 1, seed));
    groups
}

/// pssp on the Dragonfly a=4, h=2, p=2 keeps VL 0 for SL 0 and checks
/// master trees on SLs 0 and 3-15; unicast's own SLs 1 and 2 get none.
/// Groups created there (a partition's `sl=`) now get trees of their own
/// where one passes against unicast and the groups kept before, and
/// OpenSM's kind of tree, with the reason, where none does. Unicast plus
/// every checked group's flood has no credit loop, every member of every
/// checked group gets one copy, and the first group left unchecked has a
/// real reason: its OpenSM tree closes a loop with them.
#[test]
fn groups_on_sls_without_master_trees_get_checked_trees_of_their_own() {
    let f = dragonfly_422();
    let r = route_by_name("pssp", &f).unwrap().routing;
    let rule = rule_for("pssp", &f, &r).unwrap();
    assert!(
        !rule.covers(1) && !rule.covers(2),
        "{:?}",
        rule.covered_sls()
    );
    let mut checker = GroupChecker::new(&f, &r, Some(&rule), &[]).unwrap();
    let mut checked = Vec::new();
    let mut refused = Vec::new();
    for sl in [1u8, 2] {
        let served = serve(
            &f,
            &r,
            Some(&rule),
            &mut checker,
            &broadcast_and_random(&f, 0xC000 + 0x100 * sl as u16, 5),
            sl,
        );
        let alone = count(&served, |c| *c == Checked::Alone);
        eprintln!("SL {sl}: {alone} of {} checked alone", served.len());
        assert!(alone > 0, "SL {sl}: no group checked alone");
        assert_eq!(count(&served, |c| *c == Checked::Master), 0, "SL {sl}");
        for (g, how) in served {
            match how {
                Checked::Alone => checked.push(g),
                Checked::Unchecked(why) => {
                    assert!(why.contains("not among the SLs"), "{why}");
                    refused.push(g);
                }
                Checked::Master => unreachable!(),
            }
        }
    }
    assert_eq!(checker.kept_groups(), checked.len());
    loop_free(&f, &r, &checked);
    let (_, unicast) = analyze_with_dependencies(&f, &r, &|_, _| {});
    let mut with_refused = checked.clone();
    with_refused.push(refused[0].clone());
    assert!(
        check(&f, &r, &with_refused, &unicast).credit_loop.is_some(),
        "group {:#x} was refused without a loop",
        refused[0].mlid
    );
}

/// Without a VL left for multicast and with unicast not placed around a
/// tree (`pssp.multicast_tree FALSE` at 3 VLs), SL 0 has no master tree
/// and OpenSM's broadcast tree closes a loop with unicast layer 0: some
/// groups on SL 0 now pass alone, and all of them together with unicast
/// have no credit loop.
#[test]
fn sl0_groups_pass_alone_where_no_master_tree_does() {
    let f = crate::testkit::TestFabric::of(
        crate::gen::dragonfly::dragonfly(&crate::gen::dragonfly::Params::new(4, 2, 2)).unwrap(),
    )
    .vls(3)
    .build();
    let r = routed("pssp", &f, "pssp.multicast_tree FALSE\n");
    let rule = rule_for("pssp", &f, &r).ok();
    assert!(!rule.as_ref().is_some_and(|r| r.covers(0)));
    let mut checker = GroupChecker::new(&f, &r, rule.as_ref(), &[]).unwrap();
    let served = serve(
        &f,
        &r,
        rule.as_ref(),
        &mut checker,
        &broadcast_and_random(&f, 0xC000, 7),
        0,
    );
    let checked: Vec<GroupMft> = served
        .iter()
        .filter(|(_, c)| *c == Checked::Alone)
        .map(|(g, _)| g.clone())
        .collect();
    eprintln!("SL 0: {} of {} checked alone", checked.len(), served.len());
    assert!(!checked.is_empty());
    loop_free(&f, &r, &checked);
}

/// A group that fits no tree keeps OpenSM's kind of tree with the reason:
/// the broadcast group of every CA on mlid's director twin without its
/// multicast VL (a tree joining both directors turns at a leaf against
/// unicast layer 0), and nothing of it is kept.
#[test]
fn a_group_no_tree_fits_gets_opensm_kind_of_tree_with_the_reason() {
    use crate::gen::field::{aggregation_nodes, directors, Directors};
    let f = built(aggregation_nodes(&directors(&Directors::small_twin()).unwrap()).unwrap());
    let r = routed("mlid", &f, "mlid.multicast_vl FALSE\n");
    let rule = rule_for("mlid", &f, &r).unwrap();
    let extra = super::fat_tree::downward_candidates(&f).unwrap();
    let mut checker = GroupChecker::new(&f, &r, Some(&rule), &extra).unwrap();
    let before = checker.kept_dependencies();
    let (group, how) = build_group_checked(
        &f,
        Some(&rule),
        Some(&mut checker),
        &r,
        0xC000,
        0,
        &ca_ports(&f),
    )
    .unwrap();
    let Checked::Unchecked(why) = how else {
        panic!("the broadcast group of every CA passed: {how:?}")
    };
    assert!(
        why.contains("holds every member's switch") && why.contains("closes a credit loop"),
        "{why}"
    );
    assert_eq!(
        group.switches().count(),
        f.switch_count(),
        "OpenSM's tree reaches every CA"
    );
    assert_eq!(
        (checker.kept_groups(), checker.kept_dependencies()),
        (0, before)
    );
}

/// OpenSM rebuilds a group on every membership change and sweep: a group
/// checked alone and rebuilt with the same members is checked alone again
/// in place of its old flood (the kept groups stay as many), one moved to
/// an SL master trees serve drops its flood, and once every group is
/// forgotten only unicast's and the master trees' dependencies are left.
#[test]
fn rebuilt_and_forgotten_groups_leave_no_floods_behind() {
    let f = dragonfly_422();
    let r = route_by_name("pssp", &f).unwrap().routing;
    let rule = rule_for("pssp", &f, &r).unwrap();
    let mut checker = GroupChecker::new(&f, &r, Some(&rule), &[]).unwrap();
    let base = checker.kept_dependencies();
    let groups = broadcast_and_random(&f, 0xC000, 5);
    let served = serve(&f, &r, Some(&rule), &mut checker, &groups, 2);
    let alone: Vec<usize> = (0..served.len())
        .filter(|&i| served[i].1 == Checked::Alone)
        .collect();
    assert!(alone.len() > 1);
    let state = (checker.kept_groups(), checker.kept_dependencies());
    assert!(state.1 > base);
    for _ in 0..3 {
        for &i in &alone {
            let (mlid, members) = &groups[i];
            let again =
                build_group_checked(&f, Some(&rule), Some(&mut checker), &r, *mlid, 2, members)
                    .unwrap();
            // Still checked alone; the tree may differ (a branch search
            // cut short before may reach further against other turns).
            assert_eq!(again.1, Checked::Alone, "group {mlid:#x} rebuilt");
        }
        assert_eq!(checker.kept_groups(), state.0);
    }
    let (mlid, members) = &groups[alone[0]];
    let (_, how) =
        build_group_checked(&f, Some(&rule), Some(&mut checker), &r, *mlid, 0, members).unwrap();
    assert_eq!(how, Checked::Master);
    assert_eq!(checker.kept_groups(), state.0 - 1);
    for (mlid, _) in &groups {
        checker.forget(*mlid);
    }
    assert_eq!(
        (checker.kept_groups(), checker.kept_dependencies()),
        (0, base)
    );
}

/// OpenSM's answer to whether a group exists, every group but `gone`
/// still there.
fn exists_but(gone: &[(u16, GroupMft)]) -> impl Fn(u16) -> bool + '_ {
    move |m| gone.iter().all(|(g, _)| *g != m)
}

/// OpenSM deletes a group when its last member leaves and calls no engine
/// for it, so its flood stays kept until the checker learns the group is
/// gone (`forget_gone`, with OpenSM's live MLIDs). Constructed on pssp's
/// SL 2 (no master tree): the first group refused while floods are kept
/// that would pass against unicast and the master trees alone, and the
/// fewest groups kept before it (earliest first) whose going lets it
/// pass. Not told, the checker refuses it again; told, it drops exactly
/// those floods, the group passes, and unicast plus every flood still
/// kept and the newcomer's has no credit loop.
#[test]
fn a_group_refused_for_a_deleted_group_flood_passes_once_that_group_is_forgotten() {
    let f = dragonfly_422();
    let r = route_by_name("pssp", &f).unwrap().routing;
    let rule = rule_for("pssp", &f, &r).unwrap();
    let fresh = GroupChecker::new(&f, &r, Some(&rule), &[]).unwrap();
    let build = |checker: &mut GroupChecker, mlid: u16, members: &[PortRef]| {
        build_group_checked(&f, Some(&rule), Some(checker), &r, mlid, 2, members).unwrap()
    };
    let mut checker = fresh.clone();
    let mut kept: Vec<(u16, GroupMft)> = Vec::new();
    let mut refused = None;
    for (mlid, members) in broadcast_and_random(&f, 0xC000, 5) {
        match build(&mut checker, mlid, &members) {
            (group, Checked::Alone) => kept.push((mlid, group)),
            (_, Checked::Unchecked(_)) => {
                if build(&mut fresh.clone(), mlid, &members).1 == Checked::Alone {
                    refused = Some((mlid, members));
                    break;
                }
            }
            (_, Checked::Master) => unreachable!("SL 2 has no master tree"),
        }
    }
    let (mlid, members) = refused.expect("a group refused only for the floods kept before it");
    let k = (1..=kept.len())
        .find(|&k| {
            let mut c = checker.clone();
            c.forget_gone(exists_but(&kept[..k]));
            build(&mut c, mlid, &members).1 == Checked::Alone
        })
        .expect("with every kept group gone it passes, as on a fresh checker");
    let (gone, left) = kept.split_at(k);
    eprintln!(
        "group {mlid:#x} refused with {} groups kept; passes once {k} of them are gone",
        kept.len()
    );

    // The deleted groups' floods still kept: refused, nothing dropped.
    assert_ne!(build(&mut checker, mlid, &members).1, Checked::Alone);
    assert_eq!(checker.kept_groups(), kept.len());

    let dropped = checker.forget_gone(exists_but(gone));
    let expected: Vec<u16> = {
        let mut g: Vec<u16> = gone.iter().map(|(m, _)| *m).collect();
        g.sort_unstable();
        g
    };
    assert_eq!(dropped, expected);
    assert_eq!(checker.kept_groups(), left.len());
    assert!(checker.forget_gone(exists_but(gone)).is_empty());

    let (group, how) = build(&mut checker, mlid, &members);
    assert_eq!(
        how,
        Checked::Alone,
        "group {mlid:#x} once {k} groups are gone"
    );
    let mut live: Vec<GroupMft> = left.iter().map(|(_, g)| g.clone()).collect();
    live.push(group);
    loop_free(&f, &r, &live);
}

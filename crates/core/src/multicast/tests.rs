//! Hand-made MFTs on a three-switch ring: what the check must find.

use super::check::check;
use super::flood::{deliveries, root_and_depth};
use super::GroupMft;
use crate::analysis::report::analyze_with_dependencies;
use crate::fabric::{Fabric, FabricBuilder, NodeKind, PortNum, PortRef, SwitchId};
use crate::routing::{Lft, PathSl, Routing};

/// Switch i: port 1 to switch i+1's port 2, port 3 to host i. Unicast
/// goes clockwise from switches 1 and 2 to the host behind them (two
/// hops) and directly otherwise, so its dependencies are the chain
/// (1,1) -> (2,1) -> (0,1): no cycle.
fn ring() -> (Fabric, Routing) {
    let mut b = FabricBuilder::new();
    let s: Vec<_> = (0..3)
        .map(|i| b.add_node(NodeKind::Switch, 0x100 + i, format!("s{i}"), 3))
        .collect();
    let h: Vec<_> = (0..3)
        .map(|i| b.add_node(NodeKind::Ca, 0x200 + i, format!("h{i}"), 1))
        .collect();
    for i in 0..3 {
        b.connect(PortRef::new(s[i], 1), PortRef::new(s[(i + 1) % 3], 2))
            .unwrap();
        b.connect(PortRef::new(s[i], 3), PortRef::new(h[i], 1))
            .unwrap();
    }
    b.assign_lids_sequential(0).unwrap();
    let f = b.build().unwrap();
    let host_lid = |i: usize| f.port(PortRef::new(h[i], 1)).unwrap().lid;
    let lfts = (0..3)
        .map(|i| {
            let mut lft = Lft::new(f.lft_len());
            for d in 0..3 {
                let port = if d == i {
                    3
                } else if d == (i + 1) % 3 || i != 0 {
                    1 // clockwise: direct, or two hops from switches 1 and 2
                } else {
                    2
                };
                lft.set(host_lid(d), PortNum::new(port));
            }
            lft
        })
        .collect();
    let r = Routing {
        engine: "hand".into(),
        lfts,
        sl2vl: None,
        path_sl: PathSl::Uniform(0),
    };
    (f, r)
}

fn sw(i: usize) -> SwitchId {
    SwitchId::new(i)
}

/// The tree s0 - s1 - s2 with a member on every switch.
fn chain_group(f: &Fabric, mlid: u16) -> GroupMft {
    let mut g = GroupMft::new(f, mlid, 0);
    for (s, ports) in [(0, vec![1, 3]), (1, vec![1, 2, 3]), (2, vec![2, 3])] {
        for p in ports {
            g.add(sw(s), PortNum::new(p));
        }
    }
    g
}

#[test]
fn a_tree_closing_a_cycle_with_unicast_is_found_and_named() {
    let (f, r) = ring();
    let (report, unicast) = analyze_with_dependencies(&f, &r, &|_, _| {});
    assert!(report.delivered() && report.credit_loop.is_none());
    let groups = vec![chain_group(&f, 0xC000), chain_group(&f, 0xC001)];
    let m = check(&f, &r, &groups, &unicast);
    let cycle = m
        .credit_loop
        .as_ref()
        .expect("unicast's chain closed by the tree's turn at s1");
    assert_eq!(cycle.len(), 3, "{cycle:?}");
    let step_at = |s: usize| cycle.iter().find(|c| c.channel.switch == sw(s)).unwrap();
    assert_eq!(step_at(0).made_by, vec!["group 0xC000", "group 0xC001"]);
    for s in [1, 2] {
        let made = &step_at(s).made_by;
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(
            made[0].starts_with("unicast CA") && made[0].contains(&format!("(h{s}) -> LID")),
            "{made:?}"
        );
    }
    assert!(m.added_dependencies > 0);
    assert!(!m.ok());
    let g = &m.groups[0];
    assert_eq!((g.members, g.root, g.depth), (3, Some(sw(1)), 1));
    assert!(g.sound(), "{:?}", g.delivery);
}

#[test]
fn a_tree_unicast_already_covers_adds_no_cycle() {
    let (f, r) = ring();
    let (_, unicast) = analyze_with_dependencies(&f, &r, &|_, _| {});
    // s1 - s2 - s0: its turn at s2 is unicast's own (1,1) -> (2,1), its
    // other turn (0,2) -> (2,2) is new but harmless.
    let mut g = GroupMft::new(&f, 0xC002, 0);
    for (s, ports) in [(1, vec![1, 3]), (2, vec![1, 2, 3]), (0, vec![2, 3])] {
        for p in ports {
            g.add(sw(s), PortNum::new(p));
        }
    }
    let m = check(&f, &r, &[g], &unicast);
    assert!(m.credit_loop.is_none(), "{:?}", m.credit_loop);
    assert!(m.ok());
    assert_eq!(m.groups[0].root, Some(sw(2)));
}

#[test]
fn a_tree_on_another_vl_is_judged_on_its_vls() {
    let (f, mut r) = ring();
    let (_, unicast) = analyze_with_dependencies(&f, &r, &|_, _| {});
    // SL 1 goes on VL 1 everywhere, unicast stays on SL 0 / VL 0.
    let mut t = crate::routing::Sl2Vl::new(&f, crate::routing::ALL_VL0);
    for s in 0..3 {
        for i in 0..4u8 {
            for o in 0..4u8 {
                let mut table = crate::routing::ALL_VL0;
                table[1] = 1;
                t.set_switch(sw(s), PortNum::new(i), PortNum::new(o), table);
            }
        }
    }
    r.sl2vl = Some(t);
    let mut g = chain_group(&f, 0xC000);
    g.sl = 1;
    assert!(check(&f, &r, &[g.clone()], &unicast).credit_loop.is_none());
    g.sl = 0;
    assert!(check(&f, &r, &[g], &unicast).credit_loop.is_some());
}

#[test]
fn masks_that_close_a_ring_loop_and_duplicate() {
    let (f, _) = ring();
    let mut g = GroupMft::new(&f, 0xC000, 0);
    for s in 0..3 {
        for p in [1, 2, 3] {
            g.add(sw(s), PortNum::new(p));
        }
    }
    let d = deliveries(&f, &g);
    assert!(d.looping, "{d:?}");
    let tree = chain_group(&f, 0xC000);
    assert_eq!(deliveries(&f, &tree), Default::default());
    // s2 without the port back to s1: it still receives (a switch
    // forwards whatever port a packet came in on), but h2 reaches nobody.
    let mut cut = tree.clone();
    cut.ports[2] = vec![PortNum::new(3)];
    let d = deliveries(&f, &cut);
    assert_eq!(
        (d.unreached, d.duplicated, d.looping),
        (2, 0, false),
        "{d:?}"
    );
    assert_eq!(root_and_depth(&f, &tree), Some((sw(1), 1)));
}

#[test]
fn an_empty_group_has_no_root() {
    let (f, _) = ring();
    assert_eq!(root_and_depth(&f, &GroupMft::new(&f, 0xC000, 0)), None);
}

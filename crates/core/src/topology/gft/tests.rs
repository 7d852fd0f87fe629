use super::*;
use crate::fabric::NodeId;
use crate::gen::{self, direct::tests::fabric, fattree::fattree, pgft};

#[test]
fn m_port_n_trees_have_k_up_cables_per_height() {
    for (m, n) in [(4, 3), (8, 3), (4, 4), (8, 2)] {
        let f = fabric(gen::shuffle_ports(&fattree(m, n).unwrap(), 3));
        let t = recognize(&f).unwrap_or_else(|e| panic!("FT({m},{n}): {e}"));
        assert_eq!(t.top, n - 1, "FT({m},{n})");
        assert_eq!(t.radix, vec![m / 2; n - 1]);
        assert_eq!(t.parents, vec![m / 2; n - 1]);
        assert_eq!(t.hosts(), 2 * (m / 2usize).pow(n as u32));
        assert_eq!(t.paths(), (m / 2usize).pow(n as u32 - 1));
        // The hosts of a leaf are consecutive in the d-mod-k order.
        let mut on_leaf: HashMap<SwitchId, Vec<usize>> = HashMap::new();
        for (at, &i) in &t.host_index {
            let leaf = f
                .switch_id(f.port(*at).unwrap().remote.unwrap().node)
                .unwrap();
            on_leaf.entry(leaf).or_default().push(i);
        }
        for v in on_leaf.values_mut() {
            v.sort();
            assert_eq!(
                v.last().unwrap() - v[0],
                v.len() - 1,
                "FT({m},{n}): a leaf's hosts are not consecutive"
            );
        }
    }
}

#[test]
fn parallel_cables_count_as_up_choices() {
    let p = pgft::Pgft {
        down: vec![4, 4, 3],
        up: vec![1, 2, 2],
        parallel: vec![1, 2, 1],
    };
    let f = fabric(gen::shuffle_ports(&pgft::pgft(&p).unwrap(), 5));
    let t = recognize(&f).unwrap();
    assert_eq!(
        (t.top, t.radix.clone(), t.parents.clone()),
        (2, vec![4, 2], vec![2, 2])
    );
    // One cable to each parent before a second to any.
    for s in f.graph().ids().filter(|s| t.height[s.idx()] == 0) {
        let firsts: Vec<SwitchId> = t.up[s.idx()][..2].iter().map(|c| c.to).collect();
        assert_ne!(firsts[0], firsts[1]);
        assert_eq!(t.up[s.idx()][2].to, firsts[0]);
    }
}

#[test]
fn hosts_on_top_switches_leave_them_on_top() {
    let p = pgft::Pgft {
        down: vec![4, 4, 3],
        up: vec![1, 2, 2],
        parallel: vec![1, 2, 1],
    };
    let b = pgft::pgft_with_top_hosts(&p, 3, 7).unwrap();
    let f = fabric(b);
    let t = recognize(&f).unwrap();
    assert_eq!(t.hosts(), 48 + 3);
    // Top switches with hosts stay on top, after the leaves' hosts.
    let mut on_top = std::collections::BTreeSet::new();
    let switch_of = |at: &PortRef| {
        f.switch_id(f.port(*at).unwrap().remote.unwrap().node)
            .unwrap()
    };
    let below_top = t
        .host_index
        .keys()
        .filter(|at| t.height[switch_of(at).idx()] == 0)
        .count();
    for (at, &i) in &t.host_index {
        let s = f
            .switch_id(f.port(*at).unwrap().remote.unwrap().node)
            .unwrap();
        if f.switch_node(s).desc.starts_with("pgft-l3-") {
            if t.height[s.idx()] == 2 {
                assert!(
                    i >= below_top,
                    "host {i} on top is not after the leaves' hosts"
                );
                on_top.insert(s);
            }
        } else {
            assert_eq!(t.height[s.idx()], 0, "host {i}");
        }
    }
    assert_eq!((on_top.len(), t.top, below_top), (3, 2, 48));
    // Also on a two-level leaf-spine, where the spine with a host is
    // cabled to leaves with hosts.
    let f = fabric(pgft::pgft_with_top_hosts(&pgft::Pgft::leaf_spine(4, 6, 3, 2), 2, 1).unwrap());
    let t = recognize(&f).unwrap();
    assert_eq!((t.top, t.radix.clone()), (1, vec![6]));
}

#[test]
fn missing_cables_and_switches_are_still_a_tree() {
    let p = pgft::Pgft {
        down: vec![4, 4, 3],
        up: vec![1, 2, 2],
        parallel: vec![1, 2, 1],
    };
    let mut b = pgft::pgft(&p).unwrap();
    gen::degrade::drop_links(&mut b, 0.1, 3).unwrap();
    let t = recognize(&fabric(b)).unwrap();
    assert_eq!((t.top, t.radix.clone()), (2, vec![4, 2]));
    // A missing middle switch (the generator's names say its level).
    let b = fattree(4, 3).unwrap();
    let middle: Vec<_> = (0..b.node_count())
        .map(NodeId::new)
        .filter(|&id| b.node(id).desc.starts_with("ft-l1-"))
        .take(1)
        .collect();
    let f = fabric(gen::degrade::without_switches(&b, &middle).unwrap());
    let t = recognize(&f).unwrap();
    assert_eq!((t.top, t.radix.clone(), t.hosts()), (2, vec![2, 2], 16));
}

#[test]
fn what_is_not_a_tree_is_declined_naming_the_switch() {
    let ring = {
        let mut g = gen::direct::CablePlan::default();
        let s: Vec<usize> = (0..5).map(|i| g.add_switch(format!("s{i}"))).collect();
        for i in 0..5 {
            g.cable(s[i], s[(i + 1) % 5], 1);
        }
        fabric(g.build(1).unwrap())
    };
    let e = recognize(&ring).unwrap_err().to_string();
    assert!(e.contains("both have hosts") && e.contains("(s"), "{e}");
    // A cable between two roots of a 4-port 2-tree (in place of one
    // cable down from each): no longer up*/down* levels.
    let mut b = fattree(4, 2).unwrap();
    let roots: Vec<NodeId> = (0..b.node_count())
        .map(NodeId::new)
        .filter(|&id| b.node(id).desc.starts_with("ft-l0-"))
        .take(2)
        .collect();
    // Cables to two different leaves, so that no leaf is cut off.
    let port_of = |b: &crate::fabric::FabricBuilder, id: NodeId, k: usize| {
        b.node(id).links().nth(k).unwrap().0
    };
    let (pa, pb) = (port_of(&b, roots[0], 0), port_of(&b, roots[1], 1));
    b.disconnect(PortRef::new(roots[0], pa));
    b.disconnect(PortRef::new(roots[1], pb));
    b.connect(PortRef::new(roots[0], pa), PortRef::new(roots[1], pb))
        .unwrap();
    let e = recognize(&fabric(b)).unwrap_err().to_string();
    assert!(
        e.contains("both at height 1") && e.contains("ft-l0-"),
        "{e}"
    );
}

/// Director chassis with an Aggregation Node on every chip and leaves
/// without hosts: leaves (empty ones too) at height 0, line chips at 1,
/// spine chips at 2, whatever the port numbering; also a two-level
/// leaf-spine and a tapered one.
#[test]
fn directors_with_aggregation_nodes_and_empty_leaves_are_three_levels() {
    use crate::gen::field::{aggregation_nodes, directors, empty_leaves, Directors};
    let d = Directors {
        directors: 2,
        line_chips: 6,
        spine_chips: 3,
        leaves_per_line: 2,
        hosts: 5,
        bundle: 3,
    };
    for seed in 1..5 {
        let (b, _) = empty_leaves(&directors(&d).unwrap(), 3, seed).unwrap();
        let b = gen::shuffle_ports(&aggregation_nodes(&b).unwrap(), seed);
        let f = fabric(b);
        let t = recognize(&f).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for s in f.graph().ids() {
            let desc = &f.switch_node(s).desc;
            let want = if desc.starts_with("leaf") {
                0
            } else if desc.contains("/L") {
                1
            } else {
                2
            };
            assert_eq!(t.height[s.idx()], want, "seed {seed}: {desc}");
        }
        assert_eq!((t.top, t.radix.clone()), (2, vec![6, 3]), "seed {seed}");
        assert_eq!(t.hosts(), 12 * 5 - 3 * 5 + 12 + 12 + 6);
    }
    for p in [
        pgft::Pgft::leaf_spine(8, 6, 4, 2),
        pgft::Pgft::leaf_spine(8, 12, 3, 1),
    ] {
        let (b, _) = empty_leaves(&pgft::pgft(&p).unwrap(), 2, 3).unwrap();
        let f = fabric(aggregation_nodes(&b).unwrap());
        let t = recognize(&f).unwrap();
        let leaves = f.graph().ids().filter(|&s| t.height[s.idx()] == 0).count();
        assert_eq!((t.top, leaves), (1, 8), "{p:?}");
    }
}

/// ftree's failure cases are named: Aggregation Nodes above the leaves,
/// a leaf missing its cables to one parent, empty leaves; a plain PGFT
/// has none.
#[test]
fn ftree_objections_name_the_switch() {
    use crate::gen::field::{aggregation_nodes, empty_leaves};
    let p = pgft::Pgft::leaf_spine(6, 4, 3, 2);
    let plain = fabric(pgft::pgft(&p).unwrap());
    assert_eq!(recognize(&plain).unwrap().ftree_objection(&plain), None);
    let an = fabric(aggregation_nodes(&pgft::pgft(&p).unwrap()).unwrap());
    let why = recognize(&an).unwrap().ftree_objection(&an).unwrap();
    assert!(
        why.contains("pgft-l2-") && why.contains("above the leaves"),
        "{why}"
    );
    let (b, _) = empty_leaves(&pgft::pgft(&p).unwrap(), 1, 1).unwrap();
    let e = fabric(b);
    let why = recognize(&e).unwrap().ftree_objection(&e).unwrap();
    assert!(why.contains("without hosts"), "{why}");
}

/// PlaFRIM (tests/fixtures): four leaves under two spines, a 27-host
/// switch below one leaf, a 6-host switch below two others and a 26-host
/// switch below that. Counted from the fullest switch the tree came out
/// upside down (the 26-host switch on top, hosts on both sides of the
/// spines without an up*/down* path); seen from the spines, the spines
/// are the top and every switch with hosts lies below both.
#[test]
fn leaves_at_different_depths_hang_below_the_spines() {
    let text = include_str!("../../../../../tests/fixtures/plafrim.ibnetdiscover-p");
    let f = crate::io::detect::read(text, None)
        .unwrap()
        .builder
        .build()
        .unwrap();
    let t = recognize(&f).unwrap();
    let g = f.graph();
    let at_top: Vec<_> = g.ids().filter(|s| t.height[s.idx()] == t.top).collect();
    assert_eq!((t.top, at_top.len()), (3, 2));
    for &s in &at_top {
        assert_eq!(g.hosts(s), 0, "{}", f.describe_switch(s));
    }
    // Every switch with hosts lies below each spine.
    for &spine in &at_top {
        let mut below = vec![false; g.switch_count()];
        let mut stack = vec![spine];
        while let Some(s) = stack.pop() {
            if !std::mem::replace(&mut below[s.idx()], true) {
                stack.extend(t.down[s.idx()].iter().map(|c| c.to));
            }
        }
        for s in g.ids().filter(|&s| g.hosts(s) > 0) {
            assert!(below[s.idx()], "{}", f.describe_switch(s));
        }
    }
    assert_eq!(t.hosts(), 125);
}

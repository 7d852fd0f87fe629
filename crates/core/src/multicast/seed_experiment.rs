//! The experiment behind `virtual_layers::around_the_multicast_tree`'s
//! tries (docs/multicast.md, the tight column): for spanning trees of
//! several kinds, how many layers the layering needs to keep the tree in
//! layer 0 with every layer seeded (`EXP_MODE=all`), or in each layer
//! seeded alone (`EXP_MODE=only`), against the plain layering's. Not a
//! check (ignored): run by hand on a net file,
//! `EXP_NET=df.net EXP_VLS=3 [EXP_ENGINE=pssp|layered]
//! [EXP_WHICH=cand,bfsleast,bfsall,unicast,unicastall,dfs] [EXP_MODE=all|only]
//! cargo test --release -p osmroute-core --lib seed_experiment -- --ignored --nocapture`.
use super::tree::Tree;
use super::verified::{breadth_first, candidates, layering_seed};
use crate::deadlock::virtual_layers::placement::{assign_layers, LayerOptions};
use crate::fabric::{Fabric, Lid, Peer, SwitchId};
use crate::routing::Lft;
use std::time::Instant;

/// Tree whose upward half follows unicast's routes towards `root`.
fn unicast_tree(f: &Fabric, lfts: &[Lft], root: SwitchId) -> Option<Tree> {
    let graph = f.graph();
    let lid: Lid = f
        .ca_lids()
        .find(|&(l, _)| f.lid_switch(l) == Some(root))
        .map(|(l, _)| l)?;
    let parent = graph
        .ids()
        .map(|s| {
            (s != root)
                .then(|| match graph.peer(s, lfts[s.idx()].get(lid)) {
                    Some(Peer::Switch { switch, .. }) => Some(switch),
                    _ => None,
                })
                .flatten()
        })
        .collect();
    Some(Tree {
        root,
        parent,
        same_cables: true,
    })
}

/// Depth-first tree from `root` (low degree, long paths).
fn depth_first(f: &Fabric, root: SwitchId) -> Tree {
    let graph = f.graph();
    let n = graph.switch_count();
    let mut parent = vec![None; n];
    let mut seen = vec![false; n];
    let mut stack = vec![root];
    seen[root.idx()] = true;
    while let Some(&s) = stack.last() {
        match graph.neighbours(s).iter().copied().find(|t| !seen[t.idx()]) {
            Some(t) => {
                seen[t.idx()] = true;
                parent[t.idx()] = Some(s);
                stack.push(t);
            }
            None => {
                stack.pop();
            }
        }
    }
    Tree {
        root,
        parent,
        same_cables: true,
    }
}

fn fabric() -> (Fabric, u8) {
    let net = std::env::var("EXP_NET").unwrap();
    let vls: u8 = std::env::var("EXP_VLS").unwrap().parse().unwrap();
    let mut b = crate::io::netfile::read(&std::fs::read_to_string(net).unwrap()).unwrap();
    b.assign_lids_sequential(0).unwrap();
    b.set_vl_budget(crate::fabric::VlBudget {
        data_vls: vls,
        ..Default::default()
    });
    (b.build().unwrap(), vls)
}

fn opts(max: u8, seed: Vec<(u32, u32)>, seed_layer: Option<u8>) -> LayerOptions {
    LayerOptions {
        max_layers: max,
        balance: false,
        balance_limit: max,
        best_effort: false,
        seed,
        seed_layer,
    }
}

/// Least number of layers (from `from` up to 8) for which a layering
/// seeded with `seed` keeps it in layer `only` (None: every layer
/// seeded, layer 0 must keep it).
fn layers_to_keep(
    f: &Fabric,
    lfts: &[Lft],
    order: &[Lid],
    seed: &[(u32, u32)],
    from: u8,
    only: Option<u8>,
) -> Option<u8> {
    let bit = only.unwrap_or(0);
    (from..=8).find(|&m| {
        assign_layers(f, lfts, order, &opts(m, seed.to_vec(), only))
            .is_ok_and(|l| l.seeded & (1 << bit) != 0)
    })
}

fn tables(engine: &str, f: &Fabric) -> (Vec<Lft>, Vec<Lid>) {
    match engine {
        "layered" => {
            let o = crate::engines::layered::LayeredOptions::default();
            let l = crate::engines::layered::layers_for(f, &o).unwrap();
            (l.lfts, l.lid_order)
        }
        _ => {
            let m = crate::engines::pssp::balanced_minimal(f, 0, "pssp");
            (m.lfts, m.lid_order)
        }
    }
}

#[test]
#[ignore]
fn seed_experiment() {
    let (f, vls) = fabric();
    let engine = std::env::var("EXP_ENGINE").unwrap_or("pssp".into());
    let (lfts, order) = tables(&engine, &f);
    let graph = f.graph();
    let t = Instant::now();
    let plain = assign_layers(&f, &lfts, &order, &opts(vls, Vec::new(), None)).unwrap();
    let need = plain.layers_needed;
    println!("plain: {need} layers ({:?})", t.elapsed());
    let which = std::env::var("EXP_WHICH").unwrap_or("cand".into());
    let mut trees: Vec<(String, Tree)> = Vec::new();
    let mut by_ecc: Vec<SwitchId> = graph.ids().collect();
    by_ecc.sort_by_key(|&s| (graph.dist_row(s).iter().copied().max().unwrap_or(0), s));
    let name = |s: SwitchId| f.describe_switch(s);
    for w in which.split(',') {
        match w {
            "cand" => {
                for (i, t) in candidates(&f, None).into_iter().enumerate() {
                    trees.push((format!("candidate {i} root {}", name(t.root)), t));
                }
            }
            "bfsall" => {
                for &r in &by_ecc {
                    trees.push((format!("bfs {}", name(r)), breadth_first(&f, r)));
                }
            }
            "bfsleast" => {
                for &r in by_ecc.iter().rev().take(8) {
                    trees.push((
                        format!("bfs least central {}", name(r)),
                        breadth_first(&f, r),
                    ));
                }
            }
            "unicast" => {
                for &r in by_ecc.iter().take(8).chain(by_ecc.iter().rev().take(8)) {
                    if let Some(t) = unicast_tree(&f, &lfts, r) {
                        trees.push((format!("unicast-up to {}", name(r)), t));
                    }
                }
            }
            "unicastall" => {
                for &r in &by_ecc {
                    if let Some(t) = unicast_tree(&f, &lfts, r) {
                        trees.push((format!("unicast-up to {}", name(r)), t));
                    }
                }
            }
            "dfs" => {
                for &r in by_ecc.iter().take(4).chain(by_ecc.iter().rev().take(4)) {
                    trees.push((format!("dfs {}", name(r)), depth_first(&f, r)));
                }
            }
            _ => panic!("{w}"),
        }
    }
    let mode = std::env::var("EXP_MODE").unwrap_or("all".into());
    let mut kept = 0;
    for (label, tree) in &trees {
        let seed = layering_seed(&f, tree).unwrap();
        let t = Instant::now();
        let res = match mode.as_str() {
            // every layer seeded, layer 0 must keep it (today's placement)
            "all" => format!("{:?}", layers_to_keep(&f, &lfts, &order, &seed, need, None)),
            // only one layer L seeded: for each L in 0..need
            "only" => (0..need)
                .map(|l| {
                    format!(
                        "L{l}:{:?}",
                        layers_to_keep(&f, &lfts, &order, &seed, need, Some(l))
                    )
                })
                .collect::<Vec<_>>()
                .join(" "),
            _ => panic!(),
        };
        if res.contains(&format!("Some({need})")) {
            kept += 1;
        }
        println!(
            "{label}: {} turns, layers to keep the tree: {res} ({:?})",
            seed.len(),
            t.elapsed()
        );
    }
    println!("{kept} of {} trees kept within {need} layers", trees.len());
}

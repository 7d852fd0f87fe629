//! Fabric generators: each builds the nodes and cables of one topology
//! family, deterministically; `shuffle_ports` then renumbers every switch's
//! ports at random (seeded) so that nothing may rely on port numbering.

pub mod degrade;
pub mod direct;
pub mod dragonfly;
pub mod dragonfly_plus;
pub mod fattree;
pub mod field;
pub mod galois;
pub mod hyperx;
pub mod pgft;
pub mod random_regular;
pub mod slimfly;
pub mod torus;

use crate::fabric::{FabricBuilder, NodeId, NodeKind, PortRef};
use crate::rng::Rng;

/// Renumbers the ports of every switch with a seeded random permutation,
/// keeping every cable.
pub fn shuffle_ports(b: &FabricBuilder, seed: u64) -> FabricBuilder {
    let mut rng = Rng::new(seed);
    let perms: Vec<Vec<u8>> = b
        .nodes()
        .iter()
        .map(|n| {
            let mut p: Vec<u8> = (0..n.port_slots() as u8).collect();
            if n.kind == NodeKind::Switch {
                // Port 0 (the switch itself) keeps its number.
                rng.shuffle(&mut p[1..]);
            }
            p
        })
        .collect();
    let mut out = FabricBuilder::new();
    for n in b.nodes() {
        out.add_node(n.kind, n.guid, n.desc.clone(), (n.port_slots() - 1) as u8);
    }
    for (id, n) in NodeId::range(b.node_count()).zip(b.nodes()) {
        for (port, r) in n.links() {
            let (a, z) = (
                PortRef::new(id, perms[id][port.idx()]),
                PortRef::new(r.node, perms[r.node][r.port.idx()]),
            );
            if a < z {
                // Both ends are fresh ports of a fresh builder: cannot clash.
                let _ = out.connect(a, z);
            }
        }
    }
    out
}

/// Replaces every switch-to-switch cable for which `which(a, b)` holds by
/// `width` parallel cables: the new ones on ports appended after each
/// switch's existing ports, in cable order. Node ids, GUIDs and the
/// existing ports stay; a switch that would need more than 254 ports is an
/// error.
pub fn parallel_cables(
    b: &FabricBuilder,
    width: usize,
    which: impl Fn(&crate::fabric::Node, &crate::fabric::Node) -> bool,
) -> Result<FabricBuilder, String> {
    if width == 0 {
        return Err("a cable cannot be replaced by 0 parallel cables; use 1 to keep it".into());
    }
    let nodes = b.nodes();
    // Each chosen cable once, from its lower end.
    let mut chosen: Vec<(PortRef, PortRef)> = Vec::new();
    for (id, n) in NodeId::range(b.node_count()).zip(nodes) {
        for (port, r) in n.links() {
            let a = PortRef::new(id, port.raw());
            let other = &nodes[r.node.idx()];
            if a < r && n.is_switch() && other.is_switch() && r.node != id && which(n, other) {
                chosen.push((a, r));
            }
        }
    }
    let mut extra = vec![0usize; nodes.len()];
    for &(a, z) in &chosen {
        extra[a.node.idx()] += width - 1;
        extra[z.node.idx()] += width - 1;
    }
    let mut out = FabricBuilder::new();
    for (n, more) in nodes.iter().zip(&extra) {
        let ports = n.port_slots() - 1 + more;
        if ports > 254 {
            return Err(format!(
                "{} would need {ports} ports with {width} parallel cables, above InfiniBand's 254",
                n.desc
            ));
        }
        out.add_node(n.kind, n.guid, n.desc.clone(), ports as u8);
    }
    for (id, n) in NodeId::range(b.node_count()).zip(nodes) {
        for (port, r) in n.links() {
            let a = PortRef::new(id, port.raw());
            if a < r {
                out.connect(a, r).map_err(|e| e.to_string())?;
            }
        }
    }
    let mut next: Vec<usize> = nodes.iter().map(|n| n.port_slots()).collect();
    for &(a, z) in &chosen {
        for _ in 1..width {
            let (pa, pz) = (next[a.node.idx()], next[z.node.idx()]);
            next[a.node.idx()] += 1;
            next[z.node.idx()] += 1;
            out.connect(
                PortRef::new(a.node, pa as u8),
                PortRef::new(z.node, pz as u8),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffling_keeps_cables_and_moves_ports() {
        let b = dragonfly::dragonfly(&dragonfly::Params::new(4, 2, 2)).unwrap();
        let s = shuffle_ports(&b, 5);
        let degree = |b: &FabricBuilder| {
            b.nodes()
                .iter()
                .map(|n| n.links().count())
                .collect::<Vec<_>>()
        };
        assert_eq!(degree(&b), degree(&s));
        let moved = b
            .nodes()
            .iter()
            .zip(s.nodes())
            .filter(|(x, y)| x.links().collect::<Vec<_>>() != y.links().collect::<Vec<_>>())
            .count();
        assert!(moved > b.node_count() / 2);
        // Deterministic per seed.
        assert_eq!(
            shuffle_ports(&b, 5)
                .nodes()
                .iter()
                .map(|n| n.links().collect::<Vec<_>>())
                .collect::<Vec<_>>(),
            s.nodes()
                .iter()
                .map(|n| n.links().collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn parallel_cables_multiply_only_the_chosen_cables() {
        let b = dragonfly::dragonfly(&dragonfly::Params::new(4, 2, 2)).unwrap();
        let wide = parallel_cables(&b, 3, |x, y| dragonfly::is_global(x, y) == Some(true)).unwrap();
        let mut wide = wide;
        wide.assign_lids_sequential(0).unwrap();
        let f = wide.build().unwrap();
        let g = f.graph();
        for s in g.ids() {
            // a = 4: 3 local neighbours with one cable, h = 2 global ones with three.
            let mut widths: Vec<usize> = g.bundles(s).iter().map(Vec::len).collect();
            widths.sort_unstable();
            assert_eq!(widths, vec![1, 1, 1, 3, 3]);
            assert_eq!(g.hosts(s), 2);
        }
        assert!(parallel_cables(&b, 0, |_, _| true)
            .unwrap_err()
            .contains("use 1"));
        assert!(parallel_cables(&b, 60, |_, _| true)
            .unwrap_err()
            .contains("254"));
    }
}

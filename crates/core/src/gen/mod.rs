//! Fabric generators: each builds the nodes and cables of one topology
//! family, deterministically; `shuffle_ports` then renumbers every switch's
//! ports at random (seeded) so that nothing may rely on port numbering.

pub mod degrade;
pub mod direct;
pub mod dragonfly;
pub mod fattree;
pub mod galois;
pub mod hyperx;
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
            let (a, z) = (PortRef::new(id, perms[id][port.idx()]), PortRef::new(r.node, perms[r.node][r.port.idx()]));
            if a < z {
                // Both ends are fresh ports of a fresh builder: cannot clash.
                let _ = out.connect(a, z);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffling_keeps_cables_and_moves_ports() {
        let b = dragonfly::dragonfly(&dragonfly::Params::new(4, 2, 2)).unwrap();
        let s = shuffle_ports(&b, 5);
        let degree = |b: &FabricBuilder| b.nodes().iter().map(|n| n.links().count()).collect::<Vec<_>>();
        assert_eq!(degree(&b), degree(&s));
        let moved = b.nodes().iter().zip(s.nodes()).filter(|(x, y)| x.links().collect::<Vec<_>>() != y.links().collect::<Vec<_>>()).count();
        assert!(moved > b.node_count() / 2);
        // Deterministic per seed.
        assert_eq!(
            shuffle_ports(&b, 5).nodes().iter().map(|n| n.links().collect::<Vec<_>>()).collect::<Vec<_>>(),
            s.nodes().iter().map(|n| n.links().collect::<Vec<_>>()).collect::<Vec<_>>()
        );
    }
}

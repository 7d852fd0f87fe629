//! Fabrics no generator here makes, built by hand for the engines'
//! recogniser tests and the engine matrix: a small Dragonfly+ and a
//! two-level rail pod. (The generated families are in `gen`.)

use crate::fabric::{FabricBuilder, NodeId, NodeKind, PortRef};

/// Adds a switch with `ports` ports.
fn switch(b: &mut FabricBuilder, guid: u64, name: String, ports: u8) -> NodeId {
    b.add_node(NodeKind::Switch, guid, name, ports)
}

/// Cables `a` to `b` on the next free port of each (ports counted in
/// `next`).
fn cable(b: &mut FabricBuilder, next: &mut [u8], a: NodeId, z: NodeId) {
    let (pa, pz) = (next[a.idx()] + 1, next[z.idx()] + 1);
    next[a.idx()] = pa;
    next[z.idx()] = pz;
    b.connect(PortRef::new(a, pa), PortRef::new(z, pz))
        .expect("test shape cabling");
}

/// `hosts` single-port hosts on `leaf`.
fn hosts(b: &mut FabricBuilder, next: &mut Vec<u8>, leaf: NodeId, hosts: usize, guid: &mut u64) {
    for h in 0..hosts {
        *guid += 2;
        let ca = b.add_node(
            NodeKind::Ca,
            *guid,
            format!("{}-h{h}", b.node(leaf).desc),
            1,
        );
        next.push(0);
        cable(b, next, leaf, ca);
    }
}

/// A Dragonfly+: `groups` groups of `leaves` leaves and `spines` spines,
/// each group a complete leaf–spine bipartite graph, hosts on the leaves,
/// and spine s of every group cabled to spine s of every other group (one
/// global cable per spine pair of the same index).
pub fn dragonfly_plus(
    groups: usize,
    leaves: usize,
    spines: usize,
    per_leaf: usize,
) -> FabricBuilder {
    let mut b = FabricBuilder::new();
    let mut next: Vec<u8> = Vec::new();
    let mut guid = 0x1000_0000u64;
    let mut ca_guid = 0x4000_0000u64;
    let radix = (spines + per_leaf).max(leaves + groups) as u8 + 1;
    let mut spine_ids: Vec<Vec<NodeId>> = Vec::new();
    for g in 0..groups {
        let leaf_ids: Vec<NodeId> = (0..leaves)
            .map(|l| {
                guid += 1;
                next.push(0);
                switch(&mut b, guid, format!("g{g}-leaf{l}"), radix)
            })
            .collect();
        let mut group_spines = Vec::new();
        for s in 0..spines {
            guid += 1;
            next.push(0);
            let id = switch(&mut b, guid, format!("g{g}-spine{s}"), radix);
            group_spines.push(id);
            for &l in &leaf_ids {
                cable(&mut b, &mut next, l, id);
            }
        }
        spine_ids.push(group_spines);
        for &l in &leaf_ids {
            hosts(&mut b, &mut next, l, per_leaf, &mut ca_guid);
        }
    }
    for (g, here) in spine_ids.iter().enumerate() {
        for there in &spine_ids[g + 1..] {
            for (&a, &z) in here.iter().zip(there) {
                cable(&mut b, &mut next, a, z);
            }
        }
    }
    b
}

/// A two-level rail pod: `servers` servers with `rails` ports each, port r
/// on rail leaf r; every rail leaf cabled to each of `spines` spines.
pub fn rail_pod(servers: usize, rails: usize, spines: usize) -> FabricBuilder {
    let mut b = FabricBuilder::new();
    let mut next: Vec<u8> = Vec::new();
    let radix = (servers + spines).max(rails) as u8 + 1;
    let leaves: Vec<NodeId> = (0..rails)
        .map(|r| {
            next.push(0);
            switch(&mut b, 0x2000_0000 + r as u64, format!("rail{r}"), radix)
        })
        .collect();
    for s in 0..spines {
        next.push(0);
        let id = switch(&mut b, 0x2100_0000 + s as u64, format!("spine{s}"), radix);
        for &l in &leaves {
            cable(&mut b, &mut next, l, id);
        }
    }
    for h in 0..servers {
        let ca = b.add_node(
            NodeKind::Ca,
            0x3000_0000 + 0x100 * h as u64,
            format!("server{h}"),
            rails as u8,
        );
        next.push(0);
        for (r, &leaf) in leaves.iter().enumerate() {
            let p = next[leaf.idx()] + 1;
            next[leaf.idx()] = p;
            b.connect(PortRef::new(leaf, p), PortRef::new(ca, r as u8 + 1))
                .expect("rail cabling");
        }
    }
    b
}

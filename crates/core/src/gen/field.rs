//! What fat trees in the field have beyond the textbook shape, added to a
//! generated fabric: director chassis seen as chips, a SHARP Aggregation
//! Node on every switch chip, leaves without hosts.
//!
//! - A director (CS7500, CS8500) is a two-level tree inside one box: line
//!   chips with the external ports, spine chips cabled to every line chip
//!   of the chassis. A fabric of leaves and D directors is therefore a
//!   three-level PGFT whose level 2 (line chips) and level 3 (spine chips)
//!   are split by director: a leaf cables to one line chip of every
//!   director, often with a bundle of several cables.
//! - Quantum and Switch-IB 2 chips report a SHARP Aggregation Node: a CA
//!   with one port on the chip itself, on every chip (leaves, line chips,
//!   spines). To the routing it is an end port like any host.

use super::degrade::without_nodes;
use super::pgft::{pgft, Pgft};
use crate::fabric::{FabricBuilder, NodeId, NodeKind, PortRef};
use crate::rng::Rng;

/// Node GUIDs of the Aggregation Nodes (even numbers, as the generators'
/// CAs): apart from the hosts' and switches' ranges.
pub const AGGREGATION_GUID_BASE: u64 = 0x0300_0000;

/// The node description real Aggregation Nodes report (the generator adds
/// the switch's name, so that net-file names stay unique and readable).
pub const AGGREGATION_DESC: &str = "Mellanox Technologies Aggregation Node";

/// Leaves cabled to director chassis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directors {
    /// Director chassis; every leaf cables to one line chip of each.
    pub directors: usize,
    /// Line chips per director.
    pub line_chips: usize,
    /// Spine chips per director, each cabled once to every line chip.
    pub spine_chips: usize,
    /// Leaves per line chip (so `leaves_per_line × line_chips` leaves).
    pub leaves_per_line: usize,
    /// Hosts per leaf.
    pub hosts: usize,
    /// Cables in the bundle between a leaf and each of its line chips.
    pub bundle: usize,
}

impl Directors {
    /// A small twin of a real director fabric: two chassis of 4 line and
    /// 2 spine chips, 8 leaves of 3 hosts, bundles of 2 (tests, the
    /// engine matrix).
    pub fn small_twin() -> Self {
        Directors {
            directors: 2,
            line_chips: 4,
            spine_chips: 2,
            leaves_per_line: 2,
            hosts: 3,
            bundle: 2,
        }
    }

    /// The same tree as a PGFT (levels: leaves, line chips, spine chips).
    pub fn pgft(&self) -> Pgft {
        Pgft {
            down: vec![self.hosts, self.leaves_per_line, self.line_chips],
            up: vec![1, self.directors, self.spine_chips],
            parallel: vec![1, self.bundle, 1],
        }
    }
}

/// Leaves and director chassis, the chips named as ibnetdiscover shows a
/// chassis: `dir<D>/L<k>/U1` for line chips, `dir<D>/S<k>/U1` for spine
/// chips, `leaf<i>` for the leaves.
pub fn directors(d: &Directors) -> Result<FabricBuilder, String> {
    let p = d.pgft();
    let mut b = pgft(&p)?;
    // The PGFT adds switches level by level, labels counting their first
    // digit fastest: leaves (a2, a3; b1), line chips (a3; b1, b2), spine
    // chips (; b1, b2, b3), with b2 the director.
    let (leaves, lines) = (p.nodes_at(1), p.nodes_at(2));
    let switches: Vec<NodeId> = NodeId::range(b.node_count())
        .filter(|&i| b.node(i).kind == NodeKind::Switch)
        .collect();
    for (i, &id) in switches.iter().enumerate() {
        let name = if i < leaves {
            format!("leaf{i:03}")
        } else if i < leaves + lines {
            let k = i - leaves;
            let (line, dir) = (k % d.line_chips, k / d.line_chips);
            format!("dir{dir}/L{:02}/U1", line + 1)
        } else {
            let k = i - leaves - lines;
            let (dir, spine) = (k % d.directors, k / d.directors);
            format!("dir{dir}/S{:02}/U1", spine + 1)
        };
        b.set_desc(id, name);
    }
    Ok(b)
}

/// The fabric with one more port on every switch, cabled to a single-port
/// CA of its own: the SHARP Aggregation Node real chips report.
pub fn aggregation_nodes(b: &FabricBuilder) -> Result<FabricBuilder, String> {
    let mut out = FabricBuilder::new();
    for node in b.nodes() {
        let mut ports = node.port_slots() - 1;
        if node.is_switch() {
            ports += 1;
            if ports > 254 {
                return Err(format!(
                    "{} has no port left for an Aggregation Node (254 at most)",
                    node.desc
                ));
            }
        }
        out.add_node(node.kind, node.guid, node.desc.clone(), ports as u8);
    }
    for (id, node) in NodeId::range(b.node_count()).zip(b.nodes()) {
        for (port, r) in node.links() {
            if PortRef::new(id, port.raw()) < r {
                out.connect(PortRef::new(id, port.raw()), r)
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    let switches: Vec<(NodeId, usize, String)> = NodeId::range(b.node_count())
        .zip(b.nodes())
        .filter(|(_, n)| n.is_switch())
        .map(|(id, n)| (id, n.port_slots(), n.desc.clone()))
        .collect();
    for (k, (switch, port, name)) in switches.into_iter().enumerate() {
        let guid = AGGREGATION_GUID_BASE + 2 * k as u64;
        let an = out.add_node(NodeKind::Ca, guid, format!("{AGGREGATION_DESC} {name}"), 1);
        out.connect(PortRef::new(an, 1), PortRef::new(switch, port as u8))
            .map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// The fabric with the hosts of `count` switches removed, switches chosen
/// at random (seeded) among those that have hosts: leaves cabled and
/// powered but not (yet) populated.
pub fn empty_leaves(
    b: &FabricBuilder,
    count: usize,
    seed: u64,
) -> Result<(FabricBuilder, Vec<NodeId>), String> {
    let is_ca = |id: NodeId| b.node(id).kind == NodeKind::Ca;
    let mut with_hosts: Vec<NodeId> = NodeId::range(b.node_count())
        .filter(|&i| b.node(i).is_switch())
        .filter(|&i| b.node(i).links().any(|(_, r)| is_ca(r.node)))
        .collect();
    if count > with_hosts.len() {
        return Err(format!(
            "{count} leaves to empty, but only {} switches have hosts",
            with_hosts.len()
        ));
    }
    Rng::new(seed).shuffle(&mut with_hosts);
    with_hosts.truncate(count);
    with_hosts.sort();
    let mut gone = vec![false; b.node_count()];
    for &s in &with_hosts {
        for (_, r) in b.node(s).links() {
            if is_ca(r.node) {
                gone[r.node] = true;
            }
        }
    }
    Ok((without_nodes(b, &gone)?, with_hosts))
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::fabric;
    use super::*;

    fn small() -> Directors {
        Directors::small_twin()
    }

    #[test]
    fn directors_are_line_and_spine_chips_with_bundles() {
        let f = fabric(directors(&small()).unwrap());
        let g = f.graph();
        let by = |prefix: &str| {
            g.ids()
                .filter(|&s| f.switch_node(s).desc.contains(prefix))
                .collect::<Vec<_>>()
        };
        let (leaves, lines, spines) = (by("leaf"), by("/L"), by("/S"));
        assert_eq!((leaves.len(), lines.len(), spines.len()), (8, 8, 4));
        for &l in &leaves {
            assert_eq!(g.hosts(l), 3);
            // One line chip per director, a bundle of 2 to each.
            assert_eq!(g.neighbours(l).len(), 2);
            assert!(g.bundles(l).iter().all(|b| b.len() == 2));
            let dirs: std::collections::BTreeSet<String> = g
                .neighbours(l)
                .iter()
                .map(|&n| f.switch_node(n).desc[..4].to_string())
                .collect();
            assert_eq!(dirs.len(), 2, "a leaf reaches both directors");
        }
        // Spine chips are cabled to every line chip of their own director.
        for &s in &spines {
            let own = &f.switch_node(s).desc[..4];
            assert_eq!(g.neighbours(s).len(), 4);
            assert!(g
                .neighbours(s)
                .iter()
                .all(|&n| f.switch_node(n).desc.starts_with(own)));
        }
    }

    #[test]
    fn an_aggregation_node_on_every_switch() {
        let b = directors(&small()).unwrap();
        let before = b.node_count();
        let f = fabric(aggregation_nodes(&b).unwrap());
        assert_eq!(f.nodes().len(), before + 20);
        let g = f.graph();
        for s in g.ids() {
            let ans = f
                .node(f.switches()[s.idx()])
                .links()
                .filter(|(_, r)| f.node(r.node).desc.starts_with(AGGREGATION_DESC))
                .count();
            assert_eq!(ans, 1, "{}", f.switch_node(s).desc);
        }
    }

    #[test]
    fn empty_leaves_lose_only_their_hosts() {
        let b = directors(&small()).unwrap();
        let (e, emptied) = empty_leaves(&b, 3, 7).unwrap();
        assert_eq!(emptied.len(), 3);
        let f = fabric(e);
        assert_eq!(f.cas().count(), 8 * 3 - 3 * 3);
        assert_eq!(f.switches().len(), 20);
        let g = f.graph();
        assert_eq!(g.ids().filter(|&s| g.hosts(s) == 0).count(), 12 + 3);
        assert_eq!(empty_leaves(&b, 3, 7).unwrap().1, emptied, "seeded");
        assert!(empty_leaves(&b, 9, 7).unwrap_err().contains("only 8"));
    }
}

//! Dragonfly+ (Shpiner et al., HiPINEB 2017): `groups` groups, each a
//! two-level fat tree of `leaves` leaf switches (hosts on them) and
//! `spines` spine switches, every leaf cabled to every spine of its group;
//! global cables join spines of different groups, `cables_per_pair` per
//! pair of groups, spread round-robin over the spines of each group.
//!
//! Leaf ports: 1..=hosts the hosts, then one port per spine, then the
//! Aggregation Node (when asked for). Spine ports: one per leaf, then
//! `global_ports` global ports, then the Aggregation Node.
//!
//! An Aggregation Node (as NVIDIA SHARP's) is a one-port CA on a switch
//! port of its own: with `aggregation_nodes` every switch has one, so
//! "switches with CAs" no longer tells leaves from spines.

use crate::fabric::{FabricBuilder, Node, NodeId, NodeKind, PortRef};

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub leaves: usize,
    pub spines: usize,
    /// Hosts per leaf.
    pub hosts: usize,
    /// Global ports per spine.
    pub global_ports: usize,
    pub groups: usize,
    /// Global cables between each pair of groups; `None`: as many as the
    /// smallest group's global ports allow.
    pub cables_per_pair: Option<usize>,
    /// The first this many groups have one spine more (as JUPITER's).
    pub extra_spine_groups: usize,
    /// One Aggregation Node CA on every switch.
    pub aggregation_nodes: bool,
}

impl Params {
    pub fn new(
        leaves: usize,
        spines: usize,
        hosts: usize,
        global_ports: usize,
        groups: usize,
    ) -> Self {
        Params {
            leaves,
            spines,
            hosts,
            global_ports,
            groups,
            cables_per_pair: None,
            extra_spine_groups: 0,
            aggregation_nodes: false,
        }
    }

    fn spines_in(&self, g: usize) -> usize {
        self.spines + usize::from(g < self.extra_spine_groups)
    }
}

/// What a switch of this generator is, from its name ("dfp-g3-l1" is leaf
/// 1 of group 3, "dfp-g3-s0" spine 0): (group, is a leaf).
pub fn role_of(node: &Node) -> Option<(usize, bool)> {
    let rest = node.desc.strip_prefix("dfp-g")?;
    let mut parts = rest.split('-');
    let group = parts.next()?.parse().ok()?;
    let kind = parts.next()?;
    if parts.next().is_some() {
        return None; // a host or an Aggregation Node
    }
    Some((group, kind.starts_with('l')))
}

/// Whether a cable between two of this generator's switches is global
/// (spine to spine); `Some(false)` for a leaf–spine cable; None when a name
/// is not the generator's.
pub fn is_global(a: &Node, b: &Node) -> Option<bool> {
    let ((ga, _), (gb, _)) = (role_of(a)?, role_of(b)?);
    Some(ga != gb)
}

/// The global cables' ends: for every pair of groups (in order) and every
/// cable between them, (group, slot) at both ends, where a group's slots
/// go round-robin over its spines so that every spine gets its share.
fn global_cables(p: &Params, cables: usize) -> Vec<((usize, usize), (usize, usize))> {
    let mut next_slot = vec![0usize; p.groups];
    let mut out = Vec::new();
    // Pairs by growing distance around the groups, so that each group's
    // consecutive slots (consecutive spines) lead to different groups.
    for d in 1..p.groups {
        for g in 0..p.groups {
            let h = (g + d) % p.groups;
            if d * 2 > p.groups || (d * 2 == p.groups && g >= h) {
                continue;
            }
            for _ in 0..cables {
                out.push(((g, next_slot[g]), (h, next_slot[h])));
                next_slot[g] += 1;
                next_slot[h] += 1;
            }
        }
    }
    out
}

/// Builds the Dragonfly+, or says which parameter is impossible.
///
/// Kept as one function (about 110 lines): the parameter checks, then
/// switches, hosts, leaf–spine and global cables in the one GUID and port
/// numbering they share, read top to bottom like the fabric is cabled.
pub fn dragonfly_plus(p: &Params) -> Result<FabricBuilder, String> {
    if p.leaves == 0 || p.spines == 0 || p.groups == 0 {
        return Err("leaves, spines and groups must each be at least 1".into());
    }
    let ports_per_group = p.spines * p.global_ports;
    let cables = match (p.cables_per_pair, p.groups) {
        (_, 1) => 0,
        (Some(c), _) => c,
        (None, g) => ports_per_group / (g - 1),
    };
    if p.groups > 1 && (cables == 0 || cables * (p.groups - 1) > ports_per_group) {
        return Err(format!(
            "{} groups with {cables} cables per pair need {} global ports per group, and a group has {} spines \
             x {} global ports = {ports_per_group}; give more global ports per spine or fewer cables per pair",
            p.groups,
            cables * (p.groups - 1),
            p.spines,
            p.global_ports
        ));
    }
    let an = usize::from(p.aggregation_nodes);
    let spines_max = p.spines + usize::from(p.extra_spine_groups > 0);
    let leaf_radix = p.hosts + spines_max + an;
    let spine_radix = p.leaves + p.global_ports + an;
    if leaf_radix.max(spine_radix) > 254 {
        return Err(format!(
            "switch radix {} is above InfiniBand's 254 ports",
            leaf_radix.max(spine_radix)
        ));
    }
    let mut b = FabricBuilder::new();
    let mut leaf = Vec::new();
    let mut spine = Vec::new();
    let mut guid = 0x0300_0000u64;
    for g in 0..p.groups {
        leaf.push(
            (0..p.leaves)
                .map(|i| {
                    guid += 1;
                    b.add_node(
                        NodeKind::Switch,
                        guid,
                        format!("dfp-g{g}-l{i}"),
                        leaf_radix as u8,
                    )
                })
                .collect::<Vec<NodeId>>(),
        );
        spine.push(
            (0..p.spines_in(g))
                .map(|j| {
                    guid += 1;
                    b.add_node(
                        NodeKind::Switch,
                        guid,
                        format!("dfp-g{g}-s{j}"),
                        spine_radix as u8,
                    )
                })
                .collect::<Vec<NodeId>>(),
        );
    }
    let mut ca_guid = 0x0400_0000u64;
    let mut ca = |b: &mut FabricBuilder, desc: String, at: PortRef| -> Result<(), String> {
        ca_guid += 2;
        let node = b.add_node(NodeKind::Ca, ca_guid, desc, 1);
        b.connect(PortRef::new(node, 1), at)
            .map_err(|e| e.to_string())
    };
    for g in 0..p.groups {
        for (i, &l) in leaf[g].iter().enumerate() {
            for k in 0..p.hosts {
                ca(
                    &mut b,
                    format!("dfp-g{g}-l{i}-h{k}"),
                    PortRef::new(l, (k + 1) as u8),
                )?;
            }
            for (j, &s) in spine[g].iter().enumerate() {
                b.connect(
                    PortRef::new(l, (p.hosts + 1 + j) as u8),
                    PortRef::new(s, (i + 1) as u8),
                )
                .map_err(|e| e.to_string())?;
            }
            if p.aggregation_nodes {
                ca(
                    &mut b,
                    format!("dfp-g{g}-l{i}-an"),
                    PortRef::new(l, leaf_radix as u8),
                )?;
            }
        }
        if p.aggregation_nodes {
            for (j, &s) in spine[g].iter().enumerate() {
                ca(
                    &mut b,
                    format!("dfp-g{g}-s{j}-an"),
                    PortRef::new(s, spine_radix as u8),
                )?;
            }
        }
    }
    let end = |g: usize, slot: usize| {
        let n = p.spines_in(g);
        PortRef::new(spine[g][slot % n], (p.leaves + 1 + slot / n) as u8)
    };
    for ((g, x), (h, y)) in global_cables(p, cables) {
        b.connect(end(g, x), end(h, y)).map_err(|e| e.to_string())?;
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::{diameter, fabric};
    use super::*;
    use std::collections::HashMap;

    /// Global cables per (group, group), from the generator's names.
    fn pairs(f: &crate::fabric::Fabric) -> HashMap<(usize, usize), usize> {
        let mut out = HashMap::new();
        for s in f.switch_ids() {
            for c in f.graph().cables(s) {
                let (ga, _) = role_of(f.switch_node(s)).unwrap();
                let (gb, _) = role_of(f.switch_node(c.to)).unwrap();
                if ga != gb {
                    *out.entry((ga, gb)).or_insert(0) += 1;
                }
            }
        }
        out
    }

    #[test]
    fn shapes_sizes_and_cables_per_pair() {
        // (leaves, spines, hosts, global ports, groups, cables per pair)
        for (l, s, h, gp, g, cpp) in [
            (4, 4, 4, 2, 9, 1),
            (20, 18, 18, 8, 4, 48),
            (8, 8, 8, 4, 33, 1),
            (3, 2, 2, 3, 4, 2),
        ] {
            let f = fabric(dragonfly_plus(&Params::new(l, s, h, gp, g)).unwrap());
            assert_eq!(f.switches().len(), g * (l + s));
            assert_eq!(f.cas().count(), g * l * h);
            let p = pairs(&f);
            assert_eq!(p.len(), g * (g - 1));
            assert!(p.values().all(|&c| c == cpp), "{p:?}");
            assert_ne!(diameter(&f), usize::MAX);
            // Leaf to leaf: up, across, down.
            let leaves: Vec<_> = f
                .switch_ids()
                .filter(|&x| role_of(f.switch_node(x)).unwrap().1)
                .collect();
            let far = leaves
                .iter()
                .flat_map(|&x| leaves.iter().map(move |&y| (x, y)));
            assert_eq!(
                far.map(|(x, y)| f.graph().dist(x, y)).max(),
                Some(if g > 1 { 3 } else { 2 })
            );
            // Spines carry their share of the global cables: no spine more
            // than one above another of its group.
            for grp in 0..g {
                let globals: Vec<usize> = f
                    .switch_ids()
                    .filter(|&x| role_of(f.switch_node(x)) == Some((grp, false)))
                    .map(|x| {
                        f.graph()
                            .cables(x)
                            .iter()
                            .filter(|c| role_of(f.switch_node(c.to)).unwrap().0 != grp)
                            .count()
                    })
                    .collect();
                let (lo, hi) = (globals.iter().min().unwrap(), globals.iter().max().unwrap());
                assert!(hi - lo <= 1, "{globals:?}");
            }
        }
    }

    #[test]
    fn aggregation_nodes_and_extra_spines() {
        let f = fabric(
            dragonfly_plus(&Params {
                aggregation_nodes: true,
                extra_spine_groups: 2,
                ..Params::new(4, 4, 4, 2, 9)
            })
            .unwrap(),
        );
        assert_eq!(f.switches().len(), 9 * 8 + 2);
        assert_eq!(f.cas().count(), 9 * 16 + 74);
        for s in f.switch_ids() {
            assert!(f.graph().hosts(s) >= 1, "every switch has a CA");
        }
        assert!(dragonfly_plus(&Params {
            cables_per_pair: Some(2),
            ..Params::new(4, 4, 4, 2, 9)
        })
        .unwrap_err()
        .contains("global ports per group"));
    }
}

//! Fully connected Dragonflies (Kim & Dally; the DLA paper §2.1): `groups`
//! groups of `a` switches, each group a clique, every pair of groups joined
//! by the same number of global cables, `h` global ports and `p` hosts per
//! switch. With the canonical `groups = a*h + 1` each pair of groups has
//! exactly one global cable.
//!
//! Switch ports: 1..=p hosts, then a-1 local ports, then h global ports.

use crate::fabric::{FabricBuilder, Node, NodeId, NodeKind, PortRef};

/// How global cables are laid out: which group a group's k-th global port
/// (switch k / h, its (k mod h)-th global port) leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrangement {
    /// Port k leads to group (g + 1 + k mod (G-1)) mod G ("absolute").
    Consecutive,
    /// Port k leads to group (g - 1 - k mod (G-1)) mod G (Camarero et al.).
    Palmtree,
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub a: usize,
    pub h: usize,
    pub p: usize,
    /// Number of groups; `a*h` must be a multiple of `groups - 1`.
    pub groups: usize,
    pub arrangement: Arrangement,
}

impl Params {
    /// The canonical Dragonfly: a*h + 1 groups, consecutive arrangement.
    pub fn new(a: usize, h: usize, p: usize) -> Self {
        Params {
            a,
            h,
            p,
            groups: a * h + 1,
            arrangement: Arrangement::Consecutive,
        }
    }
}

/// The group of a switch this generator named ("df-g3-s1" is in group 3).
pub fn group_of(node: &Node) -> Option<usize> {
    let rest = node.desc.strip_prefix("df-g")?;
    rest.split('-').next()?.parse().ok()
}

/// Whether a cable between two of this generator's switches is global
/// (joins two groups); None when a name is not the generator's.
pub fn is_global(a: &Node, b: &Node) -> Option<bool> {
    Some(group_of(a)? != group_of(b)?)
}

/// Builds the Dragonfly, or says which parameter is impossible.
pub fn dragonfly(params: &Params) -> Result<FabricBuilder, String> {
    let Params {
        a,
        h,
        p,
        groups,
        arrangement,
    } = *params;
    if a == 0 || h == 0 && groups > 1 {
        return Err("a must be at least 1, and h at least 1 when there are several groups".into());
    }
    if groups < 1 || (groups > 1 && (a * h) % (groups - 1) != 0) {
        return Err(format!(
            "{groups} groups cannot be joined evenly: each group has a*h = {} global ports, which must be a multiple of groups - 1",
            a * h
        ));
    }
    let radix = p + a - 1 + if groups > 1 { h } else { 0 };
    if radix > 254 {
        return Err(format!(
            "switch radix {radix} is above InfiniBand's 254 ports"
        ));
    }
    let mut b = FabricBuilder::new();
    let switch = |g: usize, i: usize| NodeId::new(g * a + i);
    for g in 0..groups {
        for i in 0..a {
            b.add_node(
                NodeKind::Switch,
                0x0200_0000 + switch(g, i).idx() as u64,
                format!("df-g{g}-s{i}"),
                radix as u8,
            );
        }
    }
    for g in 0..groups {
        for i in 0..a {
            for k in 0..p {
                let n = (switch(g, i).idx() * p + k) as u64;
                let host = b.add_node(
                    NodeKind::Ca,
                    0x0100_0000 + 2 * n,
                    format!("df-g{g}-s{i}-h{k}"),
                    1,
                );
                b.connect(
                    PortRef::new(host, 1),
                    PortRef::new(switch(g, i), (k + 1) as u8),
                )
                .map_err(|e| e.to_string())?;
            }
            for j in i + 1..a {
                // Local port to member j is p + j (skipping itself).
                let (pi, pj) = (p + j, p + i + 1);
                b.connect(
                    PortRef::new(switch(g, i), pi as u8),
                    PortRef::new(switch(g, j), pj as u8),
                )
                .map_err(|e| e.to_string())?;
            }
        }
    }
    if groups > 1 {
        let span = groups - 1;
        let offset = |m: usize| match arrangement {
            Arrangement::Consecutive => m + 1,
            Arrangement::Palmtree => groups - 1 - m,
        };
        // inverse[o] = the m whose offset is o.
        let mut inverse = vec![0; groups];
        for m in 0..span {
            inverse[offset(m)] = m;
        }
        let global_port = |k: usize| PortRef::new(NodeId::default(), (p + a - 1 + k % h + 1) as u8);
        for g in 0..groups {
            for k in 0..a * h {
                let (copy, m) = (k / span, k % span);
                let target = (g + offset(m)) % groups;
                let back = copy * span + inverse[groups - offset(m)];
                let here = PortRef {
                    node: switch(g, k / h),
                    ..global_port(k)
                };
                let there = PortRef {
                    node: switch(target, back / h),
                    ..global_port(back)
                };
                if here < there {
                    b.connect(here, there).map_err(|e| e.to_string())?;
                }
            }
        }
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::{diameter, fabric};
    use super::*;
    use crate::fabric::Fabric;

    fn build(params: &Params) -> Fabric {
        fabric(dragonfly(params).unwrap())
    }

    #[test]
    fn canonical_sizes_degrees_and_diameter() {
        for arrangement in [Arrangement::Consecutive, Arrangement::Palmtree] {
            for (a, h, p) in [(4, 2, 2), (6, 3, 3), (8, 4, 4)] {
                let f = build(&Params {
                    arrangement,
                    ..Params::new(a, h, p)
                });
                let g = a * h + 1;
                assert_eq!(f.switches().len(), a * g);
                assert_eq!(f.cas().count(), a * p * g);
                for &s in f.switches() {
                    assert_eq!(
                        f.node(s).links().count(),
                        p + a - 1 + h,
                        "every port cabled"
                    );
                }
                assert_eq!(diameter(&f), 3, "a={a} h={h}");
                // Exactly one global cable per pair of groups.
                let mut pairs = std::collections::HashMap::new();
                for s in f.switch_ids() {
                    for c in f.graph().cables(s) {
                        let (si, t) = (s.idx(), c.to.idx());
                        if si / a != t / a {
                            *pairs.entry((si / a, t / a)).or_insert(0) += 1;
                        }
                    }
                }
                assert_eq!(pairs.len(), g * (g - 1));
                assert!(pairs.values().all(|&c| c == 1));
            }
        }
    }

    #[test]
    fn fewer_groups_get_parallel_global_cables() {
        let f = build(&Params {
            groups: 5,
            ..Params::new(4, 2, 1)
        });
        let mut pairs = std::collections::HashMap::new();
        for s in f.switch_ids() {
            for c in f.graph().cables(s) {
                let (si, t) = (s.idx(), c.to.idx());
                if si / 4 != t / 4 {
                    *pairs.entry((si / 4, t / 4)).or_insert(0) += 1;
                }
            }
        }
        assert_eq!(pairs.len(), 20);
        assert!(pairs.values().all(|&c| c == 2), "{pairs:?}");
        assert!(dragonfly(&Params {
            groups: 4,
            ..Params::new(4, 2, 1)
        })
        .unwrap_err()
        .contains("multiple of groups - 1"));
    }
}

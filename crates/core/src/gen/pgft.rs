//! Parallel-ports generalized fat trees, PGFT(h; m; w; p) (Zahavi's
//! notation): the trees real clusters are built as, leaf–spine pairs with
//! several cables between a leaf and a spine included.
//!
//! Level 0 holds the hosts, levels 1..=h the switches. A node of level
//! l − 1 has `w[l]` parents on level l and is joined to each by `p[l]`
//! parallel cables; a switch of level l has `m[l]` children. A switch of
//! level l is labelled (a_(l+1) .. a_h ; b_1 .. b_l) with a_i < m_i and
//! b_i < w_i: the node of level l − 1 labelled (a_l .. a_h ; b_1 .. b_(l−1))
//! is cabled to the w_l switches (a_(l+1) .. a_h ; b_1 .. b_(l−1), b_l). So
//! a leaf–spine with 16 leaves of 18 hosts and 9 spines, two cables per
//! leaf–spine pair, is PGFT(2; 18,16; 1,9; 1,2).
//!
//! Ports: a switch's down ports come first (child by child, its parallel
//! cables together), then its up ports (parent by parent).

use super::direct::{CA_GUID_BASE, SWITCH_GUID_BASE};
use crate::fabric::{FabricBuilder, NodeId, NodeKind, PortRef};

/// The PGFT's parameters, level 1 first (`down[0]` = hosts per leaf).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pgft {
    /// m_l: children of a switch of level l.
    pub down: Vec<usize>,
    /// w_l: parents of a node of level l − 1.
    pub up: Vec<usize>,
    /// p_l: parallel cables between a node of level l − 1 and each parent.
    pub parallel: Vec<usize>,
}

impl Pgft {
    /// A two-level leaf–spine: `leaves` leaves with `hosts` hosts each,
    /// `spines` spines, `parallel` cables between every leaf and spine.
    pub fn leaf_spine(leaves: usize, hosts: usize, spines: usize, parallel: usize) -> Self {
        Pgft {
            down: vec![hosts, leaves],
            up: vec![1, spines],
            parallel: vec![1, parallel],
        }
    }

    pub fn levels(&self) -> usize {
        self.down.len()
    }

    /// Nodes on level l (0: hosts): prod_(i>l) m_i * prod_(i<=l) w_i.
    pub fn nodes_at(&self, l: usize) -> usize {
        self.down[l..].iter().product::<usize>() * self.up[..l].iter().product::<usize>()
    }

    /// Ports a switch of level l uses (down, then up).
    pub fn ports_at(&self, l: usize) -> usize {
        let down = self.down[l - 1] * self.parallel[l - 1];
        let up = if l < self.levels() {
            self.up[l] * self.parallel[l]
        } else {
            0
        };
        down + up
    }

    fn check(&self) -> Result<(), String> {
        let h = self.down.len();
        if h == 0 || self.up.len() != h || self.parallel.len() != h {
            return Err(format!(
                "a PGFT needs the same number (>= 1) of down, up and parallel values, one per level; got {}, {} and {}",
                self.down.len(),
                self.up.len(),
                self.parallel.len()
            ));
        }
        if self
            .down
            .iter()
            .chain(&self.up)
            .chain(&self.parallel)
            .any(|&x| x == 0)
        {
            return Err("every down, up and parallel value must be at least 1".into());
        }
        if self.up[0] != 1 || self.parallel[0] != 1 {
            return Err(
                "hosts have one port here: the first up and parallel values must be 1".into(),
            );
        }
        for l in 1..=h {
            let ports = self.ports_at(l);
            if ports > 254 {
                return Err(format!(
                    "switches of level {l} would need {ports} ports, above InfiniBand's 254"
                ));
            }
        }
        let total: usize = (0..=h).map(|l| self.nodes_at(l)).sum();
        if self.nodes_at(0) > 48_000 || total > 60_000 {
            return Err(format!(
                "{} hosts and {total} nodes: more than a subnet has LIDs",
                self.nodes_at(0)
            ));
        }
        Ok(())
    }
}

/// Digit radices of level l's labels: (m_(l+1) .. m_h ; w_1 .. w_l).
fn radices(p: &Pgft, l: usize) -> Vec<usize> {
    p.down[l..].iter().chain(&p.up[..l]).copied().collect()
}

/// Index of label (a_(l+1)..a_h ; b_1..b_l) among level l's nodes; the
/// first digit counts fastest, so a leaf's hosts are consecutive.
fn index(p: &Pgft, l: usize, a: &[usize], b: &[usize]) -> usize {
    let digits: Vec<usize> = a.iter().chain(b).copied().collect();
    digits
        .iter()
        .zip(radices(p, l))
        .rev()
        .fold(0, |acc, (&digit, radix)| acc * radix + digit)
}

fn label(p: &Pgft, l: usize, mut i: usize) -> (Vec<usize>, Vec<usize>) {
    let mut digits = Vec::new();
    for radix in radices(p, l) {
        digits.push(i % radix);
        i /= radix;
    }
    let b = digits.split_off(p.levels() - l);
    (digits, b)
}

pub fn pgft(p: &Pgft) -> Result<FabricBuilder, String> {
    pgft_with_top_hosts(p, 0, 0)
}

/// The PGFT with `top_hosts` more hosts (management nodes, storage) on
/// top switches chosen at random (seeded): each chosen switch gets one
/// more port per host, after its down ports.
pub fn pgft_with_top_hosts(p: &Pgft, top_hosts: usize, seed: u64) -> Result<FabricBuilder, String> {
    p.check()?;
    let h = p.levels();
    let tops = p.nodes_at(h);
    let mut extra = vec![0usize; tops];
    let mut rng = crate::rng::Rng::new(seed);
    for _ in 0..top_hosts {
        extra[rng.below(tops)] += 1;
    }
    if let Some(most) = extra.iter().max().filter(|&&e| p.ports_at(h) + e > 254) {
        return Err(format!(
            "a top switch would need {} ports for {most} more hosts, above 254",
            p.ports_at(h) + most
        ));
    }
    let mut b = FabricBuilder::new();
    // ids[l][i]: node i of level l; hosts are added last so that switch
    // GUIDs and names come first.
    let mut ids: Vec<Vec<NodeId>> = vec![Vec::new()];
    for l in 1..=h {
        let mut level = Vec::with_capacity(p.nodes_at(l));
        for i in 0..p.nodes_at(l) {
            let (a, bb) = label(p, l, i);
            let name = format!("pgft-l{l}-{}", text(&a, &bb));
            let guid = SWITCH_GUID_BASE + b.node_count() as u64;
            let more = if l == h {
                extra.get(i).copied().unwrap_or(0)
            } else {
                0
            };
            level.push(b.add_node(NodeKind::Switch, guid, name, (p.ports_at(l) + more) as u8));
        }
        ids.push(level);
    }
    for i in 0..p.nodes_at(0) {
        let (a, _) = label(p, 0, i);
        let host = b.add_node(
            NodeKind::Ca,
            CA_GUID_BASE + 2 * i as u64,
            format!("pgft-h{}", text(&a, &[])),
            1,
        );
        ids[0].push(host);
    }
    for l in 1..=h {
        let (w, par) = (p.up[l - 1], p.parallel[l - 1]);
        for i in 0..p.nodes_at(l - 1) {
            let (a, bb) = label(p, l - 1, i);
            let child = ids[l - 1][i];
            for parent_digit in 0..w {
                let mut pb = bb.clone();
                pb.push(parent_digit);
                let parent = ids[l][index(p, l, &a[1..], &pb)];
                for k in 0..par {
                    let down_port = 1 + a[0] * par + k;
                    // Hosts have port 1; a switch's up ports follow its
                    // down ports.
                    let up_port = if l == 1 {
                        1
                    } else {
                        1 + down_ports(p, l - 1) + parent_digit * par + k
                    };
                    b.connect(
                        PortRef::new(child, up_port as u8),
                        PortRef::new(parent, down_port as u8),
                    )
                    .map_err(|e| e.to_string())?;
                }
            }
        }
    }
    let mut j = p.nodes_at(0);
    for (i, &more) in extra.iter().enumerate() {
        for k in 0..more {
            let guid = CA_GUID_BASE + 2 * j as u64;
            let host = b.add_node(NodeKind::Ca, guid, format!("pgft-top{i}-h{k}"), 1);
            let port = 1 + p.ports_at(h) + k;
            b.connect(PortRef::new(host, 1), PortRef::new(ids[h][i], port as u8))
                .map_err(|e| e.to_string())?;
            j += 1;
        }
    }
    Ok(b)
}

/// Down ports of a switch of level l (its up ports follow them).
fn down_ports(p: &Pgft, l: usize) -> usize {
    p.down[l - 1] * p.parallel[l - 1]
}

fn text(a: &[usize], b: &[usize]) -> String {
    let digits = |d: &[usize]| {
        if d.iter().all(|&x| x < 10) {
            d.iter().map(|x| x.to_string()).collect::<String>()
        } else {
            d.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(".")
        }
    };
    if b.is_empty() {
        digits(a)
    } else {
        format!("{}_{}", digits(a), digits(b))
    }
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::fabric;
    use super::*;

    #[test]
    fn leaf_spine_with_parallel_cables() {
        let p = Pgft::leaf_spine(16, 18, 9, 2);
        let f = fabric(pgft(&p).unwrap());
        assert_eq!(f.cas().count(), 16 * 18);
        assert_eq!(f.switches().len(), 16 + 9);
        let g = f.graph();
        for s in g.ids() {
            let (hosts, cables) = (g.hosts(s), g.cables(s).len());
            if hosts > 0 {
                assert_eq!((hosts, cables, g.neighbours(s).len()), (18, 18, 9));
            } else {
                assert_eq!((cables, g.neighbours(s).len()), (32, 16));
            }
            assert!(g.bundles(s).iter().all(|b| b.len() == 2));
        }
        assert_eq!(g.diameter(), 2);
    }

    #[test]
    fn three_levels_match_the_counts() {
        // PGFT(3; 4,4,3; 1,2,2; 1,2,1): 48 hosts, 12 leaves, 6 middle, 4 top.
        let p = Pgft {
            down: vec![4, 4, 3],
            up: vec![1, 2, 2],
            parallel: vec![1, 2, 1],
        };
        assert_eq!(
            (p.nodes_at(0), p.nodes_at(1), p.nodes_at(2), p.nodes_at(3)),
            (48, 12, 6, 4)
        );
        let f = fabric(pgft(&p).unwrap());
        let g = f.graph();
        assert_eq!(g.diameter(), 4);
        // Every cable between levels 1 and 2 comes in a pair, 2 and 3 single.
        let leaves: Vec<_> = g.ids().filter(|&s| g.hosts(s) > 0).collect();
        assert_eq!(leaves.len(), 12);
        for &s in &leaves {
            assert_eq!(g.neighbours(s).len(), 2);
            assert!(g.bundles(s).iter().all(|b| b.len() == 2));
        }
        let cables: usize = g.ids().map(|s| g.cables(s).len()).sum::<usize>() / 2;
        assert_eq!(cables, 12 * 2 * 2 + 6 * 2);
        // Switch port counts as announced, every port used.
        for &s in f.switches() {
            let node = f.node(s);
            assert_eq!(
                node.links().filter(|(p, _)| !p.is_management()).count(),
                node.port_slots() - 1,
                "{}",
                node.desc
            );
        }
    }

    #[test]
    fn labels_and_indices_agree_and_a_leafs_hosts_are_consecutive() {
        let p = Pgft {
            down: vec![4, 4, 3],
            up: vec![1, 2, 2],
            parallel: vec![1, 2, 1],
        };
        for l in 0..=3 {
            for i in 0..p.nodes_at(l) {
                let (a, b) = label(&p, l, i);
                assert_eq!(index(&p, l, &a, &b), i, "level {l} node {i}");
            }
        }
        let b = pgft(&p).unwrap();
        let leaf_of = |host: &str| {
            let n = b.nodes().iter().find(|n| n.desc == host).unwrap();
            n.port(1).unwrap().remote.unwrap().node
        };
        assert_eq!(leaf_of("pgft-h000"), leaf_of("pgft-h300"));
        assert_ne!(leaf_of("pgft-h000"), leaf_of("pgft-h010"));
    }

    #[test]
    fn bad_parameters_are_explained() {
        let bad = |down: Vec<usize>, up: Vec<usize>, parallel: Vec<usize>| {
            pgft(&Pgft { down, up, parallel }).unwrap_err()
        };
        assert!(bad(vec![4], vec![1, 2], vec![1]).contains("one per level"));
        assert!(bad(vec![4, 0], vec![1, 2], vec![1, 1]).contains("at least 1"));
        assert!(bad(vec![4, 4], vec![2, 2], vec![1, 1]).contains("first up"));
        assert!(bad(vec![200, 4], vec![1, 60], vec![1, 1]).contains("254"));
    }
}

//! m-port n-trees (Lin, Chung & Huang; mlid-fat-tree-routing.txt §3):
//! 2·(m/2)^n hosts and (2n − 1)·(m/2)^(n−1) switches of m ports on n levels.
//!
//! Switch SW⟨w, l⟩ has a label w of n − 1 digits: at level 0 (the roots)
//! every digit is below m/2; below the roots the first digit is below m and
//! the others below m/2. Port k of SW⟨w, l⟩ (InfiniBand port k + 1) leads
//! down to SW⟨w', l+1⟩ when w' is w without its last digit with k inserted
//! at position l, arriving there at port w_(n−2) + m/2 (an up port). Leaf
//! switches (level n − 1) carry hosts P(w, k) on ports k < m/2 (k < m for a
//! single-level tree). Port numbers follow the paper so that the labels can
//! be read off the cabling; `--shuffle-ports` removes that on purpose.

use super::direct::{CA_GUID_BASE, SWITCH_GUID_BASE};
use crate::fabric::{FabricBuilder, NodeId, NodeKind, PortRef};

pub fn fattree(m: usize, n: usize) -> Result<FabricBuilder, String> {
    if m < 2 || !m.is_power_of_two() {
        return Err(format!(
            "m = {m}: the switch port count must be a power of two ≥ 2"
        ));
    }
    if m > 254 {
        return Err(format!("m = {m} is above InfiniBand's 254 ports"));
    }
    if n == 0 {
        return Err("n must be at least 1".into());
    }
    let half = m / 2;
    let hosts = 2 * half
        .checked_pow(n as u32)
        .filter(|&h| h <= 48_000)
        .ok_or("more hosts than a subnet has LIDs")?;
    // Labels per level, in lexicographic order; index maps label → node.
    let labels_at = |l: usize| -> Vec<Vec<usize>> {
        let radices: Vec<usize> = (0..n - 1)
            .map(|i| if i == 0 && l > 0 { m } else { half })
            .collect();
        let count: usize = radices.iter().product();
        (0..count)
            .map(|i| super::direct::coordinates(i, &radices))
            .collect()
    };
    let mut b = FabricBuilder::new();
    let mut ids: Vec<std::collections::HashMap<Vec<usize>, NodeId>> = Vec::new();
    for l in 0..n {
        let mut level = std::collections::HashMap::new();
        for w in labels_at(l) {
            let name = format!("ft-l{l}-{}", digits_text(&w));
            let guid = SWITCH_GUID_BASE + b.node_count() as u64;
            level.insert(w, b.add_node(NodeKind::Switch, guid, name, m as u8));
        }
        ids.push(level);
    }
    for l in 0..n - 1 {
        let down_radix = if l == 0 { m } else { half };
        for w in labels_at(l) {
            let upper = ids[l][&w];
            for k in 0..down_radix {
                let mut child = w[..n - 2].to_vec();
                child.insert(l, k);
                let lower = ids[l + 1][&child];
                let up_port = w[n - 2] + half;
                b.connect(
                    PortRef::new(upper, (k + 1) as u8),
                    PortRef::new(lower, (up_port + 1) as u8),
                )
                .map_err(|e| e.to_string())?;
            }
        }
    }
    let host_ports = if n == 1 { m } else { half };
    let mut count = 0u64;
    for w in labels_at(n - 1) {
        let leaf = ids[n - 1][&w];
        for k in 0..host_ports {
            let name = format!("ft-p{}{k}", digits_text(&w));
            let host = b.add_node(NodeKind::Ca, CA_GUID_BASE + 2 * count, name, 1);
            count += 1;
            b.connect(PortRef::new(host, 1), PortRef::new(leaf, (k + 1) as u8))
                .map_err(|e| e.to_string())?;
        }
    }
    debug_assert_eq!(count as usize, hosts);
    Ok(b)
}

fn digits_text(w: &[usize]) -> String {
    // Digits can exceed 9 for m > 20; a separator keeps labels unambiguous.
    if w.iter().all(|&d| d < 10) {
        w.iter().map(|d| d.to_string()).collect()
    } else {
        w.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(".")
            + "."
    }
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::{diameter, fabric};
    use super::*;

    #[test]
    fn sizes_match_the_paper() {
        for (m, n) in [(4, 3), (8, 3), (4, 2), (8, 2), (16, 2), (4, 1)] {
            let f = fabric(fattree(m, n).unwrap());
            let half = m / 2;
            assert_eq!(f.cas().count(), 2 * half.pow(n as u32), "m={m} n={n}");
            assert_eq!(
                f.switches().len(),
                (2 * n - 1) * half.pow(n as u32 - 1),
                "m={m} n={n}"
            );
            for &s in f.switches() {
                let node = f.node(s);
                // Roots use all m ports downwards; every other switch all
                // m ports too (m/2 down, m/2 up).
                assert_eq!(
                    node.links().filter(|(p, _)| !p.is_management()).count(),
                    m,
                    "m={m} n={n} {}",
                    node.desc
                );
            }
            assert_eq!(diameter(&f), 2 * (n - 1), "m={m} n={n}");
        }
    }

    #[test]
    fn figure_5_example_cable() {
        // ⟨01,0⟩ port 1 (IB port 2) reaches ⟨10,1⟩ port 3 (IB port 4), and
        // ⟨20,2⟩ port 1 (IB port 2) holds P(201).
        let b = fattree(4, 3).unwrap();
        let find = |name: &str| {
            crate::fabric::NodeId::new(b.nodes().iter().position(|n| n.desc == name).unwrap())
        };
        let (root, mid, leaf, host) = (
            find("ft-l0-01"),
            find("ft-l1-10"),
            find("ft-l2-20"),
            find("ft-p201"),
        );
        assert_eq!(
            b.node(root).port(2).unwrap().remote,
            Some(PortRef::new(mid, 4))
        );
        assert_eq!(
            b.node(leaf).port(2).unwrap().remote,
            Some(PortRef::new(host, 1))
        );
    }

    #[test]
    fn bad_parameters_are_explained() {
        assert!(fattree(6, 2).unwrap_err().contains("power of two"));
        assert!(fattree(4, 0).is_err());
    }
}

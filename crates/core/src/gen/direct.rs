//! Direct topologies (every switch has hosts) described at switch level:
//! a list of switches and the cables between them, turned into a
//! `FabricBuilder` with the same port layout for every family.
//!
//! Switch ports: 1..=hosts first, then inter-switch cables in the order
//! they were listed, so a generator's listing order fixes the (unshuffled)
//! port numbering and stays deterministic.

use crate::fabric::{FabricBuilder, NodeId, NodeKind, PortRef};

/// GUID bases shared with the Dragonfly generator (ibsim renumbers anyway;
/// these only matter for offline runs).
pub const SWITCH_GUID_BASE: u64 = 0x0200_0000;
pub const CA_GUID_BASE: u64 = 0x0100_0000;

/// Switches (by name) with `hosts` endpoints each, joined by `cables`
/// (switch index pairs; a pair listed twice is two parallel cables).
#[derive(Clone, Debug, Default)]
pub struct CablePlan {
    pub names: Vec<String>,
    pub cables: Vec<(usize, usize)>,
}

impl CablePlan {
    pub fn add_switch(&mut self, name: String) -> usize {
        self.names.push(name);
        self.names.len() - 1
    }

    /// `width` parallel cables between `a` and `b`.
    pub fn cable(&mut self, a: usize, b: usize, width: usize) {
        for _ in 0..width {
            self.cables.push((a, b));
        }
    }

    pub fn degrees(&self) -> Vec<usize> {
        let mut d = vec![0; self.names.len()];
        for &(a, b) in &self.cables {
            d[a] += 1;
            d[b] += 1;
        }
        d
    }

    /// Builds the fabric with `hosts` endpoints on every switch, named
    /// `<switch name>-h<k>`. Fails when a switch would need more than
    /// InfiniBand's 254 ports, or for a self-cable.
    pub fn build(&self, hosts: usize) -> Result<FabricBuilder, String> {
        if let Some(&(a, _)) = self.cables.iter().find(|(a, b)| a == b) {
            return Err(format!(
                "switch {} would be cabled to itself",
                self.names[a]
            ));
        }
        let degrees = self.degrees();
        let max = degrees.iter().max().copied().unwrap_or(0) + hosts;
        if max > 254 {
            return Err(format!(
                "switch radix {max} (hosts + inter-switch cables) is above InfiniBand's 254 ports"
            ));
        }
        let mut b = FabricBuilder::new();
        let ids: Vec<NodeId> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                b.add_node(
                    NodeKind::Switch,
                    SWITCH_GUID_BASE + i as u64,
                    name.clone(),
                    (hosts + degrees[i]) as u8,
                )
            })
            .collect();
        let mut next_port: Vec<usize> = vec![hosts + 1; self.names.len()];
        for &(x, y) in &self.cables {
            let (px, py) = (next_port[x], next_port[y]);
            next_port[x] += 1;
            next_port[y] += 1;
            b.connect(
                PortRef::new(ids[x], px as u8),
                PortRef::new(ids[y], py as u8),
            )
            .map_err(|e| e.to_string())?;
        }
        for (i, name) in self.names.iter().enumerate() {
            for k in 0..hosts {
                let n = (i * hosts + k) as u64;
                let host = b.add_node(
                    NodeKind::Ca,
                    CA_GUID_BASE + 2 * n,
                    format!("{name}-h{k}"),
                    1,
                );
                b.connect(PortRef::new(host, 1), PortRef::new(ids[i], (k + 1) as u8))
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(b)
    }
}

/// Mixed-radix coordinates of switch `index` in a grid of `dims`
/// (first dimension varies slowest).
pub fn coordinates(mut index: usize, dims: &[usize]) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for (slot, &k) in c.iter_mut().zip(dims).rev() {
        *slot = index % k;
        index /= k;
    }
    c
}

/// Inverse of `coordinates`.
pub fn index_of(coords: &[usize], dims: &[usize]) -> usize {
    coords.iter().zip(dims).fold(0, |acc, (&c, &k)| acc * k + c)
}

/// `prefix-c0-c1-...`: a switch name that shows its grid position.
pub fn grid_name(prefix: &str, coords: &[usize]) -> String {
    let mut s = prefix.to_string();
    for c in coords {
        s.push('-');
        s.push_str(&c.to_string());
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fabric::Fabric;

    /// Built with sequential LIDs, for tests of the generators.
    pub fn fabric(b: FabricBuilder) -> Fabric {
        let mut b = b;
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    /// Largest shortest-path distance between switches (usize::MAX when
    /// disconnected).
    pub fn diameter(f: &Fabric) -> usize {
        let g = f.graph();
        if g.is_connected() {
            g.diameter() as usize
        } else {
            usize::MAX
        }
    }

    #[test]
    fn coordinates_round_trip() {
        let dims = [4, 3, 5];
        for i in 0..60 {
            assert_eq!(index_of(&coordinates(i, &dims), &dims), i);
        }
        assert_eq!(coordinates(7, &dims), vec![0, 1, 2]);
    }

    #[test]
    fn ports_hosts_first_then_cables_in_order() {
        let mut g = CablePlan::default();
        let (a, b) = (g.add_switch("a".into()), g.add_switch("b".into()));
        g.cable(a, b, 2);
        let f = fabric(g.build(3).unwrap());
        let sw = f.node(f.switches()[0]);
        assert_eq!(sw.port_slots(), 6);
        let peers: Vec<u8> = sw
            .links()
            .map(|(p, _)| p.raw())
            .filter(|&p| p > 3)
            .collect();
        assert_eq!(peers, vec![4, 5]);
        assert_eq!(f.cas().count(), 6);
        let mut big = CablePlan::default();
        let (x, y) = (big.add_switch("x".into()), big.add_switch("y".into()));
        big.cable(x, y, 250);
        assert!(big.build(5).unwrap_err().contains("254"));
    }
}

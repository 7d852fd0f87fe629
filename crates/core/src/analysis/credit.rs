//! Credit loops: cycles in the channel dependency graph.
//!
//! A channel is a switch's out-port on one VL. A packet holding channel A
//! and waiting for channel B creates the dependency A -> B; the routing can
//! deadlock exactly when these dependencies form a cycle (Dally & Seitz).
//! Dependencies are collected while paths are traced (`report`), so the
//! graph covers exactly the routes the tables produce.

/// A channel: switch index, out-port, VL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Channel {
    pub switch: usize,
    pub port: u8,
    pub vl: u8,
}

/// Dependency graph over dense channel ids (switch port offset + port,
/// times 16 VLs).
pub struct DependencyGraph {
    offsets: Vec<usize>,
    edges: Vec<Vec<u32>>,
}

impl DependencyGraph {
    /// `ports[s]`: number of port slots of switch s (including port 0).
    pub fn new(ports: &[usize]) -> Self {
        let mut offsets = Vec::with_capacity(ports.len() + 1);
        let mut total = 0;
        for &p in ports {
            offsets.push(total);
            total += p;
        }
        offsets.push(total);
        DependencyGraph { offsets, edges: vec![Vec::new(); total * 16] }
    }

    fn id(&self, c: Channel) -> u32 {
        ((self.offsets[c.switch] + c.port as usize) * 16 + (c.vl as usize & 0xf)) as u32
    }

    fn channel(&self, id: u32) -> Channel {
        let (slot, vl) = (id as usize / 16, (id % 16) as u8);
        let switch = self.offsets.partition_point(|&o| o <= slot) - 1;
        Channel { switch, port: (slot - self.offsets[switch]) as u8, vl }
    }

    pub fn add(&mut self, from: Channel, to: Channel) {
        let (a, b) = (self.id(from), self.id(to));
        let list = &mut self.edges[a as usize];
        if !list.contains(&b) {
            list.push(b);
        }
    }

    pub fn edge_count(&self) -> usize {
        self.edges.iter().map(Vec::len).sum()
    }

    /// One cycle, as the channels along it, if there is any.
    pub fn find_cycle(&self) -> Option<Vec<Channel>> {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let mut color = vec![WHITE; self.edges.len()];
        // Iterative DFS: (node, index of the next edge to follow).
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for root in 0..self.edges.len() as u32 {
            if color[root as usize] != WHITE || self.edges[root as usize].is_empty() {
                continue;
            }
            stack.push((root, 0));
            color[root as usize] = GREY;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                if let Some(&to) = self.edges[node as usize].get(*next) {
                    *next += 1;
                    match color[to as usize] {
                        WHITE => {
                            color[to as usize] = GREY;
                            stack.push((to, 0));
                        }
                        GREY => {
                            let start = stack.iter().position(|&(n, _)| n == to).unwrap_or(0);
                            return Some(stack[start..].iter().map(|&(n, _)| self.channel(n)).collect());
                        }
                        _ => {}
                    }
                } else {
                    color[node as usize] = BLACK;
                    stack.pop();
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_ring_and_not_a_chain() {
        let mut g = DependencyGraph::new(&[3, 3, 3]);
        let c = |switch, vl| Channel { switch, port: 1, vl };
        g.add(c(0, 0), c(1, 0));
        g.add(c(1, 0), c(2, 0));
        assert!(g.find_cycle().is_none());
        // Closing the ring on another VL is no cycle either.
        g.add(c(2, 0), c(0, 1));
        assert!(g.find_cycle().is_none());
        g.add(c(0, 1), c(1, 0));
        let cycle = g.find_cycle().unwrap();
        assert_eq!(cycle.len(), 3, "{cycle:?}");
        assert!(cycle.contains(&c(2, 0)) && cycle.contains(&c(0, 1)));
    }
}

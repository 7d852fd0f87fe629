//! Degraded fabrics: a seeded fraction of inter-switch cables or switches
//! removed, as after failures, so engines can be judged on fabrics that no
//! longer have their textbook shape.

use crate::fabric::{FabricBuilder, Node, NodeId, NodeKind, PortRef};
use crate::rng::Rng;

fn check_fraction(fraction: f64) -> Result<(), String> {
    if !(0.0..1.0).contains(&fraction) {
        return Err(format!("drop fraction {fraction} must be in [0, 1)"));
    }
    Ok(())
}

/// How many of `total` items a fraction removes (rounded to nearest).
fn how_many(total: usize, fraction: f64) -> usize {
    ((total as f64) * fraction).round() as usize
}

/// Removes round(fraction × cables) inter-switch cables chosen at random.
pub fn drop_links(b: &mut FabricBuilder, fraction: f64, seed: u64) -> Result<usize, String> {
    drop_links_where(b, fraction, seed, |_, _| true)
}

/// Removes round(fraction × cables) of the inter-switch cables `among`
/// accepts (given the two switches' nodes), chosen at random.
pub fn drop_links_where(
    b: &mut FabricBuilder,
    fraction: f64,
    seed: u64,
    among: impl Fn(&Node, &Node) -> bool,
) -> Result<usize, String> {
    check_fraction(fraction)?;
    let mut cables: Vec<PortRef> = Vec::new();
    for (id, node) in b.nodes().iter().enumerate() {
        let id = NodeId::new(id);
        for (port, remote) in node.links() {
            let far = b.node(remote.node);
            let both_switches = node.is_switch() && far.is_switch();
            if !port.is_management()
                && both_switches
                && PortRef::new(id, port) < remote
                && among(node, far)
            {
                cables.push(PortRef::new(id, port));
            }
        }
    }
    let mut rng = Rng::new(seed);
    rng.shuffle(&mut cables);
    let n = how_many(cables.len(), fraction);
    for &at in &cables[..n] {
        b.disconnect(at);
    }
    Ok(n)
}

/// Removes round(fraction × switches) switches chosen at random, with the
/// hosts attached to them (a host without its switch is not in the fabric).
pub fn drop_switches(
    b: &FabricBuilder,
    fraction: f64,
    seed: u64,
) -> Result<(FabricBuilder, usize), String> {
    check_fraction(fraction)?;
    let mut switches: Vec<NodeId> = NodeId::range(b.node_count())
        .filter(|&i| b.node(i).is_switch())
        .collect();
    let mut rng = Rng::new(seed);
    rng.shuffle(&mut switches);
    let n = how_many(switches.len(), fraction);
    Ok((without_switches(b, &switches[..n])?, n))
}

/// Removes round(fraction × hosts) hosts chosen at random: what an SM sees
/// when hosts are down or their cables pulled.
pub fn drop_hosts(
    b: &FabricBuilder,
    fraction: f64,
    seed: u64,
) -> Result<(FabricBuilder, usize), String> {
    check_fraction(fraction)?;
    let mut hosts: Vec<NodeId> = NodeId::range(b.node_count())
        .filter(|&i| b.node(i).kind == NodeKind::Ca)
        .collect();
    let mut rng = Rng::new(seed);
    rng.shuffle(&mut hosts);
    let n = how_many(hosts.len(), fraction);
    let mut gone = vec![false; b.node_count()];
    for &h in &hosts[..n] {
        gone[h] = true;
    }
    Ok((without_nodes(b, &gone)?, n))
}

/// The fabric without the switches `remove`, and without the hosts cabled
/// only to them (a host without its switch is not in the fabric): what an
/// SM sees when those switches die.
pub fn without_switches(b: &FabricBuilder, remove: &[NodeId]) -> Result<FabricBuilder, String> {
    let mut gone = vec![false; b.node_count()];
    for &s in remove {
        gone[s] = true;
    }
    for (id, node) in NodeId::range(b.node_count()).zip(b.nodes()) {
        if node.kind == NodeKind::Ca
            && node.links().all(|(_, r)| gone[r.node])
            && node.links().next().is_some()
        {
            gone[id] = true;
        }
    }
    without_nodes(b, &gone)
}

/// The fabric without the nodes marked `gone`, and without their cables.
pub(crate) fn without_nodes(b: &FabricBuilder, gone: &[bool]) -> Result<FabricBuilder, String> {
    let mut new_id = vec![NodeId::default(); b.node_count()];
    let mut out = FabricBuilder::new();
    for (id, node) in NodeId::range(b.node_count()).zip(b.nodes()) {
        if !gone[id] {
            new_id[id] = out.add_node(
                node.kind,
                node.guid,
                node.desc.clone(),
                (node.port_slots() - 1) as u8,
            );
        }
    }
    for (id, node) in NodeId::range(b.node_count()).zip(b.nodes()) {
        for (port, r) in node.links() {
            if !gone[id] && !gone[r.node] && PortRef::new(id, port) < r {
                let (x, y) = (
                    PortRef::new(new_id[id], port),
                    PortRef::new(new_id[r.node], r.port),
                );
                out.connect(x, y).map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(out)
}

/// Whether every switch can reach every other over inter-switch cables.
pub fn switches_connected(b: &FabricBuilder) -> bool {
    let switches: Vec<NodeId> = NodeId::range(b.node_count())
        .filter(|&i| b.node(i).is_switch())
        .collect();
    let Some(&start) = switches.first() else {
        return true;
    };
    let mut seen = vec![false; b.node_count()];
    seen[start] = true;
    let mut stack = vec![start];
    while let Some(x) = stack.pop() {
        for (_, r) in b.node(x).links() {
            if b.node(r.node).is_switch() && !seen[r.node] {
                seen[r.node] = true;
                stack.push(r.node);
            }
        }
    }
    switches.iter().all(|&s| seen[s])
}

#[cfg(test)]
mod tests {
    use super::super::hyperx::hyperx;
    use super::*;

    fn switch_cables(b: &FabricBuilder) -> usize {
        b.nodes()
            .iter()
            .filter(|n| n.is_switch())
            .map(|n| {
                n.links()
                    .filter(|(p, r)| !p.is_management() && b.node(r.node).is_switch())
                    .count()
            })
            .sum::<usize>()
            / 2
    }

    #[test]
    fn dropping_links_is_seeded_and_counted() {
        let mut b = hyperx(&[4, 4], &[1, 1], 2).unwrap();
        let before = switch_cables(&b);
        assert_eq!(before, 48);
        let mut again = b.clone();
        assert_eq!(drop_links(&mut b, 0.25, 3).unwrap(), 12);
        drop_links(&mut again, 0.25, 3).unwrap();
        assert_eq!(switch_cables(&b), 36);
        let links = |b: &FabricBuilder| {
            b.nodes()
                .iter()
                .map(|n| n.links().collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        assert_eq!(links(&b), links(&again));
        // Hosts keep their cables.
        assert!(b
            .nodes()
            .iter()
            .filter(|n| !n.is_switch())
            .all(|n| n.links().count() == 1));
        assert!(drop_links(&mut b, 1.5, 1).is_err());
    }

    #[test]
    fn dropping_switches_takes_their_hosts() {
        let b = hyperx(&[4, 4], &[1, 1], 2).unwrap();
        let (d, n) = drop_switches(&b, 0.25, 9).unwrap();
        assert_eq!(n, 4);
        assert_eq!(d.nodes().iter().filter(|n| n.is_switch()).count(), 12);
        assert_eq!(d.nodes().iter().filter(|n| !n.is_switch()).count(), 24);
        assert!(d
            .nodes()
            .iter()
            .filter(|n| !n.is_switch())
            .all(|n| n.links().count() == 1));
        assert!(
            switches_connected(&d),
            "a 4x4 HyperX survives 4 lost switches"
        );
    }

    #[test]
    fn dropping_hosts_keeps_every_switch_cable() {
        let b = hyperx(&[4, 4], &[1, 1], 2).unwrap();
        let (d, n) = drop_hosts(&b, 0.25, 5).unwrap();
        assert_eq!(n, 8);
        assert_eq!(d.nodes().iter().filter(|n| !n.is_switch()).count(), 24);
        assert_eq!(switch_cables(&d), switch_cables(&b));
        assert!(d
            .nodes()
            .iter()
            .filter(|n| !n.is_switch())
            .all(|n| n.links().count() == 1));
        assert!(drop_hosts(&b, -0.1, 5).is_err());
    }
}

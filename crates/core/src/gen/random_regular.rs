//! Random regular topologies (as in Jellyfish): `switches` switches, each
//! cabled to `degree` distinct others, chosen at random (seeded). Built by
//! random pairing of cable ends that skips self-cables and parallel
//! cables, restarted until the switches are connected.

use super::degrade::switches_connected;
use super::direct::CablePlan;
use crate::fabric::FabricBuilder;
use crate::rng::Rng;

pub fn random_regular(
    switches: usize,
    degree: usize,
    p: usize,
    seed: u64,
) -> Result<FabricBuilder, String> {
    if degree == 0 || degree >= switches {
        return Err(format!(
            "degree {degree} needs 1 ≤ degree < switches ({switches})"
        ));
    }
    if switches * degree % 2 == 1 {
        return Err(format!(
            "switches × degree = {} must be even (every cable has two ends)",
            switches * degree
        ));
    }
    let mut rng = Rng::new(seed);
    for _attempt in 0..10_000 {
        if let Some(cables) = try_pairing(switches, degree, &mut rng) {
            let mut g = CablePlan::default();
            for s in 0..switches {
                g.add_switch(format!("rr-{s}"));
            }
            for (a, b) in cables {
                g.cable(a, b, 1);
            }
            let fabric = g.build(p)?;
            if switches_connected(&fabric) {
                return Ok(fabric);
            }
        }
    }
    Err(format!("no simple connected {degree}-regular graph on {switches} switches found; try another seed or degree"))
}

/// One pairing of the switches' cable ends, drawing two free ends at a
/// time and redrawing pairs that would make a self-cable or a second cable
/// between the same switches (Steger–Wormald); None when it gets stuck.
fn try_pairing(switches: usize, degree: usize, rng: &mut Rng) -> Option<Vec<(usize, usize)>> {
    let mut ends: Vec<usize> = (0..switches)
        .flat_map(|s| std::iter::repeat_n(s, degree))
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut cables = Vec::with_capacity(ends.len() / 2);
    while !ends.is_empty() {
        let pick = (0..100).find_map(|_| {
            let (i, j) = (rng.below(ends.len()), rng.below(ends.len()));
            let (a, b) = (ends[i].min(ends[j]), ends[i].max(ends[j]));
            (a != b && !seen.contains(&(a, b))).then_some((i, j, a, b))
        })?;
        let (i, j, a, b) = pick;
        seen.insert((a, b));
        cables.push((a, b));
        // Remove the larger index first so the smaller stays valid.
        ends.swap_remove(i.max(j));
        ends.swap_remove(i.min(j));
    }
    Some(cables)
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::fabric;
    use super::*;

    #[test]
    fn regular_simple_and_seeded() {
        let f = fabric(random_regular(32, 5, 2, 4).unwrap());
        for &s in f.switches() {
            let node = f.node(s);
            let peers: Vec<_> = node
                .links()
                .filter(|(p, r)| p.raw() > 2 && f.node(r.node).is_switch())
                .map(|(_, r)| r.node)
                .collect();
            assert_eq!(peers.len(), 5);
            let mut unique = peers.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), 5, "no parallel cables");
        }
        let a = random_regular(32, 5, 2, 4).unwrap();
        let links = |b: &FabricBuilder| {
            b.nodes()
                .iter()
                .map(|n| n.links().collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        assert_eq!(links(&a), links(&random_regular(32, 5, 2, 4).unwrap()));
        assert_ne!(links(&a), links(&random_regular(32, 5, 2, 5).unwrap()));
        assert!(
            random_regular(100, 16, 1, 1).is_ok(),
            "dense graphs are found too"
        );
        assert!(random_regular(5, 3, 1, 1).unwrap_err().contains("even"));
    }
}

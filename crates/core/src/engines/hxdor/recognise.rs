//! Which fabrics hxdor routes: those whose mapped grid is one that
//! dimension-order routing is meant for (direct-topologies paper §2–3).
//!
//! `topology::grid` gives *some* coordinates to many graphs that are no
//! grid: a fat tree or a leaf–spine comes out as a 1-D "grid" of every
//! switch, a pod of leaves and spines as many dimensions of 2. DOR is
//! minimal and balanced only where the grid is real, so hxdor routes a
//! fabric only where
//!
//! - the switches fill the grid: there are at least 75 % as many switches
//!   as positions, counting in each dimension as many positions as its
//!   fullest line holds switches (damage can split a line into extra
//!   coordinates that no full line uses: a damaged 6-cube maps to sizes
//!   [3, 4, 3, 3, 3, 3], yet no line holds more than 2 switches);
//! - every line of every dimension is a clique (FlatFly/HyperX) or a ring
//!   (torus): at least 75 % of the switch pairs the lines want cabled are
//!   (a clique line of m switches wants m(m−1)/2 pairs, a ring one pair
//!   per neighbouring position);
//! - hardly any cable runs off the lines: at most 10 % as many cabled
//!   switch pairs differ in two or more coordinates as run along lines.
//!
//! The thresholds leave room for the damage the mapping tolerates (the
//! paper's 20 % of switches and 15 % of cables on a FlatFly) and are far
//! from what non-grids give: a leaf–spine or fat tree read as a 1-D grid
//! has a half or less of its clique pairs cabled, a two-level pod read as
//! 8 dimensions of 2 fills a few percent of 256 positions.
//!
//! Dimensions of size 2 need no rule of their own. A line of 2 switches is
//! a clique of 2, and a grid of such lines that the switches fill and the
//! cables complete is a hypercube (or holds one as factor: a torus ring of
//! 4 maps as two dimensions of 2, as a 4 × 4 torus is the 4-cube), which
//! DOR routes minimally, as the paper does. What is wrong with the "many
//! dimensions of 2" of a pod is that they are empty, which the fill
//! catches; requiring all dimensions to be 2 as soon as one is would
//! decline tori with a ring of 4 and HyperX with a dimension of 2.

use std::collections::HashMap;

use crate::fabric::SwitchGraph;
use crate::topology::grid::GridMap;

/// Least share of the grid's positions that must hold a switch.
pub const MIN_SWITCH_FILL: f64 = 0.75;
/// Least share of the switch pairs the lines want that must be cabled.
pub const MIN_CABLE_FILL: f64 = 0.75;
/// Most cabled pairs off the lines, as a share of those along them.
pub const MAX_OFF_GRID: f64 = 0.10;

/// How well a graph fills its mapped grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Fill {
    pub switches: usize,
    /// Positions of the grid: the product over dimensions of the most
    /// switches a line of that dimension holds.
    pub positions: usize,
    /// Switch pairs the lines want cabled (among the switches present).
    pub wanted_pairs: usize,
    /// Cabled switch pairs along a line (differing in one coordinate).
    pub cabled_pairs: usize,
    /// Cabled switch pairs differing in more than one coordinate.
    pub off_grid_pairs: usize,
}

impl Fill {
    pub fn of(graph: &SwitchGraph, map: &GridMap) -> Fill {
        let dims = map.extent.len();
        let mut wanted = 0;
        let mut positions = 1usize;
        for i in 0..dims {
            let k = map.extent[i];
            let mut lines: HashMap<Vec<usize>, Vec<usize>> = HashMap::new();
            for s in graph.ids() {
                let mut key = map.coords[s].clone();
                key[i] = usize::MAX;
                lines.entry(key).or_default().push(map.coords[s][i]);
            }
            let fullest = lines.values().map(Vec::len).max().unwrap_or(1);
            positions = positions.saturating_mul(fullest);
            for line in lines.values() {
                let m = line.len();
                wanted += match map.ring[i] {
                    true => line
                        .iter()
                        .filter(|&&p| line.contains(&((p + 1) % k)))
                        .count(),
                    false => m * (m - 1) / 2,
                };
            }
        }
        let (mut cabled, mut off_grid) = (0, 0);
        for s in graph.ids() {
            for &t in graph.neighbours(s).iter().filter(|&&t| t > s) {
                let differ = (0..dims)
                    .filter(|&i| map.coords[s][i] != map.coords[t][i])
                    .count();
                match differ {
                    1 => cabled += 1,
                    _ => off_grid += 1,
                }
            }
        }
        Fill {
            switches: graph.switch_count(),
            positions,
            wanted_pairs: wanted,
            cabled_pairs: cabled,
            off_grid_pairs: off_grid,
        }
    }
}

/// Whether the mapped grid is a FlatFly/HyperX, hypercube or torus (within
/// the damage tolerated), or why not.
pub fn recognise(graph: &SwitchGraph, map: &GridMap) -> Result<Fill, String> {
    let fill = Fill::of(graph, map);
    let shape = format!("{}-D grid {:?}", map.extent.len(), map.extent);
    let share = |a: usize, b: usize| a as f64 / b.max(1) as f64;
    if share(fill.switches, fill.positions) < MIN_SWITCH_FILL {
        return Err(format!(
            "its switches map to a {shape} whose fullest lines span {} positions, of which only {} ({:.0} %) hold \
             a switch: not a FlatFly/HyperX, hypercube or torus (dimension-order routing needs at least {:.0} %)",
            fill.positions,
            fill.switches,
            100.0 * share(fill.switches, fill.positions),
            100.0 * MIN_SWITCH_FILL
        ));
    }
    if share(fill.cabled_pairs, fill.wanted_pairs) < MIN_CABLE_FILL {
        return Err(format!(
            "its switches map to a {shape} whose lines are not cliques or rings: {} of the {} switch pairs they \
             want are cabled ({:.0} %, at least {:.0} % needed); a fat tree or leaf-spine looks like this",
            fill.cabled_pairs,
            fill.wanted_pairs,
            100.0 * share(fill.cabled_pairs, fill.wanted_pairs),
            100.0 * MIN_CABLE_FILL
        ));
    }
    if share(fill.off_grid_pairs, fill.cabled_pairs) > MAX_OFF_GRID {
        return Err(format!(
            "its switches map to a {shape}, but {} cabled switch pairs run across dimensions (against {} along \
             them): not a grid",
            fill.off_grid_pairs, fill.cabled_pairs
        ));
    }
    Ok(fill)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::hand_built::{dragonfly_plus, rail_pod};
    use crate::fabric::Fabric;
    use crate::gen;
    use crate::topology::grid::map_grid;

    fn fabric(b: crate::FabricBuilder) -> Fabric {
        crate::testkit::TestFabric::of(b).build()
    }

    /// The recogniser's verdict, or the mapping's own refusal.
    fn verdict(b: crate::FabricBuilder) -> Result<Fill, String> {
        let f = fabric(b);
        let map = map_grid(f.graph())?;
        recognise(f.graph(), &map)
    }

    #[test]
    fn grids_are_recognised_whole() {
        for (name, b) in [
            (
                "hyperx 4x4x4",
                gen::hyperx::hyperx(&[4, 4, 4], &[1, 1, 1], 1).unwrap(),
            ),
            ("hyperx 6", gen::hyperx::hyperx(&[6], &[1], 1).unwrap()),
            ("hypercube 6", gen::hyperx::hypercube(6, 1, 1).unwrap()),
            (
                "torus 5x4x3x6",
                gen::torus::torus(&[5, 4, 3, 6], &[1, 1, 1, 1], 1).unwrap(),
            ),
            ("torus 4x4", gen::torus::torus(&[4, 4], &[1, 1], 1).unwrap()),
        ] {
            let fill = verdict(b).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(fill.switches, fill.positions, "{name}");
            assert_eq!(fill.cabled_pairs, fill.wanted_pairs, "{name}");
            assert_eq!(fill.off_grid_pairs, 0, "{name}");
        }
    }

    #[test]
    fn trees_pods_and_other_families_are_not_grids() {
        for (name, b) in [
            (
                "leaf-spine 8x4",
                gen::pgft::pgft(&gen::pgft::Pgft::leaf_spine(8, 4, 4, 2)).unwrap(),
            ),
            (
                "leaf-spine 12x6",
                gen::pgft::pgft(&gen::pgft::Pgft::leaf_spine(12, 2, 6, 1)).unwrap(),
            ),
            ("3-tree of 8 ports", gen::fattree::fattree(8, 3).unwrap()),
            ("dragonfly+ 4 groups", dragonfly_plus(4, 4, 4, 2)),
            ("rail pod 8 rails", rail_pod(4, 8, 4)),
            (
                "random regular 16/4",
                gen::random_regular::random_regular(16, 4, 1, 1).unwrap(),
            ),
            ("slim fly q=5", gen::slimfly::slimfly(5, 1).unwrap()),
            (
                "dragonfly 4,2,2",
                gen::dragonfly::dragonfly(&gen::dragonfly::Params::new(4, 2, 2)).unwrap(),
            ),
        ] {
            assert!(verdict(b).is_err(), "{name} taken for a grid");
        }
        // The one that says why: a leaf-spine is a "1-D grid" of
        // half-cabled cliques.
        let e = verdict(gen::pgft::pgft(&gen::pgft::Pgft::leaf_spine(8, 4, 4, 2)).unwrap())
            .unwrap_err();
        assert!(
            e.contains("1-D grid [12]") && e.contains("not cliques or rings"),
            "{e}"
        );
    }

    #[test]
    fn damaged_grids_within_the_tolerance_are_still_grids() {
        // A switch and cables gone (as the live test's outage does), and
        // the heaviest damage hxdor's own tests route.
        for (name, make, switches, links) in [
            (
                "hyperx 3x3x3",
                gen::hyperx::hyperx(&[3, 3, 3], &[1, 1, 1], 1).unwrap(),
                0.04,
                0.02,
            ),
            (
                "hyperx 4x4x4",
                gen::hyperx::hyperx(&[4, 4, 4], &[1, 1, 1], 1).unwrap(),
                0.20,
                0.15,
            ),
            (
                "hypercube 6",
                gen::hyperx::hypercube(6, 1, 1).unwrap(),
                0.15,
                0.10,
            ),
            (
                "torus 6x5x7",
                gen::torus::torus(&[6, 5, 7], &[1, 1, 1], 1).unwrap(),
                0.02,
                0.02,
            ),
        ] {
            for seed in 1..=3 {
                let (mut b, _) = gen::degrade::drop_switches(&make, switches, seed).unwrap();
                gen::degrade::drop_links(&mut b, links, seed).unwrap();
                if let Err(e) = verdict(b) {
                    panic!("{name} -{switches} switches -{links} links seed {seed}: {e}");
                }
            }
        }
    }
}

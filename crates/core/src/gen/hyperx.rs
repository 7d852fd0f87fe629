//! HyperX / Flattened Butterfly / generalised hypercube (direct-topologies
//! paper §1.2–1.3): switches on a grid K_1 × … × K_n, every two switches that
//! differ in exactly one coordinate i joined by L_i parallel cables (each
//! dimension a full graph). A hypercube is the case K_i = 2.

use super::direct::{coordinates, grid_name, index_of, CablePlan};
use crate::fabric::FabricBuilder;

/// Checks grid dimensions and link widths: same length, sizes ≥ 1, widths ≥ 1.
pub fn check_grid(dims: &[usize], widths: &[usize]) -> Result<(), String> {
    if dims.is_empty() {
        return Err("at least one dimension is needed".into());
    }
    if dims.len() != widths.len() {
        return Err(format!(
            "{} dimensions but {} link widths: give one width per dimension",
            dims.len(),
            widths.len()
        ));
    }
    if dims.contains(&0) || widths.contains(&0) {
        return Err("dimension sizes and link widths must be at least 1".into());
    }
    let switches: usize = dims.iter().product();
    if switches > 16_384 {
        return Err(format!(
            "{switches} switches is more than a subnet's LID space allows with hosts"
        ));
    }
    Ok(())
}

/// HyperX with `p` hosts per switch.
pub fn hyperx(dims: &[usize], widths: &[usize], p: usize) -> Result<FabricBuilder, String> {
    check_grid(dims, widths)?;
    let count: usize = dims.iter().product();
    let mut g = CablePlan::default();
    for s in 0..count {
        g.add_switch(grid_name("hx", &coordinates(s, dims)));
    }
    for s in 0..count {
        let c = coordinates(s, dims);
        for (i, (&k, &width)) in dims.iter().zip(widths).enumerate() {
            for v in c[i] + 1..k {
                let mut other = c.clone();
                other[i] = v;
                g.cable(s, index_of(&other, dims), width);
            }
        }
    }
    g.build(p)
}

/// Hypercube of dimension `dim` with `width` cables per dimension.
pub fn hypercube(dim: usize, width: usize, p: usize) -> Result<FabricBuilder, String> {
    if dim == 0 {
        return Err("a hypercube needs dimension ≥ 1".into());
    }
    hyperx(&vec![2; dim], &vec![width; dim], p)
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::{diameter, fabric};
    use super::*;

    #[test]
    fn degree_and_diameter() {
        let f = fabric(hyperx(&[4, 4, 4], &[1, 2, 1], 2).unwrap());
        assert_eq!(f.switches().len(), 64);
        for &s in f.switches() {
            assert_eq!(f.node(s).links().count(), 2 + 3 + 6 + 3);
        }
        assert_eq!(diameter(&f), 3);
        let cube = fabric(hypercube(4, 2, 1).unwrap());
        assert_eq!(cube.switches().len(), 16);
        assert_eq!(diameter(&cube), 4);
        for &s in cube.switches() {
            assert_eq!(cube.node(s).links().count(), 1 + 8);
        }
    }

    #[test]
    fn bad_grids_are_explained() {
        assert!(hyperx(&[4, 4], &[1], 1)
            .unwrap_err()
            .contains("one width per dimension"));
        assert!(hyperx(&[4, 0], &[1, 1], 1)
            .unwrap_err()
            .contains("at least 1"));
        assert!(hypercube(0, 1, 1).is_err());
    }
}

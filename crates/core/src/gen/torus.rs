//! Tori (direct-topologies paper §1.1): switches on a grid K_1 × … × K_n,
//! each joined to its two neighbours (wrapping around) in every dimension by
//! L_i parallel cables. A dimension of size 2 has one neighbour (L_i cables),
//! a dimension of size 1 none.

use super::direct::{coordinates, grid_name, index_of, CablePlan};
use super::hyperx::check_grid;
use crate::fabric::FabricBuilder;

pub fn torus(dims: &[usize], widths: &[usize], p: usize) -> Result<FabricBuilder, String> {
    check_grid(dims, widths)?;
    let count: usize = dims.iter().product();
    let mut g = CablePlan::default();
    for s in 0..count {
        g.add_switch(grid_name("tor", &coordinates(s, dims)));
    }
    for s in 0..count {
        let c = coordinates(s, dims);
        for (i, (&k, &width)) in dims.iter().zip(widths).enumerate() {
            // Each ring cable once: from every switch to its successor,
            // except that a ring of 2 has a single neighbour pair.
            if k < 2 || (k == 2 && c[i] == 1) {
                continue;
            }
            let mut next = c.clone();
            next[i] = (c[i] + 1) % k;
            g.cable(s, index_of(&next, dims), width);
        }
    }
    g.build(p)
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::{diameter, fabric};
    use super::*;

    #[test]
    fn rings_wrap_around() {
        let f = fabric(torus(&[5, 4, 2], &[1, 2, 1], 1).unwrap());
        assert_eq!(f.switches().len(), 40);
        for &s in f.switches() {
            assert_eq!(f.node(s).links().count(), 1 + 2 + 4 + 1);
        }
        assert_eq!(diameter(&f), 2 + 2 + 1);
        let line = fabric(torus(&[1, 3], &[1, 1], 0).unwrap());
        assert_eq!(diameter(&line), 1);
    }
}

//! Slim Fly: the McKay–Miller–Širáň graphs (Besta & Hoefler; the layered
//! routing paper's Appendix A; direct-topologies paper §1.5). For a prime
//! power q = 4w + δ, δ ∈ {-1, 0, 1}: 2q² switches labelled (t, x, y) in
//! {0,1} × GF(q) × GF(q), diameter 2, network radix (3q − δ)/2.
//!
//! Cables: (0,x,y)–(0,x,y') iff y − y' ∈ X; (1,m,c)–(1,m,c') iff c − c' ∈ X';
//! (0,x,y)–(1,m,c) iff y = m·x + c. X and X' are built from powers of a
//! primitive element ξ so that both are closed under negation (the cables
//! are undirected) and together cover every non-zero difference:
//! δ = 1: X = even powers, X' = odd powers (ξ^0 … ξ^(q−2));
//! δ = 0: X = {ξ^0, ξ^2, …, ξ^(q−2)}, X' = {ξ^1, ξ^3, …, ξ^(q−1)};
//! δ = −1: X = {ξ^0, ξ^2, …, ξ^(2w−2)} ∪ {ξ^(2w−1), ξ^(2w+1), …, ξ^(4w−3)},
//! X' = {ξ^1, ξ^3, …, ξ^(2w−1)} ∪ {ξ^(2w), ξ^(2w+2), …, ξ^(4w−2)}.

use super::direct::CablePlan;
use super::galois::Field;
use crate::fabric::FabricBuilder;

/// The generator sets (X, X') for GF(q), or why q does not fit.
pub fn generator_sets(field: &Field) -> Result<(Vec<usize>, Vec<usize>), String> {
    let q = field.order();
    let xi = field.primitive_element();
    let powers = |exps: &mut dyn Iterator<Item = usize>| -> Vec<usize> {
        exps.map(|e| field.pow(xi, e)).collect()
    };
    let (x, x_) = match q % 4 {
        1 => (
            powers(&mut (0..q - 1).step_by(2)),
            powers(&mut (1..q - 1).step_by(2)),
        ),
        0 => (
            powers(&mut (0..q - 1).step_by(2)),
            powers(&mut (1..q).step_by(2)),
        ),
        3 => {
            let w = (q + 1) / 4;
            let x = powers(
                &mut (0..=2 * w - 2)
                    .step_by(2)
                    .chain((2 * w - 1..=4 * w - 3).step_by(2)),
            );
            let x_ = powers(
                &mut (1..=2 * w - 1)
                    .step_by(2)
                    .chain((2 * w..=4 * w - 2).step_by(2)),
            );
            (x, x_)
        }
        _ => {
            return Err(format!(
                "q = {q} is not of the form 4w + δ with δ ∈ {{-1, 0, 1}} (q = 2 has no Slim Fly)"
            ))
        }
    };
    Ok((x, x_))
}

/// An MMS graph: switch i is labelled `labels[i]` = (t, x, y) and cabled
/// as `cables` says, each cable once.
#[derive(Clone, Debug)]
pub struct Mms {
    pub field: Field,
    /// X (t = 0) and X' (t = 1).
    pub generators: [Vec<usize>; 2],
    pub labels: Vec<(usize, usize, usize)>,
    pub cables: Vec<(usize, usize)>,
}

impl Mms {
    pub fn new(q: usize) -> Result<Mms, String> {
        if q < 3 {
            return Err(format!("q = {q}: a Slim Fly needs a prime power q ≥ 3"));
        }
        let field = Field::new(q)?;
        let (x_set, x_set_) = generator_sets(&field)?;
        let id = |t: usize, a: usize, b: usize| (t * q + a) * q + b;
        let labels = (0..2)
            .flat_map(|t| (0..q).flat_map(move |a| (0..q).map(move |b| (t, a, b))))
            .collect();
        let mut cables = Vec::new();
        // Intra-subgraph cables, each once (from the smaller y).
        for (t, set) in [(0, &x_set), (1, &x_set_)] {
            for a in 0..q {
                for y in 0..q {
                    for y2 in y + 1..q {
                        if set.contains(&field.sub(y, y2)) {
                            cables.push((id(t, a, y), id(t, a, y2)));
                        }
                    }
                }
            }
        }
        for x in 0..q {
            for y in 0..q {
                for m in 0..q {
                    // y = m·x + c  ⇔  c = y − m·x: exactly one partner per m.
                    let c = field.sub(y, field.mul(m, x));
                    cables.push((id(0, x, y), id(1, m, c)));
                }
            }
        }
        Ok(Mms {
            field,
            generators: [x_set, x_set_],
            labels,
            cables,
        })
    }
}

/// Slim Fly MMS graph over GF(q) with `p` hosts per switch.
pub fn slimfly(q: usize, p: usize) -> Result<FabricBuilder, String> {
    let mms = Mms::new(q)?;
    let mut g = CablePlan::default();
    for &(t, a, b) in &mms.labels {
        g.add_switch(format!("sf-{t}-{a}-{b}"));
    }
    for &(a, b) in &mms.cables {
        g.cable(a, b, 1);
    }
    g.build(p)
}

/// The hosts per switch the Slim Fly papers recommend for full global
/// bandwidth: ⌈k'/2⌉ with k' = (3q − δ)/2 the network radix.
pub fn recommended_hosts(q: usize) -> usize {
    let delta: isize = match q % 4 {
        1 => 1,
        3 => -1,
        _ => 0,
    };
    let radix = ((3 * q as isize - delta) / 2) as usize;
    radix.div_ceil(2)
}

#[cfg(test)]
mod tests {
    use super::super::direct::tests::{diameter, fabric};
    use super::*;

    #[test]
    fn generator_sets_are_symmetric_and_cover_all_differences() {
        for q in [3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 25, 27] {
            let f = Field::new(q).unwrap();
            let (x, x_) = generator_sets(&f).unwrap();
            for set in [&x, &x_] {
                for &e in set.iter() {
                    assert!(
                        set.contains(&f.neg(e)),
                        "q={q}: {set:?} not closed under negation"
                    );
                }
            }
            if q % 4 != 3 {
                let mut all: Vec<usize> = x.iter().chain(&x_).copied().collect();
                all.sort();
                all.dedup();
                assert_eq!(all.len(), q - 1, "q={q}");
            }
        }
    }

    #[test]
    fn mms_graphs_have_the_papers_size_degree_and_diameter() {
        for q in [3, 4, 5, 7, 8, 9, 11] {
            let delta: isize = match q % 4 {
                1 => 1,
                3 => -1,
                _ => 0,
            };
            let radix = ((3 * q as isize - delta) / 2) as usize;
            let f = fabric(slimfly(q, 2).unwrap());
            assert_eq!(f.switches().len(), 2 * q * q, "q={q}");
            for &s in f.switches() {
                assert_eq!(
                    f.node(s).links().count(),
                    radix + 2,
                    "q={q}: every switch has k' switch neighbours"
                );
            }
            assert_eq!(diameter(&f), 2, "q={q}");
            assert_eq!(f.cas().count(), 4 * q * q);
        }
    }

    #[test]
    fn q5_is_the_hoffman_singleton_graph_with_four_hosts() {
        assert_eq!(recommended_hosts(5), 4);
        let f = fabric(slimfly(5, recommended_hosts(5)).unwrap());
        assert_eq!(f.switches().len(), 50);
        assert_eq!(f.cas().count(), 200);
        // Girth 5: no two switches share more than one neighbour, and
        // neighbours share none.
        let g = f.graph();
        for a in g.ids() {
            let na = g.neighbours(a);
            assert_eq!(g.cables(a).len(), 7);
            for b in g.ids().skip(a.idx() + 1) {
                let common = g.neighbours(b).iter().filter(|x| na.contains(x)).count();
                assert!(common <= 1, "{a} {b}");
            }
        }
    }

    #[test]
    fn bad_q_is_explained() {
        assert!(slimfly(6, 1).unwrap_err().contains("prime power"));
        assert!(slimfly(2, 1).unwrap_err().contains("q ≥ 3"));
    }
}

//! Slim Fly labels recovered from the bare switch graph: the MMS graph for
//! q = √(switches / 2) is built and matched against the fabric
//! (`isomorphism`), which gives every switch its (t, x, y) label, and the
//! paper's route algebra (direct-topologies paper §3.6) then names each
//! pair's minimal-route intermediates from the labels alone.

use std::collections::HashMap;

use super::isomorphism::find_isomorphism;
use crate::fabric::SwitchGraph;
use crate::gen::galois::prime_power;
use crate::gen::slimfly::Mms;

/// Refinements the matching may spend before giving up: a few per level
/// of choices suffice for MMS graphs (they are vertex-transitive), so this
/// bounds only fabrics that are not one.
const SEARCH_BUDGET: usize = 2_000;

pub struct SlimFlyLabels {
    pub mms: Mms,
    /// (t, x, y) per switch.
    pub label: Vec<(usize, usize, usize)>,
    switch_at: HashMap<(usize, usize, usize), usize>,
}

/// Labels for a fabric whose switch graph is an MMS graph (parallel
/// cables allowed), or why it is not one.
pub fn recover_labels(graph: &SwitchGraph) -> Result<SlimFlyLabels, String> {
    let distinct: Vec<Vec<usize>> = graph
        .ids()
        .map(|s| graph.neighbours(s).iter().map(|t| t.idx()).collect())
        .collect();
    labels_of(&distinct)
}

/// `recover_labels` on distinct neighbour lists.
fn labels_of(distinct: &[Vec<usize>]) -> Result<SlimFlyLabels, String> {
    let n = distinct.len();
    let q = (1..=n).find(|q| 2 * q * q >= n).unwrap_or(0);
    if n == 0 || 2 * q * q != n {
        return Err(format!(
            "{n} switches is not 2q² for any q, as an MMS graph has"
        ));
    }
    let mms = Mms::new(q).map_err(|e| format!("{n} switches would be q = {q}, but {e}"))?;
    let mut reference = vec![Vec::new(); n];
    for &(a, b) in &mms.cables {
        reference[a].push(b);
        reference[b].push(a);
    }
    let map = find_isomorphism(distinct, &reference, SEARCH_BUDGET).ok_or_else(|| {
        format!(
            "the cabling is not the MMS graph for q = {q} (or no match within the search budget)"
        )
    })?;
    let label: Vec<(usize, usize, usize)> = map.iter().map(|&r| mms.labels[r]).collect();
    let switch_at = label.iter().enumerate().map(|(s, &l)| (l, s)).collect();
    Ok(SlimFlyLabels {
        mms,
        label,
        switch_at,
    })
}

/// What a fabric is to a Slim Fly routing: an MMS graph (labels recovered)
/// or one damaged within what sfmin routes.
pub enum SlimFlyFit {
    Intact(SlimFlyLabels),
    /// The MMS graph for `q` with switches or cables gone.
    Damaged {
        q: usize,
        why_no_labels: String,
    },
}

/// Least share of the MMS graph's 2q² switches a damaged Slim Fly keeps.
pub const MIN_SWITCHES: f64 = 0.90;
/// Least mean distinct-neighbour count, as a share of the MMS degree.
pub const MIN_DEGREE: f64 = 0.85;
/// Least share of ordered switch pairs still at most two hops apart.
pub const MIN_TWO_HOP_PAIRS: f64 = 0.90;

/// The Slim Fly recogniser: the fabric's switch graph is an MMS graph, or
/// one that lost a few switches or cables: its switch count is at most
/// 2q² and at least 90 % of it for a prime power q, no switch has more
/// distinct neighbours than the MMS degree k' and they average at least
/// 85 % of it, and at least 90 % of ordered switch pairs are still within
/// two hops (the diameter-2 property that makes it a Slim Fly). An intact
/// graph of the right size and degree whose labels cannot be found is some
/// other graph (a Slim Fly that lost nothing has its labels).
pub fn recognise(graph: &SwitchGraph) -> Result<SlimFlyFit, String> {
    let why_no_labels = match recover_labels(graph) {
        Ok(labels) => return Ok(SlimFlyFit::Intact(labels)),
        Err(why) => why,
    };
    let n = graph.switch_count();
    // The smallest prime power q ≥ 3 with 2q² ≥ n (one exists: powers of
    // 2 do).
    let q = (3..)
        .find(|&q| 2 * q * q >= n && prime_power(q).is_some())
        .unwrap_or(3);
    let mms =
        Mms::new(q).map_err(|e| format!("{n} switches would be a Slim Fly of q = {q}, but {e}"))?;
    let full = 2 * q * q;
    if (n as f64) < MIN_SWITCHES * full as f64 {
        return Err(format!(
            "{n} switches: a Slim Fly has 2q² (the nearest is {full}, q = {q}, of which at least {:.0} % must be \
             there): not a Slim Fly",
            100.0 * MIN_SWITCHES
        ));
    }
    let degree = 2 * mms.cables.len() / full;
    let degrees: Vec<usize> = graph.ids().map(|s| graph.neighbours(s).len()).collect();
    let max = degrees.iter().copied().max().unwrap_or(0);
    let mean = degrees.iter().sum::<usize>() as f64 / n.max(1) as f64;
    if max > degree || mean < MIN_DEGREE * degree as f64 {
        return Err(format!(
            "switches have {mean:.1} other switches as neighbours on average and at most {max}; the Slim Fly of q = \
             {q} has {degree} (at least {:.0} % of that on average, never more): not a Slim Fly",
            100.0 * MIN_DEGREE
        ));
    }
    if n == full && degrees.iter().all(|&d| d == degree) {
        return Err(format!("{why_no_labels}: not a Slim Fly"));
    }
    let near = graph
        .ids()
        .map(|s| graph.dist_row(s).iter().filter(|&&d| d <= 2).count() - 1)
        .sum::<usize>();
    let pairs = n * (n - 1);
    if (near as f64) < MIN_TWO_HOP_PAIRS * pairs as f64 {
        return Err(format!(
            "only {:.0} % of switch pairs are within two hops (a Slim Fly has all, a damaged one at least {:.0} %): \
             not a Slim Fly",
            100.0 * near as f64 / pairs.max(1) as f64,
            100.0 * MIN_TWO_HOP_PAIRS
        ));
    }
    Ok(SlimFlyFit::Damaged { q, why_no_labels })
}

impl SlimFlyLabels {
    /// The switches a minimal route from `s` to `d` (two hops apart) may
    /// pass through, by §3.6's cases: same column (t, x): "yy" over every y
    /// with both differences in X_t; same subgraph, other column: "tt" over
    /// the one switch of the other subgraph joined to both; other subgraph:
    /// "ty" and "yt", whichever the generator set allows.
    pub fn intermediates(&self, s: usize, d: usize) -> Vec<usize> {
        let f = &self.mms.field;
        let q = f.order();
        let ((ts, xs, ys), (td, xd, yd)) = (self.label[s], self.label[d]);
        let in_set = |t: usize, diff: usize| self.mms.generators[t].contains(&diff);
        let mut labels = Vec::new();
        if ts == td && xs == xd {
            labels.extend(
                (0..q)
                    .filter(|&y| in_set(ts, f.sub(ys, y)) && in_set(ts, f.sub(y, yd)))
                    .map(|y| (ts, xs, y)),
            );
        } else if ts == td {
            // (0,x,y)–(1,m,c) iff y = m·x + c.
            labels.push(if ts == 0 {
                let m = f.div(f.sub(ys, yd), f.sub(xs, xd));
                (1, m, f.sub(ys, f.mul(m, xs)))
            } else {
                let x = f.div(f.sub(yd, ys), f.sub(xs, xd));
                (0, x, f.add(f.mul(xs, x), ys))
            });
        } else {
            // "ty": the t-cable from s lands in d's column (td, xd, y).
            let y = if ts == 0 {
                f.sub(ys, f.mul(xs, xd))
            } else {
                f.add(f.mul(xs, xd), ys)
            };
            if in_set(td, f.sub(y, yd)) {
                labels.push((td, xd, y));
            }
            // "yt": a y-cable within s's column, then the t-cable to d.
            let y = if ts == 0 {
                f.add(f.mul(xd, xs), yd)
            } else {
                f.sub(yd, f.mul(xs, xd))
            };
            if in_set(ts, f.sub(ys, y)) {
                labels.push((ts, xs, y));
            }
        }
        labels.iter().map(|l| self.switch_at[l]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen;
    use crate::topology::mapping::tests::neighbours;

    #[test]
    fn labels_of_shuffled_slim_flies_give_every_minimal_route() {
        for q in [5, 7, 8, 9, 13] {
            let f = gen::direct::tests::fabric(gen::slimfly::slimfly(q, 1).unwrap());
            // Switches renumbered, so the search cannot meet the
            // generator's own order.
            let n = f.switches().len();
            let renumber = |v: usize| (v * 11 + 3) % n;
            let mut g = vec![Vec::new(); n];
            for (v, around) in neighbours(&f).iter().enumerate() {
                g[renumber(v)] = around.iter().map(|&u| renumber(u)).collect();
            }
            let labels = labels_of(&g).unwrap_or_else(|e| panic!("q={q}: {e}"));
            // Every cable joins switches the MMS rule joins.
            let mms_adjacent: std::collections::HashSet<(usize, usize)> = labels
                .mms
                .cables
                .iter()
                .flat_map(|&(a, b)| [(a, b), (b, a)])
                .collect();
            let index = |l| labels.mms.labels.iter().position(|&m| m == l).unwrap();
            for (s, around) in g.iter().enumerate() {
                for &t in around {
                    assert!(
                        mms_adjacent.contains(&(index(labels.label[s]), index(labels.label[t]))),
                        "q={q}"
                    );
                }
            }
            // The label algebra names exactly the common neighbours of
            // every pair two hops apart.
            for s in 0..g.len() {
                for d in 0..g.len() {
                    if s == d || g[s].contains(&d) {
                        continue;
                    }
                    let mut by_labels = labels.intermediates(s, d);
                    by_labels.sort_unstable();
                    let mut common: Vec<usize> =
                        g[s].iter().copied().filter(|m| g[d].contains(m)).collect();
                    common.sort_unstable();
                    common.dedup();
                    assert_eq!(
                        by_labels, common,
                        "q={q}: {:?} to {:?}",
                        labels.label[s], labels.label[d]
                    );
                }
            }
        }
    }

    #[test]
    fn other_fabrics_have_no_labels() {
        let torus = gen::direct::tests::fabric(gen::torus::torus(&[5, 10], &[1, 1], 1).unwrap());
        let e = recover_labels(torus.graph()).err().unwrap();
        assert!(e.contains("not the MMS graph for q = 5"), "{e}");
        let six = gen::direct::tests::fabric(gen::torus::torus(&[6], &[1], 1).unwrap());
        assert!(recover_labels(six.graph())
            .err()
            .unwrap()
            .contains("not 2q²"));
        let mut b = gen::slimfly::slimfly(5, 1).unwrap();
        gen::degrade::drop_links(&mut b, 0.01, 1).unwrap();
        assert!(recover_labels(gen::direct::tests::fabric(b).graph()).is_err());
    }

    #[test]
    fn the_recogniser_takes_slim_flies_whole_or_damaged_and_nothing_else() {
        let graph_of = |b: crate::FabricBuilder| gen::direct::tests::fabric(b);
        let f = graph_of(gen::slimfly::slimfly(5, 1).unwrap());
        assert!(matches!(recognise(f.graph()), Ok(SlimFlyFit::Intact(_))));
        let (mut b, _) =
            gen::degrade::drop_switches(&gen::slimfly::slimfly(7, 1).unwrap(), 0.04, 2).unwrap();
        gen::degrade::drop_links(&mut b, 0.03, 2).unwrap();
        let f = graph_of(b);
        assert!(matches!(
            recognise(f.graph()),
            Ok(SlimFlyFit::Damaged { q: 7, .. })
        ));
        for (name, b) in [
            (
                "hyperx 4x4",
                gen::hyperx::hyperx(&[4, 4], &[1, 1], 1).unwrap(),
            ),
            (
                "dragonfly",
                gen::dragonfly::dragonfly(&gen::dragonfly::Params::new(4, 2, 2)).unwrap(),
            ),
            (
                "leaf-spine",
                gen::pgft::pgft(&gen::pgft::Pgft::leaf_spine(8, 4, 4, 2)).unwrap(),
            ),
            (
                "random 50/7",
                gen::random_regular::random_regular(50, 7, 1, 1).unwrap(),
            ),
            (
                "random 50/6",
                gen::random_regular::random_regular(50, 6, 1, 1).unwrap(),
            ),
        ] {
            let f = graph_of(b);
            match recognise(f.graph()) {
                Err(e) => assert!(e.contains("not a Slim Fly"), "{name}: {e}"),
                Ok(_) => panic!("{name} taken for a Slim Fly"),
            }
        }
    }
}

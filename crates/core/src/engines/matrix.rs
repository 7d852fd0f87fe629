//! Which engine for which fabric: every engine of ours tried on a fabric,
//! each routing judged the same way, and the rule that picks one.
//!
//! An engine *fits* a fabric when it routes it (does not decline), every
//! CA-to-CA route arrives, the routing has no credit loop (the analysis
//! `osmroute check` runs), and its effective bisection bandwidth is within
//! 5 % of the best any of our engines reaches on that fabric. The
//! recommended engine is the first that fits in the order: engines made
//! for one family (sfmin, dla, hxdor, mlid) before the general ones
//! (layered, then pssp), since a specialist that fits also uses the
//! fabric's structure (fewer VLs, minimal paths by construction).

use crate::analysis::ebb::effective_bisection;
use crate::analysis::report::analyze;
use crate::config::Settings;
use crate::engines::{dla, hand_built, hxdor, layered, mlid, pssp, sfmin, ENGINES};
use crate::fabric::{Fabric, FabricBuilder};
use crate::gen;
use crate::pipeline;

/// How far below the best EBB an engine may be and still fit.
pub const EBB_SLACK: f64 = 0.05;

/// Preference among engines that fit: specialists first.
pub const PREFERENCE: [&str; 6] = [
    sfmin::NAME,
    dla::NAME,
    hxdor::NAME,
    mlid::NAME,
    layered::NAME,
    pssp::NAME,
];

/// What a routing achieved.
#[derive(Clone, Debug, PartialEq)]
pub struct Quality {
    pub delivered: bool,
    pub loop_free: bool,
    pub ebb: f64,
    pub vls: u8,
    pub max_hops: usize,
}

/// One engine on one fabric: its routing's quality, or why it declined.
#[derive(Clone, Debug)]
pub struct Trial {
    pub engine: &'static str,
    pub result: Result<Quality, String>,
}

/// Every engine of ours on `fabric` (options from `settings`), EBB over
/// `patterns` random bisections.
pub fn try_engines(fabric: &Fabric, settings: &Settings, patterns: usize, seed: u64) -> Vec<Trial> {
    ENGINES
        .iter()
        .map(|info| {
            let result = pipeline::route(info, settings, fabric)
                .map(|outcome| {
                    let routing = &outcome.routing;
                    let report = analyze(fabric, routing);
                    Quality {
                        delivered: report.delivered(),
                        loop_free: report.credit_loop.is_none(),
                        ebb: effective_bisection(fabric, routing, patterns, seed),
                        vls: routing.vls_needed(),
                        max_hops: report.max_hops(),
                    }
                })
                .map_err(|e| e.to_string());
            Trial {
                engine: info.name,
                result,
            }
        })
        .collect()
}

/// The best EBB of any complete, loop-free routing among `trials`.
pub fn best_ebb(trials: &[Trial]) -> Option<f64> {
    trials
        .iter()
        .filter_map(|t| t.result.as_ref().ok())
        .filter(|q| q.delivered && q.loop_free)
        .map(|q| q.ebb)
        .fold(None, |best, e| Some(best.map_or(e, |b: f64| b.max(e))))
}

/// Whether `trial`'s routing fits the fabric (see the module's rule).
pub fn fits(trial: &Trial, best: Option<f64>) -> bool {
    match (&trial.result, best) {
        (Ok(q), Some(best)) => q.delivered && q.loop_free && q.ebb >= (1.0 - EBB_SLACK) * best,
        _ => false,
    }
}

/// The engine to use on the fabric the trials were made on.
pub fn recommend(trials: &[Trial]) -> Option<&'static str> {
    let best = best_ebb(trials);
    PREFERENCE
        .iter()
        .copied()
        .find(|name| trials.iter().any(|t| t.engine == *name && fits(t, best)))
}

/// Small instances of every family our generators make (intact, and the
/// field's forms: damage, director chips, Aggregation Nodes), and two
/// hand-built shapes (a Dragonfly+ whose spines cable only to their
/// namesakes, and a rail pod), for the matrix.
pub fn families() -> Vec<(String, FabricBuilder)> {
    let pgft = gen::pgft::Pgft {
        down: vec![4, 6],
        up: vec![1, 3],
        parallel: vec![1, 2],
    };
    // Leaves on two director chassis of 4 line and 2 spine chips, bundles
    // of 2: a real tree's shape (CS7500-like) in a few dozen chips.
    let director = gen::field::Directors::small_twin();
    let made: Vec<(&str, Result<FabricBuilder, String>)> = vec![
        (
            "dragonfly a=4 h=2 p=2",
            gen::dragonfly::dragonfly(&gen::dragonfly::Params::new(4, 2, 2)),
        ),
        ("slim fly q=5 p=2", gen::slimfly::slimfly(5, 2)),
        (
            "hyperx 3x3x3 p=2",
            gen::hyperx::hyperx(&[3, 3, 3], &[1, 1, 1], 2),
        ),
        ("hypercube 4 p=2", gen::hyperx::hypercube(4, 1, 2)),
        ("torus 5x5 p=2", gen::torus::torus(&[5, 5], &[1, 1], 2)),
        ("4-port 3-tree", gen::fattree::fattree(4, 3)),
        (
            "pgft 4,6;1,3;1,2 + 3 spine hosts",
            gen::pgft::pgft_with_top_hosts(&pgft, 3, 1),
        ),
        (
            "random regular 16x4 p=2",
            gen::random_regular::random_regular(16, 4, 2, 1),
        ),
        (
            "dragonfly+ 9 groups 4x4 leaf/spine",
            gen::dragonfly_plus::dragonfly_plus(&gen::dragonfly_plus::Params::new(4, 4, 4, 2, 9)),
        ),
        (
            "dragonfly+ 9 groups, 5 % switches gone, ANs",
            gen::dragonfly_plus::dragonfly_plus(&gen::dragonfly_plus::Params {
                aggregation_nodes: true,
                ..gen::dragonfly_plus::Params::new(4, 4, 4, 2, 9)
            })
            .and_then(|b| gen::degrade::drop_switches(&b, 0.05, 1))
            .map(|(b, _)| b),
        ),
        (
            "director twin 2x(4 line, 2 spine) + ANs",
            gen::field::directors(&director).and_then(|b| gen::field::aggregation_nodes(&b)),
        ),
        (
            "dragonfly+ 4 groups (by hand)",
            Ok(hand_built::dragonfly_plus(4, 3, 3, 2)),
        ),
        (
            "rail pod 8 rails (by hand)",
            Ok(hand_built::rail_pod(6, 8, 4)),
        ),
    ];
    made.into_iter()
        .filter_map(|(name, b)| b.ok().map(|b| (name.to_string(), b)))
        .collect()
}

/// The table: one row per fabric, one column per engine, each cell the
/// EBB (`*` where it fits, `!` where it routes with a lost route or a
/// credit loop) or `declines`; last column the recommendation.
pub fn table(rows: &[(String, Vec<Trial>)]) -> String {
    let mut out = format!("| fabric | {} | use |\n", PREFERENCE.join(" | "));
    out += &format!("|---|{}---|\n", "---|".repeat(PREFERENCE.len()));
    for (name, trials) in rows {
        let best = best_ebb(trials);
        let cells: Vec<String> = PREFERENCE
            .iter()
            .map(|e| match trials.iter().find(|t| t.engine == *e) {
                Some(t) => match &t.result {
                    Ok(q) if !q.delivered || !q.loop_free => format!("{:.3} !", q.ebb),
                    Ok(q) => format!("{:.3}{}", q.ebb, if fits(t, best) { " *" } else { "" }),
                    Err(_) => "declines".to_string(),
                },
                None => "-".to_string(),
            })
            .collect();
        out += &format!(
            "| {name} | {} | {} |\n",
            cells.join(" | "),
            recommend(trials).unwrap_or("none of ours")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::detect;

    /// The real clusters of tests/fixtures, as read from their files.
    fn fixtures() -> Vec<(String, FabricBuilder)> {
        [
            (
                "plafrim",
                include_str!("../../../../tests/fixtures/plafrim.ibnetdiscover-p"),
            ),
            (
                "plafrim2",
                include_str!("../../../../tests/fixtures/plafrim2.ibnetdiscover-p"),
            ),
            (
                "x5-voltaire",
                include_str!("../../../../tests/fixtures/x5-voltaire.ibnetdiscover"),
            ),
        ]
        .into_iter()
        .map(|(name, text)| {
            (
                format!("{name} (real)"),
                detect::read(text, None).unwrap().builder,
            )
        })
        .collect()
    }

    fn built(mut b: FabricBuilder, has_lids: bool) -> Fabric {
        if !has_lids {
            b.assign_lids_sequential(0).unwrap();
        }
        b.build().unwrap()
    }

    /// Every family and every real fixture with every engine: each routes
    /// complete and loop-free with an EBB within 5 % of the best of ours,
    /// or declines; some engine of ours fits every fabric; the specialists
    /// take the families they are made for and decline the others.
    #[test]
    fn every_engine_on_every_fabric_fits_or_declines() {
        let settings = Settings::defaults();
        let mut rows = Vec::new();
        let all = families()
            .into_iter()
            .map(|(n, b)| (n, b, false))
            .chain(fixtures().into_iter().map(|(n, b)| (n, b, true)));
        for (name, b, has_lids) in all {
            let f = built(b, has_lids);
            let trials = try_engines(&f, &settings, 200, 1);
            rows.push((name, trials));
        }
        let table = table(&rows);
        println!("{table}");
        for (name, trials) in &rows {
            let best = best_ebb(trials);
            for t in trials {
                if let Ok(q) = &t.result {
                    assert!(
                        fits(t, best),
                        "{name}: {} routes but does not fit ({q:?}, best EBB {best:?}) instead of declining\n{table}",
                        t.engine
                    );
                }
            }
            assert!(
                recommend(trials).is_some(),
                "{name}: no engine of ours fits\n{table}"
            );
            let routes = |e: &str| trials.iter().any(|t| t.engine == e && t.result.is_ok());
            let grid = ["hyperx", "hypercube", "torus"]
                .iter()
                .any(|g| name.starts_with(g));
            assert_eq!(routes(hxdor::NAME), grid, "{name}: hxdor\n{table}");
            assert_eq!(
                routes(sfmin::NAME),
                name.starts_with("slim fly"),
                "{name}: sfmin\n{table}"
            );
            if grid {
                assert_eq!(recommend(trials), Some(hxdor::NAME), "{name}\n{table}");
            }
        }
    }
}

//! `osmroute compare --matrix`: every engine of ours on small instances of
//! every generated family (and the fabric files given), as a table of EBB
//! per engine, which fit (`engines::matrix`'s rule) and the one to use.

use std::path::PathBuf;
use std::process::ExitCode;

use osmroute_core::config::Settings;
use osmroute_core::engines::matrix::{self, Trial};
use osmroute_core::fabric::VlBudget;

use crate::cmd_check::Measure;

pub fn run(files: &[PathBuf], measure: &Measure) -> crate::CmdResult {
    let settings = Settings::defaults();
    let patterns = measure.patterns.max(1);
    let mut rows: Vec<(String, Vec<Trial>)> = Vec::new();
    let mut fabrics = Vec::new();
    for (name, mut b) in matrix::families() {
        b.assign_lids_sequential(measure.lmc)
            .map_err(|e| format!("{name}: {e}"))?;
        fabrics.push((name.clone(), b.build().map_err(|e| format!("{name}: {e}"))?));
    }
    for path in files {
        let source = crate::load::Source {
            path,
            format: None,
            lmc: (measure.lmc > 0).then_some(measure.lmc),
            guid2lid: None,
        };
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        fabrics.push((name, source.load(VlBudget::default())?));
    }
    for (name, fabric) in &fabrics {
        let _spinner =
            crate::progress::Progress::spinner(&format!("trying every engine on {name}"));
        rows.push((
            name.clone(),
            matrix::try_engines(fabric, &settings, patterns, measure.seed),
        ));
    }
    print!("{}", matrix::table(&rows));
    println!(
        "\nEBB over {patterns} random bisections (seed {}), LMC {}, every option at its default. `*`: the engine \
         fits (routes every pair, no credit loop, EBB within {:.0} % of the best); `!`: it routes with a lost route \
         or a credit loop; `use`: the first that fits of {}.",
        measure.seed,
        measure.lmc,
        100.0 * matrix::EBB_SLACK,
        matrix::PREFERENCE.join(", ")
    );
    for (name, trials) in &rows {
        for t in trials {
            if let Err(why) = &t.result {
                println!("- {name}: {why}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

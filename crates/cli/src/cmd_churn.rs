//! `osmroute churn BEFORE AFTER`: how much a routing moved between two
//! passes on one fabric (dump directories, e.g. before and after a cable
//! failed): LFT entries changed, beside the entries whose route crossed a
//! cable that is gone. Any engine's dumps will do.

use std::path::PathBuf;
use std::process::ExitCode;

use osmroute_core::analysis::churn::churn;

#[derive(clap::Args)]
pub struct Args {
    /// Dump directory of the first pass, as `osmroute check` reads them.
    before: PathBuf,
    /// Dump directory of the second pass.
    after: PathBuf,
    /// Print the counts as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> crate::CmdResult {
    let before = crate::load::load_tables(&args.before, 0)?;
    let after = crate::load::load_tables(&args.after, 0)?;
    let c = churn(
        (&before.fabric, &before.routing.lfts),
        (&after.fabric, &after.routing.lfts),
    );
    if args.json {
        let json = serde_json::json!({
            "entries": c.entries,
            "changed": c.changed,
            "crossed": c.crossed,
            "changed_not_crossed": c.changed_not_crossed,
            "cables_lost": c.cables_lost,
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} -> {}: {} inter-switch cable(s) lost",
        args.before.display(),
        args.after.display(),
        c.cables_lost
    );
    println!("LFT entries compared: {}", c.entries);
    println!(
        "changed: {} ({:.3} %)",
        c.changed,
        100.0 * c.changed_share()
    );
    println!(
        "route crossed a lost cable: {} ({:.3} %)",
        c.crossed,
        100.0 * c.crossed_share()
    );
    println!(
        "changed although the route had not crossed one: {}",
        c.changed_not_crossed
    );
    if c.crossed > 0 {
        println!(
            "changed / crossed: {:.2}",
            c.changed as f64 / c.crossed as f64
        );
    }
    Ok(ExitCode::SUCCESS)
}

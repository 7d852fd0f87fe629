//! `osmroute route --engine NAME --fabric FILE -o DIR`: routes a fabric
//! offline, through the same pipeline the plugin runs inside OpenSM, and
//! writes the tables as OpenSM and ibdmchk files.

use std::path::PathBuf;
use std::process::ExitCode;

use osmroute_core::config::Settings;
use osmroute_core::dumps::bundle::{Bundle, Contents, DumpOptions};
use osmroute_core::engines;

#[derive(clap::Args)]
pub struct Args {
    /// Routing engine, as in OpenSM's `routing_engine`.
    #[arg(long)]
    engine: String,
    #[command(flatten)]
    fabric: crate::load::FabricArgs,
    /// osmroute.conf with engine options (default: every option's default).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Output directory.
    #[arg(short, long)]
    output: PathBuf,
}

pub fn run(args: Args) -> crate::CmdResult {
    let info = engines::find(&args.engine)?;
    let fabric = args.fabric.load()?;
    let sections = engines::config_sections();
    let settings = match &args.config {
        Some(path) => Settings::load(path, true, &sections),
        None => Settings::defaults(),
    };
    let started = std::time::Instant::now();
    let outcome = {
        let _spinner = crate::progress::Progress::spinner(&format!("routing with {}", info.name));
        osmroute_core::pipeline::route(info, &settings, &fabric)?
    };
    let elapsed = started.elapsed();
    let dump_options = DumpOptions::read(&settings.section(osmroute_core::config::DUMP_SECTION))?;
    let bundle = Bundle::new(&fabric, &outcome, Contents::Offline, &dump_options);
    for why in &bundle.skipped {
        eprintln!("warning: {why}");
    }
    bundle.write_to(&args.output)?;
    let routing = &outcome.routing;
    let summary = format!(
        "engine {}\nfabric {} ({} switches, {} CAs, {} LIDs, LMC {})\nVLs needed {}\nSLs {:?}\nrouting time {:.1} ms\n",
        info.name,
        args.fabric.fabric.display(),
        fabric.switch_count(),
        fabric.cas().count(),
        fabric.lids().count(),
        fabric.lmc(),
        routing.vls_needed(),
        routing.path_sl.sls_used(),
        elapsed.as_secs_f64() * 1e3
    );
    std::fs::write(args.output.join("summary.txt"), &summary)?;
    eprint!("{summary}");
    if let Some(lmc) = outcome.lmc_request {
        eprintln!(
            "{} asks for lmc {lmc}: route again with --lmc {lmc} for all of its paths",
            info.name
        );
    }
    Ok(ExitCode::SUCCESS)
}

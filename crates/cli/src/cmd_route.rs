//! `osmroute route --engine NAME --fabric FILE -o DIR`: routes a net file
//! offline and writes the tables as OpenSM and ibdmchk files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use osmroute_core::config::Config;
use osmroute_core::dumps::{ibdmchk, lfts, subnet_lst, LFTS_FILE, PATH_SL_FILE, SL2VL_FILE, SUBNET_FILE};
use osmroute_core::dumps::path_select::{self, PATH_SELECT_FILE};
use osmroute_core::dumps::switch_sl::{self, SWITCH_SL_FILE};
use osmroute_core::engines::mlid;
use osmroute_core::PathSl;

#[derive(clap::Args)]
pub struct Args {
    /// Routing engine, as in OpenSM's `routing_engine`.
    #[arg(long)]
    engine: String,
    #[command(flatten)]
    fabric: crate::load::FabricArgs,
    /// osmroute.conf with engine options.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Output directory.
    #[arg(short, long)]
    output: PathBuf,
}

pub fn run(args: Args) -> crate::CmdResult {
    let fabric = args.fabric.load()?;
    let config = match &args.config {
        Some(path) => {
            let loaded = Config::load(path);
            if let Some(e) = loaded.errors.first() {
                return Err(e.to_string().into());
            }
            loaded.config
        }
        None => Config::default(),
    };
    let started = std::time::Instant::now();
    let routing = osmroute_core::engines::route(&args.engine, &fabric, &config)?;
    let elapsed = started.elapsed();
    std::fs::create_dir_all(&args.output)?;
    let out = |name: &str| args.output.join(name);
    std::fs::write(out(SUBNET_FILE), subnet_lst::write(&fabric))?;
    std::fs::write(out(LFTS_FILE), lfts::write(&fabric, &routing))?;
    if let Some(why) = ibdmchk::path_sl_too_big(&fabric, &config) {
        eprintln!("warning: {why}");
    } else {
        let mut w = std::io::BufWriter::new(std::fs::File::create(out(PATH_SL_FILE))?);
        ibdmchk::write_path_sl(&fabric, &routing, &mut w)?;
        w.flush()?;
    }
    if routing.sl2vl.is_some() {
        let mut w = std::io::BufWriter::new(std::fs::File::create(out(SL2VL_FILE))?);
        ibdmchk::write_sl2vl(&fabric, &routing, &mut w)?;
        w.flush()?;
    }
    if matches!(routing.path_sl, PathSl::PerSourceSwitch(_)) {
        let mut w = std::io::BufWriter::new(std::fs::File::create(out(SWITCH_SL_FILE))?);
        switch_sl::write(&fabric, &routing.path_sl, &mut w)?;
        w.flush()?;
    }
    if args.engine == mlid::NAME {
        let mut w = std::io::BufWriter::new(std::fs::File::create(out(PATH_SELECT_FILE))?);
        path_select::write(&mlid::path_selection(&fabric)?, &mut w)?;
        w.flush()?;
    }
    let summary = format!(
        "engine {}\nfabric {} ({} switches, {} CAs, {} LIDs, LMC {})\nVLs needed {}\nSLs {:?}\nrouting time {:.1} ms\n",
        args.engine,
        args.fabric.fabric.display(),
        fabric.switches().len(),
        fabric.cas().count(),
        fabric.lids().count(),
        args.fabric.lmc,
        routing.vls_needed(),
        routing.path_sl.sls_used(),
        elapsed.as_secs_f64() * 1e3
    );
    std::fs::write(out("summary.txt"), &summary)?;
    eprint!("{summary}");
    Ok(ExitCode::SUCCESS)
}

//! `osmroute route --engine NAME --fabric FILE -o DIR`: routes a net file
//! offline and writes the tables as OpenSM and ibdmchk files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use osmroute_core::config::Config;
use osmroute_core::dumps::{ibdmchk, lfts, subnet_lst, LFTS_FILE, PATH_SL_FILE, SL2VL_FILE, SUBNET_FILE};
use osmroute_core::dumps::switch_sl::{self, SWITCH_SL_FILE};
use osmroute_core::io::guid2lid::Guid2Lid;
use osmroute_core::io::ibnetdiscover;
use osmroute_core::io::netfile;
use osmroute_core::PathSl;

#[derive(clap::Args)]
pub struct Args {
    /// Routing engine, as in OpenSM's `routing_engine`.
    #[arg(long)]
    engine: String,
    /// ibsim net file, or `ibnetdiscover` output (recognised by its
    /// GUID-named nodes; its LIDs are used).
    #[arg(long)]
    fabric: PathBuf,
    /// LMC for CA ports, with sequential LIDs (with --guid2lid the file's).
    #[arg(long, default_value_t = 0)]
    lmc: u8,
    /// Take the LIDs from OpenSM's guid2lid cache file (in $OSM_CACHE_DIR,
    /// default /var/cache/opensm) so the offline run reproduces a live one.
    #[arg(long)]
    guid2lid: Option<PathBuf>,
    /// osmroute.conf with engine options.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Output directory.
    #[arg(short, long)]
    output: PathBuf,
}

pub fn run(args: Args) -> crate::CmdResult {
    let text = std::fs::read_to_string(&args.fabric).map_err(|e| format!("cannot read {}: {e}", args.fabric.display()))?;
    // ibnetdiscover names nodes by GUID ("S-0002c9...") and carries LIDs.
    let discovered = text.contains("\"S-") && text.contains(" lid ");
    let mut builder = if discovered {
        ibnetdiscover::read(&text).map_err(|e| format!("{}: {e}", args.fabric.display()))?
    } else {
        netfile::read(&text).map_err(|e| format!("{}: {e}", args.fabric.display()))?
    };
    match &args.guid2lid {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let lids = Guid2Lid::read(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            // The file's LID ranges carry the LMC; --lmc does not apply.
            lids.apply(&mut builder).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        None if discovered => {} // LIDs as discovered
        None => builder.assign_lids_sequential(args.lmc)?,
    }
    let fabric = builder.build()?;
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
    let summary = format!(
        "engine {}\nfabric {} ({} switches, {} CAs, {} LIDs, LMC {})\nVLs needed {}\nSLs {:?}\nrouting time {:.1} ms\n",
        args.engine,
        args.fabric.display(),
        fabric.switches().len(),
        fabric.cas().count(),
        fabric.lids().count(),
        args.lmc,
        routing.vls_needed(),
        routing.path_sl.sls_used(),
        elapsed.as_secs_f64() * 1e3
    );
    std::fs::write(out("summary.txt"), &summary)?;
    eprint!("{summary}");
    Ok(ExitCode::SUCCESS)
}

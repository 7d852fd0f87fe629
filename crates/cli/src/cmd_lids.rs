//! `osmroute lids --fabric F --lmc N`: a LID numbering for OpenSM, as the
//! guid2lid file it keeps in its cache directory.
//!
//! OpenSM's LID manager numbers ports as it discovers them and aligns each
//! CA port's block of 2^LMC LIDs, so every switch LID that falls between
//! two blocks wastes up to 2^LMC - 1 LIDs. Near the unicast limit that is
//! the difference between fitting and not: on a 36-port three-level tree
//! (1,620 switches, 11,664 hosts) at LMC 2 OpenSM 3.3.23 runs out
//! (`ERR 0307`) and leaves about 420 hosts without LIDs, although 48,279
//! LIDs would do. Numbering the switches first leaves no gaps. OpenSM reads
//! the file at start (`reassign_lids FALSE`, its default) and keeps every
//! entry that is legal for its `lmc`.

use std::path::PathBuf;
use std::process::ExitCode;

use osmroute_core::fabric::MAX_UNICAST_LID;
use osmroute_core::io::detect::Form;
use osmroute_core::io::guid2lid;

#[derive(clap::Args)]
pub struct Args {
    /// The fabric: an ibsim net file, `ibnetdiscover` output or any form
    /// the other commands read (its own LIDs are ignored).
    #[arg(long)]
    fabric: PathBuf,
    /// The fabric file's form: net, ibnetdiscover, ports or lst (default:
    /// found from the file's lines).
    #[arg(long, value_parser = crate::load::parse_form)]
    format: Option<Form>,
    /// The LMC OpenSM runs with (its `lmc` option): CA ports get 2^LMC
    /// LIDs each, switches one.
    #[arg(long, default_value_t = 0)]
    lmc: u8,
    /// Where to write the file (OpenSM's is `guid2lid` in its cache
    /// directory, /var/cache/opensm unless OSM_CACHE_DIR says otherwise);
    /// standard output if not given.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub fn run(args: Args) -> crate::CmdResult {
    if args.lmc > 7 {
        return Err(format!("--lmc {}: InfiniBand's LMC is 0 to 7", args.lmc).into());
    }
    let path = &args.fabric;
    let mut builder = crate::load::read_text(path, args.format)?.builder;
    builder
        .assign_lids_switches_first(args.lmc)
        .map_err(|e| format!("{}: {e} (even with the switches first)", path.display()))?;
    let file = guid2lid::write(&builder);
    let (mut switches, mut ca_ports, mut top) = (0u32, 0u32, 0u32);
    for at in builder.end_ports() {
        let node = builder.node(at.node);
        let Some(port) = node.port(at.port) else {
            continue;
        };
        if node.is_switch() {
            switches += 1;
        } else {
            ca_ports += 1;
        }
        top = top.max(u32::from(port.lid.raw()) + (1u32 << port.lmc) - 1);
    }
    match &args.output {
        Some(out) => std::fs::write(out, &file)
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?,
        None => print!("{file}"),
    }
    eprintln!(
        "{switches} switches on LIDs 1-{switches}, {ca_ports} CA ports with {} LID(s) each above them: top LID {top} of {MAX_UNICAST_LID} (the switches' LFTs must hold it: LinearFDBCap)",
        1u32 << args.lmc
    );
    Ok(ExitCode::SUCCESS)
}

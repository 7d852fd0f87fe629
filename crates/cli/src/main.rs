//! `osmroute`: generate fabrics, route them offline with any engine, check
//! routings (ours or OpenSM's dumps) and compare them. No OpenSM needed.

mod cmd_assets;
mod cmd_check;
mod cmd_churn;
mod cmd_compare;
mod cmd_gen;
mod cmd_layers;
mod cmd_lids;
mod cmd_matrix;
mod cmd_mlid_path;
mod cmd_route;
mod doctor;
mod load;
mod mcast_summary;
mod osm_log;
mod plot;
mod progress;
mod summary;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "osmroute",
    version,
    about = "InfiniBand routing engines: offline toolkit"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a fabric and write it as an ibsim net file.
    Gen(cmd_gen::Args),
    /// Route a fabric offline and write the tables in OpenSM/ibdmchk formats.
    Route(cmd_route::Args),
    /// Check a routing (our output or OpenSM's dumps): reachability, hops,
    /// link load, effective bisection bandwidth, credit loops.
    Check(cmd_check::Args),
    /// Put several routings of one fabric side by side.
    Compare(cmd_compare::Args),
    /// How much a routing moved between two passes (e.g. before and after
    /// a cable failed): LFT entries changed, and entries whose route
    /// crossed a lost cable.
    Churn(cmd_churn::Args),
    /// Multipath analysis per LID offset (layer): path lengths, paths per
    /// link, link-disjoint paths per switch pair.
    Layers(cmd_layers::Args),
    /// mlid's path selection for one host pair: the DLID to use and the
    /// path it takes.
    MlidPath(cmd_mlid_path::Args),
    /// Check OpenSM's configuration (and optionally the fabric or a pass's
    /// dumps) for what would stop osmroute from routing or let the fabric
    /// deadlock; says the line to change. Exit 0 fine, 1 errors, 3
    /// warnings only, 2 could not read the input.
    Doctor(doctor::Args),
    /// Write a LID numbering as OpenSM's guid2lid file: switches first,
    /// then CA ports in aligned LMC blocks, without the gaps OpenSM's own
    /// numbering leaves (so the largest fabrics fit at LMC > 0).
    Lids(cmd_lids::Args),
    /// Print the commented example osmroute.conf: every engine option with
    /// its default and what it does.
    ExampleConfig,
    /// Write man pages, shell completions and the example osmroute.conf
    /// into a directory (what the Debian package installs).
    #[command(hide = true)]
    Assets(cmd_assets::Args),
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen(a) => cmd_gen::run(a),
        Command::Route(a) => cmd_route::run(a),
        Command::Check(a) => cmd_check::run(a),
        Command::Compare(a) => cmd_compare::run(a),
        Command::Churn(a) => cmd_churn::run(a),
        Command::Layers(a) => cmd_layers::run(a),
        Command::MlidPath(a) => cmd_mlid_path::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Lids(a) => cmd_lids::run(a),
        Command::ExampleConfig => {
            print!("{}", osmroute_core::engines::example_configuration());
            Ok(ExitCode::SUCCESS)
        }
        Command::Assets(a) => cmd_assets::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("osmroute: error: {e}");
            ExitCode::from(2)
        }
    }
}

/// What every subcommand returns: an exit code, or an error to print.
pub type CmdResult = Result<ExitCode, Box<dyn std::error::Error>>;

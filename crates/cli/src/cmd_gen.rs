//! `osmroute gen FAMILY ... -o FILE`: writes a generated fabric as an ibsim
//! net file.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use osmroute_core::fabric::FabricBuilder;
use osmroute_core::gen::{self, dragonfly};
use osmroute_core::io::netfile;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    family: Family,
    /// Output file (`-` for standard output).
    #[arg(short, long, global = true, default_value = "-")]
    output: PathBuf,
    /// Seed for everything random (port shuffling).
    #[arg(long, global = true, default_value_t = 1)]
    seed: u64,
    /// Renumber every switch's ports at random (seeded), so that port
    /// numbering carries no structure.
    #[arg(long, global = true)]
    shuffle_ports: bool,
}

#[derive(Subcommand)]
enum Family {
    /// Fully connected Dragonfly: groups of `a` switches with `p` hosts and
    /// `h` global ports each, a*h+1 groups unless --groups says otherwise.
    Dragonfly {
        #[arg(long)]
        a: usize,
        #[arg(long)]
        h: usize,
        #[arg(long)]
        p: usize,
        /// Number of groups (a*h must be a multiple of groups-1); default a*h+1.
        #[arg(long)]
        groups: Option<usize>,
        /// Layout of the global cables.
        #[arg(long, value_enum, default_value_t = ArrangementArg::Consecutive)]
        arrangement: ArrangementArg,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ArrangementArg {
    Consecutive,
    Palmtree,
}

pub fn run(args: Args) -> crate::CmdResult {
    let builder: FabricBuilder = match args.family {
        Family::Dragonfly { a, h, p, groups, arrangement } => {
            let arrangement = match arrangement {
                ArrangementArg::Consecutive => dragonfly::Arrangement::Consecutive,
                ArrangementArg::Palmtree => dragonfly::Arrangement::Palmtree,
            };
            let params = dragonfly::Params { groups: groups.unwrap_or(a * h + 1), arrangement, ..dragonfly::Params::new(a, h, p) };
            dragonfly::dragonfly(&params)?
        }
    };
    let builder = if args.shuffle_ports { gen::shuffle_ports(&builder, args.seed) } else { builder };
    let switches = builder.nodes().iter().filter(|n| n.is_switch()).count();
    let cables: usize = builder.nodes().iter().map(|n| n.links().count()).sum::<usize>() / 2;
    let text = netfile::write(&builder);
    if args.output.as_os_str() == "-" {
        print!("{text}");
    } else {
        std::fs::write(&args.output, text).map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    }
    eprintln!("{} switches, {} hosts, {cables} cables", switches, builder.node_count() - switches);
    Ok(ExitCode::SUCCESS)
}

//! `osmroute gen FAMILY ... -o FILE`: writes a generated fabric as an ibsim
//! net file.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use osmroute_core::fabric::FabricBuilder;
use osmroute_core::gen::{
    self, degrade, dragonfly, dragonfly_plus, fattree, field, hyperx, pgft, random_regular,
    slimfly, torus,
};
use osmroute_core::io::netfile;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    family: Family,
    /// Output file (`-` for standard output).
    #[arg(short, long, global = true, default_value = "-")]
    output: PathBuf,
    /// Seed for everything random (port shuffling, drops, random graphs).
    #[arg(long, global = true, default_value_t = 1)]
    seed: u64,
    /// Renumber every switch's ports at random (seeded), so that port
    /// numbering carries no structure.
    #[arg(long, global = true)]
    shuffle_ports: bool,
    /// Remove this fraction of inter-switch cables at random (seeded).
    #[arg(long, global = true, default_value_t = 0.0)]
    drop_links: f64,
    /// Remove this fraction of switches, with their hosts, at random (seeded).
    #[arg(long, global = true, default_value_t = 0.0)]
    drop_switches: f64,
    /// Remove this fraction of hosts at random (seeded), after
    /// --drop-switches.
    #[arg(long, global = true, default_value_t = 0.0)]
    drop_hosts: f64,
    /// Replace every inter-switch cable by this many parallel cables
    /// (before any drop), e.g. a Slim Fly with doubled cables.
    #[arg(long, global = true, default_value_t = 1)]
    parallel_cables: usize,
    /// Remove the hosts of this many switches that have hosts, chosen at
    /// random (seeded), after the drops: leaves cabled but not populated.
    #[arg(long, global = true, default_value_t = 0)]
    empty_leaves: usize,
    /// Add a SHARP Aggregation Node on every switch (one more port, cabled
    /// to a single-port CA), as Quantum and Switch-IB 2 chips report.
    #[arg(long, global = true)]
    aggregation_nodes: bool,
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
        /// Remove this fraction of the global cables (between groups) at
        /// random (seeded), after --drop-switches.
        #[arg(long, default_value_t = 0.0)]
        drop_global: f64,
        /// Remove this fraction of the local cables (inside groups) at
        /// random (seeded), after --drop-switches.
        #[arg(long, default_value_t = 0.0)]
        drop_local: f64,
    },
    /// Dragonfly+ (Shpiner et al.): groups that are two-level fat trees
    /// (every leaf cabled to every spine of its group), global cables
    /// between spines of different groups.
    DragonflyPlus {
        /// Leaf switches per group.
        #[arg(long)]
        leaves: usize,
        /// Spine switches per group.
        #[arg(long)]
        spines: usize,
        /// Hosts per leaf.
        #[arg(long)]
        hosts: usize,
        /// Global ports per spine.
        #[arg(long)]
        global_ports: usize,
        #[arg(long)]
        groups: usize,
        /// Global cables between each pair of groups (default: as many as
        /// the global ports allow).
        #[arg(long)]
        cables_per_pair: Option<usize>,
        /// The first N groups get one spine more.
        #[arg(long, default_value_t = 0)]
        extra_spine_groups: usize,
        /// Remove this fraction of the global cables at random (seeded),
        /// after --drop-switches.
        #[arg(long, default_value_t = 0.0)]
        drop_global: f64,
        /// Remove this fraction of the leaf-spine cables at random
        /// (seeded), after --drop-switches.
        #[arg(long, default_value_t = 0.0)]
        drop_local: f64,
    },
    /// Slim Fly (MMS graph) over GF(q), q a prime power ≥ 3; 2q² switches.
    Slimfly {
        #[arg(long)]
        q: usize,
        /// Hosts per switch; default ⌈k'/2⌉ (full global bandwidth).
        #[arg(long)]
        p: Option<usize>,
    },
    /// HyperX / Flattened Butterfly: a full graph in every grid dimension.
    Hyperx(Grid),
    /// Hypercube of dimension `dim`.
    Hypercube {
        #[arg(long)]
        dim: usize,
        /// Parallel cables per dimension.
        #[arg(long, default_value_t = 1)]
        width: usize,
        #[arg(long)]
        p: usize,
    },
    /// Torus: a ring in every grid dimension.
    Torus(Grid),
    /// m-port n-tree fat tree: 2(m/2)^n hosts, (2n-1)(m/2)^(n-1) switches.
    Fattree {
        #[arg(long)]
        m: usize,
        #[arg(long)]
        n: usize,
    },
    /// Parallel-ports generalized fat tree PGFT(h; m; w; p), level 1 first:
    /// e.g. 16 leaves of 18 hosts and 9 spines with 2 cables per
    /// leaf-spine pair is --down 18,16 --up 1,9 --parallel 1,2.
    Pgft {
        /// Children of a switch, per level (the first: hosts per leaf).
        #[arg(long, value_delimiter = ',', required = true)]
        down: Vec<usize>,
        /// Parents of a node of the level below, per level (the first: 1).
        #[arg(long, value_delimiter = ',', required = true)]
        up: Vec<usize>,
        /// Parallel cables to each parent, per level (default all 1).
        #[arg(long, value_delimiter = ',')]
        parallel: Vec<usize>,
        /// Hosts to add on top switches chosen at random (seeded), as
        /// management or storage nodes are cabled in real clusters.
        #[arg(long, default_value_t = 0)]
        top_hosts: usize,
    },
    /// Leaves cabled to director chassis (CS7500/CS8500-like), the
    /// chassis seen as chips: every leaf has a bundle of cables to one line
    /// chip of every director; spine chips join the line chips of their
    /// director. E.g. 2 directors of 12 line and 6 spine chips, 24 leaves
    /// of 18 hosts, bundles of 3: --directors 2 --line-chips 12
    /// --spine-chips 6 --leaves-per-line 2 --hosts 18 --bundle 3.
    Director {
        #[arg(long)]
        directors: usize,
        #[arg(long)]
        line_chips: usize,
        #[arg(long)]
        spine_chips: usize,
        #[arg(long)]
        leaves_per_line: usize,
        /// Hosts per leaf.
        #[arg(long)]
        hosts: usize,
        /// Cables between a leaf and each of its line chips.
        #[arg(long, default_value_t = 1)]
        bundle: usize,
    },
    /// Random regular topology (Jellyfish-like), seeded.
    Random {
        #[arg(long)]
        switches: usize,
        /// Inter-switch cables per switch.
        #[arg(long)]
        degree: usize,
        #[arg(long)]
        p: usize,
    },
}

/// A grid of switches with hosts: HyperX and tori.
#[derive(clap::Args)]
struct Grid {
    /// Grid sizes, e.g. 4,8,8.
    #[arg(long, value_delimiter = ',', required = true)]
    dims: Vec<usize>,
    /// Parallel cables per dimension, e.g. 1,1,1 (default all 1).
    #[arg(long, value_delimiter = ',')]
    widths: Vec<usize>,
    /// Hosts per switch.
    #[arg(long)]
    p: usize,
}

impl Grid {
    /// Link widths as given, or one cable per dimension when none are.
    fn widths(&self) -> Vec<usize> {
        if self.widths.is_empty() {
            vec![1; self.dims.len()]
        } else {
            self.widths.clone()
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum ArrangementArg {
    Consecutive,
    Palmtree,
}

fn generate(family: Family, seed: u64) -> Result<FabricBuilder, String> {
    match family {
        Family::Dragonfly {
            a,
            h,
            p,
            groups,
            arrangement,
            ..
        } => {
            let arrangement = match arrangement {
                ArrangementArg::Consecutive => dragonfly::Arrangement::Consecutive,
                ArrangementArg::Palmtree => dragonfly::Arrangement::Palmtree,
            };
            let params = dragonfly::Params {
                groups: groups.unwrap_or(a * h + 1),
                arrangement,
                ..dragonfly::Params::new(a, h, p)
            };
            dragonfly::dragonfly(&params)
        }
        Family::DragonflyPlus {
            leaves,
            spines,
            hosts,
            global_ports,
            groups,
            cables_per_pair,
            extra_spine_groups,
            ..
        } => dragonfly_plus::dragonfly_plus(&dragonfly_plus::Params {
            cables_per_pair,
            extra_spine_groups,
            // The global --aggregation-nodes adds them, after the drops:
            // asking the generator too gave every switch two.
            aggregation_nodes: false,
            ..dragonfly_plus::Params::new(leaves, spines, hosts, global_ports, groups)
        }),
        Family::Slimfly { q, p } => {
            slimfly::slimfly(q, p.unwrap_or_else(|| slimfly::recommended_hosts(q)))
        }
        Family::Hyperx(g) => hyperx::hyperx(&g.dims, &g.widths(), g.p),
        Family::Hypercube { dim, width, p } => hyperx::hypercube(dim, width, p),
        Family::Torus(g) => torus::torus(&g.dims, &g.widths(), g.p),
        Family::Fattree { m, n } => fattree::fattree(m, n),
        Family::Pgft {
            down,
            up,
            parallel,
            top_hosts,
        } => {
            let parallel = if parallel.is_empty() {
                vec![1; down.len()]
            } else {
                parallel
            };
            pgft::pgft_with_top_hosts(&pgft::Pgft { down, up, parallel }, top_hosts, seed)
        }
        Family::Director {
            directors,
            line_chips,
            spine_chips,
            leaves_per_line,
            hosts,
            bundle,
        } => field::directors(&field::Directors {
            directors,
            line_chips,
            spine_chips,
            leaves_per_line,
            hosts,
            bundle,
        }),
        Family::Random {
            switches,
            degree,
            p,
        } => random_regular::random_regular(switches, degree, p, seed),
    }
}

pub fn run(args: Args) -> crate::CmdResult {
    let (drop_global, drop_local) = match &args.family {
        Family::Dragonfly {
            drop_global,
            drop_local,
            ..
        }
        | Family::DragonflyPlus {
            drop_global,
            drop_local,
            ..
        } => (*drop_global, *drop_local),
        _ => (0.0, 0.0),
    };
    let plus = matches!(args.family, Family::DragonflyPlus { .. });
    let mut builder = generate(args.family, args.seed)?;
    if args.parallel_cables != 1 {
        builder = gen::parallel_cables(&builder, args.parallel_cables, |_, _| true)?;
    }
    if args.drop_switches > 0.0 {
        let (b, n) = degrade::drop_switches(&builder, args.drop_switches, args.seed)?;
        eprintln!("dropped {n} switches with their hosts");
        builder = b;
    }
    if args.drop_hosts > 0.0 {
        let (b, n) = degrade::drop_hosts(&builder, args.drop_hosts, args.seed)?;
        eprintln!("dropped {n} hosts");
        builder = b;
    }
    for (fraction, global, kind) in [(drop_global, true, "global"), (drop_local, false, "local")] {
        if fraction > 0.0 {
            let n = degrade::drop_links_where(&mut builder, fraction, args.seed, |x, y| {
                let is_global = if plus {
                    dragonfly_plus::is_global(x, y)
                } else {
                    dragonfly::is_global(x, y)
                };
                is_global == Some(global)
            })?;
            eprintln!("dropped {n} {kind} cables");
        }
    }
    if args.drop_links > 0.0 {
        let n = degrade::drop_links(&mut builder, args.drop_links, args.seed)?;
        eprintln!("dropped {n} inter-switch cables");
    }
    if args.empty_leaves > 0 {
        let (b, emptied) = field::empty_leaves(&builder, args.empty_leaves, args.seed)?;
        eprintln!("removed the hosts of {} switches", emptied.len());
        builder = b;
    }
    if args.aggregation_nodes {
        builder = field::aggregation_nodes(&builder)?;
    }
    if !degrade::switches_connected(&builder) {
        eprintln!(
            "warning: the switches are no longer connected; some host pairs cannot be routed"
        );
    }
    let builder = if args.shuffle_ports {
        gen::shuffle_ports(&builder, args.seed)
    } else {
        builder
    };
    let switches = builder.nodes().iter().filter(|n| n.is_switch()).count();
    let cables: usize = builder
        .nodes()
        .iter()
        .map(|n| n.links().count())
        .sum::<usize>()
        / 2;
    let text = netfile::write(&builder);
    if args.output.as_os_str() == "-" {
        print!("{text}");
    } else {
        std::fs::write(&args.output, text)
            .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    }
    eprintln!(
        "{} switches, {} hosts, {cables} cables",
        switches,
        builder.node_count() - switches
    );
    Ok(ExitCode::SUCCESS)
}

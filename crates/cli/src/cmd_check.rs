//! `osmroute check DIR`: reachability, hops, channel load, effective
//! bisection bandwidth, SLs/VLs and credit loops of a routing read from
//! dumps, multicast groups of opensm.mcfdbs included; a table for people,
//! `--json` for machines, `--plot` for SVG histograms.
//!
//! Exit codes: 0 all routes delivered, within `--max-hops`, no credit loop
//! (multicast floods included), every group member reached once;
//! 1 any of those fails; 2 the dumps cannot be read.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::summary::Summary;

/// Options shared by `check` and `compare`: how to read and measure.
#[derive(clap::Args, Clone)]
pub struct Measure {
    /// LMC the CA ports were given (not recorded in opensm-subnet.lst).
    #[arg(long, default_value_t = 0)]
    pub lmc: u8,
    /// Random bisection patterns for the effective bisection bandwidth
    /// (0 skips it).
    #[arg(long, default_value_t = 1000)]
    pub patterns: usize,
    /// Seed of the bisection patterns.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also measure the EBB with the DLID each source picks per
    /// destination from the directory's osmroute-path-select.txt (mlid's
    /// path selection), where there is one.
    #[arg(long)]
    pub dlid_choice: bool,
    /// SL of multicast groups read from opensm.mcfdbs (which does not
    /// record it): `SL` for every group, `MLID=SL` (e.g. 0xC001=1) for one;
    /// repeatable. Groups not named use SL 0, the IPoIB broadcast group's.
    #[arg(long = "mcast-sl", value_parser = crate::mcast_summary::parse_mcast_sl)]
    pub mcast_sl: Vec<crate::mcast_summary::McastSl>,
}

#[derive(clap::Args)]
pub struct Args {
    /// Directory with opensm-subnet.lst and opensm-lfts.dump, plus SL2VL
    /// (osmroute-sl2vl.txt or OpenSM's opensm-sl2vl.dump) and
    /// osmroute-path-sl.txt when present.
    dir: PathBuf,
    #[command(flatten)]
    measure: Measure,
    /// Fail when a route takes more inter-switch hops than this.
    #[arg(long)]
    max_hops: Option<usize>,
    /// Write hops.svg and link-load.svg histograms into this directory.
    #[arg(long)]
    plot: Option<PathBuf>,
}

pub fn summarize(dir: &std::path::Path, m: &Measure) -> Result<Summary, String> {
    let loaded = crate::load::load(dir, m.lmc)?;
    let choice = if m.dlid_choice {
        crate::load::dlid_choice(dir)?
    } else {
        None
    };
    let groups = crate::mcast_summary::read_groups(dir, &loaded.fabric, &m.mcast_sl)?;
    Ok(Summary::compute(
        dir,
        &loaded,
        m.patterns,
        m.seed,
        choice.as_ref(),
        groups.as_deref(),
    ))
}

pub fn run(args: Args) -> crate::CmdResult {
    let s = summarize(&args.dir, &args.measure)?;
    let too_long = args.max_hops.is_some_and(|limit| s.max_hops > limit);
    let multicast_ok = s.multicast.as_ref().is_none_or(|m| m.ok());
    let ok = s.delivered() && !too_long && s.credit_loop.is_none() && multicast_ok;
    if let Some(dir) = &args.plot {
        for path in crate::plot::write_histograms(&s, dir)? {
            eprintln!("wrote {path}");
        }
    }
    if args.measure.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    println!("routing in {} (read {})", s.dir, s.sources.join(", "));
    if let Some(engine) = &s.engine {
        let time = s
            .routing_seconds
            .map(|t| format!(", routing took {t:.3} s by OpenSM's log"))
            .unwrap_or_default();
        println!("OpenSM's log: {engine} configured the tables{time}");
    }
    println!(
        "fabric: {} switches, {} CAs, {} LIDs",
        s.switches, s.cas, s.lids
    );
    println!("routes (CA port -> CA LID): {}", s.routes);
    if s.delivered() {
        println!("delivery: all routes arrive");
    }
    for f in &s.failures {
        println!(
            "delivery: {} routes: {}, e.g. {}",
            f.routes, f.kind, f.example
        );
    }
    let hist: Vec<String> = s.hops.iter().map(|(h, n)| format!("{h}:{n}")).collect();
    println!(
        "inter-switch hops: max {}, average {:.3}, histogram {}",
        s.max_hops,
        s.avg_hops,
        hist.join(" ")
    );
    if let (true, Some(limit)) = (too_long, args.max_hops) {
        println!("hops: FAIL, routes longer than --max-hops {limit}");
    }
    println!(
        "channel load: edge forwarding index {}, average {:.1} routes per inter-switch channel",
        s.edge_forwarding_index, s.avg_channel_load
    );
    let buckets: Vec<String> = s
        .link_load_buckets(10)
        .iter()
        .map(|(lo, hi, n)| {
            if lo == hi {
                format!("{lo}:{n}")
            } else {
                format!("{lo}-{hi}:{n}")
            }
        })
        .collect();
    println!("link load (routes: channels): {}", buckets.join(" "));
    if let Some(ebb) = s.ebb {
        println!(
            "effective bisection bandwidth: {ebb:.4} of full bisection ({} random bisections, seed {})",
            s.ebb_patterns, s.ebb_seed
        );
    }
    if let Some(ebb) = s.ebb_chosen_dlids {
        println!("effective bisection bandwidth with the path-selection DLIDs: {ebb:.4}");
    }
    if let Some(g) = &s.group_shift {
        println!(
            "group shift ({} groups, every host to its counterpart k groups on, {} streams per shift, mean over \
             the shifts): {:.4} of full speed to base LIDs, {:.4} spread over the destination's {} LIDs",
            g.groups, g.streams, g.minimal, g.spread, g.lids_per_host
        );
    }
    for a in &s.assumptions {
        println!("assumed: {a}");
    }
    println!("SLs used: {:?}; VLs used: {:?}", s.sls_used, s.vls_used);
    match &s.credit_loop {
        None => println!(
            "credit loops: none ({} channel dependencies)",
            s.dependencies
        ),
        Some(cycle) => println!("credit loops: FOUND, e.g. {}", cycle.join(" -> ")),
    }
    if let Some(m) = &s.multicast {
        m.print();
    }
    println!("verdict: {}", if ok { "ok" } else { "FAIL" });
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

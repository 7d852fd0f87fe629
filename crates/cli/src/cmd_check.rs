//! `osmroute check DIR`: reachability, hops, channel load, effective
//! bisection bandwidth, SLs/VLs and credit loops of a routing read from
//! dumps.
//!
//! Exit codes: 0 all routes delivered, within `--max-hops`, no credit loop;
//! 1 any of those fails; 2 the dumps cannot be read.

use std::path::PathBuf;
use std::process::ExitCode;

use osmroute_core::analysis::ebb::effective_bisection;
use osmroute_core::analysis::report::analyze;
use osmroute_core::fabric::describe;

#[derive(clap::Args)]
pub struct Args {
    /// Directory with opensm-subnet.lst and opensm-lfts.dump, plus
    /// osmroute-sl2vl.txt and osmroute-path-sl.txt when present.
    dir: PathBuf,
    /// LMC the CA ports were given (not recorded in opensm-subnet.lst).
    #[arg(long, default_value_t = 0)]
    lmc: u8,
    /// Fail when a route takes more inter-switch hops than this.
    #[arg(long)]
    max_hops: Option<usize>,
    /// Random bisection patterns for the effective bisection bandwidth
    /// (0 skips it).
    #[arg(long, default_value_t = 1000)]
    patterns: usize,
    /// Seed of the bisection patterns.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> crate::CmdResult {
    let loaded = crate::load::load(&args.dir, args.lmc)?;
    let (fabric, routing) = (&loaded.fabric, &loaded.routing);
    let report = analyze(fabric, routing);
    let mut ok = true;
    println!("routing in {} (read {})", args.dir.display(), loaded.sources.join(", "));
    println!(
        "fabric: {} switches, {} CAs, {} LIDs",
        fabric.switches().len(),
        fabric.cas().count(),
        fabric.lids().count()
    );
    println!("routes (CA port -> CA LID): {}", report.routes);
    if report.delivered() {
        println!("delivery: all routes arrive");
    } else {
        ok = false;
        for (kind, (count, example)) in &report.failures {
            println!("delivery: {count} routes: {kind}, e.g. {example}");
        }
    }
    let hist: Vec<String> = report.hops.iter().map(|(h, n)| format!("{h}:{n}")).collect();
    println!("inter-switch hops: max {}, histogram {}", report.max_hops(), hist.join(" "));
    if let Some(limit) = args.max_hops {
        if report.max_hops() > limit {
            ok = false;
            println!("hops: FAIL, routes longer than --max-hops {limit}");
        }
    }
    let loads: Vec<u64> = report.channel_load.values().copied().collect();
    let avg = if loads.is_empty() { 0.0 } else { loads.iter().sum::<u64>() as f64 / loads.len() as f64 };
    println!(
        "channel load: edge forwarding index {}, average {avg:.1} routes over {} used inter-switch channels",
        report.edge_forwarding_index(),
        loads.len()
    );
    if args.patterns > 0 {
        let ebb = effective_bisection(fabric, routing, args.patterns, args.seed);
        println!(
            "effective bisection bandwidth: {ebb:.4} of full bisection ({} random bisections, seed {})",
            args.patterns, args.seed
        );
    }
    println!("SLs used: {:?}; VLs used: {:?}", report.sls_used, report.vls_used);
    match &report.credit_loop {
        None => println!("credit loops: none ({} channel dependencies)", report.dependencies),
        Some(cycle) => {
            ok = false;
            let hops: Vec<String> = cycle
                .iter()
                .map(|c| format!("{} port {} VL {}", describe(fabric.node(fabric.switches()[c.switch])), c.port, c.vl))
                .collect();
            println!("credit loops: FOUND, e.g. {}", hops.join(" -> "));
        }
    }
    println!("verdict: {}", if ok { "ok" } else { "FAIL" });
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

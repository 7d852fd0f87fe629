//! `osmroute layers DIR --lmc N`: the Slim Fly paper's §6 analyses of a
//! multipath routing read from dumps (ours or OpenSM's): per LID offset
//! (layer) the distribution of switch-pair path lengths, the paths per
//! link, and how many pairwise link-disjoint paths each switch pair has.
//!
//! Exit codes: 0 every pair's paths arrive; 1 some do not; 2 the dumps
//! cannot be read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use osmroute_core::analysis::multipath::layer_report;
use serde::Serialize;

#[derive(clap::Args)]
pub struct Args {
    /// Directory with opensm-subnet.lst and opensm-lfts.dump.
    dir: PathBuf,
    /// LMC the CA ports were given: the routing has 2^LMC layers.
    #[arg(long)]
    lmc: u8,
    /// Width (in paths) of the link-load histogram's bins; the paper's is 20.
    #[arg(long, default_value_t = 20)]
    bin: u64,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Layers {
    layers: usize,
    switch_pairs: u64,
    undelivered_pairs: u64,
    /// Per layer: hops -> pairs.
    path_lengths: Vec<BTreeMap<usize, u64>>,
    /// Bin start -> links (directed channels).
    link_paths_histogram: BTreeMap<u64, u64>,
    /// Pairwise link-disjoint paths -> pairs.
    disjoint_paths: BTreeMap<usize, u64>,
    pairs_with_3_disjoint: f64,
}

pub fn run(args: Args) -> crate::CmdResult {
    let loaded = crate::load::load_tables(&args.dir, args.lmc)?;
    let r = layer_report(&loaded.fabric, &loaded.routing);
    let out = Layers {
        layers: r.layers,
        switch_pairs: r.pairs,
        undelivered_pairs: r.undelivered,
        link_paths_histogram: r.channel_histogram(args.bin),
        path_lengths: r.path_lengths.clone(),
        disjoint_paths: r.disjoint.clone(),
        pairs_with_3_disjoint: r.disjoint_at_least(3),
    };
    let code = if r.undelivered == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(code);
    }
    let f = &loaded.fabric;
    println!(
        "{} layers (LID offsets 0..{}) over {} switches",
        out.layers,
        out.layers - 1,
        f.switches().len()
    );
    println!("ordered switch pairs with hosts: {}", out.switch_pairs);
    let width = out
        .path_lengths
        .iter()
        .flat_map(|h| h.keys())
        .max()
        .copied()
        .unwrap_or(0);
    println!("path lengths (inter-switch hops: share of pairs):");
    for (l, hist) in out.path_lengths.iter().enumerate() {
        let total: u64 = hist.values().sum();
        let cells: Vec<String> = (0..=width)
            .map(|h| {
                format!(
                    "{h}:{:5.1}%",
                    100.0 * *hist.get(&h).unwrap_or(&0) as f64 / total.max(1) as f64
                )
            })
            .collect();
        let avg =
            hist.iter().map(|(h, n)| *h as f64 * *n as f64).sum::<f64>() / total.max(1) as f64;
        println!("  layer {l}: {}  average {avg:.2}", cells.join(" "));
    }
    let bins: Vec<String> = out
        .link_paths_histogram
        .iter()
        .map(|(lo, n)| format!("{lo}-{}:{n}", lo + args.bin - 1))
        .collect();
    println!(
        "paths per link (all layers; paths: links): {}",
        bins.join(" ")
    );
    let disjoint: Vec<String> = out
        .disjoint_paths
        .iter()
        .map(|(k, n)| {
            format!(
                "{k}:{:.1}%",
                100.0 * *n as f64 / out.switch_pairs.max(1) as f64
            )
        })
        .collect();
    println!(
        "pairwise link-disjoint paths per pair: {}",
        disjoint.join(" ")
    );
    println!(
        "pairs with >= 3 disjoint paths: {:.1}%",
        100.0 * out.pairs_with_3_disjoint
    );
    if r.undelivered > 0 {
        println!(
            "FAIL: {} switch pairs have a layer whose path does not arrive",
            r.undelivered
        );
    }
    Ok(code)
}

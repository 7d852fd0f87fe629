//! `osmroute compare DIR...`: several routings side by side, one column per
//! directory (one per OpenSM engine, or per offline engine on one fabric),
//! measured with the same bisection patterns. `osmroute compare --matrix`:
//! which engine for which fabric (`matrix`).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cmd_check::{summarize, Measure};
use crate::summary::Summary;

#[derive(clap::Args)]
pub struct Args {
    /// Dump directories, as `osmroute check` reads them.
    #[arg(required_unless_present = "matrix")]
    dirs: Vec<PathBuf>,
    #[command(flatten)]
    measure: Measure,
    /// Instead: route small instances of every generated family (and each
    /// --matrix-fabric) with every engine of ours and print which engine
    /// fits which fabric, and the one to use.
    #[arg(long, conflicts_with = "dirs")]
    matrix: bool,
    /// A fabric file (net, ibnetdiscover or ports report) to add to the
    /// matrix as a row; may be repeated.
    #[arg(long, requires = "matrix")]
    matrix_fabric: Vec<PathBuf>,
}

/// Marks figures that rest on assumptions (see the footnote).
fn assumed(s: &Summary) -> &'static str {
    if s.assumptions.is_empty() {
        ""
    } else {
        "*"
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

/// The row shown only with `--dlid-choice`.
const CHOSEN_EBB_ROW: &str = "EBB (path-selection DLIDs)";

/// A table row: a metric's name and how to get its value for one routing.
type Row = (&'static str, fn(&Summary) -> String);

fn rows() -> Vec<Row> {
    vec![
        ("engine (OpenSM log)", |s| opt(s.engine.clone())),
        ("routing time [s]", |s| {
            opt(s.routing_seconds.map(|t| format!("{t:.3}")))
        }),
        ("switches / CAs", |s| format!("{} / {}", s.switches, s.cas)),
        ("routes", |s| s.routes.to_string()),
        ("undelivered", |s| {
            s.failures.iter().map(|f| f.routes).sum::<u64>().to_string()
        }),
        ("max hops", |s| s.max_hops.to_string()),
        ("avg hops", |s| format!("{:.3}", s.avg_hops)),
        ("edge forwarding index", |s| {
            s.edge_forwarding_index.to_string()
        }),
        ("avg channel load", |s| format!("{:.1}", s.avg_channel_load)),
        ("EBB", |s| opt(s.ebb.map(|e| format!("{e:.4}")))),
        (CHOSEN_EBB_ROW, |s| {
            opt(s.ebb_chosen_dlids.map(|e| format!("{e:.4}")))
        }),
        ("group shift, base LIDs", |s| {
            opt(s.group_shift.as_ref().map(|g| format!("{:.4}", g.minimal)))
        }),
        ("group shift, all LIDs", |s| {
            opt(s.group_shift.as_ref().map(|g| format!("{:.4}", g.spread)))
        }),
        ("VLs needed (OpenSM log)", |s| opt(s.vls_needed_by_log)),
        ("SLs used", |s| s.sls_used.len().to_string() + assumed(s)),
        ("VLs used", |s| s.vls_used.len().to_string() + assumed(s)),
        ("credit loops", |s| {
            (if s.credit_loop.is_some() {
                "FOUND"
            } else {
                "none"
            })
            .to_string()
                + assumed(s)
        }),
    ]
}

pub fn run(args: Args) -> crate::CmdResult {
    if args.matrix {
        return crate::cmd_matrix::run(&args.matrix_fabric, &args.measure);
    }
    let summaries = args
        .dirs
        .iter()
        .map(|d| summarize(d, &args.measure))
        .collect::<Result<Vec<_>, _>>()?;
    let fabrics: std::collections::BTreeSet<(usize, usize)> =
        summaries.iter().map(|s| (s.switches, s.cas)).collect();
    if fabrics.len() > 1 {
        eprintln!("warning: the directories hold different fabrics (switches, CAs): {fabrics:?}");
    }
    if args.measure.json {
        println!("{}", serde_json::to_string_pretty(&summaries)?);
        return Ok(ExitCode::SUCCESS);
    }
    let headers: Vec<String> = args
        .dirs
        .iter()
        .map(|d| {
            d.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| d.display().to_string())
        })
        .collect();
    let per_source = args.measure.dlid_choice;
    let table: Vec<(&str, Vec<String>)> = rows()
        .into_iter()
        .filter(|(name, _)| per_source || *name != CHOSEN_EBB_ROW)
        .map(|(name, f)| (name, summaries.iter().map(f).collect()))
        .collect();
    let first = table.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            table
                .iter()
                .map(|(_, v)| v[i].len())
                .chain([headers[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |name: &str, cells: &[String]| {
        let mut out = format!("{name:<first$}");
        for (cell, w) in cells.iter().zip(&widths) {
            out += &format!("  {cell:>w$}");
        }
        out
    };
    println!("{}", line("", &headers));
    for (name, cells) in &table {
        println!("{}", line(name, cells));
    }
    for (header, s) in headers.iter().zip(&summaries) {
        if !s.assumptions.is_empty() {
            println!("* {header}: {}", s.assumptions.join("; "));
        }
    }
    if let Some(seed) = summaries.first().map(|s| s.ebb_seed) {
        println!(
            "(EBB over {} random bisections, seed {seed}, the same for every column)",
            args.measure.patterns
        );
    }
    Ok(ExitCode::SUCCESS)
}

//! `osmroute doctor`: reads OpenSM's configuration (and optionally the
//! fabric or the dumps of a pass) and says, for each problem that would
//! stop osmroute from routing or let the fabric deadlock, what is wrong
//! and the line to change.
//!
//! Exit codes: 0 nothing found; 1 at least one error (osmroute will not
//! route, or the tables may have credit loops); 3 warnings only; 2 the
//! doctor could not read what it was given.

mod chain;
mod findings;
mod opensm_conf;
mod plugin_lib;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use osmroute_core::config::{Settings, CONFIG_ENV, DEFAULT_CONFIG_PATH};
use osmroute_core::engines::{self, matrix};
use osmroute_core::fabric::{VlBudget, MAX_UNICAST_LID};
use osmroute_core::topology::gft;
use osmroute_core::{Fabric, Routing};

use chain::{Context, Kind};
use findings::{Findings, Severity::*};
use opensm_conf::{OpensmConf, DEFAULT_LMC};

#[derive(clap::Args)]
pub struct Args {
    /// OpenSM's configuration file.
    #[arg(long, default_value = "/etc/opensm/opensm.conf")]
    opensm_conf: PathBuf,
    /// osmroute.conf to check (default: $OSMROUTE_CONFIG, else
    /// /etc/opensm/osmroute.conf, as the plugin reads it).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The fabric OpenSM routes (ibsim net file, `ibnetdiscover` output
    /// plain or `-p`, `ibdiagnet2.ibnetdiscover` or `ibdiagnet2.lst`;
    /// recognised by its lines): the chain's engines are tried on it
    /// offline, and every engine of ours to recommend the one that fits.
    #[arg(long, conflicts_with = "dumps")]
    fabric: Option<PathBuf>,
    /// A dump directory of a pass (OpenSM's `-D 0x43` files): its fabric is
    /// used as with --fabric, and its tables are checked for credit loops.
    #[arg(long)]
    dumps: Option<PathBuf>,
    /// The plugin file to check instead of the one OpenSM's
    /// dlopen("libosmroute.so") would find.
    #[arg(long)]
    plugin: Option<PathBuf>,
    /// The OpenSM executable whose version the plugin must match
    /// (default: `opensm` on PATH or in /usr/sbin).
    #[arg(long)]
    opensm: Option<PathBuf>,
}

pub fn run(args: Args) -> crate::CmdResult {
    let text = std::fs::read_to_string(&args.opensm_conf).map_err(|e| {
        format!(
            "cannot read {}: {e}; name OpenSM's configuration with --opensm-conf (`opensm -c FILE` writes one with every default)",
            args.opensm_conf.display()
        )
    })?;
    let conf = OpensmConf::parse(&text, &args.opensm_conf.display().to_string());
    let mut found = Findings::default();
    check_plugin_named(&conf, &mut found);
    let chain = conf.routing_engines();
    let ours: Vec<&'static engines::EngineInfo> =
        chain.iter().filter_map(|n| engines::find(n).ok()).collect();
    check_chain_names(&conf, &chain, &ours, &mut found);
    let lmc = conf.number("lmc", DEFAULT_LMC, 7).unwrap_or_else(|e| {
        found.add(Error, e, "lmc 0");
        DEFAULT_LMC
    });
    check_qos(&conf, &ours, &mut found);
    let settings = osmroute_settings(args.config.as_deref());
    check_osmroute_conf(&settings, &ours, &mut found);
    check_lmc(&conf, &chain, lmc, &settings, &mut found);
    let fabric = match (&args.fabric, &args.dumps) {
        (Some(net), _) => Some(load_fabric(net, lmc, &conf)?),
        (None, Some(dir)) => {
            let loaded = crate::load::load(dir, lmc)?;
            check_tables(dir, &loaded, &mut found);
            Some(loaded.fabric)
        }
        (None, None) => None,
    };
    if let (Some(f), Some(net)) = (&fabric, &args.fabric) {
        check_lid_space(f, net, lmc, &conf, &mut found);
    }
    let tree = fabric.as_ref().map(|f| (f, gft::recognize(f)));
    let ctx = Context {
        lmc,
        root_guid_file: conf.get("root_guid_file").is_some(),
        fat_tree: tree.as_ref().map(|(f, t)| {
            t.as_ref()
                .is_ok_and(|t| t.ftree_objection(f).is_none() && t.is_complete(f))
        }),
    };
    if let Some(f) = &fabric {
        recommend_for_dragonfly_plus(f, &conf, &chain, &mut found);
        try_our_engines(f, &conf, &chain, &settings, &mut found);
    }
    if let Some((f, Ok(t))) = &tree {
        check_ftree_cases(f, t, &conf, &chain, &settings, &mut found);
    }
    check_chain_end(&conf, &chain, &ctx, &mut found);
    check_library(args.plugin.as_deref(), args.opensm.as_deref(), &mut found);
    found.print();
    Ok(ExitCode::from(found.exit_code()))
}

/// A fat tree ftree refuses (Aggregation Nodes, hosts on spines, empty
/// leaves, uneven parents): OpenSM then falls through to minhop, whose
/// minimal paths between CAs above the leaves turn down, then up, and can
/// close credit loops. mlid routes such trees, pssp is the deadlock-free
/// fallback: both checked offline on the fabric before they are named.
fn check_ftree_cases(
    fabric: &Fabric,
    tree: &gft::GenFatTree,
    conf: &OpensmConf,
    chain: &[String],
    settings: &Settings,
    found: &mut Findings,
) {
    let Some(why) = tree.ftree_objection(fabric) else {
        return;
    };
    let at = conf.at("routing_engine");
    let routes = |name: &str| {
        engines::find(name)
            .is_ok_and(|info| osmroute_core::pipeline::route(info, settings, fabric).is_ok())
    };
    let complete = ["mlid", "pssp"].iter().all(|n| routes(n));
    let fix = if complete {
        "routing_engine mlid,pssp   (both route this fabric, checked offline)".to_string()
    } else {
        format!("routing_engine {},nue", chain.join(","))
    };
    let has_ftree = chain.iter().any(|e| e == "ftree");
    let has_mlid = chain.iter().any(|e| e == "mlid");
    if has_ftree || !has_mlid {
        found.add(
            if has_ftree { Error } else { Warning },
            format!(
                "{at}: this fabric is a fat tree that OpenSM's ftree refuses ({why}){}",
                if has_ftree {
                    "; OpenSM then goes on down routing_engine, in the end to minhop, whose minimal paths here are \
                     not all up*/down* (credit loops)"
                } else {
                    "; mlid routes such trees on one VL (two for down-then-up paths)"
                }
            ),
            &fix,
        );
    }
}

fn check_plugin_named(conf: &OpensmConf, found: &mut Findings) {
    let plugins = conf.plugins();
    if !plugins.iter().any(|p| p == "osmroute") {
        let line = if plugins.is_empty() {
            "event_plugin_name osmroute".to_string()
        } else {
            format!("event_plugin_name {} osmroute", plugins.join(" "))
        };
        found.add(
            Error,
            format!("{}: event_plugin_name does not name osmroute: OpenSM never loads the plugin, so none of its engines exist", conf.at("event_plugin_name")),
            &line,
        );
    }
}

fn check_chain_names(
    conf: &OpensmConf,
    chain: &[String],
    ours: &[&engines::EngineInfo],
    found: &mut Findings,
) {
    let at = conf.at("routing_engine");
    if chain.is_empty() {
        found.add(Error, format!("{at}: routing_engine is not set: OpenSM routes with minhop, which has credit loops on most fabrics that are not trees"), "routing_engine dla,pssp");
        return;
    }
    for name in chain.iter().filter(|n| chain::kind(n) == Kind::Unknown) {
        found.add(Error, format!("{at}: routing_engine names '{name}', which neither OpenSM nor osmroute knows; OpenSM skips it"), "one of osmroute's engines (dla, pssp, layered, mlid, sfmin, hxdor) or OpenSM's (nue, dfsssp, lash, updn, dnup, ftree, torus-2QoS, dor, sssp, minhop)");
    }
    if ours.is_empty() {
        let ours_list: Vec<&str> = engines::ENGINES.iter().map(|e| e.name).collect();
        found.add(Error, format!("{at}: routing_engine {} names none of osmroute's engines ({}): the plugin loads but routes nothing", chain.join(","), ours_list.join(", ")), &format!("routing_engine dla,{}", chain.join(",")));
    }
}

fn check_qos(conf: &OpensmConf, ours: &[&engines::EngineInfo], found: &mut Findings) {
    if conf.qos() {
        return;
    }
    if let Some(e) = ours.iter().find(|e| e.needs_qos) {
        found.add(
            Error,
            format!("{}: qos is off, and {} needs more than one VL: OpenSM programs SL2VL tables only with QoS on, so {} declines (its routing would have credit loops)", conf.at("qos"), e.name, e.name),
            "qos TRUE",
        );
    }
}

/// osmroute.conf as the plugin would read it.
fn osmroute_settings(explicit: Option<&Path>) -> Settings {
    let (path, named) = match explicit {
        Some(p) => (p.to_path_buf(), true),
        None => Settings::location(),
    };
    Settings::load(&path, named, &engines::config_sections())
}

fn check_osmroute_conf(settings: &Settings, ours: &[&engines::EngineInfo], found: &mut Findings) {
    let mut seen = std::collections::HashSet::new();
    let every = engines::ENGINES.iter().copied();
    // Problems of the engines in the chain first: those make them decline.
    for info in ours.iter().copied().chain(every) {
        if let Some(e) = osmroute_core::pipeline::config_problem(info, settings) {
            let text = e.to_string();
            if seen.insert(text.clone()) {
                let severity = if ours.iter().any(|o| o.name == info.name) {
                    Error
                } else {
                    Warning
                };
                found.add(severity, format!("osmroute configuration: {text}"), "the line as `osmroute route --help` and docs/configuration.md describe it, or remove it");
            }
        }
    }
    if settings.source().is_empty() && std::env::var_os(CONFIG_ENV).is_none() {
        found.note(format!(
            "no {DEFAULT_CONFIG_PATH}: every osmroute option at its default"
        ));
    }
}

fn check_lmc(
    conf: &OpensmConf,
    chain: &[String],
    lmc: u8,
    settings: &Settings,
    found: &mut Findings,
) {
    let at = conf.at("lmc");
    if lmc > 0 {
        if let Some(i) = chain.iter().position(|e| e == "ftree") {
            let mut fixed = chain.to_vec();
            fixed[i] = "updn".into();
            found.add(
                Error,
                format!("{}: ftree is in routing_engine but refuses lmc {lmc} > 0: where it should route, OpenSM goes on to the next engine (in the end minhop)", conf.at("routing_engine")),
                &format!("routing_engine {}", fixed.join(",")),
            );
        }
    }
    let first_ours = chain
        .iter()
        .find(|n| engines::find(n).is_ok())
        .map(String::as_str);
    if lmc == 0 && first_ours == Some("layered") {
        found.add(Warning, format!("{at}: lmc 0 gives layered one layer (minimal paths only): its multipath needs 2^lmc LIDs per port"), "lmc 2");
    }
    let raise = engines::mlid::MlidOptions::read(&settings.section(engines::mlid::NAME))
        .is_ok_and(|o| o.raise_lmc);
    if lmc == 0 && first_ours == Some("mlid") && !raise {
        found.add(Warning, format!("{at}: lmc 0 gives mlid one path per host: the MLID scheme needs lmc log2((m/2)^(n-1)), e.g. 4 on an 8-port 3-tree"), "lmc 4   (or mlid.raise_lmc TRUE in osmroute.conf)");
    }
}

/// Whether OpenSM can number every port at `lmc`. Its LID manager gives
/// each CA port 2^lmc LIDs starting at a multiple of 2^lmc, numbering ports
/// as it finds them, so a switch's single LID before a CA block can cost
/// 2^lmc LIDs: near the 49,151 unicast LIDs it runs out (`ERR 0307`) and
/// hosts stay without LIDs, where the switches numbered first would fit.
fn check_lid_space(fabric: &Fabric, net: &Path, lmc: u8, conf: &OpensmConf, found: &mut Findings) {
    if lmc == 0 {
        return;
    }
    let block = 1u32 << lmc;
    let switches = fabric.switches().len() as u32;
    let ca_ports = fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
        .count() as u32;
    let limit = u32::from(MAX_UNICAST_LID);
    let worst = (switches + ca_ports) * block;
    let packed = switches.div_ceil(block) * block + ca_ports * block;
    // Where even packed LIDs do not fit, reading the fabric at this lmc
    // already failed, naming the LIDs needed.
    if worst > limit && packed <= limit {
        found.add(
            Warning,
            format!("{}: OpenSM aligns each CA port's {block} LIDs after whatever switch LID came before, so {switches} switches and {ca_ports} CA ports may need up to {worst} LIDs, more than the {limit} unicast LIDs (ERR 0307, hosts without LIDs); with the switches numbered first they need {packed}", conf.at("lmc")),
            &format!(
                "osmroute lids --fabric {} --lmc {lmc} -o /var/cache/opensm/guid2lid   (before OpenSM starts; OpenSM keeps that numbering)",
                net.display()
            ),
        );
    }
}

fn load_fabric(net: &Path, lmc: u8, conf: &OpensmConf) -> Result<Fabric, String> {
    let data_vls = conf.data_vls()?;
    let budget = VlBudget {
        data_vls,
        sl2vl_programmed: conf.qos(),
        limited_by: format!(
            "{} allows {data_vls} (the ports' own VL capability may allow fewer)",
            conf.at("max_op_vls")
        ),
    };
    crate::load::fabric(net, lmc, None, budget)
}

/// A Dragonfly+ (the Dragonfly InfiniBand machines are built as) is dla's:
/// minimal paths on one VL where it is intact, where the general engines
/// need several. Says so, and recommends dla where the chain does not
/// start with it.
fn recommend_for_dragonfly_plus(
    fabric: &Fabric,
    conf: &OpensmConf,
    chain: &[String],
    found: &mut Findings,
) {
    let Ok(plus) = osmroute_core::topology::dragonfly_plus::recognise(fabric.graph()) else {
        return;
    };
    let shape = format!(
        "this fabric is a Dragonfly+ of {} groups ({} leaves and {} spines)",
        plus.groups(),
        plus.is_leaf.iter().filter(|&&l| l).count(),
        plus.is_leaf.iter().filter(|&&l| !l).count()
    );
    if chain.first().map(String::as_str) == Some(engines::dla::NAME) {
        found.note(format!("{shape}: dla routes it"));
        return;
    }
    let rest: Vec<&str> = chain
        .iter()
        .map(String::as_str)
        .filter(|&n| n != engines::dla::NAME)
        .collect();
    found.add(
        Warning,
        format!(
            "{}: {shape}, which dla routes with minimal paths on one VL where it is intact (the shortest detours \
             on two or three where cables are gone); {} routes it first",
            conf.at("routing_engine"),
            chain.first().map_or("minhop", String::as_str)
        ),
        &format!("routing_engine dla,{}", rest.join(",")),
    );
}

/// Routes the fabric offline with the chain's osmroute engines, in order,
/// as OpenSM would. A decline is a warning where a later engine of ours
/// routes (the chain-end check judges OpenSM's engines); the fix names the
/// first other engine of ours that does route this fabric, looked for once.
fn try_our_engines(
    fabric: &Fabric,
    conf: &OpensmConf,
    chain: &[String],
    settings: &Settings,
    found: &mut Findings,
) {
    let routes =
        |info: &engines::EngineInfo| osmroute_core::pipeline::route(info, settings, fabric);
    // The engine matrix's rule decides what to recommend: the first engine
    // (specialists before general ones) that routes every pair without a
    // credit loop within 5 % of the best EBB of ours. Tried once, lazily.
    let mut trials: Option<Vec<matrix::Trial>> = None;
    let mut trials = || {
        trials
            .get_or_insert_with(|| matrix::try_engines(fabric, settings, DOCTOR_PATTERNS, 1))
            .clone()
    };
    let mut declines = Vec::new();
    for (i, name) in chain.iter().enumerate() {
        let Ok(info) = engines::find(name) else {
            break; // an engine of OpenSM's routes next
        };
        if info.needs_qos && !conf.qos() {
            continue; // the qos finding says why it declines
        }
        match routes(info) {
            Ok(outcome) => {
                found.note(format!(
                    "{name} routes this fabric with {} VL(s)",
                    outcome.routing.vls_needed()
                ));
                if !conf.qos() {
                    check_delivery_without_qos(fabric, conf, name, &outcome.routing, found);
                } else {
                    check_fit(conf, chain, name, &trials(), found);
                }
                break;
            }
            Err(e) => declines.push((i, e)),
        }
    }
    if declines.is_empty() {
        return;
    }
    let better = matrix::recommend(&trials());
    for (i, e) in &declines {
        let next = chain
            .get(i + 1)
            .map_or("minhop (OpenSM's last resort)".to_string(), |n| n.clone());
        let fix = match better {
            Some(better) => format!(
                "routing_engine {better},{}   ({better} routes this fabric best of ours: see `osmroute compare --matrix`)",
                chain
                    .iter()
                    .filter(|n| n.as_str() != better)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            None => "what the reason names".to_string(),
        };
        found.add(
            Warning,
            format!(
                "{}: {e}; OpenSM goes on to {next}",
                conf.at("routing_engine")
            ),
            &fix,
        );
    }
}

/// Random bisections doctor measures each engine's EBB over (enough to
/// tell engines 5 % apart on the fabrics it is run on; `osmroute compare
/// --matrix` takes more).
const DOCTOR_PATTERNS: usize = 100;

/// The chain's first engine that routes: a warning where it does not fit
/// by the engine matrix's rule and another engine of ours does.
fn check_fit(
    conf: &OpensmConf,
    chain: &[String],
    name: &str,
    trials: &[matrix::Trial],
    found: &mut Findings,
) {
    let best = matrix::best_ebb(trials);
    let Some(this) = trials.iter().find(|t| t.engine == name) else {
        return;
    };
    let (Some(better), Ok(q)) = (matrix::recommend(trials), &this.result) else {
        return;
    };
    if matrix::fits(this, best) || better == name {
        return;
    }
    let rest: Vec<&str> = chain
        .iter()
        .map(String::as_str)
        .filter(|n| *n != better)
        .collect();
    found.add(
        Warning,
        format!(
            "{}: {name} routes this fabric, but not well: EBB {:.3}{}{}, where {better} reaches {:.3} (best of ours {:.3})",
            conf.at("routing_engine"),
            q.ebb,
            if q.delivered { "" } else { ", with routes lost" },
            if q.loop_free { "" } else { ", with a credit loop" },
            trials
                .iter()
                .find(|t| t.engine == better)
                .and_then(|t| t.result.as_ref().ok())
                .map_or(0.0, |q| q.ebb),
            best.unwrap_or(0.0)
        ),
        &format!("routing_engine {better},{}   ({better} is made for this fabric)", rest.join(",")),
    );
}

/// With qos off an engine that can route on one VL (mlid) leaves the
/// routes that need a second one unrouted rather than declining; say so.
/// (Only then: tracing every route costs seconds on a large fabric.)
fn check_delivery_without_qos(
    fabric: &Fabric,
    conf: &OpensmConf,
    name: &str,
    routing: &Routing,
    found: &mut Findings,
) {
    let report = osmroute_core::analysis::report::analyze(fabric, routing);
    let undelivered: u64 = report.failures.values().map(|(n, _)| n).sum();
    if let Some((kind, (_, example))) = report.failures.iter().next() {
        found.add(
            Error,
            format!(
                "{}: qos is off, and {name} leaves {undelivered} of {} host routes undelivered ({kind}, e.g. {example}): \
                 they need a second VL, which OpenSM programs only with QoS on",
                conf.at("qos"),
                report.routes
            ),
            "qos TRUE",
        );
    }
}

fn check_chain_end(conf: &OpensmConf, chain: &[String], ctx: &Context, found: &mut Findings) {
    if chain.is_empty() || chain::safe_end(chain, ctx).is_some() {
        return;
    }
    let topology = match ctx.fat_tree {
        Some(true) => return, // minhop's minimal paths on a fat tree are up*/down*
        Some(false) => "this fabric is not a fat tree, so",
        None => "on fabrics that are not fat trees",
    };
    let severity = if ctx.fat_tree == Some(false) {
        Error
    } else {
        Warning
    };
    found.add(
        severity,
        format!(
            "{}: if every engine of routing_engine {} declines, OpenSM routes with minhop; {topology} its tables can have credit loops (a deadlocked fabric)",
            conf.at("routing_engine"),
            chain.join(",")
        ),
        &format!("routing_engine {},nue   (nue routes any fabric without credit loops)", chain.join(",")),
    );
}

fn check_tables(dir: &Path, loaded: &crate::load::Loaded, found: &mut Findings) {
    let report = osmroute_core::analysis::report::analyze(&loaded.fabric, &loaded.routing);
    if let Some(cycle) = &report.credit_loop {
        found.add(Error, format!("{}: the tables of this pass have a credit loop ({} channels): the fabric can deadlock", dir.display(), cycle.len()), "an engine chain that ends deadlock-free (see the other findings), then re-sweep (kill -HUP opensm)");
    }
    if !report.delivered() {
        found.add(
            Error,
            format!(
                "{}: {} route(s) of this pass do not arrive",
                dir.display(),
                report.failures.len()
            ),
            "check the fabric for dead links (ibdiagnet) and re-sweep",
        );
    }
}

fn check_library(plugin: Option<&Path>, opensm: Option<&Path>, found: &mut Findings) {
    let lib = match plugin {
        Some(p) => p.to_path_buf(),
        None => match plugin_lib::resolve(
            std::env::var("LD_LIBRARY_PATH").ok().as_deref(),
            &plugin_lib::ldconfig_cache(),
        ) {
            Some(p) => p,
            None => {
                found.add(Error, format!("OpenSM's dlopen(\"{}\") finds no such library: not in the loader's cache nor LD_LIBRARY_PATH", plugin_lib::LIBRARY), "install the osmroute package (or copy libosmroute.so into /usr/lib/x86_64-linux-gnu and run ldconfig)");
                return;
            }
        },
    };
    let Ok(bytes) = std::fs::read(&lib) else {
        found.add(
            Error,
            format!("cannot read {}", lib.display()),
            "check its permissions",
        );
        return;
    };
    let built_for = plugin_lib::opensm_version_in(&bytes);
    let exe = opensm
        .map(Path::to_path_buf)
        .or_else(plugin_lib::opensm_executable);
    let running = exe
        .as_ref()
        .and_then(|e| std::fs::read(e).ok())
        .and_then(|b| plugin_lib::opensm_version_in(&b));
    match (built_for, running) {
        (Some(b), Some(r)) if b != r => found.add(
            Error,
            format!("{} was built for {b}, but {} is {r}: OpenSM refuses the plugin (\"version mismatch\")", lib.display(), exe.unwrap().display()),
            "rebuild osmroute against this OpenSM's headers (libopensm-dev of the same version)",
        ),
        (Some(b), Some(_)) => found.note(format!("{} is built for {b}, as the installed OpenSM", lib.display())),
        (None, _) => found.add(Error, format!("{} carries no OpenSM version string: not an osmroute plugin", lib.display()), "install the osmroute package"),
        (Some(b), None) => found.add(Warning, format!("no OpenSM executable found to compare with {}'s {b}", lib.display()), "install opensm, or name it with --opensm"),
    }
}

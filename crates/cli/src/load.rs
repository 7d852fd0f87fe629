//! Reading a routing back from a directory of dumps: OpenSM's own
//! (`-D 0x43`) or what `osmroute route` writes.

use std::path::{Path, PathBuf};

use osmroute_core::dumps::path_select::{self, PATH_SELECT_FILE};
use osmroute_core::dumps::switch_sl::{self, SWITCH_SL_FILE};
use osmroute_core::dumps::{
    ibdmchk, lfts, osm_sl2vl, subnet_lst, LFTS_FILE, OSM_SL2VL_FILE, PATH_SL_FILE, SL2VL_FILE,
    SUBNET_FILE,
};
use osmroute_core::fabric::VlBudget;
use osmroute_core::io::detect::{self, Form};
use osmroute_core::io::guid2lid::Guid2Lid;
use osmroute_core::routing::DlidChoice;
use osmroute_core::{Fabric, PathSl, Routing};

pub struct Loaded {
    pub fabric: Fabric,
    pub routing: Routing,
    /// Which files were read, for the report.
    pub sources: Vec<String>,
}

fn read(dir: &Path, name: &str) -> Result<Option<String>, String> {
    let path = dir.join(name);
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Where a fabric comes from, for the commands that take one.
#[derive(clap::Args)]
pub struct FabricArgs {
    /// ibsim net file, `ibnetdiscover` output (also ibdiagnet2's
    /// `ibdiagnet2.ibnetdiscover`), an `ibnetdiscover -p` ports report, or
    /// a subnet list (`ibdiagnet2.lst`, `opensm-subnet.lst`); the form is
    /// recognised (or named with --format). All but the net file carry the
    /// LIDs the SM assigned, which are used unless --lmc asks for another
    /// LMC.
    #[arg(long)]
    pub fabric: PathBuf,
    /// The fabric file's form: net, ibnetdiscover, ports or lst (default:
    /// found from the file's lines).
    #[arg(long, value_parser = parse_form)]
    pub format: Option<Form>,
    /// LMC for CA ports, with sequential LIDs (with --guid2lid the file's).
    /// With ibnetdiscover input the file's LIDs are kept when they already
    /// fit this LMC, else every LID is re-numbered (a line says so).
    #[arg(long)]
    pub lmc: Option<u8>,
    /// Take the LIDs from OpenSM's guid2lid cache file (in $OSM_CACHE_DIR,
    /// default /var/cache/opensm) so the offline run reproduces a live one.
    #[arg(long)]
    pub guid2lid: Option<PathBuf>,
    /// Data VLs every inter-switch port offers, as OpenSM's max_op_vls and
    /// the ports' VL capability would leave them (1, 2, 4, 8 or 15).
    #[arg(long, default_value_t = 8, value_parser = parse_vls)]
    pub vls: u8,
    /// Whether SL2VL tables get programmed (OpenSM's `qos`); with `false`
    /// every engine that needs more than one VL declines, as in OpenSM.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub qos: bool,
}

impl FabricArgs {
    pub fn load(&self) -> Result<Fabric, String> {
        let budget = VlBudget {
            data_vls: self.vls,
            sl2vl_programmed: self.qos,
            limited_by: format!("--vls {} sets it; raise --vls (at most 15)", self.vls),
        };
        let source = Source {
            path: &self.fabric,
            format: self.format,
            lmc: self.lmc,
            guid2lid: self.guid2lid.as_deref(),
        };
        source.load(budget)
    }
}

pub(crate) fn parse_form(text: &str) -> Result<Form, String> {
    text.parse()
}

/// A VL count a port can have.
fn parse_vls(text: &str) -> Result<u8, String> {
    match text.parse::<u8>() {
        Ok(n @ (1 | 2 | 4 | 8 | 15)) => Ok(n),
        _ => Err(format!(
            "'{text}' VLs: InfiniBand ports offer 1, 2, 4, 8 or 15 data VLs"
        )),
    }
}

/// A fabric file and how to give it LIDs.
pub struct Source<'a> {
    pub path: &'a Path,
    /// None: recognised from the file.
    pub format: Option<Form>,
    /// None: the file's LIDs (ibnetdiscover) or LMC 0 (net file).
    pub lmc: Option<u8>,
    pub guid2lid: Option<&'a Path>,
}

impl Source<'_> {
    /// Reads the fabric: a net file gets sequential LIDs (`lmc` for CA
    /// ports) or OpenSM's from its guid2lid cache; ibnetdiscover output
    /// keeps the LIDs it discovered unless `lmc` asks for an LMC they do
    /// not fit, in which case all are re-numbered and a line says so. Lines
    /// skipped around the topology are warned about on stderr.
    pub fn load(&self, budget: VlBudget) -> Result<Fabric, String> {
        let path = self.path;
        let read = read_text(path, self.format)?;
        let mut builder = read.builder;
        match (self.guid2lid, self.lmc) {
            (Some(g), _) => {
                let text = std::fs::read_to_string(g)
                    .map_err(|e| format!("cannot read {}: {e}", g.display()))?;
                let lids = Guid2Lid::read(&text).map_err(|e| format!("{}: {e}", g.display()))?;
                // The file's LID ranges carry the LMC; `lmc` does not apply.
                lids.apply(&mut builder)
                    .map_err(|e| format!("{}: {e}", g.display()))?;
            }
            (None, lmc) if read.form.has_lids() => {
                if let Some(lmc) = lmc.filter(|&l| !lids_fit(&builder, l)) {
                    eprintln!(
                        "note: {}: its LIDs are not those of LMC {lmc} (CA ports with LMC {lmc} and base LIDs multiples of {}, each range free): every LID re-numbered sequentially, as an SM with `lmc {lmc}` would assign them afresh",
                        path.display(),
                        1u32 << lmc
                    );
                    builder
                        .assign_lids_sequential(lmc)
                        .map_err(|e| e.to_string())?;
                } else if let Some(lmc) = lmc {
                    builder.set_lmc(lmc);
                }
            }
            (None, lmc) => {
                let lmc = lmc.unwrap_or(0);
                if builder.assign_lids_sequential(lmc).is_err() {
                    // In file order the switches' single LIDs leave gaps
                    // before the aligned CA blocks; packed they may fit.
                    builder
                        .assign_lids_switches_first(lmc)
                        .map_err(|e| e.to_string())?;
                    eprintln!(
                        "note: {}: numbered in file order at LMC {lmc} the LIDs pass the unicast limit; numbered with the switches first instead, as `osmroute lids` writes them for OpenSM's cache",
                        path.display()
                    );
                }
            }
        }
        builder.set_vl_budget(budget);
        builder
            .build()
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The fabric file at `path` read in `format` (or the form its lines
/// show), with the lines skipped around the topology warned about on
/// stderr.
pub(crate) fn read_text(path: &Path, format: Option<Form>) -> Result<detect::FabricText, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let read = detect::read(&text, format).map_err(|e| format!("{}: {e}", path.display()))?;
    for skipped in &read.skipped {
        eprintln!("warning: {}: {skipped}", path.display());
    }
    Ok(read)
}

/// Whether the LIDs in `builder` serve LMC `lmc` as they are: every CA
/// port has that LMC and a base LID that is a multiple of 2^lmc, and the
/// LIDs of its range are its own (no other port's LID falls inside).
fn lids_fit(builder: &osmroute_core::FabricBuilder, lmc: u8) -> bool {
    let step = 1u32 << lmc;
    let ports = builder.end_ports();
    let mut taken = std::collections::HashSet::new();
    for at in &ports {
        let node = builder.node(at.node);
        let Some(port) = node.port(at.port.raw()) else {
            return false;
        };
        let lid = u32::from(port.lid.raw());
        if lid == 0 {
            return false;
        }
        let span = if node.is_switch() { 1 } else { step };
        if !node.is_switch() && (lid % step != 0 || port.lmc != lmc) {
            return false;
        }
        if !(lid..lid + span).all(|l| taken.insert(l)) {
            return false;
        }
    }
    true
}

/// A fabric file with LIDs as [`Source::load`] gives them.
pub fn fabric(
    path: &Path,
    lmc: u8,
    guid2lid: Option<&Path>,
    budget: VlBudget,
) -> Result<Fabric, String> {
    Source {
        path,
        format: None,
        lmc: Some(lmc),
        guid2lid,
    }
    .load(budget)
}

/// The directory's path-selection file (`osmroute-path-select.txt`), if any.
pub fn dlid_choice(dir: &Path) -> Result<Option<DlidChoice>, String> {
    read(dir, PATH_SELECT_FILE)?
        .map(|t| path_select::read(&t).map_err(|e| e.to_string()))
        .transpose()
}

/// The fabric and forwarding tables of a dump directory, and nothing else:
/// what path analysis (`layers`, `churn`) needs. The SL and SL2VL files are
/// not read, so any of them may be missing or of another pass.
pub fn load_tables(dir: &Path, lmc: u8) -> Result<Loaded, String> {
    let need = |name: &str| -> Result<String, String> {
        read(dir, name)?.ok_or_else(|| {
            format!("{} has no {name}; run OpenSM with `-D 0x43` (log_flags 0x43) and dump_files_dir, or `osmroute route`", dir.display())
        })
    };
    let subnet = need(SUBNET_FILE)?;
    let mut builder = subnet_lst::read(&subnet, lmc).map_err(|e| e.to_string())?;
    builder.set_lmc(lmc);
    let fabric = builder.build().map_err(|e| format!("{SUBNET_FILE}: {e}"))?;
    let tables = lfts::read(&need(LFTS_FILE)?).map_err(|e| e.to_string())?;
    let lfts = lfts::to_lfts(&fabric, &tables).map_err(|e| e.to_string())?;
    let sources = vec![SUBNET_FILE.to_string(), LFTS_FILE.to_string()];
    let routing = Routing {
        engine: "dumps".into(),
        lfts,
        sl2vl: None,
        path_sl: PathSl::Uniform(0),
    };
    Ok(Loaded {
        fabric,
        routing,
        sources,
    })
}

/// `load_tables`, and the SL2VL tables and path SLs where the directory
/// has them (for the credit-loop check).
pub fn load(dir: &Path, lmc: u8) -> Result<Loaded, String> {
    let Loaded {
        fabric,
        routing,
        mut sources,
    } = load_tables(dir, lmc)?;
    let lfts = routing.lfts;
    // The plugin's file says what our engine asked for; without it (OpenSM's
    // own engines, or no plugin) OpenSM's dump says what OpenSM programmed.
    let sl2vl = if let Some(t) = read(dir, SL2VL_FILE)? {
        sources.push(SL2VL_FILE.to_string());
        Some(ibdmchk::read_sl2vl(&fabric, &t).map_err(|e| e.to_string())?)
    } else if let Some(t) = read(dir, OSM_SL2VL_FILE)? {
        sources.push(OSM_SL2VL_FILE.to_string());
        Some(osm_sl2vl::read(&fabric, &t).map_err(|e| e.to_string())?)
    } else {
        None
    };
    // The compact per-switch file says the same as the ibdmchk one when
    // both exist, and is far quicker to read.
    let path_sl = if let Some(t) = read(dir, SWITCH_SL_FILE)? {
        sources.push(SWITCH_SL_FILE.to_string());
        switch_sl::read(&fabric, &t).map_err(|e| e.to_string())?
    } else if let Some(t) = read(dir, PATH_SL_FILE)? {
        sources.push(PATH_SL_FILE.to_string());
        ibdmchk::read_path_sl(&fabric, &t).map_err(|e| e.to_string())?
    } else {
        PathSl::Uniform(0)
    };
    let routing = Routing {
        engine: "dumps".into(),
        lfts,
        sl2vl,
        path_sl,
    };
    Ok(Loaded {
        fabric,
        routing,
        sources,
    })
}

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
use osmroute_core::io::guid2lid::Guid2Lid;
use osmroute_core::io::{ibnetdiscover, ibnetdiscover_ports, netfile};
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
    /// ibsim net file, or `ibnetdiscover` output (recognised by its
    /// GUID-named nodes; its LIDs are used).
    #[arg(long)]
    pub fabric: PathBuf,
    /// LMC for CA ports, with sequential LIDs (with --guid2lid the file's).
    #[arg(long, default_value_t = 0)]
    pub lmc: u8,
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
        fabric(&self.fabric, self.lmc, self.guid2lid.as_deref(), budget)
    }
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

/// A fabric file: an ibsim net file with sequential LIDs (`lmc` for CA
/// ports) or with OpenSM's from its guid2lid cache, or `ibnetdiscover`
/// output with the LIDs it discovered.
pub fn fabric(
    path: &Path,
    lmc: u8,
    guid2lid: Option<&Path>,
    budget: VlBudget,
) -> Result<Fabric, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // ibnetdiscover names nodes by GUID ("S-0002c9...") and carries LIDs.
    let records = text.contains("\"S-") && text.contains(" lid ");
    // `ibnetdiscover -p`: a line per cable, LIDs included.
    let per_cable = !records && ibnetdiscover_ports::looks_like(&text);
    let discovered = records || per_cable;
    let mut builder = if records {
        ibnetdiscover::read(&text).map_err(|e| format!("{}: {e}", path.display()))?
    } else if per_cable {
        ibnetdiscover_ports::read(&text).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        netfile::read(&text).map_err(|e| format!("{}: {e}", path.display()))?
    };
    match guid2lid {
        Some(g) => {
            let text = std::fs::read_to_string(g)
                .map_err(|e| format!("cannot read {}: {e}", g.display()))?;
            let lids = Guid2Lid::read(&text).map_err(|e| format!("{}: {e}", g.display()))?;
            // The file's LID ranges carry the LMC; `lmc` does not apply.
            lids.apply(&mut builder)
                .map_err(|e| format!("{}: {e}", g.display()))?;
        }
        None if discovered => {} // LIDs as discovered
        None => builder
            .assign_lids_sequential(lmc)
            .map_err(|e| e.to_string())?,
    }
    builder.set_vl_budget(budget);
    builder
        .build()
        .map_err(|e| format!("{}: {e}", path.display()))
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

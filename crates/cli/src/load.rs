//! Reading a routing back from a directory of dumps: OpenSM's own
//! (`-D 0x43`) or what `osmroute route` writes.

use std::path::Path;

use osmroute_core::dumps::switch_sl::{self, SWITCH_SL_FILE};
use osmroute_core::dumps::{
    ibdmchk, lfts, osm_sl2vl, subnet_lst, LFTS_FILE, OSM_SL2VL_FILE, PATH_SL_FILE, SL2VL_FILE, SUBNET_FILE,
};
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

pub fn load(dir: &Path, lmc: u8) -> Result<Loaded, String> {
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
    let mut sources = vec![SUBNET_FILE.to_string(), LFTS_FILE.to_string()];
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
    let routing = Routing { engine: "dumps".into(), lfts, sl2vl, path_sl };
    Ok(Loaded { fabric, routing, sources })
}

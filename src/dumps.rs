//! The files that let ibdmchk check our routing independently: written
//! into OpenSM's dump directory whenever OpenSM's log flags include
//! ROUTING (0x40), next to OpenSM's own opensm-subnet.lst and opensm.fdbs.

use std::ffi::CStr;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use osmroute_core::dumps::path_select::{self, PATH_SELECT_FILE};
use osmroute_core::dumps::switch_sl::{self, SWITCH_SL_FILE};
use osmroute_core::engines::mlid;
use osmroute_core::dumps::{ibdmchk, PATH_SL_FILE, SL2VL_FILE};
use osmroute_core::PathSl;
use osmroute_core::{Config, Fabric, Routing};

use crate::ffi;

/// OpenSM's default when `dump_files_dir` is unset.
const OPENSM_DEFAULT_DUMP_DIR: &str = "/var/log";

/// Whether OpenSM writes its routing dumps (log flags include ROUTING).
///
/// # Safety
/// `osm` must be the live OpenSM instance.
pub unsafe fn enabled(osm: *mut ffi::osm_opensm_t) -> bool {
    ffi::osmroute_log_enabled(&(*osm).log, ffi::OSM_LOG_ROUTING as u8) != 0
}

/// # Safety
/// `osm` must be the live OpenSM instance.
pub unsafe fn write(osm: *mut ffi::osm_opensm_t, fabric: &Fabric, routing: &Routing, config: &Config) {
    write_all(&dump_dir(osm), fabric, routing, config);
}

/// OpenSM's `dump_files_dir`.
///
/// # Safety
/// `osm` must be the live OpenSM instance.
unsafe fn dump_dir(osm: *mut ffi::osm_opensm_t) -> PathBuf {
    let dir_ptr = (*osm).subn.opt.dump_files_dir;
    if dir_ptr.is_null() {
        PathBuf::from(OPENSM_DEFAULT_DUMP_DIR)
    } else {
        PathBuf::from(CStr::from_ptr(dir_ptr).to_string_lossy().into_owned())
    }
}

/// mlid's path selection (which DLID each source uses per destination)
/// into `dump_files_dir`.
///
/// # Safety
/// `osm` must be the live OpenSM instance.
pub unsafe fn write_path_select(osm: *mut ffi::osm_opensm_t, fabric: &Fabric) {
    match mlid::path_selection(fabric) {
        Ok(choices) => write_file(&dump_dir(osm).join(PATH_SELECT_FILE), |w| path_select::write(&choices, w)),
        Err(e) => log::error!("cannot compute the path selection: {e}"),
    }
}

fn write_all(dir: &Path, fabric: &Fabric, routing: &Routing, config: &Config) {
    if let Some(why) = ibdmchk::path_sl_too_big(fabric, config) {
        log::warn!("{why}");
    } else {
        write_file(&dir.join(PATH_SL_FILE), |w| ibdmchk::write_path_sl(fabric, routing, w));
    }
    if routing.sl2vl.is_some() {
        write_file(&dir.join(SL2VL_FILE), |w| ibdmchk::write_sl2vl(fabric, routing, w));
    }
    if matches!(routing.path_sl, PathSl::PerSourceSwitch(_)) {
        write_file(&dir.join(SWITCH_SL_FILE), |w| switch_sl::write(fabric, &routing.path_sl, w));
    }
}

/// Writes via a temporary file and a rename, so readers never see half.
fn write_file(path: &Path, fill: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>) {
    let tmp = path.with_extension("tmp");
    let result = File::create(&tmp).and_then(|f| {
        let mut w = BufWriter::new(f);
        fill(&mut w)?;
        w.flush()?;
        std::fs::rename(&tmp, path)
    });
    match result {
        Ok(()) => log::debug!("wrote {}", path.display()),
        Err(e) => log::error!("cannot write {}: {e}; check dump_files_dir and its permissions", path.display()),
    }
}

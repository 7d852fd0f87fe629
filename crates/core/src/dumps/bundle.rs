//! The files one routing pass leaves in a dump directory, written the same
//! way by the plugin (beside OpenSM's own dumps) and by `osmroute route`
//! (with OpenSM-format subnet and LFT files of its own): every file via a
//! temporary name and a rename, so readers never see half a file, and our
//! files of an earlier pass that this pass does not write removed, so a
//! directory never mixes passes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::path_select::{self, PATH_SELECT_FILE};
use super::switch_sl::{self, SWITCH_SL_FILE};
use super::{ibdmchk, lfts, subnet_lst, LFTS_FILE, PATH_SL_FILE, SL2VL_FILE, SUBNET_FILE};
use crate::config::{ConfigError, OptionSpec, Section};
use crate::engines::Outcome;
use crate::fabric::Fabric;
use crate::routing::PathSl;

const MAX_PATH_SL_LINES: OptionSpec = OptionSpec {
    key: "max_path_sl_lines",
    default: "20000000",
    help: "largest osmroute-path-sl.txt the plugin (and osmroute route) writes; one line per source CA and \\
           destination LID",
};

/// Options of the `dump` section.
pub const OPTIONS: &[OptionSpec] = &[MAX_PATH_SL_LINES];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpOptions {
    /// Upper bound on lines in `osmroute-path-sl.txt` (one per source CA and
    /// destination LID); above it the file is skipped with a warning, since
    /// a 16k-host fabric would need 270 million lines.
    pub max_path_sl_lines: u64,
}

impl DumpOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(&[OPTIONS])?;
        Ok(DumpOptions {
            max_path_sl_lines: s.number(&MAX_PATH_SL_LINES, 0, u64::MAX)?,
        })
    }
}

impl Default for DumpOptions {
    fn default() -> Self {
        DumpOptions {
            max_path_sl_lines: 20_000_000,
        }
    }
}

/// Every file the plugin may write into OpenSM's dump directory.
pub const OUR_FILES: &[&str] = &[PATH_SL_FILE, SL2VL_FILE, SWITCH_SL_FILE, PATH_SELECT_FILE];

/// What goes into a bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contents {
    /// Only what hosts need to use the routing at all (the path
    /// selection): OpenSM's ROUTING log flag is off.
    Essential,
    /// Also the files ibdmchk and `osmroute check` read beside OpenSM's
    /// own dumps: path SLs, SL2VL tables, per-switch SLs.
    ForChecking,
    /// All of that plus the subnet list and LFTs in OpenSM's formats, for a
    /// directory no OpenSM writes into (`osmroute route`).
    Offline,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DumpFile {
    Subnet,
    Lfts,
    PathSl,
    Sl2Vl,
    SwitchSl,
    PathSelect,
}

impl DumpFile {
    fn name(self) -> &'static str {
        match self {
            DumpFile::Subnet => SUBNET_FILE,
            DumpFile::Lfts => LFTS_FILE,
            DumpFile::PathSl => PATH_SL_FILE,
            DumpFile::Sl2Vl => SL2VL_FILE,
            DumpFile::SwitchSl => SWITCH_SL_FILE,
            DumpFile::PathSelect => PATH_SELECT_FILE,
        }
    }
}

/// The files of one pass, not yet written.
pub struct Bundle<'a> {
    fabric: &'a Fabric,
    outcome: &'a Outcome,
    files: Vec<DumpFile>,
    /// Files left out, and why (for the log or the terminal).
    pub skipped: Vec<String>,
}

impl<'a> Bundle<'a> {
    pub fn new(
        fabric: &'a Fabric,
        outcome: &'a Outcome,
        contents: Contents,
        options: &DumpOptions,
    ) -> Self {
        let mut files = Vec::new();
        let mut skipped = Vec::new();
        if contents == Contents::Offline {
            files.extend([DumpFile::Subnet, DumpFile::Lfts]);
        }
        if contents != Contents::Essential {
            let lines = ibdmchk::path_sl_lines(fabric);
            if lines > options.max_path_sl_lines {
                skipped.push(format!(
                    "not writing {PATH_SL_FILE}: it would have {lines} lines (more than dump.max_path_sl_lines = {}); \
                     raise dump.max_path_sl_lines in the osmroute configuration to get it",
                    options.max_path_sl_lines
                ));
            } else {
                files.push(DumpFile::PathSl);
            }
            if outcome.routing.sl2vl.is_some() {
                files.push(DumpFile::Sl2Vl);
            }
            if matches!(outcome.routing.path_sl, PathSl::PerSourceSwitch(_)) {
                files.push(DumpFile::SwitchSl);
            }
        }
        // A rule (layered's rank spread) is not listed pair by pair: on a
        // big Slim Fly that would be millions of lines every pass; mlid's
        // source ranks are written one line per host.
        if outcome
            .dlid_choice
            .as_ref()
            .is_some_and(|c| c.is_listed() || c.source_ranks().is_some())
        {
            files.push(DumpFile::PathSelect);
        }
        Bundle {
            fabric,
            outcome,
            files,
            skipped,
        }
    }

    /// The file names, in writing order.
    pub fn names(&self) -> Vec<&'static str> {
        self.files.iter().map(|f| f.name()).collect()
    }

    fn fill(&self, file: DumpFile, w: &mut impl Write) -> io::Result<()> {
        let (fabric, routing) = (self.fabric, &self.outcome.routing);
        match file {
            DumpFile::Subnet => w.write_all(subnet_lst::write(fabric).as_bytes()),
            DumpFile::Lfts => w.write_all(lfts::write(fabric, routing).as_bytes()),
            DumpFile::PathSl => ibdmchk::write_path_sl(fabric, routing, w),
            DumpFile::Sl2Vl => ibdmchk::write_sl2vl(fabric, routing, w),
            DumpFile::SwitchSl => switch_sl::write(fabric, &routing.path_sl, w),
            DumpFile::PathSelect => match &self.outcome.dlid_choice {
                Some(choice) => path_select::write(choice, w),
                None => Ok(()),
            },
        }
    }

    /// Writes every file into `dir` (created if missing) and removes our
    /// files of earlier passes that this one does not write. Returns the
    /// files written.
    pub fn write_to(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::with_capacity(self.files.len());
        for &file in &self.files {
            let path = dir.join(file.name());
            let tmp = dir.join(format!(".{}.tmp", file.name()));
            let result = File::create(&tmp).and_then(|f| {
                let mut w = BufWriter::new(f);
                self.fill(file, &mut w)?;
                w.flush()?;
                std::fs::rename(&tmp, &path)
            });
            if let Err(e) = result {
                let _ = std::fs::remove_file(&tmp);
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot write {}: {e}", path.display()),
                ));
            }
            written.push(path);
        }
        let keep = self.names();
        remove_ours_except(dir, &keep)?;
        Ok(written)
    }
}

/// Removes every file of ours from `dir` (another engine routed this
/// pass: files of ours there would describe an earlier routing).
pub fn remove_ours(dir: &Path) -> io::Result<Vec<PathBuf>> {
    remove_ours_except(dir, &[])
}

fn remove_ours_except(dir: &Path, keep: &[&str]) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for name in OUR_FILES.iter().filter(|n| !keep.contains(n)) {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot remove stale {}: {e}", path.display()),
                ))
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::route_by_name;

    fn tree() -> Fabric {
        let mut b = crate::gen::fattree::fattree(4, 3).unwrap();
        b.assign_lids_sequential(2).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn a_pass_replaces_the_files_of_the_last_and_leaves_no_temporaries() {
        let dir = std::env::temp_dir().join(format!("osmroute-bundle-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let f = tree();
        let mlid = route_by_name("mlid", &f).unwrap();
        let written = Bundle::new(&f, &mlid, Contents::ForChecking, &DumpOptions::default())
            .write_to(&dir)
            .unwrap();
        assert!(
            written.iter().any(|p| p.ends_with(PATH_SELECT_FILE)),
            "{written:?}"
        );
        // pssp needs no path selection: mlid's must not survive its pass.
        let pssp = route_by_name("pssp", &f).unwrap();
        let bundle = Bundle::new(&f, &pssp, Contents::ForChecking, &DumpOptions::default());
        assert!(!bundle.names().contains(&PATH_SELECT_FILE));
        bundle.write_to(&dir).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want: Vec<String> = bundle.names().iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(left, want, "only this pass's files, no temporaries");
        // Another engine routed: none of ours stays.
        std::fs::write(dir.join("opensm-lfts.dump"), "OpenSM's own").unwrap();
        remove_ours(&dir).unwrap();
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("opensm-lfts.dump")],
            "OpenSM's files are not ours"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn too_many_path_sl_lines_are_skipped_with_the_reason() {
        let f = tree();
        let routed = route_by_name("pssp", &f).unwrap();
        let small = DumpOptions {
            max_path_sl_lines: 10,
        };
        let bundle = Bundle::new(&f, &routed, Contents::Offline, &small);
        assert!(!bundle.names().contains(&PATH_SL_FILE));
        assert!(
            bundle.skipped[0].contains("dump.max_path_sl_lines = 10"),
            "{:?}",
            bundle.skipped
        );
        assert!(bundle.names().contains(&SUBNET_FILE) && bundle.names().contains(&LFTS_FILE));
    }
}

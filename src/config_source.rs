//! osmroute.conf as the plugin sees it: read when a routing pass starts
//! and the file changed since the last read (OpenSM re-reads its own
//! configuration on SIGHUP and re-sweeps, but never sets its routing
//! engines up again), so an edit takes effect at the next sweep.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use osmroute_core::config::Settings;
use osmroute_core::engines::config_sections;

/// What identifies one version of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

fn stamp(path: &std::path::Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        inode: meta.ino(),
    })
}

pub struct ConfigSource {
    path: PathBuf,
    /// Named by OSMROUTE_CONFIG (must exist) rather than the default path.
    explicit: bool,
    /// The stamp of what `settings` was read from; `None` when the file was
    /// missing, unset while nothing was read yet.
    loaded: Mutex<Option<(Option<Stamp>, Arc<Settings>)>>,
}

impl ConfigSource {
    pub fn from_environment() -> Self {
        let (path, explicit) = Settings::location();
        ConfigSource {
            path,
            explicit,
            loaded: Mutex::new(None),
        }
    }

    /// Where the options come from, for the log.
    pub fn describe(&self) -> String {
        match (self.explicit, self.path.exists()) {
            (false, false) => format!("built-in defaults; no {}", self.path.display()),
            _ => self.path.display().to_string(),
        }
    }

    /// The current settings, read again if the file changed. Problems are
    /// logged once per version of the file; the engines they concern
    /// decline on every pass, saying why.
    pub fn current(&self) -> Arc<Settings> {
        let now = stamp(&self.path);
        let Ok(mut loaded) = self.loaded.lock() else {
            return Arc::new(Settings::defaults());
        };
        if let Some((seen, settings)) = loaded.as_ref() {
            if *seen == now {
                return settings.clone();
            }
        }
        let reread = loaded.is_some();
        let settings = Arc::new(Settings::load(
            &self.path,
            self.explicit,
            &config_sections(),
        ));
        if reread {
            log::info!("configuration changed: options from {}", self.describe());
        }
        for e in settings.errors() {
            log::error!(
                "configuration error: {e}; the engines it concerns decline until it is fixed"
            );
        }
        *loaded = Some((now, settings.clone()));
        settings
    }
}

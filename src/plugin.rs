//! The event plugin OpenSM loads (`event_plugin_name osmroute`): `create`
//! registers every engine of the core crate with OpenSM, so `routing_engine
//! NAME` can select them; routing events keep the dump directory free of
//! our files when another engine routed.

use std::ffi::CString;
use std::sync::{Arc, OnceLock};

use osmroute_core::dumps::bundle::remove_ours;
use osmroute_core::engines::ENGINES;

use crate::config_source::ConfigSource;
use crate::engine::Registration;
use crate::osm::{EventPlugin, Osm};

/// OpenSM keeps pointers to the registrations for as long as it runs, and
/// loads the plugin once: they live for the process.
static REGISTRATIONS: OnceLock<Vec<Registration>> = OnceLock::new();

/// The plugin OpenSM keeps from `create` to `delete`. Its log lines go
/// into OpenSM's log from `create` on, until it is dropped.
pub struct Plugin;

impl EventPlugin for Plugin {
    fn create(osm: &Osm) -> Result<Plugin, String> {
        crate::logger::attach(osm.log());
        let config = Arc::new(ConfigSource::from_environment());
        let registrations = REGISTRATIONS.get_or_init(|| {
            ENGINES
                .iter()
                .filter_map(|&info| {
                    let name = CString::new(info.name).ok()?;
                    Some(Registration {
                        info,
                        name,
                        config: config.clone(),
                    })
                })
                .collect()
        });
        for r in registrations {
            match osm.register_engine(&r.name, r) {
                Ok(()) => log::info!(
                    "registered routing engine '{}': {}",
                    r.info.name,
                    r.info.summary
                ),
                Err(status) => log::error!(
                    "cannot register routing engine '{}' (status {status})",
                    r.info.name
                ),
            }
        }
        if crate::osm::sa_path_lids_available() {
            log::info!(
                "OpenSM with opensm-patch: the SA answers PathRecords and MultiPathRecords first with the DLID \
                 the engine chose for each source (mlid, layered)"
            );
        } else {
            log::info!(
                "stock OpenSM: the SA answers PathRecords with its own LID pairs; hosts find the DLIDs mlid \
                 chose per source in osmroute-path-select.txt (opensm-patch makes the SA answer them)"
            );
        }
        Ok(Plugin)
    }

    /// After a routing pass by another engine (ours declined, or OpenSM's
    /// own is configured), files of ours in the dump directory describe an
    /// earlier routing: remove them, so checks never mix passes.
    fn unicast_routing_done(&self, osm: &Osm) -> Result<(), String> {
        let used = osm.routing_engine_used();
        if used
            .as_deref()
            .is_some_and(|name| ENGINES.iter().any(|e| e.name == name))
        {
            return Ok(());
        }
        let dir = osm.options().dump_dir;
        let removed = remove_ours(&dir).map_err(|e| e.to_string())?;
        if !removed.is_empty() {
            log::info!(
                "{} routed this pass: removed osmroute's files of an earlier pass from {}",
                used.as_deref().unwrap_or("another engine"),
                dir.display()
            );
        }
        Ok(())
    }
}

impl Drop for Plugin {
    /// OpenSM's log is about to go away.
    fn drop(&mut self) {
        crate::logger::detach();
    }
}

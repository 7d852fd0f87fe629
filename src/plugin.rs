//! The event plugin OpenSM loads (`event_plugin_name osmroute`): `create`
//! reads our configuration and registers every engine of the core crate
//! with OpenSM, so `routing_engine NAME` can select them.

use std::ffi::CString;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use osmroute_core::config::Config;
use osmroute_core::engines::{EngineInfo, ENGINES};

use crate::guard::{guarded, install_panic_hook};
use crate::{engine, ffi, logger};

/// What `create` hands OpenSM as plugin data.
struct Plugin {
    /// Engine names as C strings; OpenSM copies them, we keep ours alive anyway.
    _names: Vec<CString>,
}

/// OpenSM copies our module's name and setup pointer but keeps our context
/// pointer: the engine's static description.
unsafe extern "C" fn setup_engine(re: *mut ffi::osm_routing_engine, osm: *mut ffi::osm_opensm_t) -> c_int {
    guarded("osmroute engine setup", -1, || -> Result<c_int, String> {
        let info = &*((*re).context as *const EngineInfo);
        let path = Config::location();
        let loaded = Config::load(&path);
        for e in loaded.errors_for(info.name) {
            log::error!("{}: configuration error: {e}; the engine will decline to route", info.name);
        }
        log::info!("{}: set up (options from {})", info.name, path.display());
        engine::setup(re, osm, info, Arc::new(loaded));
        Ok(0)
    })
}

pub unsafe extern "C" fn create(osm: *mut ffi::osm_opensm_t) -> *mut c_void {
    if osm.is_null() {
        return std::ptr::null_mut();
    }
    install_panic_hook();
    logger::attach(&mut (*osm).log);
    guarded("osmroute create", std::ptr::null_mut(), || -> Result<*mut c_void, String> {
        let mut names = Vec::new();
        for info in ENGINES {
            let name = CString::new(info.name).map_err(|e| e.to_string())?;
            let module = ffi::external_routing_engine_module_t {
                name: name.as_ptr(),
                setup: Some(setup_engine),
                context: info as *const EngineInfo as *mut c_void,
            };
            let status = ffi::osm_register_external_routing_engine(osm, &module, module.context);
            if status != 0 {
                log::error!("cannot register routing engine '{}' (status {status})", info.name);
            } else {
                log::info!("registered routing engine '{}': {}", info.name, info.summary);
            }
            names.push(name);
        }
        Ok(Box::into_raw(Box::new(Plugin { _names: names })) as *mut c_void)
    })
}

pub unsafe extern "C" fn delete(data: *mut c_void) {
    if !data.is_null() {
        drop(Box::from_raw(data as *mut Plugin));
    }
    logger::detach();
}

pub unsafe extern "C" fn report(_data: *mut c_void, _event: ffi::osm_epi_event_id_t, _payload: *mut c_void) {}

//! libosmroute.so: osmroute's routing engines inside stock OpenSM.
//!
//! OpenSM loads this library as an event plugin (`event_plugin_name
//! osmroute`); its `create` registers the engines of `osmroute-core`
//! through OpenSM's external routing engine API. The modules here only
//! translate: OpenSM's subnet to a `Fabric` (snapshot), a `Routing` back to
//! OpenSM's tables (apply), callbacks guarded so nothing unwinds into C.

mod apply;
mod dumps;
mod engine;
mod ffi;
mod guard;
mod logger;
mod plugin;
mod snapshot;

/// `osm_event_plugin_t` holds a raw string pointer, which Rust statics
/// cannot share without this promise: the pointer is to a constant.
#[repr(transparent)]
pub struct ExportedPlugin(ffi::osm_event_plugin_t);

// SAFETY: the struct is read-only and points only at static data and functions.
unsafe impl Sync for ExportedPlugin {}

/// The symbol OpenSM looks up after dlopen("libosmroute.so"). Its version
/// string must equal the running OpenSM's exactly; it is the OSM_VERSION of
/// the headers this library was built against.
#[no_mangle]
pub static osm_event_plugin: ExportedPlugin = ExportedPlugin(ffi::osm_event_plugin_t {
    osm_version: ffi::OSM_VERSION.as_ptr() as *const std::os::raw::c_char,
    create: Some(plugin::create),
    delete: Some(plugin::delete),
    report: Some(plugin::report),
});

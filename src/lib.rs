//! libosmroute.so: osmroute's routing engines inside stock OpenSM.
//!
//! OpenSM loads this library as an event plugin (`event_plugin_name
//! osmroute`); its `create` registers the engines of `osmroute-core`
//! through OpenSM's external routing engine API. `osm` is the only module
//! that touches OpenSM's memory (a leaf: raw bindings and the C shim, the
//! functions OpenSM calls, and safe handles), and imports nothing of the
//! rest. The other modules are safe Rust: reading the subnet (snapshot),
//! writing the tables (apply), one engine's routing passes (engine), the
//! plugin's registration and events (plugin), the configuration file, the
//! log.

mod apply;
mod config_source;
mod engine;
mod logger;
mod mcast;
pub mod osm;
mod plugin;
mod snapshot;

/// Every Rust allocation of the library is counted, so each routing pass
/// can log the plugin's own share of OpenSM's memory (`osm::heap`).
#[global_allocator]
static ALLOCATOR: osm::heap::CountingAllocator = osm::heap::CountingAllocator;

/// The symbol OpenSM looks up after dlopen("libosmroute.so").
#[no_mangle]
pub static osm_event_plugin: osm::ExportedPlugin = osm::event_plugin::<plugin::Plugin>();

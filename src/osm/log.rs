//! OpenSM's log, as a handle the `log` backend writes through.

use std::ffi::CString;
use std::ptr::NonNull;

use super::sys;

/// OpenSM's log levels that osmroute writes at or asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Info,
    Verbose,
    Debug,
    /// The ROUTING flag: OpenSM writes its routing dumps when it is on.
    Routing,
}

impl LogLevel {
    fn raw(self) -> u8 {
        (match self {
            LogLevel::Error => sys::OSM_LOG_ERROR,
            LogLevel::Info => sys::OSM_LOG_INFO,
            LogLevel::Verbose => sys::OSM_LOG_VERBOSE,
            LogLevel::Debug => sys::OSM_LOG_DEBUG,
            LogLevel::Routing => sys::OSM_LOG_ROUTING,
        }) as u8
    }
}

/// OpenSM's logger (thread-safe: it serialises writers itself).
#[derive(Clone, Copy)]
pub struct Log(NonNull<sys::osm_log_t>);

// SAFETY: osm_log locks internally; the level mask is a plain byte.
unsafe impl Send for Log {}
// SAFETY: as for Send: osm_log serialises writers itself.
unsafe impl Sync for Log {}

impl Log {
    pub(super) fn new(log: NonNull<sys::osm_log_t>) -> Log {
        Log(log)
    }

    pub fn enabled(self, level: LogLevel) -> bool {
        // SAFETY: the log lives as long as the OpenSM instance, and the
        // logger stops using it before the plugin's `delete` returns.
        unsafe { sys::osmroute_log_enabled(self.0.as_ptr(), level.raw()) != 0 }
    }

    /// Writes `msg` as one line at `level`.
    pub fn write(self, level: LogLevel, msg: &CString) {
        // SAFETY: as in `enabled`; the shim prints with "%s", so the text
        // cannot be taken for a format string.
        unsafe { sys::osmroute_log(self.0.as_ptr(), level.raw(), msg.as_ptr()) }
    }
}

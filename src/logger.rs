//! A `log` backend that writes into OpenSM's own log file, so an operator
//! finds osmroute's messages where OpenSM's are, filtered by the same
//! `log_flags`.
//!
//! OpenSM has no warning level: warnings go to INFO with a WARNING tag.
//! Errors carry "ERR" like OpenSM's own error lines, so the usual
//! `grep ERR` finds them.

use std::ffi::CString;
use std::sync::atomic::{AtomicPtr, Ordering};

use log::{Level, LevelFilter, Log, Metadata, Record};

use crate::ffi;

struct OpenSmLogger {
    target: AtomicPtr<ffi::osm_log_t>,
}

static LOGGER: OpenSmLogger = OpenSmLogger { target: AtomicPtr::new(std::ptr::null_mut()) };

fn osm_level(level: Level) -> u8 {
    (match level {
        Level::Error => ffi::OSM_LOG_ERROR,
        Level::Warn | Level::Info => ffi::OSM_LOG_INFO,
        Level::Debug => ffi::OSM_LOG_VERBOSE,
        Level::Trace => ffi::OSM_LOG_DEBUG,
    }) as u8
}

impl Log for OpenSmLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        let log = self.target.load(Ordering::Acquire);
        // SAFETY: the pointer is OpenSM's osm_log_t, valid from create()
        // until delete() (which clears it before OpenSM frees anything).
        !log.is_null() && unsafe { ffi::osmroute_log_enabled(log, osm_level(metadata.level())) != 0 }
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let tag = match record.level() {
            Level::Error => "ERR osmroute: ",
            Level::Warn => "osmroute: WARNING: ",
            _ => "osmroute: ",
        };
        let text = format!("{tag}{}", record.args()).replace('\0', " ");
        let Ok(msg) = CString::new(text) else { return };
        let log = self.target.load(Ordering::Acquire);
        // SAFETY: as in `enabled`; osm_log formats with "%s", so the
        // message cannot be misread as a format string.
        unsafe { ffi::osmroute_log(log, osm_level(record.level()), msg.as_ptr()) }
    }

    fn flush(&self) {}
}

/// Routes `log` records into `log` (OpenSM's logger) from now on.
pub fn attach(log: *mut ffi::osm_log_t) {
    LOGGER.target.store(log, Ordering::Release);
    // Fails only if a logger is already installed (ours, by an earlier
    // load): the pointer swap above is then all that is needed.
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(LevelFilter::Trace);
}

/// Stops logging into OpenSM (its log is about to go away).
pub fn detach() {
    LOGGER.target.store(std::ptr::null_mut(), Ordering::Release);
}

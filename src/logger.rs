//! A `log` backend that writes into OpenSM's own log file, so an operator
//! finds osmroute's messages where OpenSM's are, filtered by the same
//! `log_flags`.
//!
//! OpenSM has no warning level: warnings go to INFO with a WARNING tag.
//! Errors carry "ERR" like OpenSM's own error lines, so the usual
//! `grep ERR` finds them.

use std::ffi::CString;
use std::sync::RwLock;

use log::{Level, LevelFilter, Log as _, Metadata, Record};

use crate::osm::{Log, LogLevel};

struct OpenSmLogger {
    target: RwLock<Option<Log>>,
}

static LOGGER: OpenSmLogger = OpenSmLogger {
    target: RwLock::new(None),
};

fn osm_level(level: Level) -> LogLevel {
    match level {
        Level::Error => LogLevel::Error,
        Level::Warn | Level::Info => LogLevel::Info,
        Level::Debug => LogLevel::Verbose,
        Level::Trace => LogLevel::Debug,
    }
}

impl OpenSmLogger {
    fn target(&self) -> Option<Log> {
        self.target.read().ok().and_then(|t| *t)
    }
}

impl log::Log for OpenSmLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        self.target()
            .is_some_and(|log| log.enabled(osm_level(metadata.level())))
    }

    fn log(&self, record: &Record) {
        let Some(log) = self.target() else { return };
        let level = osm_level(record.level());
        if !log.enabled(level) {
            return;
        }
        let tag = match record.level() {
            Level::Error => "ERR osmroute: ",
            Level::Warn => "osmroute: WARNING: ",
            _ => "osmroute: ",
        };
        let text = format!("{tag}{}", record.args()).replace('\0', " ");
        if let Ok(msg) = CString::new(text) {
            log.write(level, &msg);
        }
    }

    fn flush(&self) {}
}

/// Routes `log` records into OpenSM's log from now on.
pub fn attach(log: Log) {
    if let Ok(mut target) = LOGGER.target.write() {
        *target = Some(log);
    }
    // Fails only if a logger is already installed (ours, by an earlier
    // load): setting the target above is then all that is needed.
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(LevelFilter::Trace);
}

/// Stops logging into OpenSM (its log is about to go away).
pub fn detach() {
    if let Ok(mut target) = LOGGER.target.write() {
        *target = None;
    }
    LOGGER.flush();
}

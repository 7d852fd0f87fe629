//! The FFI boundary: no panic and no error may escape into OpenSM. Every
//! callback body runs through `guarded`, which turns both into an ERR line
//! in OpenSM's log and the callback's failure value.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// Where the last panic on this thread happened, for `guarded`'s message.
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `body`; logs an error as it is (its message names the engine and
/// the fix), a panic with `what` and where it happened, and returns
/// `on_failure` for both.
pub fn guarded<T, E: std::fmt::Display>(
    what: &str,
    on_failure: T,
    body: impl FnOnce() -> Result<T, E>,
) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(e)) => {
            log::error!("{e}");
            on_failure
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let at = PANIC_LOCATION
                .with(|l| l.borrow_mut().take())
                .unwrap_or_default();
            log::error!(
                "{what}: internal error (panic at {at}: {msg}); OpenSM continues with its fallback. Please report this."
            );
            on_failure
        }
    }
}

/// Replaces Rust's panic report on stderr: `guarded` logs the panic into
/// OpenSM's log with the location remembered here.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        PANIC_LOCATION.with(|l| *l.borrow_mut() = at);
    }));
}

//! Progress of long runs (tracing every route, thousands of bisection
//! patterns, routing a big fabric) on a terminal; nothing at all when
//! standard error is not one, so scripts and logs stay clean.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    fn target() -> ProgressDrawTarget {
        if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        }
    }

    /// A bar for `what`, filled by `update`.
    pub fn bar(what: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), Self::target());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:>24} [{bar:30}] {pos}/{len} ({elapsed}, {eta} left)",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.set_message(what.to_string());
        Progress { bar }
    }

    /// A spinner for work whose size is unknown.
    pub fn spinner(what: &str) -> Self {
        let bar = ProgressBar::with_draw_target(None, Self::target());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("a valid template"),
        );
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar }
    }

    pub fn update(&self, done: usize, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

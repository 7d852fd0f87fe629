//! Work on all cores, on worker threads that live as long as the process.
//!
//! Inside OpenSM the plugin routes on every sweep for months; a fixed set
//! of workers, started on the first pass, spares every pass the starting
//! and joining of threads and keeps each worker's allocator state warm
//! from pass to pass. (The plugin is linked `-z nodelete`, so their code
//! stays mapped after OpenSM unloads it at exit.)
//!
//! Rows are independent, so results do not depend on the number of threads.

use std::sync::OnceLock;

use rayon::prelude::*;

/// The process's workers: one per core, named so that `top -H` shows whose
/// they are. `None` if the system refused threads; then work runs on the
/// caller's thread.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("osmroute-{i}"))
            .build()
            .map_err(|e| log::warn!("osmroute: no worker threads ({e}); routing on one core"))
            .ok()
    })
    .as_ref()
}

/// Calls `fill(row_index, row)` for every row, spreading rows over the
/// workers.
pub fn for_each_row<T: Send>(rows: &mut [T], fill: impl Fn(usize, &mut T) + Sync) {
    match pool() {
        Some(pool) if rows.len() > 1 => pool.install(|| {
            rows.par_iter_mut()
                .enumerate()
                .for_each(|(i, r)| fill(i, r))
        }),
        _ => rows.iter_mut().enumerate().for_each(|(i, r)| fill(i, r)),
    }
}

/// Runs `a` and `b`, side by side when there are workers, and returns both
/// results.
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    match pool() {
        Some(pool) => pool.join(a, b),
        None => (a(), b()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_row_gets_its_own_index() {
        let mut rows = vec![0usize; 1001];
        super::for_each_row(&mut rows, |i, r| *r = i * 2);
        assert!(rows.iter().enumerate().all(|(i, &r)| r == i * 2));
    }

    #[test]
    fn join_returns_both_results_in_order() {
        assert_eq!(super::join(|| 1, || "two"), (1, "two"));
    }
}

//! Filling per-switch tables on all cores. Rows are independent, so the
//! result does not depend on the number of threads.

use std::thread;

/// Calls `fill(row_index, row)` for every row, spreading rows over the
/// machine's cores.
pub fn for_each_row<T: Send>(rows: &mut [T], fill: impl Fn(usize, &mut T) + Sync) {
    let threads = thread::available_parallelism().map_or(1, |n| n.get()).min(rows.len().max(1));
    if threads <= 1 {
        rows.iter_mut().enumerate().for_each(|(i, r)| fill(i, r));
        return;
    }
    let chunk = rows.len().div_ceil(threads);
    thread::scope(|scope| {
        for (c, part) in rows.chunks_mut(chunk).enumerate() {
            let fill = &fill;
            scope.spawn(move || {
                for (i, row) in part.iter_mut().enumerate() {
                    fill(c * chunk + i, row);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_row_gets_its_own_index() {
        let mut rows = vec![0usize; 1001];
        super::for_each_row(&mut rows, |i, r| *r = i * 2);
        assert!(rows.iter().enumerate().all(|(i, &r)| r == i * 2));
    }
}

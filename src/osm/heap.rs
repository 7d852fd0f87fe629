//! The plugin's own share of OpenSM's memory: the library's Rust heap,
//! counted as it is allocated.
//!
//! OpenSM and the plugin live in one process, so the process's peak
//! resident memory (VmHWM) cannot tell what a routing pass of ours costs
//! beside OpenSM's own subnet, LFT blocks and SA. Every allocation of Rust
//! code in libosmroute.so (the engines of osmroute-core included) goes
//! through this allocator; OpenSM's own `malloc` calls do not, so what it
//! counts is the plugin's heap alone. Each routing pass logs its peak and
//! what it keeps (the published routing that the SA and multicast read).
//!
//! The cost is two relaxed atomic operations per allocation and one per
//! free; a compare-and-swap is made only when the peak rises.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes the plugin's Rust code holds now.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most `LIVE` reached since `start_peak`.
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, with `LIVE` and `PEAK` kept up to date.
pub struct CountingAllocator;

impl CountingAllocator {
    fn grew(by: usize) {
        let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
        if now > PEAK.load(Ordering::Relaxed) {
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
    }

    fn shrank(by: usize) {
        LIVE.fetch_sub(by, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed unchanged to the system allocator; the
// counters are bookkeeping beside it and never touch the memory.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `layout` is System's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            Self::grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            Self::grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from System, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        Self::shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`; on failure the old block stays as it was.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                Self::grew(new_size - layout.size());
            } else {
                Self::shrank(layout.size() - new_size);
            }
        }
        p
    }
}

/// The plugin's heap in bytes: now, and at its highest since the last
/// `start_peak`.
#[derive(Clone, Copy, Debug)]
pub struct HeapUse {
    pub live: usize,
    pub peak: usize,
}

impl HeapUse {
    pub fn now() -> HeapUse {
        HeapUse {
            live: LIVE.load(Ordering::Relaxed),
            peak: PEAK.load(Ordering::Relaxed),
        }
    }
}

/// Starts measuring a new peak from what the plugin holds now (at the
/// start of a routing pass, so a pass's peak is its own).
pub fn start_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

impl std::fmt::Display for HeapUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const MIB: f64 = 1024.0 * 1024.0;
        write!(
            f,
            "plugin heap peak {:.2} MiB, {:.2} MiB kept",
            self.peak as f64 / MIB,
            self.live as f64 / MIB
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's tests run under this allocator too (declared in
    /// lib.rs), so a block of ours shows in the counters while held.
    #[test]
    fn a_held_block_counts_until_freed() {
        start_peak();
        let before = HeapUse::now();
        let block = vec![7u8; 64 << 20];
        let held = HeapUse::now();
        assert!(
            held.peak >= before.live + block.len(),
            "{held:?} against {before:?}"
        );
        drop(block);
        // Other test threads allocate too; what this block added is gone
        // unless they took 64 MiB meanwhile.
        assert!(HeapUse::now().live < held.live, "{:?}", HeapUse::now());
        assert!(HeapUse::now().peak >= held.peak);
    }
}

//! A counting global allocator: the bytes live now, and the peak since the
//! current input started, so the driver can tell an input that makes a parser
//! allocate without bound (issue 12 item 3: `cores = 100000000` took 7.9 GB).
//!
//! Counting is process-wide (one atomic add per allocation): the driver runs
//! one input at a time and its other threads allocate a few bytes, so the peak
//! above the input's starting point is the input's own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Bytes allocated and not yet freed, all threads.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Highest `LIVE` since [`start_input`].
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// `LIVE` when the current input started; 0 with no input running.
static BASE: AtomicUsize = AtomicUsize::new(0);
/// Whether an input is running (the hard cap applies only then).
static ARMED: AtomicBool = AtomicBool::new(false);
/// Set while the hard-cap hook runs, so its own allocations pass.
static IN_HOOK: AtomicBool = AtomicBool::new(false);
/// Above this many bytes for one input the hook stops the process before the
/// machine runs out of memory; set by [`set_hard_cap`].
static HARD_CAP: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Called once when an input passes the hard cap (a `fn()` stored as usize);
/// it must not return normally (the driver saves the input and exits).
static HOOK: AtomicUsize = AtomicUsize::new(0);

/// The allocator the fuzz crate installs for its binary and its tests.
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.grow(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.grow(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            self.grow(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

impl Counting {
    fn grow(&self, bytes: usize) {
        let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
        PEAK.fetch_max(live, Ordering::Relaxed);
        if ARMED.load(Ordering::Relaxed)
            && live.saturating_sub(BASE.load(Ordering::Relaxed)) > HARD_CAP.load(Ordering::Relaxed)
            && !IN_HOOK.swap(true, Ordering::SeqCst)
        {
            let hook = HOOK.load(Ordering::SeqCst);
            if hook != 0 {
                // SAFETY: only `set_hard_cap` stores here, always a `fn()`.
                let hook: fn() = unsafe { std::mem::transmute::<usize, fn()>(hook) };
                hook();
            }
        }
    }
}

/// Starts counting one input's peak from the bytes live now.
pub fn start_input() {
    let live = LIVE.load(Ordering::Relaxed);
    BASE.store(live, Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    ARMED.store(true, Ordering::SeqCst);
}

/// Ends the input and returns the most bytes it had live above its start.
pub fn end_input() -> usize {
    ARMED.store(false, Ordering::SeqCst);
    PEAK.load(Ordering::Relaxed)
        .saturating_sub(BASE.load(Ordering::Relaxed))
}

/// Installs `hook`, run once from inside the allocator when one input holds
/// more than `cap` bytes; it must save what it needs and exit the process.
pub fn set_hard_cap(cap: usize, hook: fn()) {
    HOOK.store(hook as usize, Ordering::SeqCst);
    HARD_CAP.store(cap, Ordering::SeqCst);
}

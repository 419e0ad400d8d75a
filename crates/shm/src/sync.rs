//! The atomics the region is made of: std's in a normal build, loom's under
//! `RUSTFLAGS="--cfg loom"`, where loom's model checker runs every
//! interleaving (and every value a relaxed load may return) of the models
//! in `tests/loom.rs` (the crate's README, "Model checking").
//!
//! Under loom the futex is modelled too ([`futex_wait`]): a system call
//! cannot block a loom thread.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::Ordering;
#[cfg(loom)]
pub(crate) use seqcst::{AtomicI32, AtomicU32, AtomicU64};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// How the device reads the submission ring's tail, the doorbell
/// [`crate::Slot::post`] stores with Release after the entry: Acquire, so
/// the entry's fields are read after they were written.
#[cfg(not(loom))]
#[inline(always)]
pub(crate) fn doorbell_read() -> Ordering {
    Ordering::Acquire
}

/// Under loom: Acquire, or Relaxed inside [`with_seeded_bug`].
#[cfg(loom)]
pub(crate) fn doorbell_read() -> Ordering {
    if SEEDED.with(std::cell::Cell::get) {
        Ordering::Relaxed
    } else {
        Ordering::Acquire
    }
}

#[cfg(loom)]
std::thread_local! {
    static SEEDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Under loom: runs `model` with the seeded ordering bug, the device
/// reading the doorbell Relaxed, which the model
/// `a_post_races_the_devices_peek_and_fetch` must catch (a command seen
/// with the ring's old contents). A thread-local of the test's thread:
/// loom runs every thread of a model on it, and tests that run beside it
/// keep the right ordering.
#[cfg(loom)]
pub fn with_seeded_bug<R>(model: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            SEEDED.with(|s| s.set(false));
        }
    }
    SEEDED.with(|s| s.set(true));
    let _reset = Reset;
    model()
}

/// The kernel's futex, as the models see it. FUTEX_WAIT blocks only if
/// the word still holds the value the caller saw, checked atomically with
/// respect to FUTEX_WAKE: the kernel reads the word under the word's
/// hash-bucket lock, which the waker takes too (Linux
/// kernel/futex/waitwake.c, v6.x, the comment in `futex_wait_setup`: "the
/// basic logical guarantee of a futex is that it blocks ONLY if cond(var)
/// is known to be true at the time of blocking"). Here that lock is a loom
/// mutex, the sleep a loom condition variable. A lost wake-up leaves the
/// waiter blocked for ever, which loom reports as a deadlock.
///
/// One bucket for every word (a hash table of one bucket), so a wake of
/// one word wakes the sleepers on every word: a spurious wake-up for the
/// others, which the futex(2) man page says callers must expect anyway;
/// the models so check a superset of what the kernel does. Waking N
/// rather than all, the timeout (a timed wait never times out here) and
/// EINTR are not modelled (README, "Model checking").
#[cfg(loom)]
struct FutexBucket {
    lock: loom::sync::Mutex<()>,
    sleepers: loom::sync::Condvar,
}

#[cfg(loom)]
loom::lazy_static! {
    static ref BUCKET: FutexBucket = FutexBucket {
        lock: loom::sync::Mutex::new(()),
        sleepers: loom::sync::Condvar::new(),
    };
}

/// FUTEX_WAIT: -1 (EAGAIN) if `word` no longer holds `val`, else sleeps
/// until a [`futex_wake`]; 0.
#[cfg(loom)]
pub(crate) fn futex_wait(word: &AtomicU32, val: u32) -> i64 {
    let held = BUCKET.lock.lock().expect("futex bucket");
    // Under the bucket's lock, as futex_wait_setup reads it.
    if word.load(Ordering::SeqCst) != val {
        return -1;
    }
    drop(BUCKET.sleepers.wait(held).expect("futex bucket"));
    0
}

/// FUTEX_WAKE of every sleeper.
#[cfg(loom)]
pub(crate) fn futex_wake() -> i64 {
    let _held = BUCKET.lock.lock().expect("futex bucket");
    BUCKET.sleepers.notify_all();
    0
}

/// loom's atomics with SeqCst kept. loom takes a SeqCst access as AcqRel
/// (its README, "Unsupported features": "causing Loom to generate false
/// alarms"), so the store-then-load handshakes between `wait` and
/// `deliver`/`wake` (each side stores, then loads what the other stored)
/// would fail there as lost wake-ups that cannot happen. loom does keep
/// `fence(SeqCst)`: here a SeqCst access is the access with a SeqCst fence
/// before a load, after a store, and on both sides of a read-modify-write,
/// the fence mapping of SeqCst (and what x86's locked instructions and
/// `mfence` do). A fence also orders the thread's relaxed accesses around
/// it, which a SeqCst access alone does not: an ordering bug that relies
/// on that difference is not found (README, "Model checking").
#[cfg(loom)]
mod seqcst {
    use loom::sync::atomic::{fence, Ordering, Ordering::SeqCst};

    fn before(o: Ordering) {
        if o == SeqCst {
            fence(SeqCst);
        }
    }

    fn after(o: Ordering) {
        if o == SeqCst {
            fence(SeqCst);
        }
    }

    macro_rules! atomic {
        ($name:ident, $t:ty) => {
            #[derive(Default)]
            pub(crate) struct $name(loom::sync::atomic::$name);

            // The std methods the crate may call: not every one is called
            // on every type.
            #[allow(dead_code)]
            impl $name {
                pub(crate) fn new(v: $t) -> Self {
                    $name(loom::sync::atomic::$name::new(v))
                }
                pub(crate) fn load(&self, o: Ordering) -> $t {
                    before(o);
                    self.0.load(o)
                }
                pub(crate) fn store(&self, v: $t, o: Ordering) {
                    self.0.store(v, o);
                    after(o);
                }
                pub(crate) fn swap(&self, v: $t, o: Ordering) -> $t {
                    before(o);
                    let r = self.0.swap(v, o);
                    after(o);
                    r
                }
                pub(crate) fn fetch_add(&self, v: $t, o: Ordering) -> $t {
                    before(o);
                    let r = self.0.fetch_add(v, o);
                    after(o);
                    r
                }
                pub(crate) fn fetch_sub(&self, v: $t, o: Ordering) -> $t {
                    before(o);
                    let r = self.0.fetch_sub(v, o);
                    after(o);
                    r
                }
                pub(crate) fn fetch_or(&self, v: $t, o: Ordering) -> $t {
                    before(o);
                    let r = self.0.fetch_or(v, o);
                    after(o);
                    r
                }
                pub(crate) fn fetch_and(&self, v: $t, o: Ordering) -> $t {
                    before(o);
                    let r = self.0.fetch_and(v, o);
                    after(o);
                    r
                }
                pub(crate) fn fetch_max(&self, v: $t, o: Ordering) -> $t {
                    before(o);
                    let r = self.0.fetch_max(v, o);
                    after(o);
                    r
                }
                pub(crate) fn compare_exchange(
                    &self,
                    current: $t,
                    new: $t,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$t, $t> {
                    let o = if failure == SeqCst { SeqCst } else { success };
                    before(o);
                    let r = self.0.compare_exchange(current, new, success, failure);
                    after(if r.is_ok() { success } else { failure });
                    r
                }
            }
        };
    }

    atomic!(AtomicI32, i32);
    atomic!(AtomicU32, u32);
    atomic!(AtomicU64, u64);
}

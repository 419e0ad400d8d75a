//! What one process saw: requests by kind and mark, and the calls that
//! carried them. Lock-free counters, safe from any thread and from a
//! signal-free fork (the child starts from zero).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use policy::Marks;
use serde::{Deserialize, Serialize};

/// The kind of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Flush,
}

const KINDS: usize = 3;
/// urgent, barrier, unmarked (TOS 4.1.1: both bits count as urgent on the
/// device; a rule or flags give one of the three).
const MARKS: usize = 3;

fn mark_index(m: Marks) -> usize {
    match (m.urgent, m.barrier) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    }
}

/// Requests per (kind, mark), and system calls per family.
pub struct Live {
    requests: [[AtomicU64; MARKS]; KINDS],
    /// pread family, read/write, io_submit, fsync family, io_uring.
    calls: [AtomicU64; 5],
    /// Critical requests, requests routed to the poll queue, requests the
    /// program asked to poll (RWF_HIPRI); hybrid polling's timer sleeps,
    /// waits spun from the start, and the time asked and slept (ns).
    fr: [AtomicU64; 7],
    /// Calls made while their thread was inside a routed call (from a
    /// signal handler): passed straight to the kernel.
    nested: AtomicU64,
}

/// The FastResponse counters of [`Live::fr`].
#[derive(Clone, Copy, Debug)]
pub enum Fr {
    Critical,
    Polled,
    Hipri,
    HybridSleeps,
    HybridSpun,
    HybridAskedNs,
    HybridSleptNs,
}

/// The call families counted.
#[derive(Clone, Copy, Debug)]
pub enum Family {
    Positioned,
    Plain,
    IoSubmit,
    Flush,
    /// io_uring_enter (or an SQ thread's pass) that submitted storage SQEs.
    IoUring,
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const ZERO_ROW: [AtomicU64; MARKS] = [ZERO; MARKS];

impl Default for Live {
    fn default() -> Live {
        Live::new()
    }
}

impl Live {
    pub const fn new() -> Live {
        Live {
            requests: [ZERO_ROW; KINDS],
            calls: [ZERO; 5],
            fr: [ZERO; 7],
            nested: ZERO,
        }
    }

    /// A call made inside a routed call of its thread, not routed.
    pub fn nested(&self) {
        self.nested.fetch_add(1, Relaxed);
    }

    pub fn fr(&self, f: Fr) {
        self.fr_add(f, 1);
    }

    pub fn fr_add(&self, f: Fr, n: u64) {
        self.fr[f as usize].fetch_add(n, Relaxed);
    }

    pub fn request(&self, kind: Kind, marks: Marks) {
        self.requests[kind as usize][mark_index(marks)].fetch_add(1, Relaxed);
    }

    pub fn call(&self, f: Family) {
        self.calls[f as usize].fetch_add(1, Relaxed);
    }

    /// A forked child starts counting from zero: its parent reports its own.
    pub fn reset(&self) {
        for row in &self.requests {
            for c in row {
                c.store(0, Relaxed);
            }
        }
        for c in self.calls.iter().chain(&self.fr) {
            c.store(0, Relaxed);
        }
        self.nested.store(0, Relaxed);
    }

    pub fn snapshot(&self) -> Counts {
        let row = |k: usize| ByMark {
            urgent: self.requests[k][0].load(Relaxed),
            barrier: self.requests[k][1].load(Relaxed),
            unmarked: self.requests[k][2].load(Relaxed),
        };
        let c = |i: usize| self.calls[i].load(Relaxed);
        Counts {
            reads: row(Kind::Read as usize),
            writes: row(Kind::Write as usize),
            flushes: row(Kind::Flush as usize),
            calls: Calls {
                positioned: c(0),
                plain: c(1),
                io_submit: c(2),
                flush: c(3),
                io_uring: c(4),
            },
            critical: self.fr[0].load(Relaxed),
            polled: self.fr[1].load(Relaxed),
            hipri: self.fr[2].load(Relaxed),
            hybrid: Hybrid {
                sleeps: self.fr[3].load(Relaxed),
                spun: self.fr[4].load(Relaxed),
                asked_ns: self.fr[5].load(Relaxed),
                slept_ns: self.fr[6].load(Relaxed),
            },
            nested: self.nested.load(Relaxed),
        }
    }
}

/// Requests of one kind by mark: the reports' own type (`report::ByMark`
/// is `policy::ByMark`), so that `exec` and `run` count marks under one
/// set of keys.
pub use policy::ByMark;

/// System calls on direct descriptors, by family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Calls {
    /// pread/pwrite, preadv/pwritev, preadv2/pwritev2 (and their 64-bit
    /// names).
    pub positioned: u64,
    /// read/write at the file offset.
    pub plain: u64,
    pub io_submit: u64,
    /// fsync/fdatasync.
    pub flush: u64,
    /// io_uring submissions that carried storage SQEs.
    #[serde(default)]
    pub io_uring: u64,
}

/// What one process (or, added up, a program) saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub reads: ByMark,
    pub writes: ByMark,
    pub flushes: ByMark,
    pub calls: Calls,
    /// Requests with FastResponse's critical tag.
    #[serde(default)]
    pub critical: u64,
    /// Requests whose thread spun on its slot (sent to the poll queue).
    #[serde(default)]
    pub polled: u64,
    /// Requests the program asked to poll (RWF_HIPRI in preadv2's flags).
    #[serde(default)]
    pub hipri: u64,
    #[serde(default)]
    pub hybrid: Hybrid,
    /// Calls made while their thread was inside a routed call (a signal
    /// handler's): passed straight to the kernel, not routed.
    #[serde(default)]
    pub nested: u64,
}

/// What hybrid polling's sleeps did (`--completion hybrid`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hybrid {
    /// Waits that slept on the timer first, and the time asked (half the
    /// bucket's mean less the overshoot) and slept, ns.
    pub sleeps: u64,
    pub asked_ns: u64,
    pub slept_ns: u64,
    /// Waits whose sleep was not longer than the timer's overshoot, so
    /// spun from the start.
    pub spun: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.reads.add(&o.reads);
        self.writes.add(&o.writes);
        self.flushes.add(&o.flushes);
        self.calls.positioned += o.calls.positioned;
        self.calls.plain += o.calls.plain;
        self.calls.io_submit += o.calls.io_submit;
        self.calls.flush += o.calls.flush;
        self.calls.io_uring += o.calls.io_uring;
        self.critical += o.critical;
        self.polled += o.polled;
        self.hipri += o.hipri;
        self.hybrid.sleeps += o.hybrid.sleeps;
        self.hybrid.asked_ns += o.hybrid.asked_ns;
        self.hybrid.slept_ns += o.hybrid.slept_ns;
        self.hybrid.spun += o.hybrid.spun;
        self.nested += o.nested;
    }

    /// Every request by mark.
    pub fn by_mark(&self) -> ByMark {
        let mut all = ByMark::default();
        for k in [&self.reads, &self.writes, &self.flushes] {
            all.add(k);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_and_mark_and_reset() {
        let l = Live::new();
        l.request(Kind::Read, Marks::URGENT);
        l.request(Kind::Read, Marks::URGENT.merge(Marks::BARRIER));
        l.request(Kind::Write, Marks::BARRIER);
        l.request(Kind::Flush, Marks::NONE);
        l.call(Family::IoSubmit);
        let c = l.snapshot();
        assert_eq!(c.reads.urgent, 2);
        assert_eq!(c.writes.barrier, 1);
        assert_eq!(c.flushes.unmarked, 1);
        assert_eq!(c.calls.io_submit, 1);
        let mut sum = Counts::default();
        l.call(Family::IoUring);
        sum.add(&l.snapshot());
        sum.add(&l.snapshot());
        assert_eq!(sum.calls.io_uring, 2, "added up with the other families");
        assert_eq!(c.by_mark().total(), 4);
        l.reset();
        assert_eq!(l.snapshot(), Counts::default());
    }
}

//! The bounds a profile's numbers must keep, so that no profile makes the
//! simulator take unbounded memory or time (issue 12: no input makes `sim`
//! use more than 200 MB or run more than 10 s past its stated runtime).
//! Each says where it comes from.

use policy::{Nanos, MS, SEC};

// The device's bounds are the device model's (crate `service`), kept
// under their names here for the simulator's code.
pub use service::limits::{
    MAX_BW, MAX_IOPS, MAX_PROFILE_BYTES, MAX_QUEUES, MAX_QUEUE_DEPTH, MAX_SERVICE, MIN_BW,
};

/// The most cores a host has: Linux's largest `NR_CPUS`
/// (arch/x86/Kconfig, `NR_CPUS_RANGE_END` = 8192 with `MAXSMP`). Each core
/// costs the simulator a few hundred bytes and a part of the event queue.
pub const MAX_CORES: u32 = 8192;

/// The longest a host's CPU path (a system call, an interrupt, a context
/// switch, CFS's periods) may take: one second, the bound Linux puts on its
/// scheduler's granularities (kernel/sysctl.c, `max_sched_granularity_ns =
/// NSEC_PER_SEC`, for `sched_latency_ns` and the others). It keeps every
/// sum of times far from u64 overflow. Also the policy's default delta.
pub const MAX_HOST_TIME: Nanos = SEC;

// A device profile's tuned delta is held to the same bound.
const _: () = assert!(service::limits::MAX_DEFAULT_DELTA == MAX_HOST_TIME);

/// The scheduler tick's range: Linux's HZ is one of 100, 250, 300 or 1000
/// (kernel/Kconfig.hz), a tick of 1 ms to 10 ms. The floor bounds the ticks
/// a run makes: a core with threads ticks once per tick.
pub const TICK: std::ops::RangeInclusive<Nanos> = MS..=10 * MS;

/// The most threads (job clones) a simulation runs. Each holds two latency
/// histograms of about 230 KB (1 ns to 100 s at 3 significant digits):
/// measured, `numjobs=256` of psync takes 124 MB peak RSS and
/// `numjobs=1024` 476 MB (`/usr/bin/time -f %M cinterrupts sim ...` with a
/// 8192-core host). 256 keeps a run under the 200 MB; the paper's
/// workloads run at most 28.
pub const MAX_THREADS: usize = 256;

// An application file refuses a larger thread count by its key and line
// (`apps::MAX_THREADS`): the two bounds are one.
const _: () = assert!(apps::MAX_THREADS == MAX_THREADS);

/// The most requests all threads may have in flight together (the sum of
/// their `iodepth`s): about 100 bytes each in the simulator's tables
/// (measured, `iodepth=65536` on one thread: 10.9 MB peak RSS), so 256K
/// take about 25 MB. Four full NVMe queues (`MAX_QUEUE_DEPTH`); the paper's
/// deepest workload has 256.
pub const MAX_IN_FLIGHT: u64 = 1 << 18;

/// How far the simulation may fall behind real time before it stops with
/// an error: the bound (no input makes `sim` run more than 10 s past
/// its stated runtime). With the shipped profiles the simulator runs about
/// ten times faster than real time (`sim examples/mixed-256.fio --runtime
/// 1s`: 0.08 s); only profiles with near-zero costs at the IOPS ceiling run
/// slower (measured 7 to 10 s of wall time per virtual second).
pub const BEHIND_REAL_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// The longest completion latency the histograms hold: 100 s, 3 significant
/// digits, bounded memory however long the run. Longer ones (possible only
/// with service times near [`MAX_SERVICE`] queued deep) are
/// counted at 100 s and reported.
pub const CLAT_MAX: Nanos = 100_000_000_000;

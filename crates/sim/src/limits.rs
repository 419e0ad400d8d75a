//! The bounds a profile's numbers must keep, so that no profile makes the
//! simulator take unbounded memory or time (issue 12: no input makes `sim`
//! use more than 200 MB or run more than 10 s past its stated runtime).
//! Each says where it comes from.

use policy::{Nanos, MS, SEC};

/// The most bytes read from a profile file. The shipped profiles are about
/// 2.6 KB each (`wc -c profiles/*/*.toml`: 2639, 2558, 2538); a MiB leaves
/// room for any commentary and stops `--device /dev/zero` at once.
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// The most cores a host has: Linux's largest `NR_CPUS`
/// (arch/x86/Kconfig, `NR_CPUS_RANGE_END` = 8192 with `MAXSMP`). Each core
/// costs the simulator a few hundred bytes and a part of the event queue.
pub const MAX_CORES: u32 = 8192;

/// The most I/O queue pairs a device has: the NVMe Number of Queues feature
/// (Feature 07h) counts them in 16 bits, 0's based, and 65535 is the most
/// a controller may allocate (NVMe Base Specification 2.0, 5.27.1.5).
pub const MAX_QUEUES: u32 = 65_535;

/// The most entries a queue has: `CAP.MQES` is 16 bits, 0's based (NVMe
/// Base Specification 2.0, 3.1.3.1): 65536.
pub const MAX_QUEUE_DEPTH: u32 = 65_536;

/// The longest a command may take in the device (Linux's NVMe I/O timeout,
/// cited in the `service` crate, which clamps every drawn service time to
/// it). Service times above it are refused in a profile. It is also how
/// long the simulator waits, after a time-bounded run's end, for requests
/// still in flight.
pub use service::MAX_SERVICE;

/// The highest IOPS ceiling a device has, each way: 10M, three times the
/// fastest NVMe drives (about 3M random 4 KiB reads a second, PCIe 5.0 x4)
/// and the value the project's constant-service fixtures use for "no
/// ceiling" (`DeviceProfile::constant_service`). The device's gate is shared
/// by reads and writes, so it caps the total. It bounds the events a
/// virtual second holds; [`BEHIND_REAL_TIME`] bounds the wall time.
pub const MAX_IOPS: u64 = 10_000_000;

/// The range of a bandwidth ceiling, bytes a second, each way. The top,
/// 1 TB/s, is sixty times a PCIe 5.0 x4 link (about 15.8 GB/s of payload),
/// beyond any one device. The bottom, 1 MB/s, is below any NVMe device's
/// sequential rate and keeps a large command's share of the byte bucket
/// within seconds (a 1 MiB command: about 1 s).
pub const MIN_BW: u64 = 1_000_000;
pub const MAX_BW: u64 = 1_000_000_000_000;

/// The longest a host's CPU path (a system call, an interrupt, a context
/// switch, CFS's periods) may take: one second, the bound Linux puts on its
/// scheduler's granularities (kernel/sysctl.c, `max_sched_granularity_ns =
/// NSEC_PER_SEC`, for `sched_latency_ns` and the others). It keeps every
/// sum of times far from u64 overflow. Also the policy's default delta.
pub const MAX_HOST_TIME: Nanos = SEC;

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

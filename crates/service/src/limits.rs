//! The bounds a device profile's numbers must keep, so that no profile makes
//! a front end take unbounded memory or time (issue 12). Each says where it
//! comes from.

use policy::{Nanos, SEC};

/// The most bytes read from a profile file. The shipped profiles are about
/// 2.6 KB each (`wc -c profiles/*/*.toml`: 2639, 2558, 2538); a MiB leaves
/// room for any commentary and stops `--device /dev/zero` at once.
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// The most I/O queue pairs a device has: the NVMe Number of Queues feature
/// (Feature 07h) counts them in 16 bits, 0's based, and 65535 is the most
/// a controller may allocate (NVMe Base Specification 2.0, 5.27.1.5).
pub const MAX_QUEUES: u32 = 65_535;

/// The most entries a queue has: `CAP.MQES` is 16 bits, 0's based (NVMe
/// Base Specification 2.0, 3.1.3.1): 65536.
pub const MAX_QUEUE_DEPTH: u32 = 65_536;

/// The longest a command may take in the device: Linux's NVMe driver
/// aborts a command after `io_timeout`, 30 s by default
/// (drivers/nvme/host/core.c, `nvme_io_timeout = NVME_IO_TIMEOUT`, 30 s).
/// Service times above it are refused in a profile, and every drawn
/// service time (a long-tailed distribution, `per_kib` times a large block)
/// is clamped to it. It is also how long the simulator waits, after a
/// time-bounded run's end, for requests still in flight.
pub const MAX_SERVICE: Nanos = 30 * SEC;

/// The highest IOPS ceiling a device has, each way: 10M, three times the
/// fastest NVMe drives (about 3M random 4 KiB reads a second, PCIe 5.0 x4)
/// and the value the project's constant-service fixtures use for "no
/// ceiling" (`DeviceProfile::constant_service`). The device's gate is shared
/// by reads and writes, so it caps the total. It bounds the events a
/// virtual second holds; the simulator's `BEHIND_REAL_TIME` bounds the wall time.
pub const MAX_IOPS: u64 = 10_000_000;

/// The range of a bandwidth ceiling, bytes a second, each way. The top,
/// 1 TB/s, is sixty times a PCIe 5.0 x4 link (about 15.8 GB/s of payload),
/// beyond any one device. The bottom, 1 MB/s, is below any NVMe device's
/// sequential rate and keeps a large command's share of the byte bucket
/// within seconds (a 1 MiB command: about 1 s).
pub const MIN_BW: u64 = 1_000_000;
pub const MAX_BW: u64 = 1_000_000_000_000;

/// The longest coalescing timeout a profile may tune (`default_delta`): one
/// second, the bound Linux puts on its scheduler's granularities
/// (kernel/sysctl.c, `max_sched_granularity_ns = NSEC_PER_SEC`), which the
/// simulator holds every host time to (`sim::limits::MAX_HOST_TIME`).
pub const MAX_DEFAULT_DELTA: Nanos = SEC;

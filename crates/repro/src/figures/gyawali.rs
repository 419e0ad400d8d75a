//! What Gyawali and Aryal's experiments share (Sec 4, Figs 6-8): the two
//! workloads, uniform and variable (`jobs/gyawali-*.fio`), and the
//! provenance every one of their figures repeats.

use super::own;
use crate::experiment::Workload;
use crate::provenance::{Origin, Provenance, RUN_LENGTH};

/// The uniform workload (Sec 4, Fig 6): a synchronous and an asynchronous
/// thread of 4 KiB random reads and writes, back to back.
pub fn uniform() -> Workload {
    own!("gyawali-uniform")
}

/// The variable workload (Sec 4, Fig 7): the uniform one's threads, the
/// asynchronous one in bursts, the synchronous one delayed.
pub fn variable() -> Workload {
    own!("gyawali-variable")
}

/// The NVMe configurations Fig 6 compares adaptive with (Sec 4:
/// "no coalescing (default), nvme100 ..., nvme20 ..., and nvme6").
pub const FIG6_SYSTEMS: &[&str] = &["default", "nvme100", "nvme20", "nvme6", "adaptive"];

/// The provenance every Gyawali experiment shares.
pub fn provenance(figure: &'static str) -> Provenance {
    Provenance::new(Origin::Paper(figure))
        .with(
            "workload (uniform)",
            "jobs/gyawali-uniform.fio: [sync] pvsync2 (preadv2/pwritev2), [async] libaio at \
             iodepth 32 in batches of 32; both 4 KiB randrw, back to back, on one core",
            Origin::Paper(
                "Gyawali and Aryal, Sec 4 (\"4kb uniform read/write by 2 threads with preadv2 \
                 and pwritev2\"), Fig 6 caption (a synchronous and an asynchronous workload); \
                 the mix, the async engine and depth and the pinning are ours (the file's header)",
            ),
        )
        .with(
            "workload (variable)",
            "jobs/gyawali-variable.fio: the uniform threads with think times: [async] a burst \
             of 32 then 100 us of quiet, [sync] one request then 50 us",
            Origin::Paper(
                "Gyawali and Aryal, Sec 4 (\"burst of I/O workloads from a thread and delayed \
                 workload from another thread\"); the burst, the gaps are the earlier \
                 jobs/variable.fio's, ours (the paper gives none)",
            ),
        )
        .with(
            "default marks",
            "table1: preadv2/pwritev2 Urgent, the last request of each io_submit Barrier",
            Origin::Paper(
                "Gyawali and Aryal, Sec 1 (the kernel annotates requests by the system call \
                 that made them, citing TOS 4.1.1's Table 1); only cint and dynamic read marks",
            ),
        )
        .with(
            "threshold",
            "thr = 32 for every coalescing system; adaptive's and cint's delta 6 us",
            Origin::Ours(
                "Gyawali and Aryal state neither; TOS 3.2's, whose comparison their Fig 6 \
                 restates (the Optane profile's defaults)",
            ),
        )
        .with(
            "device",
            "optane",
            Origin::Ours(
                "the paper's device is a c5d.4xlarge's instance NVMe SSD (Sec 3.4), of no \
                 stated latency; the Optane is TOS's",
            ),
        )
        .with("runtime, runs", "scaled", RUN_LENGTH)
}

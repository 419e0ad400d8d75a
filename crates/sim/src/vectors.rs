//! Each completion queue's interrupt vector, and `feature09 --cd sync`
//! (issue 40): the simulator knows its jobs, so it can say which queues a
//! thread that blocks on its I/O submits on.
//!
//! **Vectors.** Queue `q` (0-based, one per core while the device has
//! enough; core `c` submits on `c % queues`) raises vector `q + 1`, as
//! Linux's nvme-pci numbers them: I/O queue `qid` raises vector `qid`,
//! vector 0 being the admin queue's (drivers/nvme/host/pci.c,
//! `nvme_create_queue`).
//!
//! **Blocking.** A thread blocks on each completion when its engine is
//! synchronous (fio's sync, psync, vsync, pvsync, pvsync2: the caller
//! sleeps in the system call until its one I/O completes; fio caps
//! iodepth at 1) or when it keeps one I/O in flight (`iodepth=1` on
//! libaio or io_uring: `io_getevents`/`io_uring_enter` wait for that one).
//! A job that does no I/O (`cpuio`) counts for nothing. A queue is
//! blocking when any thread on its cores blocks: its interrupt delay is
//! that thread's latency, whatever else shares the queue.

use policy::feature09::{self, CdVectors};
use policy::PolicySpec;

use crate::workload::ThreadSpec;

/// The vector queue `q` raises. Queues are at most the cores
/// (`limits::MAX_CORES`, 8192), so `q + 1` fits 16 bits.
pub(crate) fn of_queue(q: u32) -> u16 {
    (q + 1) as u16
}

fn blocks(t: &ThreadSpec) -> bool {
    let engine = t.job.ioengine;
    !engine.is_noio() && (engine.is_sync() || t.job.iodepth <= 1)
}

/// Per queue, whether a thread that blocks submits on it.
pub(crate) fn blocking(threads: &[ThreadSpec], queues: u32) -> Vec<bool> {
    let mut out = vec![false; queues as usize];
    for t in threads.iter().filter(|t| blocks(t)) {
        out[t.core % queues as usize] = true;
    }
    out
}

/// `spec` with `--cd sync` made the list of the blocking queues' vectors
/// (`None` when there is nothing to resolve).
pub(crate) fn resolve(
    spec: &PolicySpec,
    threads: &[ThreadSpec],
    queues: u32,
) -> Result<Option<PolicySpec>, String> {
    if spec.cd != Some(CdVectors::Sync) {
        return Ok(None);
    }
    let cd = feature09::resolve_sync(&blocking(threads, queues))
        .map_err(|e| format!("option --cd sync: {e}"))?;
    Ok(Some(PolicySpec {
        cd: Some(cd),
        ..spec.clone()
    }))
}

//! The baseline the emulator is measured against (the paper's Table 2):
//! the same QD1 random read issued with io_uring straight from a job thread
//! pinned to the target core, with the kernel's own interrupt path.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

use hdrhistogram::Histogram;
use io_uring::{opcode, types, IoUring};
use policy::Nanos;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::buffers::Buffers;
use crate::latency::latency_histogram;
use crate::sys::{self, Clock};

/// Reads `bs` bytes at random `bs`-aligned offsets of the first `size`
/// bytes of `path`, one at a time, for `duration`, from a thread on `cpu`.
/// Returns the latency of each read (submit to completion seen), ns.
pub fn qd1_randread(
    path: &Path,
    size: u64,
    bs: u32,
    cpu: usize,
    duration: Nanos,
) -> Result<Histogram<u64>, String> {
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        sys::pin_to(cpu).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut ring = IoUring::new(8).map_err(|e| format!("io_uring: {e}"))?;
        let mut buf = Buffers::new(1, bs as usize);
        let ptr = buf.get_mut(0, bs as usize).as_mut_ptr();
        let blocks = (size / u64::from(bs)).max(1);
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut hist = latency_histogram();
        let clock = Clock::new();
        while clock.now() < duration {
            let offset = rng.random_range(0..blocks) * u64::from(bs);
            let sqe = opcode::Read::new(types::Fd(file.as_raw_fd()), ptr, bs)
                .offset(offset)
                .build();
            let t = clock.now();
            // SAFETY: `buf` outlives the read, which is waited for below.
            unsafe { ring.submission().push(&sqe) }.map_err(|_| "io_uring SQ full".to_string())?;
            ring.submit_and_wait(1)
                .map_err(|e| format!("io_uring_enter: {e}"))?;
            let cqe = ring.completion().next().ok_or("io_uring: no completion")?;
            if cqe.result() != bs as i32 {
                return Err(format!("read at {offset}: result {}", cqe.result()));
            }
            let _ = hist.record((clock.now() - t).max(1));
        }
        Ok(hist)
    })
    .join()
    .map_err(|_| "the baseline thread panicked".to_string())?
}

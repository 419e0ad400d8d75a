//! Laying out a regular file before a run, as fio does: real data on disk,
//! so that reads measure the device and not the filesystem's holes.

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// fio writes its layout in blocks of this size too.
const CHUNK: usize = 1 << 20;

/// Fills bytes `from..to` of `path` (created if missing) with pseudo-random
/// data and syncs it, leaving `0..from` as it was.
pub(crate) fn lay_out(path: &Path, from: u64, to: u64) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    // Random rather than a constant so that neither a compressing nor a
    // deduplicating layer below can shortcut the reads.
    let mut rng = Pcg64Mcg::seed_from_u64(to);
    let mut buf = vec![0u8; CHUNK];
    let mut at = from;
    while at < to {
        let n = (to - at).min(CHUNK as u64) as usize;
        rng.fill_bytes(&mut buf[..n]);
        file.write_all_at(&buf[..n], at)?;
        at += n as u64;
    }
    file.sync_all()
}

//! Laying out a regular file before a run, as fio does: real data on disk,
//! so that reads measure the device and not the filesystem's holes. The
//! space is reserved first (fallocate), so a full filesystem refuses at
//! once instead of part way, and a layout that fails leaves the file as it
//! was (removed if it was created, cut back if it was extended).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use rand::{RngCore, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::path::under_dev;

/// fio writes its layout in blocks of this size too.
const CHUNK: usize = 1 << 20;

/// Fills bytes `from..to` of `path` (created if missing) with pseudo-random
/// data and syncs it, leaving `0..from` as it was. Never under `/dev`.
pub(crate) fn lay_out(path: &Path, from: u64, to: u64) -> io::Result<()> {
    if under_dev(path) {
        // The last guard: callers refuse earlier, with the job's line.
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "nothing is ever laid out under /dev",
        ));
    }
    let existed = path.exists();
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let written = reserve(&file, from, to).and_then(|()| fill(&file, from, to));
    if written.is_err() {
        if existed {
            let _ = file.set_len(from);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
    written
}

/// Reserves `from..to` so that a full filesystem fails here, at once.
/// Filesystems without fallocate (EOPNOTSUPP) are laid out by writing only.
fn reserve(file: &File, from: u64, to: u64) -> io::Result<()> {
    let (Ok(at), Ok(len)) = (i64::try_from(from), i64::try_from(to - from)) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "larger than a file can be",
        ));
    };
    // SAFETY: a valid descriptor, mode 0 (allocate, extend the size).
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, at, len) } == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) => Ok(()),
        _ => Err(e),
    }
}

fn fill(file: &File, from: u64, to: u64) -> io::Result<()> {
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

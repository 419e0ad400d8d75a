//! Reading job files from disk, bounded: what may be read (a regular file,
//! or a FIFO a script feeds), how much (a job file and everything it
//! includes), and where an `include` points. Nothing here interprets the
//! text.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::error::JobError;

/// Most bytes read for one job file and all its includes together: 1 MiB.
/// The largest job file in fio's own `examples/` (axboe/fio at f5344384,
/// `cmdprio-bssplit.fio`) is 3,494 bytes and this project's are under 1 KiB;
/// a 5,000-section file is about 150 KB. The bound keeps the lexed sections
/// (about 80 bytes an entry) far under the 200 MB, and stops
/// `jobs /dev/zero`-like streams (a FIFO) at 1 MiB instead of memory's end.
pub const MAX_JOB_FILE_BYTES: u64 = 1 << 20;

/// Deepest chain of `include`s. fio (init.c, `__parse_jobs_ini`) recurses
/// without a bound or a cycle check; its HOWTO shows one level. Sixteen is
/// our own bound: far above any use, and it stops a chain before the total
/// size bound does.
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// What kind of file `meta` describes, for a refusal.
fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// A regular file, or a FIFO (a shell's `<(...)`): what may hold a job file.
fn readable_kind(meta: &Metadata) -> bool {
    meta.is_file() || meta.file_type().is_fifo()
}

/// Reads `path` as UTF-8 text, taking at most `budget` bytes (and taking
/// what it read from the budget). `shown` names the file in errors.
pub(crate) fn read_text(path: &Path, shown: &str, budget: &mut u64) -> Result<String, JobError> {
    let refuse = |reason: String| JobError::Read {
        file: shown.to_string(),
        reason,
    };
    // Look before opening: opening a device can have effects of its own.
    let meta = std::fs::metadata(path).map_err(|e| refuse(e.to_string()))?;
    if !readable_kind(&meta) {
        return Err(refuse(format!(
            "{}, not a job file (a regular file or a FIFO)",
            kind(&meta)
        )));
    }
    let file = File::open(path).map_err(|e| refuse(e.to_string()))?;
    // The path may have been swapped between the look and the open.
    let meta = file.metadata().map_err(|e| refuse(e.to_string()))?;
    if !readable_kind(&meta) {
        return Err(refuse(format!(
            "{}, not a job file (a regular file or a FIFO)",
            kind(&meta)
        )));
    }
    if meta.is_file() && meta.len() > *budget {
        return Err(too_large(shown));
    }
    let mut bytes = Vec::new();
    file.take(*budget + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refuse(e.to_string()))?;
    if bytes.len() as u64 > *budget {
        return Err(too_large(shown));
    }
    *budget -= bytes.len() as u64;
    utf8(bytes, shown)
}

fn too_large(shown: &str) -> JobError {
    JobError::Read {
        file: shown.to_string(),
        reason: format!(
            "larger than {} KiB with its includes, the bound on a job file (fio's largest example is 3.5 KB)",
            MAX_JOB_FILE_BYTES >> 10
        ),
    }
}

/// The text, or an error naming the line and column of the first byte that
/// is not UTF-8.
pub(crate) fn utf8(bytes: Vec<u8>, shown: &str) -> Result<String, JobError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        JobError::Syntax {
            file: shown.to_string(),
            line,
            message: format!(
                "not UTF-8 text (byte 0x{:02x} at byte {} of the line)",
                bytes[at],
                at - line_start + 1
            ),
        }
    })
}

/// Where `include NAME` in `from` points: `NAME` as given if it exists
/// (relative to the working directory), else beside `from`, as fio's
/// `__parse_jobs_ini` resolves it (`access(filename)`, then the including
/// file's directory).
pub(crate) fn include_path(name: &str, from: &Path) -> PathBuf {
    let direct = Path::new(name);
    if direct.is_absolute() || direct.exists() {
        return direct.to_path_buf();
    }
    match from.parent() {
        Some(dir) => dir.join(name),
        None => direct.to_path_buf(),
    }
}

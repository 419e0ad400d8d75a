//! From a [`BackendSpec`] to a running backend: the file opened (and laid
//! out when the jobs need more of it than exists) or the null device built.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use super::layout::lay_out;
use super::{Backend, BackendSpec, Faults, FileBackend, Kind, NullBackend};

/// Size a null device reports when no job gives one.
const NULL_SIZE: u64 = 1 << 40;

/// A backend ready for the device thread.
pub struct Opened {
    pub backend: Box<dyn Backend>,
    /// Bytes the jobs may address: a regular file's length (after any
    /// layout), a block device's size, or the null device's `need`.
    pub size: u64,
}

impl BackendSpec {
    /// `need`: the bytes the jobs address (the largest offset + size), if
    /// any job says. `entries`: the most commands in flight at once, which
    /// sizes the io_uring. Errors are one line naming the path and cause.
    pub fn open(&self, need: Option<u64>, entries: u32) -> Result<Opened, String> {
        match &self.kind {
            Kind::Null { latency, depth } => Ok(Opened {
                backend: Box::new(NullBackend::new(*latency, *depth, self.faults)),
                size: need.unwrap_or(NULL_SIZE),
            }),
            Kind::File { path } => open_file(path, need, entries, self.faults)
                .map_err(|e| format!("file:{}: {e}", path.display())),
        }
    }
}

fn open_file(
    path: &Path,
    need: Option<u64>,
    entries: u32,
    faults: Faults,
) -> Result<Opened, String> {
    let need = need.filter(|&n| n > 0);
    let block = match std::fs::metadata(path) {
        Ok(meta) if meta.file_type().is_block_device() => true,
        Ok(meta) if meta.is_file() => {
            match need {
                Some(n) if meta.len() < n => lay_out(path, meta.len(), n)
                    .map_err(|e| format!("laying out {n} bytes: {e}"))?,
                None if meta.len() == 0 => {
                    return Err("the file is empty and no job gives size=".to_string())
                }
                _ => {}
            }
            false
        }
        Ok(_) => return Err("not a regular file nor a block device".to_string()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let Some(n) = need else {
                return Err("the file is missing and no job gives size=".to_string());
            };
            lay_out(path, 0, n).map_err(|e| format!("laying out {n} bytes: {e}"))?;
            false
        }
        Err(e) => return Err(e.to_string()),
    };
    let mut file = open_direct(path)?;
    let size = if block {
        file.seek(SeekFrom::End(0))
            .map_err(|e| format!("cannot find the device's size: {e}"))?
    } else {
        file.metadata().map_err(|e| e.to_string())?.len()
    };
    if let Some(n) = need.filter(|&n| n > size) {
        return Err(format!(
            "the jobs address {n} bytes, the device holds {size}"
        ));
    }
    let backend = FileBackend::new(file, path, size, entries, faults)
        .map_err(|e| format!("cannot set up io_uring: {e}"))?;
    Ok(Opened {
        backend: Box::new(backend),
        size,
    })
}

fn open_direct(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| {
            let hint = if e.raw_os_error() == Some(libc::EINVAL) {
                " (does the filesystem support O_DIRECT?)"
            } else {
                ""
            };
            format!("cannot open with O_DIRECT: {e}{hint}")
        })
}

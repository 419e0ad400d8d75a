//! From a [`BackendSpec`] to a running backend: the file opened (and laid
//! out when the jobs need more of it than exists) or the null or modelled
//! device built.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::layout::lay_out;
use super::path::{inspect, under_dev, Found};
use super::{Backend, BackendSpec, Faults, FileBackend, Kind, ModelBackend};

/// Size a null or modelled device reports when no job gives one.
const NULL_SIZE: u64 = 1 << 40;

/// A layout larger than this is announced before it starts: about a second
/// of writing here (issue 12: a 3 GiB layout took 11 s, 0.28 GB/s).
pub const ANNOUNCED_LAYOUT: u64 = 256 << 20;

/// How a file backend is opened.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// Whether any job writes: otherwise the file is opened read-only, so
    /// that nothing can write to a device the user only meant to read.
    pub writes: bool,
    /// Told (one line) when a layout larger than [`ANNOUNCED_LAYOUT`]
    /// starts.
    pub say: Option<fn(&str)>,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            writes: true,
            say: None,
        }
    }
}

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
        self.open_with(need, entries, Access::default())
    }

    /// [`BackendSpec::open`], read-only when no job writes, and saying when
    /// a large layout starts.
    pub fn open_with(
        &self,
        need: Option<u64>,
        entries: u32,
        access: Access,
    ) -> Result<Opened, String> {
        match &self.kind {
            Kind::Null { latency, depth } => Ok(Opened {
                backend: Box::new(ModelBackend::null(*latency, *depth, self.faults)),
                size: need.unwrap_or(NULL_SIZE),
            }),
            Kind::Timed { profile, seed } => Ok(Opened {
                backend: Box::new(ModelBackend::device(profile, *seed, self.faults)),
                size: need.unwrap_or(NULL_SIZE),
            }),
            Kind::File { path } => open_file(path, need, entries, self.faults, access)
                .map_err(|e| format!("file:{}: {e}", path.display())),
        }
    }
}

fn open_file(
    path: &Path,
    need: Option<u64>,
    entries: u32,
    faults: Faults,
    access: Access,
) -> Result<Opened, String> {
    let need = need.filter(|&n| n > 0);
    let found = inspect(path).map_err(|e| e.to_string())?;
    // Nothing but a block device is used under /dev: a file there is in
    // RAM, and a missing name is a disk this machine does not have.
    if found != Found::Block && under_dev(path) {
        return Err(
            "not a block device, and nothing is ever created or laid out under /dev".to_string(),
        );
    }
    let lay_out_to = |from: u64, n: u64| {
        if n - from > ANNOUNCED_LAYOUT {
            if let Some(say) = access.say {
                say(&format!(
                    "laying out {} of {} ...",
                    report::human::num2str(n - from, 3, true, "B"),
                    path.display()
                ));
            }
        }
        lay_out(path, from, n).map_err(|e| format!("laying out {n} bytes: {e}"))
    };
    let block = match found {
        Found::Block => true,
        Found::Regular { len } => {
            match need {
                Some(n) if len < n => lay_out_to(len, n)?,
                None if len == 0 => {
                    return Err("the file is empty and no job gives size=".to_string())
                }
                _ => {}
            }
            false
        }
        Found::Unusable(what) => {
            return Err(format!("{what}, not a regular file nor a block device"))
        }
        Found::Missing => {
            let Some(n) = need else {
                return Err("the file is missing and no job gives size=".to_string());
            };
            lay_out_to(0, n)?;
            false
        }
    };
    let mut file = open_direct(path, access.writes)?;
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

fn open_direct(path: &Path, write: bool) -> Result<File, String> {
    OpenOptions::new()
        .read(true)
        .write(write)
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

//! What a `file:` path is before anything opens it: a regular file, a
//! block device, something no run may use (a directory, a character device,
//! a FIFO, a procfs or sysfs file), or missing; whether it lies under
//! `/dev`, where nothing may ever be created (issue 12: a layout there is a
//! regular file in RAM, or the raw disk); and how much room its filesystem
//! has for a layout.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// What is at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Missing,
    Regular {
        len: u64,
    },
    Block,
    /// Something a run cannot use, and why (one phrase).
    Unusable(&'static str),
}

/// Filesystems whose files are the kernel's views, not storage; from
/// Linux's include/uapi/linux/magic.h. `/proc/version` there reads as an
/// empty regular file and fails a layout with "Illegal seek".
const PSEUDO_FS: &[(i64, &str)] = &[
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x7363_6673, "securityfs"),
];

/// Looks at `path` (following symlinks) without opening it.
pub fn inspect(path: &Path) -> io::Result<Found> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(e),
    };
    let t = meta.file_type();
    Ok(if t.is_block_device() {
        Found::Block
    } else if t.is_dir() {
        Found::Unusable("a directory")
    } else if t.is_char_device() {
        Found::Unusable("a character device")
    } else if t.is_fifo() {
        Found::Unusable("a FIFO")
    } else if t.is_socket() {
        Found::Unusable("a socket")
    } else if let Some(fs) = pseudo_fs(path) {
        Found::Unusable(fs)
    } else {
        Found::Regular { len: meta.len() }
    })
}

fn statfs(path: &Path) -> Option<libc::statfs> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a NUL-terminated path; `buf` is a valid out-pointer.
    let mut buf: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statfs(c.as_ptr(), &mut buf) } == 0).then_some(buf)
}

fn pseudo_fs(path: &Path) -> Option<&'static str> {
    // f_type is i64 on x86-64 and narrower elsewhere.
    #[allow(clippy::unnecessary_cast)]
    let kind = statfs(path)?.f_type as i64;
    PSEUDO_FS
        .iter()
        .find(|(magic, _)| *magic == kind)
        .map(|&(_, name)| match name {
            "procfs" => "a procfs file (the kernel's view, not storage)",
            "sysfs" => "a sysfs file (the kernel's view, not storage)",
            _ => "a file of a kernel pseudo-filesystem, not storage",
        })
}

/// `path` made absolute with every symlink in its existing part resolved,
/// so that `/tmp/link/x` with `link -> /dev` counts as under `/dev`
/// (`report::file::resolved`; `path` as given if even that fails).
fn resolved(path: &Path) -> PathBuf {
    report::file::resolved(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `path` lies under `/dev` (devtmpfs: a regular file there lives
/// in RAM, and the names are the machine's disks), as written or once its
/// symlinks are resolved.
pub fn under_dev(path: &Path) -> bool {
    let dev = Path::new("/dev");
    (path.is_absolute() && path.starts_with(dev)) || resolved(path).starts_with(dev)
}

/// Bytes an unprivileged writer may still use on the filesystem that holds
/// `path` (or would hold it: its nearest existing ancestor).
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    let resolved = resolved(path);
    let mut at = resolved.as_path();
    while !at.exists() {
        at = at.parent().unwrap_or(Path::new("/"));
    }
    let c = CString::new(at.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a NUL-terminated path; `buf` is a valid out-pointer.
    let mut buf: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut buf) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((buf.f_bavail as u64).saturating_mul(buf.f_frsize as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_paths() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"abc").unwrap();
        assert_eq!(inspect(&file).unwrap(), Found::Regular { len: 3 });
        assert_eq!(inspect(&dir.path().join("no")).unwrap(), Found::Missing);
        assert_eq!(inspect(dir.path()).unwrap(), Found::Unusable("a directory"));
        // Only looked at, never opened.
        assert_eq!(
            inspect(Path::new("/dev/null")).unwrap(),
            Found::Unusable("a character device")
        );
        assert!(matches!(
            inspect(Path::new("/proc/version")).unwrap(),
            Found::Unusable(why) if why.contains("procfs")
        ));
    }

    #[test]
    fn dev_is_seen_through_symlinks_and_relative_paths() {
        assert!(under_dev(Path::new("/dev/nvme0n1")));
        assert!(under_dev(Path::new("/dev/../dev/x")));
        assert!(!under_dev(Path::new("/devices/x")));
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev", &link).unwrap();
        assert!(under_dev(&link.join("nvme0n1")));
        assert!(!under_dev(&dir.path().join("x")));
        assert!(free_bytes(&dir.path().join("missing/deeper")).unwrap() > 0);
    }
}

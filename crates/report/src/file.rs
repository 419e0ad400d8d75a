//! Writing an output file whole or not at all: a temporary file beside it,
//! synced, then renamed into place, so a failure (or a crash) never leaves a
//! half-written file where a reader expects results.
//!
//! Not every target can be replaced. A target that exists and is not a
//! regular file (a character device such as `/dev/null` or a terminal, a
//! FIFO, a socket) is written in place: renaming a temporary file over
//! `/dev/null` once replaced the device with a regular file (issue 12).
//! Nothing is ever created or renamed under `/dev`; a directory is refused.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The device filesystem: never a place to create or rename a file in.
const DEV: &str = "/dev";

/// Writes `bytes` to `path` whole or not at all (in place for a device or
/// a FIFO). The directory must exist.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// An output file being written: into a temporary file beside the target,
/// which [`AtomicFile::commit`] renames into place; dropped without a
/// commit (an error on the way), the temporary file is removed and the
/// target is untouched. Creating one checks the destination, so a command
/// can open its output before doing any work.
pub struct AtomicFile {
    out: BufWriter<File>,
    /// The temporary file and its target; `None` when written in place.
    staged: Option<(PathBuf, PathBuf)>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        match destination(path)? {
            Destination::InPlace { truncate } => {
                let f = OpenOptions::new()
                    .write(true)
                    .truncate(truncate)
                    .open(path)?;
                Ok(AtomicFile {
                    out: BufWriter::new(f),
                    staged: None,
                })
            }
            Destination::Replace(target) => {
                let tmp = temporary(&target)?;
                let f = File::create(&tmp)?;
                Ok(AtomicFile {
                    out: BufWriter::new(f),
                    staged: Some((tmp, target)),
                })
            }
        }
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> io::Result<()> {
        self.out.flush()?;
        let Some((tmp, target)) = self.staged.take() else {
            return Ok(());
        };
        let result = self
            .out
            .get_ref()
            .sync_all()
            .and_then(|()| std::fs::rename(&tmp, &target));
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.staged.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// How a target is written.
#[derive(Debug, PartialEq, Eq)]
enum Destination {
    /// Opened and written where it is: a device, a FIFO, anything reached
    /// through `/dev` (`/dev/stdout` redirected to a file). `truncate` for
    /// a regular file, so old bytes do not outlive the new ones.
    InPlace { truncate: bool },
    /// A regular file (or a new one) replaced by a rename: the real path,
    /// symbolic links resolved, so a link stays a link.
    Replace(PathBuf),
}

fn destination(path: &Path) -> io::Result<Destination> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(io::Error::other("is a directory")),
        Ok(m) if !m.is_file() => Ok(Destination::InPlace { truncate: false }),
        Ok(_) => {
            let real = std::fs::canonicalize(path)?;
            if under_dev(&std::path::absolute(path)?) || under_dev(&real) {
                Ok(Destination::InPlace { truncate: true })
            } else {
                Ok(Destination::Replace(real))
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if under_dev(&real_dir(path)?) {
                return Err(io::Error::other(format!(
                    "will not create a file under {DEV}"
                )));
            }
            Ok(Destination::Replace(path.to_path_buf()))
        }
        Err(e) => Err(e),
    }
}

/// Refuses a path under `/dev` (symbolic links and `..` resolved as far as
/// the path exists), before a directory is made for it: for outputs that
/// create directories (`tune --out`, `reproduce --out`).
pub fn refuse_dev(path: &Path) -> io::Result<()> {
    if under_dev(&resolved(path)?) {
        return Err(io::Error::other(format!(
            "will not create a file under {DEV}"
        )));
    }
    Ok(())
}

/// `path` made absolute with every symbolic link and `..` in its existing
/// part resolved, the missing rest joined back on: `/tmp/link/x` with
/// `link -> /dev` is `/dev/x`. One resolution for every "never under /dev"
/// check (outputs here, the emulator's backends and layouts).
pub fn resolved(path: &Path) -> io::Result<PathBuf> {
    let mut existing = std::path::absolute(path)?;
    let mut rest = Vec::new();
    let real = loop {
        match std::fs::canonicalize(&existing) {
            Ok(real) => break real,
            Err(_) => match (existing.file_name(), existing.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name.to_owned());
                    existing = parent.to_path_buf();
                }
                _ => break existing,
            },
        }
    };
    Ok(rest.iter().rev().fold(real, |p, c| p.join(c)))
}

/// The directory `path` is in, as given (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The directory `path` is in, symbolic links and `..` resolved (as far as
/// it exists: a missing directory fails later, when the file is created).
fn real_dir(path: &Path) -> io::Result<PathBuf> {
    let dir = dir_of(path);
    match std::fs::canonicalize(dir) {
        Ok(real) => Ok(real),
        Err(_) => std::path::absolute(dir),
    }
}

fn under_dev(path: &Path) -> bool {
    path.starts_with(DEV)
}

/// Removes what a killed process left in `dir`: entries named `prefix`
/// then the id of a process no longer running (`.out.csv.tmp4242`). An
/// interrupted `coalesce -o` or `reproduce` leaves its unfinished output
/// under such a hidden name (the target itself untouched); the next one
/// clears it.
pub fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let path = entry.path();
        let _ = match entry.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
    }
}

/// A hidden name beside `path`, unique to this process; never under `/dev`.
fn temporary(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    if under_dev(&real_dir(path)?) {
        return Err(io::Error::other(format!(
            "will not create a file under {DEV}"
        )));
    }
    let prefix = format!(".{}.tmp", name.to_string_lossy());
    remove_stale(dir_of(path), &prefix);
    Ok(dir_of(path).join(format!("{prefix}{}", std::process::id())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("report-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn replaces_whole_and_leaves_nothing_behind() {
        let dir = scratch("whole");
        let path = dir.join("out.txt");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let missing = dir.join("no/such/dir/x");
        assert!(write_atomically(&missing, b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unfinished_file_leaves_the_old_one_and_no_temporary() {
        let dir = scratch("unfinished");
        let path = dir.join("out.txt");
        write_atomically(&path, b"old").unwrap();
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writing_to_a_fifo_keeps_it_a_fifo() {
        let dir = scratch("fifo");
        let fifo = dir.join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_atomically(&fifo, b"through the pipe").unwrap();
        // Checked before joining: a replaced FIFO may leave the reader
        // blocked in open() for good.
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_directory_is_refused_in_one_line() {
        let dir = scratch("dir");
        let e = write_atomically(&dir, b"x").unwrap_err();
        assert_eq!(e.to_string(), "is a directory");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_temporary_file_is_never_under_dev() {
        // Decided without opening anything: no test touches /dev itself.
        assert_eq!(
            destination(Path::new("/dev/null")).unwrap(),
            Destination::InPlace { truncate: false }
        );
        for p in ["/dev/null", "/dev/new-file", "/dev/../dev/x", "/dev/shm/x"] {
            assert!(temporary(Path::new(p)).is_err(), "{p}");
        }
        let e = destination(Path::new("/dev/no-such-output")).unwrap_err();
        assert_eq!(e.to_string(), "will not create a file under /dev");
        let t = temporary(Path::new("out/x.csv")).unwrap();
        assert!(!std::path::absolute(&t).unwrap().starts_with("/dev"));
    }

    #[test]
    fn a_directory_to_be_made_under_dev_is_refused_before_it_is_made() {
        for p in [
            "/dev/report",
            "/dev/a/b/c",
            "/dev/../dev/x",
            "/tmp/../dev/y",
        ] {
            let e = refuse_dev(Path::new(p)).unwrap_err();
            assert_eq!(e.to_string(), "will not create a file under /dev", "{p}");
        }
        assert!(refuse_dev(Path::new("/tmp/no/such/report")).is_ok());
        assert!(refuse_dev(Path::new("report")).is_ok());
    }

    #[test]
    fn what_a_killed_writer_left_is_cleared_by_the_next() {
        let dir = scratch("stale");
        let path = dir.join("out.csv");
        // No process has id 4294967295 (ids stop at 2^22, pid_max).
        std::fs::write(dir.join(".out.csv.tmp4294967295"), "half").unwrap();
        std::fs::write(dir.join(".out.csv.tmp1"), "init's: kept").unwrap();
        write_atomically(&path, b"whole").unwrap();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, [".out.csv.tmp1", "out.csv"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symbolic_link_stays_a_link_to_the_new_contents() {
        let dir = scratch("link");
        let real = dir.join("real.txt");
        let link = dir.join("link.txt");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

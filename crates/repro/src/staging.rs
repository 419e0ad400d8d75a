//! The report's directory, whole or not at all. Its destination is checked
//! before any run; everything is written into a fresh hidden sibling
//! directory, which replaces the destination whole once the report is
//! complete. A failure (a full filesystem, an interrupted run) leaves the
//! previous report as it was and nothing new beside it: no half-written
//! files, no new run JSON beside an old report, no `seed3.json` left over
//! from a run with more seeds (issue 12).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use crate::ReproError;

/// What a report directory holds: a directory holding anything else is not
/// one, and is never replaced (`--out ~` must not delete a home).
pub const REPORT_ENTRIES: &[&str] = &[
    "report.md",
    "report.html",
    "summary.json",
    "figures",
    "runs",
];

/// A report being written: [`Staged::path`] is where, [`Staged::commit`]
/// puts it in place. Dropped uncommitted, it is removed.
#[derive(Debug)]
pub struct Staged {
    target: PathBuf,
    staging: PathBuf,
    committed: bool,
    /// What the directory it replaces may hold ([`REPORT_ENTRIES`], or an
    /// evaluation bundle's, `crate::ae`).
    entries: &'static [&'static str],
}

fn write_error(path: &Path, reason: impl std::fmt::Display) -> ReproError {
    ReproError::Write {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

impl Staged {
    /// Checks `target` (a new path, an empty directory or a previous
    /// report) and makes the fresh directory beside it, so an unwritable
    /// place fails now rather than after every run.
    pub fn prepare(target: &Path) -> Result<Staged, ReproError> {
        Staged::prepare_for(target, REPORT_ENTRIES)
    }

    /// [`Staged::prepare`] for a directory that holds `entries` (and
    /// nothing else) when it is one of ours: never replaced otherwise.
    pub fn prepare_for(
        target: &Path,
        entries: &'static [&'static str],
    ) -> Result<Staged, ReproError> {
        let fail = |reason: &dyn std::fmt::Display| write_error(target, reason);
        let target = std::path::absolute(target).map_err(|e| fail(&e))?;
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(fail(&"not a directory a report can replace"));
        };
        report::file::refuse_dev(&target).map_err(|e| fail(&e))?;
        std::fs::create_dir_all(parent).map_err(|e| match std::fs::metadata(parent) {
            Ok(m) if !m.is_dir() => write_error(parent, "not a directory"),
            _ => write_error(parent, e),
        })?;
        let parent = std::fs::canonicalize(parent).map_err(|e| write_error(parent, e))?;
        let target = parent.join(name);
        check_replaceable(&target, entries)?;
        let prefix = format!(".{}.part", name.to_string_lossy());
        // What an interrupted reproduce left (its target untouched).
        report::file::remove_stale(&parent, &prefix);
        let mut hidden = OsString::from(".");
        hidden.push(name);
        hidden.push(format!(".part{}", std::process::id()));
        let staging = parent.join(hidden);
        // A leftover of an earlier process with this id (ids are reused).
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir(&staging).map_err(|e| write_error(&staging, e))?;
        Ok(Staged {
            target,
            staging,
            committed: false,
            entries,
        })
    }

    /// Where the report is written until it is committed.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// The report's final place.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Puts the finished report in place, replacing a previous one whole.
    pub fn commit(mut self) -> Result<(), ReproError> {
        // Checked again: something may have appeared there during the runs.
        check_replaceable(&self.target, self.entries)?;
        replace_dir(&self.staging, &self.target).map_err(|e| write_error(&self.target, e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// `target` is absent, an empty directory, or a previous report (a
/// directory holding only `allowed`).
fn check_replaceable(target: &Path, allowed: &[&str]) -> Result<(), ReproError> {
    let meta = match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(write_error(target, e)),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return Err(write_error(
            target,
            "exists and is not a directory (--out names the report's directory)",
        ));
    }
    let entries = std::fs::read_dir(target).map_err(|e| write_error(target, e))?;
    for entry in entries {
        let name = entry.map_err(|e| write_error(target, e))?.file_name();
        if !allowed.iter().any(|r| name == *r) {
            return Err(write_error(
                target,
                format!(
                    "not a report directory (it holds '{}'); give a new or empty --out, it is replaced whole",
                    name.to_string_lossy()
                ),
            ));
        }
    }
    Ok(())
}

/// Moves the directory `new` to `target`. A directory already there is
/// exchanged with it in one step (Linux's `RENAME_EXCHANGE`), so a reader
/// sees the old report or the new, never neither; then the old is removed.
fn replace_dir(new: &Path, target: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(target).is_err() {
        return std::fs::rename(new, target);
    }
    match exchange(new, target) {
        Ok(()) => {}
        // A filesystem without RENAME_EXCHANGE: the old report aside, the
        // new one in, the old one back if that fails.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
            let mut aside = new.as_os_str().to_owned();
            aside.push(".old");
            let aside = PathBuf::from(aside);
            std::fs::rename(target, &aside)?;
            if let Err(e) = std::fs::rename(new, target) {
                let _ = std::fs::rename(&aside, target);
                return Err(e);
            }
            return std::fs::remove_dir_all(&aside);
        }
        Err(e) => return Err(e),
    }
    // `new` now names the old report.
    std::fs::remove_dir_all(new)
}

fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let cstr = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))
    };
    let (a, b) = (cstr(a)?, cstr(b)?);
    // SAFETY: two valid NUL-terminated paths, relative to the working directory.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_previous_report_is_replaced_whole_and_leftovers_go_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report");
        std::fs::create_dir_all(out.join("runs/sim/fig8")).unwrap();
        std::fs::write(out.join("runs/sim/fig8/x.seed3.json"), "old").unwrap();
        std::fs::write(out.join("report.md"), "old").unwrap();
        let s = Staged::prepare(&out).unwrap();
        std::fs::write(s.path().join("report.md"), "new").unwrap();
        s.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("report.md")).unwrap(),
            "new"
        );
        assert!(
            !out.join("runs").exists(),
            "the old runs outlived the report"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "only the report is left");
    }

    #[test]
    fn an_uncommitted_report_leaves_the_previous_one_and_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("summary.json"), "old").unwrap();
        let s = Staged::prepare(&out).unwrap();
        std::fs::write(s.path().join("summary.json"), "half").unwrap();
        drop(s);
        assert_eq!(
            std::fs::read_to_string(out.join("summary.json")).unwrap(),
            "old"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_destination_that_is_not_a_report_is_refused_before_anything() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        std::fs::write(home.join("thesis.tex"), "precious").unwrap();
        let e = Staged::prepare(&home).unwrap_err().to_string();
        assert!(
            e.contains("not a report directory (it holds 'thesis.tex')"),
            "{e}"
        );
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let e = Staged::prepare(&file).unwrap_err().to_string();
        assert!(e.contains("exists and is not a directory"), "{e}");
        for p in ["/dev/report", "/dev/new/dir/report"] {
            let e = Staged::prepare(Path::new(p)).unwrap_err().to_string();
            assert!(e.ends_with("will not create a file under /dev"), "{e}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}

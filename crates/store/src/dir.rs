//! The store: a directory with one file per run, named by its key.
//! `KEY.json` holds a finished run (its configuration and results),
//! `KEY.failed.json` a run that failed and why. Each is written whole or
//! not at all (`report::file`: a temporary file renamed into place), so a
//! run killed at any moment leaves only whole results, and shards on a
//! shared directory never write the same file (their runs differ, or, as
//! `tune`'s baseline every shard needs, are the same deterministic run).
//!
//! Every entry is sealed ([`crate::entry`]): it carries the spec hash and
//! code version that made it and a checksum of its content, and is read
//! back only through the seal. [`Store::check`] says what a key's entry
//! is (finished, failed, missing, or bad and why: `sweep run` runs a bad
//! one again); [`Store::get`] gives a finished run only when it is whole,
//! its checksum holds and it is its name's, else an error naming the file
//! (`tune` and `reproduce` stop there); [`Store::scan`] reads every entry
//! and lists every bad one at once (`sweep merge`).
//!
//! What a result holds is the caller's: any serde value (a sweep's
//! figures, `tune`'s point and gaps).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::entry::{self, Fault};

/// A store could not be read or written, or holds bad entries. One line
/// each, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    /// Bad entries, a line each (`FILE: what is wrong`).
    #[error("{0}")]
    Bad(String),
}

pub(crate) fn io(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// A finished run as stored: `results` is what the experiment keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finished<R> {
    pub key: String,
    /// The program version the key was made with.
    pub version: String,
    /// The hash of what asked for the run (a sweep's spec identity,
    /// `sweep::Spec::identity`), or `""` where the experiment has none
    /// (`tune`, `reproduce`: their key is their whole configuration).
    pub spec: String,
    pub config: Value,
    pub results: R,
}

/// A failed run as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failed {
    pub key: String,
    pub version: String,
    /// As [`Finished::spec`].
    pub spec: String,
    pub config: Value,
    /// Why, one line.
    pub error: String,
}

/// What the store holds for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Finished,
    Failed,
    Missing,
}

/// What a key's entry is, read through its seal ([`Store::check`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Checked<R> {
    Missing,
    Finished(Finished<R>),
    Failed(Failed),
    /// A file under the key's name that is not a good entry.
    Bad {
        path: PathBuf,
        fault: Fault,
    },
}

/// What an entry is expected to have been made by: a fault when it was
/// not ([`Fault::OtherSpec`], [`Fault::OtherVersion`]). `None`: anything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Expect<'a> {
    pub spec: Option<&'a str>,
    pub version: Option<&'a str>,
}

/// Every entry of a store, read ([`Store::scan`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Scan<R> {
    /// Good finished runs, sorted by key.
    pub finished: Vec<Finished<R>>,
    /// Good failed runs, sorted by key.
    pub failed: Vec<Failed>,
    /// Every bad entry, sorted by file name.
    pub bad: Vec<(PathBuf, Fault)>,
}

/// A store directory.
#[derive(Clone, Debug)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    /// The store at `dir`, created if missing.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        report::file::refuse_dev(dir).map_err(|e| io(dir, e))?;
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        if !dir.is_dir() {
            return Err(io(dir, "not a directory"));
        }
        Ok(Store {
            dir: dir.to_path_buf(),
        })
    }

    /// An existing store, for reading (merge): never created.
    pub fn existing(dir: &Path) -> Result<Store, StoreError> {
        if !dir.is_dir() {
            return Err(io(dir, "no such store directory"));
        }
        Ok(Store {
            dir: dir.to_path_buf(),
        })
    }

    pub fn finished_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    pub fn failed_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.failed.json"))
    }

    /// Which file the key has, unread: a bad file counts as what its name
    /// says ([`Store::check`] reads it).
    pub fn state(&self, key: &str) -> State {
        if self.finished_path(key).is_file() {
            State::Finished
        } else if self.failed_path(key).is_file() {
            State::Failed
        } else {
            State::Missing
        }
    }

    /// What the store holds for `key`, read through the seal: a finished
    /// run first (a finished run replaces its failure), else a failed one.
    /// `Err` only when a file is there and cannot be read at all.
    pub fn check<R: DeserializeOwned>(
        &self,
        key: &str,
        expect: Expect,
    ) -> Result<Checked<R>, StoreError> {
        let path = self.finished_path(key);
        if let Some(read) = read_entry::<Finished<R>>(&path)? {
            return Ok(
                match read.and_then(|f| vouch(key, &f.key, &f.version, &f.spec, expect).map(|()| f))
                {
                    Ok(f) => Checked::Finished(f),
                    Err(fault) => Checked::Bad { path, fault },
                },
            );
        }
        let path = self.failed_path(key);
        if let Some(read) = read_entry::<Failed>(&path)? {
            return Ok(
                match read.and_then(|f| vouch(key, &f.key, &f.version, &f.spec, expect).map(|()| f))
                {
                    Ok(f) => Checked::Failed(f),
                    Err(fault) => Checked::Bad { path, fault },
                },
            );
        }
        Ok(Checked::Missing)
    }

    /// The finished run under `key`, if stored. A file that is not a
    /// good entry (cut, emptied, tampered, without a checksum, holding
    /// another key: a [`Fault`]) is an error naming it and what is wrong:
    /// never trusted, and not silently run again over (`sweep run` reruns
    /// bad entries through [`Store::check`], saying how many).
    pub fn get<R: DeserializeOwned>(&self, key: &str) -> Result<Option<Finished<R>>, StoreError> {
        let path = self.finished_path(key);
        match read_entry::<Finished<R>>(&path)? {
            None => Ok(None),
            Some(read) => read
                .and_then(|f| {
                    vouch(key, &f.key, &f.version, &f.spec, Expect::default()).map(|()| f)
                })
                .map(Some)
                .map_err(|fault| io(&path, fault)),
        }
    }

    /// Stores a finished run, sealed, and removes its failure if it had
    /// one.
    pub fn put_finished<R: Serialize>(&self, f: &Finished<R>) -> Result<(), StoreError> {
        let path = self.finished_path(&f.key);
        write_sealed(&path, f)?;
        let failed = self.failed_path(&f.key);
        if failed.exists() {
            std::fs::remove_file(&failed).map_err(|e| io(&failed, e))?;
        }
        Ok(())
    }

    /// Stores a failed run, sealed.
    pub fn put_failed(&self, f: &Failed) -> Result<(), StoreError> {
        write_sealed(&self.failed_path(&f.key), f)
    }

    /// Every entry in the store read through its seal: the good finished
    /// and failed runs, and every bad one with what is wrong (all of them,
    /// not the first). Files not named as entries (`KEY.json`,
    /// `KEY.failed.json`, KEY 16 hex digits) are not the store's and are
    /// left alone.
    pub fn scan<R: DeserializeOwned>(&self) -> Result<Scan<R>, StoreError> {
        let mut scan = Scan {
            finished: Vec::new(),
            failed: Vec::new(),
            bad: Vec::new(),
        };
        let mut names: Vec<(String, bool)> = Vec::new();
        let entries = std::fs::read_dir(&self.dir).map_err(|e| io(&self.dir, e))?;
        for entry in entries {
            let path = entry.map_err(|e| io(&self.dir, e))?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let (key, failed) = match name.strip_suffix(".failed.json") {
                Some(key) => (key, true),
                None => match name.strip_suffix(".json") {
                    Some(key) => (key, false),
                    None => continue,
                },
            };
            if is_key(key) {
                names.push((key.to_string(), failed));
            }
        }
        names.sort();
        let any = Expect::default();
        for (key, failed) in names {
            if failed {
                let path = self.failed_path(&key);
                match read_entry::<Failed>(&path)?.map(|r| {
                    r.and_then(|f| vouch(&key, &f.key, &f.version, &f.spec, any).map(|()| f))
                }) {
                    Some(Ok(f)) => scan.failed.push(f),
                    Some(Err(fault)) => scan.bad.push((path, fault)),
                    None => {}
                }
            } else {
                let path = self.finished_path(&key);
                match read_entry::<Finished<R>>(&path)?.map(|r| {
                    r.and_then(|f| vouch(&key, &f.key, &f.version, &f.spec, any).map(|()| f))
                }) {
                    Some(Ok(f)) => scan.finished.push(f),
                    Some(Err(fault)) => scan.bad.push((path, fault)),
                    None => {}
                }
            }
        }
        scan.bad.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(scan)
    }

    /// Every good finished run in the store, sorted by key; `Err` naming
    /// every bad entry, a line each, when there is one.
    pub fn finished<R: DeserializeOwned>(&self) -> Result<Vec<Finished<R>>, StoreError> {
        let scan = self.scan::<R>()?;
        if !scan.bad.is_empty() {
            return Err(StoreError::Bad(bad_lines(&scan.bad)));
        }
        Ok(scan.finished)
    }

    /// How many failed runs the store holds (files, read or not).
    pub fn failed_count(&self) -> usize {
        std::fs::read_dir(&self.dir).map_or(0, |d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".failed.json"))
                .count()
        })
    }
}

/// Bad entries as lines: `FILE: what is wrong`.
pub fn bad_lines(bad: &[(PathBuf, Fault)]) -> String {
    bad.iter()
        .map(|(p, f)| format!("{}: {f}", p.display()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A key as files are named: 16 hex digits (`canon::hex`).
fn is_key(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The entry at `path` through its seal; `None` when there is no file.
fn read_entry<T: DeserializeOwned>(path: &Path) -> Result<Option<Result<T, Fault>>, StoreError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(entry::open(&bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path, e)),
    }
}

/// Whether an opened entry is the one its name and `expect` call for.
fn vouch(name: &str, key: &str, version: &str, spec: &str, expect: Expect) -> Result<(), Fault> {
    if key != name {
        return Err(Fault::WrongKey(key.to_string()));
    }
    if expect.version.is_some_and(|v| v != version) {
        return Err(Fault::OtherVersion(version.to_string()));
    }
    if expect.spec.is_some_and(|s| s != spec) {
        return Err(Fault::OtherSpec(spec.to_string()));
    }
    Ok(())
}

fn write_sealed<T: Serialize>(path: &Path, v: &T) -> Result<(), StoreError> {
    let text = entry::seal(v).map_err(|e| io(path, e))?;
    report::file::write_atomically(path, text.as_bytes()).map_err(|e| io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(key: &str, results: u32) -> Finished<u32> {
        Finished {
            key: key.into(),
            version: "0".into(),
            spec: "s".into(),
            config: json!({ "n": results }),
            results,
        }
    }

    #[test]
    fn a_run_is_stored_read_back_and_replaces_its_failure() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("s")).unwrap();
        let key = "00000000000000aa";
        assert_eq!(s.state(key), State::Missing);
        assert_eq!(s.get::<u32>(key).unwrap(), None);
        let failed = Failed {
            key: key.into(),
            version: "0".into(),
            spec: "s".into(),
            config: json!({}),
            error: "no".into(),
        };
        s.put_failed(&failed).unwrap();
        assert_eq!((s.state(key), s.failed_count()), (State::Failed, 1));
        assert_eq!(
            s.check::<u32>(key, Expect::default()).unwrap(),
            Checked::Failed(failed)
        );
        s.put_finished(&run(key, 7)).unwrap();
        assert_eq!((s.state(key), s.failed_count()), (State::Finished, 0));
        assert_eq!(s.get::<u32>(key).unwrap(), Some(run(key, 7)));
        assert_eq!(s.finished::<u32>().unwrap(), vec![run(key, 7)]);
        let text = std::fs::read_to_string(s.finished_path(key)).unwrap();
        assert!(text.contains("\"checksum\""), "{text}");
    }

    #[test]
    fn every_bad_entry_is_found_and_named_and_never_read_as_a_result() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let keys = [
            "00000000000000b1",
            "00000000000000b2",
            "00000000000000b3",
            "00000000000000b4",
            "00000000000000b5",
        ];
        for (i, k) in keys.iter().enumerate() {
            s.put_finished(&run(k, 1000 + i as u32)).unwrap();
        }
        let text = |k: &str| std::fs::read_to_string(s.finished_path(k)).unwrap();
        // Cut, emptied, a number changed with its checksum left, copied
        // under another key's name, and one written before checksums.
        let cut = text(keys[0]);
        std::fs::write(s.finished_path(keys[0]), &cut[..cut.len() / 2]).unwrap();
        std::fs::write(s.finished_path(keys[1]), "").unwrap();
        std::fs::write(
            s.finished_path(keys[2]),
            text(keys[2]).replace("1002", "1102"),
        )
        .unwrap();
        std::fs::copy(s.finished_path(keys[4]), s.finished_path(keys[3])).unwrap();
        std::fs::write(
            s.finished_path("00000000000000b6"),
            serde_json::to_string(&run("00000000000000b6", 6)).unwrap(),
        )
        .unwrap();
        let scan = s.scan::<u32>().unwrap();
        assert_eq!(scan.finished, vec![run(keys[4], 1004)]);
        let kinds: Vec<&str> = scan.bad.iter().map(|(_, f)| f.kind()).collect();
        assert_eq!(
            kinds,
            ["truncated", "empty", "tampered", "wrong key", "no checksum"]
        );
        for (i, k) in keys[..4].iter().enumerate() {
            assert_eq!(scan.bad[i].0, s.finished_path(k));
            let e = s.get::<u32>(k).unwrap_err().to_string();
            assert!(e.starts_with(&*s.finished_path(k).to_string_lossy()), "{e}");
            assert!(!e.contains('\n'), "{e}");
            assert!(matches!(
                s.check::<u32>(k, Expect::default()).unwrap(),
                Checked::Bad { .. }
            ));
        }
        let all = s.finished::<u32>().unwrap_err().to_string();
        assert_eq!(all.lines().count(), 5, "{all}");
        assert!(all
            .lines()
            .all(|l| l.starts_with(&*dir.path().to_string_lossy())));
        // A good entry of another spec or version is told apart when asked.
        let want = |spec, version| Expect {
            spec: Some(spec),
            version: Some(version),
        };
        let good = keys[4];
        assert!(matches!(
            s.check::<u32>(good, want("s", "0")).unwrap(),
            Checked::Finished(_)
        ));
        assert!(matches!(
            s.check::<u32>(good, want("t", "0")).unwrap(),
            Checked::Bad {
                fault: Fault::OtherSpec(_),
                ..
            }
        ));
        assert!(matches!(
            s.check::<u32>(good, want("s", "1")).unwrap(),
            Checked::Bad {
                fault: Fault::OtherVersion(_),
                ..
            }
        ));
    }
}

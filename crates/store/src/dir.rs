//! The store: a directory with one file per run, named by its key.
//! `KEY.json` holds a finished run (its configuration and results),
//! `KEY.failed.json` a run that failed and why. Each is written whole or
//! not at all (`report::file`: a temporary file renamed into place), so a
//! run killed at any moment leaves only whole results, and shards on a
//! shared directory never write the same file (their runs differ, or, as
//! `tune`'s baseline every shard needs, are the same deterministic run).
//!
//! What a result holds is the caller's: any serde value (a sweep's
//! figures, `tune`'s point and gaps).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A store could not be read or written. One line each, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
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
    pub config: Value,
    pub results: R,
}

/// A failed run as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failed {
    pub key: String,
    pub version: String,
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

    pub fn state(&self, key: &str) -> State {
        if self.finished_path(key).is_file() {
            State::Finished
        } else if self.failed_path(key).is_file() {
            State::Failed
        } else {
            State::Missing
        }
    }

    /// The finished run under `key`, if stored. A file that does not read
    /// as one, or holds another key, is an error naming it: a result that
    /// cannot be trusted is not silently run again over.
    pub fn get<R: DeserializeOwned>(&self, key: &str) -> Result<Option<Finished<R>>, StoreError> {
        let path = self.finished_path(key);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path, e)),
        };
        let f: Finished<R> = serde_json::from_str(&text).map_err(|e| io(&path, e))?;
        if f.key != key {
            return Err(io(&path, format!("holds key {}, not its name's", f.key)));
        }
        Ok(Some(f))
    }

    /// Stores a finished run, and removes its failure if it had one.
    pub fn put_finished<R: Serialize>(&self, f: &Finished<R>) -> Result<(), StoreError> {
        let path = self.finished_path(&f.key);
        write_json(&path, f)?;
        let failed = self.failed_path(&f.key);
        if failed.exists() {
            std::fs::remove_file(&failed).map_err(|e| io(&failed, e))?;
        }
        Ok(())
    }

    pub fn put_failed(&self, f: &Failed) -> Result<(), StoreError> {
        write_json(&self.failed_path(&f.key), f)
    }

    /// Every finished run in the store, sorted by key. A file that is not
    /// a finished run (a failure, a stray) is skipped; one named as a run
    /// that does not read is an error naming it.
    pub fn finished<R: DeserializeOwned>(&self) -> Result<Vec<Finished<R>>, StoreError> {
        let mut out = Vec::new();
        let entries = std::fs::read_dir(&self.dir).map_err(|e| io(&self.dir, e))?;
        for entry in entries {
            let path = entry.map_err(|e| io(&self.dir, e))?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(key) = name.strip_suffix(".json") else {
                continue;
            };
            if key.len() != 16 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            if let Some(f) = self.get(key)? {
                out.push(f);
            }
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    /// How many failed runs the store holds.
    pub fn failed_count(&self) -> usize {
        std::fs::read_dir(&self.dir).map_or(0, |d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".failed.json"))
                .count()
        })
    }
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), StoreError> {
    let mut text = serde_json::to_string_pretty(v).map_err(|e| io(path, e))?;
    text.push('\n');
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
        s.put_failed(&Failed {
            key: key.into(),
            version: "0".into(),
            config: json!({}),
            error: "no".into(),
        })
        .unwrap();
        assert_eq!((s.state(key), s.failed_count()), (State::Failed, 1));
        s.put_finished(&run(key, 7)).unwrap();
        assert_eq!((s.state(key), s.failed_count()), (State::Finished, 0));
        assert_eq!(s.get::<u32>(key).unwrap(), Some(run(key, 7)));
        assert_eq!(s.finished::<u32>().unwrap(), vec![run(key, 7)]);
    }

    #[test]
    fn a_corrupt_or_misnamed_file_is_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let key = "00000000000000bb";
        std::fs::write(s.finished_path(key), "{ not json").unwrap();
        let e = s.get::<u32>(key).unwrap_err().to_string();
        assert!(
            e.starts_with(&s.finished_path(key).display().to_string()),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        s.put_finished(&run("00000000000000cc", 1)).unwrap();
        std::fs::rename(s.finished_path("00000000000000cc"), s.finished_path(key)).unwrap();
        assert!(s
            .get::<u32>(key)
            .unwrap_err()
            .to_string()
            .contains("holds key"));
    }
}

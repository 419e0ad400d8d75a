//! The store: a directory with one file per point, named by its key.
//! `KEY.json` holds a finished point (its configuration and results),
//! `KEY.failed.json` a point that failed and why. Each is written whole or
//! not at all (`report::file`: a temporary file renamed into place), so a
//! sweep killed at any moment leaves only whole results, and shards on a
//! shared directory never write the same file (their points differ).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A store could not be read or written. One line each.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
}

fn io(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// One job's latency in a point's run (reads and writes together: the
/// worse of its directions at each percentile).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    /// fio's job name and clone index.
    pub name: String,
    pub clone: usize,
    pub iops: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

/// What a finished point measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub interrupts_per_sec: f64,
    /// All jobs' reads and writes per second.
    pub iops: f64,
    /// The worst job's p50 and p99 completion latency, ns: the job a
    /// strategy hurts most is the one a front is drawn for (TOS's mixed
    /// workload: the synchronous reader beside the batch).
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// The workload cores' busy share (user, kernel and interrupt time),
    /// their mean, in [0, 1].
    pub cpu: f64,
    pub jobs: Vec<JobResult>,
}

impl Results {
    /// The numbers a sweep keeps of a run.
    pub fn of(r: &report::RunReport) -> Results {
        let jobs: Vec<JobResult> = r
            .jobs
            .iter()
            .map(|j| {
                let at = |p: f64| j.read.clat.percentile(p).max(j.write.clat.percentile(p));
                JobResult {
                    name: j.name.clone(),
                    clone: j.clone_index,
                    iops: finite(r.iops(&j.read) + r.iops(&j.write)),
                    p50_ns: at(50.0),
                    p99_ns: at(99.0),
                }
            })
            .collect();
        let cpu = if r.cores.is_empty() {
            0.0
        } else {
            r.cores.iter().map(|c| 1.0 - c.idle).sum::<f64>() / r.cores.len() as f64
        };
        Results {
            interrupts_per_sec: finite(r.interrupts_per_sec()),
            iops: finite(r.total_iops()),
            p50_ns: jobs.iter().map(|j| j.p50_ns).max().unwrap_or(0),
            p99_ns: jobs.iter().map(|j| j.p99_ns).max().unwrap_or(0),
            cpu: finite(cpu),
            jobs,
        }
    }
}

/// `x`, or 0 where it is NaN or infinite (JSON has neither).
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// A finished point as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    pub key: String,
    /// The program version the key was made with.
    pub version: String,
    pub config: Value,
    pub results: Results,
}

/// A failed point as stored.
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

    /// Stores a finished point, and removes its failure if it had one.
    pub fn put_finished(&self, f: &Finished) -> Result<(), StoreError> {
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

    /// Every finished point in the store, sorted by key. A file that is
    /// not a finished point (a failure, a stray) is skipped; one named as
    /// a point that does not read is an error naming it.
    pub fn finished(&self) -> Result<Vec<Finished>, StoreError> {
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
            let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
            let f: Finished = serde_json::from_str(&text).map_err(|e| io(&path, e))?;
            if f.key != key {
                return Err(io(&path, format!("holds key {}, not its name's", f.key)));
            }
            out.push(f);
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    /// How many failed points the store holds.
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

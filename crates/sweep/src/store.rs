//! What a sweep keeps of a point: its figures. The store itself (a
//! directory of one `KEY.json` per finished point and `KEY.failed.json`
//! per failure, each written whole or not at all, each sealed with its
//! spec's identity, its code version and a checksum: `store::entry`) is
//! the `store` crate's, shared with `tune`.

use serde::{Deserialize, Serialize};

pub use ::store::{Failed, State, Store, StoreError};

/// The store when none is given: beside the spec, so the same spec finds
/// its results again from any working directory.
pub const DEFAULT_STORE: &str = "sweep-store";

/// `store`, else [`DEFAULT_STORE`] beside `spec`.
pub fn store_dir(spec: &std::path::Path, store: Option<&std::path::Path>) -> std::path::PathBuf {
    store.map(std::path::Path::to_path_buf).unwrap_or_else(|| {
        spec.parent()
            .unwrap_or(std::path::Path::new("."))
            .join(DEFAULT_STORE)
    })
}

/// A finished point as stored: its key, version, configuration and
/// [`Results`].
pub type Finished = ::store::Finished<Results>;

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

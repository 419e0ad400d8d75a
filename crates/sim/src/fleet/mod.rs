//! Volumes and queues (issue 41 item 4): a multi-volume trace's requests
//! taken to the replay by a stated rule, and `--per-volume`: each volume
//! replayed on a device of its own, the volumes in parallel (rayon), with
//! a per-volume table and a fleet summary ([`summary`]).
//!
//! **Volumes to devices.** A trace's `device` field names the volume
//! (Alibaba's and Tencent's volume id, MSR's host and disk, blkparse's
//! `major,minor`). Without `--per-volume` every volume's requests go to
//! the one modelled device (its namespaces sharing the controller's
//! queues); with it, each volume is a device of its own (its own
//! controller, queues and interrupt vectors), replayed alone. Requests
//! without a volume are the volume `-`.
//!
//! **Requests to queues** ([`QueuesBy`]). The simulator has one SQ/CQ pair
//! per core, as Linux's nvme-pci one I/O queue per CPU (sim's README,
//! "Device"), and the replay runs one thread per group of requests, group
//! `i` (in order of first appearance) on core `i mod cores`
//! ([`crate::replay`]); the rule names the group: the issuing process (the
//! default, as the replay has always done), the CPU the trace recorded
//! (blkparse, blktrace: the queue the request really went to), or the
//! volume (a namespace per volume, each its own queue).
//!
//! **Memory.** The trace is read once and each volume's requests spilled
//! to a compact file of its own ([`mod@spill`]); then each volume's file is
//! loaded and replayed, one per rayon thread at a time: the memory held is
//! the spill's buffer plus, per thread, the volume being replayed.

pub mod spill;
pub mod summary;

use rayon::prelude::*;
use report::RunReport;
use traces::{Request, TraceError};

pub use crate::replay::ingest::{collect, stream, volume_of, QueuesBy};
use crate::replay::ingest::{trace_io, Groups};
use crate::replay::{Drift, Loop, TraceIo};
use crate::trace_marks::Marker;
use crate::{SimConfig, SimError};
pub use spill::{Spill, Spilled, VolumeFile};
pub use summary::{Dist, Fleet, Run, StrategySummary, VolumeRow};

/// The requests (`comm`'s only, if given) split by volume into spill files.
pub fn spill(
    requests: impl Iterator<Item = Result<Request, TraceError>>,
    comm: Option<&str>,
    by: QueuesBy,
    marker: &mut Marker,
) -> Result<Spilled, String> {
    let mut groups = Groups::default();
    let mut spill = Spill::new()?;
    for r in requests {
        let r = r.map_err(|e| e.to_string())?;
        if comm.is_some_and(|c| r.comm.as_deref() != Some(c)) {
            continue;
        }
        let io = trace_io(&r, by, &mut groups, marker);
        spill.push(volume_of(&r), &io)?;
    }
    spill.finish()
}

/// One trace's replay: the one place the fleet calls the replay, so that
/// the replay's stream API replaces the held requests here alone.
pub fn replay(
    ios: Vec<TraceIo>,
    mode: Loop,
    config: &SimConfig,
) -> Result<(RunReport, Drift), SimError> {
    crate::replay::simulate_trace(ios, mode, config, &mut |_, _| {})
        .map(|(report, _, drift)| (report, drift))
}

/// A strategy of the fleet, with the configuration it runs on.
#[derive(Clone, Debug)]
pub struct Strategy {
    pub name: String,
    pub config: SimConfig,
}

/// Every volume replayed under every strategy (`default` first), the
/// volumes in parallel: the table and summary, or the first volume's
/// error naming it.
pub fn replay_volumes(
    spilled: &Spilled,
    strategies: &[Strategy],
    mode: Loop,
    by: QueuesBy,
) -> Result<Fleet, String> {
    let rows = spilled
        .volumes
        .par_iter()
        .map(|v| -> Result<VolumeRow, String> {
            let ios = v.load()?;
            let mut runs = Vec::with_capacity(strategies.len());
            for s in strategies {
                let (report, _) = replay(ios.clone(), mode, &s.config)
                    .map_err(|e| format!("volume {}: {}: {e}", v.name, s.name))?;
                runs.push(Run {
                    strategy: s.name.clone(),
                    completed: report.completed_ios(),
                    iops: report.total_iops(),
                    interrupts: report.interrupts,
                    p99_ns: report.clat_all.as_ref().map_or(0, |l| l.percentile(99.0)),
                });
            }
            Ok(VolumeRow {
                volume: v.name.clone(),
                requests: v.requests,
                runs,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Fleet::new(
        strategies.iter().map(|s| s.name.clone()).collect(),
        by.rule().to_string(),
        rows,
    ))
}

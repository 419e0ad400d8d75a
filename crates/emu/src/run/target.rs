//! What a run executes its commands on: `--backend`, or the one file every
//! job's `filename=` names; and the safety rules for both (issue 12).
//!
//! - Nothing is ever created or laid out under `/dev`.
//! - A block device is written only with `allow_device_write`
//!   (`--allow-device-write`): fio guards mounted devices the same way
//!   (`allow_mounted_write`, fio's HOWTO), and here a raw drive's data is
//!   lost whether or not it is mounted.
//! - A device a job file names (the shipped examples say
//!   `filename=/dev/nvme0n1`, the paper's drive) is not used unless
//!   `allow_device_write` says so: the run goes to [`STAND_IN`] instead and
//!   says so. The same command then does the same thing on every machine,
//!   with or without that drive; a refusal would make every shipped example
//!   fail without a `--backend`.
//! - A `filename=` that cannot hold data (a directory, a character device,
//!   a procfs file) is refused naming the job's line and the option.

use std::path::PathBuf;

use jobs::Job;

use crate::backend::path::{inspect, under_dev, Found};
use crate::backend::{BackendSpec, Kind};
use crate::config::EmuConfig;
use crate::error::EmuError;

/// The backend a run uses instead of a device its job file names: the
/// README's reference device, a 10 us null device (the paper's fast SSD,
/// "a 10 us device") with null_blk's default depth of 64.
pub const STAND_IN: &str = "null:10us";

/// The backend of jobs on fio's `null` engine, which completes every
/// request at once (engines/null.c): the null device with no latency.
pub const NULL_ENGINE: &str = "null:0ns";

/// The chosen backend.
#[derive(Clone, Debug)]
pub struct Target {
    pub spec: BackendSpec,
    /// Set when the job file names a device and the run uses [`STAND_IN`]
    /// instead, to be said in the run's output.
    pub stand_in: Option<StandIn>,
}

/// Why the run is not on the device its job file names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandIn {
    /// The line of the job's section.
    pub line: usize,
    /// `job 'x': option 'filename': ...`, one line.
    pub text: String,
}

impl std::fmt::Display for StandIn {
    /// Without the job file's name, which the library does not know.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.text)
    }
}

fn job_error(job: &Job, reason: String) -> EmuError {
    EmuError::Job(jobs::Refused::new(job, reason))
}

/// `--backend`, else the one file every job names, under the rules above.
pub fn choose(jobs: &[Job], cfg: &EmuConfig) -> Result<Target, EmuError> {
    // fio's cpuio engine burns CPU and does no I/O; the emulator runs no
    // such thread (the simulator does: `cinterrupts sim`).
    if let Some(cpu) = jobs.iter().find(|j| j.ioengine.is_noio()) {
        return Err(job_error(
            cpu,
            "option 'ioengine': cpuio is not emulated (no CPU-burning thread in `cinterrupts run`); `cinterrupts sim` runs it".into(),
        ));
    }
    // fio's sqthread_poll: a kernel thread takes the SQEs and the job's
    // thread spins on its CQ ring (engines/io_uring.c). The emulator's job
    // workers submit into the driver themselves; no SQ thread is emulated
    // (`cinterrupts sim` models it: host::uring's SQPOLL).
    if let Some(j) = jobs.iter().find(|j| j.uring.sqthread_poll) {
        return Err(job_error(
            j,
            "option 'sqthread_poll': a kernel SQ polling thread is not emulated (the job's thread submits into the driver); `cinterrupts sim` models it".into(),
        ));
    }
    let writer = jobs.iter().find(|j| j.rw.writes());
    if let Some(spec) = &cfg.backend {
        if let Kind::File { path } = &spec.kind {
            let refuse = |why: String| EmuError::Config(format!("--backend '{spec}': {why}"));
            match inspect(path).map_err(|e| refuse(e.to_string()))? {
                Found::Block => {
                    if let (Some(w), false) = (writer, cfg.allow_device_write) {
                        return Err(refuse(format!(
                            "job '{}' (line {}) writes (rw={}), and writing a block device destroys its data; pass --allow-device-write if that is meant",
                            w.name, w.section_line, w.rw
                        )));
                    }
                }
                _ if under_dev(path) => {
                    return Err(refuse(
                        "not a block device, and nothing is ever created or laid out under /dev"
                            .into(),
                    ))
                }
                Found::Unusable(what) => {
                    return Err(refuse(format!(
                        "{what}; the emulator runs on a regular file or a block device"
                    )))
                }
                Found::Regular { .. } | Found::Missing => {}
            }
        }
        return Ok(Target {
            spec: spec.clone(),
            stand_in: None,
        });
    }

    let first = &jobs[0];
    // fio's null engine has no file and no device: every request completes
    // at once (engines/null.c). Its requests go to the null backend with no
    // latency; a file a null job names is not opened, as fio does not.
    if jobs.iter().all(|j| j.ioengine == jobs::Engine::Null) {
        return Ok(Target {
            spec: BackendSpec::parse(NULL_ENGINE).expect("the null engine's backend parses"),
            stand_in: None,
        });
    }
    if let Some(null) = jobs.iter().find(|j| j.ioengine == jobs::Engine::Null) {
        return Err(job_error(
            null,
            "option 'ioengine': null beside jobs on a file or device: the emulator runs one device; pass --backend".into(),
        ));
    }
    let Some(name) = first.filename.clone() else {
        return Err(job_error(
            first,
            "no filename= to run on; give one or pass --backend file:PATH or null:10us".into(),
        ));
    };
    if let Some(other) = jobs.iter().find(|j| j.filename.as_deref() != Some(&name)) {
        return Err(job_error(
            other,
            format!(
                "option 'filename': {} differs from '{name}': the emulator runs one device; pass --backend",
                other.filename.as_deref().unwrap_or("(none)")
            ),
        ));
    }
    let path = match &first.directory {
        Some(dir) if !name.starts_with('/') => PathBuf::from(format!("{dir}/{name}")),
        _ => PathBuf::from(&name),
    };
    let shown = path.display();
    let found =
        inspect(&path).map_err(|e| job_error(first, format!("option 'filename': {shown}: {e}")))?;
    let device = found == Found::Block || under_dev(&path);
    match found {
        Found::Block if cfg.allow_device_write => Ok(Target {
            spec: BackendSpec::file(&path),
            stand_in: None,
        }),
        Found::Unusable(what) => Err(job_error(
            first,
            format!(
                "option 'filename': {shown} is {what}; the emulator runs on a regular file or a block device"
            ),
        )),
        _ if device => {
            let spec = BackendSpec::parse(STAND_IN).expect("the stand-in parses");
            let how = match found {
                Found::Block => "a block device",
                Found::Missing => "a device this machine does not have",
                _ => "a file under /dev (in RAM)",
            };
            Ok(Target {
                stand_in: Some(StandIn {
                    line: first.section_line,
                    text: format!(
                        "job '{}': option 'filename': {shown} names {how}: running on the null backend {spec} instead; pass --backend file:PATH or null:LATENCY to choose{}",
                        first.name,
                        if found == Found::Block {
                            ", or --allow-device-write to run on the device (its data is overwritten if the jobs write)"
                        } else {
                            ""
                        }
                    ),
                }),
                spec,
            })
        }
        Found::Block | Found::Regular { .. } | Found::Missing => Ok(Target {
            spec: BackendSpec::file(&path),
            stand_in: None,
        }),
    }
}

/// Whether the emulator applies io_uring strategy `s` (the others are
/// refused by the run, with the reason: task-work and defer-taskrun
/// differ only in where the kernel runs task work, which the emulator's
/// handler does not model; sqpoll needs an SQ thread).
pub fn uring_emulated(s: host::uring::Strategy) -> bool {
    use host::uring::Strategy;
    matches!(
        s,
        Strategy::MinComplete | Strategy::MinWait(_) | Strategy::IoPoll
    )
}

/// The jobs as the run's io_uring strategy (`run --uring`, `host::uring`)
/// runs them, or why it cannot: min-complete and min-wait are the job
/// threads' own ([`crate::worker`]); iopoll is fio's `hipri`, so each
/// io_uring job polls a poll queue (as the simulator maps it); task-work
/// and defer-taskrun differ from min-complete only in where the kernel
/// runs a completion's work, which the emulator's handler, delivering
/// straight to the waiter, cannot tell apart; sqpoll needs an SQ thread,
/// which is not emulated (as `sqthread_poll=1`).
pub(crate) fn uring_jobs(jobs: &[Job], cfg: &EmuConfig) -> Result<Vec<Job>, EmuError> {
    use host::uring::Strategy;
    let mut out = jobs.to_vec();
    let Some(s) = cfg.uring else {
        return Ok(out);
    };
    let refuse = |why: &str| {
        EmuError::Config(format!(
            "--uring {s}: {why}; `cinterrupts sim --uring {s}` models it"
        ))
    };
    match s {
        Strategy::MinComplete | Strategy::MinWait(_) => {}
        Strategy::TaskWork | Strategy::DeferTaskrun => {
            return Err(refuse(
                "the emulator's handler delivers each completion to the waiting thread itself, so where the kernel runs its task work (and whom that wakes) is not emulated: it would run as min-complete",
            ))
        }
        Strategy::SqPoll => {
            return Err(refuse(
                "a kernel SQ polling thread is not emulated (the job's thread submits into the driver)",
            ))
        }
        Strategy::IoPoll => {
            for j in out.iter_mut().filter(|j| j.ioengine == jobs::Engine::IoUring) {
                j.hipri = true;
            }
        }
    }
    Ok(out)
}

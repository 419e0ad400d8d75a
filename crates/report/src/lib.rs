//! The results of one run of a workload, from the simulator (`mode = "sim"`)
//! or the emulator (`mode = "emu"`), and how they are shown: fio-like text and
//! fio-shaped JSON, so that scripts written for fio read ours.
//!
//! The run produces a [`RunReport`] (plain data); [`text`] and [`json`] render
//! it. Both front ends fill the same structure, so their outputs cannot drift.

pub mod cpu;
pub mod doc;
pub mod field;
pub mod file;
pub mod gaps;
pub mod human;
pub mod json;
pub mod latency;
pub mod made_by;
pub mod progress;
pub mod readback;
pub mod schema;
pub mod svg;
pub mod text;

use serde::{Deserialize, Serialize};

pub use cpu::{Counters, CpuParts};
pub use field::{Field, OracleFloor};
pub use gaps::Gaps;
pub use latency::LatencyStats;
pub use made_by::MadeBy;
pub use schema::{ByMark, Cinterrupts, Delivery, Document, Kind, RunPart, SCHEMA_VERSION};

/// Where the numbers came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// The discrete-event simulator (virtual time).
    Sim,
    /// The emulator on real I/O.
    Emu,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sim => "sim",
            Mode::Emu => "emu",
        }
    }
}

/// The interrupt strategy and the parameters it ran with, typed, as the
/// policy crate states them (`policy::Settings::of(spec)`).
pub type PolicyInfo = policy::Settings;

/// One direction (reads or writes) of one job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirReport {
    /// Completed I/Os in the measured window.
    pub io_ops: u64,
    pub io_bytes: u64,
    /// Completion latency: submission to the job seeing the completion, as
    /// fio's clat for these engines.
    pub clat: LatencyStats,
    /// I/Os that completed with an error.
    pub errors: u64,
    /// The job's own run time when it ended before the measured window did
    /// (a size-bounded job beside longer ones): fio divides each job by its
    /// own `runtime` (stat.c `show_ddir_status`: `bw = io_bytes / runtime`),
    /// not the group's. `None`: the whole window.
    pub run_ns: Option<u64>,
}

/// One job (one clone of a job-file section).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobReport {
    /// fio's `jobname`: the section name.
    pub name: String,
    /// Which clone of the section (0..numjobs).
    pub clone_index: usize,
    /// `ioengine`.
    pub engine: String,
    /// The cores the job's thread may run on.
    pub cpus: Vec<usize>,
    pub read: DirReport,
    pub write: DirReport,
    /// CPU time of the job's thread in the measured window, ns: user and
    /// kernel (system calls; interrupts are accounted to the core, not here).
    pub usr_ns: u64,
    pub sys_ns: u64,
    /// Times the thread was switched in.
    pub ctx: u64,
    /// Emulator only: voluntary and involuntary context switches (getrusage).
    pub ctx_voluntary: Option<u64>,
    pub ctx_involuntary: Option<u64>,
    /// Emulator only: the verify pass of a job with `verify=crc32c`.
    pub verify: Option<VerifyReport>,
    /// Simulator only: the job's fsyncs (fio's `fsync=N`/`fdatasync=N`),
    /// if it makes any.
    pub sync: Option<SyncReport>,
}

/// A job's fsync (or fdatasync) calls: fio's `sync` latency (the call
/// alone, from entry to return; the writes are in `write`), and where the
/// time went (FastResponse, FR Fig. 5b, 15b).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncReport {
    /// fio's `sync.lat_ns`; `samples` is fio's `sync.total_ios`.
    pub lat: LatencyStats,
    pub breakdown: FsyncBreakdown,
}

/// Per fsync, averaged over the job's fsyncs in the measured window: the
/// time waiting for each of FR's I/Os (D1 the file's data, D2 other files'
/// data, JD the journal blocks, JC the commit block; under fjournaling JD
/// and JC are the f-transaction's header and commit), and for the CPU after
/// a wake-up of JBD2 or the caller (T_Sched), us; context switches and
/// device I/Os per fsync.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FsyncBreakdown {
    /// `ordered` or `fjournal`.
    pub journal: String,
    pub fsyncs: u64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub d1_us: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub d2_us: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub jd_us: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub jc_us: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub sched_us: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub switches_per_fsync: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub ios_per_fsync: f64,
}

/// Blocks read back and checked after a job's writes (fio's verify phase).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyReport {
    pub blocks: u64,
    pub mismatches: u64,
    /// The first bad block and why, if any.
    pub first_mismatch: Option<String>,
}

/// How one core spent the measured window, in fractions of 1 that sum to 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoreUtil {
    pub core: usize,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub user: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub kernel: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub irq: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub idle: f64,
}

/// Emulator only: what the device raised on the interrupt lines in the
/// measured window (the interrupts delivered are `RunReport::interrupts`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IrqLineReport {
    /// `ipi`: the authors' emulator, one IPI per fire, never merged, the
    /// device's poller waiting for the call slot; `apic`: a pending line
    /// that merges.
    pub delivery: String,
    /// Fires of the policy, each an interrupt raised.
    pub raised: u64,
    /// Raises that merged into one still pending (0 with `ipi`).
    pub merged: u64,
    /// Fires that found the call slot taken, and the time the device
    /// waited for it, ns.
    pub slot_waits: u64,
    pub slot_wait_ns: u64,
}

/// FastResponse's read-path breakdown of one job (FR 2.2 Fig 5a, 4.4 Fig
/// 15a), averaged over the requests it completed in the measured window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobPath {
    /// Requests the means are over.
    pub requests: u64,
    /// T_Dev: from the request reaching the device (the doorbell; a split
    /// request's first piece) to the device finishing it (its last piece).
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub t_dev_mean_ns: f64,
    /// T_Sched: from the interrupt handler waking the job's thread for it to
    /// the thread running again (its switch-in done); 0 for a request whose
    /// thread was not asleep for it (polled, or already running).
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub t_sched_mean_ns: f64,
    /// Where the time of the requests that reached the device went, from
    /// the submit call to the return of the call that took it (the
    /// simulator's; `None` from the emulator).
    pub parts: Option<PathParts>,
    /// The same over the job's slowest 1% of those requests (at or above
    /// its 99th percentile of issue-to-return time).
    pub tail: Option<PathParts>,
}

/// One request's path split at its stages, as means over a set of
/// requests (ns; a split request counts from its first piece at the device
/// to its last piece done). `clat = submit + queue + service + deliver +
/// after`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PathParts {
    pub requests: u64,
    /// The submit call's start to the call's return, as fio's clat.
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub clat: f64,
    /// The submit call's start to the doorbell (the call, and a block
    /// layer's hold).
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub submit: f64,
    /// The doorbell to a device unit starting it (the device's queue, and
    /// its rate ceiling).
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub queue: f64,
    /// The unit's service.
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub service: f64,
    /// The device finishing it to an interrupt handler (or a poller)
    /// handing it to its thread: the interrupt's wait.
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub deliver: f64,
    /// Handed over to the call's return: the rest of the handler, the
    /// wake-up and T_Sched, the call's own return path.
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub after: f64,
    /// Commands at the device when it arrived (those ahead of it in the
    /// queue or in service).
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub depth_at_arrival: f64,
    /// Commands left at the device when it finished (those that can still
    /// complete and count toward a coalescing threshold).
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub depth_at_done: f64,
}

/// Requests at the device (submitted, not yet finished by it; a block
/// layer's pieces each count), weighted by time over the measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueDepth {
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub mean: f64,
    /// The depth the device was at or below 99% of the window.
    pub p99: u64,
    pub max: u64,
}

/// Where the requests' time went, and how deep the device's queue was.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoPath {
    /// One per job clone, in the order of `RunReport::jobs`.
    pub jobs: Vec<JobPath>,
    pub device_queue: QueueDepth,
}

/// Everything one run measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub mode: Option<Mode>,
    /// Not kept when a report is stored: its parameter names are the
    /// catalogue's own strings. Who reads a report back sets it from the
    /// policy that ran (`PolicyInfo::of`).
    #[serde(skip)]
    pub policy: PolicyInfo,
    /// Device profile or backend (`optane`, `null:10us`).
    pub device: String,
    /// Host profile (simulator) or machine description (emulator).
    pub host: String,
    /// The simulator's seed.
    pub seed: Option<u64>,
    /// Which kernel's default marks the jobs ran with (`table1`, `basis`,
    /// or both in job order: `jobs::default_marks_of`); `None` when the
    /// front end did not say.
    pub default_marks: Option<String>,
    /// Length of the measured window (after `ramp_time`), ns.
    pub duration_ns: u64,
    pub jobs: Vec<JobReport>,
    /// Interrupts delivered to the host, of which urgent-only (OOO).
    pub interrupts: u64,
    pub urgent_only_interrupts: u64,
    /// Completions those interrupts delivered.
    pub completions: u64,
    /// Emulator only: interrupts raised, merged, and the call-slot waits.
    pub irq_line: Option<IrqLineReport>,
    /// Emulator only: device raise to handler start, measured, over the
    /// interrupts of the window (`None` without any).
    pub delivery: Option<Delivery>,
    /// The requests completed in the window by their mark (the simulator:
    /// those an interrupt delivered).
    pub completions_by_mark: Option<ByMark>,
    /// Context switches on the workload cores.
    pub context_switches: u64,
    /// Time between consecutive completions posted to the same CQ, for the
    /// completions posted in the measured window (TOS 5.2, Fig 18). `None`
    /// when the front end did not record them or nothing was posted twice.
    pub completion_gaps: Option<Gaps>,
    /// The workload cores.
    pub cores: Vec<CoreUtil>,
    /// Simulator only: where a request's time goes (FastResponse's read-path
    /// breakdown, FR 2.2 Fig 5a) and the device's queue depth (FR Fig 16).
    /// `None` when the front end did not measure them.
    pub io_path: Option<IoPath>,
    /// Simulator, application runs only (`sim::simulate_app`): the
    /// operations the application models finished and each used core's
    /// window. `None` for a job file's run.
    pub apps: Option<AppsReport>,
    /// Emulator, `run --uring` only: how the io_uring jobs' threads waited
    /// for their completions (`host::uring`).
    pub uring: Option<UringReport>,
    /// Simulator only: the cores' busy time by cause, shown per I/O in ns
    /// and cycles ([`cpu`]).
    #[serde(default)]
    pub cpu_parts: Option<CpuParts>,
    /// `run` and `exec`: what `perf_event_open` counted (cycles,
    /// instructions, task clock), shown per I/O ([`cpu`]).
    #[serde(default)]
    pub counters: Option<Counters>,
    /// Lines worth telling the user (ignored options, measured costs, ...).
    pub notes: Vec<String>,
    /// Simulator, with idle states on (issue 37 item 2): what the used
    /// cores' idle periods cost. Absent (and left out of the JSON) with
    /// C-states off, as every shipped profile runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleReport>,
    /// Simulator only: the threads made runnable after sleeping in the
    /// window, every thread of the run (issue 40 item 4: wake-ups per
    /// I/O, [`field`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeups: Option<u64>,
    /// Simulator only: the completion latency over every I/O of every job
    /// (the jobs' histograms merged), for the field's p50/p99/p99.9.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clat_all: Option<LatencyStats>,
    /// A trace's replay only (`sim --trace`): the oracle floor beside the
    /// run ([`field::OracleFloor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle: Option<field::OracleFloor>,
    /// What made the run, when it was taken at the run's end and kept
    /// with it (a stored run read back says what made it then, not what
    /// renders it now: issue 42 item 1). `None`: the JSON takes
    /// [`made_by::current`] when it is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_by: Option<MadeBy>,
}

/// The used cores' idle states in the measured window (`host::cpuidle`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleReport {
    /// The table (`icx`), the governor (`menu`) and the latency limit in
    /// force at most (ns; absent without a limit).
    pub states: String,
    pub governor: String,
    pub latency_limit_ns: Option<u64>,
    /// Exit latency paid before a handler or a woken thread ran, ns, every
    /// used core's.
    pub idle_exit_ns: u64,
    /// Wake-ups that paid an exit latency (entries left in the window).
    pub exits: u64,
    /// Per state, shallowest first.
    pub by_state: Vec<IdleStateReport>,
}

/// One idle state's share of the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleStateReport {
    pub name: String,
    pub exit_latency_ns: u64,
    pub target_residency_ns: u64,
    /// Idle periods spent (or ended) in it.
    pub entries: u64,
    /// Time spent in it, ns.
    pub residency_ns: u64,
    /// Exit latency paid leaving it, ns.
    pub exit_ns: u64,
}

/// The io_uring jobs' waits under `run --uring STRATEGY`, in the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UringReport {
    /// As `--uring` reads it back (`min-wait=50us,nr=4`).
    pub strategy: String,
    /// Completions the io_uring jobs took.
    pub ios: u64,
    /// Their threads' sleeps in the completion call that ended.
    pub wakeups: u64,
    /// min-wait: waits in which its timer fired (ending the wait, or with
    /// nothing there, leaving it to the first completion or the timeout).
    pub timeouts: u64,
}

/// An application run's own measurements (issue 16, TOS 5.4-5.5): its
/// operations per instance and kind, and per core where the window went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AppsReport {
    /// One per (instance, kind, foreground or background) that finished an
    /// operation in the window, by instance, then foreground first, then
    /// kind.
    pub ops: Vec<OpReport>,
    /// The cores that ran an application thread, in order.
    pub cores: Vec<CoreReport>,
}

/// The operations of one kind one instance finished in the measured window
/// (an operation counts where its end falls).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpReport {
    /// The instance's index in the application file, and its name.
    pub instance: usize,
    pub name: String,
    /// YCSB's or db_bench's word (`read`, `update`, `write-batch`, ...).
    pub kind: String,
    /// Finished by the instance's background threads (RocksDB's flush):
    /// kept apart from the operations the experiment measures.
    pub background: bool,
    pub ops: u64,
    /// Items the operations covered (a scan's keys, a batch's keys).
    pub items: u64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub ops_per_sec: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub items_per_sec: f64,
    /// Latency from the operation's start to its end, ns (fio's 17
    /// percentiles: p50, p99 and p99.9 among them).
    pub lat: LatencyStats,
    /// The latency's CDF at [`latency::CDF_PERCENTILES`]: (percentile, ns).
    pub cdf: Vec<(f64, u64)>,
}

/// How one core spent the measured window (fractions of 1 that sum to 1),
/// and the device interrupts it took and the threads switched in on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoreReport {
    pub core: usize,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub user: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub kernel: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub irq: f64,
    #[serde(deserialize_with = "crate::readback::nan_if_null")]
    pub idle: f64,
    pub interrupts: u64,
    pub context_switches: u64,
}

impl RunReport {
    fn seconds(&self) -> f64 {
        self.duration_ns as f64 / 1e9
    }

    /// `ns` as a fraction of the measured window (0 for an empty window).
    pub fn share_of_window(&self, ns: u64) -> f64 {
        if self.duration_ns == 0 {
            0.0
        } else {
            ns as f64 / self.duration_ns as f64
        }
    }

    pub fn interrupts_per_sec(&self) -> f64 {
        per_sec(self.interrupts, self.seconds())
    }

    /// Completions delivered per interrupt (0 when there were none).
    pub fn completions_per_interrupt(&self) -> f64 {
        schema::per_interrupt(self.completions, self.interrupts)
    }

    pub fn iops(&self, dir: &DirReport) -> f64 {
        per_sec(dir.io_ops, self.run_ns(dir) as f64 / 1e9)
    }

    /// How long one direction of one job ran: its own run time, or the
    /// measured window.
    pub fn run_ns(&self, dir: &DirReport) -> u64 {
        dir.run_ns.unwrap_or(self.duration_ns)
    }

    /// Bytes per second in one direction, as fio's `bw_bytes`.
    pub fn bw_bytes(&self, dir: &DirReport) -> u64 {
        let run = self.run_ns(dir);
        if run == 0 {
            return 0;
        }
        // u128: io_bytes * 1e9 overflows u64 past 18 GB.
        let bw = u128::from(dir.io_bytes) * u128::from(policy::SEC) / u128::from(run);
        u64::try_from(bw).unwrap_or(u64::MAX)
    }

    /// The jobs that failed, a line each: I/O errors or verify mismatches.
    /// As fio, a run with any fails.
    pub fn failures(&self) -> Vec<String> {
        self.jobs
            .iter()
            .filter_map(|j| {
                let errors = j.read.errors + j.write.errors;
                let mismatches = j.verify.as_ref().map_or(0, |v| v.mismatches);
                (errors + mismatches > 0).then(|| {
                    format!(
                        "job '{}': {errors} I/O errors, {mismatches} verify mismatches",
                        j.name
                    )
                })
            })
            .collect()
    }

    /// All jobs' read plus write IOPS.
    /// I/Os completed in the measured window, all jobs and directions: 0
    /// means the run measured nothing (issue 12 item 11).
    pub fn completed_ios(&self) -> u64 {
        self.jobs
            .iter()
            .map(|j| j.read.io_ops + j.write.io_ops)
            .sum()
    }

    pub fn total_iops(&self) -> f64 {
        per_sec(self.completed_ios(), self.seconds())
    }
}

fn per_sec(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

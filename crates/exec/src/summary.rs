//! `exec`'s report as the JSON has it: the `cinterrupts` object every
//! report shares (`report::Cinterrupts`: interrupts, completions,
//! delivery, marks under `run`'s keys) with `exec`'s own part under
//! `exec` (the program, its processes, what was routed and how, the
//! calls by family, where the data lived).

use serde::{Deserialize, Serialize};

use report::{Cinterrupts, Kind, SCHEMA_VERSION};

use crate::counts::{ByMark, Calls, Hybrid};
use crate::record::{Boosted, Record};
use crate::route::Routed;
use crate::run::{Options, Outcome, Status};

/// A process that outlived the program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outlived {
    pub pid: i32,
    pub comm: String,
}

/// What only `exec` has (`cinterrupts.exec`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecPart {
    pub program: String,
    pub status: ExitReport,
    /// `exec` received a signal and passed it on: the figures stop there.
    pub partial: bool,
    pub interrupted_by: Option<Interrupted>,
    /// The program did not end after the signal passed on, and was killed.
    pub killed_after_signal: Option<crate::signals::Escalated>,
    /// Ways to the disk that did not pass through the library, by kind and
    /// process (issue 24 item 2).
    pub not_routed: Vec<crate::watch::NotRouted>,
    /// Processes the program started that outlived it (a daemon's double
    /// fork), which exec waited for, their I/O routed, before this report.
    pub outlived: Vec<Outlived>,
    /// `--io-uring`: `pass` (the program's rings are the kernel's, named
    /// in `not_routed`) or `refuse` (every `io_uring_setup` fails with
    /// ENOSYS, each named in `not_routed` as "io_uring refused").
    pub io_uring: String,
    /// What this `exec` could not do here (not root), each said on stderr.
    pub limits: Vec<String>,
    pub warnings: Vec<String>,
    pub rules: Vec<String>,
    /// What RWF 0x20 and 0x40 meant: `authors` (RWF_URGENT, RWF_BARRIER)
    /// or `kernel` (this kernel's own flags, passed on).
    pub rwf_marks: String,
    /// The built-in rule sets asked for (`--marks-for`), after `rules`.
    pub marks_for: Vec<String>,
    pub critical_rules: Vec<String>,
    pub critical_boost: String,
    pub boosted: Vec<Boosted>,
    pub fastresponse: FastResponse,
    /// Whether the requests went through the emulated device (`false`:
    /// `--observe`, every call to the kernel as made).
    pub routed: bool,
    /// Processes that could not map the shared region: none of their I/O
    /// was routed (each named in `not_routed`).
    pub processes_not_routed: usize,
    /// The device's and driver's own figures beyond the shared ones.
    pub routing: Option<Routed>,
    /// One record per process that reported.
    pub processes: Vec<Record>,
    /// Requests by kind and mark.
    pub requests: Requests,
    /// Each process title's requests by kind and mark, its processes added
    /// up (PostgreSQL's processes are told apart only so: "postgres:
    /// checkpointer").
    pub requests_by_title: std::collections::BTreeMap<String, Requests>,
    /// System calls by family.
    pub calls: Calls,
    /// Where the data lived, with `--stage` (`null` without): device, fs,
    /// mount, the measured O_DIRECT 4 KiB read.
    pub staging: Option<crate::stage::StageReport>,
}

/// How the program ended: `{"exit_code": N}` or `{"signal": N}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitReport {
    ExitCode(i32),
    Signal(i32),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interrupted {
    pub signal: i32,
    pub name: String,
}

/// FastResponse's counters (critical tags, polling).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FastResponse {
    pub critical: u64,
    pub polled: u64,
    pub hipri: u64,
    pub hybrid: Hybrid,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Requests {
    pub reads: ByMark,
    pub writes: ByMark,
    pub flushes: ByMark,
}

/// The `cinterrupts` object of `exec`'s JSON report.
pub fn cinterrupts(
    program: &str,
    opts: &Options,
    out: &Outcome,
    warnings: &[String],
    marks_for: &[String],
) -> Cinterrupts<ExecPart> {
    let c = &out.counts;
    let r = out.routed.as_ref();
    let policy = opts
        .route
        .as_ref()
        .map(|r| report::schema::policy_object(&policy::Settings::of(&r.policy)))
        .unwrap_or_default();
    let interrupts = r.map_or(0, |r| r.interrupts);
    Cinterrupts {
        schema_version: SCHEMA_VERSION,
        policy,
        device: r.map_or_else(|| "observed".to_string(), |r| r.backend.clone()),
        default_marks: Some(opts.default_marks.name().to_string()),
        duration_ns: out.duration_ns,
        interrupts,
        urgent_only_interrupts: r.map_or(0, |r| r.urgent_only),
        interrupts_per_sec: report::schema::per_sec(interrupts, out.duration_ns),
        completions: r.map_or(0, |r| r.completions_reaped),
        completions_per_interrupt: r.map_or(0.0, |r| r.completions_per_interrupt),
        delivery_ns: r.and_then(|r| r.delivery),
        completions_by_mark: Some(c.by_mark()),
        counters: Some(report::cpu::counters_json(&out.counters)),
        field: None,
        notes: Vec::new(),
        made_by: Some(report::made_by::current(&[])),
        kind: Kind::Exec(ExecPart {
            program: program.to_string(),
            status: match out.status {
                Status::Exited(code) => ExitReport::ExitCode(code),
                Status::Signalled(s) => ExitReport::Signal(s),
            },
            partial: out.interrupted.is_some(),
            interrupted_by: out.interrupted.map(|signal| Interrupted {
                signal,
                name: crate::signals::name(signal),
            }),
            killed_after_signal: out.escalated.clone(),
            not_routed: out.not_routed.clone(),
            outlived: out
                .outlived
                .iter()
                .map(|(pid, comm)| Outlived {
                    pid: *pid,
                    comm: comm.clone(),
                })
                .collect(),
            io_uring: opts.io_uring.name().to_string(),
            limits: out.limits.clone(),
            warnings: warnings.to_vec(),
            rules: opts.rules.iter().map(|r| r.to_line()).collect(),
            rwf_marks: opts.rwf_marks.name().to_string(),
            marks_for: marks_for.to_vec(),
            critical_rules: opts.critical.iter().map(|r| r.to_line()).collect(),
            critical_boost: opts.boost.as_str().to_string(),
            boosted: out
                .processes
                .iter()
                .flat_map(|p| p.boosted.iter().cloned())
                .collect(),
            fastresponse: FastResponse {
                critical: c.critical,
                polled: c.polled,
                hipri: c.hipri,
                hybrid: c.hybrid,
            },
            routed: r.is_some(),
            processes_not_routed: out
                .processes
                .iter()
                .filter(|p| p.unmapped.is_some())
                .count(),
            routing: r.cloned(),
            processes: out.processes.clone(),
            requests: Requests {
                reads: c.reads,
                writes: c.writes,
                flushes: c.flushes,
            },
            requests_by_title: by_title(out),
            calls: c.calls,
            staging: out.staging.clone(),
        }),
    }
}

/// Each process title's requests, its processes' counts added up.
fn by_title(out: &Outcome) -> std::collections::BTreeMap<String, Requests> {
    let mut m: std::collections::BTreeMap<String, crate::counts::Counts> = Default::default();
    for p in &out.processes {
        m.entry(p.title.clone()).or_default().add(&p.counts);
    }
    m.into_iter()
        .map(|(t, c)| {
            let r = Requests {
                reads: c.reads,
                writes: c.writes,
                flushes: c.flushes,
            };
            (t, r)
        })
        .collect()
}

/// What the report cannot be trusted for: no process of the program
/// reported although it ended by itself (issue 24 item 4: a run that
/// reported nothing said "0 processes" and nothing else). A program
/// killed by a signal leaves no record, and its line says so already.
pub fn warnings(name: &str, out: &Outcome) -> Vec<String> {
    let mut w = Vec::new();
    if out.processes.is_empty() && matches!(out.status, Status::Exited(_)) {
        w.push(format!(
            "no process of {name} reported: the preload library was not loaded in any of them (a statically linked program, or one that ran another with LD_PRELOAD cleared); nothing was seen or routed"
        ));
    }
    for p in &out.processes {
        if let Some(path) = &p.ran_unseen {
            w.push(format!(
                "{}[{}] ran {path} with LD_PRELOAD no longer naming the preload library: none of its I/O (nor its children's) was seen or routed",
                p.comm, p.pid
            ));
        }
    }
    w
}

/// The JSON report (`--output-format json`): the shared schema's
/// document (`report::Document`) with `exec`'s part, one script reading
/// it and `run`'s alike.
pub fn document(
    program: &str,
    opts: &Options,
    out: &Outcome,
    warnings: &[String],
    marks_for: &[String],
) -> report::Document<ExecPart> {
    report::Document {
        jobs: None,
        cinterrupts: cinterrupts(program, opts, out, warnings, marks_for),
    }
}

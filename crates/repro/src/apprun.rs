//! A real program's run under exec, for `reproduce --mode app`'s
//! experiments ([`crate::app`]: Table 3, Fig 22, Table 6) and the
//! cross-validation ([`crate::xval`]) alike: the systems the paper
//! compares, the run itself (exec called as a library), db_bench's
//! figures and exec's device figures. Below both, so that neither needs
//! the other's (issue 39 item 6: no module cycle).

use std::path::PathBuf;

use exec::summary::ExecPart;
use policy::{PolicySpec, US};
use report::Cinterrupts;
use serde::Serialize;

use crate::ReproError;

/// The systems the paper compares, as exec runs them (ac:66-67: default
/// `irq_poller_delay=0`; adaptive `delay=6 thr=32 empathetic=N`; cint
/// `delay=15 thr=32 empathetic=Y`). app-cint is cint with the authors'
/// RocksDB patch: flush and compaction threads non-Urgent (TOS 4.1.2;
/// `--mark-thread`) or, in Table 6, the dump tool's I/O (`--mark-file` on
/// the second database).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum System {
    Default,
    Adaptive,
    Cint,
    AppCint,
}

impl System {
    pub(crate) fn name(self) -> &'static str {
        match self {
            System::Default => "default",
            System::Adaptive => "adaptive",
            System::Cint => "cint",
            System::AppCint => "app-cint",
        }
    }

    /// The system's policy, in exec and in the simulator alike
    /// (artifact-configs.md:66-67).
    pub(crate) fn policy(self) -> PolicySpec {
        match self {
            System::Default => PolicySpec::named("default"),
            System::Adaptive => PolicySpec {
                delta: Some(6 * US),
                thr: Some(32),
                ..PolicySpec::named("adaptive")
            },
            System::Cint | System::AppCint => PolicySpec {
                delta: Some(15 * US),
                thr: Some(32),
                ..PolicySpec::named("cint")
            },
        }
    }
}

/// One run's figures: db_bench's line and histogram, and exec's device.
/// A figure a run does not have is left out of the JSON (never `null`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Measured {
    pub ops_per_sec: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_us: Option<f64>,
    /// The median get (xval-rocksdb).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    /// Table 6: the dump tool's keys per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dump_keys_per_sec: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completions_per_interrupt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<f64>,
    /// CPU per get, us (xval-rocksdb: the program's user and system time
    /// net of its open; the model's cores' busy time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_get: Option<f64>,
    /// exec's mean interrupt delivery latency, us (xval-rocksdb).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_us: Option<f64>,
}

impl Measured {
    /// Each figure of `ms` reduced by `r` over the runs that have it
    /// (`None` when none has; throughput 0).
    fn reduce(ms: &[Measured], r: &dyn Fn(Vec<f64>) -> Option<f64>) -> Measured {
        let each = |f: &dyn Fn(&Measured) -> Option<f64>| r(ms.iter().filter_map(f).collect());
        Measured {
            ops_per_sec: each(&|m| Some(m.ops_per_sec)).unwrap_or(0.0),
            avg_us: each(&|m| m.avg_us),
            p50_us: each(&|m| m.p50_us),
            p99_us: each(&|m| m.p99_us),
            dump_keys_per_sec: each(&|m| m.dump_keys_per_sec),
            interrupts: each(&|m| m.interrupts),
            completions_per_interrupt: each(&|m| m.completions_per_interrupt),
            commands: each(&|m| m.commands),
            cpu_us_per_get: each(&|m| m.cpu_us_per_get),
            delivery_us: each(&|m| m.delivery_us),
        }
    }

    /// The mean of each figure over the runs (the model's seeds, the real
    /// side's repetitions).
    pub(crate) fn mean_of(ms: &[Measured]) -> Measured {
        Measured::reduce(ms, &|v| {
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        })
    }

    /// The median of each figure over the runs.
    pub(crate) fn median_of(ms: &[Measured]) -> Measured {
        Measured::reduce(ms, &|mut v| {
            v.sort_by(f64::total_cmp);
            match v.len() {
                0 => None,
                n if n % 2 == 1 => Some(v[n / 2]),
                n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
            }
        })
    }
}

/// Where a run's files go and who hears of it; what the runs of one
/// `reproduce --mode app` share.
pub(crate) struct Ctx<'a> {
    pub(crate) scratch: PathBuf,
    pub(crate) runs: PathBuf,
    pub(crate) progress: &'a dyn Fn(&str),
    /// Runs that failed or timed out: reported, their claims not run.
    pub(crate) failed: std::cell::RefCell<Vec<String>>,
}

impl Ctx<'_> {
    /// A run's figures, or `None` with the failure noted (the other runs
    /// go on; the claims that need this one are "not run").
    pub(crate) fn keep(&self, r: Result<Measured, ReproError>) -> Option<Measured> {
        match r {
            Ok(m) => Some(m),
            Err(e) => {
                (self.progress)(&format!("FAILED {e}"));
                self.failed.borrow_mut().push(e.to_string());
                None
            }
        }
    }
}

pub(crate) fn fail(experiment: &str, run: &str, reason: impl std::fmt::Display) -> ReproError {
    ReproError::Run {
        experiment: experiment.to_string(),
        run: run.to_string(),
        mode: "app",
        reason: reason.to_string(),
    }
}

/// The longest a run may take before it is killed and counted as failed
/// (ours: the longest run here took about 20 s).
const RUN_TIMEOUT_S: u64 = 90;

/// The device every run routes through: the Optane profile, the paper's
/// device (TOS 5.2), with `exec --device`'s default seed.
const DEVICE: &str = "optane";
const DEVICE_SEED: u64 = 1;

/// Runs `program` under exec, called as a library (`exec::run`, issue
/// 39 item 3; it was `cinterrupts exec --device optane` as a child
/// process), with the system's policy and the marking `rules`: the
/// program's stdout saved as `runs/NAME.out`, its stderr as
/// `runs/NAME.err` (with exec's warnings, limits and what was not routed
/// after it, as the binary wrote them), exec's report as `runs/NAME.json`.
/// Returns the stdout and the report.
pub(crate) fn exec(
    ctx: &Ctx,
    experiment: &str,
    run: &str,
    system: System,
    rules: &[exec::Rule],
    program: &[String],
) -> Result<(String, Cinterrupts<ExecPart>), ReproError> {
    let failed = |e: &dyn std::fmt::Display| fail(experiment, run, e);
    let name = format!("{experiment}-{}", run.replace('/', "-"));
    (ctx.progress)(&name);
    let report = ctx.runs.join(format!("{name}.json"));
    let out = ctx.runs.join(format!("{name}.out"));
    let errfile = ctx.runs.join(format!("{name}.err"));
    let profile = sim::DeviceProfile::load(DEVICE).map_err(|e| failed(&e))?;
    let device = emu::backend::BackendSpec::device(profile, DEVICE_SEED);
    let route =
        exec::RouteOptions::placed(system.policy(), Some(device), None).map_err(|e| failed(&e))?;
    // `cinterrupts exec`'s defaults for every option the runs do not set.
    let opts = exec::Options {
        preload: exec::find_preload().map_err(|e| failed(&e))?,
        default_marks: jobs::DefaultMarks::Table1,
        rwf_marks: exec::running_kernel_rwf(),
        rules: rules.to_vec(),
        critical: Vec::new(),
        boost: emu::Boost::None,
        route: Some(route),
        stage: None,
        kill_after: None,
        io_uring: exec::IoUring::Route,
        harness: exec::Harness {
            stdout: Some(out.clone()),
            stderr: Some(errfile.clone()),
            timeout: Some(std::time::Duration::from_secs(RUN_TIMEOUT_S)),
        },
    };
    let (first, rest) = program.split_first().ok_or_else(|| failed(&"no program"))?;
    let args: Vec<std::ffi::OsString> = rest.iter().map(Into::into).collect();
    let outcome = exec::run(&opts, std::ffi::OsStr::new(first), &args).map_err(|e| failed(&e))?;
    let warnings = exec::summary::warnings(first, &outcome);
    let doc = exec::summary::document(first, &opts, &outcome, &warnings, &[]);
    report::file::write_atomically(&report, doc.to_text().as_bytes()).map_err(|e| failed(&e))?;
    let notices: String = exec::text::notices(&outcome, &warnings)
        .iter()
        .map(|l| format!("cinterrupts: exec: {l}\n"))
        .collect();
    if !notices.is_empty() {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&errfile)
            .and_then(|mut f| f.write_all(notices.as_bytes()))
            .map_err(|e| failed(&e))?;
    }
    if outcome
        .escalated
        .as_ref()
        .is_some_and(|e| e.why == "timeout")
    {
        return Err(failed(&format!(
            "timed out after {RUN_TIMEOUT_S} s (killed)"
        )));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| failed(&e))?;
    if outcome.status != exec::Status::Exited(0) {
        let err = std::fs::read_to_string(&errfile).unwrap_or_default();
        let last = text
            .lines()
            .chain(err.lines())
            .rfind(|l| l.contains("rror"))
            .unwrap_or("(no error line)")
            .trim()
            .to_string();
        // As the child's wait status printed (`ExitStatus`'s Display).
        let status = match outcome.status {
            exec::Status::Exited(c) => format!("exit status: {c}"),
            exec::Status::Signalled(s) => format!("signal: {s} ({})", exec::signal_name(s)),
        };
        return Err(failed(&format!("{first} failed ({status}): {last}")));
    }
    Ok((text, doc.cinterrupts))
}

/// `NAME : X micros/op Y ops/sec`, then the histogram after it
/// (`Average: A` and `P99: B`, in microseconds).
pub fn parse_db_bench(out: &str, bench: &str) -> Option<Measured> {
    let mut lines = out
        .lines()
        .skip_while(|l| !(l.starts_with(bench) && l[bench.len()..].trim_start().starts_with(':')));
    let head = lines.next()?;
    let words: Vec<&str> = head.split_whitespace().collect();
    let ops = words
        .iter()
        .position(|w| *w == "ops/sec")
        .and_then(|i| words.get(i.checked_sub(1)?))
        .and_then(|w| w.parse::<f64>().ok())?;
    let mut m = Measured {
        ops_per_sec: ops,
        ..Measured::default()
    };
    let number_after = |line: &str, key: &str| {
        let rest = &line[line.find(key)? + key.len()..];
        rest.split_whitespace().next()?.parse::<f64>().ok()
    };
    for l in lines {
        // The next benchmark's line ends this one's histogram.
        if l.contains("micros/op") {
            break;
        }
        if m.avg_us.is_none() && l.starts_with("Count:") {
            m.avg_us = number_after(l, "Average:");
        }
        if m.p99_us.is_none() && l.starts_with("Percentiles:") {
            m.p50_us = number_after(l, "P50:");
            m.p99_us = number_after(l, "P99:");
        }
    }
    Some(m)
}

/// The device's figures of exec's report: the shared schema's
/// (`report::Cinterrupts`), and the commands from exec's own part.
pub(crate) fn with_device(mut m: Measured, c: &Cinterrupts<ExecPart>) -> Measured {
    m.interrupts = Some(c.interrupts as f64);
    m.completions_per_interrupt = Some(c.completions_per_interrupt);
    m.commands = c
        .kind
        .exec()
        .and_then(|e| e.routing.as_ref())
        .map(|r| r.commands as f64);
    m.delivery_us = c.delivery_ns.map(|d| d.mean / 1e3);
    m
}

/// A figure for a report table, `-` when absent.
pub(crate) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.digits$}"))
}

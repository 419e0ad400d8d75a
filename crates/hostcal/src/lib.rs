//! `cinterrupts calibrate --host` (issue 37 item 4): the host model's
//! costs measured on the running machine, each by a microbenchmark
//! repeated in rounds with its spread, and written as a host profile
//! (`sim --host FILE`) whose every constant names the benchmark that
//! measured it, or says that none could and where its value comes from.
//!
//! An experiment over the machine, beside `repro` (DESIGN.md "Next
//! pieces"), not a model: the binary only wires its arguments. The API is
//! two calls, for `calibrate --host` and for `validate` (issue 37 item 5),
//! which takes its host from here:
//!
//! ```no_run
//! let m = hostcal::measure(&hostcal::Options::default())?;
//! print!("{}", m.table());
//! hostcal::write_profile(&m, std::path::Path::new("measured.toml"))?;
//! # Ok::<(), hostcal::HostcalError>(())
//! ```
//!
//! What is measured (each round yields one mean; 7 rounds, `--quick` 3
//! with fewer iterations):
//!
//! | benchmark | how | profile key |
//! |---|---|---|
//! | system call | `syscall(SYS_getppid)` loop (`perf bench syscall basic`) | `syscall` |
//! | switch with wake-up | pipe ping-pong, two threads pinned to one CPU (`perf bench sched pipe -T`) | `context_switch` = (round trip - 4 syscalls) / 2, as vm-exec.toml |
//! | cross-core wake-up | the same ping-pong pinned to two CPUs | none (the model has no key); in the comments |
//! | timer | `clock_nanosleep` of 10, 50, 100 us, measured minus asked | none; in the comments |
//! | interrupt handling | tracefs `irq_handler_entry/exit` on the disk's vectors, `softirq_entry/exit` BLOCK and the disk's `block_rq_complete` (which splits the softirq where the disk's accounted time ends), during the reads below | `per_completion` = (handlers + block softirqs) / completions |
//! | io_uring enter | NOP submit + wait round trip | none; in the comments |
//! | copy | memcpy of 4 and 64 KiB; buffered 128 KiB `pwrite` to cached pages | `buffered_write_per_kib` (the pwrite) |
//! | QD1 host path | psync O_DIRECT 4 KiB random reads of a file under /var/tmp: mean `pread` minus the disk's time per read (`/sys/dev/block/M:m/stat`, as `/proc/diskstats`) | `submit_per_request` = the path's residual after the measured parts (a mapping, labelled) |
//! | idle states | cpuidle's driver, governor, states' declared exit latency | reported, not measured |
//!
//! Not measurable from user space here, and so carried over with their
//! source named: interrupt entry and exit around the handler (outside the
//! tracepoints), the return path's part of a completion, fio's own user
//! work per I/O.

mod cpu;
mod disk;
mod machine;
mod profile;
mod stats;
mod table;
mod tracefs;

pub use disk::Disk;
pub use machine::{Idle, IdleState};
pub use profile::{check_output, render, write_profile, Derived};
pub use stats::Spread;

use std::path::PathBuf;
use std::time::Instant;

/// The crate's errors: one line each, naming the file or the option.
#[derive(Debug, thiserror::Error)]
pub enum HostcalError {
    /// The output cannot be written there (nothing was).
    #[error("-o {path}: {reason}")]
    Output { path: String, reason: String },
    /// A benchmark every profile needs failed.
    #[error("{0}")]
    Benchmark(String),
    /// The profile written would not load in `sim` (a bug here).
    #[error("the measured profile does not load: {0}")]
    Profile(String),
}

/// How to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Run the benchmarks in SCHED_FIFO (priority 1; default true), so
    /// that other programs' load does not queue before a woken benchmark
    /// thread: the costs are the host's own, and the model simulates its
    /// own contention. The timer's sleeps run in SCHED_OTHER regardless
    /// (a real-time thread's sleep has no timer slack, kernel/time/hrtimer.c
    /// `hrtimer_nanosleep`, and a program's does).
    pub realtime: bool,
    /// Rounds of each benchmark (7; `--quick` 3).
    pub rounds: usize,
    /// Fewer iterations a round (a few seconds in all, for tests).
    pub quick: bool,
    /// Where the scratch file for the disk's reads goes (`/var/tmp`, on
    /// the root disk and not a tmpfs as /tmp may be).
    pub scratch: PathBuf,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            rounds: 7,
            quick: false,
            realtime: true,
            scratch: PathBuf::from("/var/tmp"),
        }
    }
}

impl Options {
    /// A few seconds' run: 3 rounds, a tenth of the iterations.
    pub fn quick() -> Options {
        Options {
            rounds: 3,
            quick: true,
            ..Options::default()
        }
    }

    /// Iterations a round: `full`, or a tenth of it quick.
    fn n(&self, full: u64) -> u64 {
        if self.quick {
            (full / 10).max(1)
        } else {
            full
        }
    }
}

/// A benchmark's result, or why there is none.
pub type Measured = Result<Spread, String>;

/// The disk's reads and the interrupts they raised.
#[derive(Clone, Debug)]
pub struct DiskMeasurement {
    pub disk: Disk,
    /// The scratch file read (removed after).
    pub file: PathBuf,
    pub file_size: u64,
    pub reads_per_round: u64,
    /// A `pread`'s mean time a round, ns.
    pub read_latency: Spread,
    /// The disk's own time per read a round (its read time over its reads
    /// completed), ns.
    pub device_per_read: Spread,
    /// read_latency - device_per_read a round: the QD1 host path, ns.
    pub host_path: Spread,
    /// Rounds in which the disk completed exactly our reads (in the others
    /// another program read too, and the disk's time per read is theirs
    /// and ours together).
    pub clean_rounds: usize,
    /// The disk's vectors' interrupts per read a round (`/proc/interrupts`).
    pub interrupts_per_read: Spread,
    /// The CPUs that took them.
    pub irq_cpus: Vec<usize>,
    /// The handlers' and softirqs' times (tracefs), or why not.
    pub irq: Result<IrqMeasurement, String>,
}

/// The interrupt path's times, from tracefs.
#[derive(Clone, Debug)]
pub struct IrqMeasurement {
    /// The median handler (`irq_handler_entry` to `_exit`) a round, ns.
    pub handler: Spread,
    /// The median BLOCK softirq a round, ns.
    pub softirq: Spread,
    /// (all handlers' + all BLOCK softirqs' time) / the disk's completions,
    /// a round, ns.
    pub per_completion: Spread,
    /// The median softirq's part before its first `block_rq_complete` (inside
    /// the disk's accounted time) and after its last (outside it), a round,
    /// ns.
    pub softirq_before_complete: Spread,
    pub softirq_after_complete: Spread,
    /// Handlers and softirqs recorded in the rounds.
    pub handlers: usize,
    pub softirqs: usize,
    /// Events the buffer lost (0, or the times are a sample).
    pub lost: u64,
}

/// Everything measured, and the facts of the machine it ran on.
#[derive(Clone, Debug)]
pub struct HostMeasurement {
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`, at the start.
    pub date: String,
    /// `/proc/loadavg` before and after.
    pub load_before: String,
    pub load_after: String,
    pub hostname: String,
    /// `uname -r`, `uname -v`.
    pub kernel: String,
    pub kernel_version: String,
    /// CPUs this process may use (`nproc`).
    pub cores: u32,
    /// /proc/cpuinfo's first "cpu MHz", GHz.
    pub ghz: Option<f64>,
    /// HZ from /proc/timer_list's jiffies over the run, and the rate seen.
    pub hz: Option<(u64, f64)>,
    /// The model's preemption ("voluntary" or "full") and its evidence.
    pub preemption: (&'static str, String),
    pub idle: Idle,
    /// The timer slack the sleeps ran with, ns.
    pub timer_slack_ns: u64,
    pub rounds: usize,
    pub quick: bool,
    /// The scheduling policy the benchmarks ran in ("SCHED_FIFO 1", or
    /// "SCHED_OTHER" and why).
    pub policy: String,
    /// The iterations a round of each CPU benchmark.
    pub iterations: Iterations,
    pub syscall: Spread,
    /// Pipe round trip, both threads on one CPU, ns.
    pub switch_round_trip: Measured,
    /// Pipe round trip, the threads on two CPUs, ns.
    pub cross_core_round_trip: Measured,
    /// The CPUs the two ping-pongs ran on.
    pub cpus: (usize, Option<usize>),
    /// Per asked sleep (ns): the time slept beyond it, ns.
    pub sleep_overshoot: Vec<(u64, Measured)>,
    pub uring_nop: Measured,
    /// memcpy ns per KiB, copying 4 KiB and 64 KiB.
    pub copy_4k_per_kib: Spread,
    pub copy_64k_per_kib: Spread,
    /// Buffered 128 KiB pwrite to cached pages, ns per KiB.
    pub buffered_write_per_kib: Measured,
    pub disk: Result<DiskMeasurement, String>,
    /// The whole run, ms.
    pub elapsed_ms: u64,
}

/// Iterations a round, as run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iterations {
    pub syscall: u64,
    pub switch: u64,
    pub cross_core: u64,
    pub sleep: u64,
    pub uring: u64,
    pub copy_64k: u64,
    pub copy_4k: u64,
    pub buffered_write: u64,
    pub reads: u64,
}

/// The sleeps asked, ns: 10, 50 and 100 us (around the papers' and the
/// kernel's timer-based waits: hybrid polling's half-mean, coalescing
/// timeouts).
pub const SLEEPS: [u64; 3] = [10_000, 50_000, 100_000];

fn spread(name: &str, v: &[f64]) -> Result<Spread, HostcalError> {
    Spread::of(v).ok_or_else(|| HostcalError::Benchmark(format!("{name}: no rounds")))
}

/// Runs every benchmark, `o.rounds` rounds each (the rounds interleaved,
/// so a burst of another program's load falls on one round of each, not
/// on all of one), then the disk's reads with tracing on. A benchmark the
/// machine cannot run (a single CPU, no io_uring, no root for tracefs)
/// yields its reason, not an error; an error is only a benchmark every
/// profile needs (the system call) failing.
///
/// The benchmarks run in a thread of their own (SCHED_FIFO, see
/// [`Options::realtime`]); the caller's thread is left as it was.
pub fn measure(o: &Options) -> Result<HostMeasurement, HostcalError> {
    let o = o.clone();
    std::thread::Builder::new()
        .name("hostcal".into())
        .spawn(move || {
            let policy = if o.realtime {
                match cpu::set_policy(1) {
                    Ok(()) => "SCHED_FIFO 1".to_string(),
                    Err(e) => format!("SCHED_OTHER (SCHED_FIFO refused: {e})"),
                }
            } else {
                "SCHED_OTHER".to_string()
            };
            measure_here(&o, policy)
        })
        .map_err(|e| HostcalError::Benchmark(format!("cannot start the benchmark thread: {e}")))?
        .join()
        .map_err(|_| HostcalError::Benchmark("the benchmark thread panicked".into()))?
}

fn measure_here(o: &Options, policy: String) -> Result<HostMeasurement, HostcalError> {
    let start = Instant::now();
    let realtime = policy.starts_with("SCHED_FIFO");
    let rounds = o.rounds.max(1);
    let date = sim::bench::utc_now();
    let load_before = machine::load();
    let jiffies0 = machine::jiffies().map(|j| (j, cpu::now_ns()));
    let it = Iterations {
        syscall: o.n(200_000),
        switch: o.n(20_000),
        cross_core: o.n(2_000),
        sleep: o.n(50),
        uring: o.n(20_000),
        copy_64k: o.n(2_000),
        copy_4k: o.n(20_000),
        buffered_write: o.n(800),
        // 3,000 a round, as vm-native.toml's fio runs: the disk's read
        // time is counted in whole ms, so a round must last long enough
        // (~150 ms here) for its truncation to stay under 1%. Quick: 500.
        reads: if o.quick { 500 } else { 3_000 },
    };
    let cpus = cpu::allowed_cpus();
    let (c0, c1) = (cpus[0], cpus.get(1).copied());
    let mut ring = cpu::uring();
    let mut timer_slack_ns = cpu::timer_slack();

    let mut sys = Vec::new();
    let mut same: Result<Vec<f64>, String> = Ok(Vec::new());
    let mut cross: Result<Vec<f64>, String> = match c1 {
        Some(_) => Ok(Vec::new()),
        None => Err("one CPU allowed: no second CPU to wake".into()),
    };
    let mut sleeps: Vec<Vec<f64>> = vec![Vec::new(); SLEEPS.len()];
    let mut uring: Result<Vec<f64>, String> = Ok(Vec::new());
    let (mut c4, mut c64) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        sys.push(cpu::syscall(it.syscall));
        push(&mut same, || cpu::ping_pong(it.switch, (c0, c0)));
        if let Some(c1) = c1 {
            push(&mut cross, || cpu::ping_pong(it.cross_core, (c0, c1)));
        }
        // A program's sleep: SCHED_OTHER, with its timer slack.
        if realtime {
            let _ = cpu::set_policy(0);
        }
        // Read here, in SCHED_OTHER: in SCHED_FIFO this kernel reads 0
        // (measured: Linux 6.18, 2026-12-07), a program's is 50 us.
        timer_slack_ns = cpu::timer_slack();
        for (v, &asked) in sleeps.iter_mut().zip(&SLEEPS) {
            v.push(cpu::sleep_overshoot(it.sleep, asked));
        }
        if realtime {
            let _ = cpu::set_policy(1);
        }
        match &mut ring {
            Ok(r) => push(&mut uring, || cpu::uring_nop(r, it.uring)),
            Err(e) => uring = Err(e.clone()),
        }
        c4.push(cpu::copy_per_kib(it.copy_4k, 4));
        c64.push(cpu::copy_per_kib(it.copy_64k, 64));
    }
    let to_spread =
        |v: Result<Vec<f64>, String>| v.and_then(|v| Spread::of(&v).ok_or("no rounds".into()));

    let (disk, buffered) = measure_disk(o, rounds, it.reads, it.buffered_write);
    let (kernel, kernel_version) = machine::kernel();
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    let hz = jiffies0.and_then(|(j0, t0)| {
        // A quarter second at least: 62 jiffies at HZ=250, enough to tell
        // 250 from 300 (the closest choices, 18% apart).
        let min = 250_000_000;
        let waited = cpu::now_ns() - t0;
        if waited < min {
            std::thread::sleep(std::time::Duration::from_nanos(min - waited));
        }
        let j1 = machine::jiffies()?;
        let secs = (cpu::now_ns() - t0) as f64 / 1e9;
        let rate = (j1.saturating_sub(j0)) as f64 / secs;
        Some((machine::nearest_hz(rate), rate))
    });
    Ok(HostMeasurement {
        date,
        load_before,
        load_after: machine::load(),
        hostname: machine::hostname(),
        preemption: machine::preemption(&kernel_version, &cmdline),
        kernel,
        kernel_version,
        cores: cpus.len() as u32,
        ghz: machine::ghz(),
        hz,
        idle: machine::idle(),
        timer_slack_ns,
        rounds,
        quick: o.quick,
        policy,
        iterations: it,
        syscall: spread("syscall", &sys)?,
        switch_round_trip: to_spread(same),
        cross_core_round_trip: to_spread(cross),
        cpus: (c0, c1),
        sleep_overshoot: SLEEPS
            .iter()
            .zip(sleeps)
            .map(|(&a, v)| (a, to_spread(Ok(v))))
            .collect(),
        uring_nop: to_spread(uring),
        copy_4k_per_kib: spread("copy", &c4)?,
        copy_64k_per_kib: spread("copy", &c64)?,
        buffered_write_per_kib: buffered,
        disk,
        elapsed_ms: start.elapsed().as_millis() as u64,
    })
}

/// Adds a round's value, or turns the rounds into the first error.
fn push(v: &mut Result<Vec<f64>, String>, f: impl FnOnce() -> Result<f64, String>) {
    if let Ok(rounds) = v {
        match f() {
            Ok(x) => rounds.push(x),
            Err(e) => *v = Err(e),
        }
    }
}

/// The disk's rounds of reads (with tracing, where it can), then the
/// buffered writes in the same scratch directory, removed after.
fn measure_disk(
    o: &Options,
    rounds: usize,
    reads: u64,
    writes: u64,
) -> (Result<DiskMeasurement, String>, Measured) {
    let size: u64 = if o.quick { 8 << 20 } else { 64 << 20 };
    let scratch = match disk::Scratch::new(&o.scratch, size) {
        Ok(s) => s,
        Err(e) => return (Err(e.clone()), Err(e)),
    };
    let d = disk_rounds(&scratch, rounds, reads);
    let mut w = Ok(Vec::new());
    for _ in 0..rounds {
        push(&mut w, || {
            disk::buffered_write_per_kib(&scratch.data, writes)
        });
    }
    let w = w.and_then(|v| Spread::of(&v).ok_or("no rounds".into()));
    (d, w)
}

fn disk_rounds(s: &disk::Scratch, rounds: usize, n: u64) -> Result<DiskMeasurement, String> {
    let d = disk::disk_of(&s.dir)?;
    let mut reader = disk::Reader::open(s)?;
    // One warm-up round: the file's blocks mapped, the path's caches warm.
    reader.reads(n.min(100))?;
    let irq_numbers: Vec<u32> = d.vectors.iter().map(|(i, _)| *i).collect();
    let tracer = if irq_numbers.is_empty() {
        Err(format!(
            "no vector of {} found by name in /proc/interrupts",
            d.name
        ))
    } else {
        tracefs::Tracer::start(&irq_numbers, d.dev)
    };
    let (mut lat, mut dev, mut path, mut ipr) = (vec![], vec![], vec![], vec![]);
    let mut windows = Vec::new();
    let mut clean = 0;
    let mut cpus = std::collections::BTreeSet::new();
    for _ in 0..rounds {
        let (irq0, st0, t0) = (
            disk::irq_counts(&d.vectors),
            disk::read_stat(&d.stat)?,
            cpu::now_ns(),
        );
        let mean = reader.reads(n)?;
        let (t1, st1, irq1) = (
            cpu::now_ns(),
            disk::read_stat(&d.stat)?,
            disk::irq_counts(&d.vectors),
        );
        let completed = st1.0.saturating_sub(st0.0);
        if completed == 0 {
            return Err(format!(
                "{}: no read counted for {n} reads",
                d.stat.display()
            ));
        }
        clean += usize::from(completed == n);
        let per_read = st1.1.saturating_sub(st0.1) as f64 * 1e6 / completed as f64;
        let mut irqs = 0;
        for (irq, after) in &irq1 {
            let before = irq0.get(irq).cloned().unwrap_or_default();
            for (c, a) in after.iter().enumerate() {
                let delta = a.saturating_sub(before.get(c).copied().unwrap_or(0));
                irqs += delta;
                if delta > 0 {
                    cpus.insert(c);
                }
            }
        }
        lat.push(mean);
        dev.push(per_read);
        path.push(mean - per_read);
        ipr.push(irqs as f64 / n as f64);
        windows.push((t0, t1, completed));
    }
    let irq = tracer
        .and_then(|t| t.stop())
        .and_then(|trace| irq_times(&trace, &windows));
    let sp = |v: &[f64]| Spread::of(v).ok_or_else(|| "no rounds".to_string());
    Ok(DiskMeasurement {
        file: s.data.clone(),
        file_size: s.size,
        reads_per_round: n,
        read_latency: sp(&lat)?,
        device_per_read: sp(&dev)?,
        host_path: sp(&path)?,
        clean_rounds: clean,
        interrupts_per_read: sp(&ipr)?,
        irq_cpus: cpus.into_iter().collect(),
        irq,
        disk: d,
    })
}

/// Per round (start, end, completions): the handlers' and softirqs' times.
fn irq_times(t: &tracefs::Trace, windows: &[(u64, u64, u64)]) -> Result<IrqMeasurement, String> {
    use tracefs::Kind::*;
    let median = |v: &mut Vec<u64>| -> Option<f64> {
        v.sort_unstable();
        (!v.is_empty()).then(|| v[v.len() / 2] as f64)
    };
    let (mut h, mut s, mut per) = (vec![], vec![], vec![]);
    let (mut pre, mut post) = (vec![], vec![]);
    let (mut nh, mut ns) = (0, 0);
    for &(from, to, completed) in windows {
        let mut hd = tracefs::durations(&t.events, IrqEntry, IrqExit, from, to);
        let mut sd = tracefs::durations(&t.events, SoftirqEntry, SoftirqExit, from, to);
        nh += hd.len();
        ns += sd.len();
        let total: u64 = hd.iter().sum::<u64>() + sd.iter().sum::<u64>();
        per.push(total as f64 / completed as f64);
        if let Some(m) = median(&mut hd) {
            h.push(m);
        }
        if let Some(m) = median(&mut sd) {
            s.push(m);
        }
        let split = tracefs::softirq_split(&t.events, from, to);
        if let Some(m) = median(&mut split.iter().map(|x| x.0).collect()) {
            pre.push(m);
        }
        if let Some(m) = median(&mut split.iter().map(|x| x.1).collect()) {
            post.push(m);
        }
    }
    if nh == 0 {
        return Err("tracefs recorded no handler of the disk's vectors".into());
    }
    let sp = |v: &[f64]| Spread::of(v).ok_or_else(|| "no rounds".to_string());
    Ok(IrqMeasurement {
        handler: sp(&h)?,
        softirq: sp(&s).map_err(|_| "tracefs recorded no BLOCK softirq".to_string())?,
        per_completion: sp(&per)?,
        softirq_before_complete: sp(&pre)
            .map_err(|_| "tracefs recorded no block_rq_complete in a BLOCK softirq".to_string())?,
        softirq_after_complete: sp(&post)
            .map_err(|_| "tracefs recorded no block_rq_complete in a BLOCK softirq".to_string())?,
        handlers: nh,
        softirqs: ns,
        lost: t.lost,
    })
}

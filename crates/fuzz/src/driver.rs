//! The fuzzing loop: mutate, run the target on a worker thread, and judge each
//! execution by three detectors (a caught panic, a watchdog for hangs, the
//! counting allocator for memory). Findings are saved, minimised and counted;
//! the loop keeps going, except after a hang (a thread cannot be killed).

use crate::alloc;
use crate::mutate::mutate;
use crate::targets::Target;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::thread;
use std::time::{Duration, Instant};

/// How long and how a target is fuzzed.
#[derive(Clone, Debug)]
pub struct Config {
    pub duration: Duration,
    pub seed: u64,
    /// Where findings are written; nothing is written without it.
    pub crashes: Option<PathBuf>,
    /// One input running longer is a hang. 2 s: the slowest seed parses in
    /// well under a millisecond in a release build (`execs/s` in the summary),
    /// so this is three orders of magnitude of headroom.
    pub hang_after: Duration,
    /// Peak bytes one input may hold: above is a `memory` finding. 64 MiB, a
    /// third of the 200 MB bound for a whole command.
    pub memory_limit: usize,
    /// Above this the process stops at once (saving the input), before the
    /// machine runs out of memory: 4 x the limit.
    pub hard_cap: usize,
    /// Interval between progress lines.
    pub report_every: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            duration: Duration::from_secs(10),
            seed: 0,
            crashes: None,
            hang_after: Duration::from_secs(2),
            memory_limit: 64 << 20,
            hard_cap: 256 << 20,
            report_every: Duration::from_secs(10),
        }
    }
}

/// What a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Panic,
    Hang,
    Memory,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Panic => "panic",
            Kind::Hang => "hang",
            Kind::Memory => "memory",
        }
    }
}

/// One target's run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub target: String,
    pub execs: u64,
    pub elapsed: Duration,
    pub panics: u64,
    pub hangs: u64,
    pub memory: u64,
    pub corpus: usize,
    /// Files written under `--crashes`.
    pub saved: Vec<PathBuf>,
    /// The first message of each distinct finding (panic site, size).
    pub messages: Vec<String>,
}

impl Report {
    pub fn findings(&self) -> u64 {
        self.panics + self.hangs + self.memory
    }

    fn count(&mut self, kind: Kind) {
        match kind {
            Kind::Panic => self.panics += 1,
            Kind::Hang => self.hangs += 1,
            Kind::Memory => self.memory += 1,
        }
    }

    /// The one-line summary printed every ~10 s and at the end.
    pub fn summary(&self) -> String {
        let secs = self.elapsed.as_secs_f64();
        format!(
            "{}: {} execs in {:.0}s, {:.0} execs/s, corpus {}, findings: panic {}, hang {}, memory {}",
            self.target,
            self.execs,
            secs,
            self.execs as f64 / secs.max(1e-9),
            self.corpus,
            self.panics,
            self.hangs,
            self.memory
        )
    }
}

/// Most corpus entries kept: seeds plus accepted mutants.
const CORPUS_MAX: usize = 512;
/// Largest accepted input kept in the corpus: 4 x the 8 KiB seed cut.
const CORPUS_ENTRY_MAX: usize = 32 << 10;
/// Copies saved per distinct finding (same kind and panic site).
const SAVED_PER_KEY: u32 = 3;
/// Executions the minimiser may spend on one finding.
const MINIMISE_BUDGET: u32 = 4_000;

/// One driver at a time per process: the allocator's count, the panic hook's
/// last message and the hard-cap hook's input are process-wide.
static RUNNING: Mutex<()> = Mutex::new(());
/// The input now running, for the watchdog and the hard-cap hook.
static CURRENT: Mutex<Vec<u8>> = Mutex::new(Vec::new());
/// Where the hard-cap hook saves: (crashes dir, target name).
static HOOK_CTX: Mutex<Option<(Option<PathBuf>, String)>> = Mutex::new(None);
/// The last panic on the worker: "message at file:line".
static LAST_PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);
/// Nanoseconds since `EPOCH` when the running input started, 0 when idle.
static BUSY_SINCE: AtomicU64 = AtomicU64::new(0);
/// Executions so far in this run, for the watchdog's report of a hang.
static EXECS: AtomicU64 = AtomicU64::new(0);
static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

const WORKER: &str = "fuzz-worker";

fn now_ns() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

/// Routes the worker's panics to `LAST_PANIC` (silently: a target may panic
/// thousands of times); every other thread keeps the previous hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if thread::current().name() != Some(WORKER) {
                return previous(info);
            }
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string payload)".to_string());
            let site = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            *LAST_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some((message, site));
        }));
    });
}

/// The result of one execution that was not a hang.
enum Outcome {
    Accepted,
    Rejected,
    /// (message, site)
    Panicked(String, String),
    /// Peak bytes.
    Memory(usize),
}

fn exec(target: &Target, input: &[u8], limit: usize) -> Outcome {
    {
        let mut cur = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
        cur.clear();
        cur.extend_from_slice(input);
    }
    BUSY_SINCE.store(now_ns(), Ordering::SeqCst);
    alloc::start_input();
    let result = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    let peak = alloc::end_input();
    BUSY_SINCE.store(0, Ordering::SeqCst);
    match result {
        Err(_) => {
            let (message, site) = LAST_PANIC
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .unwrap_or_default();
            Outcome::Panicked(message, site)
        }
        Ok(_) if peak > limit => Outcome::Memory(peak),
        Ok(true) => Outcome::Accepted,
        Ok(false) => Outcome::Rejected,
    }
}

/// Fuzzes `target` for `cfg.duration`; prints progress and the final summary.
pub fn run(target: Target, cfg: &Config) -> Report {
    let _one = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    install_panic_hook();
    // A hung worker left by an earlier run in this process never clears it.
    BUSY_SINCE.store(0, Ordering::SeqCst);
    EXECS.store(0, Ordering::SeqCst);
    *HOOK_CTX.lock().unwrap_or_else(|e| e.into_inner()) =
        Some((cfg.crashes.clone(), target.name.to_string()));
    alloc::set_hard_cap(cfg.hard_cap, hard_cap_hook);
    let name = target.name;
    let worker_cfg = cfg.clone();
    let started = Instant::now();
    // 8 MiB: the main thread's stack, where the CLI runs these parsers.
    let worker = thread::Builder::new()
        .name(WORKER.into())
        .stack_size(8 << 20)
        .spawn(move || fuzz_loop(target, &worker_cfg))
        .expect("spawning the fuzz worker");
    loop {
        thread::sleep(Duration::from_millis(50));
        if worker.is_finished() {
            let report = worker.join().expect("the worker catches its panics");
            println!("{}", report.summary());
            return report;
        }
        let since = BUSY_SINCE.load(Ordering::SeqCst);
        if since != 0 && now_ns().saturating_sub(since) > cfg.hang_after.as_nanos() as u64 {
            // The worker cannot be stopped: save its input and leave it.
            let input = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let message = format!("no return after {:?}", cfg.hang_after);
            let mut report = Report {
                target: name.to_string(),
                execs: EXECS.load(Ordering::SeqCst),
                elapsed: started.elapsed(),
                ..Report::default()
            };
            report.count(Kind::Hang);
            announce(name, Kind::Hang, &message, &input);
            report.messages.push(message.clone());
            if let Some(p) = save(cfg.crashes.as_deref(), name, Kind::Hang, &message, &input) {
                report.saved.push(p);
            }
            println!("{} (stopped at the hang)", report.summary());
            return report;
        }
    }
}

fn fuzz_loop(target: Target, cfg: &Config) -> Report {
    let mut rng = Pcg64::seed_from_u64(cfg.seed);
    let mut corpus = target.seeds.clone();
    let seeds = corpus.len();
    let mut report = Report {
        target: target.name.to_string(),
        ..Report::default()
    };
    let mut saved_per_key: HashMap<(Kind, String), u32> = HashMap::new();
    let started = Instant::now();
    let mut last_line = started;
    loop {
        let now = Instant::now();
        if now - started >= cfg.duration {
            break;
        }
        if now - last_line >= cfg.report_every {
            report.elapsed = now - started;
            report.corpus = corpus.len();
            println!("{}", report.summary());
            last_line = now;
        }
        let base = &corpus[rng.random_range(0..corpus.len())];
        let other = &corpus[rng.random_range(0..corpus.len())];
        let input = mutate(&mut rng, base, other, &target.dict);
        report.execs += 1;
        EXECS.store(report.execs, Ordering::Relaxed);
        let (kind, message, key) = match exec(&target, &input, cfg.memory_limit) {
            Outcome::Rejected => continue,
            Outcome::Accepted => {
                // Inputs a parser accepts got past every check: mutating
                // them reaches deeper than mutating seeds alone. Large ones
                // are tried once and not kept: they would slow every
                // execution that starts from them.
                if input.len() > CORPUS_ENTRY_MAX {
                    continue;
                }
                if corpus.len() < CORPUS_MAX {
                    corpus.push(input);
                } else {
                    let i = rng.random_range(seeds..CORPUS_MAX);
                    corpus[i] = input;
                }
                continue;
            }
            Outcome::Panicked(message, site) => (Kind::Panic, format!("{message} at {site}"), site),
            Outcome::Memory(peak) => (
                Kind::Memory,
                format!("peak {} bytes ({} MiB) in one input", peak, peak >> 20),
                String::new(),
            ),
        };
        report.count(kind);
        let n = saved_per_key.entry((kind, key.clone())).or_insert(0);
        *n += 1;
        if *n > SAVED_PER_KEY {
            continue;
        }
        if *n == 1 {
            announce(target.name, kind, &message, &input);
            report.messages.push(format!("{}: {message}", kind.name()));
        }
        if let Some(p) = save(cfg.crashes.as_deref(), target.name, kind, &message, &input) {
            report.saved.push(p);
        }
        if *n == 1 {
            let small = minimise(&target, &input, kind, &key, cfg.memory_limit);
            if small.len() < input.len() {
                let message = format!("{message} (minimised from {} bytes)", input.len());
                if let Some(p) = save(cfg.crashes.as_deref(), target.name, kind, &message, &small) {
                    report.saved.push(p);
                }
            }
        }
    }
    report.elapsed = started.elapsed();
    report.corpus = corpus.len();
    report
}

/// Removes chunks (halves, quarters, ... single bytes) while the same finding
/// (kind and panic site) still happens.
fn minimise(target: &Target, input: &[u8], kind: Kind, key: &str, limit: usize) -> Vec<u8> {
    let same = |candidate: &[u8]| match exec(target, candidate, limit) {
        Outcome::Panicked(_, site) => kind == Kind::Panic && site == key,
        Outcome::Memory(_) => kind == Kind::Memory,
        _ => false,
    };
    let mut best = input.to_vec();
    let mut budget = MINIMISE_BUDGET;
    let mut chunk = best.len().div_ceil(2);
    while chunk >= 1 && budget > 0 {
        let mut i = 0;
        while i < best.len() && budget > 0 {
            budget -= 1;
            let end = (i + chunk).min(best.len());
            let mut candidate = best[..i].to_vec();
            candidate.extend_from_slice(&best[end..]);
            if same(&candidate) {
                best = candidate;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    best
}

/// Called from inside the allocator when one input passes the hard cap: save
/// the input and stop before the machine runs out of memory.
fn hard_cap_hook() {
    let input = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let ctx = HOOK_CTX.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let (dir, name) = ctx.unwrap_or((None, "?".into()));
    let message = "passed the hard cap on one input's memory; stopped".to_string();
    announce(&name, Kind::Memory, &message, &input);
    save(dir.as_deref(), &name, Kind::Memory, &message, &input);
    eprintln!("{name}: stopped at a memory finding past the hard cap");
    std::process::exit(1);
}

/// One line on stderr for the first finding of each kind and site.
fn announce(target: &str, kind: Kind, message: &str, input: &[u8]) {
    let shown: String = String::from_utf8_lossy(&input[..input.len().min(120)])
        .escape_debug()
        .collect();
    eprintln!(
        "{target}: {}: {message}; input ({} bytes) starts \"{shown}\"",
        kind.name(),
        input.len()
    );
}

/// Writes `DIR/TARGET-KIND-HASH` (the input) and `.txt` beside it (the
/// message); the hash names identical inputs once.
fn save(
    dir: Option<&Path>,
    target: &str,
    kind: Kind,
    message: &str,
    input: &[u8],
) -> Option<PathBuf> {
    let dir = dir?;
    let path = dir.join(format!("{target}-{}-{:016x}", kind.name(), fnv1a(input)));
    let written = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&path, input))
        .and_then(|_| {
            let mut txt = path.clone().into_os_string();
            txt.push(".txt");
            std::fs::write(txt, format!("{target} {}: {message}\n", kind.name()))
        });
    match written {
        Ok(()) => Some(path),
        Err(e) => {
            eprintln!("{target}: cannot save a finding in {}: {e}", dir.display());
            None
        }
    }
}

/// FNV-1a, 64 bits: a stable file name for an input.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

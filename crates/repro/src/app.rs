//! `cinterrupts reproduce --mode app`: the paper's application experiments
//! on real RocksDB (Debian's `db_bench` and `ldb`, 7.8.3), each run under
//! exec as `cinterrupts exec --device optane` runs a program (the exec
//! crate called as a library, in `apprun`), so that RocksDB's direct
//! I/O goes through the emulated device with the policy under test: TOS
//! Table 3 (`fillbatch`), Fig 22 (`readrandom`, `readwhilewriting`,
//! threads varied) and Table 6 (`readrandom` beside `ldb dump` on a second
//! database).
//!
//! The authors' command lines are in `shared/papers/artifact-configs.md`
//! ("Macrobenchmarks", lines 57-73, cited below as `ac:LINE`); what we
//! change to fit a 2-vCPU VM in a few minutes is [`Scale`], every field
//! named as our choice. Claims are checked as in the other modes: the
//! paper's figure, ours, a verdict computed from a tolerance set from the
//! paper's number by `claims.toml`'s rules (a ratio within a factor of 1.5,
//! on the same side of 1; "the same" 0.9..1.1; a direction a bound at 1).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;

use crate::apprun::{exec, fail, opt, with_device, Ctx, System};
pub use crate::apprun::{parse_db_bench, Measured};
use crate::claims::Verdict;
use crate::staging::Staged;
use crate::ReproError;

/// The experiments, in the paper's order.
pub const EXPERIMENTS: &[&str] = &["table3", "fig22", "table6", crate::xval::ID];

/// The experiments that need `ldb` besides `db_bench` and fail without
/// them; `xval-rocksdb` runs its model side alone and says so instead.
const TOOL_EXPERIMENTS: &[&str] = &["table3", "fig22", "table6"];

/// How far the paper's runs are scaled down. The paper: 10 M keys of 16 B
/// keys and 1 KiB values (TOS 5.4.1; ac:59-60), a 20 GB database for the
/// steady state, readrandom with 4 threads and 100,000 reads (ac:63),
/// readwhilewriting with 3 threads for 30 s (ac:62; TOS 5.4.1), threads
/// varied up to 8 (TOS 5.4.1, Fig 22), 5 runs each (ac:57).
#[derive(Clone, Debug, Serialize)]
pub struct Scale {
    /// Keys per database (ours; the paper's 10 M).
    pub keys: u64,
    /// Memtable size (ours; RocksDB's default 64 MiB): a 1 MiB memtable
    /// keeps the load's flushes and compactions, the background I/O app-cint
    /// unmarks, at about the paper's count per key loaded.
    pub write_buffer_size: u64,
    /// Reads per readrandom thread (ours; the paper's 100,000, ac:63).
    pub reads: u64,
    /// readwhilewriting's duration in seconds (ours; the paper's 30, ac:62).
    pub duration_s: u64,
    /// Fig 22's thread counts (ours; the paper's "up to 8", ac:62-65).
    pub threads: Vec<u32>,
    /// Table 6's readrandom threads (ac:63: 4).
    pub table6_threads: u32,
    /// Runs per configuration (ours; the paper's 5, ac:57).
    pub reps: u32,
    /// `xval-rocksdb`'s own scale (issue 16 item 4).
    pub xval: crate::xval::XvalScale,
}

impl Scale {
    /// A few minutes on this 2-vCPU VM (the README gives the time).
    pub fn full() -> Scale {
        Scale {
            keys: 30_000,
            write_buffer_size: 1 << 20,
            reads: 5_000,
            duration_s: 2,
            threads: vec![1, 2, 4],
            table6_threads: 4,
            reps: 1,
            xval: crate::xval::XvalScale::full(),
        }
    }

    /// The integration test's: every experiment, tiny.
    pub fn quick() -> Scale {
        Scale {
            keys: 5_000,
            write_buffer_size: 256 << 10,
            reads: 500,
            duration_s: 1,
            threads: vec![1, 2],
            table6_threads: 2,
            reps: 1,
            xval: crate::xval::XvalScale::quick(),
        }
    }
}

/// What `reproduce --mode app` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    pub only: Vec<String>,
    pub scale: Scale,
    pub out: PathBuf,
    pub command: String,
}

const TABLE_SYSTEMS: [System; 4] = [
    System::Cint,
    System::Default,
    System::Adaptive,
    System::AppCint,
];
/// Fig 22 draws cint, default and adaptive (TOS 5.4.1: modified RocksDB
/// "had similar performance to unmodified", so app-cint is not drawn).
const FIG22_SYSTEMS: [System; 3] = [System::Cint, System::Default, System::Adaptive];

/// Every run's figures (averaged over reps), by experiment and run key.
type Results = BTreeMap<(String, String), Measured>;

/// The application mode's claims, read by the same code as `claims.toml`.
pub const CLAIMS: &str = include_str!("../app-claims.toml");

/// A figure of a run, by the name `app-claims.toml` uses.
fn field(m: &Measured, metric: &str) -> Option<f64> {
    match metric {
        "ops" => Some(m.ops_per_sec),
        "avg_us" => m.avg_us,
        "p50_us" => m.p50_us,
        "p99_us" => m.p99_us,
        "dump_keys_per_s" => m.dump_keys_per_sec,
        _ => None,
    }
}

const METRICS: [&str; 5] = ["ops", "avg_us", "p50_us", "p99_us", "dump_keys_per_s"];

fn fig22_key(bench: &str, system: &str, threads: u32) -> String {
    format!("{bench}/{system}/t{threads}")
}

/// The runs the application mode makes at a scale, for [`crate::claims`].
pub struct Catalogue<'a>(pub &'a Scale);

impl crate::claims::Catalogue for Catalogue<'_> {
    fn experiment(&self, id: &str) -> Result<(), String> {
        match EXPERIMENTS.contains(&id) {
            true => Ok(()),
            false => Err(format!(
                "no experiment '{id}' (have: {})",
                EXPERIMENTS.join(", ")
            )),
        }
    }

    fn has_run(&self, id: &str, key: &str) -> bool {
        let threads = |v: &[u32], t: &str| v.iter().any(|n| format!("t{n}") == t);
        let parts: Vec<&str> = key.split('/').collect();
        match (id, parts.as_slice()) {
            ("table3" | "table6", [sys]) => TABLE_SYSTEMS.iter().any(|s| s.name() == *sys),
            ("fig22", [bench, sys, t]) => {
                ["readrandom", "readwhilewriting"].contains(bench)
                    && FIG22_SYSTEMS.iter().any(|s| s.name() == *sys)
                    && threads(&self.0.threads, t)
            }
            // Every configuration the full comparison makes: a smaller
            // scale leaves the rest "not run".
            (x, [side, sys, t]) if x == crate::xval::ID => {
                let full = crate::xval::XvalScale::full();
                ["real", "model"].contains(side)
                    && full.systems.iter().any(|s| s == sys)
                    && threads(&full.threads, t)
            }
            _ => false,
        }
    }

    fn groups(&self, id: &str) -> Vec<String> {
        match id {
            "fig22" => self.0.threads.iter().map(|t| format!("t{t}")).collect(),
            _ => Vec::new(),
        }
    }

    fn metric(&self, metric: &str) -> Result<(), String> {
        match METRICS.contains(&metric) {
            true => Ok(()),
            false => Err(format!(
                "unknown metric '{metric}' (have: {})",
                METRICS.join(", ")
            )),
        }
    }
}

/// The runs' figures as a [`crate::claims::Source`]: one figure per run
/// (the mean of its repetitions).
struct Figures<'a> {
    results: &'a Results,
    catalogue: Catalogue<'a>,
}

impl crate::claims::Source for Figures<'_> {
    fn per_seed(&self, experiment: &str, key: &str, metric: &str) -> Option<Vec<f64>> {
        self.results
            .get(&(experiment.to_string(), key.to_string()))
            .and_then(|m| field(m, metric))
            .map(|v| vec![v])
    }

    fn groups(&self, experiment: &str) -> Vec<String> {
        crate::claims::Catalogue::groups(&self.catalogue, experiment)
    }

    fn defines(&self, experiment: &str, key: &str) -> bool {
        crate::claims::Catalogue::has_run(&self.catalogue, experiment, key)
    }
}

/// The shipped application claims, checked against the scale's runs.
pub fn load_claims(scale: &Scale) -> Result<Vec<crate::claims::Claim>, ReproError> {
    crate::claims::load_in(CLAIMS, "app-claims.toml", &Catalogue(scale)).map_err(ReproError::Claims)
}

/// A claim's verdict, for the report and the summary.
#[derive(Clone, Debug, Serialize)]
pub struct Checked {
    pub experiment: String,
    pub claim: String,
    pub source: String,
    pub formula: String,
    pub paper: String,
    pub kind: String,
    /// A number, or a word for an infinite or undefined figure.
    pub ours: serde_json::Value,
    pub band: String,
    pub basis: String,
    pub verdict: String,
}

impl Checked {
    fn of(c: &crate::claims::Claim, k: &crate::claims::Checked) -> Checked {
        Checked {
            experiment: c.experiment.clone(),
            claim: c.claim.clone(),
            source: c.source.clone(),
            formula: c.formula(),
            paper: c.paper.clone(),
            kind: c.kind_text(),
            ours: k.ours_json(),
            band: k.band.to_string(),
            basis: k.basis.as_str().to_string(),
            verdict: k.verdict.as_str().to_string(),
        }
    }
}

/// What `reproduce --mode app` found.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub mode: &'static str,
    /// Parts not run, one line each (xval-rocksdb without db_bench).
    pub skipped: Vec<String>,
    pub command: String,
    pub scale: Scale,
    pub wall_secs: f64,
    pub runs: BTreeMap<String, Measured>,
    /// Runs that failed or timed out (their claims "not run").
    pub failed: Vec<String>,
    pub claims: Vec<Checked>,
    /// The 1-minute load average when the runs started and ended
    /// (`/proc/loadavg`): real programs' figures move with it, and the
    /// cross-validation's bounds come from a measurement at 1.3-1.7
    /// ([`crate::xval::MEASURED`]).
    pub load_average: [Option<f64>; 2],
}

/// This machine's 1-minute load average, if `/proc/loadavg` says it.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl Summary {
    /// `reproduce --mode app`'s last line: the tally and where the report
    /// in `out` is.
    pub fn last_line(&self, out: &std::path::Path) -> String {
        format!(
            "{}; report: {}",
            self.tally(),
            out.join("report.md").display()
        )
    }

    /// `N claims: H hold, Q qualitatively, D do not`.
    pub fn tally(&self) -> String {
        let n = |v: Verdict| {
            self.claims
                .iter()
                .filter(|c| c.verdict == v.as_str())
                .count()
        };
        format!(
            "{} claims: {} hold, {} hold qualitatively, {} right direction but far off, {} do not, {} not run; {} runs failed ({:.0} s)",
            self.claims.len(),
            n(Verdict::Holds),
            n(Verdict::Qualitatively),
            n(Verdict::FarOff),
            n(Verdict::DoesNotHold),
            n(Verdict::NotRun),
            self.failed.len(),
            self.wall_secs
        )
    }
}

/// db_bench and ldb on the PATH, or one line saying they are not.
pub fn check_tools() -> Result<(), ReproError> {
    for tool in ["db_bench", "ldb"] {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
            .unwrap_or(false);
        if !found {
            return Err(ReproError::MissingTool(format!(
                "--mode app needs RocksDB's {tool} on the PATH (Debian: apt-get install rocksdb-tools; scripts/setup installs it)"
            )));
        }
    }
    Ok(())
}

/// A fresh copy of the loaded database `pristine` (every steady-state run
/// starts from the same database: readwhilewriting's writes would
/// otherwise grow it from run to run).
fn fresh(experiment: &str, pristine: &Path, copy: &Path) -> Result<(), ReproError> {
    let _ = std::fs::remove_dir_all(copy);
    let o = Command::new("cp")
        .arg("-a")
        .arg(pristine)
        .arg(copy)
        .output()
        .map_err(|e| fail(experiment, "copy", e))?;
    if !o.status.success() {
        return Err(fail(experiment, "copy", String::from_utf8_lossy(&o.stderr)));
    }
    Ok(())
}

/// db_bench's flags common to every run: the authors' (ac:59-60, 63-64)
/// and our scaling (write_buffer_size, cache_size).
fn common_flags(scale: &Scale, db: &Path) -> Vec<String> {
    vec![
        // ac:59
        "--key_size=16".into(),
        "--value_size=1024".into(),
        format!("--num={}", scale.keys),
        // ac:60, 64
        "--use_direct_io_for_flush_and_compaction=true".into(),
        "--use_direct_reads=true".into(),
        "-compression_type=none".into(),
        // Ours: scaled memtable (Scale::write_buffer_size); no block cache,
        // so that every get reads the device as in the paper's 20 GB
        // database beside RocksDB's 8 MiB cache.
        format!("--write_buffer_size={}", scale.write_buffer_size),
        "--cache_size=0".into(),
        // Ours: the latency histogram (avg and p99 of the paper's tables).
        "--histogram=1".into(),
        format!("--db={}", db.display()),
    ]
}

/// fillbatch (ac:59-61): loads `db`.
fn load_flags(scale: &Scale, db: &Path) -> Vec<String> {
    let mut f = vec![
        "--benchmarks=fillbatch".to_string(),
        "--threads=1".into(),
        "-batch_size=4000".into(),
    ];
    f.extend(common_flags(scale, db));
    f
}

/// The steady-state flags (ac:62-64).
fn steady_flags(scale: &Scale, db: &Path, bench: &str, threads: u32) -> Vec<String> {
    let mut f = vec![
        format!("--benchmarks={bench}"),
        format!("--threads={threads}"),
        "-use_existing_db=true".into(),
        "--disable_auto_compactions=true".into(),
    ];
    match bench {
        "readwhilewriting" => f.push(format!("-duration={}", scale.duration_s)),
        _ => f.push(format!("--reads={}", scale.reads)),
    }
    f.extend(common_flags(scale, db));
    f
}

/// A marking rule as `--mark-thread` (`thread`) or `--mark-file` spell
/// it, `GLOB=MARK`.
fn rule(thread: bool, s: &str) -> Result<exec::Rule, ReproError> {
    exec::Rule::legacy(thread, s).map_err(ReproError::Claims)
}

pub(crate) fn arg_strings(program: &str, flags: Vec<String>) -> Vec<String> {
    std::iter::once(program.to_string()).chain(flags).collect()
}

/// A database loaded with fillbatch outside exec (setup, not measured).
fn load_plain(scale: &Scale, experiment: &str, db: &Path) -> Result<(), ReproError> {
    let _ = std::fs::remove_dir_all(db);
    let o = Command::new("db_bench")
        .args(load_flags(scale, db))
        .output()
        .map_err(|e| fail(experiment, "load", e))?;
    if !o.status.success() {
        return Err(fail(
            experiment,
            "load",
            format!("db_bench fillbatch failed ({})", o.status),
        ));
    }
    Ok(())
}

fn table3(ctx: &Ctx, scale: &Scale, results: &mut Results) -> Result<(), ReproError> {
    for system in TABLE_SYSTEMS {
        let mut reps = Vec::new();
        for rep in 1..=scale.reps {
            let db = ctx.scratch.join("t3db");
            let _ = std::fs::remove_dir_all(&db);
            let marks: Vec<exec::Rule> = match system {
                // The authors' patch: flush and compaction non-Urgent
                // (TOS 4.1.2; RocksDB names those threads rocksdb:*), as
                // `--mark-thread 'rocksdb:*=none'`.
                System::AppCint => vec![rule(true, "rocksdb:*=none")?],
                _ => vec![],
            };
            let run = format!("{}/r{rep}", system.name());
            let program = arg_strings("db_bench", load_flags(scale, &db));
            let m = exec(ctx, "table3", &run, system, &marks, &program).and_then(|(out, v)| {
                let m = parse_db_bench(&out, "fillbatch").ok_or_else(|| {
                    fail("table3", &run, "no fillbatch line in db_bench's output")
                })?;
                Ok(with_device(m, &v))
            });
            reps.extend(ctx.keep(m));
        }
        if !reps.is_empty() {
            results.insert(
                ("table3".into(), system.name().into()),
                Measured::mean_of(&reps),
            );
        }
    }
    Ok(())
}

fn fig22(ctx: &Ctx, scale: &Scale, results: &mut Results) -> Result<(), ReproError> {
    let pristine = ctx.scratch.join("f22loaded");
    let db = ctx.scratch.join("f22db");
    load_plain(scale, "fig22", &pristine)?;
    for bench in ["readrandom", "readwhilewriting"] {
        for &threads in &scale.threads {
            for system in FIG22_SYSTEMS {
                let key = fig22_key(bench, system.name(), threads);
                let mut reps = Vec::new();
                for rep in 1..=scale.reps {
                    let run = format!("{key}/r{rep}");
                    fresh("fig22", &pristine, &db)?;
                    let program = arg_strings("db_bench", steady_flags(scale, &db, bench, threads));
                    let m = exec(ctx, "fig22", &run, system, &[], &program).and_then(|(out, v)| {
                        let m = parse_db_bench(&out, bench).ok_or_else(|| {
                            fail(
                                "fig22",
                                &run,
                                format!("no {bench} line in db_bench's output"),
                            )
                        })?;
                        Ok(with_device(m, &v))
                    });
                    reps.extend(ctx.keep(m));
                }
                if !reps.is_empty() {
                    results.insert(("fig22".into(), key), Measured::mean_of(&reps));
                }
            }
        }
    }
    Ok(())
}

/// readrandom on one database while `ldb dump` runs over and over on a
/// second (TOS 5.5.1: "we run the dump tool on the second database"), both
/// under one exec (one device for every process, as the paper's one SSD).
fn table6(ctx: &Ctx, scale: &Scale, results: &mut Results) -> Result<(), ReproError> {
    let db = ctx.scratch.join("t6db");
    let dump_db = ctx.scratch.join("t6dump");
    load_plain(scale, "table6", &db)?;
    load_plain(scale, "table6", &dump_db)?;
    let bench = arg_strings(
        "db_bench",
        steady_flags(scale, &db, "readrandom", scale.table6_threads),
    );
    let quoted: Vec<String> = bench.iter().map(|a| format!("'{a}'")).collect();
    let dump_out = ctx.scratch.join("dump.txt");
    // The dump loops while readrandom runs; its rate is keys dumped over
    // the loop's time.
    let script = format!(
        "{bench} & B=$!\n\
         n=0; t0=$(date +%s%N)\n\
         while kill -0 $B 2>/dev/null; do ldb --db='{dump}' dump > '{out}' || exit 1; n=$((n+1)); done\n\
         t1=$(date +%s%N)\n\
         wait $B || exit 1\n\
         echo \"dump_runs $n dump_ns $((t1-t0))\"\n",
        bench = quoted.join(" "),
        dump = dump_db.display(),
        out = dump_out.display(),
    );
    for system in TABLE_SYSTEMS {
        let marks: Vec<exec::Rule> = match system {
            // The authors' 2-line dump-tool patch: its I/O non-Urgent
            // (TOS 4.1.2, 5.5.1): every request on the dumped database,
            // as `--mark-file 'DB/*=none'`.
            System::AppCint => vec![rule(false, &format!("{}/*=none", dump_db.display()))?],
            _ => vec![],
        };
        let mut reps = Vec::new();
        for rep in 1..=scale.reps {
            let run = format!("{}/r{rep}", system.name());
            let program = vec!["sh".to_string(), "-c".into(), script.clone()];
            let m = exec(ctx, "table6", &run, system, &marks, &program).and_then(|(out, v)| {
                let mut m = parse_db_bench(&out, "readrandom").ok_or_else(|| {
                    fail("table6", &run, "no readrandom line in db_bench's output")
                })?;
                let dump = out.lines().find_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    match w.as_slice() {
                        ["dump_runs", n, "dump_ns", ns] => {
                            Some((n.parse::<f64>().ok()?, ns.parse::<f64>().ok()?))
                        }
                        _ => None,
                    }
                });
                m.dump_keys_per_sec = dump
                    .filter(|&(_, ns)| ns > 0.0)
                    .map(|(n, ns)| n * scale.keys as f64 / (ns / 1e9));
                Ok(with_device(m, &v))
            });
            reps.extend(ctx.keep(m));
        }
        if !reps.is_empty() {
            results.insert(
                ("table6".into(), system.name().into()),
                Measured::mean_of(&reps),
            );
        }
    }
    Ok(())
}

/// Runs the selected experiments and writes `report.md`, `summary.json`
/// and every run's db_bench output and exec report under `runs/`.
/// `progress` hears each run's name as it starts.
pub fn reproduce(opts: &Options, progress: &dyn Fn(&str)) -> Result<Summary, ReproError> {
    let started = Instant::now();
    let load_before = load_average();
    for id in &opts.only {
        if !EXPERIMENTS.contains(&id.as_str()) {
            return Err(ReproError::Unknown(id.clone(), EXPERIMENTS.join(",")));
        }
    }
    let selected = |id: &str| opts.only.is_empty() || opts.only.iter().any(|o| o == id);
    if TOOL_EXPERIMENTS.iter().any(|id| selected(id)) {
        check_tools()?;
    }
    let staged = Staged::prepare(&opts.out)?;
    let wfail = |p: &Path, e: std::io::Error| ReproError::Write {
        path: p.display().to_string(),
        reason: e.to_string(),
    };
    let scratch = staged.path().join("scratch");
    let runs = staged.path().join("runs");
    for d in [&scratch, &runs] {
        std::fs::create_dir_all(d).map_err(|e| wfail(d, e))?;
    }
    let ctx = Ctx {
        scratch: scratch.clone(),
        runs,
        progress,
        failed: Default::default(),
    };
    let mut results = Results::new();
    let mut skipped = Vec::new();
    let mut run_all = |results: &mut Results| -> Result<(), ReproError> {
        if selected("table3") {
            table3(&ctx, &opts.scale, results)?;
        }
        if selected("fig22") {
            fig22(&ctx, &opts.scale, results)?;
        }
        if selected("table6") {
            table6(&ctx, &opts.scale, results)?;
        }
        if selected(crate::xval::ID) {
            skipped.extend(crate::xval::run(&ctx, &opts.scale.xval, results)?);
        }
        Ok(())
    };
    let outcome = run_all(&mut results);
    let _ = std::fs::remove_dir_all(&scratch);
    outcome?;
    let figures = Figures {
        results: &results,
        catalogue: Catalogue(&opts.scale),
    };
    // The comparison's claims of configurations this scale does not make
    // are left out (the quick scale compares cint alone).
    let made = |c: &crate::claims::Claim| {
        c.experiment != crate::xval::ID
            || opts
                .scale
                .xval
                .systems
                .iter()
                .any(|s| c.run.contains(&format!("/{s}/")))
                && opts
                    .scale
                    .xval
                    .threads
                    .iter()
                    .any(|t| c.run.ends_with(&format!("/t{t}")))
    };
    let claims: Vec<Checked> = load_claims(&opts.scale)?
        .iter()
        .filter(|c| made(c))
        .map(|c| Checked::of(c, &c.check_in(&figures)))
        .collect();
    let summary = Summary {
        mode: "app",
        skipped,
        command: opts.command.clone(),
        scale: opts.scale.clone(),
        wall_secs: started.elapsed().as_secs_f64(),
        runs: results
            .iter()
            .map(|((e, k), m)| (format!("{e}/{k}"), m.clone()))
            .collect(),
        failed: ctx.failed.borrow().clone(),
        claims,
        load_average: [load_before, load_average()],
    };
    let md = staged.path().join("report.md");
    std::fs::write(&md, markdown(&summary)).map_err(|e| wfail(&md, e))?;
    let js = staged.path().join("summary.json");
    let text = serde_json::to_string_pretty(&summary).expect("serializable");
    std::fs::write(&js, text).map_err(|e| wfail(&js, e))?;
    staged.commit()?;
    Ok(summary)
}

/// The verdict table alone (printed by the command).
pub fn verdict_table(s: &Summary) -> String {
    let mut t = String::from(
        "| experiment | claim | paper | kind | ours | band | basis | verdict |\n|---|---|---|---|---|---|---|---|\n",
    );
    for c in &s.claims {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            c.experiment,
            c.claim,
            c.paper,
            c.kind,
            match c.ours.as_f64() {
                Some(v) => format!("{v:.3}"),
                None => c.ours.as_str().unwrap_or("-").to_string(),
            },
            c.band,
            c.basis,
            c.verdict
        );
    }
    t
}

fn markdown(s: &Summary) -> String {
    let mut t = String::new();
    let sc = &s.scale;
    let _ = writeln!(
        t,
        "# cinterrupts reproduce --mode app\n\n`{}`, {:.0} s.\n\n\
         RocksDB's db_bench and ldb (Debian 7.8.3; the paper's 6.4.6) under \
         `cinterrupts exec --device optane`; policies as the artifact's \
         (shared/papers/artifact-configs.md:66-67): default; adaptive delta 6us thr 32; \
         cint delta 15us thr 32; app-cint = cint with flush and compaction threads \
         (`rocksdb:*`) or the dump's database unmarked.\n\n\
         ## Scaling (ours, beside the paper's)\n\n\
         | | paper | here |\n|---|---|---|\n\
         | keys per database (16 B keys, 1 KiB values) | 10 M | {} |\n\
         | memtable | 64 MiB (default) | {} KiB |\n\
         | block cache | 8 MiB (default) beside 20 GB | none |\n\
         | readrandom reads per thread | 100,000 | {} |\n\
         | readwhilewriting duration | 30 s | {} s |\n\
         | Fig 22 threads | up to 8 | {:?} |\n\
         | Table 6 readrandom threads | 4 | {} |\n\
         | runs per configuration | 5 | {} |\n\
         | cores | 2 per application (+ emulator core) | 1 for the programs, 1 for the device thread |\n",
        s.command,
        s.wall_secs,
        sc.keys,
        sc.write_buffer_size >> 10,
        sc.reads,
        sc.duration_s,
        sc.threads,
        sc.table6_threads,
        sc.reps
    );
    let _ = writeln!(t, "## Claims\n\n{}", verdict_table(s));
    for line in &s.skipped {
        let _ = writeln!(t, "Skipped: {line}\n");
    }
    if !s.failed.is_empty() {
        let _ = writeln!(t, "Runs that failed (their claims not run):\n");
        for f in &s.failed {
            let _ = writeln!(t, "- {f}");
        }
        let _ = writeln!(t);
    }
    let _ = writeln!(
        t,
        "How each figure is formed:\n\n| claim | ours = | source |\n|---|---|---|"
    );
    for c in &s.claims {
        let _ = writeln!(t, "| {} | {} | {} |", c.claim, c.formula, c.source);
    }
    if s.runs.keys().any(|k| k.starts_with(crate::xval::ID)) {
        t.push_str(&crate::xval::markdown(
            &s.scale.xval,
            &s.runs,
            s.load_average,
        ));
    }
    let _ = writeln!(
        t,
        "\n## Runs\n\n| run | ops/s | avg us | p99 us | dump keys/s | interrupts | completions/interrupt |\n|---|---|---|---|---|---|---|"
    );
    for (k, m) in &s.runs {
        let _ = writeln!(
            t,
            "| {k} | {:.0} | {} | {} | {} | {} | {} |",
            m.ops_per_sec,
            opt(m.avg_us, 1),
            opt(m.p99_us, 1),
            opt(m.dump_keys_per_sec, 0),
            opt(m.interrupts, 0),
            opt(m.completions_per_interrupt, 2)
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "\
Initializing RocksDB Options from the specified file
fillbatch    :      54.321 micros/op 18409 ops/sec 1.086 seconds 20000 operations;   18.3 MB/s
Microseconds per write:
Count: 5 Average: 4115.4000  StdDev: 1079.33
Min: 3057  Median: 3900.0000  Max: 6036
Percentiles: P50: 3900.00 P75: 4650.00 P99: 6036.00 P99.9: 6036.00 P99.99: 6036.00
------------------------------------------------------
readrandom   :       2.523 micros/op 396165 ops/sec 0.050 seconds 20000 operations;   43.8 MB/s (20000 of 20000 found)
Microseconds per read:
Count: 20000 Average: 2.5000  StdDev: 1.0
Percentiles: P50: 2.00 P75: 3.00 P99: 9.50 P99.9: 20.00 P99.99: 30.00
";

    #[test]
    fn db_bench_lines_and_histograms() {
        let m = parse_db_bench(OUT, "fillbatch").unwrap();
        assert_eq!(m.ops_per_sec, 18409.0);
        assert_eq!(m.avg_us, Some(4115.4));
        assert_eq!(m.p99_us, Some(6036.0));
        let m = parse_db_bench(OUT, "readrandom").unwrap();
        assert_eq!(m.ops_per_sec, 396165.0);
        assert_eq!(m.avg_us, Some(2.5));
        assert_eq!(m.p99_us, Some(9.5));
        assert!(parse_db_bench(OUT, "readwhilewriting").is_none());
    }

    #[test]
    fn every_claim_names_runs_the_experiments_make() {
        let scale = Scale::quick();
        let mut results = Results::new();
        for s in TABLE_SYSTEMS {
            for e in ["table3", "table6"] {
                results.insert(
                    (e.into(), s.name().into()),
                    Measured {
                        ops_per_sec: 1.0,
                        avg_us: Some(1.0),
                        p99_us: Some(1.0),
                        dump_keys_per_sec: Some(1.0),
                        ..Measured::default()
                    },
                );
            }
        }
        for b in ["readrandom", "readwhilewriting"] {
            for &t in &scale.threads {
                for s in FIG22_SYSTEMS {
                    results.insert(
                        ("fig22".into(), fig22_key(b, s.name(), t)),
                        Measured {
                            ops_per_sec: 1.0,
                            avg_us: Some(1.0),
                            p99_us: Some(1.0),
                            ..Measured::default()
                        },
                    );
                }
            }
        }
        let figures = Figures {
            results: &results,
            catalogue: Catalogue(&scale),
        };
        for c in load_claims(&scale).unwrap() {
            if c.experiment != crate::xval::ID {
                let k = c.check_in(&figures);
                assert!(k.ours.is_some(), "{}", c.claim);
            }
        }
        // Both scales name the same runs.
        assert!(load_claims(&Scale::full()).is_ok());
    }
}

//! `xval-rocksdb` (issue 16 item 4): the RocksDB-like model
//! ([`apps::rocks`] run by [`sim::simulate_app`]) against real `db_bench`
//! readrandom under `cinterrupts exec --device optane`, at the same keys,
//! value size, block cache, reads, threads, core, device profile and
//! policy. Part of `reproduce --mode app`; the measured side and its noise
//! are in `examples/apps/xval/` (README.md, measured-2026-11-26-quiet.json).
//!
//! The claims compare the model's figure with the real median over the
//! repetitions: within `T`, where `T` is fixed before the model runs, per
//! configuration (system, threads) and figure, from the real program's
//! run-to-run spread in the committed measurement [`MEASURED`] (embedded
//! at build time; [`tolerances`] applies the rule [`spread_bounds`] to it,
//! and a test recomputes the table from the JSON).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use policy::SEC;
use serde::Serialize;

use crate::apprun::{self as app, Ctx, Measured, System};
use crate::ReproError;

pub const ID: &str = "xval-rocksdb";

/// The committed measurement the tolerances come from: `measure.sh` at
/// 2026-11-26 15:50 UTC, 5 interleaved repetitions of every configuration
/// (cint, default, adaptive and plain, 1 and 2 threads), load average
/// 1.30-1.68 before and after every run. Not the first measurement
/// ([`SUPERSEDED_MEASURED`], load 8.1-9.7): its spread is mostly three
/// other engineers' builds on the program's CPU (README there: a spinner
/// on CPU 0 alone cut throughput several-fold), not the program's.
pub const MEASURED: &str = "examples/apps/xval/measured-2026-11-26-quiet.json";

/// [`MEASURED`]'s text, fixed at build time: the bounds are set before
/// any model run and cannot move with anything the run does.
const MEASURED_JSON: &str =
    include_str!("../../../examples/apps/xval/measured-2026-11-26-quiet.json");

/// Standard deviations per unit of MAD for normal data, 1 / Phi^-1(3/4)
/// (Rousseeuw and Croux, "Alternatives to the median absolute deviation",
/// JASA 88(424), 1993): [`spread_bounds`]'s sigma is this times MAD /
/// median.
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// The bound in robust standard deviations: T = `K_SIGMA` x sigma. Three,
/// the "very conservative" cut-off of Leys et al., "Detecting outliers: do
/// not use standard deviation around the mean, use absolute deviation
/// around the median" (J. Exp. Soc. Psychology 49(4), 2013, after Miller
/// 1991): a normal repetition falls outside it 0.27% of the time, so a
/// model that misses it differs from the real program by more than the
/// program differs from itself.
pub const K_SIGMA: f64 = 3.0;

/// The least T: 5%. With 5 repetitions the MAD is the median of 5
/// deviations, and it reads 1-2% whenever three runs happen to agree
/// (cint, 1 thread, p50: 0.8%); 5 runs cannot resolve a spread below this.
pub const T_FLOOR: f64 = 0.05;

/// The rule needs this many repetitions of a configuration (a MAD of 1 or
/// 2 runs is 0 or half their distance: no spread).
pub const MIN_REPS: usize = 3;

/// The bounds before this rule (set in a8d13eb, replaced for issue 23
/// item 6): (throughput, mean, p50) for every configuration, the largest
/// (max - min) / median over the configurations of
/// [`SUPERSEDED_MEASURED`], rounded up to the next 5%. Reported beside the
/// new ones, never used by a claim.
pub const SUPERSEDED_T: [f64; 3] = [3.55, 3.40, 0.45];

/// The measurement [`SUPERSEDED_T`] came from (load average 8.1-9.7).
pub const SUPERSEDED_MEASURED: &str = "examples/apps/xval/measured-2026-11-26.json";

/// One configuration's bounds, as fractions of the real median (0.14:
/// the model's figure within 14% of it).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Tolerance {
    /// Throughput (db_bench's ops/s).
    pub ops: f64,
    /// Mean get latency.
    pub mean: f64,
    /// Median get latency.
    pub p50: f64,
}

/// (system, threads) -> its bounds.
pub type Tolerances = BTreeMap<(String, u32), Tolerance>;

/// Above this 1-minute load average the real side shares its CPUs with
/// other work: the quiet reference [`MEASURED`] was taken at 1.3-1.7 on 2
/// vCPUs, so the report says such a run is no fair verdict.
pub const LOAD_FAIR: f64 = 2.0;

/// The host profile of the model's runs: this VM as exec runs a program on
/// it (`profiles/hosts/vm-exec.toml`: its system call, thread switch and
/// the per-get path measured here by `examples/apps/xval/exec-path.sh`, and
/// exec's polled interrupt delivery, `irq_taken = "poll"`). Against the
/// paper's calibrated `xeon-e5-2660v4` the model was 3-8x too fast at 2
/// threads (its path is a real kernel's, its interrupts taken at once).
pub const HOST: &str = "vm-exec";

/// Seeds per model run, averaged (ours: the model's draws, cache hits and
/// service times, differ by seed; 3 as `reproduce --quick`'s).
const SEEDS: u64 = 3;

/// Virtual time a model run may take: every reader finishes its gets long
/// before (10,000 gets of ~20-50 us), and the run ends with them.
const MODEL_RUNTIME: u64 = 30 * SEC;

/// How big the comparison is.
#[derive(Clone, Debug, Serialize)]
pub struct XvalScale {
    /// Keys loaded (16 B keys, 1 KiB values: artifact-configs.md:59).
    pub keys: u64,
    /// Reads per db_bench thread (`--reads`; the artifact's 100,000,
    /// artifact-configs.md:63).
    pub reads: u64,
    /// db_bench `--threads` (the artifact's 4, artifact-configs.md:63,
    /// scaled to 2 vCPUs, one of them exec's device thread's).
    pub threads: Vec<u32>,
    /// The systems (artifact-configs.md:66-67), by name.
    pub systems: Vec<String>,
    /// Repetitions of each real run (the median is compared).
    pub reps: u32,
}

impl XvalScale {
    /// The committed measurement's sizes (examples/apps/xval/README.md:
    /// 250,000 keys, a 263 MB database 32x the 8 MiB block cache; 10,000
    /// reads per thread), 3 repetitions (the brief's; the committed run
    /// had 5). About 1-2 minutes here.
    pub fn full() -> XvalScale {
        XvalScale {
            keys: 250_000,
            reads: 10_000,
            threads: vec![1, 2],
            systems: vec!["cint".into(), "default".into(), "adaptive".into()],
            reps: 3,
        }
    }

    /// CI's: 20,000 keys (a 21 MB database, 2.6x the block cache, so ~40%
    /// of gets hit it; the model gets the same keys), 2,000 reads per
    /// thread, cint only, once. A few seconds.
    pub fn quick() -> XvalScale {
        XvalScale {
            keys: 20_000,
            reads: 2_000,
            threads: vec![1, 2],
            systems: vec!["cint".into()],
            reps: 1,
        }
    }
}

fn system(name: &str) -> Option<System> {
    match name {
        "default" => Some(System::Default),
        "adaptive" => Some(System::Adaptive),
        "cint" => Some(System::Cint),
        _ => None,
    }
}

/// db_bench's flags for every xval run: the artifact's (16 B keys, 1 KiB
/// values, direct reads and flush/compaction I/O, no compression;
/// artifact-configs.md:59-60, 63-64), db_bench's default 8 MiB block cache
/// and 64 MiB memtable (the artifact sets neither), the histogram.
fn flags(keys: u64, db: &Path) -> Vec<String> {
    vec![
        "--key_size=16".into(),
        "--value_size=1024".into(),
        format!("--num={keys}"),
        "--use_direct_io_for_flush_and_compaction=true".into(),
        "--use_direct_reads=true".into(),
        "-compression_type=none".into(),
        "--histogram=1".into(),
        format!("--db={}", db.display()),
    ]
}

fn readrandom(keys: u64, db: &Path, threads: u32, reads: u64) -> Vec<String> {
    let mut f = vec![
        "--benchmarks=readrandom".to_string(),
        "-use_existing_db=true".into(),
        "--disable_auto_compactions=true".into(),
        format!("--threads={threads}"),
        format!("--reads={reads}"),
    ];
    f.extend(flags(keys, db));
    f
}

fn db_bench(experiment_run: &str, args: &[String]) -> Result<(), ReproError> {
    let o = Command::new("db_bench")
        .args(args)
        .output()
        .map_err(|e| app::fail(ID, experiment_run, e))?;
    if !o.status.success() {
        return Err(app::fail(
            ID,
            experiment_run,
            format!("db_bench failed ({})", o.status),
        ));
    }
    Ok(())
}

/// Loads the database (fillbatch, artifact-configs.md:59-61), then opens
/// it once with one read: the reopen replays the load's last memtable from
/// the WAL into an L0 file, so no measured run writes.
fn load(keys: u64, db: &Path) -> Result<(), ReproError> {
    let _ = std::fs::remove_dir_all(db);
    let mut f = vec![
        "--benchmarks=fillbatch".to_string(),
        "--threads=1".into(),
        "-batch_size=4000".into(),
    ];
    f.extend(flags(keys, db));
    db_bench("load", &f)?;
    db_bench("load", &readrandom(keys, db, 1, 1))
}

/// exec `--device` moves the data through the page cache: read the SSTs
/// once so that no run pays this VM's disk on top of the profile.
fn warm(db: &Path) -> Result<(), ReproError> {
    let entries = std::fs::read_dir(db).map_err(|e| app::fail(ID, "warm", e))?;
    for e in entries.flatten() {
        if e.path().extension().is_some_and(|x| x == "sst") {
            let mut f = std::fs::File::open(e.path()).map_err(|e| app::fail(ID, "warm", e))?;
            std::io::copy(&mut f, &mut std::io::sink()).map_err(|e| app::fail(ID, "warm", e))?;
        }
    }
    Ok(())
}

fn key(side: &str, system: &str, threads: u32) -> String {
    format!("{side}/{system}/t{threads}")
}

/// The model's figures for one system and thread count: the mean over
/// `SEEDS` seeds of the reads' throughput, mean, p50 and p99 latency.
pub fn model(scale: &XvalScale, system_name: &str, threads: u32) -> Result<Measured, ReproError> {
    let run = key("model", system_name, threads);
    let fail = |why: String| app::fail(ID, &run, why);
    let sys = system(system_name).ok_or_else(|| fail(format!("no system '{system_name}'")))?;
    let mut cfg = apps::rocks::Config::new(apps::rocks::Benchmark::Readrandom);
    cfg.threads = threads;
    // Every db_bench thread on the program's one CPU under exec (CPU 0;
    // the device thread has CPU 1).
    cfg.cores = vec![0];
    cfg.num = scale.keys;
    cfg.reads = Some(scale.reads);
    cfg.disable_auto_compactions = true;
    // key_size 16, value_size 1024, cache_size 8 MiB, block_size 4 KiB,
    // logical_block_size 512: the config's defaults, db_bench's as run.
    let device = sim::DeviceProfile::load("optane").map_err(|e| fail(e.to_string()))?;
    let host = sim::HostProfile::load(HOST).map_err(|e| fail(e.to_string()))?;
    let mut runs = Vec::new();
    for seed in 1..=SEEDS {
        let placed = cfg.threads(0, "db_bench", seed).map_err(&fail)?;
        let config = sim::SimConfig {
            device: device.clone(),
            host: host.clone(),
            // exec's policy, in the simulator.
            policy: sys.policy(),
            seed,
            runtime: Some(MODEL_RUNTIME),
        };
        let (report, _) =
            sim::simulate_app(placed, &config, &mut |_, _| {}).map_err(|e| fail(e.to_string()))?;
        let apps = report
            .apps
            .as_ref()
            .ok_or_else(|| fail("no application report".into()))?;
        let op = apps
            .ops
            .iter()
            .find(|o| !o.background && o.kind == apps::OpKind::Read.name())
            .ok_or_else(|| fail("no gets finished".into()))?;
        let gets = (scale.reads * threads as u64) as f64;
        // Every core's busy share of the window (user, kernel, interrupt).
        let busy: f64 = apps
            .cores
            .iter()
            .map(|c| (c.user + c.kernel + c.irq) * report.duration_ns as f64)
            .sum();
        runs.push(Measured {
            ops_per_sec: op.ops_per_sec,
            avg_us: Some(op.lat.mean / 1e3),
            p50_us: Some(op.lat.percentile(50.0) as f64 / 1e3),
            p99_us: Some(op.lat.percentile(99.0) as f64 / 1e3),
            dump_keys_per_sec: None,
            interrupts: Some(report.interrupts as f64),
            completions_per_interrupt: Some(report.completions_per_interrupt()),
            // Per get, as the real side's below.
            commands: Some(report.completed_ios() as f64 / gets),
            cpu_us_per_get: Some(busy / gets / 1e3),
            delivery_us: None,
        });
    }
    Ok(Measured::mean_of(&runs))
}

/// One readrandom under exec: db_bench's figures, exec's device, and the
/// process's CPU in `cpu_us_per_get` (whole, in us: the caller takes the
/// open off and divides). db_bench runs under `sh -c`, whose `times`
/// prints its children's user and system time (10 ms ticks) on stderr.
fn real_run(
    ctx: &Ctx,
    run: &str,
    sys: System,
    db: &Path,
    keys: u64,
    threads: u32,
    reads: u64,
) -> Result<Measured, ReproError> {
    let mut program = vec![
        "sh".to_string(),
        "-c".into(),
        "db_bench \"$@\"; s=$?; times >&2; exit $s".into(),
        "sh".into(),
    ];
    program.extend(readrandom(keys, db, threads, reads));
    let (out, report) = app::exec(ctx, ID, run, sys, &[], &program)?;
    let mut m = app::parse_db_bench(&out, "readrandom")
        .ok_or_else(|| app::fail(ID, run, "no readrandom line in db_bench's output"))?;
    m = app::with_device(m, &report);
    let err = ctx.runs.join(format!("{ID}-{}.err", run.replace('/', "-")));
    let err = std::fs::read_to_string(err).unwrap_or_default();
    m.cpu_us_per_get = err.lines().rev().find_map(children_cpu).map(|s| s * 1e6);
    Ok(m)
}

/// The children's line of the shell's `times` (`0m0.230000s 0m0.110000s`
/// in dash, `0m0.230s 0m0.110s` in bash): user + system, in seconds.
pub fn children_cpu(line: &str) -> Option<f64> {
    let secs = |w: &str| -> Option<f64> {
        let (m, s) = w.strip_suffix('s')?.split_once('m')?;
        Some(m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?)
    };
    let w: Vec<&str> = line.split_whitespace().collect();
    match w.as_slice() {
        [u, s] => Some(secs(u)? + secs(s)?),
        _ => None,
    }
}

fn have_db_bench() -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("db_bench").is_file()))
        .unwrap_or(false)
}

/// Runs both sides into `results` (`xval-rocksdb`, `real/SYSTEM/tN` and
/// `model/SYSTEM/tN`) and checks the claims.
pub(crate) fn run(
    ctx: &Ctx,
    scale: &XvalScale,
    results: &mut BTreeMap<(String, String), Measured>,
) -> Result<Vec<String>, ReproError> {
    let mut skipped = Vec::new();
    let put = |results: &mut BTreeMap<(String, String), Measured>, k: String, m: Measured| {
        results.insert((ID.to_string(), k), m);
    };
    if have_db_bench() {
        let db = ctx.scratch.join("xvaldb");
        (ctx.progress)(&format!("{ID}-load ({} keys)", scale.keys));
        load(scale.keys, &db)?;
        // The open alone (one get per thread): its CPU and its device
        // reads, taken off every run's (README: 4-6 reads, ~50 ms).
        let mut open = BTreeMap::new();
        for &t in &scale.threads {
            warm(&db)?;
            let run = format!("open/t{t}");
            let m = real_run(ctx, &run, System::Cint, &db, scale.keys, t, 1);
            if let Some(m) = ctx.keep(m) {
                open.insert(t, m);
            }
        }
        let mut reps: BTreeMap<String, Vec<Measured>> = BTreeMap::new();
        // Interleaved, as measure.sh: a slow spell of the machine spreads
        // over every configuration instead of one.
        for rep in 1..=scale.reps {
            for &t in &scale.threads {
                for name in &scale.systems {
                    let sys = system(name).ok_or_else(|| app::fail(ID, name, "no such system"))?;
                    let k = key("real", name, t);
                    let run = format!("{k}/r{rep}");
                    warm(&db)?;
                    let gets = (scale.reads * t as u64) as f64;
                    let m =
                        real_run(ctx, &run, sys, &db, scale.keys, t, scale.reads).map(|mut m| {
                            // Per get, net of the open.
                            let o = open.get(&t);
                            let net = |x: Option<f64>, o: Option<f64>| {
                                x.zip(o).map(|(x, o)| (x - o).max(0.0) / gets)
                            };
                            m.commands = net(m.commands, o.and_then(|o| o.commands));
                            m.cpu_us_per_get =
                                net(m.cpu_us_per_get, o.and_then(|o| o.cpu_us_per_get));
                            m
                        });
                    reps.entry(k).or_default().extend(ctx.keep(m));
                }
            }
        }
        for (k, ms) in reps {
            if !ms.is_empty() {
                put(results, k, Measured::median_of(&ms));
            }
        }
    } else {
        let line = format!(
            "{ID}: real side skipped: db_bench not on the PATH (apt-get install rocksdb-tools; scripts/setup); the model ran alone"
        );
        skipped.push(line);
    }
    for &t in &scale.threads {
        for name in &scale.systems {
            (ctx.progress)(&format!("{ID}-{}", key("model", name, t).replace('/', "-")));
            let m = model(scale, name, t);
            if let Some(m) = ctx.keep(m) {
                put(results, key("model", name, t), m);
            }
        }
    }
    Ok(skipped)
}

/// The side-by-side table and what the comparison assumes.
pub fn markdown(
    x: &XvalScale,
    runs: &BTreeMap<String, Measured>,
    load_average: [Option<f64>; 2],
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "## {ID}: the RocksDB-like model against real db_bench\n\n\
         readrandom, {} keys (16 B keys, 1 KiB values, db_bench's 8 MiB block cache), \
         {} reads per thread; real: db_bench 7.8.3 under `cinterrupts exec --device optane`, \
         program on CPU 0, device thread on CPU 1, median of {} run(s); model: `apps::rocks` \
         in `sim::simulate_app`, every thread on core 0, device `optane`, host `{HOST}` \
         (this VM under exec: costs measured by examples/apps/xval/exec-path.sh, exec's \
         polled delivery), mean of {SEEDS} seeds.\n\n\
         Each claim: model / real median within 1 - T .. 1 + T (at least 0). T per \
         configuration and figure, fixed before the model ran: {K_SIGMA} x sigma, \
         sigma = {MAD_TO_SIGMA} x MAD / median of the real program's repetitions in \
         `{MEASURED}` (load 1.3-1.7), rounded up to a whole percent, at least {:.0}%. \
         Old: one T for all, the largest (max - min) / median over `{SUPERSEDED_MEASURED}` \
         (load 8-9), rounded up to 5%.\n\n\
         Load average here: {} at the start, {} at the end{}.\n\n\
         | system | threads | throughput T old | throughput T new | mean T old | mean T new | p50 T old | p50 T new |\n\
         |---|---|---|---|---|---|---|---|",
        x.keys,
        x.reads,
        x.reps,
        T_FLOOR * 100.0,
        app::opt(load_average[0], 2),
        app::opt(load_average[1], 2),
        if load_average.iter().flatten().any(|&l| l > LOAD_FAIR) {
            format!(
                " (above {LOAD_FAIR}: the bounds were set at 1.3-1.7, so the real side's \
                 figures here are other work's as much as the program's; no fair verdict)"
            )
        } else {
            String::new()
        }
    );
    let tols = tolerances().unwrap_or_default();
    let pct = |t: Option<f64>| t.map_or_else(|| "-".into(), |t| format!("{:.0}%", t * 100.0));
    for &th in &x.threads {
        for sys in &x.systems {
            let tol = tols.get(&(sys.clone(), th));
            let _ = write!(t, "| {sys} | {th} |");
            let picks: [fn(Tolerance) -> f64; 3] = [|t| t.ops, |t| t.mean, |t| t.p50];
            for (i, pick) in picks.into_iter().enumerate() {
                let _ = write!(
                    t,
                    " {} | {} |",
                    pct(Some(SUPERSEDED_T[i])),
                    pct(tol.copied().map(pick))
                );
            }
            t.push('\n');
        }
    }
    let _ = writeln!(
        t,
        "\n| system | threads | side | ops/s | mean us | p50 us | p99 us | device reads per get | CPU us per get | completions per interrupt | delivery us |\n\
         |---|---|---|---|---|---|---|---|---|---|---|"
    );
    let opt = app::opt;
    for &th in &x.threads {
        for sys in &x.systems {
            for side in ["real", "model"] {
                if let Some(m) = runs.get(&format!("{ID}/{}", key(side, sys, th))) {
                    let _ = writeln!(
                        t,
                        "| {sys} | {th} | {side} | {:.0} | {} | {} | {} | {} | {} | {} | {} |",
                        m.ops_per_sec,
                        opt(m.avg_us, 1),
                        opt(m.p50_us, 1),
                        opt(m.p99_us, 1),
                        opt(m.commands, 3),
                        opt(m.cpu_us_per_get, 1),
                        opt(m.completions_per_interrupt, 2),
                        opt(m.delivery_us, 1)
                    );
                }
            }
        }
    }
    t.push('\n');
    t
}

/// The rule: for every exec configuration (system and threads) of a
/// measurement file and each figure (throughput, mean and p50 get
/// latency), the robust run-to-run spread of the real program's
/// repetitions, sigma = [`MAD_TO_SIGMA`] x MAD / median (MAD: the median
/// of the absolute deviations from the median; one slow repetition is one
/// of 5 deviations and moves the MAD by at most one rank, where it alone
/// set the old rule's (max - min) / median), and the
/// bound T = [`K_SIGMA`] x sigma, rounded up to the next whole percent (so
/// a claim's text states the T it uses), at least [`T_FLOOR`]. `plain`
/// (no exec) has no claim and no bound. Errors name what does not fit.
pub fn spread_bounds(json: &serde_json::Value) -> Result<Tolerances, String> {
    let runs = json["runs"].as_array().ok_or("no runs")?;
    let mut by: BTreeMap<(String, u32), Vec<[f64; 3]>> = BTreeMap::new();
    for r in runs {
        let sys = r["system"].as_str().ok_or("a run without system")?;
        if sys == "plain" {
            continue;
        }
        let t = r["threads"]
            .as_u64()
            .and_then(|t| u32::try_from(t).ok())
            .ok_or("a run without threads")?;
        let num = |k: &str| r[k].as_f64().ok_or(format!("a run without {k}"));
        by.entry((sys.to_string(), t)).or_default().push([
            num("ops_per_sec")?,
            num("get_mean_us")?,
            num("get_p50_us")?,
        ]);
    }
    if by.is_empty() {
        return Err("no exec runs".into());
    }
    by.into_iter()
        .map(|((sys, t), reps)| {
            if reps.len() < MIN_REPS {
                return Err(format!(
                    "{sys}, {t} thread(s): {} repetition(s), the rule needs {MIN_REPS}",
                    reps.len()
                ));
            }
            let mut tol = [0.0; 3];
            for (i, x) in tol.iter_mut().enumerate() {
                let v: Vec<f64> = reps.iter().map(|r| r[i]).collect();
                let med = median(&v);
                if med.is_nan() || med <= 0.0 {
                    return Err(format!("{sys}, {t} thread(s): a median of {med}"));
                }
                let mad = median(&v.iter().map(|y| (y - med).abs()).collect::<Vec<_>>());
                let sigma = MAD_TO_SIGMA * mad / med;
                *x = ((K_SIGMA * sigma * 100.0 - 1e-9).ceil() / 100.0).max(T_FLOOR);
            }
            let [ops, mean, p50] = tol;
            Ok(((sys, t), Tolerance { ops, mean, p50 }))
        })
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The claims' bounds: [`spread_bounds`] of the committed [`MEASURED`]
/// (its text embedded at build time; a test checks that it parses and
/// covers every configuration of [`XvalScale::full`]).
pub fn tolerances() -> Result<Tolerances, String> {
    let v: serde_json::Value =
        serde_json::from_str(MEASURED_JSON).map_err(|e| format!("{MEASURED}: {e}"))?;
    spread_bounds(&v).map_err(|e| format!("{MEASURED}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUPERSEDED_JSON: &str =
        include_str!("../../../examples/apps/xval/measured-2026-11-26.json");

    fn run(s: &str, t: u32, ops: f64, mean: f64, p50: f64) -> serde_json::Value {
        serde_json::json!({"system": s, "threads": t, "ops_per_sec": ops,
            "get_mean_us": mean, "get_p50_us": p50})
    }

    fn tol(ops: f64, mean: f64, p50: f64) -> Tolerance {
        Tolerance { ops, mean, p50 }
    }

    #[test]
    fn tolerances_are_the_committed_measurements_spread() {
        // The embedded text is the file's, and the rule applied to it gives
        // this table (examples/apps/xval/README.md has it beside the old).
        let file = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(MEASURED),
        )
        .unwrap();
        assert_eq!(file, MEASURED_JSON);
        let v: serde_json::Value = serde_json::from_str(&file).unwrap();
        assert_eq!(spread_bounds(&v).unwrap(), tolerances().unwrap());
        let want: Tolerances = [
            ("adaptive", 1, tol(0.15, 0.14, 0.08)),
            ("adaptive", 2, tol(0.45, 0.42, 0.23)),
            ("cint", 1, tol(0.05, 0.05, 0.05)),
            ("cint", 2, tol(0.39, 0.36, 0.05)),
            ("default", 1, tol(0.20, 0.19, 0.10)),
            ("default", 2, tol(0.61, 0.64, 0.90)),
        ]
        .into_iter()
        .map(|(s, t, x)| ((s.to_string(), t), x))
        .collect();
        assert_eq!(tolerances().unwrap(), want);
        // Every configuration a full run claims has its bound.
        let full = XvalScale::full();
        for s in &full.systems {
            for &t in &full.threads {
                assert!(want.contains_key(&(s.clone(), t)), "{s} {t}");
            }
        }
    }

    #[test]
    fn the_superseded_bounds_were_the_loaded_measurements_widest_range() {
        // The old rule, kept here only to show where SUPERSEDED_T came
        // from: the largest (max - min) / median, rounded up to 5%.
        let v: serde_json::Value = serde_json::from_str(SUPERSEDED_JSON).unwrap();
        let mut by: BTreeMap<(String, u64), Vec<serde_json::Value>> = BTreeMap::new();
        for r in v["runs"].as_array().unwrap() {
            if r["system"] != "plain" {
                let k = (
                    r["system"].as_str().unwrap().to_string(),
                    r["threads"].as_u64().unwrap(),
                );
                by.entry(k).or_default().push(r.clone());
            }
        }
        for (i, k) in ["ops_per_sec", "get_mean_us", "get_p50_us"]
            .iter()
            .enumerate()
        {
            let worst = by
                .values()
                .map(|reps| {
                    let x: Vec<f64> = reps.iter().map(|r| r[k].as_f64().unwrap()).collect();
                    let (lo, hi) = x
                        .iter()
                        .fold((f64::MAX, f64::MIN), |(a, b), &y| (a.min(y), b.max(y)));
                    (hi - lo) / median(&x)
                })
                .fold(0.0, f64::max);
            assert_eq!((worst * 20.0 - 1e-9).ceil() / 20.0, SUPERSEDED_T[i], "{k}");
        }
    }

    #[test]
    fn one_slow_repetition_does_not_widen_the_bound_a_noisy_configuration_does() {
        let v = serde_json::json!({"runs": [
            // cint: four runs within 2%, one slow spell (a quarter of the
            // throughput, 4x the latency).
            run("cint", 1, 100.0, 10.0, 5.0),
            run("cint", 1, 101.0, 10.1, 5.05),
            run("cint", 1, 99.0, 9.9, 4.95),
            run("cint", 1, 102.0, 10.2, 5.1),
            run("cint", 1, 25.0, 40.0, 20.0),
            // default: every run different, by 20-40%.
            run("default", 1, 100.0, 10.0, 5.0),
            run("default", 1, 130.0, 7.0, 6.0),
            run("default", 1, 70.0, 13.0, 4.0),
            run("default", 1, 120.0, 8.0, 5.5),
            run("default", 1, 80.0, 12.0, 4.5),
            // plain is no exec configuration: ignored
            run("plain", 1, 1.0, 1000.0, 500.0),
        ]});
        let t = spread_bounds(&v).unwrap();
        assert_eq!(t.len(), 2);
        // cint: MAD 1 / 100 (ops), 0.1 / 10, 0.05 / 5: sigma 1.48%, 3
        // sigma 4.4%, the floor. The range rule would have said 77%, 300%,
        // 300%.
        assert_eq!(t[&("cint".to_string(), 1)], tol(0.05, 0.05, 0.05));
        // default: MAD 20 / 100, 2 / 10, 0.5 / 5: sigma 29.7%, 29.7%,
        // 14.8%; 3 sigma 89%, 89%, 45%.
        assert_eq!(t[&("default".to_string(), 1)], tol(0.89, 0.89, 0.45));
        // The band (crate::rule's 'within'): 1 - T floored at 0.
        let band = |t| {
            crate::rule::bands(
                crate::rule::Kind::Within(t),
                crate::rule::Compare::Ratio,
                None,
                0.0,
            )
            .0
        };
        assert_eq!(band(0.05).to_string(), "0.95 .. 1.05");
        assert_eq!(band(1.3).to_string(), "0 .. 2.3");
        // Too few repetitions, no runs, a zero median: errors.
        let two = serde_json::json!({"runs": [run("cint", 1, 1.0, 1.0, 1.0), run("cint", 1, 2.0, 1.0, 1.0)]});
        assert!(spread_bounds(&two).unwrap_err().contains("needs 3"));
        assert!(spread_bounds(&serde_json::json!({"runs": []})).is_err());
        let zero = serde_json::json!({"runs": [run("cint", 1, 0.0, 1.0, 1.0), run("cint", 1, 0.0, 1.0, 1.0), run("cint", 1, 0.0, 1.0, 1.0)]});
        assert!(spread_bounds(&zero).is_err());
    }

    #[test]
    fn the_model_runs_and_reads_the_device_once_per_cache_miss() {
        let scale = XvalScale {
            keys: 250_000,
            reads: 2_000,
            threads: vec![1],
            systems: vec!["cint".into()],
            reps: 1,
        };
        let m = model(&scale, "cint", 1).unwrap();
        assert!(m.ops_per_sec > 0.0, "{m:?}");
        // 8 MiB of block cache over ~263 MB: ~3% of gets hit it, the rest
        // read one block (the measurement: 0.97 device reads per get).
        let per_get = m.commands.unwrap();
        assert!((0.94..=0.99).contains(&per_get), "{per_get}");
        // Urgent gets under cint: one interrupt per completion.
        assert!(
            (m.completions_per_interrupt.unwrap() - 1.0).abs() < 0.01,
            "{m:?}"
        );
        assert!(model(&scale, "nonesuch", 1).is_err());
    }

    #[test]
    fn the_shells_times_line_is_read() {
        assert_eq!(children_cpu("0m0.250000s 0m0.125000s"), Some(0.375));
        assert_eq!(children_cpu("1m0.5s 0m0.25s"), Some(60.75));
        assert_eq!(children_cpu("readrandom : 1 micros/op"), None);
        assert_eq!(children_cpu("0m0.1s"), None);
    }

    #[test]
    fn the_claims_bounds_are_the_committed_measurements() {
        // app-claims.toml writes each comparison's T as its number; it
        // must be what the rule gives on the committed measurement, so the
        // bound is fixed before any model run and cannot drift.
        let tols = tolerances().unwrap();
        let claims = crate::app::load_claims(&crate::app::Scale::full()).unwrap();
        let mut want = Vec::new();
        let mut seen = 0;
        for c in claims.iter().filter(|c| c.experiment == ID) {
            let parts: Vec<&str> = c.run.split('/').collect();
            let (sys, t) = (parts[1], parts[2][1..].parse::<u32>().unwrap());
            let tol = tols[&(sys.to_string(), t)];
            let expect = match c.metric.as_str() {
                "ops" => tol.ops,
                "avg_us" => tol.mean,
                "p50_us" => tol.p50,
                m => panic!("{m}"),
            };
            want.push(format!("{sys}/{t}/{}={expect}", c.metric));
            if c.kind == crate::rule::Kind::Within(expect) {
                seen += 1;
            }
        }
        assert_eq!(
            seen, 18,
            "app-claims.toml's T, per claim, should be: {want:?}"
        );
    }

    #[test]
    fn the_report_says_when_the_machine_was_too_loaded_for_a_verdict() {
        let scale = crate::app::Scale::quick().xval;
        let summary = |load: f64| markdown(&scale, &BTreeMap::new(), [Some(load), Some(load)]);
        assert!(summary(5.3).contains("no fair verdict"));
        let quiet = summary(1.4);
        assert!(
            quiet.contains("Load average here: 1.40 at the start"),
            "{quiet}"
        );
        assert!(!quiet.contains("no fair verdict"));
    }
}

//! `bench traces` (issue 41 item 7): how fast a trace is read, coalesced
//! and replayed, on traces generated in memory (no file, no disk: the
//! figures are the code's, not the page cache's), each beside a committed
//! baseline ([`BASELINE`]) as a ratio.
//!
//! The traces: [`requests`] requests of four processes at one every
//! [`GAP`] (250K IOPS) with 20-50 us latencies, written as Alibaba's CSV
//! (`device_id,opcode,offset,length,timestamp`, the `traces` crate's
//! `csv::alibaba`), as blkparse's default text (a `Q`, a `D` and a `C`
//! line per request, in time order, as `blkparse_fmt.c`'s
//! `process_default` prints them) and as libCacheSim's oracleGeneral
//! binary (24-byte little-endian records `clock_time u32, obj_id u64,
//! obj_size u32, next_access_vtime i64`: libCacheSim
//! `libCacheSim/traceReader/customizedReader/oracle/oracleGeneralBin.h` at
//! d19603b), read by the `traces` crate's reader (`traces::oracle`,
//! [`decode_oracle`]). The committed baseline's oracleGeneral figures are
//! c641096's, which had no such reader: they were taken through a small
//! stand-in decoder of the same mapping (obj_id as the offset, seconds,
//! reads), so their ratios compare the real reader with that stand-in.
//!
//! The figures, best and median of [`RUNS`]:
//! - parsing: lines (records) per second, from the bytes in memory to
//!   [`traces::Request`]s;
//! - `coalesce --trace` ([`crate::coalesce::run_on`]) on the oracleGeneral
//!   requests: requests per second through one strategy (cint) and through
//!   every strategy (`--policy all`), the oracle floor included;
//! - `sim --trace` open loop ([`crate::replay::simulate_trace`]) on the
//!   blkparse trace's requests: requests per second (the requests already
//!   parsed: the parse has its own figure), and the peak memory the replay
//!   adds (Linux's VmHWM, reset first through `/proc/self/clear_refs`, less
//!   the resident set before) per request, measured once, on the first
//!   replay, before any other phase frees memory it could reuse.
//!
//! **Levers tried** (issue 41 item 7). Instructions by `valgrind
//! --tool=callgrind` (reproducible on this shared 2-vCPU machine, where
//! perf counts no cycles) on `bench traces --requests 20000` (three runs of
//! each phase), inclusive per phase; rates from `bench traces` (400K
//! requests), best of three, before (main c641096) and after, run one
//! after the other, two such pairs at load averages 3.3-3.6. Every
//! output unchanged: `coalesce --trace` (every example trace and three
//! generated ones, 1.2M requests, jittered, blkparse; `--policy all`,
//! `cint`, a `--mark` rule) diff empty; the sim corpus diff empty;
//! `reproduce --quick` 0 changed.
//!
//! | path | lever | instructions | effect |
//! |------|-------|--------------|--------|
//! | coalesce | each strategy's interrupts counted as raised (`Replayer::watch`), not written as CSV and parsed back | 2,213M -> 755M (with the next) | the CSV's formatting and parse were 18% + 15% of all |
//! | coalesce | command-id sets and maps hashed with foldhash, not SipHash (`policy::fast`) | (above) | SipHash was 14% of all |
//! | coalesce | events already in order appended to runs, the rest in a heap, smallest of three by two comparisons | jittered 50K-request trace, whole command: 270M -> 206M | heap pops were 13%; a first version (a generic min over three) cost more than it saved |
//! | coalesce | all of the above | 2,213M -> 701M | cint 1,046K -> 3,046K and 917K -> 2,601K req/s (2.8-2.9x); all 302K -> 933K and 244K -> 630K (2.6-3.1x); goal 20M not reached |
//! | parse | a line found with `memchr` in the reader's buffer and parsed in place (no `String` per line) | both formats, with the next and the first half of the two after: 1,278M -> 929M; all parse levers: 729M | |
//! | parse | whole numbers and decimals in one pass, the checked path kept for errors | | `uint` was 4% of all |
//! | parse | CSV fields into an array, split and trimmed a byte at a time on ASCII lines; column count per format; an id's own text kept | CSV: 270M -> 78M | Alibaba CSV 2.88M -> 7.53M and 2.95M -> 6.74M lines/s (2.3-2.6x) |
//! | parse | blkparse: fields after the RWBS without a vector or joined tail; fields split a byte at a time on ASCII lines; pairing's map on foldhash | blkparse: 877M -> 555M | 2.43M -> 4.26M and 2.50M -> 3.08M lines/s (1.2-1.75x); goal 5M not reached: splitting fields is still 35% of the line |
//! | sim --trace | none (its replay is being rewritten as a stream in parallel) | 562M -> 561M | 1.24M -> 1.30M and 0.99M -> 0.92M req/s (noise); 96 B/request |
//! | bench sim | none tried (no time left) | | 4.72 events per completion at c641096 (core-done 3.24), against 3.92 in crates/sim/bench/baseline.json |

use std::fmt::Write as _;
use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use policy::{Nanos, PolicySpec, US};
use rand::{Rng, SeedableRng};
use report::human::count;
use serde_json::json;
use service::with_device_defaults;
use traces::{Format, Request, TraceError};

use crate::replay::{simulate_trace, table1_marks, Loop, TraceIo};
use crate::{DeviceProfile, HostProfile, SimConfig, SimError};

/// Requests of a full run: 400K (1.2M blkparse lines, about 100 MB of
/// text held at once) takes about 8 s on this machine's 2 vCPUs at a load
/// average of 3.5 (measured: `bench traces` at c641096 and after).
pub const REQUESTS: usize = 400_000;
/// Requests of a `--quick` run (CI: a second or two).
pub const QUICK_REQUESTS: usize = 5_000;
/// Timings on a shared machine are noisy: the best says what the code can
/// do, the median what to expect (as `bench sim`).
pub const RUNS: usize = 3;
/// The generator's seed.
pub const SEED: u64 = 1;
/// One request every 4 us across the trace (250K IOPS), within what the
/// optane profile serves (so open-loop replay measures the simulator, not
/// a queue growing); assumed, a busy volume's rate.
pub const GAP: Nanos = 4 * US;
/// The traced processes (pids): a few, as a captured database run has.
pub const PIDS: [u32; 4] = [4101, 4102, 4103, 4104];
/// oracleGeneral's `clock_time` is in whole seconds; assumed 1,000
/// requests a second (a busy cache trace's order of magnitude: the
/// format's time carries no finer rate to copy).
pub const ORACLE_PER_SECOND: u64 = 1_000;
/// The bytes of one oracleGeneral record (the header cited above).
pub const ORACLE_RECORD: usize = 24;
/// Alibaba's timestamps are microseconds since the Unix epoch; the
/// generated trace starts at 2020-01-01 00:00:00 UTC, in its release's
/// year.
const EPOCH_2020_US: u64 = 1_577_836_800_000_000;
/// The first field of a saved baseline (`bench traces --save-baseline`).
pub const BASELINE_FORMAT: &str = "cinterrupts bench traces baseline 1";
/// The committed baseline, compared against unless `--baseline` names
/// another: this bench at main c641096 (before issue 41's levers).
pub const BASELINE: &str = include_str!("../../bench/baseline-traces.json");
/// Where [`BASELINE`] lives in the repository.
pub const BASELINE_PATH: &str = "crates/sim/bench/baseline-traces.json";

/// One figure: its runs and how it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The key in JSON and in a baseline.
    pub key: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    /// Issue 41 item 7's goal, where it sets one.
    pub goal: Option<f64>,
    pub higher_is_better: bool,
    pub runs: Vec<f64>,
}

impl Figure {
    fn sorted(&self) -> Vec<f64> {
        let mut v = self.runs.clone();
        v.sort_by(f64::total_cmp);
        if !self.higher_is_better {
            v.reverse();
        }
        v
    }

    /// The best run (most per second; fewest bytes).
    pub fn best(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(0.0)
    }

    pub fn median(&self) -> f64 {
        let v = self.sorted();
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }

    fn shown(&self, x: f64) -> String {
        if self.higher_is_better {
            count(x)
        } else {
            format!("{x:.0}")
        }
    }
}

/// What `bench traces` measured.
#[derive(Clone, Debug, PartialEq)]
pub struct TracesBench {
    pub requests: usize,
    pub figures: Vec<Figure>,
    pub load_before: Option<String>,
    pub load_after: Option<String>,
}

/// The generated requests, in issue order (the module's comment).
pub fn requests(n: usize) -> Vec<Request> {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(SEED);
    (0..n)
        .map(|i| {
            let issue = i as u64 * GAP + rng.random_range(0..GAP / 4);
            let write = rng.random_range(0..10) < 3;
            Request {
                issue_ns: issue,
                complete_ns: Some(issue + rng.random_range(20 * US..50 * US)),
                // Its own 32 KiB: sectors never collide in flight, so
                // blkparse's pairing by sector pairs each as generated.
                offset: i as u64 * 32_768,
                bytes: 4096 << rng.random_range(0..3u32),
                write,
                sync: !write || rng.random_bool(0.5),
                pid: Some(PIDS[i % PIDS.len()]),
                comm: Some("db_bench".into()),
                device: Some((i % 16).to_string()),
                ..Request::default()
            }
        })
        .collect()
}

/// The requests as Alibaba's CSV: a line each.
pub fn alibaba_csv(reqs: &[Request]) -> Vec<u8> {
    let mut s = String::new();
    for r in reqs {
        let _ = writeln!(
            s,
            "{},{},{},{},{}",
            r.device.as_deref().unwrap_or("0"),
            if r.write { 'W' } else { 'R' },
            r.offset,
            r.bytes,
            EPOCH_2020_US + r.issue_ns / 1_000
        );
    }
    s.into_bytes()
}

/// The requests as blkparse's text: `Q` and `D` at the issue, `C` at the
/// completion, every line in time order; returns the text and its lines.
pub fn blkparse_text(reqs: &[Request]) -> (Vec<u8>, usize) {
    // (time, order at one time: Q, D, C; request)
    let mut events: Vec<(Nanos, u8, usize)> = Vec::with_capacity(reqs.len() * 3);
    for (i, r) in reqs.iter().enumerate() {
        events.push((r.issue_ns, 0, i));
        events.push((r.issue_ns, 1, i));
        events.push((r.complete_ns.unwrap_or(r.issue_ns), 2, i));
    }
    events.sort_unstable();
    let mut s = String::new();
    for (seq, &(t, kind, i)) in events.iter().enumerate() {
        let r = &reqs[i];
        let rwbs = match (r.write, r.sync) {
            (true, true) => "WS",
            (true, false) => "W",
            (false, true) => "RS",
            (false, false) => "R",
        };
        let (act, pid, tail) = match kind {
            0 => ("Q", r.pid.unwrap_or(0), "[db_bench]"),
            1 => ("D", r.pid.unwrap_or(0), "[db_bench]"),
            _ => ("C", 0, "[0]"),
        };
        let _ = writeln!(
            s,
            "{:>3},{:<3} {:>2} {:>8} {:>5}.{:09} {:>5} {:>2} {:>3} {} + {} {tail}",
            259,
            0,
            i % 2,
            seq + 1,
            t / 1_000_000_000,
            t % 1_000_000_000,
            pid,
            act,
            rwbs,
            r.offset / 512,
            r.bytes / 512,
        );
    }
    (s.into_bytes(), events.len())
}

/// `n` oracleGeneral records: [`ORACLE_PER_SECOND`] a second, objects
/// drawn from a million, 4 KiB each, next access unknown (-1).
pub fn oracle_bin(n: usize) -> Vec<u8> {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(SEED);
    let mut out = Vec::with_capacity(n * ORACLE_RECORD);
    for i in 0..n as u64 {
        out.extend_from_slice(&((i / ORACLE_PER_SECOND) as u32).to_le_bytes());
        out.extend_from_slice(&rng.random_range(0..1_000_000u64).to_le_bytes());
        out.extend_from_slice(&4096u32.to_le_bytes());
        out.extend_from_slice(&(-1i64).to_le_bytes());
    }
    out
}

/// oracleGeneral records as requests, through the `traces` crate's
/// reader (`traces::oracle`): issued at `clock_time` seconds, `obj_id` as
/// the offset, `obj_size` bytes, reads (the format records no operation),
/// no completion (coalesce derives one from `--service`).
pub fn decode_oracle(bytes: &[u8]) -> impl Iterator<Item = Result<Request, TraceError>> + '_ {
    traces::read(
        Cursor::new(bytes.to_vec()),
        "bench.oracleGeneral",
        Format::OracleGeneral,
    )
}

/// Counts the requests `format` reads from `bytes`; an error is a bug in
/// the generator.
fn parse(bytes: &Arc<[u8]>, format: Format) -> Result<usize, SimError> {
    let mut n = 0;
    for r in traces::read(Cursor::new(Arc::clone(bytes)), "bench", format) {
        r.map_err(|e| SimError::Config(format!("bench traces: {e}")))?;
        n += 1;
    }
    Ok(n)
}

fn per_second(n: usize, start: Instant) -> f64 {
    n as f64 / start.elapsed().as_secs_f64().max(1e-9)
}

fn coalesce(bytes: &[u8], policies: Vec<PolicySpec>) -> Result<(), SimError> {
    let job = crate::coalesce::Job {
        trace: Path::new("bench.oracleGeneral"),
        format: None,
        rules: Vec::new(),
        // coalesce --trace's defaults (crates/cli/src/coalesce.rs).
        budget: 50 * US,
        service: 10 * US,
        policies,
        report: None,
        marks_from: None,
        order: traces::Order::Check,
        shape: Default::default(),
    };
    crate::coalesce::run_on(
        &job,
        decode_oracle(bytes),
        &mut crate::trace_marks::Marker::table1(),
        &Default::default(),
    )
    .map(|_| ())
    .map_err(|e| SimError::Config(format!("bench traces: {e}")))
}

/// What `sim --trace` replays: optane on xeon-e5-2660v4 with cint, as
/// `bench sim`, until the trace ends.
fn replay_config() -> Result<SimConfig, SimError> {
    let profile = |e: crate::ProfileError| SimError::Config(e.to_string());
    let device = DeviceProfile::load(super::DEVICE).map_err(profile)?;
    let host = HostProfile::load(super::HOST).map_err(profile)?;
    let policy = with_device_defaults(PolicySpec::named(super::POLICY), &device);
    Ok(SimConfig {
        device,
        host,
        policy,
        seed: super::SEED,
        runtime: None,
    })
}

/// The requests as `sim --trace` loads them (`replay::load`).
fn trace_ios(reqs: &[Request]) -> Vec<TraceIo> {
    reqs.iter()
        .map(|r| TraceIo {
            issue_ns: r.issue_ns,
            complete_ns: r.complete_ns,
            bytes: u64::from(r.bytes),
            write: r.write,
            marks: table1_marks(r),
            pid: r.pid,
        })
        .collect()
}

/// The open-loop replay of `reqs`: requests per second and the peak
/// bytes it added per request (0 where Linux does not tell).
fn replay(reqs: &[Request], config: &SimConfig) -> Result<(f64, f64), SimError> {
    // Linux's proc(5), /proc/PID/clear_refs: writing 5 resets the peak
    // resident set (VmHWM) to the current one.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = super::status_bytes("VmRSS:");
    let start = Instant::now();
    let ios = trace_ios(reqs);
    let (report, _, _) = simulate_trace(ios, Loop::Open, config, &mut |_, _| {})?;
    let rate = per_second(reqs.len(), start);
    if report.completions == 0 {
        return Err(SimError::Config(
            "bench traces: the replay completed nothing".into(),
        ));
    }
    let bytes = match (reset, before, super::peak_rss()) {
        (true, Some(b), Some(peak)) => peak.saturating_sub(b) as f64 / reqs.len() as f64,
        _ => 0.0,
    };
    Ok((rate, bytes))
}

/// Runs the bench on `n` generated requests.
pub fn run(n: usize) -> Result<TracesBench, SimError> {
    let load_before = super::load_average();
    let reqs = requests(n);
    let config = replay_config()?;
    // The replay's peak memory first, before anything is freed whose
    // pages the replay could reuse unseen (a later run's would read 0):
    // one figure, memory being the same each run.
    let (first_rate, bytes) = replay(&reqs, &config)?;
    let csv: Arc<[u8]> = alibaba_csv(&reqs).into();
    let (text, blk_lines) = blkparse_text(&reqs);
    let blk: Arc<[u8]> = text.into();
    let oracle = oracle_bin(n);
    let fig = |key, label, unit, goal, higher_is_better| Figure {
        key,
        label,
        unit,
        goal,
        higher_is_better,
        runs: Vec::new(),
    };
    let mut f = vec![
        fig(
            "csv_lines_per_sec",
            "parse Alibaba CSV",
            "lines/s",
            Some(5e6),
            true,
        ),
        fig(
            "blkparse_lines_per_sec",
            "parse blkparse text",
            "lines/s",
            Some(5e6),
            true,
        ),
        fig(
            "oracle_records_per_sec",
            "parse oracleGeneral",
            "records/s",
            None,
            true,
        ),
        fig(
            "coalesce_one_per_sec",
            "coalesce oracleGeneral cint",
            "req/s",
            Some(20e6),
            true,
        ),
        fig(
            "coalesce_all_per_sec",
            "coalesce oracleGeneral all",
            "req/s",
            None,
            true,
        ),
        fig(
            "replay_open_per_sec",
            "sim --trace open loop",
            "req/s",
            Some(5e6),
            true,
        ),
        fig(
            "replay_bytes_per_request",
            "sim --trace peak memory",
            "B/req",
            None,
            false,
        ),
    ];
    for _ in 0..RUNS {
        let start = Instant::now();
        let got = parse(&csv, Format::Alibaba)?;
        f[0].runs.push(per_second(got, start));
        let start = Instant::now();
        let got = parse(&blk, Format::Blkparse)?;
        f[1].runs.push(per_second(blk_lines, start));
        if got != n {
            return Err(SimError::Config(format!(
                "bench traces: blkparse read {got} requests of {n}"
            )));
        }
        let start = Instant::now();
        // Every field summed, so that the decoding is not optimized away.
        let sum = decode_oracle(&oracle)
            .filter_map(Result::ok)
            .fold(0u64, |a, r| a ^ r.issue_ns ^ r.offset ^ u64::from(r.bytes));
        std::hint::black_box(sum);
        f[2].runs.push(per_second(n, start));
        let start = Instant::now();
        coalesce(&oracle, vec![PolicySpec::named(super::POLICY)])?;
        f[3].runs.push(per_second(n, start));
        let start = Instant::now();
        coalesce(&oracle, crate::coalesce::every_strategy())?;
        f[4].runs.push(per_second(n, start));
        let rate = match f[5].runs.is_empty() {
            true => first_rate,
            false => replay(&reqs, &config)?.0,
        };
        f[5].runs.push(rate);
    }
    f[6].runs.push(bytes);
    Ok(TracesBench {
        requests: n,
        figures: f,
        load_before,
        load_after: super::load_average(),
    })
}

/// A saved `bench traces` run: where and when, and each figure's best.
#[derive(Clone, Debug, PartialEq)]
pub struct TracesBaseline {
    pub date: String,
    pub machine: String,
    pub load_average: Option<String>,
    pub commit: Option<String>,
    pub requests: usize,
    pub figures: Vec<(String, f64)>,
}

impl TracesBaseline {
    /// The committed baseline ([`BASELINE`]).
    pub fn committed() -> Result<TracesBaseline, String> {
        TracesBaseline::parse(BASELINE).map_err(|e| format!("{BASELINE_PATH}: {e}"))
    }

    /// The baseline saved at `path`; errors name it.
    pub fn load(path: &Path) -> Result<TracesBaseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading the baseline {}: {e}", path.display()))?;
        TracesBaseline::parse(&text)
            .map_err(|e| format!("{}: {}", path.display(), policy::quote::one_line(&e)))
    }

    pub fn parse(text: &str) -> Result<TracesBaseline, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if v.get("format").and_then(|f| f.as_str()) != Some(BASELINE_FORMAT) {
            return Err(format!(
                "not a bench traces baseline (its \"format\" is not \"{BASELINE_FORMAT}\")"
            ));
        }
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let figures = v
            .get("figures")
            .and_then(|f| f.as_object())
            .ok_or("\"figures\" missing or not an object")?
            .iter()
            .map(|(k, x)| {
                x.as_f64()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .map(|x| (k.clone(), x))
                    .ok_or_else(|| format!("\"figures\".\"{k}\" is not a number at least 0"))
            })
            .collect::<Result<_, _>>()?;
        Ok(TracesBaseline {
            date: text("date").ok_or("\"date\" missing or not a string")?,
            machine: text("machine").ok_or("\"machine\" missing or not a string")?,
            load_average: text("load_average"),
            commit: text("commit"),
            requests: v
                .get("requests")
                .and_then(serde_json::Value::as_u64)
                .ok_or("\"requests\" missing or not a whole number")?
                as usize,
            figures,
        })
    }

    pub fn json(&self) -> serde_json::Value {
        json!({
            "format": BASELINE_FORMAT,
            "date": self.date,
            "machine": self.machine,
            "load_average": self.load_average,
            "commit": self.commit,
            "requests": self.requests,
            "figures": self.figures.iter().map(|(k, x)| (k.clone(), json!(x))).collect::<serde_json::Map<_, _>>(),
        })
    }

    fn get(&self, key: &str) -> Option<f64> {
        self.figures.iter().find(|(k, _)| k == key).map(|&(_, x)| x)
    }
}

impl TracesBench {
    /// This run as a baseline: now, on this machine, under the load
    /// measured before it; `commit` as the caller names it.
    pub fn baseline_now(&self, commit: Option<String>) -> TracesBaseline {
        TracesBaseline {
            date: super::utc_now(),
            machine: super::machine(),
            load_average: self.load_before.clone(),
            commit,
            requests: self.requests,
            figures: self
                .figures
                .iter()
                .map(|f| (f.key.to_string(), f.best()))
                .collect(),
        }
    }

    /// The figures, each beside the goal and `base`'s, with the ratio.
    pub fn text(&self, base: &TracesBaseline) -> String {
        let mut s = format!(
            "bench traces: {} requests generated in memory (seed {SEED}), best and median of {RUNS}\n",
            self.requests
        );
        let _ = writeln!(
            s,
            "  {:<44} {:>8} {:>8} {:>10} {:>8} {:>6}",
            "figure", "best", "median", "goal", "baseline", "ratio"
        );
        for f in &self.figures {
            let base_x = base.get(f.key);
            let ratio = base_x.filter(|&b| b > 0.0).map(|b| f.best() / b);
            let _ = writeln!(
                s,
                "  {:<44} {:>8} {:>8} {:>10} {:>8} {:>6}",
                format!("{} ({})", f.label, f.unit),
                f.shown(f.best()),
                f.shown(f.median()),
                f.goal.map_or("-".into(), |g| format!(">= {}", count(g))),
                base_x.map_or("-".into(), |b| f.shown(b)),
                ratio.map_or("-".into(), |r| format!("{r:.2}x")),
            );
        }
        let _ = writeln!(
            s,
            "  baseline: {} on {}{} (load {}){}",
            base.date,
            base.machine,
            base.commit
                .as_deref()
                .map_or(String::new(), |c| format!(", commit {c}")),
            base.load_average.as_deref().unwrap_or("unknown"),
            if base.requests == self.requests {
                String::new()
            } else {
                format!(
                    "; warning: it ran {} requests, the ratios compare unlike runs",
                    base.requests
                )
            }
        );
        super::load_and_build(&mut s, &self.load_before, &self.load_after);
        s
    }

    pub fn json(&self, base: &TracesBaseline) -> serde_json::Value {
        let figures: serde_json::Map<String, serde_json::Value> = self
            .figures
            .iter()
            .map(|f| {
                let b = base.get(f.key);
                (
                    f.key.to_string(),
                    json!({
                        "unit": f.unit,
                        "best": f.best(),
                        "median": f.median(),
                        "runs": f.runs,
                        "goal": f.goal,
                        "baseline": b,
                        "ratio": b.filter(|&b| b > 0.0).map(|b| f.best() / b),
                    }),
                )
            })
            .collect();
        json!({
            "bench": "traces",
            "requests": self.requests,
            "seed": SEED,
            "runs": RUNS,
            "figures": figures,
            "baseline": base.json(),
            "load_average_before": self.load_before,
            "load_average_after": self.load_after,
            "debug_build": cfg!(debug_assertions),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_traces_read_back_as_generated() {
        let reqs = requests(200);
        let csv: Vec<Request> = traces::read(Cursor::new(alibaba_csv(&reqs)), "c", Format::Alibaba)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(csv.len(), 200);
        assert_eq!(csv[7].offset, reqs[7].offset);
        assert_eq!(csv[7].write, reqs[7].write);
        let (text, lines) = blkparse_text(&reqs);
        assert_eq!(lines, 600);
        let mut blk: Vec<Request> = traces::read(Cursor::new(text), "b", Format::Blkparse)
            .collect::<Result<_, _>>()
            .unwrap();
        blk.sort_by_key(|r| r.offset);
        assert_eq!(blk.len(), 200);
        for (a, b) in blk.iter().zip(&reqs) {
            assert_eq!(
                (a.issue_ns, a.complete_ns, a.bytes, a.write, a.sync, a.pid),
                (b.issue_ns, b.complete_ns, b.bytes, b.write, b.sync, b.pid)
            );
        }
        let oracle = oracle_bin(2_500);
        let d: Vec<Request> = decode_oracle(&oracle).map(Result::unwrap).collect();
        assert_eq!(d.len(), 2_500);
        assert_eq!(d[2_499].issue_ns, 2_000_000_000);
        assert!(d.iter().all(|r| r.bytes == 4096));
    }

    #[test]
    fn the_committed_baseline_reads_and_saves_back_the_same() {
        let b = TracesBaseline::committed().unwrap();
        assert_eq!(TracesBaseline::parse(&b.json().to_string()).unwrap(), b);
        assert!(TracesBaseline::parse("{}").is_err());
    }
}

//! Replay transforms (issue 41 item 6): a trace's requests merged with
//! other traces, selected by volume, cut to a time window, stripped of some
//! operations, sampled by address and rescaled in time, each as it streams
//! by. Nothing is buffered but the head request of each merged input.
//!
//! The transforms and their sources, applied in this order ([`Shape`]):
//!
//! 1. **Merge** ([`MergeInput`]): fio's `merge_blktrace_file` with
//!    `merge_blktrace_scalars` and `merge_blktrace_iters` (fio's HOWTO.rst,
//!    "merge_blktrace_*", and blktrace.c `merge_blktrace_iologs`,
//!    `read_trace`, `find_earliest_io`, `merge_finish_file`, axboe/fio at
//!    f5344384). Each input's times are taken from its own first issue (as
//!    blktrace's are from the start of tracing); iteration `k` of an input
//!    is offset by `k * L`, `L` its last issue time (fio's `bc->length`, the
//!    last record's time), and the result multiplied by the input's scalar
//!    / 100 (`t->time = (t->time + bc->iter * bc->length) * bc->scalar /
//!    100`: 50 runs the trace in half the time). fio takes `L` after the
//!    scalar was applied, so for a scalar other than 100 it scales the
//!    offset twice and iterations overlap; here it is scaled once, so the
//!    iterations lie end to end. The next request is the earliest head of
//!    all inputs, a tie going to the input named first (fio's strict `<` in
//!    `find_earliest_io`). A request keeps its latency (its completion
//!    moves with its issue). The primary trace is input 0 at 100% and one
//!    iteration. Input `i > 0`'s pids are moved up by `i * 2^22`
//!    (`PID_MAX_LIMIT`, 4 * 1024 * 1024 on 64-bit Linux,
//!    include/linux/threads.h), and its pid-less requests take `i * 2^22`,
//!    so that two traces' processes stay apart in a replay.
//! 2. **Volumes**: the requests whose `device` is one of those named.
//! 3. **Window** ([`Window`]): the requests issued in `[FROM, TO)` after
//!    the first request's issue; times unchanged.
//! 4. **Skip** ([`Skip`]): fio's `replay_skip` (HOWTO.rst: "a comma
//!    separated list of read, write, trim, sync"; options.c
//!    `str_replay_skip_cb`; iolog.c and blktrace.c test `td->o.replay_skip
//!    & (1u << DDIR_*)` per request). A request's operation is read as
//!    `sim::coalesce` reads it: a flush or FUA request is a flush (fio's
//!    `sync`), else a discard a trim, else a write or a read.
//! 5. **Sample** ([`Sample`]): libCacheSim's spatial sampler
//!    (libCacheSim/traceReader/sampling/spatial.c, `spatial_sample`,
//!    1a1a11a/libCacheSim at aa0fc409): keep a request when
//!    `XXH3_64bits(obj_id) % (int)(1 / ratio) == 0`, the hash over the
//!    8 bytes of `obj_id` (hash.h: `get_hash_value_int_64` with the default
//!    `HASH_TYPE XXHASH3`, config.h); the ratio at most 0.5, or 1 for no
//!    sampling (`create_spatial_sampler`). A block trace's object is its
//!    block: `obj_id = offset / block` (block 4096 B unless given,
//!    [`SAMPLE_BLOCK`]), its bytes little-endian as on the x86 machines
//!    libCacheSim runs on. Every request of a sampled block is kept, so a
//!    sample keeps each block's whole reuse; a request is judged by its
//!    first block.
//! 6. **Time scale** (a percentage): fio's `replay_time_scale` (HOWTO.rst:
//!    "if set to 50 it means run at 50% the original IO rate in the
//!    trace. If set to 200, run at twice the original IO rate"; iolog.c
//!    `delay_since_ttime` multiplies each gap by `100 / replay_time_scale`).
//!    Each issue time becomes `t0 + (t - t0) * 100 / pct`, `t0` the first
//!    issue; each request keeps its latency. Note the opposite sense of the
//!    merge scalar: there 50 halves the times, here 50 doubles them.
//!
//! Each transform counts what it saw and kept and the span (first issue to
//! last completion, or issue) before and after ([`Step`]); the counts are
//! published when the stream ends or is dropped ([`Outcome`]).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::{Request, Requests, TraceError};

/// The block a request's address is sampled by, unless one is given:
/// 4096 B, assumed: the Linux page size and the logical block most NVMe
/// namespaces are formatted with (no block size is published for the
/// sampler: libCacheSim's block readers take the trace's own object ids).
pub const SAMPLE_BLOCK: u64 = 4096;

/// Linux's largest pid on 64-bit (`PID_MAX_LIMIT`, include/linux/threads.h):
/// merged input `i`'s pids move up by `i` times it.
pub const PID_SPAN: u32 = 4 * 1024 * 1024;

/// A request's operation, as a skip list names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
    Flush,
}

impl Op {
    /// How a request reads (the module's comment, item 4).
    pub fn of(r: &Request) -> Op {
        if r.flush {
            Op::Flush
        } else if r.discard {
            Op::Trim
        } else if r.write {
            Op::Write
        } else {
            Op::Read
        }
    }
}

/// The operations to skip (fio's `replay_skip`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    pub flush: bool,
}

impl Skip {
    /// A comma-separated list of `read`, `write`, `trim` (or `discard`)
    /// and `flush` (or fio's `sync`).
    pub fn parse(s: &str) -> Result<Skip, String> {
        let mut skip = Skip::default();
        for word in s.split(',').map(str::trim) {
            match word {
                "read" => skip.read = true,
                "write" => skip.write = true,
                "trim" | "discard" => skip.trim = true,
                "flush" | "sync" => skip.flush = true,
                _ => {
                    return Err(format!(
                    "'{word}' is not an operation to skip: read, write, trim or flush (fio's sync)"
                ))
                }
            }
        }
        Ok(skip)
    }

    pub fn is_empty(&self) -> bool {
        *self == Skip::default()
    }

    pub fn skips(&self, r: &Request) -> bool {
        match Op::of(r) {
            Op::Read => self.read,
            Op::Write => self.write,
            Op::Trim => self.trim,
            Op::Flush => self.flush,
        }
    }

    fn name(&self) -> String {
        let words = [
            (self.read, "read"),
            (self.write, "write"),
            (self.trim, "trim"),
            (self.flush, "flush"),
        ];
        let on: Vec<&str> = words.iter().filter(|w| w.0).map(|w| w.1).collect();
        on.join(",")
    }
}

/// A time window after the trace's first issue, ns: `[from, to)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub from: u64,
    pub to: u64,
}

impl Window {
    pub fn new(from: u64, to: u64) -> Result<Window, String> {
        if to <= from {
            return Err(format!(
                "the window's end ({to} ns) must come after its start ({from} ns)"
            ));
        }
        Ok(Window { from, to })
    }
}

/// libCacheSim's spatial sampler (the module's comment, item 5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The ratio asked for.
    pub ratio: f64,
    /// `(int)(1.0 / ratio)`, as libCacheSim's `sampling_ratio_inv`: the
    /// ratio applied is its inverse.
    pub inv: u64,
    /// The block an address is taken in.
    pub block: u64,
}

impl Sample {
    /// `RATIO` or `RATIO:BLOCK` (bytes): the ratio in (0, 0.5] or 1, as
    /// libCacheSim's `create_spatial_sampler` accepts.
    pub fn parse(s: &str) -> Result<Sample, String> {
        let (ratio, block) = match s.split_once(':') {
            Some((r, b)) => (
                r,
                b.parse::<u64>()
                    .ok()
                    .filter(|&b| b > 0)
                    .ok_or_else(|| format!("'{b}' is not a block size in bytes"))?,
            ),
            None => (s, SAMPLE_BLOCK),
        };
        let ratio: f64 = ratio
            .parse()
            .map_err(|_| format!("'{ratio}' is not a sampling ratio"))?;
        Sample::new(ratio, block)
    }

    pub fn new(ratio: f64, block: u64) -> Result<Sample, String> {
        if !(ratio > 0.0 && (ratio <= 0.5 || ratio == 1.0)) {
            return Err(format!(
                "sampling ratio {ratio}: libCacheSim's spatial sampler takes a ratio in (0, 0.5], or 1 for none"
            ));
        }
        Ok(Sample {
            ratio,
            inv: (1.0 / ratio) as u64,
            block: block.max(1),
        })
    }

    /// Whether the request at `offset` is in the sample.
    pub fn keeps(&self, offset: u64) -> bool {
        let obj_id = offset / self.block;
        xxhash_rust::xxh3::xxh3_64(&obj_id.to_le_bytes()) % self.inv == 0
    }
}

/// One trace merged with the primary (fio's `merge_blktrace_*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MergeInput {
    pub path: PathBuf,
    /// Its time scalar, percent (fio's `merge_blktrace_scalars`: 50 runs
    /// it in half the time).
    pub scalar: u32,
    /// How many times it runs, end to end (`merge_blktrace_iters`).
    pub iters: u32,
}

impl MergeInput {
    /// `FILE`, `FILE:SCALAR` or `FILE:SCALAR:ITERS` (defaults 100 and 1,
    /// as fio's `init_merge_param_list`).
    pub fn parse(s: &str) -> Result<MergeInput, String> {
        let parts: Vec<&str> = s.rsplitn(3, ':').collect();
        let num = |p: &str, what: &str| -> Result<u32, String> {
            p.parse::<u32>()
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("'{p}' is not a {what} (a whole number above 0)"))
        };
        let all_numbers = |ps: &[&str]| ps.iter().all(|p| p.parse::<u32>().is_ok());
        let (path, scalar, iters) = match parts.as_slice() {
            [iters, scalar, path] if all_numbers(&[iters, scalar]) => (
                *path,
                num(scalar, "scalar")?,
                num(iters, "iteration count")?,
            ),
            [scalar, rest @ ..] if all_numbers(&[scalar]) && !rest.is_empty() => {
                let path = s.rsplit_once(':').map_or(s, |(p, _)| p);
                (path, num(scalar, "scalar")?, 1)
            }
            _ => (s, 100, 1),
        };
        if path.is_empty() {
            return Err(format!("'{s}': no file to merge"));
        }
        Ok(MergeInput {
            path: PathBuf::from(path),
            scalar,
            iters,
        })
    }
}

/// The transforms to apply, in the module comment's order; the default
/// applies none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shape {
    /// Traces merged with the primary, each opened as its first bytes show.
    pub merge: Vec<MergeInput>,
    /// Keep only these volumes (the request's `device`); empty: all.
    pub volumes: Vec<String>,
    pub window: Option<Window>,
    pub skip: Skip,
    pub sample: Option<Sample>,
    /// fio's `replay_time_scale`, percent (100: unchanged).
    pub time_scale: Option<u32>,
}

/// What one transform did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Its name as the command line spells it (`window`, `time-scale`).
    pub name: &'static str,
    /// Its setting as given (`1s..2s`, `200%`).
    pub setting: String,
    /// Requests in and out.
    pub seen: u64,
    pub kept: u64,
    /// First issue to last completion (or issue), ns, of what came in
    /// and of what went out.
    pub span_in_ns: u64,
    pub span_out_ns: u64,
}

impl Step {
    /// One line, as `sim --trace`'s drift report prints its own.
    pub fn render(&self) -> String {
        let ms = |ns: u64| ns as f64 / 1e6;
        format!(
            "transform {} {}: kept {} of {} requests ({} dropped); span {:.3}ms -> {:.3}ms\n",
            self.name,
            self.setting,
            self.kept,
            self.seen,
            self.seen - self.kept,
            ms(self.span_in_ns),
            ms(self.span_out_ns)
        )
    }
}

/// The steps' counts, published when the stream ends or is dropped.
#[derive(Clone, Debug, Default)]
pub struct Outcome(Arc<Mutex<Vec<Step>>>);

impl Outcome {
    /// The transforms applied, in order (empty until the stream ended).
    pub fn steps(&self) -> Vec<Step> {
        self.0.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Every step's line.
    pub fn render(&self) -> String {
        self.steps().iter().map(Step::render).collect()
    }
}

/// A span being measured: first issue and last end seen.
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    first: Option<u64>,
    end: u64,
}

impl Span {
    fn add(&mut self, r: &Request) {
        let first = self.first.get_or_insert(r.issue_ns);
        *first = (*first).min(r.issue_ns);
        self.end = self
            .end
            .max(r.complete_ns.unwrap_or(r.issue_ns).max(r.issue_ns));
    }

    fn ns(&self) -> u64 {
        self.first.map_or(0, |f| self.end.saturating_sub(f))
    }
}

/// A step's running counts.
#[derive(Clone, Debug, Default)]
struct Tally {
    name: &'static str,
    setting: String,
    seen: u64,
    kept: u64,
    span_in: Span,
    span_out: Span,
}

impl Tally {
    fn new(name: &'static str, setting: String) -> Tally {
        Tally {
            name,
            setting,
            ..Tally::default()
        }
    }

    fn step(&self) -> Step {
        Step {
            name: self.name,
            setting: self.setting.clone(),
            seen: self.seen,
            kept: self.kept,
            span_in_ns: self.span_in.ns(),
            span_out_ns: self.span_out.ns(),
        }
    }
}

/// A request's times moved: its issue to `issue`, its completion with it.
fn moved(mut r: Request, issue: u64) -> Request {
    let latency = r.complete_ns.map(|c| c.saturating_sub(r.issue_ns));
    r.issue_ns = issue;
    r.complete_ns = latency.map(|l| issue.saturating_add(l));
    r
}

/// `t0 + (t - t0) * num / den`, in whole nanoseconds, never below 0.
fn rescale(t: u64, t0: u64, num: u64, den: u64) -> u64 {
    let d = (i128::from(t) - i128::from(t0)) * i128::from(num) / i128::from(den);
    (i128::from(t0) + d).clamp(0, i128::from(u64::MAX)) as u64
}

/// One filter or rewrite of a request.
#[derive(Debug)]
enum Stage {
    Volumes(Vec<String>),
    Window { window: Window, t0: Option<u64> },
    Skip(Skip),
    Sample(Sample),
    Scale { pct: u32, t0: Option<u64> },
}

impl Stage {
    fn apply(&mut self, r: Request) -> Option<Request> {
        match self {
            Stage::Volumes(v) => r
                .device
                .as_deref()
                .is_some_and(|d| v.iter().any(|x| x == d))
                .then_some(r),
            Stage::Window { window, t0 } => {
                let t0 = *t0.get_or_insert(r.issue_ns);
                let rel = i128::from(r.issue_ns) - i128::from(t0);
                (rel >= i128::from(window.from) && rel < i128::from(window.to)).then_some(r)
            }
            Stage::Skip(s) => (!s.skips(&r)).then_some(r),
            Stage::Sample(s) => s.keeps(r.offset).then_some(r),
            Stage::Scale { pct, t0 } => {
                let t0 = *t0.get_or_insert(r.issue_ns);
                let issue = rescale(r.issue_ns, t0, 100, u64::from(*pct));
                Some(moved(r, issue))
            }
        }
    }
}

/// The ns as the command line would write them (`1.5s`, `250ms`, `10us`).
fn human(ns: u64) -> String {
    for (unit, per) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= per && ns % (per / 1000).max(1) == 0 {
            let v = ns as f64 / per as f64;
            return format!("{}{unit}", trim_float(v));
        }
    }
    format!("{ns}ns")
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Shape {
    /// No transform asked for.
    pub fn is_empty(&self) -> bool {
        *self == Shape::default()
    }

    /// `primary` (named `origin`) with the transforms applied, and the
    /// handle their counts come out of. A merged input that cannot be
    /// opened is an error now; one that fails later ends the stream with
    /// its error.
    pub fn apply(
        &self,
        primary: Requests,
        origin: &str,
    ) -> Result<(Requests, Outcome), TraceError> {
        let outcome = Outcome::default();
        if self.is_empty() {
            // Nothing to apply: the stream as it was, at no cost.
            return Ok((primary, outcome));
        }
        let (source, merge_tally): (Requests, Option<Tally>) = if self.merge.is_empty() {
            (primary, None)
        } else {
            let mut inputs = vec![Cursor::new(Box::new(primary), None, 100, 1)];
            let mut setting = format!("{origin} 100% x1");
            for m in &self.merge {
                let first = crate::open(&m.path, None)?;
                inputs.push(Cursor::new(
                    Box::new(first),
                    Some(m.path.clone()),
                    m.scalar,
                    m.iters,
                ));
                setting += &format!(" + {} {}% x{}", m.path.display(), m.scalar, m.iters);
            }
            (
                Requests::new(Merge {
                    inputs,
                    started: false,
                }),
                Some(Tally::new("merge", setting)),
            )
        };
        let mut stages = Vec::new();
        if !self.volumes.is_empty() {
            stages.push((
                Stage::Volumes(self.volumes.clone()),
                Tally::new("volume", self.volumes.join(",")),
            ));
        }
        if let Some(w) = self.window {
            stages.push((
                Stage::Window {
                    window: w,
                    t0: None,
                },
                Tally::new("window", format!("{},{}", human(w.from), human(w.to))),
            ));
        }
        if !self.skip.is_empty() {
            stages.push((Stage::Skip(self.skip), Tally::new("skip", self.skip.name())));
        }
        if let Some(s) = self.sample {
            let setting = if s.inv as f64 * s.ratio == 1.0 {
                format!("{} by {} B block", s.ratio, s.block)
            } else {
                format!("{} (1 in {}) by {} B block", s.ratio, s.inv, s.block)
            };
            stages.push((Stage::Sample(s), Tally::new("sample", setting)));
        }
        if let Some(pct) = self.time_scale {
            stages.push((
                Stage::Scale { pct, t0: None },
                Tally::new(
                    "time-scale",
                    format!("{pct}% (gaps x{})", trim_float(100.0 / f64::from(pct))),
                ),
            ));
        }
        let shaped = Shaped {
            source,
            merge: merge_tally,
            stages,
            outcome: outcome.clone(),
            published: false,
        };
        Ok((Requests::new(shaped), outcome))
    }
}

/// The transforms over a stream, counting as they go.
struct Shaped {
    source: Requests,
    merge: Option<Tally>,
    stages: Vec<(Stage, Tally)>,
    outcome: Outcome,
    published: bool,
}

impl Shaped {
    fn publish(&mut self) {
        if self.published {
            return;
        }
        self.published = true;
        let steps = self
            .merge
            .iter()
            .chain(self.stages.iter().map(|(_, t)| t))
            .map(Tally::step)
            .collect();
        if let Ok(mut out) = self.outcome.0.lock() {
            *out = steps;
        }
    }
}

impl Drop for Shaped {
    fn drop(&mut self) {
        self.publish();
    }
}

impl Iterator for Shaped {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        'next: loop {
            let mut r = match self.source.next() {
                Some(Ok(r)) => r,
                other => {
                    self.publish();
                    return other;
                }
            };
            if let Some(m) = &mut self.merge {
                m.seen += 1;
                m.kept += 1;
                m.span_out.add(&r);
            }
            for (stage, tally) in &mut self.stages {
                tally.seen += 1;
                tally.span_in.add(&r);
                match stage.apply(r) {
                    Some(out) => {
                        tally.kept += 1;
                        tally.span_out.add(&out);
                        r = out;
                    }
                    None => continue 'next,
                }
            }
            return Some(Ok(r));
        }
    }
}

/// One merged input: its stream, where it is, and its head request.
struct Cursor {
    stream: Box<dyn Iterator<Item = Result<Request, TraceError>> + Send>,
    /// The file to reopen for the next iteration (`None`: the primary, one
    /// iteration).
    path: Option<PathBuf>,
    scalar: u32,
    iters: u32,
    iter: u32,
    /// Its first issue, the origin of its times.
    t0: Option<u64>,
    /// Its last issue from `t0` in the first iteration: fio's `length`.
    length: u64,
    /// Its next request, its times merged.
    head: Option<Request>,
    /// Its input index (pids moved by it).
    index: u32,
    failed: Option<TraceError>,
}

impl Cursor {
    fn new(
        stream: Box<dyn Iterator<Item = Result<Request, TraceError>> + Send>,
        path: Option<PathBuf>,
        scalar: u32,
        iters: u32,
    ) -> Cursor {
        Cursor {
            stream,
            path,
            scalar,
            iters,
            iter: 0,
            t0: None,
            length: 0,
            head: None,
            index: 0,
            failed: None,
        }
    }

    /// Reads its next request into `head` (`None` at its last iteration's
    /// end; an error kept to be yielded).
    fn advance(&mut self) {
        loop {
            match self.stream.next() {
                Some(Ok(r)) => {
                    let t0 = *self.t0.get_or_insert(r.issue_ns);
                    let rel = r.issue_ns.saturating_sub(t0);
                    if self.iter == 0 {
                        self.length = self.length.max(rel);
                    }
                    let at = (u128::from(rel) + u128::from(self.iter) * u128::from(self.length))
                        * u128::from(self.scalar)
                        / 100;
                    let mut r = moved(r, at.min(u128::from(u64::MAX)) as u64);
                    if self.index > 0 {
                        let up = self.index.saturating_mul(PID_SPAN);
                        r.pid = Some(r.pid.unwrap_or(0).saturating_add(up));
                    }
                    self.head = Some(r);
                    return;
                }
                Some(Err(e)) => {
                    self.failed = Some(e);
                    self.head = None;
                    return;
                }
                None => {
                    self.iter += 1;
                    let again = match &self.path {
                        Some(p) if self.iter < self.iters => crate::open(p, None),
                        _ => {
                            self.head = None;
                            return;
                        }
                    };
                    match again {
                        Ok(s) => self.stream = Box::new(s),
                        Err(e) => {
                            self.failed = Some(e);
                            self.head = None;
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// The inputs merged by issue time (fio's `find_earliest_io`).
struct Merge {
    inputs: Vec<Cursor>,
    /// Every input's first head is read.
    started: bool,
}

impl Iterator for Merge {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.started = true;
            for (i, c) in self.inputs.iter_mut().enumerate() {
                c.index = i as u32;
                c.advance();
            }
        }
        if let Some(e) = self.inputs.iter_mut().find_map(|c| c.failed.take()) {
            self.inputs.clear();
            return Some(Err(e));
        }
        // The earliest head; a tie to the input named first.
        let mut best: Option<(usize, u64)> = None;
        for (i, c) in self.inputs.iter().enumerate() {
            if let Some(h) = &c.head {
                if best.map_or(true, |(_, t)| h.issue_ns < t) {
                    best = Some((i, h.issue_ns));
                }
            }
        }
        let (i, _) = best?;
        let r = self.inputs[i].head.take();
        self.inputs[i].advance();
        r.map(Ok)
    }
}

//! `cinterrupts coalesce --trace FILE` (issue 27 items 3, 4 and 7): a block
//! trace of any format the `traces` crate reads, marked by rules, replayed
//! through every strategy (or one) beside the oracle floor: interrupts,
//! completions per interrupt, the delay each adds per completion (p50,
//! p99, p99.9) and interrupts per second over time; with `--report DIR`,
//! the figures as SVG and an HTML page.
//!
//! **The stream.** Each request is a `submit` at its issue and a
//! `complete` at its completion. A format that records only arrivals
//! (fio's iologs, Alibaba, Tencent, DiskSim) has no completion: it is
//! taken as the issue plus `--service` (default 10 us, TOS 1's fast
//! device), and the output says so. Events are replayed in time order
//! through a reordering window of [`REORDER`] behind the latest issue seen
//! (a trace is in issue or completion order, with requests in flight
//! between); an event that falls further behind is replayed at the window's
//! edge and counted as late. Up to [`BUFFERED`] events wait before the
//! window applies, so a trace of that size is replayed in exact order
//! (a reader gives a request whose completion never came at the end).
//!
//! **Marks** (`--mark RULE`, the first that matches wins). A block trace
//! cannot see the system call, so the default follows TOS Table 1's logic
//! on what the block layer can see: a read blocks its caller (Table 1's
//! reads are Urgent unless asynchronous, which a block trace cannot tell),
//! a write with the RWBS sync flag is an O_DIRECT or O_SYNC write whose
//! caller waits (Table 1: Urgent), a flush or FUA is an fsync's (Urgent);
//! other writes (writeback) are unmarked.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use policy::oracle::{Budget, Floor};
use policy::stream::{Event, Outcome, Replayer, Row};
use policy::time::readable;
use policy::{Marks, Nanos, PolicySpec, MS, US};
use report::svg::{Figure, LineChart, LineSeries, Panel};
use traces::Request;

/// How far behind the latest issue an event may come and still be
/// replayed in order once [`BUFFERED`] events wait.
pub const REORDER: Nanos = 1_000 * MS;
/// Events held for ordering before the window applies (about 64 MiB):
/// a trace this size is replayed in exact time order.
pub const BUFFERED: usize = 2_000_000;
/// The bucket of the interrupts-per-second series.
const BUCKET: Nanos = 100 * MS;

/// One marking rule: `WHAT=MARK`, WHAT one of `*`, `read`, `write`,
/// `sync`, `flush`, `comm=NAME`, `pid=N`, `size<=BYTES`; MARK `urgent`,
/// `barrier` or `none`.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkRule {
    what: What,
    marks: Marks,
}

#[derive(Clone, Debug, PartialEq)]
enum What {
    All,
    Read,
    Write,
    Sync,
    Flush,
    Comm(String),
    Pid(u32),
    SizeAtMost(u64),
}

impl MarkRule {
    pub fn parse(s: &str) -> Result<MarkRule, String> {
        let (what, mark) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("--mark '{s}': expected WHAT=urgent|barrier|none"))?;
        let marks = match mark {
            "urgent" => Marks::URGENT,
            "barrier" => Marks::BARRIER,
            "none" => Marks::NONE,
            m => {
                return Err(format!(
                    "--mark '{s}': '{m}' is not urgent, barrier or none"
                ))
            }
        };
        let what = match what {
            "*" => What::All,
            "read" => What::Read,
            "write" => What::Write,
            "sync" => What::Sync,
            "flush" => What::Flush,
            w => {
                if let Some(c) = w.strip_prefix("comm=") {
                    What::Comm(c.to_string())
                } else if let Some(p) = w.strip_prefix("pid=") {
                    What::Pid(
                        p.parse()
                            .map_err(|_| format!("--mark '{s}': pid '{p}' is not a number"))?,
                    )
                } else if let Some(b) = w.strip_prefix("size<=") {
                    let n = jobs::units::parse_size(b).map_err(|e| format!("--mark '{s}': {e}"))?;
                    What::SizeAtMost(n)
                } else {
                    return Err(format!(
                        "--mark '{s}': '{w}' is not *, read, write, sync, flush, comm=NAME, pid=N or size<=BYTES"
                    ));
                }
            }
        };
        Ok(MarkRule { what, marks })
    }

    fn matches(&self, r: &Request) -> bool {
        match &self.what {
            What::All => true,
            What::Read => !r.write && !r.flush,
            What::Write => r.write,
            What::Sync => r.sync,
            What::Flush => r.flush,
            What::Comm(c) => r.comm.as_deref() == Some(c.as_str()),
            What::Pid(p) => r.pid == Some(*p),
            What::SizeAtMost(n) => u64::from(r.bytes) <= *n,
        }
    }
}

/// A request's marks: the first rule that matches, else the default (the
/// module's comment).
pub fn marks_of(rules: &[MarkRule], r: &Request) -> Marks {
    match rules.iter().find(|rule| rule.matches(r)) {
        Some(rule) => rule.marks,
        None => sim::replay::table1_marks(r),
    }
}

/// The trace as a time-ordered stream of rows, through the reorder window.
pub struct Stream {
    heap: BinaryHeap<Reverse<(Nanos, u64, u8, u8)>>,
    next_id: u64,
    frontier: Nanos,
    latest_issue: Nanos,
    pub late: u64,
    pub derived: u64,
    service: Nanos,
    /// Events held before the window applies ([`BUFFERED`]).
    buffered: usize,
}

impl Stream {
    pub fn new(service: Nanos) -> Stream {
        Stream {
            heap: BinaryHeap::new(),
            next_id: 0,
            frontier: 0,
            latest_issue: 0,
            late: 0,
            derived: 0,
            service,
            buffered: BUFFERED,
        }
    }

    /// As [`Stream::new`], holding `buffered` events before the window.
    #[cfg(test)]
    pub fn with_buffer(service: Nanos, buffered: usize) -> Stream {
        Stream {
            buffered,
            ..Stream::new(service)
        }
    }

    /// Takes one request; the rows now due (older than the window).
    pub fn push(&mut self, r: &Request, marks: Marks, out: &mut Vec<Row>) {
        let id = self.next_id;
        self.next_id += 1;
        let bits = u8::from(marks.urgent) | u8::from(marks.barrier) << 1;
        let done = r.complete_ns.unwrap_or_else(|| {
            self.derived += 1;
            r.issue_ns + self.service
        });
        // 0 submit, 1 complete: a completion at the same time sorts after.
        self.heap.push(Reverse((r.issue_ns, id, 0, bits)));
        self.heap.push(Reverse((done.max(r.issue_ns), id, 1, bits)));
        self.latest_issue = self.latest_issue.max(r.issue_ns);
        // Time order within the reordering window; a reader may also hold
        // a request back until its end (one whose completion never came is
        // given at the end of the trace), so the window stretches to
        // [`BUFFERED`] events before anything is let through early.
        if self.heap.len() > self.buffered {
            let edge = self.latest_issue.saturating_sub(REORDER);
            self.drain(Some(edge), out);
            while self.heap.len() > self.buffered / 2 {
                self.drain_one(out);
            }
        }
    }

    fn drain_one(&mut self, out: &mut Vec<Row>) {
        let Some(Reverse((t, id, kind, bits))) = self.heap.pop() else {
            return;
        };
        self.emit(t, id, kind, bits, out);
    }

    /// The rows up to `edge` (all at the end).
    pub fn drain(&mut self, edge: Option<Nanos>, out: &mut Vec<Row>) {
        while let Some(&Reverse((t, id, kind, bits))) = self.heap.peek() {
            if edge.is_some_and(|e| t > e) {
                break;
            }
            self.heap.pop();
            self.emit(t, id, kind, bits, out);
        }
    }

    fn emit(&mut self, t: Nanos, id: u64, kind: u8, bits: u8, out: &mut Vec<Row>) {
        let time = if t < self.frontier {
            self.late += 1;
            self.frontier
        } else {
            t
        };
        self.frontier = time;
        out.push(Row {
            line: id as usize + 1,
            time,
            id,
            marks: Marks {
                urgent: bits & 1 != 0,
                barrier: bits & 2 != 0,
            },
            event: if kind == 0 {
                Event::Submit
            } else {
                Event::Complete
            },
        });
    }
}

/// The completions in flight (completed, not yet delivered): id to its
/// completion time and whether it is Urgent. Shared by the feeder (which
/// adds) and each strategy's [`PerBucket`] (which checks at delivery).
type Pending = std::rc::Rc<std::cell::RefCell<HashMap<u64, (Nanos, bool)>>>;

/// Reads a strategy's interrupt CSV (`time_ns,kind,ids`) as it is
/// written: interrupts per [`BUCKET`], and whether each completion it
/// delivers met its budget (Urgent: at once; the rest: within the budget).
#[derive(Default)]
struct PerBucket {
    line: Vec<u8>,
    buckets: HashMap<u64, u64>,
    pending: Pending,
    budget: Nanos,
    /// Completions delivered past their budget.
    missed: u64,
}

impl PerBucket {
    fn line_done(&mut self) {
        let Ok(l) = std::str::from_utf8(&self.line) else {
            return;
        };
        let mut f = l.split(',');
        let Some(t) = f.next().and_then(|t| t.parse::<u64>().ok()) else {
            return;
        };
        *self.buckets.entry(t / BUCKET).or_insert(0) += 1;
        let pending = self.pending.borrow();
        for id in f
            .nth(1)
            .unwrap_or("")
            .split(' ')
            .filter_map(|i| i.parse::<u64>().ok())
        {
            if let Some(&(done, urgent)) = pending.get(&id) {
                let allowed = if urgent { 0 } else { self.budget };
                if t.saturating_sub(done) > allowed {
                    self.missed += 1;
                }
            }
        }
    }
}

impl Write for PerBucket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for &b in buf {
            if b == b'\n' {
                self.line_done();
                self.line.clear();
            } else {
                self.line.push(b);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What `coalesce --trace` takes.
pub struct Job<'a> {
    pub trace: &'a Path,
    pub format: Option<traces::Format>,
    pub rules: Vec<MarkRule>,
    pub budget: Nanos,
    pub service: Nanos,
    pub policies: Vec<PolicySpec>,
    pub report: Option<PathBuf>,
}

/// One strategy's line of the table.
struct Line {
    outcome: Outcome,
    per_second: Vec<(f64, f64)>,
    met: bool,
}

/// Runs the job and prints the table.
pub fn run(job: &Job) -> Result<()> {
    let origin = job.trace.display().to_string();
    let requests = traces::open(job.trace, job.format)?;
    let pending: Pending = Pending::default();
    let mut replayers = job
        .policies
        .iter()
        .map(|p| {
            let sink = PerBucket {
                pending: pending.clone(),
                budget: job.budget,
                ..PerBucket::default()
            };
            Replayer::new(p, &origin, Some(sink))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut floor = Floor::new(Budget::new(job.budget));
    let mut stream = Stream::new(job.service);
    let mut rows = Vec::new();
    let (mut n, mut urgent) = (0u64, 0u64);
    let feed = |rows: &mut Vec<Row>,
                replayers: &mut Vec<Replayer<PerBucket>>,
                floor: &mut Floor|
     -> Result<()> {
        for row in rows.drain(..) {
            let urgent = row.marks.urgent;
            if row.event == Event::Complete {
                pending.borrow_mut().insert(row.id, (row.time, urgent));
            }
            for r in replayers.iter_mut() {
                r.feed(&row)?;
            }
            // Delivered by every strategy by now, or still pending in one:
            // kept until the last strategy's delivery cannot need it (the
            // reorder window bounds it; cleared when the replay ends).
            if pending.borrow().len() > 4 * policy::stream::MAX_IN_FLIGHT {
                let edge = row.time.saturating_sub(REORDER);
                pending.borrow_mut().retain(|_, v| v.0 >= edge);
            }
            if row.event == Event::Complete {
                floor
                    .complete(row.time, urgent)
                    .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
            }
        }
        Ok(())
    };
    for r in requests {
        let r = r?;
        let m = marks_of(&job.rules, &r);
        n += 1;
        urgent += u64::from(m.urgent);
        stream.push(&r, m, &mut rows);
        feed(&mut rows, &mut replayers, &mut floor)?;
    }
    stream.drain(None, &mut rows);
    feed(&mut rows, &mut replayers, &mut floor)?;
    floor.finish();
    let oracle = floor.interrupts();
    if n == 0 {
        bail!("{origin}: no requests");
    }
    let mut lines = Vec::new();
    for r in replayers {
        let (outcome, sink) = r.finish()?;
        let sink = sink.unwrap_or_default();
        let mut per_second: Vec<(f64, f64)> = sink
            .buckets
            .iter()
            .map(|(&b, &c)| {
                (
                    b as f64 * BUCKET as f64 / 1e9,
                    c as f64 * 1e9 / BUCKET as f64,
                )
            })
            .collect();
        per_second.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Met the budget: no completion delivered past its own (Urgent:
        // none), as the oracle delivers them.
        let met = sink.missed == 0;
        lines.push(Line {
            outcome,
            per_second,
            met,
        });
    }
    print!(
        "{}",
        table(&origin, n, urgent, &stream, job, oracle, &lines)
    );
    if let Some(dir) = &job.report {
        write_report(dir, &origin, job, oracle, &lines)?;
        println!("report: {}", dir.join("index.html").display());
    }
    Ok(())
}

fn pct(o: &Outcome, q: f64) -> String {
    if o.delays.is_empty() {
        "-".into()
    } else {
        readable(o.delays.value_at_quantile(q).min(o.max_delay))
    }
}

fn table(
    origin: &str,
    n: u64,
    urgent: u64,
    s: &Stream,
    job: &Job,
    oracle: u64,
    lines: &[Line],
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{origin}: {n} requests, {urgent} marked Urgent; budget {} for the rest (Urgent: none)",
        readable(job.budget)
    );
    if s.derived > 0 {
        let _ = writeln!(
            t,
            "{} requests had no completion time in the trace: taken as issue + {} (--service)",
            s.derived,
            readable(job.service)
        );
    }
    if s.late > 0 {
        let _ = writeln!(
            t,
            "{} events came more than {} out of order: replayed late",
            s.late,
            readable(REORDER)
        );
    }
    let _ = writeln!(t, "oracle floor: {oracle} interrupts (the fewest that deliver every completion within its budget)");
    let _ = writeln!(
        t,
        "{:<14} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6}",
        "strategy",
        "interrupts",
        "per irq",
        "p50 add",
        "p99 add",
        "p99.9 add",
        "max irq/s",
        "/floor",
        "budget"
    );
    for l in lines {
        let o = &l.outcome;
        let max_rate = l.per_second.iter().map(|p| p.1).fold(0.0, f64::max);
        let ratio = if oracle == 0 {
            "-".into()
        } else {
            format!("{:.2}", o.interrupts() as f64 / oracle as f64)
        };
        let _ = writeln!(
            t,
            "{:<14} {:>10} {:>8.2} {:>9} {:>9} {:>9} {:>9.0} {:>8} {:>6}",
            o.policy.name.as_str(),
            o.interrupts(),
            o.per_interrupt(),
            pct(o, 0.5),
            pct(o, 0.99),
            pct(o, 0.999),
            max_rate,
            ratio,
            if l.met { "met" } else { "missed" }
        );
    }
    t
}

/// The CDF of added delay and the interrupts per second over time, one
/// line per strategy, and a page showing them with the table.
fn write_report(dir: &Path, origin: &str, job: &Job, oracle: u64, lines: &[Line]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let cdf = LineChart {
        title: "added delay per completion (CDF)".into(),
        x_label: "delay [us]".into(),
        y_label: "fraction of completions".into(),
        series: lines
            .iter()
            .map(|l| LineSeries {
                errors: Vec::new(),
                name: l.outcome.policy.name.clone(),
                points: (0..=100)
                    .map(|i| {
                        let q = i as f64 / 100.0;
                        let d = if l.outcome.delays.is_empty() {
                            0
                        } else {
                            l.outcome
                                .delays
                                .value_at_quantile(q)
                                .min(l.outcome.max_delay)
                        };
                        (d as f64 / US as f64, q)
                    })
                    .collect(),
            })
            .collect(),
        ..LineChart::default()
    };
    let rate = LineChart {
        title: "interrupts per second over time".into(),
        x_label: "time [s]".into(),
        y_label: "interrupts/s".into(),
        series: lines
            .iter()
            .map(|l| LineSeries {
                errors: Vec::new(),
                name: l.outcome.policy.name.clone(),
                points: l.per_second.clone(),
            })
            .collect(),
        ..LineChart::default()
    };
    let fig = |c: LineChart, title: &str| {
        Figure {
            title: title.into(),
            panels: vec![Panel::Lines(c)],
        }
        .render()
        .map_err(|e| anyhow::anyhow!("a figure: {e}"))
    };
    let files = [
        ("delay-cdf.svg", fig(cdf, origin)?),
        ("irq-rate.svg", fig(rate, origin)?),
    ];
    for (name, svg) in &files {
        report::file::write_atomically(&dir.join(name), svg.as_bytes())
            .with_context(|| format!("{}: cannot write", dir.join(name).display()))?;
    }
    let mut rows = String::new();
    for l in lines {
        let o = &l.outcome;
        let _ = writeln!(
            rows,
            "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            html(o.policy.name.as_str()),
            o.interrupts(),
            o.per_interrupt(),
            pct(o, 0.5),
            pct(o, 0.99),
            pct(o, 0.999),
            if l.met { "met" } else { "missed" }
        );
    }
    let page = format!(
        "<!doctype html><meta charset=utf-8><title>coalesce: {t}</title>\n<h1>{t}</h1>\n<p>Budget {b} for unmarked and Barrier completions, none for Urgent; oracle floor {oracle} interrupts.</p>\n<table border=1 cellpadding=4><tr><th>strategy</th><th>interrupts</th><th>per interrupt</th><th>p50 added</th><th>p99 added</th><th>p99.9 added</th><th>budget</th></tr>\n{rows}</table>\n<p><img src=delay-cdf.svg> <img src=irq-rate.svg></p>\n",
        t = html(origin),
        b = readable(job.budget),
    );
    report::file::write_atomically(&dir.join("index.html"), page.as_bytes())
        .with_context(|| format!("{}: cannot write", dir.join("index.html").display()))?;
    Ok(())
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(issue: u64, done: Option<u64>, write: bool, sync: bool) -> Request {
        Request {
            issue_ns: issue,
            complete_ns: done,
            offset: 0,
            bytes: 4096,
            write,
            discard: false,
            sync,
            flush: false,
            pid: Some(7),
            comm: Some("db".into()),
            device: None,
        }
    }

    #[test]
    fn default_marks_follow_table_1_on_what_a_block_trace_shows() {
        assert_eq!(marks_of(&[], &req(0, None, false, false)), Marks::URGENT);
        assert_eq!(marks_of(&[], &req(0, None, true, true)), Marks::URGENT);
        assert_eq!(marks_of(&[], &req(0, None, true, false)), Marks::NONE);
        let rules = [
            MarkRule::parse("comm=db=barrier").unwrap(),
            MarkRule::parse("*=none").unwrap(),
        ];
        assert_eq!(
            marks_of(&rules, &req(0, None, false, false)),
            Marks::BARRIER
        );
        let mut other = req(0, None, false, false);
        other.comm = Some("x".into());
        assert_eq!(marks_of(&rules, &other), Marks::NONE);
        assert_eq!(
            marks_of(
                &[MarkRule::parse("size<=4k=none").unwrap()],
                &req(0, None, false, false)
            ),
            Marks::NONE
        );
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        for (r, want) in [
            ("read", "expected WHAT="),
            ("read=soon", "'soon' is not urgent"),
            ("pid=x=urgent", "pid 'x'"),
            ("colour=red=urgent", "'colour=red' is not"),
        ] {
            let e = MarkRule::parse(r).unwrap_err();
            assert!(e.contains(want), "{r}: {e}");
        }
    }

    #[test]
    fn rows_come_out_in_time_order_with_derived_completions() {
        let mut s = Stream::new(10 * US);
        let mut out = Vec::new();
        // A completion-ordered pair: the second issued before the first.
        s.push(&req(100, Some(500), false, false), Marks::URGENT, &mut out);
        s.push(&req(50, None, true, false), Marks::NONE, &mut out);
        s.drain(None, &mut out);
        let times: Vec<(Nanos, Event)> = out.iter().map(|r| (r.time, r.event)).collect();
        assert_eq!(
            times,
            vec![
                (50, Event::Submit),
                (100, Event::Submit),
                (500, Event::Complete),
                (10_050, Event::Complete)
            ]
        );
        assert_eq!((s.derived, s.late), (1, 0));
    }

    #[test]
    fn an_event_beyond_the_window_is_replayed_late_not_out_of_order() {
        let mut s = Stream::with_buffer(US, 2);
        let mut out = Vec::new();
        s.push(&req(0, Some(10), false, false), Marks::NONE, &mut out);
        s.push(
            &req(3 * REORDER, Some(3 * REORDER + 10), false, false),
            Marks::NONE,
            &mut out,
        );
        s.push(&req(5, Some(20), false, false), Marks::NONE, &mut out);
        s.drain(None, &mut out);
        assert!(out.windows(2).all(|w| w[0].time <= w[1].time));
        assert_eq!(s.late, 2);
    }
}

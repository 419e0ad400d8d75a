//! `cinterrupts coalesce --trace FILE` (issue 27 items 3, 4 and 7; a
//! library since issue 39, the binary only wires its options): a block
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
//! **Marks** (`--mark RULE`): the one marking engine's rules (the `marks`
//! crate's syntax, as `exec --mark` and a job file's `mark=` take it), the
//! first that matches winning. A trace's request has an operation (a
//! flush or FUA request is a flush, else a write or a read; a discard
//! counts as a read, as before), a process (`comm=`) and a volume
//! (`volume=`: the device the format names), where the format records
//! them; no thread, file or title, and a rule asking for one is refused.
//! Without a rule, the default is Table 1's logic on what a block trace
//! records (`marks::kernel::block`), or the rule `--marks-from` names
//! (`marks::trace`: plugged batches, the service class, the issuing
//! process; [`crate::trace_marks`]), which the table then names with the
//! count of each mark.

mod page;
pub mod plan;
mod stream;
mod stream_replay;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use marks::{Facts, Needs, Op, Rule};
use policy::fast::HashMap;
use policy::oracle::{Budget, Floor};
use policy::replay::Delivery;
use policy::stream::{Event, Outcome, Replayer, Row};
use policy::{Marks, Nanos, PolicySpec, MS};
use traces::Request;

use page::{table, write_report};
pub use stream::{Stream, BUFFERED, REORDER};
pub use stream_replay::{compare_all, compare_path, every_strategy, replay, replay_path};

/// The bucket of the interrupts-per-second series.
const BUCKET: Nanos = 100 * MS;

/// The facts a block trace can give a rule: the operation, the process
/// (`comm=`) and the volume (`volume=`), where its format records them.
pub const KNOWN: Needs = Needs {
    thread: false,
    file: false,
    title: false,
    comm: true,
    volume: true,
};

/// `coalesce --mark`: one marking rule, refused when it needs a fact a
/// block trace lacks ([`KNOWN`]).
pub fn parse_mark_rule(s: &str) -> Result<Rule, String> {
    let rule = Rule::parse(s)?;
    Needs::check(KNOWN, "a block trace", std::slice::from_ref(&rule))?;
    Ok(rule)
}

/// A request's marks: the first rule that matches, else Table 1's logic
/// on what a block trace records (`marks::kernel::block`). A trace
/// carries no application flag: what it shows is what the device saw.
pub fn marks_of(rules: &[Rule], r: &Request) -> Marks {
    rule_marks(rules, r).unwrap_or_else(|| marks::kernel::block(r.write, r.sync, r.flush))
}

/// The marks of the first rule that matches `r`; `None` when none does
/// (or it says `=> default`): the default rule decides.
pub fn rule_marks(rules: &[Rule], r: &Request) -> Option<Marks> {
    let op = if r.flush {
        Op::Flush
    } else if r.write {
        Op::Write
    } else {
        Op::Read
    };
    let facts = Facts {
        comm: r.comm.as_deref(),
        volume: r.device.as_deref(),
        ..Facts::op(op)
    };
    // A trace carries no application flag (`marks::resolve`'s first step).
    marks::first(rules, &facts)
        .and_then(|rule| rule.mark)
        .map(|m| m.marks())
}

/// The completions in flight (completed, not yet delivered): id to its
/// completion time and whether it is Urgent. Shared by the feeder (which
/// adds) and each strategy's [`PerBucket`] (which checks at delivery).
type Pending = Rc<RefCell<HashMap<u64, (Nanos, bool)>>>;

/// A strategy's interrupts as they are raised (`Replayer::watch`):
/// interrupts per [`BUCKET`], and whether each completion it delivers met
/// its budget (Urgent: at once; the rest: within the budget).
#[derive(Default)]
struct PerBucket {
    buckets: HashMap<u64, u64>,
    pending: Pending,
    budget: Nanos,
    /// Completions delivered past their budget.
    missed: u64,
}

impl PerBucket {
    fn delivered(&mut self, d: &Delivery) {
        let t = d.time;
        *self.buckets.entry(t / BUCKET).or_insert(0) += 1;
        let pending = self.pending.borrow();
        for r in d.reaped {
            if let Some(&(done, urgent)) = pending.get(&r.id) {
                let allowed = if urgent { 0 } else { self.budget };
                if t.saturating_sub(done) > allowed {
                    self.missed += 1;
                }
            }
        }
    }
}

/// What `coalesce --trace` takes.
pub struct Job<'a> {
    pub trace: &'a Path,
    pub format: Option<traces::Format>,
    /// The marking rules, in order (`--mark`).
    pub rules: Vec<Rule>,
    pub budget: Nanos,
    pub service: Nanos,
    pub policies: Vec<PolicySpec>,
    pub report: Option<PathBuf>,
    /// The rule that marks what no `--mark` rule does (`--marks-from`;
    /// `None`: Table 1's logic, unnamed in the table).
    pub marks_from: Option<marks::trace::MarksFrom>,
    /// Whether the trace's times are checked or sorted (`--sort`).
    pub order: traces::Order,
    /// The replay transforms (`traces::transform`), their lines before
    /// the table.
    pub shape: traces::transform::Shape,
}

/// One strategy's line of the table.
struct Line {
    outcome: Outcome,
    per_second: Vec<(f64, f64)>,
    met: bool,
}

/// Runs the job: the table as text, and with `job.report` the figures and
/// page written. An error is one line naming the trace or the file.
pub fn run(job: &Job) -> Result<String, String> {
    Needs::check(KNOWN, "a block trace", &job.rules)?;
    let mut marker = crate::trace_marks::Marker::open(job.marks_from, job.trace, job.format)?;
    let requests =
        traces::open_in_order(job.trace, job.format, job.order).map_err(|e| e.to_string())?;
    let origin = job.trace.display().to_string();
    let (requests, shaped) = job
        .shape
        .apply(requests, &origin)
        .map_err(|e| e.to_string())?;
    run_on(job, requests, &mut marker, &shaped)
}

/// [`run`] on requests already being read (`job.trace` names them in
/// errors), marked by `marker` after the job's rules, `shaped`'s counts
/// printed before the table: `bench traces` replays a trace generated in
/// memory this way.
pub fn run_on(
    job: &Job,
    requests: impl Iterator<Item = Result<Request, traces::TraceError>>,
    marker: &mut crate::trace_marks::Marker,
    shaped: &traces::transform::Outcome,
) -> Result<String, String> {
    let origin = job.trace.display().to_string();
    let pending: Pending = Pending::default();
    let mut tallies = Vec::new();
    let mut replayers = job
        .policies
        .iter()
        .map(|p| {
            let tally = Rc::new(RefCell::new(PerBucket {
                pending: pending.clone(),
                budget: job.budget,
                ..PerBucket::default()
            }));
            tallies.push(tally.clone());
            Replayer::<std::io::Sink>::new(p, &origin, None).map(|r| {
                r.watch(Box::new(move |d: &Delivery| {
                    tally.borrow_mut().delivered(d)
                }))
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let mut floor = Floor::new(Budget::new(job.budget));
    let mut stream = Stream::new(job.service);
    let mut rows = Vec::new();
    let (mut n, mut urgent) = (0u64, 0u64);
    let feed = |rows: &mut Vec<Row>,
                replayers: &mut Vec<Replayer<std::io::Sink>>,
                floor: &mut Floor|
     -> Result<(), String> {
        for row in rows.drain(..) {
            let urgent = row.marks.urgent;
            if row.event == Event::Complete {
                pending.borrow_mut().insert(row.id, (row.time, urgent));
            }
            for r in replayers.iter_mut() {
                r.feed(&row).map_err(|e| e.to_string())?;
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
                    .map_err(|e| format!("{origin}: {e}"))?;
            }
        }
        Ok(())
    };
    for r in requests {
        let r = r.map_err(|e| e.to_string())?;
        let m = marker.mark_after(&r, rule_marks(&job.rules, &r));
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
        return Err(format!("{origin}: no requests"));
    }
    let mut lines = Vec::new();
    for (r, tally) in replayers.into_iter().zip(tallies) {
        let (outcome, _) = r.finish().map_err(|e| e.to_string())?;
        let sink = tally.borrow();
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
    let text = shaped.render()
        + &table(
            &origin,
            (n, urgent),
            &marker.line(),
            &stream,
            job,
            oracle,
            &lines,
        );
    if let Some(dir) = &job.report {
        write_report(dir, &origin, job, oracle, &lines)?;
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(write: bool, sync: bool) -> Request {
        Request {
            device: Some("nvme0n1".into()),
            ..stream::tests::req(0, None, write, sync)
        }
    }

    fn rules(text: &[&str]) -> Vec<Rule> {
        text.iter().map(|t| Rule::parse(t).unwrap()).collect()
    }

    #[test]
    fn default_marks_follow_table_1_on_what_a_block_trace_shows() {
        assert_eq!(marks_of(&[], &req(false, false)), Marks::URGENT);
        assert_eq!(marks_of(&[], &req(true, true)), Marks::URGENT);
        assert_eq!(marks_of(&[], &req(true, false)), Marks::NONE);
        let r = rules(&["comm=db => barrier", "=> none"]);
        assert_eq!(marks_of(&r, &req(false, false)), Marks::BARRIER);
        let mut other = req(false, false);
        other.comm = Some("x".into());
        assert_eq!(marks_of(&r, &other), Marks::NONE);
        let by_volume = rules(&["write volume=nvme0* => urgent"]);
        assert_eq!(marks_of(&by_volume, &req(true, false)), Marks::URGENT);
        other.device = Some("sda".into());
        other.write = true;
        assert_eq!(marks_of(&by_volume, &other), Marks::NONE, "Table 1");
        let mut flush = req(true, false);
        flush.flush = true;
        assert_eq!(
            marks_of(&rules(&["flush => barrier"]), &flush),
            Marks::BARRIER
        );
        assert_eq!(
            marks_of(&rules(&["write => default"]), &flush),
            Marks::URGENT
        );
    }

    #[test]
    fn a_rule_on_what_a_trace_has_not_is_refused_by_name() {
        let job = Job {
            trace: Path::new("/nonexistent"),
            format: None,
            rules: rules(&["file=*.ibd => none"]),
            budget: 0,
            service: 0,
            policies: Vec::new(),
            report: None,
            marks_from: None,
            order: traces::Order::Check,
            shape: Default::default(),
        };
        let e = run(&job).unwrap_err();
        assert!(e.contains("a block trace has no 'file='"), "{e}");
    }
}

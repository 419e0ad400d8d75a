//! A completion stream as CSV, `time_ns,id,flags,event` (flags `-`, `U`,
//! `B`, `UB`; event `complete`, `error` or `submit`; blank lines and lines
//! starting with `#` skipped; a UTF-8 byte-order mark allowed, as in job
//! files), read row by row ([`Reader`]) and replayed through a strategy as
//! it is read ([`Replayer`]): the interrupts it raises, as CSV or as a
//! summary of counts and delays. This is `cinterrupts coalesce`.
//!
//! Nothing holds the stream: memory is the strategy's state and the
//! commands in flight (at most [`MAX_IN_FLIGHT`]), so a stream of any
//! length, or a live pipe, is replayed in constant memory.

use std::fmt::Write as _;
use std::io::{self, BufRead};

use hdrhistogram::Histogram;
use thiserror::Error;

use crate::catalogue::{build, Settings, SpecError};
use crate::fast::HashSet;
use crate::quote::quoted;
use crate::replay::{Delivery, Replay};
use crate::time::readable;
use crate::{Command, Completion, Interrupt, Marks, Nanos, PolicySpec};

pub const HEADER: &str = "time_ns,id,flags,event";

/// The longest line read, in bytes with its newline. A row is at most 55
/// bytes (two 20-digit numbers, `UB`, `complete` and three commas); the rest
/// is room for spaces and comments. A longer line (a binary file,
/// `/dev/zero`) is refused rather than held in memory.
pub const MAX_LINE: usize = 4096;

/// The most commands in flight at once: submitted and not completed, or
/// completed and not delivered. One NVMe queue holds at most 64Ki entries
/// (NVMe 1.4, CAP.MQES: a 16-bit 0's-based size), so a stream with more
/// cannot come from one queue; the bound keeps a replay's memory constant.
pub const MAX_IN_FLIGHT: usize = 65_536;

/// A UTF-8 byte-order mark, which editors on some systems put first.
const BOM: &str = "\u{feff}";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Submit,
    Complete,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Where the row is in its file, from 1.
    pub line: usize,
    pub time: Nanos,
    pub id: u64,
    pub marks: Marks,
    pub event: Event,
}

/// What is wrong with one row (or the stream as a whole). A field it
/// echoes is quoted: cut and escaped (`crate::quote`), so the error stays
/// one short line whatever the row held.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Problem {
    #[error("header must be '{HEADER}', found '{0}'")]
    Header(String),
    #[error("empty stream: expected the header '{HEADER}'")]
    Empty,
    #[error("not valid UTF-8 (a completion stream is CSV text)")]
    Utf8,
    #[error("line longer than {MAX_LINE} bytes (a row is one short line of CSV text)")]
    LineTooLong,
    #[error("expected 4 columns ({HEADER}), found {0}")]
    Columns(usize),
    #[error("column 'time_ns': '{0}' is not a whole number of nanoseconds")]
    Time(String),
    #[error("column 'time_ns': {time} is before the previous row's {previous}; rows must be in time order")]
    TimeWentBack { time: Nanos, previous: Nanos },
    #[error("column 'time_ns': {0} leaves no room for the policy's deadline after it below 2^64 ns, the latest time a stream can hold")]
    NoRoom(Nanos),
    #[error("column 'id': '{0}' is not a non-negative integer")]
    Id(String),
    #[error("column 'flags': '{0}' is not one of -, U, B, UB")]
    Flags(String),
    #[error("column 'event': '{0}' is not one of complete, error, submit")]
    Event(String),
    #[error("id {0} submitted again while still outstanding")]
    SubmittedAgain(u64),
    #[error("id {0} completed again before it was delivered")]
    CompletedAgain(u64),
    #[error("more than {MAX_IN_FLIGHT} commands {0} at once; one NVMe queue holds at most 64Ki entries (NVMe 1.4 CAP.MQES)")]
    InFlight(&'static str),
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum StreamError {
    /// A row, named by its file and line.
    #[error("{origin}:{line}: {problem}")]
    Row {
        origin: String,
        line: usize,
        problem: Problem,
    },
    /// The stream could not be read past this line.
    #[error("{origin}:{line}: cannot read: {reason}")]
    Read {
        origin: String,
        line: usize,
        reason: String,
    },
    /// The interrupts' CSV could not be written.
    #[error("cannot write: {0}")]
    Write(String),
    #[error(transparent)]
    Policy(#[from] SpecError),
}

/// Reads a stream row by row, checking each as it comes: a bad row is an
/// error naming its line, and nothing after it is read.
pub struct Reader<R> {
    input: R,
    origin: String,
    /// Lines read so far.
    line: usize,
    header_seen: bool,
    last_time: Nanos,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> Reader<R> {
    /// `origin` names the stream in errors (a file, `<stdin>`).
    pub fn new(input: R, origin: &str) -> Self {
        Reader {
            input,
            origin: origin.to_string(),
            line: 0,
            header_seen: false,
            last_time: 0,
            buf: Vec::new(),
            done: false,
        }
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The input, e.g. to see whether a read would wait on a live pipe.
    pub fn get_ref(&self) -> &R {
        &self.input
    }

    fn err(&self, line: usize, problem: Problem) -> StreamError {
        StreamError::Row {
            origin: self.origin.clone(),
            line,
            problem,
        }
    }

    /// The next line, without its end; `None` at the end of the input.
    fn next_line(&mut self) -> Result<Option<String>, StreamError> {
        self.buf.clear();
        // One byte past the bound tells a line at the bound from a longer one.
        let read =
            io::Read::take(&mut self.input, MAX_LINE as u64 + 1).read_until(b'\n', &mut self.buf);
        self.line += 1;
        match read {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) => {
                return Err(StreamError::Read {
                    origin: self.origin.clone(),
                    line: self.line,
                    reason: e.to_string(),
                })
            }
        }
        if self.buf.len() > MAX_LINE {
            return Err(self.err(self.line, Problem::LineTooLong));
        }
        let text =
            std::str::from_utf8(&self.buf).map_err(|_| self.err(self.line, Problem::Utf8))?;
        let text = if self.line == 1 {
            text.strip_prefix(BOM).unwrap_or(text)
        } else {
            text
        };
        Ok(Some(text.to_string()))
    }

    /// The next row; `None` at the end of the stream.
    pub fn next_row(&mut self) -> Result<Option<Row>, StreamError> {
        if self.done {
            return Ok(None);
        }
        let row = self.read_row();
        if !matches!(row, Ok(Some(_))) {
            self.done = true;
        }
        row
    }

    fn read_row(&mut self) -> Result<Option<Row>, StreamError> {
        loop {
            let Some(text) = self.next_line()? else {
                if !self.header_seen {
                    return Err(self.err(1, Problem::Empty));
                }
                return Ok(None);
            };
            let trimmed = text.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = trimmed.split(',').map(str::trim).collect();
            if !self.header_seen {
                if fields.join(",") != HEADER {
                    return Err(self.err(self.line, Problem::Header(quoted(trimmed))));
                }
                self.header_seen = true;
                continue;
            }
            let row = parse_row(&fields, self.line, self.last_time)
                .map_err(|problem| self.err(self.line, problem))?;
            self.last_time = row.time;
            return Ok(Some(row));
        }
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Row, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}

/// One row's four columns, checked; `last_time` is the previous row's.
fn parse_row(fields: &[&str], line: usize, last_time: Nanos) -> Result<Row, Problem> {
    if fields.len() != 4 {
        return Err(Problem::Columns(fields.len()));
    }
    let time: Nanos = fields[0]
        .parse()
        .map_err(|_| Problem::Time(quoted(fields[0])))?;
    if time < last_time {
        return Err(Problem::TimeWentBack {
            time,
            previous: last_time,
        });
    }
    let id: u64 = fields[1]
        .parse()
        .map_err(|_| Problem::Id(quoted(fields[1])))?;
    let marks = Marks::parse(fields[2]).ok_or_else(|| Problem::Flags(quoted(fields[2])))?;
    let event = match fields[3] {
        "complete" => Event::Complete,
        "error" => Event::Error,
        "submit" => Event::Submit,
        other => return Err(Problem::Event(quoted(other))),
    };
    Ok(Row {
        line,
        time,
        id,
        marks,
        event,
    })
}

/// Parses a whole stream held in memory, checking every row (small
/// streams and tests; `coalesce` reads with [`Reader`]).
pub fn parse(text: &str, origin: &str) -> Result<Vec<Row>, StreamError> {
    Reader::new(text.as_bytes(), origin).collect()
}

/// What one strategy did on a stream.
pub struct Outcome {
    pub policy: Settings,
    /// The interrupts as CSV, `time_ns,kind,ids`, if [`replay`] was asked
    /// for them (a [`Replayer`] writes them as they come instead).
    pub csv: String,
    pub full: u64,
    pub urgent_only: u64,
    pub completions: u64,
    pub errors: u64,
    /// From each completion to the interrupt that delivered it.
    pub delays: Histogram<u64>,
    pub max_delay: Nanos,
    pub input_end: Nanos,
    pub last_delivery: Nanos,
}

impl Outcome {
    pub fn interrupts(&self) -> u64 {
        self.full + self.urgent_only
    }

    pub fn per_interrupt(&self) -> f64 {
        if self.interrupts() == 0 {
            0.0
        } else {
            self.completions as f64 / self.interrupts() as f64
        }
    }

    /// Mean, p99 and max delay as a person reads them (`-` when nothing was
    /// delivered).
    fn delay_stats(&self) -> (String, String, String) {
        if self.delays.is_empty() {
            return ("-".into(), "-".into(), "-".into());
        }
        (
            readable(self.delays.mean().round() as u64),
            // A bucket's upper edge can pass the exact maximum; never show p99 > max.
            readable(self.delays.value_at_quantile(0.99).min(self.max_delay)),
            readable(self.max_delay),
        )
    }

    /// The summary `coalesce --summary` prints.
    pub fn summary(&self) -> String {
        let (mean, p99, max) = self.delay_stats();
        let mut s = String::new();
        let _ = writeln!(s, "policy:       {}", self.policy);
        let _ = writeln!(
            s,
            "completions:  {} ({} in error)",
            self.completions, self.errors
        );
        let _ = writeln!(
            s,
            "interrupts:   {} ({} full, {} urgent-only)",
            self.interrupts(),
            self.full,
            self.urgent_only
        );
        let _ = writeln!(s, "per interrupt: {:.2} completions", self.per_interrupt());
        let _ = writeln!(
            s,
            "delay (completion to delivery): mean {mean}, p99 {p99}, max {max}"
        );
        let _ = writeln!(
            s,
            "input ended at {}; pending completions were delivered by {}",
            readable(self.input_end),
            readable(self.last_delivery.max(self.input_end))
        );
        s
    }
}

/// Replays a stream through one strategy as it is read, row by row: the
/// interrupts go to `W` as CSV (`time_ns,kind,ids`) as they are raised, the
/// counts and delays into an [`Outcome`]. Semantic errors in the stream (an
/// id completed again before it was delivered, submitted again while
/// outstanding, too many in flight) name the row's line.
pub struct Replayer<W: io::Write> {
    replay: Replay,
    origin: String,
    out: Outcome,
    /// Completed and not yet delivered.
    undelivered: HashSet<u64>,
    /// Submitted and not yet completed.
    outstanding: HashSet<u64>,
    csv: Option<W>,
    header_written: bool,
    /// The first failed write of the CSV.
    write_error: Option<io::Error>,
    /// Sees each interrupt as it is raised ([`Replayer::watch`]).
    watch: Option<Watch>,
}

/// What [`Replayer::watch`] takes: called with each interrupt as it is
/// raised, its time and what it reaped, with no CSV written and read
/// back (`coalesce --trace` counts interrupts per bucket this way).
pub type Watch = Box<dyn FnMut(&Delivery)>;

impl<W: io::Write> Replayer<W> {
    /// A replay of the strategy `spec` names; `csv`, if given, receives the
    /// interrupts (its header with the first row, so a stream refused at
    /// its own header writes nothing).
    pub fn new(spec: &PolicySpec, origin: &str, csv: Option<W>) -> Result<Self, StreamError> {
        let policy = build(spec)?;
        Ok(Replayer {
            replay: Replay::new(policy),
            origin: origin.to_string(),
            out: Outcome {
                policy: Settings::of(spec),
                csv: String::new(),
                full: 0,
                urgent_only: 0,
                completions: 0,
                errors: 0,
                // 1 ns to an hour at 3 significant figures; longer delays are clamped.
                delays: crate::time::histogram(),
                max_delay: 0,
                input_end: 0,
                last_delivery: 0,
            },
            undelivered: HashSet::default(),
            outstanding: HashSet::default(),
            csv,
            header_written: false,
            write_error: None,
            watch: None,
        })
    }

    /// Calls `watch` with each interrupt as it is raised, beside the CSV
    /// if one is written.
    pub fn watch(mut self, watch: Watch) -> Self {
        self.watch = Some(watch);
        self
    }

    /// The CSV's header, once, before its first line.
    fn write_header(&mut self) {
        if self.header_written {
            return;
        }
        self.header_written = true;
        if let Some(w) = &mut self.csv {
            if let Err(e) = w.write_all(b"time_ns,kind,ids\n") {
                self.write_error.get_or_insert(e);
            }
        }
    }

    /// Replays one row (rows come in time order, as [`Reader`] checks).
    pub fn feed(&mut self, row: &Row) -> Result<(), StreamError> {
        self.write_header();
        let bad = |problem: Problem| StreamError::Row {
            origin: self.origin.clone(),
            line: row.line,
            problem,
        };
        let went_back = |e: crate::replay::TimeWentBack| {
            bad(Problem::TimeWentBack {
                time: e.at,
                previous: e.now,
            })
        };
        let Replayer {
            replay,
            out,
            undelivered,
            outstanding,
            csv,
            write_error,
            watch,
            ..
        } = self;
        match row.event {
            Event::Submit => {
                if !outstanding.insert(row.id) {
                    return Err(bad(Problem::SubmittedAgain(row.id)));
                }
                if outstanding.len() > MAX_IN_FLIGHT {
                    return Err(bad(Problem::InFlight("outstanding")));
                }
                let cmd = Command {
                    id: row.id,
                    marks: row.marks,
                };
                replay
                    .submit(row.time, cmd, &mut |d| {
                        deliver(d, out, undelivered, csv, write_error, watch)
                    })
                    .map_err(went_back)?;
            }
            Event::Complete | Event::Error => {
                // Deliver what is due first, so a reused id is judged on
                // what the host has really received by now.
                replay
                    .advance(row.time, &mut |d| {
                        deliver(d, out, undelivered, csv, write_error, watch)
                    })
                    .map_err(went_back)?;
                if !undelivered.insert(row.id) {
                    return Err(bad(Problem::CompletedAgain(row.id)));
                }
                outstanding.remove(&row.id);
                let cqe = Completion {
                    id: row.id,
                    marks: row.marks,
                    error: row.event == Event::Error,
                };
                replay
                    .complete(row.time, cqe, &mut |d| {
                        deliver(d, out, undelivered, csv, write_error, watch)
                    })
                    .map_err(went_back)?;
                // Entries an urgent-only interrupt reaped stay behind an
                // unreaped one until the doorbell passes them.
                if replay.occupied() > MAX_IN_FLIGHT {
                    return Err(bad(Problem::InFlight("completed and not delivered")));
                }
                out.completions += 1;
                if row.event == Event::Error {
                    out.errors += 1;
                }
            }
        }
        // Strategies compute deadlines as now + delay, saturating: a
        // deadline at the end of time is one that did not fit, and would
        // deliver early with a delay cut short (a 615 ns delay reported for
        // nvme100's 100 us, issue 12).
        if replay.policy().deadline() == Some(Nanos::MAX) {
            return Err(bad(Problem::NoRoom(row.time)));
        }
        out.input_end = row.time;
        self.written()
    }

    /// The input has ended: every pending deadline fires. Returns what the
    /// strategy did and the CSV's writer (flushed), for the caller to
    /// commit.
    pub fn finish(mut self) -> Result<(Outcome, Option<W>), StreamError> {
        self.write_header();
        let Replayer {
            replay,
            out,
            undelivered,
            csv,
            write_error,
            watch,
            ..
        } = &mut self;
        replay.finish(&mut |d| deliver(d, out, undelivered, csv, write_error, watch));
        if let Some(w) = csv {
            if let Err(e) = w.flush() {
                write_error.get_or_insert(e);
            }
        }
        self.written()?;
        Ok((self.out, self.csv))
    }

    /// Flushes the CSV written so far (before a read that may wait on a
    /// live pipe).
    pub fn flush_csv(&mut self) -> Result<(), StreamError> {
        if let Some(w) = &mut self.csv {
            if let Err(e) = w.flush() {
                self.write_error.get_or_insert(e);
            }
        }
        self.written()
    }

    fn written(&mut self) -> Result<(), StreamError> {
        match self.write_error.take() {
            Some(e) => Err(StreamError::Write(e.to_string())),
            None => Ok(()),
        }
    }
}

/// One interrupt: counted, its delays recorded, a CSV line written.
fn deliver<W: io::Write>(
    d: &Delivery,
    out: &mut Outcome,
    undelivered: &mut HashSet<u64>,
    csv: &mut Option<W>,
    write_error: &mut Option<io::Error>,
    watch: &mut Option<Watch>,
) {
    if let Some(w) = watch {
        w(d);
    }
    match d.kind {
        Interrupt::Full => out.full += 1,
        Interrupt::UrgentOnly => out.urgent_only += 1,
    }
    out.last_delivery = d.time;
    for r in d.reaped {
        undelivered.remove(&r.id);
        let delay = d.time - r.posted_at;
        out.delays.saturating_record(delay);
        out.max_delay = out.max_delay.max(delay);
    }
    if let (Some(w), None) = (csv.as_mut(), write_error.as_ref()) {
        if let Err(e) = write_line(w, d) {
            *write_error = Some(e);
        }
    }
}

/// `time_ns,kind,ids`, the ids space-separated.
fn write_line(w: &mut impl io::Write, d: &Delivery) -> io::Result<()> {
    write!(w, "{},{},", d.time, d.kind.as_str())?;
    for (i, r) in d.reaped.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        write!(w, "{sep}{}", r.id)?;
    }
    w.write_all(b"\n")
}

/// Replays `rows` held in memory through the strategy `spec` names, the
/// CSV into [`Outcome::csv`] if `want_csv` (small streams and tests;
/// `coalesce` uses a [`Replayer`] as it reads).
pub fn replay(
    rows: &[Row],
    spec: &PolicySpec,
    origin: &str,
    want_csv: bool,
) -> Result<Outcome, StreamError> {
    let mut r = Replayer::new(spec, origin, want_csv.then(Vec::new))?;
    for row in rows {
        r.feed(row)?;
    }
    let (mut out, csv) = r.finish()?;
    if let Some(csv) = csv {
        out.csv = String::from_utf8(csv).expect("the CSV is ASCII");
    }
    Ok(out)
}

/// Several strategies on the same stream, a line each (`coalesce --policy all`).
pub fn comparison_table(outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<10} {:>10} {:>10} {:>8} {:>9} {:>10} {:>10} {:>10}",
        "policy", "interrupts", "full", "urgent", "per-irq", "mean", "p99", "max"
    );
    for o in outcomes {
        let (mean, p99, max) = o.delay_stats();
        let _ = writeln!(
            s,
            "{:<10} {:>10} {:>10} {:>8} {:>9.2} {:>10} {:>10} {:>10}",
            o.policy.name,
            o.interrupts(),
            o.full,
            o.urgent_only,
            o.per_interrupt(),
            mean,
            p99,
            max
        );
    }
    if let Some(o) = outcomes.first() {
        let _ = writeln!(
            s,
            "{} completions ({} in error); delays from completion to delivery; defaults of each strategy (see `cinterrupts policies`)",
            o.completions, o.errors
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_comments_and_blank_lines() {
        let text = "# hand-made\ntime_ns,id,flags,event\n0,1,-,submit\n\n10, 1, U, complete\n12,2,UB,error\n";
        let rows = parse(text, "s.csv").unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[1],
            Row {
                line: 5,
                time: 10,
                id: 1,
                marks: Marks::URGENT,
                event: Event::Complete
            }
        );
        assert_eq!(rows[2].marks, Marks::BOTH);
        assert_eq!(rows[2].event, Event::Error);
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let cases = [
            ("time,id\n", "s.csv:1: header must be 'time_ns,id,flags,event', found 'time,id'"),
            ("", "s.csv:1: empty stream: expected the header 'time_ns,id,flags,event'"),
            ("time_ns,id,flags,event\n5,1,X,complete\n", "s.csv:2: column 'flags': 'X' is not one of -, U, B, UB"),
            ("time_ns,id,flags,event\n5,1,-\n", "s.csv:2: expected 4 columns (time_ns,id,flags,event), found 3"),
            ("time_ns,id,flags,event\n-5,1,-,complete\n", "s.csv:2: column 'time_ns': '-5' is not a whole number of nanoseconds"),
            ("time_ns,id,flags,event\n5,x,-,complete\n", "s.csv:2: column 'id': 'x' is not a non-negative integer"),
            ("time_ns,id,flags,event\n5,1,-,done\n", "s.csv:2: column 'event': 'done' is not one of complete, error, submit"),
            (
                "time_ns,id,flags,event\n5,1,-,complete\n4,2,-,complete\n",
                "s.csv:3: column 'time_ns': 4 is before the previous row's 5; rows must be in time order",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text, "s.csv").unwrap_err().to_string(), want);
        }
    }

    #[test]
    fn replay_counts_delays_and_refuses_reused_ids() {
        let text = "time_ns,id,flags,event\n0,1,-,complete\n1000,2,U,complete\n";
        let rows = parse(text, "s.csv").unwrap();
        let o = replay(&rows, &PolicySpec::named("cint"), "s.csv", true).unwrap();
        assert_eq!(o.csv, "time_ns,kind,ids\n1000,urgent,2\n7000,full,1\n");
        assert_eq!((o.full, o.urgent_only, o.completions), (1, 1, 2));
        assert_eq!(o.max_delay, 7000);
        assert!(o.summary().contains("policy:       cint delta=6us thr=32"));
        let again = parse(
            "time_ns,id,flags,event\n0,1,-,complete\n1,1,-,complete\n",
            "d.csv",
        )
        .unwrap();
        let e = replay(&again, &PolicySpec::named("cint"), "d.csv", false).err();
        assert_eq!(
            e.unwrap().to_string(),
            "d.csv:3: id 1 completed again before it was delivered"
        );
    }
}

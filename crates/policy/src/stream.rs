//! A completion stream as CSV, `time_ns,id,flags,event` (flags `-`, `U`,
//! `B`, `UB`; event `complete`, `error` or `submit`; blank lines and lines
//! starting with `#` skipped), replayed through a strategy with
//! [`Replay`]: the interrupts it raises, as CSV or as a summary of counts and
//! delays. This is `cinterrupts coalesce`.

use std::collections::HashSet;
use std::fmt::Write as _;

use hdrhistogram::Histogram;
use thiserror::Error;

use crate::catalogue::{build, Settings, SpecError};
use crate::replay::{Delivery, Replay};
use crate::time::readable;
use crate::{Command, Completion, Interrupt, Marks, Nanos, PolicySpec};

pub const HEADER: &str = "time_ns,id,flags,event";

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

/// What is wrong with one row (or the stream as a whole).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Problem {
    #[error("header must be '{HEADER}', found '{0}'")]
    Header(String),
    #[error("empty stream: expected the header '{HEADER}'")]
    Empty,
    #[error("expected 4 columns ({HEADER}), found {0}")]
    Columns(usize),
    #[error("column 'time_ns': '{0}' is not a whole number of nanoseconds")]
    Time(String),
    #[error("column 'time_ns': {time} is before the previous row's {previous}; rows must be in time order")]
    TimeWentBack { time: Nanos, previous: Nanos },
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
    #[error(transparent)]
    Policy(#[from] SpecError),
}

/// Parses a whole stream, checking every row before anything runs.
/// `origin` names the stream in errors (a file, `<stdin>`).
pub fn parse(text: &str, origin: &str) -> Result<Vec<Row>, StreamError> {
    let err = |line: usize, problem: Problem| StreamError::Row {
        origin: origin.to_string(),
        line,
        problem,
    };
    let mut rows = Vec::new();
    let mut header_seen = false;
    let mut last_time = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = trimmed.split(',').map(str::trim).collect();
        if !header_seen {
            if fields.join(",") != HEADER {
                return Err(err(line, Problem::Header(trimmed.to_string())));
            }
            header_seen = true;
            continue;
        }
        if fields.len() != 4 {
            return Err(err(line, Problem::Columns(fields.len())));
        }
        let time: Nanos = fields[0]
            .parse()
            .map_err(|_| err(line, Problem::Time(fields[0].to_string())))?;
        if time < last_time {
            let problem = Problem::TimeWentBack {
                time,
                previous: last_time,
            };
            return Err(err(line, problem));
        }
        last_time = time;
        let id: u64 = fields[1]
            .parse()
            .map_err(|_| err(line, Problem::Id(fields[1].to_string())))?;
        let marks = Marks::parse(fields[2])
            .ok_or_else(|| err(line, Problem::Flags(fields[2].to_string())))?;
        let event = match fields[3] {
            "complete" => Event::Complete,
            "error" => Event::Error,
            "submit" => Event::Submit,
            other => return Err(err(line, Problem::Event(other.to_string()))),
        };
        rows.push(Row {
            line,
            time,
            id,
            marks,
            event,
        });
    }
    if !header_seen {
        return Err(err(1, Problem::Empty));
    }
    Ok(rows)
}

/// What one strategy did on a stream.
pub struct Outcome {
    pub policy: Settings,
    /// The interrupts as CSV, `time_ns,kind,ids`, if asked for.
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

/// Replays `rows` through the strategy `spec` names. Semantic errors in the
/// stream (an id completed again before it was delivered, submitted again
/// while outstanding) name the row's line.
pub fn replay(
    rows: &[Row],
    spec: &PolicySpec,
    origin: &str,
    want_csv: bool,
) -> Result<Outcome, StreamError> {
    let mut replay = Replay::new(build(spec)?);
    let mut out = Outcome {
        policy: Settings::of(spec),
        csv: String::new(),
        full: 0,
        urgent_only: 0,
        completions: 0,
        errors: 0,
        // 1 ns to an hour at 3 significant figures; longer delays are clamped.
        delays: crate::time::histogram(),
        max_delay: 0,
        input_end: rows.last().map_or(0, |r| r.time),
        last_delivery: 0,
    };
    if want_csv {
        out.csv.push_str("time_ns,kind,ids\n");
    }
    let mut undelivered: HashSet<u64> = HashSet::new();
    let mut outstanding: HashSet<u64> = HashSet::new();
    let mut sink = |d: &Delivery, undelivered: &mut HashSet<u64>| {
        match d.kind {
            Interrupt::Full => out.full += 1,
            Interrupt::UrgentOnly => out.urgent_only += 1,
        }
        out.last_delivery = d.time;
        if want_csv {
            let _ = write!(out.csv, "{},{},", d.time, d.kind.as_str());
        }
        for (i, r) in d.reaped.iter().enumerate() {
            undelivered.remove(&r.id);
            let delay = d.time - r.posted_at;
            out.delays.saturating_record(delay);
            out.max_delay = out.max_delay.max(delay);
            if want_csv {
                let sep = if i == 0 { "" } else { " " };
                let _ = write!(out.csv, "{sep}{}", r.id);
            }
        }
        if want_csv {
            out.csv.push('\n');
        }
    };
    for row in rows {
        let bad = |problem: Problem| StreamError::Row {
            origin: origin.to_string(),
            line: row.line,
            problem,
        };
        let went_back = |e: crate::replay::TimeWentBack| {
            bad(Problem::TimeWentBack {
                time: e.at,
                previous: e.now,
            })
        };
        match row.event {
            Event::Submit => {
                if !outstanding.insert(row.id) {
                    return Err(bad(Problem::SubmittedAgain(row.id)));
                }
                let cmd = Command {
                    id: row.id,
                    marks: row.marks,
                };
                replay
                    .submit(row.time, cmd, &mut |d| sink(d, &mut undelivered))
                    .map_err(went_back)?;
            }
            Event::Complete | Event::Error => {
                // Deliver what is due first, so a reused id is judged on
                // what the host has really received by now.
                replay
                    .advance(row.time, &mut |d| sink(d, &mut undelivered))
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
                    .complete(row.time, cqe, &mut |d| sink(d, &mut undelivered))
                    .map_err(went_back)?;
            }
        }
    }
    replay.finish(&mut |d| sink(d, &mut undelivered));
    out.completions = rows.iter().filter(|r| r.event != Event::Submit).count() as u64;
    out.errors = rows.iter().filter(|r| r.event == Event::Error).count() as u64;
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

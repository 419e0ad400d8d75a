//! The completion-stream CSV that `cinterrupts coalesce` reads:
//! `time_ns,id,flags,event`, flags `-`, `U`, `B`, `UB`, event `complete`,
//! `error` or `submit`. Blank lines and lines starting with `#` are skipped.

use std::fmt;

use policy::{Marks, Nanos};

pub const HEADER: &str = "time_ns,id,flags,event";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Submit,
    Complete,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub line: usize,
    pub time: Nanos,
    pub id: u64,
    pub marks: Marks,
    pub event: Event,
}

/// One bad line: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    pub origin: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.origin, self.line, self.message)
    }
}

impl std::error::Error for StreamError {}

/// Parses a whole stream, checking every row before anything runs.
pub fn parse(text: &str, origin: &str) -> Result<Vec<Row>, StreamError> {
    let err = |line: usize, message: String| StreamError {
        origin: origin.to_string(),
        line,
        message,
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
                return Err(err(
                    line,
                    format!("header must be '{HEADER}', found '{trimmed}'"),
                ));
            }
            header_seen = true;
            continue;
        }
        if fields.len() != 4 {
            return Err(err(
                line,
                format!("expected 4 columns ({HEADER}), found {}", fields.len()),
            ));
        }
        let time: Nanos = fields[0].parse().map_err(|_| {
            err(
                line,
                format!(
                    "column 'time_ns': '{}' is not a whole number of nanoseconds",
                    fields[0]
                ),
            )
        })?;
        if time < last_time {
            return Err(err(
                line,
                format!("column 'time_ns': {time} is before the previous row's {last_time}; rows must be in time order"),
            ));
        }
        last_time = time;
        let id: u64 = fields[1].parse().map_err(|_| {
            err(
                line,
                format!("column 'id': '{}' is not a non-negative integer", fields[1]),
            )
        })?;
        let marks = Marks::parse(fields[2]).ok_or_else(|| {
            err(
                line,
                format!("column 'flags': '{}' is not one of -, U, B, UB", fields[2]),
            )
        })?;
        let event = match fields[3] {
            "complete" => Event::Complete,
            "error" => Event::Error,
            "submit" => Event::Submit,
            other => {
                return Err(err(
                    line,
                    format!("column 'event': '{other}' is not one of complete, error, submit"),
                ))
            }
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
        return Err(err(
            1,
            format!("empty stream: expected the header '{HEADER}'"),
        ));
    }
    Ok(rows)
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
}

//! bcc's `biosnoop` output.
//!
//! Layout (iovisor/bcc `tools/biosnoop.py`, its header and `print_event`):
//! a header line `TIME(s) COMM PID DISK T SECTOR BYTES`, then `P` with
//! `-P`, `QUE(ms)` with `-Q`, and `LAT(ms)`; then one completed request a
//! line, printed `"%-11.6f %-14.14s %-7s %-9s %-1s %-10s %-7s"` and the
//! optional columns, `LAT(ms)` as `%7.2f`:
//!
//! - `TIME(s)`: when the request completed, in seconds from the first
//!   event printed;
//! - `COMM`, `PID`: the process that issued it (its command name cut to 14
//!   characters; it may hold spaces, or be empty);
//! - `DISK`: the disk's name; `T`: `R` or `W`;
//! - `SECTOR`: its start, in 512-byte sectors (older versions print `-1`
//!   when the issuer was not seen: read as offset 0);
//! - `BYTES`: its size; `QUE(ms)`: from insertion to issue;
//! - `LAT(ms)`: from issue to the device's completion.
//!
//! Lines before the header that start with `Tracing` (older versions
//! announce themselves) and `Possibly lost N samples` notices are skipped.
//!
//! Times: biosnoop prints completions. `complete_ns` is `TIME(s)`;
//! `issue_ns` is `TIME(s)` minus `LAT(ms)`, at 0 when that would fall
//! before the first completion (the first requests were issued before the
//! clock's origin). Resolution: a microsecond for `TIME(s)`, 10 µs for
//! `LAT(ms)`. Lines come in completion order.

use std::collections::VecDeque;

use crate::num::{decimal_ns, quoted, uint, uint32, Bad};
use crate::text::LineFormat;
use crate::Request;

/// The columns after `COMM`, as the header names them.
#[derive(Default)]
pub(crate) struct Biosnoop {
    columns: Option<Vec<String>>,
}

const REQUIRED: [&str; 6] = ["PID", "DISK", "T", "SECTOR", "BYTES", "LAT(ms)"];

impl LineFormat for Biosnoop {
    fn line(&mut self, text: &str, out: &mut VecDeque<Request>) -> Result<(), Bad> {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with("Possibly lost") {
            return Ok(());
        }
        let Some(columns) = &self.columns else {
            if trimmed.starts_with("Tracing") {
                return Ok(());
            }
            let names: Vec<&str> = trimmed.split_whitespace().collect();
            if names.len() < 2 || names[0] != "TIME(s)" || names[1] != "COMM" {
                return Err(Bad::new(
                    "header",
                    format!(
                        "expected biosnoop's 'TIME(s) COMM PID DISK T SECTOR BYTES ... LAT(ms)', found {}",
                        quoted(trimmed)
                    ),
                ));
            }
            let rest: Vec<String> = names[2..].iter().map(|s| s.to_string()).collect();
            for want in REQUIRED {
                if !rest.iter().any(|c| c == want) {
                    return Err(Bad::new("header", format!("no column '{want}'")));
                }
            }
            self.columns = Some(rest);
            return Ok(());
        };
        let tokens: Vec<&str> = trimmed.split_whitespace().collect();
        let k = columns.len();
        // TIME(s), COMM (zero or more words), then k columns.
        if tokens.len() < k + 1 {
            return Err(Bad::new(
                "line",
                format!("expected {} columns, found {}", k + 2, tokens.len()),
            ));
        }
        let complete = decimal_ns(tokens[0], 1_000_000_000, "TIME(s)")?;
        let comm = tokens[1..tokens.len() - k].join(" ");
        let values = &tokens[tokens.len() - k..];
        let col = |name: &str| {
            columns
                .iter()
                .position(|c| c == name)
                .map(|i| values[i])
                .expect("checked in the header")
        };
        let pid = uint32(col("PID"), "PID")?;
        let disk = col("DISK");
        let write = match col("T") {
            "R" => false,
            "W" => true,
            t => return Err(Bad::new("T", format!("{} is not R or W", quoted(t)))),
        };
        let sector = match col("SECTOR") {
            "-1" => 0,
            s => uint(s, "SECTOR")?,
        };
        let bytes = uint32(col("BYTES"), "BYTES")?;
        if columns.iter().any(|c| c == "QUE(ms)") {
            decimal_ns(col("QUE(ms)"), 1_000_000, "QUE(ms)")?;
        }
        let latency = decimal_ns(col("LAT(ms)"), 1_000_000, "LAT(ms)")?;
        out.push_back(Request {
            issue_ns: complete.saturating_sub(latency),
            complete_ns: Some(complete),
            offset: sector.checked_mul(512).ok_or_else(|| {
                Bad::new("SECTOR", format!("{sector} sectors is past 2^64 bytes"))
            })?,
            bytes,
            write,
            discard: false,
            sync: false,
            flush: false,
            pid: Some(pid),
            comm: (!comm.is_empty()).then_some(comm),
            device: Some(disk.to_string()),
            cpu: None,
            ..Default::default()
        });
        Ok(())
    }

    fn end(&mut self, _out: &mut VecDeque<Request>) -> Result<(), Bad> {
        if self.columns.is_none() {
            return Err(Bad::new(
                "header",
                "no biosnoop header ('TIME(s) COMM PID DISK T SECTOR BYTES ... LAT(ms)')",
            ));
        }
        Ok(())
    }
}

//! Google's Thesios I/O traces (Phothilimthana et al., "Thesios:
//! Synthesizing Accurate Counterfactual I/O Traces from I/O Samples",
//! ASPLOS '24), as Google releases them and as cacheMon's cache_dataset
//! describes them ("Google Synthetic I/O Traces").
//!
//! Layout (google-research-datasets/thesios, `README.md` at commit
//! 7257e0cc245b46ee780fddd5cce48ea942b43bb4, "Data Description";
//! cacheMon/cache_dataset `README.md` at commit
//! e975d18bae2469faf48d2fb62acdf65073887f41, "Trace Format"): CSV, one
//! request a row, sharded files whose first line names the columns. The
//! columns are found by those names, not by position (the two
//! descriptions list them in different orders, and cache_dataset's adds
//! `latency`); these are read:
//!
//! - `filename`: the local file (hashed), the request's `device`;
//! - `file_offset`: the offset in that file, in bytes;
//! - `op_type`: `READ` or `WRITE`;
//! - `request_io_size_bytes`: the request's size;
//! - `start_time`: its arrival at the server, Unix seconds (a decimal);
//! - `service_class`: `LATENCY_SENSITIVE`, `THROUGHPUT_ORIENTED` or
//!   `OTHER` (Google's README spells the last `ORTHER`; both are read;
//!   cache_dataset writes them latency-sensitive, throughput-oriented,
//!   other, read too), kept as [`crate::Request::class`];
//! - `from_flash_cache` (0 or 1), `cache_hit` (1 hit, 0 miss, -1 a write,
//!   "n/a"), `latency` and `simulated_latency` (arrival to response at the
//!   server; the second adjusted by Thesios' simulator for cache-miss
//!   reads) and `application`, kept in [`ThesiosFields`].
//!   `simulated_latency` is in seconds (Google's README); `latency`, which
//!   only cache_dataset lists and without a unit, is read in seconds too
//!   (assumed: the same quantity as `simulated_latency`, measured).
//!
//! The other columns (`c_time`, `io_zone`, `redundancy_type`, the disk
//! sizes and times) are not read. A row repeating the header (shards
//! concatenated with `cat`) is skipped.
//!
//! Times: `issue_ns` is `start_time` in nanoseconds since the Unix epoch;
//! `complete_ns` is the arrival plus `simulated_latency`, else plus
//! `latency`, else `None`: Google's README names `simulated_latency` the
//! latency of the synthesized trace.

use std::collections::VecDeque;

use crate::header::Columns;
use crate::num::{quoted, seconds_ns, uint, uint32, Bad};
use crate::text::LineFormat;
use crate::Request;

/// A request's priority as Thesios labels it (`service_class`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServiceClass {
    LatencySensitive,
    ThroughputOriented,
    Other,
}

impl ServiceClass {
    /// The class `text` names: the release's `LATENCY_SENSITIVE` or
    /// cache_dataset's `latency-sensitive`, in any case.
    pub fn parse(text: &str) -> Option<ServiceClass> {
        let t = text.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        Some(match t.as_str() {
            "latency_sensitive" => ServiceClass::LatencySensitive,
            "throughput_oriented" => ServiceClass::ThroughputOriented,
            "other" | "orther" => ServiceClass::Other,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ServiceClass::LatencySensitive => "latency-sensitive",
            ServiceClass::ThroughputOriented => "throughput-oriented",
            ServiceClass::Other => "other",
        }
    }
}

/// Thesios' own fields of one request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThesiosFields {
    /// The application owning the file (hashed, except spanner, bigtable
    /// and blobstore).
    pub application: Option<String>,
    /// Whether the request came from the flash cache.
    pub from_flash_cache: Option<bool>,
    /// Whether the server's buffer cache served it; `None` for a write
    /// (`-1`, "n/a").
    pub cache_hit: Option<bool>,
    /// `latency`: arrival to response at the server, as measured.
    pub latency_ns: Option<u64>,
    /// `simulated_latency`: the same, as Thesios' reorganizer adjusted it.
    pub simulated_latency_ns: Option<u64>,
}

/// The names of the columns read, in the order [`Columns`] is asked.
const WANTED: [&str; 11] = [
    "filename",
    "file_offset",
    "op_type",
    "request_io_size_bytes",
    "start_time",
    "service_class",
    "from_flash_cache",
    "cache_hit",
    "latency",
    "simulated_latency",
    "application",
];
const REQUIRED: [&str; 5] = [
    "filename",
    "file_offset",
    "op_type",
    "request_io_size_bytes",
    "start_time",
];

/// Whether a header line is Thesios': it names `service_class` and every
/// required column.
pub(crate) fn is_header(line: &str) -> bool {
    let names: Vec<&str> = line.split(',').map(str::trim).collect();
    ["service_class"]
        .iter()
        .chain(&REQUIRED)
        .all(|w| names.iter().any(|n| n.eq_ignore_ascii_case(w)))
}

#[derive(Default)]
pub(crate) struct Thesios {
    columns: Option<Columns>,
    header: String,
}

fn flag(s: &str, field: &'static str) -> Result<bool, Bad> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(Bad::new(field, format!("{} is not 0 or 1", quoted(s)))),
    }
}

impl LineFormat for Thesios {
    fn line(&mut self, text: &str, out: &mut VecDeque<Request>) -> Result<(), Bad> {
        let text = text.trim();
        if text.is_empty() || text == self.header {
            return Ok(());
        }
        let row: Vec<&str> = text.split(',').map(str::trim).collect();
        let Some(c) = &self.columns else {
            let names_any = row
                .iter()
                .any(|n| WANTED.iter().any(|w| n.eq_ignore_ascii_case(w)));
            if !names_any {
                return Err(Bad::new(
                    "header",
                    format!(
                        "the first line must name the columns ({},service_class,...); found {}",
                        REQUIRED.join(","),
                        quoted(text)
                    ),
                ));
            }
            self.columns = Some(Columns::new(&row, &WANTED, &REQUIRED)?);
            self.header = text.to_string();
            return Ok(());
        };
        c.check_width(&row)?;
        let issue = seconds_ns(c.need(&row, 4, "start_time")?, "start_time")?;
        let write = match c.need(&row, 2, "op_type")? {
            t if t.eq_ignore_ascii_case("read") => false,
            t if t.eq_ignore_ascii_case("write") => true,
            t => {
                return Err(Bad::new(
                    "op_type",
                    format!("{} is not READ or WRITE", quoted(t)),
                ))
            }
        };
        let class = c
            .get(&row, 5)
            .map(|t| {
                ServiceClass::parse(t).ok_or_else(|| {
                    Bad::new(
                        "service_class",
                        format!(
                            "{} is not LATENCY_SENSITIVE, THROUGHPUT_ORIENTED or OTHER",
                            quoted(t)
                        ),
                    )
                })
            })
            .transpose()?;
        let cache_hit = match c.get(&row, 7) {
            None | Some("-1") => None,
            Some(t) if t.eq_ignore_ascii_case("n/a") => None,
            Some(t) => Some(flag(t, "cache_hit").map_err(|_| {
                Bad::new(
                    "cache_hit",
                    format!("{} is not 1 (hit), 0 (miss) or -1 (a write)", quoted(t)),
                )
            })?),
        };
        let seconds =
            |k: usize, name: &'static str| c.get(&row, k).map(|t| seconds_ns(t, name)).transpose();
        let fields = ThesiosFields {
            application: c.get(&row, 10).map(str::to_string),
            from_flash_cache: c
                .get(&row, 6)
                .map(|t| flag(t, "from_flash_cache"))
                .transpose()?,
            cache_hit,
            latency_ns: seconds(8, "latency")?,
            simulated_latency_ns: seconds(9, "simulated_latency")?,
        };
        let complete =
            match fields.simulated_latency_ns.or(fields.latency_ns) {
                Some(l) => Some(issue.checked_add(l).ok_or_else(|| {
                    Bad::new("simulated_latency", "the completion is past 2^64 ns")
                })?),
                None => None,
            };
        out.push_back(Request {
            issue_ns: issue,
            complete_ns: complete,
            offset: uint(c.need(&row, 1, "file_offset")?, "file_offset")?,
            bytes: uint32(
                c.need(&row, 3, "request_io_size_bytes")?,
                "request_io_size_bytes",
            )?,
            write,
            device: Some(c.need(&row, 0, "filename")?.to_string()),
            class,
            thesios: Some(Box::new(fields)),
            ..Request::default()
        });
        Ok(())
    }
}

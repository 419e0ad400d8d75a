//! Block I/O traces read as one stream of [`Request`]s, whatever format
//! they come in: blkparse's default text output, blktrace's binary per-CPU
//! files, fio's iolog (versions 2 and 3), bcc's biosnoop output, the MSR
//! Cambridge (SNIA IOTTA) CSV, the Alibaba block-trace CSV, the Tencent CBS
//! CSV and DiskSim's ASCII traces. Each format's layout, and the source it
//! is taken from, is in its module's documentation ([`Format`] lists them).
//!
//! What it is for: turning the traces people already have into requests
//! with issue and completion times, sizes, directions and the block layer's
//! flags, for `coalesce`, the simulator and a device fit to use.
//! What it is not: no I/O policy, no marks, no replay. It parses, and
//! reshapes a stream as a replay asks ([`transform`]: fio's and
//! libCacheSim's replay transforms).
//!
//! Streaming: nothing holds the trace. A reader keeps one line (at most
//! [`MAX_LINE`] bytes) and, for the formats that pair an issue event with
//! its completion (blkparse, blktrace), the requests in flight (at most
//! [`MAX_IN_FLIGHT`]); a trace of any length is read in bounded memory.
//!
//! Errors: a bad row is refused with one error naming the file, the line
//! and the field (`trace.csv:12: offset: '4k' is not a whole number`); in
//! the binary format, the byte offset of the record. Nothing after a bad
//! row is read.
//!
//! ```
//! use traces::{read, Format};
//! let csv = "0,R,126703644672,4096,1577808000000626\n";
//! let reqs: Vec<_> = read(csv.as_bytes(), "io_traces.csv", Format::Alibaba)
//!     .collect::<Result<_, _>>()
//!     .unwrap();
//! assert_eq!(reqs[0].bytes, 4096);
//! assert_eq!(reqs[0].issue_ns, 1_577_808_000_000_626_000);
//! assert!(!reqs[0].write);
//! ```

pub mod biosnoop;
pub mod blkparse;
pub mod blktrace;
pub mod csv;
mod detect;
pub mod disksim;
mod error;
pub mod fio;
mod num;
mod pairing;
mod text;
pub mod transform;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

pub use error::TraceError;
pub use pairing::MAX_IN_FLIGHT;
pub use text::MAX_LINE;

/// One block I/O request as a trace records it.
///
/// Times are `u64` nanoseconds from the origin the format gives (see each
/// format's module: the trace's start for blkparse, blktrace, fio, biosnoop
/// and DiskSim; the Unix epoch for Alibaba and Tencent; the Windows epoch,
/// 1601-01-01, for MSR Cambridge).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// When the request was issued: dispatched to the driver where the
    /// format records it (blktrace's `D`), else queued (`Q`) or arrived.
    /// For formats with only a completion time and a latency (biosnoop),
    /// the completion minus the latency.
    pub issue_ns: u64,
    /// When the device completed it, if the format records it (blkparse,
    /// blktrace, biosnoop, MSR Cambridge); `None` for formats that carry
    /// only the arrival (fio iolog, Alibaba, Tencent, DiskSim) and for a
    /// request the trace saw issued but never completed.
    pub complete_ns: Option<u64>,
    /// Where the request starts on its device or file, in bytes.
    pub offset: u64,
    /// How many bytes it moves (0 for a flush without data).
    pub bytes: u32,
    /// A write (RWBS `W`, fio `write`, type Write / `W` / 1 / 0 as each
    /// format spells it); false for reads, discards and flushes.
    pub write: bool,
    /// A discard or trim (RWBS `D`, fio `trim`).
    pub discard: bool,
    /// Synchronous: the submitter waits for it (RWBS `S`, blktrace's
    /// `BLK_TC_SYNC`). Only the Linux block-layer formats carry it.
    pub sync: bool,
    /// Asks for durability: a cache flush before it or forced unit access
    /// after it (RWBS `F` in either place, blktrace's `BLK_TC_FLUSH` or
    /// `BLK_TC_FUA`), or fio's `sync` / `datasync`.
    pub flush: bool,
    /// The process that submitted it, if recorded.
    pub pid: Option<u32>,
    /// That process's command name, if recorded.
    pub comm: Option<String>,
    /// The device, volume or file it went to, as the format names it
    /// (`8,0`, `nvme0n1`, `src1/0`, a volume id, a file name).
    pub device: Option<String>,
    /// The CPU that dispatched it to the driver (blktrace's `D`, else its
    /// `Q`), where the format records one (blkparse, blktrace). blk-mq
    /// runs a hardware queue only on a CPU of that queue's mask
    /// (block/blk-mq.c, `blk_mq_run_hw_queue`: otherwise it defers to
    /// `blk_mq_hctx_next_cpu`), so this CPU names the queue it went to.
    pub cpu: Option<u32>,
}

/// The formats read, each one's layout cited in its module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// blkparse's default text output ([`blkparse`]).
    Blkparse,
    /// blktrace's binary per-CPU files, `DEV.blktrace.N` ([`blktrace`]).
    Blktrace,
    /// fio's iolog version 2 ([`fio`]).
    FioV2,
    /// fio's iolog version 3 ([`fio`]).
    FioV3,
    /// bcc's `biosnoop` output ([`biosnoop`]).
    Biosnoop,
    /// MSR Cambridge / SNIA IOTTA CSV ([`csv::msr`]).
    Msr,
    /// Alibaba block-trace CSV ([`csv::alibaba`]).
    Alibaba,
    /// Tencent CBS CSV ([`csv::tencent`]).
    Tencent,
    /// DiskSim ASCII ([`disksim`]).
    Disksim,
}

impl Format {
    pub const ALL: [Format; 9] = [
        Format::Blkparse,
        Format::Blktrace,
        Format::FioV2,
        Format::FioV3,
        Format::Biosnoop,
        Format::Msr,
        Format::Alibaba,
        Format::Tencent,
        Format::Disksim,
    ];

    /// The name a user gives (`--format`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Blkparse => "blkparse",
            Format::Blktrace => "blktrace",
            Format::FioV2 => "fio-v2",
            Format::FioV3 => "fio-v3",
            Format::Biosnoop => "biosnoop",
            Format::Msr => "msr",
            Format::Alibaba => "alibaba",
            Format::Tencent => "tencent",
            Format::Disksim => "disksim",
        }
    }

    /// The format called `name` (as [`Format::name`] spells it).
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The format a trace's first bytes look like (its first few KiB:
    /// the binary magic, a header, or the shape of the first rows), or
    /// `None` when they match none or several equally.
    pub fn detect(head: &[u8]) -> Option<Format> {
        detect::detect(head)
    }

    pub fn is_binary(self) -> bool {
        self == Format::Blktrace
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The requests of one trace, read as they are asked for. After an error,
/// nothing more.
pub struct Requests {
    inner: Box<dyn Iterator<Item = Result<Request, TraceError>> + Send>,
    done: bool,
}

impl Requests {
    fn new(inner: impl Iterator<Item = Result<Request, TraceError>> + Send + 'static) -> Self {
        Requests {
            inner: Box::new(inner),
            done: false,
        }
    }
}

impl Iterator for Requests {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.inner.next();
        if !matches!(next, Some(Ok(_))) {
            self.done = true;
        }
        next
    }
}

/// Reads `input` as `format`; `origin` names it in errors. For blktrace,
/// `input` is one per-CPU file (or several concatenated); [`open`] merges
/// a trace's per-CPU files.
pub fn read<R: BufRead + Send + 'static>(input: R, origin: &str, format: Format) -> Requests {
    match format {
        Format::Blkparse => Requests::new(text::Lines::new(
            input,
            origin,
            blkparse::Blkparse::default(),
        )),
        Format::Blktrace => Requests::new(blktrace::Reader::new(vec![(
            Box::new(input) as Box<dyn Read + Send>,
            origin.to_string(),
        )])),
        Format::FioV2 => Requests::new(text::Lines::new(input, origin, fio::Iolog::v2())),
        Format::FioV3 => Requests::new(text::Lines::new(input, origin, fio::Iolog::v3())),
        Format::Biosnoop => Requests::new(text::Lines::new(
            input,
            origin,
            biosnoop::Biosnoop::default(),
        )),
        Format::Msr => Requests::new(text::Lines::new(input, origin, csv::Csv::msr())),
        Format::Alibaba => Requests::new(text::Lines::new(input, origin, csv::Csv::alibaba())),
        Format::Tencent => Requests::new(text::Lines::new(input, origin, csv::Csv::tencent())),
        Format::Disksim => Requests::new(text::Lines::new(input, origin, disksim::Disksim)),
    }
}

/// How many bytes [`open`] reads to detect a format.
pub const DETECT_BYTES: usize = 8192;

/// Opens the trace at `path` as `format`, or as the format its first bytes
/// show ([`Format::detect`]) when `None`. A blktrace trace is named by any
/// of its per-CPU files (`sda.blktrace.0`) or by their common prefix
/// (`sda`); all of `PREFIX.blktrace.N` are read and merged in time order,
/// as blkparse does.
pub fn open(path: &Path, format: Option<Format>) -> Result<Requests, TraceError> {
    let shown = path.display().to_string();
    let cpu_files = blktrace::cpu_files(path);
    let format = match format {
        Some(f) => f,
        None => {
            let first = cpu_files
                .as_ref()
                .and_then(|files| files.first().cloned())
                .unwrap_or_else(|| path.to_path_buf());
            let mut head = Vec::with_capacity(DETECT_BYTES);
            File::open(&first)
                .and_then(|f| f.take(DETECT_BYTES as u64).read_to_end(&mut head))
                .map_err(|e| TraceError::Open {
                    path: first.display().to_string(),
                    reason: e.to_string(),
                })?;
            Format::detect(&head).ok_or_else(|| TraceError::Format {
                origin: shown.clone(),
                why: format!(
                    "cannot tell the trace's format from its first bytes; name it (one of: {})",
                    Format::ALL.map(Format::name).join(", ")
                ),
            })?
        }
    };
    if format == Format::Blktrace {
        let files = cpu_files.unwrap_or_else(|| vec![path.to_path_buf()]);
        let mut inputs = Vec::new();
        for p in files {
            let f = File::open(&p).map_err(|e| TraceError::Open {
                path: p.display().to_string(),
                reason: e.to_string(),
            })?;
            inputs.push((
                Box::new(BufReader::new(f)) as Box<dyn Read + Send>,
                p.display().to_string(),
            ));
        }
        return Ok(Requests::new(blktrace::Reader::new(inputs)));
    }
    let f = File::open(path).map_err(|e| TraceError::Open {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    Ok(read(BufReader::new(f), &shown, format))
}

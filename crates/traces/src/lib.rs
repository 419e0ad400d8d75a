//! Block I/O traces read as one stream of [`Request`]s, whatever format
//! they come in: blkparse's default text output, blktrace's binary per-CPU
//! files, fio's iolog (versions 2 and 3), bcc's biosnoop output, the MSR
//! Cambridge (SNIA IOTTA) CSV, the Alibaba block-trace CSV, the Tencent CBS
//! CSV, DiskSim's ASCII traces, Google's Thesios CSV, Meta's Tectonic
//! traces (Baleen's and cache_dataset's), CloudPhysics' vscsi binary
//! (versions 1 and 2) and libCacheSim's oracleGeneral and lcs binaries.
//! Each format's layout, and the source it is taken from, is in its
//! module's documentation ([`Format`] lists them).
//!
//! Input ([`open`]): a file, a pipe, `/dev/stdin` or `-` (standard
//! input), each opened once and never seeked; zstd, gzip and xz streams
//! are recognised by their magic bytes and decoded on the fly, and the
//! format is detected from the decoded head ([`Compression`]).
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
//! A compressed trace adds its decoder's window: 32 KiB for gzip (RFC
//! 1951), the dictionary its writer chose for xz (64 MiB at `xz -9`), and
//! for zstd at most 128 MiB (the decoder's default limit,
//! `ZSTD_WINDOWLOG_LIMIT_DEFAULT` 27 in `zstd.h`; larger `--long` windows
//! are refused, as the `zstd` tool refuses them without `--memory`;
//! cache_dataset's files are within it, since libCacheSim reads them with
//! the defaults: `generalReader/zstdReader.c`, `ZSTD_createDStream`).
//!
//! Errors: a bad row is refused with one error naming the file, the line
//! and the field (`trace.csv:12: offset: '4k' is not a whole number`); in
//! a binary format, the byte offset of the record, and in the fixed-size
//! ones (vscsi, oracleGeneral, lcs) its number too (`t.bin: record 2 (byte
//! 24): record: the file ends 10 bytes into this 24-byte record`). Nothing
//! after a bad row is read.
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

mod binary;
pub mod biosnoop;
pub mod blkparse;
pub mod blktrace;
pub mod csv;
mod detect;
pub mod disksim;
mod error;
pub mod fio;
mod header;
mod input;
pub mod lcs;
mod num;
pub mod oracle;
pub mod order;
mod pairing;
pub mod partial;
pub mod tectonic;
mod text;
pub mod thesios;
pub mod transform;
pub mod vscsi;

use std::io::{BufRead, Read};
use std::path::Path;

pub use error::TraceError;
pub use input::{Compression, STDIN};
pub use order::Order;
pub use pairing::MAX_IN_FLIGHT;
pub use partial::partial;
pub use text::MAX_LINE;
pub use thesios::{ServiceClass, ThesiosFields};

/// One block I/O request as a trace records it.
///
/// Times are `u64` nanoseconds from the origin the format gives (see each
/// format's module: the trace's start for blkparse, blktrace, fio, biosnoop
/// and DiskSim; the Unix epoch for Alibaba, Tencent, Thesios and Tectonic;
/// the Windows epoch, 1601-01-01, for MSR Cambridge; the trace's own clock
/// for vscsi, oracleGeneral and lcs).
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
    /// The request's service class, where the trace labels one (Thesios'
    /// `service_class`); `None` for every other format.
    pub class: Option<ServiceClass>,
    /// Thesios' own fields (flash cache, buffer-cache hit, measured and
    /// simulated latency, application); boxed, so that a request of any
    /// other format stays small.
    pub thesios: Option<Box<ThesiosFields>>,
    /// The plugged batch the request was submitted in, where the trace
    /// records the block layer's plug and unplug events (blkparse's `P`
    /// and `U`, blktrace's `__BLK_TA_PLUG` and `__BLK_TA_UNPLUG_*`):
    /// `None` for a request that no unplug released with another.
    pub batch: Option<Batch>,
}

/// The plugged batch a request belongs to: the requests one process
/// queued under one block-layer plug (Linux `blk_start_plug` ..
/// `blk_finish_plug`, block/blk-core.c), released together by one unplug
/// (the `block_unplug` tracepoint, include/trace/events/block.h, its
/// `nr_rq` the batch's size). Only a plug that released two or more
/// requests is a batch: a plug around a single request (every direct
/// `pread` on ext4: iomap's `__iomap_dio_rw` plugs around its bios)
/// batches nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Batch {
    /// The batch's number in the trace, from 1 in unplug order.
    pub id: u64,
    /// How many requests of the trace the unplug released.
    pub size: u32,
    /// The last request the process queued into the batch.
    pub last: bool,
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
    /// Google Thesios CSV ([`thesios`]).
    Thesios,
    /// Meta Tectonic, Baleen's or cache_dataset's ([`tectonic`]).
    Tectonic,
    /// CloudPhysics vscsi binary, versions 1 and 2 ([`vscsi`]).
    Vscsi,
    /// libCacheSim oracleGeneral binary ([`oracle`]).
    OracleGeneral,
    /// libCacheSim lcs binary ([`lcs`]).
    Lcs,
}

impl Format {
    pub const ALL: [Format; 14] = [
        Format::Blkparse,
        Format::Blktrace,
        Format::FioV2,
        Format::FioV3,
        Format::Biosnoop,
        Format::Msr,
        Format::Alibaba,
        Format::Tencent,
        Format::Disksim,
        Format::Thesios,
        Format::Tectonic,
        Format::Vscsi,
        Format::OracleGeneral,
        Format::Lcs,
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
            Format::Thesios => "thesios",
            Format::Tectonic => "tectonic",
            Format::Vscsi => "vscsi",
            Format::OracleGeneral => "oracle-general",
            Format::Lcs => "lcs",
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
        matches!(
            self,
            Format::Blktrace | Format::Vscsi | Format::OracleGeneral | Format::Lcs
        )
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
    /// The format read, where known ([`Requests::format`]).
    format: Option<Format>,
}

impl Requests {
    fn new(inner: impl Iterator<Item = Result<Request, TraceError>> + Send + 'static) -> Self {
        Requests {
            inner: Box::new(inner),
            done: false,
            format: None,
        }
    }

    /// The same requests, known to be of `format`.
    fn of(mut self, format: Format) -> Self {
        self.format = Some(format);
        self
    }

    /// The format the requests are read as (the one named or detected).
    pub fn format(&self) -> Option<Format> {
        self.format
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
    let requests = match format {
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
        Format::Thesios => {
            Requests::new(text::Lines::new(input, origin, thesios::Thesios::default()))
        }
        Format::Tectonic => Requests::new(text::Lines::new(
            input,
            origin,
            tectonic::Tectonic::default(),
        )),
        Format::Vscsi => Requests::new(binary::Binary::new(input, origin, vscsi::Vscsi::default())),
        Format::OracleGeneral => {
            Requests::new(binary::Binary::new(input, origin, oracle::OracleGeneral))
        }
        Format::Lcs => Requests::new(binary::Binary::new(input, origin, lcs::Lcs::default())),
    };
    requests.of(format)
}

/// How many bytes [`open`] reads to detect a format.
pub const DETECT_BYTES: usize = 8192;

/// Opens the trace at `path` as `format`, or as the format its first bytes
/// show ([`Format::detect`]) when `None`. `-` is standard input; a pipe or
/// `/dev/stdin` is read as a file is: each input is opened once and read
/// forward only. A zstd, gzip or xz stream (by its magic bytes,
/// [`Compression`]) is decoded as it is read, and the format is told from
/// the decoded bytes. A blktrace trace is named by any of its per-CPU files
/// (`sda.blktrace.0`) or by their common prefix (`sda`); all of
/// `PREFIX.blktrace.N` are read and merged in time order, as blkparse
/// does.
/// Times that go back further than the format allows are an error
/// ([`order`]); [`open_in_order`] can sort them instead.
pub fn open(path: &Path, format: Option<Format>) -> Result<Requests, TraceError> {
    open_in_order(path, format, Order::Check)
}

/// [`open`], its time order checked or sorted as `order` says ([`order`]).
pub fn open_in_order(
    path: &Path,
    format: Option<Format>,
    order: Order,
) -> Result<Requests, TraceError> {
    let shown = if path.as_os_str() == "-" {
        STDIN.to_string()
    } else {
        path.display().to_string()
    };
    let requests = open_as_written(path, format)?;
    Ok(match requests.format() {
        Some(f) => order::in_order(requests, &shown, f, order),
        None => requests,
    })
}

/// [`open`] without the time order checked.
fn open_as_written(path: &Path, format: Option<Format>) -> Result<Requests, TraceError> {
    let cpu_files = if path.as_os_str() == "-" {
        None
    } else {
        blktrace::cpu_files(path)
    };
    let first = cpu_files
        .as_ref()
        .and_then(|files| files.first().cloned())
        .unwrap_or_else(|| path.to_path_buf());
    let (raw, first_shown) = input::open_raw(&first)?;
    let opened = input::decode(raw, &first_shown, DETECT_BYTES)?;
    let shown = if path.as_os_str() == "-" {
        first_shown.clone()
    } else {
        path.display().to_string()
    };
    let format = match format {
        Some(f) => f,
        None => Format::detect(&opened.head).ok_or_else(|| TraceError::Format {
            origin: shown.clone(),
            why: format!(
                "cannot tell the trace's format from its first bytes; name it (one of: {})",
                Format::ALL.map(Format::name).join(", ")
            ),
        })?,
    };
    if format == Format::Blktrace {
        let mut inputs = vec![(Box::new(opened.input) as Box<dyn Read + Send>, first_shown)];
        for p in cpu_files.iter().flatten().skip(1) {
            let (raw, shown) = input::open_raw(p)?;
            let opened = input::decode(raw, &shown, 0)?;
            inputs.push((Box::new(opened.input) as Box<dyn Read + Send>, shown));
        }
        return Ok(Requests::new(blktrace::Reader::new(inputs)).of(Format::Blktrace));
    }
    if first != path {
        // A blktrace prefix or per-CPU name whose first file is not
        // blktrace's: read the path given, as named.
        let (raw, shown) = input::open_raw(path)?;
        let opened = input::decode(raw, &shown, 0)?;
        return Ok(read(opened.input, &shown, format));
    }
    Ok(read(opened.input, &shown, format))
}

#[cfg(test)]
mod tests {
    use super::Format;

    /// Each format's place in [`Format::ALL`]. Exhaustive: a format added
    /// to the enum does not compile here until it is given one, and the
    /// test holds `ALL` to these places, so it must be added to `ALL`
    /// there too (`ALL` is what `--format`, detection's messages and
    /// `cinterrupts features` list).
    fn place(f: Format) -> usize {
        match f {
            Format::Blkparse => 0,
            Format::Blktrace => 1,
            Format::FioV2 => 2,
            Format::FioV3 => 3,
            Format::Biosnoop => 4,
            Format::Msr => 5,
            Format::Alibaba => 6,
            Format::Tencent => 7,
            Format::Disksim => 8,
            Format::Thesios => 9,
            Format::Tectonic => 10,
            Format::Vscsi => 11,
            Format::OracleGeneral => 12,
            Format::Lcs => 13,
        }
    }

    #[test]
    fn all_holds_every_format_once_with_its_own_name() {
        for (i, f) in Format::ALL.into_iter().enumerate() {
            assert_eq!(place(f), i, "{f:?} out of place in Format::ALL");
            assert_eq!(Format::from_name(f.name()), Some(f));
        }
    }
}

//! blktrace's binary per-CPU files, `DEVICE.blktrace.CPU`.
//!
//! Layout (blktrace's `blktrace_api.h`, the kernel's
//! `include/uapi/linux/blktrace_api.h`): a stream of records, each a
//! 48-byte `struct blk_io_trace` followed by `pdu_len` bytes of payload:
//!
//! ```text
//! offset  size  field
//!      0     4  magic     0x65617400 | version (BLK_IO_TRACE_MAGIC; version 0x07)
//!      4     4  sequence  per-CPU event number
//!      8     8  time      nanoseconds (the trace clock)
//!     16     8  sector    512-byte sectors
//!     24     4  bytes
//!     28     4  action    low 16 bits: __BLK_TA_* (QUEUE 1, BACKMERGE 2,
//!                         FRONTMERGE 3, ISSUE 7, COMPLETE 8, PLUG 9,
//!                         UNPLUG_IO 10, UNPLUG_TIMER 11, ...);
//!                         high 16 bits: BLK_TC_* categories (READ 1<<0,
//!                         WRITE 1<<1, FLUSH 1<<2, SYNC 1<<3, NOTIFY 1<<10,
//!                         PC 1<<9, DISCARD 1<<13, FUA 1<<15)
//!     32     4  pid
//!     36     4  device    dev_t, major << 20 | minor (MINORBITS 20)
//!     40     4  cpu
//!     44     2  error
//!     46     2  pdu_len
//! ```
//!
//! The byte order is the recording machine's; blkparse tells it from the
//! magic (`check_data_endianness`), and so does this reader. A notify
//! record (`BLK_TC_NOTIFY`) with action `BLK_TN_PROCESS` (0) carries the
//! pid's command name as its payload. Passthrough (`BLK_TC_PC`) records are
//! not block requests and are skipped. An unplug's payload is its depth,
//! the requests it released, as a big-endian u64 whatever the machine's
//! order (kernel/trace/blktrace.c, `blk_add_trace_unplug`:
//! `cpu_to_be64(depth)`; blkparse's `get_pdu_int` reads it back with
//! `be64_to_cpu`); it makes those requests a plugged batch
//! ([`crate::Batch`]).
//!
//! Requests are paired as in [`crate::blkparse`] (issue `D`, else `Q`;
//! completion `C`; by device and sector), after the per-CPU files are
//! merged in time order as blkparse merges them. Times are from the first
//! event of the trace (blkparse's `genesis_time`).

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::pairing::{Act, Event, Pairing};
use crate::Request;

/// `BLK_IO_TRACE_MAGIC`, without the version byte.
pub const MAGIC: u32 = 0x6561_7400;
/// The record version read (`BLK_IO_TRACE_VERSION`).
pub const VERSION: u8 = 0x07;
/// `sizeof(struct blk_io_trace)`.
pub const RECORD: usize = 48;

const TA_QUEUE: u32 = 1;
const TA_BACKMERGE: u32 = 2;
const TA_FRONTMERGE: u32 = 3;
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;
const TA_UNPLUG_IO: u32 = 10;
const TA_UNPLUG_TIMER: u32 = 11;
const TN_PROCESS: u32 = 0;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_SYNC: u32 = 1 << 3;
const TC_PC: u32 = 1 << 9;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
const TC_FUA: u32 = 1 << 15;
/// Command names remembered at once; past this the table starts again
/// (a name missed is `None`, never a wrong one).
const MAX_NAMES: usize = 4096;

/// Whether these four bytes are blktrace's magic, in either byte order:
/// `Some(true)` little-endian, `Some(false)` big-endian.
pub fn magic_order(first: [u8; 4]) -> Option<bool> {
    if u32::from_le_bytes(first) & 0xffff_ff00 == MAGIC {
        Some(true)
    } else if u32::from_be_bytes(first) & 0xffff_ff00 == MAGIC {
        Some(false)
    } else {
        None
    }
}

/// One record, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub sequence: u32,
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub payload: Vec<u8>,
}

impl Record {
    /// The record's bytes, little-endian (tests and example files).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(RECORD + self.payload.len());
        b.extend((MAGIC | u32::from(VERSION)).to_le_bytes());
        b.extend(self.sequence.to_le_bytes());
        b.extend(self.time.to_le_bytes());
        b.extend(self.sector.to_le_bytes());
        b.extend(self.bytes.to_le_bytes());
        b.extend(self.action.to_le_bytes());
        b.extend(self.pid.to_le_bytes());
        b.extend(self.device.to_le_bytes());
        b.extend(self.cpu.to_le_bytes());
        b.extend(self.error.to_le_bytes());
        b.extend((self.payload.len() as u16).to_le_bytes());
        b.extend(&self.payload);
        b
    }
}

/// One per-CPU file being read.
struct Input {
    input: Box<dyn Read + Send>,
    origin: String,
    /// Where the next record starts.
    offset: u64,
    little: Option<bool>,
    /// The next record, read ahead for the merge.
    head: Option<(u64, Record)>,
    done: bool,
}

impl Input {
    fn bad(&self, at: u64, field: &'static str, why: String) -> TraceError {
        TraceError::Record {
            origin: self.origin.clone(),
            offset: at,
            field,
            why,
        }
    }

    /// Fills `buf` or reads nothing (`Ok(false)` at a clean end).
    fn fill(&mut self, buf: &mut [u8], at: u64, what: &'static str) -> Result<bool, TraceError> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(TraceError::Read {
                        origin: self.origin.clone(),
                        at,
                        reason: e.to_string(),
                    })
                }
            }
        }
        if got == 0 && what == "magic" {
            return Ok(false);
        }
        if got < buf.len() {
            return Err(self.bad(
                at,
                what,
                format!(
                    "the file ends {got} bytes into a {}-byte {}",
                    buf.len(),
                    if what == "magic" { "record" } else { "payload" }
                ),
            ));
        }
        Ok(true)
    }

    /// Reads the next record into `head`.
    fn advance(&mut self) -> Result<(), TraceError> {
        self.head = None;
        if self.done {
            return Ok(());
        }
        let at = self.offset;
        let mut h = [0u8; RECORD];
        if !self.fill(&mut h, at, "magic")? {
            self.done = true;
            return Ok(());
        }
        let first = [h[0], h[1], h[2], h[3]];
        let little = match (self.little, magic_order(first)) {
            (_, None) => {
                return Err(self.bad(
                    at,
                    "magic",
                    format!(
                        "{:#010x} is not blktrace's ({MAGIC:#010x} | version)",
                        u32::from_le_bytes(first)
                    ),
                ))
            }
            (Some(l), Some(m)) if l != m => {
                return Err(self.bad(at, "magic", "byte order changed mid-file".into()))
            }
            (_, Some(m)) => m,
        };
        self.little = Some(little);
        let u16_at = |o: usize| {
            let b = [h[o], h[o + 1]];
            if little {
                u16::from_le_bytes(b)
            } else {
                u16::from_be_bytes(b)
            }
        };
        let u32_at = |o: usize| {
            let b = [h[o], h[o + 1], h[o + 2], h[o + 3]];
            if little {
                u32::from_le_bytes(b)
            } else {
                u32::from_be_bytes(b)
            }
        };
        let u64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[o..o + 8]);
            if little {
                u64::from_le_bytes(b)
            } else {
                u64::from_be_bytes(b)
            }
        };
        let version = (u32_at(0) & 0xff) as u8;
        if version != VERSION {
            return Err(self.bad(
                at,
                "magic",
                format!("version {version:#04x} is not the one read ({VERSION:#04x})"),
            ));
        }
        let pdu_len = u16_at(46) as usize;
        let mut payload = vec![0u8; pdu_len];
        if pdu_len > 0 {
            self.fill(&mut payload, at + RECORD as u64, "pdu_len")?;
        }
        self.offset = at + (RECORD + pdu_len) as u64;
        self.head = Some((
            at,
            Record {
                sequence: u32_at(4),
                time: u64_at(8),
                sector: u64_at(16),
                bytes: u32_at(24),
                action: u32_at(28),
                pid: u32_at(32),
                device: u32_at(36),
                cpu: u32_at(40),
                error: u16_at(44),
                payload,
            },
        ));
        Ok(())
    }
}

/// Reads one trace's per-CPU files, merged in time order.
pub(crate) struct Reader {
    inputs: Vec<Input>,
    started: bool,
    genesis: Option<u64>,
    pairing: Pairing,
    names: HashMap<u32, String>,
    ready: std::collections::VecDeque<Request>,
    ended: bool,
}

impl Reader {
    pub fn new(inputs: Vec<(Box<dyn Read + Send>, String)>) -> Self {
        Reader {
            inputs: inputs
                .into_iter()
                .map(|(input, origin)| Input {
                    input,
                    origin,
                    offset: 0,
                    little: None,
                    head: None,
                    done: false,
                })
                .collect(),
            started: false,
            genesis: None,
            pairing: Pairing::default(),
            names: HashMap::new(),
            ready: Default::default(),
            ended: false,
        }
    }

    /// The earliest record across the files, and the file it came from.
    fn next_record(&mut self) -> Result<Option<(usize, u64, Record)>, TraceError> {
        if !self.started {
            self.started = true;
            for i in &mut self.inputs {
                i.advance()?;
            }
        }
        let Some(i) = (0..self.inputs.len())
            .filter(|&i| self.inputs[i].head.is_some())
            .min_by_key(|&i| self.inputs[i].head.as_ref().map(|(_, r)| r.time))
        else {
            return Ok(None);
        };
        let (at, record) = self.inputs[i].head.take().expect("chosen for its head");
        self.inputs[i].advance()?;
        Ok(Some((i, at, record)))
    }

    fn step(&mut self) -> Result<bool, TraceError> {
        let Some((i, at, r)) = self.next_record()? else {
            return Ok(false);
        };
        let genesis = *self.genesis.get_or_insert(r.time);
        let action = r.action & 0xffff;
        let category = r.action >> 16;
        if category & TC_NOTIFY != 0 {
            if action == TN_PROCESS {
                let end = r
                    .payload
                    .iter()
                    .position(|&b| b == 0)
                    .unwrap_or(r.payload.len());
                let name = String::from_utf8_lossy(&r.payload[..end]).into_owned();
                if self.names.len() >= MAX_NAMES {
                    self.names.clear();
                }
                self.names.insert(r.pid, name);
            }
            return Ok(true);
        }
        if category & TC_PC != 0 {
            return Ok(true);
        }
        let act = match action {
            TA_QUEUE => Act::Queue,
            TA_ISSUE => Act::Issue,
            TA_COMPLETE => Act::Complete,
            TA_BACKMERGE => Act::BackMerge,
            TA_FRONTMERGE => Act::FrontMerge,
            TA_UNPLUG_IO | TA_UNPLUG_TIMER => {
                let Some(b) = r.payload.first_chunk::<8>() else {
                    return Err(self.inputs[i].bad(
                        at,
                        "pdu_len",
                        format!(
                            "an unplug carries its 8-byte depth; this one {} bytes",
                            r.payload.len()
                        ),
                    ));
                };
                Act::Unplug(u32::try_from(u64::from_be_bytes(*b)).unwrap_or(u32::MAX))
            }
            _ => return Ok(true),
        };
        let comm = match act {
            Act::Queue => self.names.get(&r.pid).cloned(),
            _ => None,
        };
        let event = Event {
            time: r.time.saturating_sub(genesis),
            device: (r.device >> 20, r.device & ((1 << 20) - 1)),
            sector: r.sector,
            bytes: r.bytes,
            act,
            write: category & TC_WRITE != 0,
            discard: category & TC_DISCARD != 0,
            sync: category & TC_SYNC != 0,
            flush: category & (TC_FLUSH | TC_FUA) != 0,
            pid: r.pid,
            comm,
            cpu: r.cpu,
        };
        match self.pairing.event(event) {
            Ok(Some(req)) => self.ready.push_back(req),
            Ok(None) => {}
            Err(why) => return Err(self.inputs[i].bad(at, "sector", why)),
        }
        Ok(true)
    }
}

impl Iterator for Reader {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                return Some(Ok(r));
            }
            if self.ended {
                return None;
            }
            match self.step() {
                Ok(true) => {}
                Ok(false) => {
                    self.ended = true;
                    self.ready.extend(self.pairing.drain());
                }
                Err(e) => {
                    self.ended = true;
                    self.ready.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}

/// A blktrace trace's per-CPU files, if `path` names one of them
/// (`PREFIX.blktrace.N`) or their prefix: every `PREFIX.blktrace.N` beside
/// it, by CPU number. `None` when `path` is neither.
pub fn cpu_files(path: &Path) -> Option<Vec<PathBuf>> {
    let name = path.file_name()?.to_str()?;
    let prefix = match name.rsplit_once(".blktrace.") {
        Some((p, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => p.to_string(),
        _ if !path.exists() => name.to_string(),
        _ => return None,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let want = format!("{prefix}.blktrace.");
    let mut found: Vec<(u64, PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let n = e.file_name().into_string().ok()?;
            let cpu: u64 = n.strip_prefix(&want)?.parse().ok()?;
            Some((cpu, e.path()))
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    found.sort();
    Some(found.into_iter().map(|(_, p)| p).collect())
}

//! CloudPhysics' block traces: VMware vscsiStats' binary records, both
//! versions (Waldspurger et al., "Efficient MRC Construction with SHARDS",
//! FAST '15; distributed by cacheMon/cache_dataset, "CloudPhysics Traces").
//!
//! Layout (1a1a11a/libCacheSim, `libCacheSim/traceReader/customizedReader/vscsi.h`
//! at commit aa0fc40914b2b786f4b9f4dafb099f8f332b216a: `trace_v1_record_t`
//! and `trace_v2_record_t`, C structs with natural alignment, read
//! little-endian):
//!
//! ```text
//! version 1, 32 bytes          version 2, 40 bytes
//! offset size field            offset size field
//!      0    4 sn                    0    2 cmd
//!      4    4 len                   2    2 ver
//!      8    4 nSG                   4    4 sn
//!     12    2 cmd                   8    4 len
//!     14    2 ver                  12    4 nSG
//!     16    8 lbn                  16    8 lbn
//!     24    8 ts                   24    8 ts
//!                                  32    8 rt
//! ```
//!
//! `ver >> 8` is the version (1 or 2); libCacheSim tells a file's version
//! by testing its first two records (`test_vscsi_version`: version 2
//! first), and so does [`crate::Format::detect`]; this reader takes the
//! first record's and refuses a record of the other version.
//!
//! Fields: `ts` the issue time in microseconds (vscsi.h: "trace uses
//! microsec"); `lbn` the first 512-byte sector (cache_dataset: "in
//! sectors"); `len` the size in bytes (libCacheSim takes it as the object
//! size in bytes; the dataset's description says sectors, but the sample
//! shipped with libCacheSim, `data/cloudPhysicsIO.vscsi`, has lengths of
//! 512, 6656 and 57344 with consecutive 512-byte requests one `lbn`
//! apart: bytes); `cmd` the SCSI operation code, mapped as the Linux
//! kernel names them (`include/scsi/scsi_proto.h`): READ(6/10/12/16)
//! 0x08, 0x28, 0xa8, 0x88 a read; WRITE(6/10/12/16) 0x0a, 0x2a, 0xaa,
//! 0x8a and WRITE SAME(10/16) 0x41, 0x93 a write; SYNCHRONIZE CACHE(10/16)
//! 0x35, 0x91 a flush; UNMAP 0x42 a discard. Any other command moves no
//! block data (INQUIRY, TEST UNIT READY, ...) and is skipped, as the
//! blktrace reader skips passthrough records.
//!
//! Times: only the issue, `issue_ns` from the trace's clock (µs × 1000);
//! `complete_ns` is `None`: version 2's `rt` (response time) is not read,
//! since neither libCacheSim (which ignores it) nor the dataset's
//! description gives its unit. `device` is `None` (one file is one
//! virtual disk).

use std::collections::VecDeque;
use std::io::Read;

use crate::binary::{u16_at, u32_at, u64_at, RecordFormat, Records};
use crate::error::TraceError;
use crate::num::{times, Bad};
use crate::Request;

/// `sizeof(trace_v1_record_t)`.
pub const RECORD_V1: usize = 32;
/// `sizeof(trace_v2_record_t)`.
pub const RECORD_V2: usize = 40;

/// The version a record's `ver` field names if its record layout is
/// `version`'s (`to_vscsi_version`: `ver >> 8`).
fn version_in(record: &[u8], version: u8) -> bool {
    let at = if version == 1 { 14 } else { 2 };
    record.len() >= at + 2 && u16_at(record, at) >> 8 == u16::from(version)
}

/// The version the first bytes of a file show, testing its first `n`
/// records as libCacheSim does (version 2 first).
pub(crate) fn version_of(head: &[u8], n: usize) -> Option<u8> {
    [(2u8, RECORD_V2), (1u8, RECORD_V1)]
        .into_iter()
        .find(|&(v, size)| {
            head.len() >= n * size && (0..n).all(|i| version_in(&head[i * size..], v))
        })
        .map(|(v, _)| v)
}

/// What a SCSI command does to the block device (`scsi_proto.h`).
enum Op {
    Read,
    Write,
    Flush,
    Discard,
}

fn op(cmd: u16) -> Option<Op> {
    Some(match cmd {
        0x08 | 0x28 | 0xa8 | 0x88 => Op::Read,
        0x0a | 0x2a | 0xaa | 0x8a | 0x41 | 0x93 => Op::Write,
        0x35 | 0x91 => Op::Flush,
        0x42 => Op::Discard,
        _ => return None,
    })
}

#[derive(Default)]
pub(crate) struct Vscsi {
    version: u8,
}

impl RecordFormat for Vscsi {
    fn start<R: Read>(&mut self, input: &mut Records<R>) -> Result<usize, TraceError> {
        let head = input.peek(RECORD_V2)?;
        if head.is_empty() {
            self.version = 1;
            return Ok(RECORD_V1);
        }
        self.version = match version_of(head, 1) {
            Some(v) => v,
            None => {
                let (v1, v2) = (
                    head.get(14..16).map(|_| u16_at(head, 14)),
                    head.get(2..4).map(|_| u16_at(head, 2)),
                );
                return Err(input.bad(
                    1,
                    0,
                    Bad::new(
                        "ver",
                        format!(
                            "neither version 1 (ver {}) nor 2 (ver {}): not a vscsi trace",
                            v1.map_or("absent".into(), |v| format!("{v:#06x}")),
                            v2.map_or("absent".into(), |v| format!("{v:#06x}"))
                        ),
                    ),
                ));
            }
        };
        Ok(if self.version == 1 {
            RECORD_V1
        } else {
            RECORD_V2
        })
    }

    fn record(&mut self, b: &[u8], out: &mut VecDeque<Request>) -> Result<(), Bad> {
        if !version_in(b, self.version) {
            return Err(Bad::new(
                "ver",
                format!(
                    "this record is not version {} as the trace's first is",
                    self.version
                ),
            ));
        }
        let (cmd, len, lbn, ts) = if self.version == 1 {
            (u16_at(b, 12), u32_at(b, 4), u64_at(b, 16), u64_at(b, 24))
        } else {
            (u16_at(b, 0), u32_at(b, 8), u64_at(b, 16), u64_at(b, 24))
        };
        let Some(op) = op(cmd) else {
            return Ok(());
        };
        out.push_back(Request {
            issue_ns: times(ts, 1_000, "ts", "us")?,
            offset: times(lbn, 512, "lbn", "sectors")?,
            bytes: len,
            write: matches!(op, Op::Write),
            flush: matches!(op, Op::Flush),
            discard: matches!(op, Op::Discard),
            ..Request::default()
        });
        Ok(())
    }
}

/// One record as the layout above (tests and example files).
pub fn encode(version: u8, cmd: u16, len: u32, lbn: u64, ts_us: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(RECORD_V2);
    if version == 1 {
        b.extend(0u32.to_le_bytes()); // sn
        b.extend(len.to_le_bytes());
        b.extend(1u32.to_le_bytes()); // nSG
        b.extend(cmd.to_le_bytes());
        b.extend(0x0100u16.to_le_bytes());
        b.extend(lbn.to_le_bytes());
        b.extend(ts_us.to_le_bytes());
    } else {
        b.extend(cmd.to_le_bytes());
        b.extend(0x0200u16.to_le_bytes());
        b.extend(0u32.to_le_bytes()); // sn
        b.extend(len.to_le_bytes());
        b.extend(1u32.to_le_bytes()); // nSG
        b.extend(lbn.to_le_bytes());
        b.extend(ts_us.to_le_bytes());
        b.extend(0u64.to_le_bytes()); // rt
    }
    b
}

//! libCacheSim's `oracleGeneral` binary traces, the form cacheMon's
//! cache_dataset ships every collection in (`*.oracleGeneral.bin.zst`).
//!
//! Layout (1a1a11a/libCacheSim,
//! `libCacheSim/traceReader/customizedReader/oracle/oracleGeneralBin.h` at
//! commit aa0fc40914b2b786f4b9f4dafb099f8f332b216a, and cache_dataset's
//! README, "OracleGeneral Format Structure", at commit
//! e975d18bae2469faf48d2fb62acdf65073887f41): no header; 24-byte
//! little-endian records, packed:
//!
//! ```text
//! offset size field
//!      0    4 clock_time         u32, seconds
//!      4    8 obj_id             u64
//!     12    4 obj_size           u32, bytes
//!     16    8 next_access_vtime  i64, the index of the object's next
//!                                request, -1 (or i64::MAX) if none
//! ```
//!
//! # A cache trace as block requests
//!
//! A cache trace names objects, not addresses; this reader (and [`crate::lcs`])
//! maps each record to one [`Request`] by these rules:
//!
//! - `offset` is `obj_id` unchanged. For the block collections libCacheSim
//!   documents `obj_id` as "the logical block address in block cache"
//!   (`lcs.h`, `lcs_req_v1`), so a block trace keeps its addresses; for a
//!   key-value or CDN trace (a hash of the key) it is one distinct address
//!   per object, and repeated requests for an object land on the same
//!   address, which is all a request's address means to a cache. The unit
//!   (bytes or blocks) is not published; nothing here depends on it.
//! - `bytes` is `obj_size`.
//! - `issue_ns` is `clock_time` in seconds × 10^9 (libCacheSim's
//!   `clock_time` is in seconds: lcs.h's trace stat keeps
//!   `start_timestamp` "in seconds"); requests within one second share one
//!   issue time, which is the trace's resolution, not a burst it recorded.
//! - `complete_ns` is `None`: a cache trace records arrivals only.
//! - a read unless the format carries an operation (lcs v2 and later:
//!   libCacheSim's `req_op_e`, `include/libCacheSim/enum.h`: get, gets and
//!   read are reads; set, add, cas, replace, append, prepend, incr, decr,
//!   write and update are writes; delete is a discard; nop, the value of a
//!   trace that recorded no operation, is a read). A trace with no
//!   operation is read as all reads: without one, the trace records
//!   lookups, and a lookup reads.
//! - `next_access_vtime` is not kept: it is an oracle's hint for cache
//!   eviction, not a property of the request.
//!
//! Records with `obj_size` 0 are kept (libCacheSim skips them only when
//! asked to, `ignore_size_zero_req`).

use std::collections::VecDeque;
use std::io::Read;

use crate::binary::{u32_at, u64_at, RecordFormat, Records};
use crate::error::TraceError;
use crate::num::{times, Bad};
use crate::Request;

/// `item_size` of an oracleGeneral record.
pub const RECORD: usize = 24;

/// A request from one cache-trace record, by the rules above.
pub(crate) fn request(clock_time: u32, obj_id: u64, obj_size: u32, op: Op) -> Result<Request, Bad> {
    Ok(Request {
        issue_ns: times(u64::from(clock_time), 1_000_000_000, "clock_time", "s")?,
        offset: obj_id,
        bytes: obj_size,
        write: op == Op::Write,
        discard: op == Op::Delete,
        ..Request::default()
    })
}

/// What a cache request does, reduced to what a block device sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    Delete,
}

/// libCacheSim's `req_op_e` (`enum.h`: `OP_NOP` 0 to `OP_UPDATE` 14).
pub(crate) fn op(code: u32) -> Option<Op> {
    Some(match code {
        0 | 1 | 2 | 12 => Op::Read,
        3..=8 | 10 | 11 | 13 | 14 => Op::Write,
        9 => Op::Delete,
        _ => return None,
    })
}

/// Whether `head` looks like oracleGeneral records: at least two whole
/// ones, times that do not go back, and each next access either absent
/// (-1, i64::MAX) or later than the record itself and below 2^48 (text
/// read as records gives values near 2^61 and above).
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let n = head.len() / RECORD;
    if n < 2 {
        return false;
    }
    let mut last = 0u32;
    (0..n).all(|i| {
        let r = &head[i * RECORD..];
        let time = u32_at(r, 0);
        let next = u64_at(r, 16) as i64;
        let ok =
            time >= last && (next == -1 || next == i64::MAX || (next > i as i64 && next < 1 << 48));
        last = time;
        ok
    })
}

#[derive(Default)]
pub(crate) struct OracleGeneral;

impl RecordFormat for OracleGeneral {
    fn start<R: Read>(&mut self, _input: &mut Records<R>) -> Result<usize, TraceError> {
        Ok(RECORD)
    }

    fn record(&mut self, b: &[u8], out: &mut VecDeque<Request>) -> Result<(), Bad> {
        out.push_back(request(
            u32_at(b, 0),
            u64_at(b, 4),
            u32_at(b, 12),
            Op::Read,
        )?);
        Ok(())
    }
}

/// One record as the layout above (tests and example files).
pub fn encode(clock_time: u32, obj_id: u64, obj_size: u32, next_access_vtime: i64) -> Vec<u8> {
    let mut b = Vec::with_capacity(RECORD);
    b.extend(clock_time.to_le_bytes());
    b.extend(obj_id.to_le_bytes());
    b.extend(obj_size.to_le_bytes());
    b.extend(next_access_vtime.to_le_bytes());
    b
}

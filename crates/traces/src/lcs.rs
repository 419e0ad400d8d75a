//! libCacheSim's `lcs` binary traces, oracleGeneral's successor: one
//! header, then records whose layout the header's version names.
//!
//! Layout (1a1a11a/libCacheSim, `libCacheSim/traceReader/customizedReader/lcs.h`
//! at commit 225b07e41f03d82358171a3d91ab3f210d0ae783; packed structs,
//! little-endian):
//!
//! ```text
//! header, 8192 bytes
//! offset size field
//!      0    8 start_magic   0x123456789abcdef0
//!      8    8 version       1 to 8: the record layout
//!     16 8000 stat          the trace's statistics (n_req at 24, ...)
//!   8016  168 unused
//!   8184    8 end_magic     0x123456789abcdef0
//!
//! records
//! version  size  fields (offset)
//!       1    24  clock_time u32 (0), obj_id u64 (4), obj_size u32 (12),
//!                next_access_vtime i64 (16): oracleGeneral's record
//!       2    28  clock_time (0), obj_id (4), obj_size u32 (12),
//!                op:8 | tenant:24 u32 (16), next_access_vtime (20)
//!       3    36  clock_time (0), obj_id (4), obj_size i64 (12),
//!                op:8 | tenant:24 u32 (20), ttl u32 (24), next_access_vtime (28)
//!     4-8  40, 44, 52, 68, 100: version 3's record then 1, 2, 4, 8, 16
//!                u32 features
//! ```
//!
//! The op/tenant word is a C bit-field: GCC on little-endian machines puts
//! the first-declared field (`op`) in the low 8 bits.
//!
//! Each record becomes a request by the rules in [`crate::oracle`] ("A
//! cache trace as block requests"); from version 2 on, the operation
//! gives the direction and the tenant is the request's `device` (the
//! volume or tenant the trace names), so per-volume replay sees tenants.
//!
//! libCacheSim's earlier lcs header (1024 bytes with a format string,
//! `generalReader/lcs.h` at commit 5f3ccd320dc02444f18d9a34f0e0f71799a9bd08)
//! begins with the same magic; it is refused (its end magic is not at
//! byte 8184) rather than misread.

use std::collections::VecDeque;
use std::io::Read;

use crate::binary::{u32_at, u64_at, RecordFormat, Records};
use crate::error::TraceError;
use crate::num::Bad;
use crate::oracle::{op, request, Op};
use crate::Request;

/// `LCS_TRACE_START_MAGIC` and `LCS_TRACE_END_MAGIC`.
pub const MAGIC: u64 = 0x1234_5678_9abc_def0;
/// `sizeof(lcs_trace_header_t)`.
pub const HEADER: usize = 8192;
/// Where `end_magic` sits in the header.
const END_MAGIC_AT: usize = HEADER - 8;
/// `sizeof(lcs_req_vN_t)` for N = 1..=8 (lcs.h's static asserts).
const RECORD: [usize; 8] = [24, 28, 36, 40, 44, 52, 68, 100];

/// Whether the first bytes are lcs' start magic.
pub(crate) fn is_lcs(head: &[u8]) -> bool {
    head.len() >= 8 && u64_at(head, 0) == MAGIC
}

#[derive(Default)]
pub(crate) struct Lcs {
    version: u64,
}

impl RecordFormat for Lcs {
    fn start<R: Read>(&mut self, input: &mut Records<R>) -> Result<usize, TraceError> {
        let mut h = vec![0u8; HEADER];
        input.header(&mut h, "header")?;
        let bad = |at: u64, field, why: String| input.bad(0, at, Bad::new(field, why));
        if u64_at(&h, 0) != MAGIC {
            return Err(bad(
                0,
                "start_magic",
                format!("{:#018x} is not lcs' {MAGIC:#018x}", u64_at(&h, 0)),
            ));
        }
        if u64_at(&h, END_MAGIC_AT) != MAGIC {
            return Err(bad(
                END_MAGIC_AT as u64,
                "end_magic",
                format!(
                    "{:#018x} is not {MAGIC:#018x} (an lcs header of another generation, or a damaged one)",
                    u64_at(&h, END_MAGIC_AT)
                ),
            ));
        }
        self.version = u64_at(&h, 8);
        match usize::try_from(self.version) {
            Ok(v @ 1..=8) => Ok(RECORD[v - 1]),
            _ => Err(bad(
                8,
                "version",
                format!("{} is not an lcs version read (1 to 8)", self.version),
            )),
        }
    }

    fn record(&mut self, b: &[u8], out: &mut VecDeque<Request>) -> Result<(), Bad> {
        let clock_time = u32_at(b, 0);
        let obj_id = u64_at(b, 4);
        let (obj_size, word) = match self.version {
            1 => (u32_at(b, 12), None),
            2 => (u32_at(b, 12), Some(u32_at(b, 16))),
            _ => {
                let size = u64_at(b, 12) as i64;
                let size = u32::try_from(size).map_err(|_| {
                    Bad::new("obj_size", format!("{size} is not a size in 0..2^32 bytes"))
                })?;
                (size, Some(u32_at(b, 20)))
            }
        };
        let (operation, tenant) = match word {
            None => (Op::Read, None),
            Some(w) => {
                let code = w & 0xff;
                let operation = op(code).ok_or_else(|| {
                    Bad::new(
                        "op",
                        format!("{code} is not one of libCacheSim's operations (0 to 14)"),
                    )
                })?;
                (operation, Some(w >> 8))
            }
        };
        let mut r = request(clock_time, obj_id, obj_size, operation)?;
        r.device = tenant.map(|t| t.to_string());
        out.push_back(r);
        Ok(())
    }
}

/// An lcs header of `version` (tests and example files): the magics and
/// the version, its statistics left zero.
pub fn encode_header(version: u64) -> Vec<u8> {
    let mut h = vec![0u8; HEADER];
    h[..8].copy_from_slice(&MAGIC.to_le_bytes());
    h[8..16].copy_from_slice(&version.to_le_bytes());
    h[END_MAGIC_AT..].copy_from_slice(&MAGIC.to_le_bytes());
    h
}

/// One version-2 record (tests and example files).
pub fn encode_v2(clock_time: u32, obj_id: u64, obj_size: u32, op: u8, tenant: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(RECORD[1]);
    b.extend(clock_time.to_le_bytes());
    b.extend(obj_id.to_le_bytes());
    b.extend(obj_size.to_le_bytes());
    b.extend((u32::from(op) | tenant << 8).to_le_bytes());
    b.extend((-1i64).to_le_bytes());
    b
}

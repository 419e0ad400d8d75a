//! Meta's Tectonic block-storage traces: requests to a CacheLib flash
//! cache in front of Tectonic, released with Baleen (Wong et al.,
//! "Baleen: ML Admission & Prefetching for Flash Caches", FAST '24) and
//! re-released by cacheMon's cache_dataset ("Meta Tectonic Cache Traces").
//!
//! Two layouts, both read:
//!
//! - Baleen's release (<https://ftp.pdl.cmu.edu/pub/datasets/Baleen24>,
//!   "Format"): space separated, the columns named in each trace
//!   directory's `full.header` (and, where present, in a `#` line at the
//!   top of the file). Without a header, the field count tells the
//!   generation: 8 fields `block_id io_offset io_size op_time op_name
//!   pipeline user_namespace user_name` (2019, the page's example row
//!   `310 262144 4325376 1572074461.57806 1 24 3 5`), 10 fields `block_id
//!   io_offset io_size op_time op_name user_namespace user_name
//!   rs_shard_id op_count host_name` (the "newer traces" with "additional
//!   fields"; assumed: the page names these fields but not their order,
//!   which is taken from published loaders of the 2023 traces). `op_name` is a
//!   number: GET_TEMP 1, GET_PERM 2, PUT_TEMP 3, PUT_PERM 4,
//!   GET_NOT_INIT 5, PUT_NOT_INIT 6, UNKNOWN 100 (the page's mapping).
//! - cache_dataset's CSV (cacheMon/cache_dataset `README.md` at commit
//!   e975d18bae2469faf48d2fb62acdf65073887f41, "Trace Format"): comma
//!   separated with a header line, `op_time, block_id, block_id_size,
//!   io_size, io_offset, user_name, user_namespace, op_name, op_count,
//!   host_name, rs_shard_id`, `op_name` one of `getChunkData.NotInitialized`,
//!   `getChunkData.Permanent`, `putChunk.NotInitialized`,
//!   `putChunk.Permanent`; `block_id_size` the block's size in MB, "always
//!   40". Without a header, that order is assumed.
//!
//! A header's columns are found by name, so either layout in any order
//! is read. Fields: `op_time` the request's time in Unix seconds (a
//! decimal); `block_id` the block; `io_offset` and `io_size` the bytes
//! asked for within it; `host_name` the server that served it.
//!
//! Requests: a GET is a read and a PUT a write; UNKNOWN (100) is read as
//! a read (assumed: the release gives no direction for it, and a cache
//! sees far more GETs). A block is a span of the address space: `offset`
//! is `block_id` × the block's size + `io_offset`, the size being
//! `block_id_size` MiB where the trace gives it and 40 MiB otherwise
//! (assumed from cache_dataset's "always 40"; MB read as MiB, 2^20 bytes,
//! so that blocks stay aligned: the release does not say which).
//! Blocks then never overlap, and two requests share an address only
//! within one block.
//!
//! Times: only the arrival: `issue_ns` in nanoseconds since the Unix
//! epoch; `complete_ns` is `None`. `device` is `host_name` where the
//! trace has it, else `None`.

use std::collections::VecDeque;

use crate::header::Columns;
use crate::num::{quoted, seconds_ns, times, uint, uint32, Bad};
use crate::text::LineFormat;
use crate::Request;

/// The block size assumed when the trace does not give one, in MiB.
pub const BLOCK_MIB: u64 = 40;

/// The names of the columns read, in the order [`Columns`] is asked.
const WANTED: [&str; 7] = [
    "op_time",
    "block_id",
    "io_offset",
    "io_size",
    "op_name",
    "block_id_size",
    "host_name",
];
const REQUIRED: [&str; 5] = ["op_time", "block_id", "io_offset", "io_size", "op_name"];

/// cache_dataset's column order, for a CSV without a header.
pub const CSV_HEADER: &str = "op_time,block_id,block_id_size,io_size,io_offset,user_name,user_namespace,op_name,op_count,host_name,rs_shard_id";

/// Whether a line names Tectonic's columns (after an optional `#`).
pub(crate) fn is_header(line: &str) -> bool {
    let names = names(line.trim_start_matches('#'));
    REQUIRED
        .iter()
        .all(|w| names.iter().any(|n| n.eq_ignore_ascii_case(w)))
}

/// Whether a row has a Baleen row's shape: 8 or 10 space-separated
/// fields, the first three whole numbers, then a time, then a number.
pub(crate) fn is_baleen_row(line: &str) -> bool {
    let f: Vec<&str> = line.split_whitespace().collect();
    let whole = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(f.len(), 8 | 10)
        && f[..3].iter().all(|s| whole(s))
        && seconds_ns(f[3], "op_time").is_ok()
        && whole(f[4])
}

fn names(line: &str) -> Vec<&str> {
    if line.contains(',') {
        line.split(',').map(str::trim).collect()
    } else {
        line.split_whitespace().collect()
    }
}

#[derive(Default)]
pub(crate) struct Tectonic {
    columns: Option<Columns>,
    comma: bool,
}

impl Tectonic {
    /// The columns of a first row that is not a header, by its shape.
    fn positional(row: &[&str], comma: bool) -> Result<Columns, Bad> {
        // Positions of WANTED's names (op_time, block_id, io_offset,
        // io_size, op_name, block_id_size, host_name).
        let at = |p: [Option<usize>; 7], width| Ok(Columns::fixed(&p, width));
        match (comma, row.len()) {
            (true, 11) => at(
                [
                    Some(0),
                    Some(1),
                    Some(4),
                    Some(3),
                    Some(7),
                    Some(2),
                    Some(9),
                ],
                11,
            ),
            (false, 8) => at([Some(3), Some(0), Some(1), Some(2), Some(4), None, None], 8),
            (false, 10) => at(
                [Some(3), Some(0), Some(1), Some(2), Some(4), None, Some(9)],
                10,
            ),
            (_, n) => {
                Err(Bad::new(
                    "line",
                    format!(
                    "no header naming the columns, and {n} {} fields are neither Baleen's 8 or 10 \
                     (space separated) nor cache_dataset's 11 ({CSV_HEADER})",
                    if comma { "comma-separated" } else { "space-separated" }
                ),
                ))
            }
        }
    }
}

fn direction(op: &str) -> Result<bool, Bad> {
    let lower = op.to_ascii_lowercase();
    match op {
        "1" | "2" | "5" | "100" => Ok(false),
        "3" | "4" | "6" => Ok(true),
        _ if lower.starts_with("getchunkdata") || lower.starts_with("get_") => Ok(false),
        _ if lower.starts_with("putchunk") || lower.starts_with("put_") => Ok(true),
        _ => Err(Bad::new(
            "op_name",
            format!(
                "{} is neither a GET (1, 2, 5, getChunkData.*) nor a PUT (3, 4, 6, putChunk.*)",
                quoted(op)
            ),
        )),
    }
}

impl LineFormat for Tectonic {
    fn line(&mut self, text: &str, out: &mut VecDeque<Request>) -> Result<(), Bad> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        // A header names `block_id` (and must name every column read).
        let header = names(text.trim_start_matches('#'))
            .iter()
            .any(|n| n.eq_ignore_ascii_case("block_id"));
        if text.starts_with('#') || header {
            if self.columns.is_none() && header {
                let body = text.trim_start_matches('#').trim();
                self.comma = body.contains(',');
                self.columns = Some(Columns::new(&names(body), &WANTED, &REQUIRED)?);
            }
            // A comment, or the header again (files concatenated).
            return Ok(());
        }
        if self.columns.is_none() {
            self.comma = text.contains(',');
            let row = if self.comma {
                text.split(',').map(str::trim).collect::<Vec<_>>()
            } else {
                text.split_whitespace().collect()
            };
            self.columns = Some(Tectonic::positional(&row, self.comma)?);
        }
        let c = self.columns.as_ref().expect("set above");
        let row: Vec<&str> = if self.comma {
            text.split(',').map(str::trim).collect()
        } else {
            text.split_whitespace().collect()
        };
        c.check_width(&row)?;
        let issue = seconds_ns(c.need(&row, 0, "op_time")?, "op_time")?;
        let block = uint(c.need(&row, 1, "block_id")?, "block_id")?;
        let within = uint(c.need(&row, 2, "io_offset")?, "io_offset")?;
        let bytes = uint32(c.need(&row, 3, "io_size")?, "io_size")?;
        let write = direction(c.need(&row, 4, "op_name")?)?;
        let mib = match c.get(&row, 5) {
            Some(t) => uint(t, "block_id_size")?,
            None => BLOCK_MIB,
        };
        let span = times(mib, 1 << 20, "block_id_size", "MiB")?;
        let offset = times(block, span, "block_id", "blocks")?
            .checked_add(within)
            .ok_or_else(|| Bad::new("io_offset", "the address is past 2^64 bytes"))?;
        out.push_back(Request {
            issue_ns: issue,
            offset,
            bytes,
            write,
            device: c.get(&row, 6).map(str::to_string),
            ..Request::default()
        });
        Ok(())
    }
}

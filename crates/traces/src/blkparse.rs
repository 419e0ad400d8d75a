//! blkparse's default text output.
//!
//! Layout (blktrace's `blkparse_fmt.c`, `process_default`, and
//! `blkparse(1)`): every event line starts with the header
//! `"%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s "`: device `major,minor`, CPU,
//! sequence number, time in seconds and nanoseconds from the first event,
//! pid, action and RWBS. Then, by action:
//!
//! - `Q` (queued), `D` (issued to the driver), `I` (inserted), `B`
//!   (bounced): `sector + sectors [command]`, or with `-t`
//!   `sector + sectors (elapsed) [command]`; a passthrough (PC) request
//!   prints `bytes (cdb) [command]` instead;
//! - `C` (completed), `R` (requeued): `sector + sectors [error]`, or
//!   `sector + sectors (elapsed) [error]`;
//! - `M`, `F` (back and front merge), `G`, `S`: `sector + sectors [command]`;
//! - `U` (unplug, `BLK_TA_UNPLUG_IO`) and `UT` (unplug from the
//!   scheduler, `BLK_TA_UNPLUG_TIMER`): `[command] depth`, the requests
//!   the unplug released (blkparse_fmt.c: `HEADER "[%C] %U\n"`);
//! - `P` (plug): `[command]`; it and `T`, `A`, `X`, `m` and the zoned
//!   actions have their own tails, which this reader checks only up to
//!   the header.
//!
//! RWBS (kernel `blk_fill_rwbs`): `F` preflush, then `W`/`R`/`D`/`N`,
//! then `F` FUA, `A` readahead, `S` sync, `M` metadata.
//!
//! After the events blkparse prints a summary (`CPU0 (8,0):`,
//! `Total (8,0):`, `Throughput (R/W): ...`, `Events (8,0): ...`); it ends
//! the events, and is skipped.
//!
//! Requests: each `C` is paired with the `Q` and `D` at the same device and
//! sector (merges followed), as blkparse pairs them; `issue_ns` is the `D`
//! (the `Q` when no `D` was traced), `complete_ns` the `C`, pid and command
//! the `Q`'s submitter. Requests come out in completion order; those still
//! in flight at the end come last, without `complete_ns`. A `C` whose
//! request began before the trace did is skipped. A request without data
//! (a flush: blkparse prints its `Q` and `D` without a sector) pairs with
//! the next completion without data on its device, at offset 0; two such
//! in flight at once on one device pair as one. Times are from the
//! trace's first event, as blkparse prints them. An unplug makes the
//! requests it releases a plugged batch ([`crate::Batch`]; the pairing's
//! module says how).

use std::collections::VecDeque;

use crate::num::{decimal_ns, quoted, uint, uint32, Bad};
use crate::pairing::{rwbs, Act, Event, Pairing};
use crate::text::{Fields, LineFormat};
use crate::Request;

#[derive(Default)]
pub(crate) struct Blkparse {
    pairing: Pairing,
    /// The summary has begun: no events follow.
    summary: bool,
}

/// `major,minor`.
fn device(s: &str) -> Result<(u32, u32), Bad> {
    let bad = || Bad::new("device", format!("{} is not major,minor", quoted(s)));
    let (a, b) = s.split_once(',').ok_or_else(bad)?;
    Ok((
        uint32(a, "device").map_err(|_| bad())?,
        uint32(b, "device").map_err(|_| bad())?,
    ))
}

/// The bracketed name at the end of a line (`[kworker/0:1H]`), which may
/// hold spaces.
fn bracketed(tail: &str) -> Option<&str> {
    let open = tail.find('[')?;
    let close = tail.rfind(']')?;
    (close > open).then(|| &tail[open + 1..close])
}

/// The bracketed name in `fields`, the rest of a line split at
/// whitespace, as [`bracketed`] finds it in them joined by single spaces;
/// without a copy when it is one field (`[db_bench]`), as it mostly is.
fn command<'a>(mut fields: impl Iterator<Item = &'a str>) -> Option<String> {
    let first = fields.next()?;
    let Some(second) = fields.next() else {
        return bracketed(first).map(str::to_string);
    };
    let mut tail = format!("{first} {second}");
    for f in fields {
        tail.push(' ');
        tail.push_str(f);
    }
    bracketed(&tail).map(str::to_string)
}

impl LineFormat for Blkparse {
    fn line(&mut self, text: &str, out: &mut VecDeque<Request>) -> Result<(), Bad> {
        let trimmed = text.trim();
        if trimmed.is_empty() || self.summary {
            return Ok(());
        }
        let mut tokens = Fields::new(trimmed);
        let first = tokens.next().unwrap_or("");
        if first.starts_with("CPU") || matches!(first, "Total" | "Throughput" | "Events" | "Skips")
        {
            self.summary = true;
            return Ok(());
        }
        let dev = device(first)?;
        let mut next = |field: &'static str| {
            tokens.next().ok_or_else(|| {
                Bad::new(
                    field,
                    "missing (a blkparse event line has at least 7 fields)",
                )
            })
        };
        let cpu = uint32(next("cpu")?, "cpu")?;
        uint(next("sequence")?, "sequence")?;
        let time = decimal_ns(next("time")?, 1_000_000_000, "time")?;
        let pid = uint32(next("pid")?, "pid")?;
        let action = next("action")?;
        let flags = next("rwbs")?;
        // The first three fields after the RWBS in place (no vector per
        // line, issue 41 item 7); the rest stay in `tokens`.
        let rest = [tokens.next(), tokens.next(), tokens.next()];
        let act = match action {
            "Q" => Act::Queue,
            "D" => Act::Issue,
            "C" => Act::Complete,
            "M" => Act::BackMerge,
            "F" => Act::FrontMerge,
            "U" | "UT" => {
                // `[command] depth`: the depth is the last word, the
                // command (which may hold spaces) before it.
                let (words, last) = rest
                    .into_iter()
                    .flatten()
                    .chain(tokens.by_ref())
                    .fold((0, None), |(n, _), w| (n + 1, Some(w)));
                let depth = last.filter(|_| words >= 2).ok_or_else(|| {
                    Bad::new("depth", "missing (an unplug line ends with its depth)")
                })?;
                Act::Unplug(uint32(depth, "depth")?)
            }
            a if a.len() <= 2 && a.bytes().all(|b| b.is_ascii_alphabetic()) => return Ok(()),
            a => {
                return Err(Bad::new(
                    "action",
                    format!("{} is not a blkparse action", quoted(a)),
                ))
            }
        };
        let (write, discard, sync, flush) = rwbs(flags)
            .ok_or_else(|| Bad::new("rwbs", format!("{} is not an RWBS string", quoted(flags))))?;
        // `sector + sectors ...`; a request without data prints no size
        // (`Q`, `D`: a bare `[command]`; `C`: `sector [error]`) and pairs
        // by device alone; anything else (a passthrough request's
        // `bytes (cdb)`, `-t`'s `(elapsed)` alone) is not a block request.
        let no_data = match (act, rest[0], rest[1]) {
            (Act::Queue | Act::Issue, Some(w), _) => w.starts_with('['),
            (Act::Complete, Some(s), Some(w)) => {
                w.starts_with('[') && s.bytes().all(|b| b.is_ascii_digit())
            }
            _ => false,
        };
        // The command (a `Q`'s) is in the fields after the size: all of
        // them without a size.
        let (sector, bytes, tail) = match rest {
            _ if matches!(act, Act::Unplug(_)) => (crate::pairing::NO_SECTOR, 0, [None; 3]),
            _ if no_data => (crate::pairing::NO_SECTOR, 0, rest),
            [Some(s), Some("+"), Some(n)] => {
                let sector = uint(s, "sector")?;
                let sectors = uint(n, "sectors")?;
                let bytes = crate::num::sectors_to_bytes(sectors, "sectors")?;
                (sector, bytes, [None; 3])
            }
            _ => return Ok(()),
        };
        let comm = match act {
            Act::Queue => command(tail.into_iter().flatten().chain(tokens)),
            _ => None,
        };
        let event = Event {
            time,
            device: dev,
            sector,
            bytes,
            act,
            write,
            discard,
            sync,
            flush,
            pid,
            comm,
            cpu,
        };
        if let Some(r) = self
            .pairing
            .event(event)
            .map_err(|why| Bad::new("sector", why))?
        {
            out.push_back(r);
        }
        Ok(())
    }

    fn end(&mut self, out: &mut VecDeque<Request>) -> Result<(), Bad> {
        out.extend(self.pairing.drain());
        Ok(())
    }
}

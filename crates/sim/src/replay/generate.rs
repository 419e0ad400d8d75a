//! A generated request stream for the streaming replay's memory test and
//! its benchmark (issue 41 item 3): made lazily by an iterator, never a
//! file, so that a stream of hundreds of millions of requests costs no
//! memory of its own.

use policy::{Marks, Nanos, US};

use super::TraceIo;

/// `n` requests of `procs` processes in turn, one every `gap` ns from 1 ms
/// on, each `service` long; every fifth a write (unmarked), the rest
/// reads (Urgent); sizes 4 KiB and 8 KiB in turn.
pub fn steady(
    n: u64,
    procs: u32,
    gap: Nanos,
    service: Nanos,
) -> impl Iterator<Item = Result<TraceIo, String>> + 'static {
    let procs = u64::from(procs.max(1));
    (0..n).map(move |i| {
        let issue = 1_000 * US + i * gap;
        let write = i % 5 == 4;
        Ok(TraceIo {
            issue_ns: issue,
            complete_ns: Some(issue + service),
            bytes: 4096 << (i % 2),
            write,
            marks: if write { Marks::NONE } else { Marks::URGENT },
            pid: Some(1000 + (i % procs) as u32),
        })
    })
}

/// The process's peak resident set (`VmHWM` in `/proc/self/status`,
/// proc(5)), bytes; `None` where there is none (not Linux).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

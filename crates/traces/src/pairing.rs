//! Pairing a request's issue with its completion by device and sector, as
//! blkparse does (blkparse.c: `log_track_queue`, `log_track_issue`,
//! `log_track_complete` find a request's earlier events by its device and
//! start sector; `log_track_frontmerge` moves a request whose start moved).
//! Used by the blkparse text reader and the blktrace binary reader.
//!
//! Plugged batches: the block layer holds a process's requests under a
//! plug (Linux block/blk-core.c, `blk_start_plug` .. `blk_finish_plug`;
//! block/blk-mq.c, `blk_add_rq_to_plug` fires `block_plug` when the first
//! request enters an empty plug) and releases them together
//! (`blk_mq_dispatch_plug_list` fires `block_unplug` with `nr_rq`, the
//! requests it releases to one queue; include/trace/events/block.h). The
//! plug event comes after the first request's `Q` (the bio is queued,
//! then its request added to the plug), so a batch is read from the
//! unplug alone: the `nr_rq` most recent requests its process queued on
//! that device and not yet dispatched (held by the plug, they reach the
//! driver only after the unplug); the last of them queued is the batch's
//! last. Fewer than two found (a plug around one request) is no batch.

// foldhash, not SipHash: the map is looked up on every event (issue 41 item 7;
// a trace is not an adversary across a network).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

use crate::Request;

/// The most requests held between their issue and their completion. The
/// block layer bounds what is in flight per device by its tags
/// (`nr_requests`, at most a few thousand per hardware queue); a trace that
/// holds more is losing completions (dropped events, a partial capture),
/// and is refused rather than held in memory.
pub const MAX_IN_FLIGHT: usize = 65_536;

/// What a block-layer event does to a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// Queued (`Q`): a new request, its submitter known.
    Queue,
    /// Dispatched to the driver (`D`).
    Issue,
    /// Completed by the device (`C`).
    Complete,
    /// Merged at the back of a request already queued (`M`): it completes
    /// with that request, not on its own.
    BackMerge,
    /// Merged at the front of a request already queued (`F`): that request
    /// now starts here.
    FrontMerge,
    /// A plug released (`U`, `UT`): this many requests of the process go
    /// to the driver together.
    Unplug(u32),
}

/// One event, as both readers decode it.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub time: u64,
    /// The device, `(major, minor)`.
    pub device: (u32, u32),
    pub sector: u64,
    pub bytes: u32,
    pub act: Act,
    pub write: bool,
    pub discard: bool,
    pub sync: bool,
    pub flush: bool,
    pub pid: u32,
    pub comm: Option<String>,
    /// The CPU that recorded the event.
    pub cpu: u32,
}

#[derive(Debug)]
struct Pending {
    queued: Option<u64>,
    issued: Option<u64>,
    bytes: u32,
    write: bool,
    discard: bool,
    sync: bool,
    flush: bool,
    pid: Option<u32>,
    comm: Option<String>,
    /// The CPU of its dispatch, else of its queueing.
    cpu: Option<u32>,
    /// Order of arrival, to hand back unfinished requests in issue order.
    seq: u64,
    /// The batch an unplug released it in.
    batch: Option<crate::Batch>,
}

type Key = (u32, u32, u64);

/// The sector of a request without data (a flush), which blkparse prints
/// without one: such requests pair with each other on their device.
pub(crate) const NO_SECTOR: u64 = u64::MAX;

fn offset_of(sector: u64) -> u64 {
    if sector == NO_SECTOR {
        0
    } else {
        sector.saturating_mul(512)
    }
}

#[derive(Default)]
pub(crate) struct Pairing {
    pending: HashMap<Key, Pending>,
    seq: u64,
    /// Batches numbered so far.
    batches: u64,
}

fn device_name(d: (u32, u32)) -> String {
    format!("{},{}", d.0, d.1)
}

impl Pairing {
    /// Applies one event; a completion gives its request back. A
    /// completion with no earlier event (the trace began while it was in
    /// flight) gives nothing. `Err` says why the trace cannot be held.
    pub fn event(&mut self, e: Event) -> Result<Option<Request>, String> {
        let key = (e.device.0, e.device.1, e.sector);
        match e.act {
            Act::Queue => {
                self.seq += 1;
                self.pending.insert(
                    key,
                    Pending {
                        queued: Some(e.time),
                        issued: None,
                        bytes: e.bytes,
                        write: e.write,
                        discard: e.discard,
                        sync: e.sync,
                        flush: e.flush,
                        pid: Some(e.pid),
                        comm: e.comm,
                        cpu: Some(e.cpu),
                        seq: self.seq,
                        batch: None,
                    },
                );
            }
            Act::Issue => {
                self.seq += 1;
                let seq = self.seq;
                let p = self.pending.entry(key).or_insert_with(|| Pending {
                    queued: None,
                    issued: None,
                    bytes: 0,
                    write: false,
                    discard: false,
                    sync: false,
                    flush: false,
                    // Who dispatched it is not who submitted it (a kworker,
                    // the scheduler): unknown without the `Q`.
                    pid: None,
                    comm: None,
                    cpu: None,
                    seq,
                    batch: None,
                });
                // A requeued request is dispatched again: the last dispatch
                // is the one the device served.
                p.issued = Some(e.time);
                p.cpu = Some(e.cpu);
                // The dispatched request holds every bio merged into it.
                p.bytes = p.bytes.max(e.bytes);
                p.write |= e.write;
                p.discard |= e.discard;
                p.sync |= e.sync;
                p.flush |= e.flush;
            }
            Act::BackMerge => {
                self.pending.remove(&key);
            }
            Act::FrontMerge => {
                let next = e.sector + u64::from(e.bytes / 512);
                if let Some(mut p) = self.pending.remove(&(key.0, key.1, next)) {
                    let mine = self.pending.remove(&key);
                    p.bytes = p.bytes.saturating_add(e.bytes);
                    if let Some(m) = mine {
                        // The front bio's submitter stands for the request.
                        p.pid = m.pid.or(p.pid);
                        p.comm = m.comm.or(p.comm);
                        p.queued = match (m.queued, p.queued) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                    }
                    self.pending.insert(key, p);
                }
            }
            Act::Unplug(depth) => self.unplug(e.device, e.pid, depth),
            Act::Complete => {
                let Some(p) = self.pending.remove(&key) else {
                    return Ok(None);
                };
                let bytes = if e.bytes > 0 { e.bytes } else { p.bytes };
                return Ok(Some(Request {
                    issue_ns: p.issued.or(p.queued).unwrap_or(e.time),
                    complete_ns: Some(e.time),
                    offset: offset_of(e.sector),
                    bytes,
                    write: p.write || e.write,
                    discard: p.discard || e.discard,
                    sync: p.sync || e.sync,
                    flush: p.flush || e.flush,
                    pid: p.pid,
                    comm: p.comm,
                    device: Some(device_name(e.device)),
                    cpu: p.cpu,
                    batch: p.batch,
                    ..Request::default()
                }));
            }
        }
        if self.pending.len() > MAX_IN_FLIGHT {
            return Err(format!(
                "more than {MAX_IN_FLIGHT} requests queued and not completed (lost completions?)"
            ));
        }
        Ok(None)
    }

    /// An unplug of `depth` requests by `pid` on `device`: the batch is
    /// the `depth` latest requests it queued there and the driver has not
    /// yet been handed (the module's comment).
    fn unplug(&mut self, device: (u32, u32), pid: u32, depth: u32) {
        if depth < 2 {
            return;
        }
        let mut held: Vec<(u64, Key)> = self
            .pending
            .iter()
            .filter(|(k, p)| {
                (k.0, k.1) == device
                    && p.pid == Some(pid)
                    && p.issued.is_none()
                    && p.batch.is_none()
            })
            .map(|(k, p)| (p.seq, *k))
            .collect();
        held.sort_unstable_by_key(|h| std::cmp::Reverse(h.0));
        held.truncate(depth as usize);
        if held.len() < 2 {
            return;
        }
        self.batches += 1;
        let size = held.len() as u32;
        for (i, (_, k)) in held.iter().enumerate() {
            if let Some(p) = self.pending.get_mut(k) {
                p.batch = Some(crate::Batch {
                    id: self.batches,
                    size,
                    last: i == 0,
                });
            }
        }
    }

    /// The requests still in flight at the end of the trace, in the order
    /// they arrived, without a completion time.
    pub fn drain(&mut self) -> Vec<Request> {
        let mut left: Vec<(Key, Pending)> = self.pending.drain().collect();
        left.sort_by_key(|(_, p)| p.seq);
        left.into_iter()
            .map(|((maj, min, sector), p)| Request {
                issue_ns: p.issued.or(p.queued).unwrap_or(0),
                complete_ns: None,
                offset: offset_of(sector),
                bytes: p.bytes,
                write: p.write,
                discard: p.discard,
                sync: p.sync,
                flush: p.flush,
                pid: p.pid,
                comm: p.comm,
                device: Some(device_name((maj, min))),
                cpu: p.cpu,
                batch: p.batch,
                ..Request::default()
            })
            .collect()
    }
}

/// Reads the block layer's RWBS string (kernel `blk_fill_rwbs`: an
/// optional `F` for a preflush; the operation `W`, `R`, `D` (discard),
/// `DE` (secure erase), `F` (flush) or `N` (none); then `F` for FUA, `A`
/// readahead, `S` sync, `M` metadata): (write, discard, sync, flush).
pub(crate) fn rwbs(s: &str) -> Option<(bool, bool, bool, bool)> {
    if s.is_empty() || !s.bytes().all(|b| b"FWRDENASMPBZ".contains(&b)) {
        return None;
    }
    Some((
        s.contains('W'),
        s.contains('D'),
        s.contains('S'),
        s.contains('F'),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(time: u64, sector: u64, bytes: u32, act: Act) -> Event {
        Event {
            time,
            device: (8, 0),
            sector,
            bytes,
            act,
            write: false,
            discard: false,
            sync: false,
            flush: false,
            pid: 7,
            comm: Some("fio".into()),
            cpu: 0,
        }
    }

    #[test]
    fn a_front_merge_moves_the_request_to_its_new_start() {
        let mut p = Pairing::default();
        assert_eq!(p.event(ev(0, 16, 4096, Act::Queue)).unwrap(), None);
        // A bio at sector 8 merged in front of the request at 16.
        assert_eq!(p.event(ev(5, 8, 4096, Act::Queue)).unwrap(), None);
        assert_eq!(p.event(ev(6, 8, 4096, Act::FrontMerge)).unwrap(), None);
        assert_eq!(p.event(ev(9, 8, 8192, Act::Issue)).unwrap(), None);
        let r = p.event(ev(20, 8, 8192, Act::Complete)).unwrap().unwrap();
        assert_eq!(
            (r.issue_ns, r.complete_ns, r.offset, r.bytes),
            (9, Some(20), 4096, 8192)
        );
        assert!(p.drain().is_empty());
    }

    #[test]
    fn a_requeued_request_is_issued_at_its_last_dispatch() {
        let mut p = Pairing::default();
        p.event(ev(0, 8, 4096, Act::Queue)).unwrap();
        p.event(ev(3, 8, 4096, Act::Issue)).unwrap();
        p.event(ev(10, 8, 4096, Act::Issue)).unwrap();
        let r = p.event(ev(15, 8, 4096, Act::Complete)).unwrap().unwrap();
        assert_eq!(
            (r.issue_ns, r.pid, r.comm.as_deref()),
            (10, Some(7), Some("fio"))
        );
    }

    #[test]
    fn a_completion_without_its_issue_is_skipped_and_too_many_in_flight_refused() {
        let mut p = Pairing::default();
        assert_eq!(p.event(ev(1, 8, 4096, Act::Complete)).unwrap(), None);
        for s in 0..MAX_IN_FLIGHT as u64 {
            p.event(ev(s, s * 8, 4096, Act::Queue)).unwrap();
        }
        let e = p.event(ev(0, u64::MAX - 1, 4096, Act::Queue)).unwrap_err();
        assert!(e.starts_with("more than 65536 requests"), "{e}");
    }
}

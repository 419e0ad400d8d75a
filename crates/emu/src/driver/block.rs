//! The block layer between the job threads' submissions and the queue
//! pairs: FastResponse's Limited Depth scheduler ([`host::ld`], FR 3.3,
//! Fig. 9) applied to real commands, as the simulator applies it
//! (`crates/sim/src/world/block.rs`).
//!
//! - A non-critical request is split into pieces (32 KiB by default), each
//!   its own command; pieces go to the SQ only while a token is free. A
//!   critical request (its job has `critical=1`) bypasses LD: one command,
//!   at once.
//! - The interrupt handler (or the poller) that reaps a piece's CQE
//!   completes it here: its token goes back and the pieces that get it are
//!   written into their SQs there and then (LD's `completed_request` hook in
//!   the kernel's completion path). The request is delivered to its thread
//!   at its last piece: the job sees one completion.
//! - A piece is a command of the block layer, not of a thread: its tag's
//!   owner is [`LD_OWNER`] and its cookie a slot here, which names the LD
//!   piece and its request.
//!
//! Choices of ours:
//! - A piece carries its request's marks (Urgent, Barrier): `bio_split`
//!   clones the bio's `bi_opf`, where the authors' kernel keeps the marks.
//! - A piece's data is its request's buffer at the piece's offset within
//!   the request, so the device reads and writes the request's own bytes.
//! - The handler never sleeps: a dispatched piece that finds no free tag
//!   waits in a backlog, written at the next completion or submission on
//!   any queue (a tag is held only by a command in flight, whose completion
//!   comes).
//! - The count of non-critical pieces in flight is the host's: from the
//!   dispatch into the SQ to the reap of the CQE. The device holds a subset
//!   of them, so the maximum here bounds what the device ever had.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use host::ld::{Dispatch, Ld, LdConfig, Req};
use policy::{Marks, Nanos};

use crate::config::Recording;
use crate::mailbox::Delivered;
use crate::queue::{QueuePair, Request};
use crate::sys::Clock;

/// The owner of a tag that holds an LD piece (no waiter has this index).
pub(crate) const LD_OWNER: u32 = u32::MAX;

/// What the block layer did, over the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockCount {
    /// Requests the threads submitted, and those of critical jobs.
    pub requests: u64,
    pub critical: u64,
    /// Commands the block layer sent to the device (pieces).
    pub pieces: u64,
    /// The most non-critical pieces in flight at once (dispatch to reap).
    pub max_noncritical_in_flight: u64,
    /// The most pieces in flight at once, critical ones included.
    pub max_in_flight: u64,
}

/// `ld,tokens=N,split=SIZE[,opportunistic]`, as `sim --block-scheduler`
/// prints it.
pub fn ld_name(c: &LdConfig) -> String {
    let split = if c.split % 1024 == 0 {
        format!("{}k", c.split / 1024)
    } else {
        c.split.to_string()
    };
    format!(
        "ld,tokens={},split={split}{}",
        c.tokens,
        if c.opportunistic {
            ",opportunistic"
        } else {
            ""
        }
    )
}

#[derive(Clone, Copy, Debug)]
struct Parent {
    buf: usize,
    offset: u64,
    write: bool,
    marks: Marks,
    /// Bytes its pieces moved so far, or the first piece's error.
    bytes: i64,
    error: Option<i32>,
}

struct Inner {
    ld: Ld,
    /// Requests in the block layer, by `owner << 32 | cookie`.
    parents: HashMap<u64, Parent>,
    /// Per slot (a piece command's cookie): its LD piece and request key.
    slots: Vec<(u64, u64)>,
    free_slots: Vec<u32>,
    /// Per queue pair: pieces dispatched that found no free tag.
    backlog: Vec<VecDeque<Request>>,
    count: BlockCount,
    /// Per waiter: the block-layer wait (submit to first dispatch, FR's
    /// T_Blk) of the requests completed while the window was open, summed
    /// in ns, and their count.
    wait: Vec<(Nanos, u64)>,
}

/// LD over every queue pair of a driver.
pub struct BlockLayer {
    name: String,
    queues: Vec<Arc<QueuePair>>,
    clock: Clock,
    recording: Recording,
    inner: Mutex<Inner>,
    /// Pieces waiting in a backlog (read without the lock).
    backlogged: AtomicU64,
}

impl BlockLayer {
    pub(crate) fn new(
        cfg: &LdConfig,
        queues: Vec<Arc<QueuePair>>,
        waiters: usize,
        clock: Clock,
        recording: Recording,
    ) -> BlockLayer {
        let cfg = LdConfig {
            queues: queues.len(),
            ..cfg.clone()
        };
        BlockLayer {
            name: ld_name(&cfg),
            inner: Mutex::new(Inner {
                ld: Ld::new(cfg),
                parents: HashMap::new(),
                slots: Vec::new(),
                free_slots: Vec::new(),
                backlog: vec![VecDeque::new(); queues.len()],
                count: BlockCount::default(),
                wait: vec![(0, 0); waiters],
            }),
            queues,
            clock,
            recording,
            backlogged: AtomicU64::new(0),
        }
    }

    /// A thread's requests into queue pair `queue`: critical ones go to the
    /// SQ whole, non-critical ones as the pieces that get tokens. Pieces for
    /// the caller's own queue pair wait for a free tag (back-pressure, as
    /// [`QueuePair::submit`]); returns how many times it waited.
    pub(crate) fn submit(&self, queue: usize, owner: u32, critical: bool, reqs: &[Request]) -> u64 {
        let mut own = Vec::new();
        {
            let mut inner = self.inner.lock().expect("block lock");
            self.enter(&mut inner, queue, owner, critical, reqs, Some(&mut own));
            self.flush(&mut inner);
        }
        if own.is_empty() {
            0
        } else {
            self.queues[queue].submit(LD_OWNER, &own)
        }
    }

    /// As `BlockLayer::submit`, from a thread that must never sleep (the
    /// device's own fetch, `exec`'s ingress): every piece LD dispatches is
    /// written where a tag is free, the rest wait in the backlog for the
    /// next completion.
    pub fn submit_nowait(&self, queue: usize, owner: u32, critical: bool, reqs: &[Request]) {
        let mut inner = self.inner.lock().expect("block lock");
        self.enter(&mut inner, queue, owner, critical, reqs, None);
        self.flush(&mut inner);
    }

    /// The requests into LD; the pieces it dispatches for `queue` into
    /// `own` when given, else into the backlog.
    fn enter(
        &self,
        inner: &mut Inner,
        queue: usize,
        owner: u32,
        critical: bool,
        reqs: &[Request],
        mut own: Option<&mut Vec<Request>>,
    ) {
        let now = self.clock.now();
        for r in reqs {
            let key = u64::from(owner) << 32 | u64::from(r.cookie);
            inner.parents.insert(
                key,
                Parent {
                    buf: r.buf,
                    offset: r.offset,
                    write: r.write,
                    marks: r.marks,
                    bytes: 0,
                    error: None,
                },
            );
            inner.count.requests += 1;
            inner.count.critical += u64::from(critical);
            let out = inner.ld.submit(
                now,
                Req {
                    id: key,
                    critical,
                    offset: r.offset,
                    len: u64::from(r.len),
                    queue,
                },
            );
            self.place(inner, &out, own.as_deref_mut().map(|l| (queue, l)));
        }
    }

    /// The handler reaped these pieces (slot, result, error) of queue
    /// pairs of this block layer: returns each request done as its owner
    /// and its completion, and writes the pieces that got the freed tokens
    /// (and any backlog) into their SQs.
    pub(crate) fn completed(&self, pieces: &[Delivered], done: &mut Vec<(u32, Delivered)>) {
        let mut inner = self.inner.lock().expect("block lock");
        let inner = &mut *inner;
        let now = self.clock.now();
        for p in pieces {
            let (piece, key) = inner.slots[p.cookie as usize];
            inner.free_slots.push(p.cookie);
            let parent = inner.parents.get_mut(&key).expect("a piece's request");
            if p.error {
                parent.error.get_or_insert(p.result);
            } else {
                parent.bytes += i64::from(p.result.max(0));
            }
            let c = inner
                .ld
                .completed(now, piece)
                .expect("a reaped piece is in flight");
            if let Some(d) = c.done {
                let parent = inner.parents.remove(&key).expect("its request");
                let owner = (key >> 32) as u32;
                if self.recording.is_open() {
                    let w = &mut inner.wait[owner as usize];
                    w.0 += d.first_dispatch.saturating_sub(d.submitted);
                    w.1 += 1;
                }
                done.push((
                    owner,
                    Delivered {
                        cookie: key as u32,
                        result: parent
                            .error
                            .unwrap_or(parent.bytes.min(i64::from(i32::MAX)) as i32),
                        error: parent.error.is_some(),
                    },
                ));
            }
            self.place(inner, &c.dispatch, None);
        }
        self.flush(inner);
    }

    /// Whether pieces wait for a tag (to be written at the next pass).
    pub(crate) fn has_backlog(&self) -> bool {
        self.backlogged.load(Ordering::Relaxed) > 0
    }

    pub fn count(&self) -> BlockCount {
        self.inner.lock().expect("block lock").count
    }

    /// The scheduler, as `sim --block-scheduler` spells it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Per waiter: the summed block-layer wait (submit to first dispatch,
    /// FR's T_Blk) of its requests completed in the window, and their count.
    pub fn waits(&self) -> Vec<(Nanos, u64)> {
        self.inner.lock().expect("block lock").wait.clone()
    }

    /// Turns LD's dispatches into piece commands: into `own` for the
    /// caller's queue pair when it may wait for tags, else into the
    /// backlog (written by `flush` where tags are free).
    fn place(
        &self,
        inner: &mut Inner,
        out: &[Dispatch],
        mut own: Option<(usize, &mut Vec<Request>)>,
    ) {
        for d in out {
            let slot = match inner.free_slots.pop() {
                Some(s) => {
                    inner.slots[s as usize] = (d.piece, d.parent);
                    s
                }
                None => {
                    inner.slots.push((d.piece, d.parent));
                    (inner.slots.len() - 1) as u32
                }
            };
            let parent = inner.parents[&d.parent];
            let within = d.offset - parent.offset;
            let req = Request {
                cookie: slot,
                write: parent.write,
                offset: d.offset,
                len: d.len as u32,
                buf: parent.buf + within as usize,
                marks: parent.marks,
            };
            inner.count.pieces += 1;
            match &mut own {
                Some((q, list)) if *q == d.queue => list.push(req),
                _ => {
                    inner.backlog[d.queue].push_back(req);
                    self.backlogged.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let c = &mut inner.count;
        c.max_noncritical_in_flight = c
            .max_noncritical_in_flight
            .max(u64::from(inner.ld.noncritical_in_flight()));
        c.max_in_flight = c.max_in_flight.max(inner.ld.in_flight() as u64);
    }

    fn flush(&self, inner: &mut Inner) {
        for (q, backlog) in self.queues.iter().zip(&mut inner.backlog) {
            if backlog.is_empty() {
                continue;
            }
            let n = q.try_submit(LD_OWNER, backlog.make_contiguous());
            backlog.drain(..n);
            self.backlogged.fetch_sub(n as u64, Ordering::Relaxed);
        }
    }
}

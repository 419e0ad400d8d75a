//! `ld`: FastResponse's Limited Depth (LD) block-layer scheduler (FR 3.3,
//! Fig. 9).
//!
//! - Critical requests bypass the scheduler: they go to the device at once,
//!   whole, and never wait for a token ("we bypass these I/O queues for
//!   latency-sensitive I/Os because I/O scheduling often has a negative
//!   impact on the latency", FR 3.3).
//! - Non-critical requests are split into pieces of `split` bytes (32 KB,
//!   "the optimal block size ... can achieve almost the maximum bandwidth of
//!   ULL SSDs", FR 3.3), queued in ascending LBA order, consecutively, on the
//!   dispatch queue of their hardware queue ("LD attaches a dispatch queue to
//!   each hardware queue", FR 3.3). The parent completes when its last piece
//!   does.
//! - A device-wide pool of tokens bounds the non-critical pieces in flight:
//!   "each non-critical request is dispatched with a token which is released
//!   during the I/O completion. Thus, non-critical requests are blocked if
//!   there is no available token" (FR 3.3). We take the in-flight reading of
//!   FR 3.3 (the authors' code is an `sbitmap_queue` released at
//!   completion), not FR 4.5's "in a period of time", which reads like a rate.
//!
//! Choices where the paper is silent (see the digest, A.2.1 and A.6):
//! - The default token count is 8 ([`DEFAULT_TOKENS`]); `tokens` is a
//!   parameter for Fig. 19a's sweep.
//! - Optionally, a critical request takes a free token if one is free
//!   without waiting, and holds it until it completes, as the authors'
//!   `ld_prepare_token` does ([`LdConfig::opportunistic`]); off by default,
//!   as the paper has critical I/O outside the budget.
//! - A parent's pieces are appended to its queue together in ascending LBA
//!   order; the queue is FIFO across parents. FR 3.3 inserts "in order
//!   according to their LBAs so that they can be dispatched consecutively";
//!   the authors' LD source has no sort either (`bio_split` yields the pieces
//!   in ascending order). A queue sorted by LBA across parents would let
//!   a stream of low LBAs starve a high one.
//! - When several hardware queues wait for tokens, a freed token goes to the
//!   queue that has waited longest, one piece at a time, round robin (the
//!   kernel wakes the `sbitmap_queue` waiters in turn). No queue starves.
//! - Pieces start at the request's offset and are cut every `split` bytes,
//!   the last one shorter (Linux 5.3's `blk_bio_segment_split` cuts at
//!   `max_sectors` from the bio's start; the authors set the size with
//!   `max_sectors_kb`, digest A.2.1). The authors' SYNC/ASYNC domains
//!   (a Kyber inheritance) are not modelled: the paper does not mention them.
//!
//! Time is passed in only to report how long each request waited in the
//! block layer (FR Fig. 5's T_Blk); no decision depends on it.

use policy::Nanos;
use std::collections::{HashMap, VecDeque};
use std::fmt;

/// Tokens by default: 8. FR 2.2 (Fig. 6) finds that past a queue depth of
/// 8 the Optane's throughput stops growing while latency rises, and advises
/// "no more than 8"; the authors' README sets `iosched/depth` to 8; Fig. 16
/// shows B-Opt holding the device's queue depth "about 10". The authors'
/// compiled-in `ld_depth = 32` is what the README overrides.
pub const DEFAULT_TOKENS: u32 = 8;

/// The split size: 32 KB (FR 2.2, Fig. 6: the Optane 900P "approaches its
/// maximum bandwidth when the request size increases to 32 KB"; FR 3.3).
/// Specific to that device: recalibrate it for another (digest A.6, item 4).
pub const DEFAULT_SPLIT: u64 = 32 * 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LdConfig {
    /// Non-critical pieces in flight at most, device-wide (at least 1).
    pub tokens: u32,
    /// Non-critical requests are cut into pieces of this many bytes (at
    /// least 1).
    pub split: u64,
    /// Hardware queues, each with its own dispatch queue (at least 1).
    pub queues: usize,
    /// A critical request takes a free token without waiting, as the
    /// authors' code does (digest A.2.1); off: as the paper, critical I/O
    /// never touches the tokens.
    pub opportunistic: bool,
}

impl Default for LdConfig {
    fn default() -> Self {
        LdConfig {
            tokens: DEFAULT_TOKENS,
            split: DEFAULT_SPLIT,
            queues: 1,
            opportunistic: false,
        }
    }
}

/// A request as the block layer receives it (a bio, FR 3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Req {
    /// The caller's id, handed back in [`Done`].
    pub id: u64,
    /// Latency-sensitive (FR 3.2: `REQ_CRITICAL` in `cmd_flags`).
    pub critical: bool,
    /// Byte offset on the device (the LBA in bytes).
    pub offset: u64,
    pub len: u64,
    /// The hardware queue it was submitted on (taken modulo the queues).
    pub queue: usize,
}

/// A piece sent to the device now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// Names the piece in [`Ld::completed`].
    pub piece: u64,
    /// The caller's id of the request it belongs to.
    pub parent: u64,
    pub offset: u64,
    pub len: u64,
    pub queue: usize,
    pub critical: bool,
    /// It holds a token until it completes.
    pub token: bool,
}

/// A request whose last piece has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub id: u64,
    pub critical: bool,
    pub submitted: Nanos,
    /// When its first piece went to the device: `first_dispatch -
    /// submitted` is its wait in the block layer.
    pub first_dispatch: Nanos,
    pub completed: Nanos,
    pub pieces: u32,
}

/// What a completion brings: pieces that got the freed token, and the
/// request it finished, if it was its last piece.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completed {
    pub dispatch: Vec<Dispatch>,
    pub done: Option<Done>,
}

/// [`Ld::completed`] was given a piece that is not in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownPiece(pub u64);

impl fmt::Display for UnknownPiece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ld: piece {} is not in flight", self.0)
    }
}

impl std::error::Error for UnknownPiece {}

#[derive(Clone, Copy, Debug)]
struct Piece {
    piece: u64,
    parent: u64,
    offset: u64,
    len: u64,
}

#[derive(Clone, Copy, Debug)]
struct Parent {
    id: u64,
    critical: bool,
    submitted: Nanos,
    first_dispatch: Option<Nanos>,
    pieces: u32,
    outstanding: u32,
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    parent: u64,
    token: bool,
}

/// The LD scheduler of one device.
#[derive(Clone, Debug)]
pub struct Ld {
    cfg: LdConfig,
    free_tokens: u32,
    /// One dispatch queue per hardware queue (FR 3.3, Fig. 9).
    queues: Vec<VecDeque<Piece>>,
    /// Hardware queues with pieces waiting for a token, longest waiting
    /// first; each at most once.
    waiting: VecDeque<usize>,
    in_flight: HashMap<u64, InFlight>,
    /// Requests not yet done, by our own key (the caller's ids may repeat).
    parents: HashMap<u64, Parent>,
    next_piece: u64,
    next_parent: u64,
    noncritical_in_flight: u32,
}

impl Ld {
    pub fn new(mut cfg: LdConfig) -> Self {
        cfg.tokens = cfg.tokens.max(1);
        cfg.split = cfg.split.max(1);
        cfg.queues = cfg.queues.max(1);
        Ld {
            free_tokens: cfg.tokens,
            queues: vec![VecDeque::new(); cfg.queues],
            cfg,
            waiting: VecDeque::new(),
            in_flight: HashMap::new(),
            parents: HashMap::new(),
            next_piece: 0,
            next_parent: 0,
            noncritical_in_flight: 0,
        }
    }

    pub fn config(&self) -> &LdConfig {
        &self.cfg
    }

    /// A request arrives at `now`; returns what goes to the device now.
    pub fn submit(&mut self, now: Nanos, req: Req) -> Vec<Dispatch> {
        let key = self.next_parent;
        self.next_parent += 1;
        let queue = req.queue % self.cfg.queues;
        if req.critical {
            // FR 3.3: bypass the dispatch queues, no split, no wait.
            let token = self.cfg.opportunistic && self.take_token();
            let piece = self.new_piece(key, req.offset, req.len);
            self.parents.insert(key, parent(&req, now, Some(now), 1));
            return vec![self.send(piece, queue, true, token)];
        }
        // FR 3.3: split into 32 KB pieces, queued consecutively in LBA order.
        let pieces = split(req.offset, req.len, self.cfg.split);
        self.parents
            .insert(key, parent(&req, now, None, pieces.len() as u32));
        for (offset, len) in pieces {
            let piece = self.new_piece(key, offset, len);
            self.queues[queue].push_back(piece);
        }
        if !self.waiting.contains(&queue) {
            self.waiting.push_back(queue);
        }
        self.dispatch(now)
    }

    /// The device completed `piece` at `now`: its token (if any) goes to the
    /// longest-waiting queue; its request is done if it was the last piece.
    pub fn completed(&mut self, now: Nanos, piece: u64) -> Result<Completed, UnknownPiece> {
        let flight = self.in_flight.remove(&piece).ok_or(UnknownPiece(piece))?;
        let parent = self
            .parents
            .get_mut(&flight.parent)
            .expect("a piece in flight has its parent");
        if !parent.critical {
            self.noncritical_in_flight -= 1;
        }
        parent.outstanding -= 1;
        let done = (parent.outstanding == 0).then(|| Done {
            id: parent.id,
            critical: parent.critical,
            submitted: parent.submitted,
            first_dispatch: parent.first_dispatch.unwrap_or(now),
            completed: now,
            pieces: parent.pieces,
        });
        if done.is_some() {
            self.parents.remove(&flight.parent);
        }
        if flight.token {
            self.free_tokens += 1;
        }
        Ok(Completed {
            dispatch: self.dispatch(now),
            done,
        })
    }

    /// Tokens free now.
    pub fn free_tokens(&self) -> u32 {
        self.free_tokens
    }

    /// Non-critical pieces at the device now.
    pub fn noncritical_in_flight(&self) -> u32 {
        self.noncritical_in_flight
    }

    /// Pieces at the device now, critical ones included (the device's queue
    /// depth, FR Fig. 16).
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Pieces waiting for a token on hardware queue `queue`.
    pub fn queued(&self, queue: usize) -> usize {
        self.queues.get(queue).map_or(0, VecDeque::len)
    }

    /// Requests submitted and not yet done.
    pub fn outstanding(&self) -> usize {
        self.parents.len()
    }

    fn take_token(&mut self) -> bool {
        let free = self.free_tokens > 0;
        if free {
            self.free_tokens -= 1;
        }
        free
    }

    fn new_piece(&mut self, parent: u64, offset: u64, len: u64) -> Piece {
        let piece = self.next_piece;
        self.next_piece += 1;
        Piece {
            piece,
            parent,
            offset,
            len,
        }
    }

    fn send(&mut self, piece: Piece, queue: usize, critical: bool, token: bool) -> Dispatch {
        self.in_flight.insert(
            piece.piece,
            InFlight {
                parent: piece.parent,
                token,
            },
        );
        let parent = self
            .parents
            .get_mut(&piece.parent)
            .expect("a queued piece has its parent");
        if !critical {
            self.noncritical_in_flight += 1;
        }
        Dispatch {
            piece: piece.piece,
            parent: parent.id,
            offset: piece.offset,
            len: piece.len,
            queue,
            critical,
            token,
        }
    }

    /// FR 3.3: a non-critical piece leaves its queue only with a token.
    /// Tokens go round robin over the waiting queues, one piece each.
    fn dispatch(&mut self, now: Nanos) -> Vec<Dispatch> {
        let mut out = Vec::new();
        while self.free_tokens > 0 {
            let Some(queue) = self.waiting.pop_front() else {
                break;
            };
            let Some(piece) = self.queues[queue].pop_front() else {
                continue;
            };
            self.free_tokens -= 1;
            let parent = self.parents.get_mut(&piece.parent).expect("parent");
            parent.first_dispatch.get_or_insert(now);
            out.push(self.send(piece, queue, false, true));
            if !self.queues[queue].is_empty() {
                self.waiting.push_back(queue);
            }
        }
        out
    }
}

fn parent(req: &Req, now: Nanos, first_dispatch: Option<Nanos>, pieces: u32) -> Parent {
    Parent {
        id: req.id,
        critical: req.critical,
        submitted: now,
        first_dispatch,
        pieces,
        outstanding: pieces,
    }
}

/// `[offset, offset + len)` cut every `size` bytes from `offset`, in
/// ascending order; an empty request (a flush) is one empty piece.
pub fn split(offset: u64, len: u64, size: u64) -> Vec<(u64, u64)> {
    let size = size.max(1);
    if len == 0 {
        return vec![(offset, 0)];
    }
    let mut pieces = Vec::with_capacity(len.div_ceil(size) as usize);
    let mut at = 0;
    while at < len {
        let n = size.min(len - at);
        pieces.push((offset + at, n));
        at += n;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB: u64 = 1024;

    fn req(id: u64, critical: bool, offset: u64, len: u64, queue: usize) -> Req {
        Req {
            id,
            critical,
            offset,
            len,
            queue,
        }
    }

    fn ld(tokens: u32, queues: usize, opportunistic: bool) -> Ld {
        Ld::new(LdConfig {
            tokens,
            queues,
            opportunistic,
            ..LdConfig::default()
        })
    }

    #[test]
    fn a_128k_request_is_four_32k_pieces_in_lba_order() {
        let mut ld = ld(8, 1, false);
        let out = ld.submit(0, req(7, false, 1000, 128 * KB, 0));
        let pieces: Vec<_> = out.iter().map(|d| (d.offset, d.len)).collect();
        assert_eq!(
            pieces,
            vec![
                (1000, 32 * KB),
                (1000 + 32 * KB, 32 * KB),
                (1000 + 64 * KB, 32 * KB),
                (1000 + 96 * KB, 32 * KB)
            ]
        );
        assert!(out.iter().all(|d| d.parent == 7 && d.token && !d.critical));
    }

    #[test]
    fn the_last_piece_is_the_remainder() {
        assert_eq!(
            split(0, 70 * KB, 32 * KB),
            vec![(0, 32 * KB), (32 * KB, 32 * KB), (64 * KB, 6 * KB)]
        );
        assert_eq!(split(5, 0, 32 * KB), vec![(5, 0)]);
        assert_eq!(split(0, 4 * KB, 32 * KB), vec![(0, 4 * KB)]);
    }

    #[test]
    fn tokens_bound_noncritical_in_flight_and_a_completion_passes_its_token_on() {
        let mut ld = ld(2, 1, false);
        let out = ld.submit(0, req(1, false, 0, 128 * KB, 0));
        assert_eq!(out.len(), 2);
        assert_eq!(ld.queued(0), 2);
        assert_eq!(ld.free_tokens(), 0);
        let c = ld.completed(10, out[0].piece).unwrap();
        assert_eq!(c.dispatch.len(), 1);
        assert_eq!(c.dispatch[0].offset, 64 * KB);
        assert_eq!(c.done, None);
        assert_eq!(ld.noncritical_in_flight(), 2);
    }

    #[test]
    fn the_parent_completes_at_its_last_piece_whatever_the_order() {
        let mut ld = ld(8, 1, false);
        let out = ld.submit(5, req(9, false, 0, 96 * KB, 0));
        assert_eq!(ld.completed(20, out[2].piece).unwrap().done, None);
        assert_eq!(ld.completed(30, out[0].piece).unwrap().done, None);
        let done = ld.completed(40, out[1].piece).unwrap().done.unwrap();
        assert_eq!(
            done,
            Done {
                id: 9,
                critical: false,
                submitted: 5,
                first_dispatch: 5,
                completed: 40,
                pieces: 3
            }
        );
        assert_eq!(ld.outstanding(), 0);
    }

    #[test]
    fn a_request_is_outstanding_until_its_last_piece_completes() {
        let mut ld = ld(1, 1, false);
        let out = ld.submit(0, req(1, false, 0, 64 * KB, 0));
        ld.submit(0, req(2, true, 0, 4 * KB, 0));
        assert_eq!(ld.outstanding(), 2);
        // The first piece's completion sends the second: still outstanding.
        let c = ld.completed(1, out[0].piece).unwrap();
        assert_eq!(ld.outstanding(), 2);
        ld.completed(2, c.dispatch[0].piece).unwrap();
        assert_eq!(ld.outstanding(), 1);
    }

    #[test]
    fn a_critical_request_bypasses_a_full_queue_whole() {
        let mut ld = ld(1, 1, false);
        ld.submit(0, req(1, false, 0, 128 * KB, 0));
        let out = ld.submit(1, req(2, true, 0, 128 * KB, 0));
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].len, out[0].critical, out[0].token),
            (128 * KB, true, false)
        );
        // Its completion frees no token: the queue still waits.
        let c = ld.completed(9, out[0].piece).unwrap();
        assert!(c.dispatch.is_empty());
        assert_eq!(c.done.unwrap().first_dispatch, 1);
    }

    #[test]
    fn the_device_queue_depth_counts_critical_and_noncritical_pieces() {
        // FR Fig. 16 reads the device's queue depth: every piece at the
        // device, critical ones (outside the tokens) included; queued
        // pieces are not at the device.
        let mut ld = ld(2, 1, false);
        let out = ld.submit(0, req(1, false, 0, 128 * KB, 0));
        assert_eq!(ld.in_flight(), 2);
        let crit = ld.submit(1, req(2, true, 0, 4 * KB, 0));
        assert_eq!((ld.in_flight(), ld.noncritical_in_flight()), (3, 2));
        ld.completed(2, crit[0].piece).unwrap();
        assert_eq!(ld.in_flight(), 2);
        // A completion that passes its token on keeps the depth.
        ld.completed(3, out[0].piece).unwrap();
        assert_eq!(ld.in_flight(), 2);
    }

    #[test]
    fn opportunistic_critical_takes_a_free_token_and_never_waits() {
        let mut ld = ld(1, 1, true);
        let crit = ld.submit(0, req(1, true, 0, 4 * KB, 0));
        assert!(crit[0].token);
        // The critical request holds the only token: non-critical waits.
        assert!(ld.submit(1, req(2, false, 0, 4 * KB, 0)).is_empty());
        // With no token free a critical request still goes at once.
        let crit2 = ld.submit(2, req(3, true, 0, 4 * KB, 0));
        assert_eq!(crit2.len(), 1);
        assert!(!crit2[0].token);
        let c = ld.completed(3, crit[0].piece).unwrap();
        assert_eq!(c.dispatch.len(), 1);
        assert_eq!(c.dispatch[0].parent, 2);
    }

    #[test]
    fn waiting_queues_share_freed_tokens_round_robin() {
        let mut ld = ld(1, 2, false);
        // Queue 0 takes the only token and waits with two more pieces;
        // queue 1 then waits behind it with three.
        let first = ld.submit(0, req(1, false, 0, 96 * KB, 0));
        assert!(ld.submit(0, req(2, false, 0, 96 * KB, 1)).is_empty());
        let mut order = Vec::new();
        let mut next = first[0].piece;
        for t in 1..=5 {
            let c = ld.completed(t, next).unwrap();
            order.push(c.dispatch[0].queue);
            next = c.dispatch[0].piece;
        }
        assert_eq!(order, vec![0, 1, 0, 1, 1]);
    }

    #[test]
    fn completing_an_unknown_piece_is_an_error() {
        let mut ld = ld(8, 1, false);
        assert_eq!(ld.completed(0, 42), Err(UnknownPiece(42)));
        // The message names the piece, for whoever drives the scheduler.
        assert_eq!(
            UnknownPiece(42).to_string(),
            "ld: piece 42 is not in flight"
        );
    }

    #[test]
    fn config_is_clamped_to_something_that_can_dispatch() {
        let ld = ld(0, 0, false);
        assert_eq!((ld.config().tokens, ld.config().queues), (1, 1));
        assert_eq!(LdConfig::default().tokens, 8);
        assert_eq!(LdConfig::default().split, 32 * KB);
    }
}

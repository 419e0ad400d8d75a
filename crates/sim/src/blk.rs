//! The LD block layer as one mechanism (FR 3.3, Fig. 9; the decisions are
//! [`host::ld`]'s): the requests' criticality until they are submitted,
//! the pieces in flight by their request slots, and the waits FastResponse
//! breaks down (FR's T_Blk). Its state is its own; the host hands it
//! requests and reaped pieces and gets back what LD dispatches to send the
//! device ([`crate::world::block`] wires it to the requests and the device).

use std::collections::{HashMap, VecDeque};

use host::ld::{Dispatch, Ld, LdConfig, Req};
use policy::Nanos;

use crate::BlockScheduler;

/// A piece at the device: its LD id, its request's slot, whether it is
/// critical.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub ld: u64,
    pub parent: u32,
    pub critical: bool,
}

/// A piece LD completed: its request's slot and block-layer wait
/// (submit to first dispatch) if it was the request's last piece, and the
/// pieces LD dispatches now.
pub(crate) struct Completed {
    pub parent: Option<(u32, Nanos)>,
    pub dispatch: Vec<Dispatch>,
}

/// The LD block layer's state in a run.
#[derive(Debug)]
pub(crate) struct Block {
    ld: Ld,
    /// Pieces in flight, by their request slot.
    pieces: HashMap<u32, Piece>,
    /// Prepared requests' criticality, by slot, until they are submitted.
    critical: HashMap<u32, bool>,
    /// Non-critical pieces dispatched and not yet completed by the handler.
    noncritical: u32,
    /// Per thread: (sum of block-layer waits, requests) in the window
    /// (FR's T_Blk: submit to first dispatch).
    wait: Vec<(Nanos, u64)>,
    /// Per thread: polled pieces the device posted while the thread was not
    /// spinning, in order, found at its next reaping call.
    unfound: Vec<VecDeque<u32>>,
}

impl Block {
    /// The block layer `scheduler` names over `queues` hardware queues, for
    /// `threads` threads; `None` for no scheduler (requests go to the
    /// device whole).
    pub(crate) fn new(scheduler: &BlockScheduler, queues: usize, threads: usize) -> Option<Block> {
        match *scheduler {
            BlockScheduler::None => None,
            BlockScheduler::Ld {
                tokens,
                split,
                opportunistic,
            } => Some(Block {
                ld: Ld::new(LdConfig {
                    tokens,
                    split,
                    queues,
                    opportunistic,
                }),
                pieces: HashMap::new(),
                critical: HashMap::new(),
                noncritical: 0,
                wait: vec![(0, 0); threads],
                unfound: vec![VecDeque::new(); threads],
            }),
        }
    }

    /// A request prepared in `slot`: whether it is critical, kept until
    /// it is submitted (or completed without the block layer: [`Block::forget`]).
    pub(crate) fn prepared(&mut self, slot: u32, critical: bool) {
        self.critical.insert(slot, critical);
    }

    /// A prepared request that never reaches the block layer (the page
    /// cache served it).
    pub(crate) fn forget(&mut self, slot: u32) {
        self.critical.remove(&slot);
    }

    /// The request in `slot`, `bytes` long, from hardware queue `queue`,
    /// enters LD: what it dispatches now.
    pub(crate) fn submit(
        &mut self,
        now: Nanos,
        slot: u32,
        bytes: u64,
        queue: usize,
    ) -> Vec<Dispatch> {
        let critical = self.critical.remove(&slot).unwrap_or(false);
        self.ld.submit(
            now,
            Req {
                id: slot as u64,
                critical,
                offset: 0,
                len: bytes,
                queue,
            },
        )
    }

    /// A dispatched piece went to the device in request slot `slot`.
    /// Returns the non-critical pieces now in flight.
    pub(crate) fn dispatched(&mut self, slot: u32, d: &Dispatch) -> u32 {
        self.pieces.insert(
            slot,
            Piece {
                ld: d.piece,
                parent: d.parent as u32,
                critical: d.critical,
            },
        );
        if !d.critical {
            self.noncritical += 1;
        }
        self.noncritical
    }

    /// The piece in slot `slot`, if it is one.
    pub(crate) fn piece(&self, slot: u32) -> Option<Piece> {
        self.pieces.get(&slot).copied()
    }

    /// Pieces in flight.
    pub(crate) fn in_flight(&self) -> usize {
        self.pieces.len()
    }

    /// The piece in `slot` completed (its CQE reaped or its poller found
    /// it): its token passes on.
    pub(crate) fn complete(&mut self, now: Nanos, slot: u32, piece: Piece) -> Completed {
        self.pieces.remove(&slot);
        if !piece.critical {
            self.noncritical -= 1;
        }
        let c = self
            .ld
            .completed(now, piece.ld)
            .expect("a piece delivered once is in flight");
        let parent = c.done.map(|done| {
            debug_assert_eq!(done.id as u32, piece.parent);
            (done.id as u32, done.first_dispatch - done.submitted)
        });
        Completed {
            parent,
            dispatch: c.dispatch,
        }
    }

    /// A request of thread `tid` completed in the measured window after
    /// waiting `wait` in the block layer.
    pub(crate) fn waited(&mut self, tid: usize, wait: Nanos) {
        let w = &mut self.wait[tid];
        w.0 += wait;
        w.1 += 1;
    }

    /// Per thread: (sum of block-layer waits, requests) in the window.
    pub(crate) fn waits(&self) -> &[(Nanos, u64)] {
        &self.wait
    }

    /// A polled piece the device posted while `tid` was not spinning.
    pub(crate) fn unfound(&mut self, tid: usize, slot: u32) {
        self.unfound[tid].push_back(slot);
    }

    /// The next piece posted for `tid` while it was not spinning, and
    /// which piece it is.
    pub(crate) fn next_unfound(&mut self, tid: usize) -> Option<(u32, Piece)> {
        let slot = self.unfound[tid].pop_front()?;
        let piece = self.piece(slot).expect("an unfound piece is in flight");
        Some((slot, piece))
    }

    /// Whether pieces wait for `tid`'s next reaping call.
    pub(crate) fn has_unfound(&self, tid: usize) -> bool {
        !self.unfound[tid].is_empty()
    }

    /// What the block layer's structures hold, bytes (capacities).
    pub(crate) fn bytes(&self) -> usize {
        self.pieces.capacity() * (4 + std::mem::size_of::<Piece>())
            + self.critical.capacity() * 5
            + self.wait.capacity() * 16
            + self.unfound.iter().map(|q| q.capacity() * 4).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;

    fn ld(tokens: u32, split: u64) -> Block {
        let scheduler = BlockScheduler::Ld {
            tokens,
            split,
            opportunistic: false,
        };
        Block::new(&scheduler, 1, 2).expect("ld is a block layer")
    }

    /// Sends what LD dispatched to "the device": the pieces in slots from
    /// `next` on, as the host does.
    fn send(b: &mut Block, out: Vec<Dispatch>, next: &mut u32) -> Vec<(u32, Piece)> {
        out.iter()
            .map(|d| {
                let slot = *next;
                *next += 1;
                b.dispatched(slot, d);
                (slot, b.piece(slot).expect("dispatched"))
            })
            .collect()
    }

    #[test]
    fn no_scheduler_is_no_block_layer() {
        assert!(Block::new(&BlockScheduler::None, 1, 1).is_none());
    }

    #[test]
    fn a_request_completes_at_its_last_piece_with_its_wait() {
        let mut b = ld(8, 32 * KIB);
        let mut next = 100;
        b.prepared(0, false);
        let out = b.submit(1_000, 0, 128 * KIB, 0);
        let pieces = send(&mut b, out, &mut next);
        assert_eq!(pieces.len(), 4, "128 KiB in 32 KiB pieces");
        assert_eq!(b.in_flight(), 4);
        for (i, &(slot, piece)) in pieces.iter().enumerate() {
            assert_eq!(piece.parent, 0);
            let c = b.complete(5_000, slot, piece);
            let last = i == pieces.len() - 1;
            // Dispatched at once: no wait in the block layer.
            assert_eq!(c.parent, last.then_some((0, 0)), "piece {i}");
        }
        assert_eq!(b.in_flight(), 0);
    }

    #[test]
    fn tokens_bound_the_noncritical_pieces_and_a_critical_request_bypasses() {
        let mut b = ld(2, 32 * KIB);
        let mut next = 100;
        b.prepared(0, false);
        let out = b.submit(0, 0, 128 * KIB, 0);
        let first = send(&mut b, out, &mut next);
        assert_eq!(first.len(), 2, "two tokens, two pieces out");
        // A critical request goes whole, past the tokens (FR 3.3).
        b.prepared(1, true);
        let out = b.submit(0, 1, 128 * KIB, 0);
        assert_eq!(out.len(), 1);
        assert!(out[0].critical && out[0].len == 128 * KIB);
        // Each completed piece passes its token on: the request's wait is
        // from its submission to its first dispatch (at 0 here).
        let (slot, piece) = first[0];
        let c = b.complete(7_000, slot, piece);
        assert_eq!(c.dispatch.len(), 1, "the freed token dispatches the next");
        assert_eq!(c.parent, None);
    }

    #[test]
    fn a_request_waiting_for_a_token_reports_its_wait() {
        let mut b = ld(1, 32 * KIB);
        let mut next = 100;
        b.prepared(0, false);
        let out = b.submit(0, 0, 32 * KIB, 0);
        let first = send(&mut b, out, &mut next);
        b.prepared(2, false);
        assert!(b.submit(1_000, 2, 32 * KIB, 0).is_empty(), "no token left");
        let c = b.complete(7_000, first[0].0, first[0].1);
        assert_eq!(c.parent, Some((0, 0)));
        let second = send(&mut b, c.dispatch, &mut next);
        assert_eq!(second.len(), 1);
        let c = b.complete(9_000, second[0].0, second[0].1);
        // FR's T_Blk: from its submission (1 us) to its first dispatch (7 us).
        assert_eq!(c.parent, Some((2, 6_000)));
    }

    #[test]
    fn a_forgotten_request_goes_as_noncritical() {
        let mut b = ld(8, 32 * KIB);
        b.prepared(0, true);
        b.forget(0);
        let out = b.submit(0, 0, 64 * KIB, 0);
        assert!(out.iter().all(|d| !d.critical), "{out:?}");
    }

    #[test]
    fn waits_add_up_per_thread_and_unfound_pieces_come_back_in_order() {
        let mut b = ld(8, 32 * KIB);
        b.waited(1, 500);
        b.waited(1, 700);
        assert_eq!(b.waits(), &[(0, 0), (1_200, 2)]);
        let mut next = 10;
        b.prepared(0, false);
        let out = b.submit(0, 0, 64 * KIB, 0);
        let pieces = send(&mut b, out, &mut next);
        assert!(!b.has_unfound(1));
        b.unfound(1, pieces[1].0);
        b.unfound(1, pieces[0].0);
        assert!(b.has_unfound(1));
        assert_eq!(b.next_unfound(1).map(|(s, _)| s), Some(pieces[1].0));
        assert_eq!(b.next_unfound(1).map(|(s, _)| s), Some(pieces[0].0));
        assert!(b.next_unfound(1).is_none());
    }
}

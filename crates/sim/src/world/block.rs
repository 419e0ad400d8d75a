//! The block layer between the job threads' submit calls and the device
//! (issue 15 item 1): none (each request goes to the device as it is, the
//! simulator's path before FastResponse), or FastResponse's Limited Depth
//! scheduler ([`host::ld`], FR 3.3, Fig. 9), which splits non-critical
//! requests into pieces, lets a device-wide pool of tokens bound the pieces
//! in flight, and lets critical requests bypass it.
//!
//! With `ld`, what the device, its completion queues and the interrupt
//! policy see are the pieces (a split bio is one NVMe command per piece).
//! A piece is completed, and its token released, when the interrupt
//! handler reaps its CQE (the kernel's `blk_mq_complete_request`, where
//! LD's `completed_request` hook frees the token); the handler dispatches
//! the pieces that got the freed token then and there. The parent request
//! is completed, and its thread woken, at its last piece.
//!
//! Choices of ours:
//! - The dispatch of pieces from the completion path costs no CPU of its
//!   own (the submitting thread paid `submit_per_request` once per
//!   request); a piece's CQE costs `per_completion` like any other.
//! - A piece carries its request's `urgent` mark; the `barrier` mark (the
//!   end of a batch) goes to the request's last piece only.
//! - Requests carry no offset in the simulator: each starts at byte 0, so
//!   its pieces are `[0, split)`, `[split, 2 split)`, ... LD's decisions do
//!   not depend on offsets.
//! - Hardware queues are the simulator's completion queues (one per core
//!   while the device has enough, as blk-mq maps them).
//! - A polled request's pieces are polled too, found by its thread's poll
//!   rather than reaped by the handler ([`crate::Completion`]): the piece
//!   completes, and its token passes on, when the poller finds it.

use host::ld::Dispatch;

use crate::blk::Piece;
use crate::world::thread::alloc;
use crate::world::{RState, Request, World};

impl World {
    /// Whether request slot `req` is a block layer's piece.
    pub(crate) fn is_piece(&self, req: u32) -> bool {
        self.piece(req).is_some()
    }

    /// The piece in slot `req`, if it is one.
    pub(crate) fn piece(&self, req: u32) -> Option<Piece> {
        self.block.as_ref()?.piece(req)
    }

    /// The thread's submit call hands `req` on: to the device, or to the
    /// block-layer scheduler, which sends the device what it dispatches.
    pub(crate) fn block_submit(&mut self, req: u32) {
        self.idle_io(req);
        let Some(b) = self.block.as_mut() else {
            self.device_submit(req);
            return;
        };
        let r = &mut self.requests[req as usize];
        r.state = RState::InDevice;
        self.audit.submitted += 1;
        let queue = self.threads[r.tid as usize].queue as usize;
        let out = b.submit(self.now, req, r.bytes, queue);
        self.dispatch_pieces(out);
    }

    /// Sends the device the pieces the scheduler dispatched, each in a
    /// request slot of its own.
    fn dispatch_pieces(&mut self, out: Vec<Dispatch>) {
        for d in out {
            let parent = d.parent as u32;
            let p = self.requests[parent as usize];
            let mut marks = p.marks;
            // The end of a batch is its last request's last piece.
            marks.barrier &= d.offset + d.len >= p.bytes;
            let piece = Request {
                tid: p.tid,
                marks,
                write: p.write,
                bytes: d.len,
                issued: self.now,
                state: RState::Prepared,
                // A polled request's pieces go to its polled queue.
                polled: p.polled,
            };
            let slot = alloc(&mut self.requests, &mut self.free, piece);
            let b = self.block.as_mut().expect("pieces come from a block layer");
            let noncritical = b.dispatched(slot, &d);
            let most = &mut self.audit.max_noncritical_pieces;
            *most = (*most).max(noncritical as u64);
            self.device_submit(slot);
        }
    }

    /// The handler reaped `slot`'s CQE: the piece is completed, its token
    /// passed on, and its request delivered if it was the last piece. True
    /// if the handler must wake the request's thread.
    pub(crate) fn deliver_piece(&mut self, core: u32, slot: u32, piece: Piece) -> bool {
        let Some((parent, dispatch)) = self.complete_piece(slot, piece) else {
            return false;
        };
        let mut wake = false;
        if let Some(parent) = parent {
            self.requests[parent as usize].state = RState::Posted;
            wake = self.deliver(core, parent);
        }
        self.dispatch_pieces(dispatch);
        wake
    }

    /// A polled piece's poller found its entry: the piece is completed, its
    /// token passed on, and at the last piece its request is posted to the
    /// thread's poll ([`World::poll_post`]).
    pub(crate) fn find_polled_piece(&mut self, slot: u32, piece: Piece) {
        let Some((parent, dispatch)) = self.complete_piece(slot, piece) else {
            return;
        };
        if let Some(parent) = parent {
            self.poll_post(parent);
        }
        self.dispatch_pieces(dispatch);
    }

    /// Completes the posted piece in `slot` (frees it, tells LD): its
    /// request's slot if that was its last piece, and the pieces LD
    /// dispatches now. `None` if the piece was not posted (counted as a
    /// duplicate).
    fn complete_piece(&mut self, slot: u32, piece: Piece) -> Option<(Option<u32>, Vec<Dispatch>)> {
        let r = &mut self.requests[slot as usize];
        if r.state != RState::Posted {
            self.audit.duplicates += 1;
            return None;
        }
        r.state = RState::Free;
        self.free.push(slot);
        self.audit.pieces_delivered += 1;
        let measuring = self.measuring(self.now);
        let b = self.block.as_mut().expect("a piece has a block layer");
        let c = b.complete(self.now, slot, piece);
        let parent = c.parent.map(|(p, wait)| {
            if measuring {
                b.waited(self.requests[p as usize].tid as usize, wait);
            }
            self.audit.serviced += 1;
            p
        });
        Some((parent, c.dispatch))
    }
}

#[cfg(test)]
mod tests {
    use crate::BlockScheduler;

    #[test]
    fn parses_and_prints() {
        assert_eq!("none".parse(), Ok(BlockScheduler::None));
        assert_eq!("ld".parse(), Ok(BlockScheduler::LD));
        let s: BlockScheduler = "ld,tokens=4,split=64k,opportunistic".parse().unwrap();
        assert_eq!(
            s,
            BlockScheduler::Ld {
                tokens: 4,
                split: 65536,
                opportunistic: true
            }
        );
        assert_eq!(s.to_string(), "ld,tokens=4,split=64k,opportunistic");
        assert_eq!(s.to_string().parse(), Ok(s));
        assert!("ld,tokens=0".parse::<BlockScheduler>().is_err());
        assert!("ld,split=1".parse::<BlockScheduler>().is_err());
        assert!("ld,depth=3".parse::<BlockScheduler>().is_err());
        assert!("kyber".parse::<BlockScheduler>().is_err());
        assert!("none,tokens=3".parse::<BlockScheduler>().is_err());
    }
}

//! One queue pair as both sides use it: the rings, the interrupt line, and
//! the driver's tags (which host thread and request each in-flight command
//! belongs to). The host's submit path is here; the handler's reap path is
//! in `driver/handler.rs`, the device's in `device/controller.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use policy::{cid, Marks};

use crate::irq::IrqLine;
use crate::ring::{CompletionQueue, Sqe, SubmissionQueue};

/// A tag not owned by any request.
const FREE: u64 = u64::MAX;

/// A request as a job thread hands it to the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The thread's own slot for the request, returned on completion.
    pub cookie: u32,
    pub write: bool,
    pub offset: u64,
    pub len: u32,
    /// The data buffer: valid and untouched by the thread until the
    /// completion is delivered.
    pub buf: usize,
    pub marks: Marks,
}

/// The SQ entry of `r` under `tag`, its marks in the CID.
fn sqe(tag: u16, r: &Request) -> Sqe {
    Sqe {
        cid: cid::encode(tag, r.marks).expect("tags fit the CID"),
        write: r.write,
        len: r.len,
        offset: r.offset,
        buf: r.buf,
    }
}

struct SubmitSide {
    /// The host's copy of the SQ tail doorbell.
    tail: u32,
    free_tags: Vec<u16>,
    /// Submitters sleeping for a free tag.
    sleepers: u32,
}

/// One SQ/CQ pair, its interrupt line and its tags. A host creates one per
/// target core and hands the same `Arc`s to `Device::start` and
/// `Driver::start`.
pub struct QueuePair {
    /// The host core whose threads submit here and whose handler reaps.
    pub core: usize,
    pub(crate) sq: SubmissionQueue,
    pub(crate) cq: CompletionQueue,
    pub(crate) irq: IrqLine,
    submit: Mutex<SubmitSide>,
    tag_freed: Condvar,
    /// Per tag: `owner << 32 | cookie`, or [`FREE`].
    owners: Box<[AtomicU64]>,
    /// Commands submitted and completions posted so far, for the stall
    /// report (the device's own counts are private to its thread).
    pub(crate) submitted: AtomicU64,
    pub(crate) posted: AtomicU64,
    /// Its CQ has interrupts off (NVMe's Create I/O CQ with IEN clear, as
    /// Linux creates its `poll_queues`): the device posts to it but never
    /// runs the policy over it nor raises the line; its waiters poll.
    pub polled: bool,
}

impl QueuePair {
    /// `tags` commands may be in flight (at most [`cid::MAX_TAGS`]); the
    /// SQ has room for all of them, the CQ has `cq_entries` slots.
    pub fn new(core: usize, tags: u32, cq_entries: u32) -> QueuePair {
        let tags = tags.clamp(1, cid::MAX_TAGS as u32);
        QueuePair {
            core,
            sq: SubmissionQueue::new(tags),
            cq: CompletionQueue::new(cq_entries),
            irq: IrqLine::default(),
            submit: Mutex::new(SubmitSide {
                tail: 0,
                // Popped from the end: tag 0 first.
                free_tags: (0..tags as u16).rev().collect(),
                sleepers: 0,
            }),
            tag_freed: Condvar::new(),
            owners: (0..tags).map(|_| AtomicU64::new(FREE)).collect(),
            submitted: AtomicU64::new(0),
            posted: AtomicU64::new(0),
            polled: false,
        }
    }

    /// As [`QueuePair::new`], with interrupts off: a poll queue.
    pub fn new_polled(core: usize, tags: u32, cq_entries: u32) -> QueuePair {
        QueuePair {
            polled: true,
            ..QueuePair::new(core, tags, cq_entries)
        }
    }

    pub fn tags(&self) -> usize {
        self.owners.len()
    }

    /// Host: submits `reqs` for thread `owner` and rings the doorbell once
    /// (blk-mq's plug: the batch reaches the device together). With no free
    /// tag it rings for what it has and sleeps until the handler frees one:
    /// back-pressure, never a dropped request. Returns how many times it
    /// had to wait.
    pub(crate) fn submit(&self, owner: u32, reqs: &[Request]) -> u64 {
        let mut waits = 0;
        let mut side = self.submit.lock().expect("submit lock");
        for r in reqs {
            let tag = loop {
                if let Some(tag) = side.free_tags.pop() {
                    break tag;
                }
                self.sq.ring(side.tail);
                waits += 1;
                side.sleepers += 1;
                side = self.tag_freed.wait(side).expect("submit lock");
                side.sleepers -= 1;
            };
            self.own(tag, owner, r);
            let sqe = sqe(tag, r);
            // The SQ has a slot per tag, so it is full only while the
            // device has not fetched freed tags' old entries yet.
            let mut tail = side.tail;
            while !self.sq.write(&mut tail, sqe) {
                self.sq.ring(side.tail);
                std::hint::spin_loop();
            }
            side.tail = tail;
        }
        self.sq.ring(side.tail);
        self.submitted
            .fetch_add(reqs.len() as u64, Ordering::Relaxed);
        waits
    }

    /// A host that must not sleep (the device's fetch of remote
    /// submissions, the device's `Ingress`): submits the longest prefix
    /// of `reqs` that finds free tags, for thread `owner`, and rings the
    /// doorbell once. Returns how many it took; the rest wait for the
    /// handler to free tags.
    pub fn try_submit(&self, owner: u32, reqs: &[Request]) -> usize {
        let mut side = self.submit.lock().expect("submit lock");
        let mut taken = 0;
        for r in reqs {
            let Some(&tag) = side.free_tags.last() else {
                break;
            };
            // A slot per tag, so the ring is full only while the device has
            // not fetched freed tags' old entries: never spin for it here,
            // as the caller may be the device itself.
            let mut tail = side.tail;
            if !self.sq.write(&mut tail, sqe(tag, r)) {
                break;
            }
            side.tail = tail;
            side.free_tags.pop();
            self.own(tag, owner, r);
            taken += 1;
        }
        if taken > 0 {
            self.sq.ring(side.tail);
            self.submitted.fetch_add(taken as u64, Ordering::Relaxed);
        }
        taken
    }

    /// Records which thread's request holds `tag`, for the handler.
    fn own(&self, tag: u16, owner: u32, r: &Request) {
        self.owners[tag as usize].store(
            u64::from(owner) << 32 | u64::from(r.cookie),
            Ordering::Relaxed,
        );
    }

    /// Handler: the owner of a completed tag, releasing the tag's owner
    /// record. `None` if the tag was not in flight (a duplicate completion).
    pub(crate) fn complete_tag(&self, tag: u16) -> Option<(u32, u32)> {
        let v = self.owners.get(tag as usize)?.swap(FREE, Ordering::AcqRel);
        (v != FREE).then_some(((v >> 32) as u32, v as u32))
    }

    /// Handler: returns tags to the pool. Returns whether a submitter
    /// sleeps for one, to be woken with [`QueuePair::wake_submitters`] once
    /// the handler has finished (a wake-up's switch happens at the
    /// interrupt's exit).
    #[must_use = "a sleeping submitter is woken only by `wake_submitters`"]
    pub(crate) fn free_tags(&self, tags: &[u16]) -> bool {
        if tags.is_empty() {
            return false;
        }
        let mut side = self.submit.lock().expect("submit lock");
        side.free_tags.extend_from_slice(tags);
        side.sleepers > 0
    }

    /// Wakes the submitters sleeping for a tag (after a
    /// [`QueuePair::free_tags`] that asked for it).
    pub(crate) fn wake_submitters(&self) {
        self.tag_freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::Cqe;
    use policy::Interrupt;
    use std::sync::Arc;

    fn req(cookie: u32, marks: Marks) -> Request {
        Request {
            cookie,
            write: false,
            offset: u64::from(cookie) * 4096,
            len: 4096,
            buf: 0,
            marks,
        }
    }

    #[test]
    fn submit_carries_the_marks_in_the_cid_and_records_the_owner() {
        let q = QueuePair::new(0, 4, 4);
        q.submit(7, &[req(1, Marks::NONE), req(2, Marks::BARRIER)]);
        let mut head = 0;
        let a = q.sq.fetch(&mut head).unwrap();
        let b = q.sq.fetch(&mut head).unwrap();
        assert_eq!(cid::marks(a.cid), Marks::NONE);
        assert_eq!(cid::marks(b.cid), Marks::BARRIER);
        assert_eq!(b.offset, 2 * 4096);
        assert_eq!(q.complete_tag(cid::tag(b.cid)), Some((7, 2)));
        assert_eq!(q.complete_tag(cid::tag(b.cid)), None, "completed twice");
    }

    #[test]
    fn a_submitter_without_tags_waits_for_the_handler() {
        let q = Arc::new(QueuePair::new(0, 2, 2));
        let sub = {
            let q = q.clone();
            std::thread::spawn(move || {
                q.submit(
                    1,
                    &[
                        req(0, Marks::NONE),
                        req(1, Marks::NONE),
                        req(2, Marks::URGENT),
                    ],
                )
            })
        };
        // Play device and handler: the third request appears only after a
        // tag is freed.
        let (mut sq_head, mut cq_tail, mut cq_head) = (0, 0, 0);
        let mut seen = vec![];
        while seen.len() < 3 {
            while let Some(sqe) = q.sq.fetch(&mut sq_head) {
                q.cq.post(
                    &mut cq_tail,
                    Cqe {
                        cid: sqe.cid,
                        result: 4096,
                        error: false,
                    },
                )
                .unwrap();
            }
            let mut done = vec![];
            q.cq.reap(&mut cq_head, Interrupt::Full, |c| {
                done.push(cid::tag(c.cid))
            });
            for &t in &done {
                seen.push(q.complete_tag(t).unwrap().1);
            }
            if q.free_tags(&done) {
                q.wake_submitters();
            }
            std::thread::yield_now();
        }
        assert_eq!(sub.join().unwrap(), 1, "one wait for a tag");
        seen.sort();
        assert_eq!(seen, vec![0, 1, 2]);
    }
}

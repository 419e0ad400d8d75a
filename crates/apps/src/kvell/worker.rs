//! A KVell worker (`slabworker.c`, `worker_slab_init`; `ioengine.c`): its
//! queue, its slab's pages, its page cache and its AIO context.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use jobs::{Call, DefaultMarks, Waiter};
use policy::Nanos;
use rand::RngCore;

use super::cache::PageCache;
use super::shared::{Action as ReqAction, Request, Shared};
use super::{Config, WorkerCosts, TIMER_SLACK_NS, WORKER_USLEEP_NS};
use crate::{Action, AppIo, AppThread, OpDone};

/// An iocb's tag: its sequence number (modulo 2^32: tags need only be
/// unique among the I/Os in flight, at most `max_in_flight`) above its page
/// (below 2^32, [`Config::validate`]), so a trace can tell pages apart
/// ([`page_of_tag`]).
fn tag_of(seq: u64, page: u64) -> u64 {
    ((seq & 0xFFFF_FFFF) << 32) | (page & 0xFFFF_FFFF)
}

/// The page (in its worker's slab) of an I/O a KVell worker submitted.
pub fn page_of_tag(tag: u64) -> u64 {
    tag & 0xFFFF_FFFF
}

/// What a request's callback does when its page is in memory (the
/// `io_cb` KVell sets before each page operation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// `read_item_async_cb`: the user's callback; the request is done.
    Read,
    /// `update_item_async_cb1`: copy the item in, write the page.
    UpdateRead,
    /// `update_item_async_cb2`: the user's callback; the request is done.
    UpdateWrite,
    /// A read-modify-write's read: enqueue its update.
    RmwRead,
}

/// One iocb: a page read or write, and the requests waiting on it (the
/// first its own, the rest KVell's `linked_callbacks`).
#[derive(Debug)]
struct Iocb {
    page: u64,
    write: bool,
    waiting: Vec<(Request, Stage)>,
}

#[derive(Debug)]
pub struct Worker {
    id: usize,
    shared: Rc<RefCell<Shared>>,
    cache: PageCache,
    page_bytes: u64,
    queue_depth: usize,
    never_exceed_queue_depth: bool,
    marks: DefaultMarks,
    costs: WorkerCosts,
    max_in_flight: u32,
    next_tag: u64,
    iocbs: HashMap<u64, Iocb>,
    /// Queued iocbs not yet submitted, in order (`sent_io - processed_io`).
    staged: Vec<u64>,
    /// Submitted and not yet returned by `io_getevents`.
    outstanding: u32,
    /// Returned so far by the current `io_getevents`, in order.
    arrived: Vec<u64>,
    /// Pages being read (joinable: `get_page`'s `alread_used`).
    reading: HashMap<u64, u64>,
    /// Pages with a write queued and not yet submitted (`lru_entry->dirty`).
    dirty: HashMap<u64, u64>,
    /// Keys appended to the slab by inserts, and the slab's length.
    appended: HashMap<u64, u64>,
    slab_len: u64,
    /// CPU owed for work already done in model time (charged next).
    compute: Nanos,
    /// The time that work started: callbacks are stamped `base + compute`.
    base: Nanos,
    done: Vec<OpDone>,
    wakes: Vec<usize>,
}

impl Worker {
    pub fn new(config: &Config, id: usize, shared: Rc<RefCell<Shared>>) -> Worker {
        let workers = config.worker_cores.len() as u64;
        let slab_len = shared.borrow().keys.loaded(id);
        Worker {
            id,
            shared,
            cache: PageCache::new(config.page_cache_pages / workers),
            page_bytes: config.page_bytes,
            queue_depth: config.queue_depth as usize,
            never_exceed_queue_depth: config.never_exceed_queue_depth,
            marks: config.default_marks,
            costs: WorkerCosts::scaled(config.worker_request_ns),
            // `worker_ioengine_init`: `max_pending_io = nb_callbacks * 2`,
            // the AIO context's size (`io_setup`).
            max_in_flight: 2 * config.pending_callbacks(),
            next_tag: 0,
            iocbs: HashMap::new(),
            staged: Vec::new(),
            outstanding: 0,
            arrived: Vec::new(),
            reading: HashMap::new(),
            dirty: HashMap::new(),
            appended: HashMap::new(),
            slab_len,
            compute: 0,
            base: 0,
            done: Vec::new(),
            wakes: Vec::new(),
        }
    }

    fn stage(&mut self, page: u64, write: bool, req: Request, stage: Stage) -> u64 {
        let tag = tag_of(self.next_tag, page);
        self.next_tag += 1;
        self.iocbs.insert(
            tag,
            Iocb {
                page,
                write,
                waiting: vec![(req, stage)],
            },
        );
        self.staged.push(tag);
        self.compute += self.costs.iocb;
        tag
    }

    /// `read_page_async`: a cached page calls back at once, a page being
    /// read is joined, otherwise a read is queued.
    fn read_page(&mut self, page: u64, req: Request, stage: Stage) {
        if self.cache.hit(page) {
            self.callback(page, req, stage);
        } else if let Some(&tag) = self.reading.get(&page) {
            if let Some(io) = self.iocbs.get_mut(&tag) {
                io.waiting.push((req, stage));
            }
        } else {
            let tag = self.stage(page, false, req, stage);
            self.reading.insert(page, tag);
        }
    }

    /// `write_page_async`: a page whose write is queued and not yet
    /// submitted is joined; otherwise a write is queued.
    fn write_page(&mut self, page: u64, req: Request) {
        if let Some(&tag) = self.dirty.get(&page) {
            if let Some(io) = self.iocbs.get_mut(&tag) {
                io.waiting.push((req, Stage::UpdateWrite));
            }
        } else {
            let tag = self.stage(page, true, req, Stage::UpdateWrite);
            self.dirty.insert(page, tag);
        }
    }

    fn finish(&mut self, req: &Request) {
        let end = self.base + self.compute;
        if let Some(op) = self.shared.borrow_mut().finish(req, end) {
            self.done.push(op);
        }
    }

    /// The request's `io_cb`, its page now in memory.
    fn callback(&mut self, page: u64, req: Request, stage: Stage) {
        self.compute += self.costs.callback;
        match stage {
            Stage::Read | Stage::UpdateWrite => self.finish(&req),
            Stage::UpdateRead => self.write_page(page, req),
            Stage::RmwRead => {
                let update = Request {
                    action: ReqAction::Update,
                    ..req
                };
                self.shared.borrow_mut().enqueue_own(self.id, update);
            }
        }
    }

    /// The slot of a key in this worker's slab, if it is there.
    fn slot(&self, key: u64) -> Option<u64> {
        let shared = self.shared.borrow();
        if key < shared.keys.items {
            Some(shared.keys.slot_of(key))
        } else {
            self.appended.get(&key).copied()
        }
    }

    fn page_of(&self, slot: u64) -> u64 {
        self.shared.borrow().keys.page_of_slot(slot)
    }

    /// `worker_dequeue_requests`: every request enqueued (or, with
    /// `NEVER_EXCEED_QUEUE_DEPTH`, until `QUEUE_DEPTH` I/Os are pending).
    fn dequeue(&mut self, now: Nanos) {
        self.base = now;
        loop {
            if self.never_exceed_queue_depth && self.staged.len() >= self.queue_depth {
                break;
            }
            let Some(req) = self.shared.borrow_mut().dequeue(self.id) else {
                break;
            };
            self.compute += if req.action == ReqAction::ReadNoLookup {
                self.costs.dequeue
            } else {
                self.costs.index_lookup
            };
            match req.action {
                ReqAction::Add => {
                    // `add_item_async`: no free slot (nothing is deleted),
                    // so append (`add_item_async_cb1`), then update.
                    let slot = self.slab_len;
                    self.slab_len += 1;
                    self.appended.insert(req.key, slot);
                    let page = self.page_of(slot);
                    self.read_page(page, req, Stage::UpdateRead);
                }
                action => match self.slot(req.key) {
                    // "Item is not in DB": the callback at once.
                    None => {
                        self.compute += self.costs.callback;
                        self.finish(&req);
                    }
                    Some(slot) => {
                        let page = self.page_of(slot);
                        let stage = match action {
                            ReqAction::Update => Stage::UpdateRead,
                            ReqAction::RmwRead => Stage::RmwRead,
                            _ => Stage::Read,
                        };
                        self.read_page(page, req, stage);
                    }
                },
            }
        }
        // A slot freed: the clients spinning in `get_slab_buffer` go on.
        self.shared
            .borrow_mut()
            .take_parked(self.id, &mut self.wakes);
    }

    /// `worker_do_io`: one `io_submit` of every queued iocb.
    fn submit(&mut self) -> Action {
        let n = self.staged.len();
        let mut batch = Vec::with_capacity(n);
        for (i, tag) in self.staged.drain(..).enumerate() {
            let io = &self.iocbs[&tag];
            if io.write {
                // The dirty flag is reset before the write is sent.
                self.dirty.remove(&io.page);
            }
            batch.push(AppIo {
                tag,
                write: io.write,
                bytes: self.page_bytes,
                marks: self.marks.of(Call::Submit { last: i + 1 == n }),
            });
        }
        self.outstanding = n as u32;
        Action::Submit(batch)
    }

    /// `worker_ioengine_process_completed_ios`: every callback, in the
    /// order `io_getevents` returned them, then the linked ones.
    fn process(&mut self, now: Nanos) {
        self.base = now;
        let arrived = std::mem::take(&mut self.arrived);
        let mut linked = Vec::new();
        for tag in arrived {
            let Some(io) = self.iocbs.remove(&tag) else {
                continue;
            };
            if !io.write {
                self.reading.remove(&io.page);
                self.cache.insert(io.page);
            }
            let mut waiting = io.waiting.into_iter();
            if let Some((req, stage)) = waiting.next() {
                self.callback(io.page, req, stage);
            }
            linked.extend(waiting.map(|(req, stage)| (io.page, req, stage)));
        }
        for (page, req, stage) in linked {
            self.callback(page, req, stage);
        }
    }

    fn idle(&self) -> bool {
        self.staged.is_empty() && self.outstanding == 0 && self.compute == 0
    }
}

impl AppThread for Worker {
    fn waiter(&self) -> Waiter {
        Waiter::Libaio
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        loop {
            if self.compute > 0 {
                return Action::Compute(std::mem::take(&mut self.compute));
            }
            if self.outstanding > 0 {
                // `io_getevents(ctx, n, n, ...)`: all of the batch.
                let rest = self.outstanding - self.arrived.len() as u32;
                return Action::Wait {
                    min: rest,
                    max: rest,
                };
            }
            if !self.staged.is_empty() {
                return self.submit();
            }
            if self.shared.borrow().queued(self.id) > 0 {
                self.dequeue(now);
                continue;
            }
            debug_assert!(self.idle());
            return if self.shared.borrow().clients_alive == 0 {
                Action::Done
            } else {
                // The artifact's `usleep(1)` with nothing to do.
                Action::SleepUntil(now + WORKER_USLEEP_NS + TIMER_SLACK_NS)
            };
        }
    }

    fn completed(&mut self, tags: &[u64], now: Nanos) {
        self.arrived.extend_from_slice(tags);
        if self.arrived.len() as u32 >= self.outstanding {
            self.outstanding = 0;
            self.process(now);
        }
    }

    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.done);
    }

    fn stop(&mut self) {
        // The clients stop generating; this worker drains what they
        // enqueued and ends when they have all ended.
        self.shared.borrow_mut().stopping = true;
    }

    fn max_in_flight(&self) -> u32 {
        self.max_in_flight
    }

    fn drain_wakes(&mut self, out: &mut Vec<usize>) {
        out.append(&mut self.wakes);
    }
}

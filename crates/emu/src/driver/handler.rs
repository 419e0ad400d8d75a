//! The interrupt handler of one host core: a thread pinned to the core at
//! SCHED_FIFO that sleeps until the device raises the line, then reaps the
//! CQ (everything, or only Urgent entries for an urgent-only interrupt, TOS
//! 3.5) and hands each completion to the thread that submitted it, waking
//! those whose wait is satisfied: the work of nvme_irq and blk_mq_complete.
//!
//! The wake-ups come after the handler has finished and released the line's
//! handler lock, as Linux's do: a wake-up in an interrupt handler marks the
//! thread runnable, and the switch to it happens at the interrupt's exit.
//! Waking from inside would let the woken thread preempt the handler
//! half-way (the idle poller is SCHED_IDLE), holding the lock, so that no
//! one on the core could take the next interrupt while the woken thread
//! ran, and its run would count as interrupt time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use policy::{cid, Interrupt, Nanos};

use crate::config::Recording;
use crate::driver::block::{BlockLayer, LD_OWNER};
use crate::irq::Taken;
use crate::latency::latency_histogram;
use crate::mailbox::{Delivered, Inboxes};
use crate::queue::QueuePair;
use crate::sys::Clock;

/// Counters the run reads while the handler works, to cut its window.
#[derive(Debug, Default)]
pub struct HandlerCounters {
    pub interrupts: AtomicU64,
    pub urgent_only: AtomicU64,
    /// Interrupts that found nothing to reap (their entries were taken by
    /// an earlier pass).
    pub empty: AtomicU64,
    pub reaped: AtomicU64,
    /// Completions of a tag that was not in flight: must stay 0.
    pub duplicates: AtomicU64,
    pub errors: AtomicU64,
    /// Entries reaped by a waiter polling its queue (no interrupt).
    pub polled: AtomicU64,
    /// Polls of a polled queue, found something or not.
    pub polls: AtomicU64,
}

/// A snapshot of the handler's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandlerCount {
    pub interrupts: u64,
    pub urgent_only: u64,
    pub empty: u64,
    pub reaped: u64,
    pub duplicates: u64,
    pub errors: u64,
    pub polled: u64,
    pub polls: u64,
}

impl HandlerCounters {
    pub fn snapshot(&self) -> HandlerCount {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        HandlerCount {
            interrupts: r(&self.interrupts),
            urgent_only: r(&self.urgent_only),
            empty: r(&self.empty),
            reaped: r(&self.reaped),
            duplicates: r(&self.duplicates),
            errors: r(&self.errors),
            polled: r(&self.polled),
            polls: r(&self.polls),
        }
    }
}

impl HandlerCount {
    pub fn since(self, e: HandlerCount) -> HandlerCount {
        HandlerCount {
            interrupts: self.interrupts - e.interrupts,
            urgent_only: self.urgent_only - e.urgent_only,
            empty: self.empty - e.empty,
            reaped: self.reaped - e.reaped,
            duplicates: self.duplicates - e.duplicates,
            errors: self.errors - e.errors,
            polled: self.polled - e.polled,
            polls: self.polls - e.polls,
        }
    }

    pub fn plus(self, o: HandlerCount) -> HandlerCount {
        HandlerCount {
            interrupts: self.interrupts + o.interrupts,
            urgent_only: self.urgent_only + o.urgent_only,
            empty: self.empty + o.empty,
            reaped: self.reaped + o.reaped,
            duplicates: self.duplicates + o.duplicates,
            errors: self.errors + o.errors,
            polled: self.polled + o.polled,
            polls: self.polls + o.polls,
        }
    }
}

/// Delivery latency (raise to handler start), ns, shared with the run so it
/// can be cut to the measured window.
pub type DeliveryHist = Arc<Mutex<Histogram<u64>>>;

pub fn new_delivery_hist() -> DeliveryHist {
    Arc::new(Mutex::new(latency_histogram()))
}

/// The handler's private state: the CQ head and scratch lists.
struct Scratch {
    head: u32,
    per_owner: Vec<Vec<Delivered>>,
    touched: Vec<usize>,
    freed: Vec<u16>,
    /// LD pieces reaped (cookie = the block layer's slot), and the
    /// requests they finished.
    pieces: Vec<Delivered>,
    finished: Vec<(u32, Delivered)>,
    /// The wake-ups due once the handler has finished.
    wakes: Wakes,
}

/// Threads to wake when the handler has finished: waiters (by owner) and
/// whether a submitter sleeps for a tag.
#[derive(Default)]
struct Wakes {
    owners: Vec<usize>,
    submitters: bool,
}

/// The interrupt handler of one queue pair. Whoever runs it holds its lock,
/// so it never runs twice at once on the line (as one vector's handler).
pub struct Handler {
    pub queue: Arc<QueuePair>,
    /// Where each waiter's completions go, by owner index.
    inboxes: Arc<dyn Inboxes>,
    pub counters: HandlerCounters,
    delivery: DeliveryHist,
    /// Delivery latencies are recorded while this is open.
    recording: Recording,
    /// Time spent handling, ns.
    pub irq_ns: AtomicU64,
    /// Spent busy at the start of each interrupt, after it is taken
    /// (`DriverConfig::handler_delay`).
    delay: Nanos,
    scratch: Mutex<Scratch>,
    /// LD between the threads and the queue pairs, when the run has it.
    block: Option<Arc<BlockLayer>>,
}

impl Handler {
    pub fn new(
        queue: Arc<QueuePair>,
        inboxes: Arc<dyn Inboxes>,
        owners: usize,
        delivery: DeliveryHist,
        recording: Recording,
        delay: Nanos,
        block: Option<Arc<BlockLayer>>,
    ) -> Handler {
        Handler {
            queue,
            inboxes,
            counters: HandlerCounters::default(),
            delivery,
            recording,
            irq_ns: AtomicU64::new(0),
            delay,
            scratch: Mutex::new(Scratch {
                head: 0,
                per_owner: vec![Vec::new(); owners],
                touched: Vec::new(),
                freed: Vec::new(),
                pieces: Vec::new(),
                finished: Vec::new(),
                wakes: Wakes::default(),
            }),
            block,
        }
    }

    /// [`Delivery::Wake`](crate::config::Delivery::Wake): the handler
    /// thread sleeps until the line is raised.
    pub fn run_thread(&self, clock: &Clock) {
        let mut wakes = Wakes::default();
        while let Taken::Interrupt { kind, raised_at } = self.queue.irq.wait() {
            let mut s = self.scratch.lock().expect("handler lock");
            self.handle(&mut s, Some((kind, raised_at)), clock);
            std::mem::swap(&mut wakes, &mut s.wakes);
            drop(s);
            self.wake(&mut wakes);
        }
    }

    /// [`Delivery::Poll`](crate::config::Delivery::Poll)'s safety net: a
    /// SCHED_FIFO thread the device wakes only for an interrupt left pending
    /// too long (the core too busy with other work for its idle poller to
    /// run).
    pub fn run_fallback(&self, clock: &Clock) {
        while !self.queue.irq.stopped() {
            std::thread::park();
            self.service(clock);
        }
    }

    /// [`Delivery::Poll`](crate::config::Delivery::Poll): the idle poller
    /// of the core, until the line stops.
    pub fn run_poller(&self, clock: &Clock) {
        while !self.queue.irq.stopped() {
            if self.service(clock) == 0 {
                std::hint::spin_loop();
            }
        }
    }

    /// Handles what is pending on the line, unless another thread is
    /// handling it now; each interrupt's wake-ups at its own exit, after the
    /// lock is released. Returns the nanoseconds spent handling.
    pub fn service(&self, clock: &Clock) -> Nanos {
        let mut spent = 0;
        let mut wakes = Wakes::default();
        while self.queue.irq.is_pending() {
            let Ok(mut s) = self.scratch.try_lock() else {
                break;
            };
            let Some(Taken::Interrupt { kind, raised_at }) = self.queue.irq.take() else {
                break;
            };
            spent += self.handle(&mut s, Some((kind, raised_at)), clock);
            // The emptied list goes back (with its allocation) for the next.
            std::mem::swap(&mut wakes, &mut s.wakes);
            drop(s);
            self.wake(&mut wakes);
        }
        spent
    }

    /// A waiter polls its queue pair, which raises no interrupt (a Linux
    /// poll queue, `nvme_poll`): reaps what the device posted, in the
    /// caller's context and on its CPU time, and delivers it, waking other
    /// waiters of the queue that it satisfied. Returns how many it reaped
    /// (0 also when another thread is reaping now).
    pub fn poll(&self, clock: &Clock) -> usize {
        self.counters.polls.fetch_add(1, Ordering::Relaxed);
        let Ok(mut s) = self.scratch.try_lock() else {
            return 0;
        };
        let before = self.counters.reaped.load(Ordering::Relaxed);
        self.handle(&mut s, None, clock);
        let mut wakes = Wakes::default();
        std::mem::swap(&mut wakes, &mut s.wakes);
        drop(s);
        self.wake(&mut wakes);
        (self.counters.reaped.load(Ordering::Relaxed) - before) as usize
    }

    /// The interrupt's exit: wakes the threads its handler made runnable,
    /// after the handler has released the line; the waiters of the core in
    /// one system call (`mailbox`'s wake group), so that the scheduler, not
    /// the order of the calls, picks which runs first.
    fn wake(&self, wakes: &mut Wakes) {
        if std::mem::take(&mut wakes.submitters) {
            self.queue.wake_submitters();
        }
        if !wakes.owners.is_empty() {
            self.inboxes.wake(&wakes.owners);
            wakes.owners.clear();
        }
    }

    /// Reaps the CQ for an interrupt (`Some((kind, raised_at))`) or for a
    /// poll (`None`: counted as polled, not as an interrupt, and not as
    /// interrupt time). Returns the time it took.
    fn handle(&self, s: &mut Scratch, irq: Option<(Interrupt, Nanos)>, clock: &Clock) -> Nanos {
        let started = clock.now();
        let c = &self.counters;
        let kind = match irq {
            Some((kind, raised_at)) => {
                c.interrupts.fetch_add(1, Ordering::Relaxed);
                if kind == Interrupt::UrgentOnly {
                    c.urgent_only.fetch_add(1, Ordering::Relaxed);
                }
                if self.recording.is_open() {
                    let mut h = self.delivery.lock().expect("histogram lock");
                    let _ = h.record(started.saturating_sub(raised_at).max(1));
                }
                // Taken: the line is clear (with IPIs, the slot is free)
                // while the handler is busy, as Linux unlocks an
                // asynchronous call's slot before it runs the function
                // (`flush_smp_call_function_queue`).
                while clock.now() < started + self.delay {
                    std::hint::spin_loop();
                }
                kind
            }
            None => Interrupt::Full,
        };
        let (mut dup, mut errors) = (0, 0);
        let q = &self.queue;
        let Scratch {
            head,
            per_owner,
            touched,
            freed,
            pieces,
            finished,
            wakes,
        } = s;
        let n = q.cq.reap(head, kind, |cqe| {
            let tag = cid::tag(cqe.cid);
            match q.complete_tag(tag) {
                Some((LD_OWNER, cookie)) => {
                    pieces.push(Delivered {
                        cookie,
                        result: cqe.result,
                        error: cqe.error,
                    });
                    errors += u64::from(cqe.error);
                    freed.push(tag);
                }
                Some((owner, cookie)) => {
                    let list = &mut per_owner[owner as usize];
                    if list.is_empty() {
                        touched.push(owner as usize);
                    }
                    list.push(Delivered {
                        cookie,
                        result: cqe.result,
                        error: cqe.error,
                    });
                    errors += u64::from(cqe.error);
                    freed.push(tag);
                }
                None => dup += 1,
            }
        });
        if n == 0 && irq.is_some() {
            c.empty.fetch_add(1, Ordering::Relaxed);
        }
        c.reaped.fetch_add(n as u64, Ordering::Relaxed);
        c.duplicates.fetch_add(dup, Ordering::Relaxed);
        c.errors.fetch_add(errors, Ordering::Relaxed);
        if irq.is_none() {
            c.polled.fetch_add(n as u64, Ordering::Relaxed);
        }
        // Tags first, so a woken thread finds room to submit again, and
        // the pieces that get the freed tokens find tags.
        wakes.submitters |= q.free_tags(freed);
        freed.clear();
        if let Some(block) = &self.block {
            if !pieces.is_empty() || block.has_backlog() {
                block.completed(pieces, finished);
                pieces.clear();
                for (owner, d) in finished.drain(..) {
                    let list = &mut per_owner[owner as usize];
                    if list.is_empty() {
                        touched.push(owner as usize);
                    }
                    list.push(d);
                }
            }
        }
        for owner in touched.drain(..) {
            if self.inboxes.deliver(owner, &per_owner[owner]) && !wakes.owners.contains(&owner) {
                wakes.owners.push(owner);
            }
            per_owner[owner].clear();
        }
        let spent = clock.now() - started;
        if irq.is_some() {
            self.irq_ns.fetch_add(spent, Ordering::Relaxed);
        }
        spent
    }
}

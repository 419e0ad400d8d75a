//! The host driver: what the kernel's NVMe driver and block layer do
//! between a thread's request and its completion. Submission writes the
//! request into its queue pair's SQ and rings the doorbell ([`QueuePair`]'s
//! tags give back-pressure, never a dropped request); the interrupt handler
//! of each target core reaps the CQ when the device raises the line
//! (`handler.rs`); completion delivery hands each completion to the waiter
//! that submitted it and wakes the waiter once enough are there
//! (the mailbox).
//!
//! [`Driver::start`] starts the handler threads for one [`Delivery`] and
//! returns the driver; a host then calls [`Driver::submit`] and
//! [`Driver::wait`] (or [`Driver::reap`]) from its waiters' threads. The
//! job workers are one such host; they use the same pieces directly.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use hdrhistogram::Histogram;
use policy::Nanos;

use crate::config::{Delivery, DriverConfig};
use crate::error::EmuError;
use crate::irq::LineCount;
use crate::mailbox::{Delivered, Inboxes, Mailbox, Mailboxes, WakeGroup};
use crate::queue::{QueuePair, Request};
use crate::sys::{self, Clock, ThreadProbe, Usage};

mod block;
mod handler;

pub use block::{ld_name, BlockCount, BlockLayer};

pub(crate) use handler::Handler;
pub use handler::HandlerCount;

/// Reaps one queue pair by polling: counted as polled, never as an
/// interrupt, on the caller's CPU time.
#[derive(Clone)]
pub struct Poller {
    handler: Arc<Handler>,
    clock: Clock,
}

impl Poller {
    /// Reaps what the device posted and delivers it; how many.
    pub fn poll(&self) -> usize {
        self.handler.poll(&self.clock)
    }
}

/// Runs one queue pair's handler for what is pending on its line, in the
/// caller's thread ([`Delivery::Inline`]: the device's own, after each
/// pass). Counted as interrupts and as interrupt time, as on the core.
#[derive(Clone)]
pub struct Servicer {
    handler: Arc<Handler>,
    clock: Clock,
}

impl Servicer {
    /// Handles what is pending; the nanoseconds it took.
    pub fn service(&self) -> Nanos {
        self.handler.service(&self.clock)
    }

    /// Whether an interrupt is pending on the line.
    pub fn pending(&self) -> bool {
        self.handler.queue.irq.is_pending()
    }
}

/// The host side of every queue pair, for a fixed set of waiters (a waiter
/// is one thread that submits and waits, as a fio job thread or an
/// application thread; completions for it are delivered to it alone).
pub struct Driver {
    /// One per queue pair, in the order given to [`Driver::start`].
    handlers: Vec<Arc<Handler>>,
    /// One per waiter.
    mailboxes: Arc<[Arc<Mailbox>]>,
    /// Each waiter's queue pair, as an index into `handlers`.
    queue_of: Vec<usize>,
    clock: Clock,
    delivery: Delivery,
    latency: handler::DeliveryHist,
    threads: Vec<JoinHandle<()>>,
    /// The CPU-time probes of the handler threads, one per queue pair.
    probes: Vec<ThreadProbe>,
    realtime: bool,
    /// LD between the waiters and the queue pairs (`DriverConfig::block`).
    block: Option<Arc<BlockLayer>>,
}

impl Driver {
    /// Starts the interrupt handling of `queues` as `cfg.delivery` says:
    /// per queue pair, a handler thread pinned to its core (at SCHED_FIFO
    /// with [`Delivery::Wake`] when allowed), or an idle poller (SCHED_IDLE)
    /// and its fallback thread with [`Delivery::Poll`]. Waiter `i` submits
    /// to `queues[waiters[i]]`. `clock` must be the device's.
    pub fn start(
        cfg: &DriverConfig,
        clock: Clock,
        queues: Vec<Arc<QueuePair>>,
        waiters: &[usize],
    ) -> Result<Driver, EmuError> {
        check_waiters(&queues, waiters)?;
        // The waiters of a queue pair (one core) sleep on its wake group,
        // each on its own bit.
        let groups: Vec<Arc<WakeGroup>> = queues.iter().map(|_| Arc::default()).collect();
        let mut per_queue = vec![0; queues.len()];
        let mailboxes: Arc<[Arc<Mailbox>]> = waiters
            .iter()
            .map(|&q| {
                let index = per_queue[q];
                per_queue[q] += 1;
                Arc::new(Mailbox::new(groups[q].clone(), index))
            })
            .collect();
        let inboxes = Arc::new(Mailboxes(mailboxes.clone()));
        Driver::start_with(cfg, clock, queues, waiters, inboxes, mailboxes)
    }

    /// As [`Driver::start`], for waiters that live outside this process
    /// (`cinterrupts exec`'s program threads): the handlers leave each
    /// waiter's completions in `inboxes` and wake it there. Waiter `i`
    /// submits to `queues[waiters[i]]`, through [`QueuePair::try_submit`];
    /// [`Driver::submit`], [`Driver::wait`] and [`Driver::reap`] have no
    /// waiter of their own here and must not be called.
    pub fn start_remote(
        cfg: &DriverConfig,
        clock: Clock,
        queues: Vec<Arc<QueuePair>>,
        waiters: &[usize],
        inboxes: Arc<dyn Inboxes>,
    ) -> Result<Driver, EmuError> {
        check_waiters(&queues, waiters)?;
        Driver::start_with(cfg, clock, queues, waiters, inboxes, Arc::new([]))
    }

    fn start_with(
        cfg: &DriverConfig,
        clock: Clock,
        queues: Vec<Arc<QueuePair>>,
        waiters: &[usize],
        inboxes: Arc<dyn Inboxes>,
        mailboxes: Arc<[Arc<Mailbox>]>,
    ) -> Result<Driver, EmuError> {
        let latency = handler::new_delivery_hist();
        let block = cfg.block.as_ref().map(|ld| {
            Arc::new(BlockLayer::new(
                ld,
                queues.clone(),
                waiters.len(),
                clock,
                cfg.recording.clone(),
            ))
        });
        let mut driver = Driver {
            handlers: queues
                .into_iter()
                .map(|q| {
                    Arc::new(Handler::new(
                        q,
                        inboxes.clone(),
                        waiters.len(),
                        latency.clone(),
                        cfg.recording.clone(),
                        cfg.handler_delay,
                        block.clone(),
                    ))
                })
                .collect(),
            mailboxes,
            queue_of: waiters.to_vec(),
            clock,
            delivery: cfg.delivery,
            latency,
            threads: Vec::new(),
            probes: Vec::new(),
            realtime: cfg.realtime_handler,
            block,
        };
        // On an error, dropping `driver` stops what was started.
        driver.spawn_handlers(cfg.realtime_handler)?;
        Ok(driver)
    }

    /// One thread per target core: the handler thread that the device wakes
    /// (SCHED_FIFO, so it preempts), or the idle poller (SCHED_IDLE) and,
    /// with polling, a SCHED_FIFO fallback per core.
    fn spawn_handlers(&mut self, want_realtime: bool) -> Result<(), EmuError> {
        let mode = self.delivery;
        if mode == Delivery::Inline {
            // The device's driver runs the handlers (`Driver::servicer`).
            return Ok(());
        }
        for handler in self.handlers.clone() {
            let (tx, rx) = mpsc::channel();
            let h = handler.clone();
            let clock = self.clock;
            let core = h.queue.core;
            let handle = std::thread::Builder::new()
                .name(format!("cint-irq/{core}"))
                .spawn(move || {
                    let pinned = sys::pin_to(core);
                    let class = match mode {
                        Delivery::Wake => want_realtime && sys::set_fifo(50).is_ok(),
                        Delivery::Poll => sys::set_idle().is_ok(),
                        Delivery::Inline => true,
                    };
                    let _ = tx.send((
                        pinned.map_err(|e| e.to_string()),
                        class,
                        ThreadProbe::this_thread(),
                    ));
                    match mode {
                        Delivery::Wake => h.run_thread(&clock),
                        Delivery::Poll | Delivery::Inline => h.run_poller(&clock),
                    }
                })
                .map_err(|e| EmuError::Config(format!("cannot start an interrupt handler: {e}")))?;
            if mode == Delivery::Wake {
                handler.queue.irq.attach(handle.thread().clone());
            }
            self.threads.push(handle);
            let (pinned, class, probe) = rx
                .recv()
                .map_err(|_| EmuError::Config("an interrupt handler died at start".into()))?;
            if let Err(e) = pinned {
                return Err(EmuError::Config(format!(
                    "cannot pin the interrupt handler to CPU {core}: {e}"
                )));
            }
            self.realtime &= class;
            self.probes.push(probe);
        }
        if mode == Delivery::Poll {
            for h in self.handlers.clone() {
                let h2 = h.clone();
                let clock = self.clock;
                let core = h.queue.core;
                let handle = std::thread::Builder::new()
                    .name(format!("cint-irqfb/{core}"))
                    .spawn(move || {
                        let _ = sys::pin_to(core);
                        let _ = sys::set_fifo(50);
                        h2.run_fallback(&clock);
                    })
                    .map_err(|e| {
                        EmuError::Config(format!("cannot start an interrupt handler: {e}"))
                    })?;
                h.queue.irq.attach_fallback(handle.thread().clone());
                self.threads.push(handle);
            }
        }
        Ok(())
    }

    /// Submits `reqs` for `waiter` into its queue pair's SQ and rings the
    /// doorbell once (blk-mq's plug). Without a free tag it sleeps until the
    /// handler frees one. Returns how many times it waited for a tag.
    ///
    /// # Safety
    /// Each request lends the device its buffer, as a DMA address: `buf`
    /// must be valid for reads and writes of `len` bytes, aligned to 4096
    /// for a file backend (O_DIRECT), and untouched by anything until this
    /// request's completion is delivered to `waiter`.
    pub unsafe fn submit(&self, waiter: u32, reqs: &[Request]) -> u64 {
        match &self.block {
            Some(b) => b.submit(self.queue_of[waiter as usize], waiter, false, reqs),
            None => self.queue(waiter).submit(waiter, reqs),
        }
    }

    /// The block layer as a handle another thread may keep (`exec`'s
    /// ingress submits through it).
    pub fn block_handle(&self) -> Option<Arc<BlockLayer>> {
        self.block.clone()
    }

    /// A handle that reaps queue pair `queue` by polling (a poll queue,
    /// `QueuePair::new_polled`): what a polling thread does in
    /// [`Driver::wait`], for a host whose waiters poll in another process.
    pub fn poller(&self, queue: usize) -> Poller {
        Poller {
            handler: self.handlers[queue].clone(),
            clock: self.clock,
        }
    }

    /// A handle that runs queue pair `queue`'s handler in the caller's
    /// thread ([`Delivery::Inline`]).
    pub fn servicer(&self, queue: usize) -> Servicer {
        Servicer {
            handler: self.handlers[queue].clone(),
            clock: self.clock,
        }
    }

    /// The block layer, if the driver has one (`DriverConfig::block`).
    pub fn block(&self) -> Option<&BlockLayer> {
        self.block.as_deref()
    }

    /// Blocks until at least `min` of `waiter`'s completions have been
    /// delivered, then moves up to `max` of them into `out`. A waiter is
    /// one thread: one at a time may wait for it. With [`Delivery::Poll`] the
    /// caller takes a pending interrupt itself before it sleeps, as a
    /// running thread does.
    pub fn wait(&self, waiter: u32, min: usize, max: usize, out: &mut Vec<Delivered>) {
        let mailbox = &self.mailboxes[waiter as usize];
        let own = &self.handlers[self.queue_of[waiter as usize]];
        if own.queue.polled {
            // A poll queue raises no interrupt: spin on it (`nvme_poll`).
            while out.len() < min.max(1) {
                mailbox.take(max.max(1) - out.len(), out);
                if out.len() < min.max(1) && own.poll(&self.clock) == 0 {
                    std::hint::spin_loop();
                }
            }
            return;
        }
        let handler = self.polled_handler(waiter);
        let clock = &self.clock;
        mailbox.wait(min, max, min, out, &mut || {
            if let Some(h) = handler {
                h.service(clock);
            }
        });
    }

    /// Moves up to `max` of `waiter`'s delivered completions into `out`
    /// without waiting (after taking a pending interrupt, with polled
    /// delivery). Returns how many.
    pub fn reap(&self, waiter: u32, max: usize, out: &mut Vec<Delivered>) -> usize {
        self.take_interrupt(waiter);
        self.mailboxes[waiter as usize].take(max, out)
    }

    /// With [`Delivery::Poll`]: runs the interrupt handler of `waiter`'s
    /// core in the calling thread if the line is raised (an interrupt taken
    /// in the running thread's context). Returns the time it took, which is
    /// interrupt time, not the caller's.
    pub fn take_interrupt(&self, waiter: u32) -> Nanos {
        self.polled_handler(waiter)
            .map_or(0, |h| h.service(&self.clock))
    }

    /// What the handlers did so far, over every queue pair.
    pub fn counts(&self) -> HandlerCount {
        self.handlers.iter().fold(HandlerCount::default(), |a, h| {
            a.plus(h.counters.snapshot())
        })
    }

    /// What the device raised on the lines so far, over every queue pair:
    /// raises, merges, and the fires that waited for the call slot.
    pub fn line_counts(&self) -> LineCount {
        self.handlers
            .iter()
            .fold(LineCount::default(), |a, h| a.plus(h.queue.irq.count()))
    }

    /// Delivery latency (device raise to handler start), ns, recorded while
    /// the configuration's recording is open.
    pub fn delivery_latency(&self) -> Histogram<u64> {
        self.latency.lock().expect("histogram lock").clone()
    }

    /// The handlers' CPU time so far, ns, over every queue pair (as the
    /// run's report counts it: see `handler_usage`).
    pub fn handler_cpu_ns(&self) -> u64 {
        self.handler_usage()
            .iter()
            .map(|u| u.user_ns + u.sys_ns)
            .sum()
    }

    /// Whether the handler threads got the scheduling class they asked for
    /// (SCHED_FIFO with wake-up delivery, SCHED_IDLE pollers with polling).
    pub fn realtime(&self) -> bool {
        self.realtime
    }

    /// Stops the handler threads once what is pending is handled, and
    /// waits for them to exit.
    pub fn stop(mut self) {
        self.halt();
    }

    pub(crate) fn halt(&mut self) {
        for h in &self.handlers {
            h.queue.irq.stop();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    fn queue(&self, waiter: u32) -> &QueuePair {
        &self.handlers[self.queue_of[waiter as usize]].queue
    }

    fn polled_handler(&self, waiter: u32) -> Option<&Handler> {
        (self.delivery == Delivery::Poll).then(|| &*self.handlers[self.queue_of[waiter as usize]])
    }

    /// The handler of each queue pair, for the run's reports.
    pub(crate) fn handlers(&self) -> &[Arc<Handler>] {
        &self.handlers
    }

    /// What a job thread needs of the driver: its queue pair, its mailbox,
    /// and (with polled delivery) its core's handler to run itself.
    pub(crate) fn parts(&self, waiter: u32) -> WaiterParts {
        let qi = self.queue_of[waiter as usize];
        let own = &self.handlers[qi];
        // A waiter on a poll queue still takes its core's interrupts (for
        // the other threads there) as any running thread does.
        let irq = if own.queue.polled {
            self.handlers
                .iter()
                .position(|h| h.queue.core == own.queue.core && !h.queue.polled)
        } else {
            Some(qi)
        };
        WaiterParts {
            queue_index: qi,
            block: self.block.clone(),
            queue: own.queue.clone(),
            mailbox: self.mailboxes[waiter as usize].clone(),
            handler: irq
                .filter(|_| self.delivery == Delivery::Poll)
                .map(|i| self.handlers[i].clone()),
            polled: own.queue.polled.then(|| own.clone()),
        }
    }

    /// The handlers' CPU time per queue pair: with wake-up delivery, the
    /// handler threads' whole time (the kernel's wake-up path included);
    /// with polling, the time spent handling, wherever it ran (the poller's
    /// spinning is the core's idle time).
    pub(crate) fn handler_usage(&self) -> Vec<Usage> {
        match self.delivery {
            Delivery::Wake => self.probes.iter().map(|p| p.read()).collect(),
            Delivery::Inline => self
                .handlers
                .iter()
                .map(|h| Usage {
                    user_ns: h.irq_ns.load(std::sync::atomic::Ordering::Relaxed),
                    ..Usage::default()
                })
                .collect(),
            Delivery::Poll => self
                .handlers
                .iter()
                .zip(&self.probes)
                .map(|(h, p)| Usage {
                    user_ns: h.irq_ns.load(std::sync::atomic::Ordering::Relaxed),
                    sys_ns: 0,
                    ..p.read()
                })
                .collect(),
        }
    }
}

/// Every waiter names a queue pair that exists.
fn check_waiters(queues: &[Arc<QueuePair>], waiters: &[usize]) -> Result<(), EmuError> {
    match waiters.iter().find(|&&q| q >= queues.len()) {
        Some(&bad) => Err(EmuError::Config(format!(
            "a waiter names queue pair {bad} of {}",
            queues.len()
        ))),
        None => Ok(()),
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.halt();
    }
}

/// See [`Driver::parts`].
pub(crate) struct WaiterParts {
    pub(crate) queue_index: usize,
    pub(crate) block: Option<Arc<BlockLayer>>,
    pub(crate) queue: Arc<QueuePair>,
    pub(crate) mailbox: Arc<Mailbox>,
    pub(crate) handler: Option<Arc<Handler>>,
    /// Its own queue pair's handler when that is a poll queue: the thread
    /// reaps it itself, spinning.
    pub(crate) polled: Option<Arc<Handler>>,
}

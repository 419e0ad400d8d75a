//! The simulated machine's state and the event loop that drives it. The
//! behaviour lives in its child modules, one concern each, `impl World`
//! blocks that apply what a mechanism's call answered: [`host`] (cores,
//! scheduler, interrupt handler), [`thread`] (what a job's thread does),
//! [`device`] (the NVMe controller and the policies), [`block`] (the block
//! layer), [`completion`] (completion modes), [`journal`] (the fsync path),
//! [`app`] (application models' threads), [`uring`] (io_uring's waits),
//! [`idling`] (idle states), [`central`] (UnICom's central poller) and
//! [`suspend`] (IRQ suspension of the CQs); [`program`] names the thread
//! kinds. `World`'s fields are private to this module
//! and those children; the rest of the crate (the run's set-up and its
//! report, `crate::run`) reaches it through [`World::new`] and the
//! accessors at the end of this file.

pub(crate) mod app;
mod block;
pub(crate) mod central;
mod completion;
mod device;
mod host;
mod idling;
pub(crate) mod journal;
pub(crate) mod program;
mod suspend;
mod thread;
mod uring;

use std::collections::VecDeque;

use hdrhistogram::Histogram;
use policy::{Marks, Nanos};
use rand_pcg::Pcg64Mcg;

pub(crate) use crate::cpu::{IrqWork, Kind};
use crate::events::{Ev, Events};
use crate::limits::BEHIND_REAL_TIME;
pub(crate) use crate::step::Step;
use crate::workload::ThreadSpec;
use crate::HostProfile;
pub(crate) use suspend::refuse_sqpoll;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TState {
    NotStarted,
    Runnable,
    Running,
    /// Waiting in a system call for completions.
    Blocked,
    /// Sleeping on a timer (rate limit, thinktime).
    Sleeping,
    /// A handler has decided to wake it; runnable when the handler ends.
    Waking,
    /// An application thread waiting for a thread of its instance to wake
    /// it ([`apps::Action::Park`], a futex wait; [`crate::world::app`]).
    Parked,
    Done,
}

// The histograms' range is a bound of the run's (limits).
pub(crate) use crate::limits::CLAT_MAX;

/// Per-direction measurements of a thread.
#[derive(Debug)]
pub(crate) struct DirStats {
    pub ops: u64,
    pub bytes: u64,
    pub clat: Histogram<u64>,
}

impl DirStats {
    fn new() -> Self {
        DirStats {
            ops: 0,
            bytes: 0,
            // 1 ns to 100 s at 3 significant digits: bounded memory however
            // long the run.
            clat: Histogram::new_with_bounds(1, CLAT_MAX, 3).expect("valid bounds"),
        }
    }
}

#[derive(Debug)]
pub(crate) struct Thread {
    pub spec: ThreadSpec,
    pub queue: u32,
    /// When the thread finished its work (its last completion), if it did.
    pub done_at: Option<Nanos>,
    pub state: TState,
    pub next: Step,
    pub rng: Pcg64Mcg,

    // The I/O loop.
    pub in_flight: u32,
    /// Requests prepared for the next submit call.
    pub batch: Vec<u32>,
    /// Of `batch`, in a multi-request submit call: the requests built so
    /// far, and of them those already flushed to the device
    /// ([`crate::world::thread::PLUG_MAX_REQUESTS`]).
    pub built: u32,
    pub flushed: u32,
    /// Completions delivered by interrupts and not yet taken by the thread.
    pub ready: VecDeque<u32>,
    /// Completions taken by the current waiting call so far.
    pub got: Vec<u32>,
    /// How many the current waiting call needs before it returns.
    pub needed: u32,
    /// How many the current waiting call takes at most.
    pub reap_max: u32,
    pub sleep_gen: u32,
    /// Spinning on its polled queue ([`Step::Poll`]).
    pub spinning: bool,
    /// DEFER_TASKRUN: completions on the ring's local list, run into
    /// `ready` when the thread enters the kernel ([`crate::world::uring`]).
    pub deferred: VecDeque<u32>,
    /// The io_uring waiting call in progress ([`::host::uring::Wait`]).
    pub uring_wait: Option<::host::uring::Wait>,

    // Measurements.
    /// Its requests completed by polling in the window (its CPU time is
    /// the CPU's: [`crate::cpu::Account`]).
    pub polled: u64,
    pub read: DirStats,
    pub write: DirStats,

    /// The application model driving it instead of fio's loop
    /// ([`crate::world::app`]); `None` for a job's thread.
    pub app: Option<Box<crate::state::app::Driver>>,
    /// What kind of thread it is: what decides its next step.
    pub program: &'static dyn program::Program,
}

impl Thread {
    pub(crate) fn new(spec: ThreadSpec, queue: u32, rng: Pcg64Mcg) -> Thread {
        Thread {
            spec,
            queue,
            done_at: None,
            state: TState::NotStarted,
            next: Step::Plan,
            rng,
            in_flight: 0,
            batch: Vec::new(),
            built: 0,
            flushed: 0,
            ready: VecDeque::new(),
            got: Vec::new(),
            needed: 0,
            reap_max: 0,
            sleep_gen: 0,
            spinning: false,
            deferred: VecDeque::new(),
            uring_wait: None,
            polled: 0,
            read: DirStats::new(),
            write: DirStats::new(),
            app: None,
            program: &program::JobLoop,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RState {
    Free,
    Prepared,
    InDevice,
    Posted,
    Delivered,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub tid: u32,
    pub marks: Marks,
    pub write: bool,
    pub bytes: u64,
    pub issued: Nanos,
    pub state: RState,
    /// Completed by polling: on a queue with no interrupt, unseen by the
    /// policy ([`crate::Completion`]).
    pub polled: bool,
}

/// Checks that every request completes exactly once and that every
/// nanosecond of every used core is accounted for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Audit {
    pub submitted: u64,
    pub serviced: u64,
    pub delivered: u64,
    pub consumed: u64,
    /// Deliveries of a request that was not waiting to be delivered.
    pub duplicates: u64,
    /// Requests still in flight when the simulation ran out of events.
    pub stranded: u64,
    /// Completion latencies above the histograms' range, counted at its top.
    pub clat_above_max: u64,
    /// Times the CQ was full and the device held a completion.
    pub cq_full: u64,
    /// Size of the request table: bounded by what is ever in flight, not by
    /// how many requests ran.
    pub request_slots: u64,
    /// Events the engine processed (stale ones included).
    pub events: u64,
    /// The same by kind, [`crate::events::EVENT_KINDS`]'s order.
    pub events_by_kind: [u64; 10],
    /// Threads not finished when the events ran out.
    pub unfinished_threads: u64,
    /// The measured window, ns.
    pub window_ns: Nanos,
    /// Per used core: (core, user + kernel + irq + idle ns in the window).
    pub core_accounted_ns: Vec<(usize, Nanos)>,
    /// The simulator's own state at the end, bytes: threads (with their
    /// latency histograms), requests, cores, queues and the event queue
    /// (the policies' own state not counted).
    pub state_bytes: u64,
    /// With a block-layer scheduler (`ld`): the pieces the device was sent,
    /// serviced and whose completions the handler delivered (the counts
    /// above are then the threads' requests: submitted to the block layer,
    /// serviced and delivered at their last piece, consumed). Without one,
    /// all 0.
    pub pieces_submitted: u64,
    pub pieces_serviced: u64,
    pub pieces_delivered: u64,
    /// Times the run was made a second time because the request records
    /// kept on a guess missed one its slowest 1% needs (`iopath::Keep`).
    pub tail_reruns: u64,
    /// Measured requests' records (`iopath`), and of them those kept for
    /// the slowest 1% (all of them with `Keep::All`).
    pub records_measured: u64,
    pub records_kept: u64,
    /// Most non-critical pieces dispatched to the device and not yet
    /// completed (their CQE reaped by the handler) at any time.
    pub max_noncritical_pieces: u64,
    /// Per thread: (sum of block-layer waits ns, requests) of the requests
    /// completed in the measured window (FR's T_Blk: submit to first
    /// dispatch). Empty without a block-layer scheduler.
    pub block_wait: Vec<(Nanos, u64)>,
    /// Writes the page cache served in their submit call (in runs where a
    /// job fsyncs, `crate::world::journal`), counted in `submitted` to
    /// `consumed` too; the rest of those went to the device.
    pub buffered: u64,
    /// Application runs ([`crate::simulate_app`]): operations the models
    /// finished, in the window or not, and wakes naming no thread of the
    /// waker's instance (a model's bug, dropped).
    pub app_ops: u64,
    pub app_bad_wakes: u64,
}

/// What a run counts in its measured window (its interrupts and context
/// switches are the cores', [`crate::cpu::Cpu`]).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Interrupts that reaped only the urgent entries (cint's UrgentOnly).
    pub urgent_only: u64,
    /// Completions the interrupts delivered.
    pub completions: u64,
    /// The same, by their request's mark (what `run` and `exec` report too).
    pub by_mark: report::ByMark,
    /// Requests completed by polling, and hybrid sleeps taken.
    pub polled: u64,
    pub hybrid_sleeps: u64,
    /// io_uring min-wait timers that ended a wait.
    pub uring_timeouts: u64,
}

pub(crate) struct World {
    now: Nanos,
    events: Events,
    host: HostProfile,
    /// The cores, their run queues and the threads' scheduling entities.
    cpu: crate::cpu::Cpu,
    threads: Vec<Thread>,
    requests: Vec<Request>,
    free: Vec<u32>,
    /// The NVMe controller: the device, the CQs and their policies.
    nvme: crate::nvme::Controller,
    /// The measured window [from, to): from the last thread's
    /// `startdelay + ramp_time` to the planned end of a time-bounded run or,
    /// earlier, the moment the last thread finished (fio's run time is a
    /// job's, from its start to its last completion; HOWTO `runtime`:
    /// "until it completes the configured I/O workload or until it has run
    /// for this specified amount of time, whichever occurs first").
    window_from: Nanos,
    window_to: Nanos,
    /// Threads that have finished.
    threads_done: usize,
    /// After a time-bounded run's end, requests in flight are drained (not
    /// measured) until this time at most: [`crate::limits::MAX_SERVICE`]
    /// after the end, then the run stops and reports them as stranded.
    drain_until: Nanos,
    /// Requests issued and not yet taken by their thread when the planned
    /// end came.
    in_flight_at_end: u64,
    /// The run stopped because it fell [`BEHIND_REAL_TIME`] behind real
    /// time.
    fell_behind: bool,
    /// What the run counted in the measured window.
    counts: Counts,
    audit: Audit,
    scratch: Vec<policy::cq::Reaped>,
    /// The block-layer scheduler, if any (`None`: requests go to the
    /// device whole, at once).
    block: Option<crate::blk::Block>,
    /// The completion mode, and hybrid polling's sleeps and statistics.
    polling: crate::polling::Polling,
    /// FastResponse's read-path breakdown and the device's queue depth
    /// (measurement only).
    path: crate::iopath::Tracker,
    /// The file system, in runs where a job fsyncs ([`crate::world::journal`]).
    journal: Option<crate::fs::FileSystem>,
    /// The jobs' threads: `threads[..job_threads]`; JBD2 follows them when
    /// a job fsyncs.
    job_threads: usize,
    /// Application runs: the operations' books and the models' buffers
    /// ([`crate::world::app`]); `None` for a job file's run.
    apps: Option<Box<crate::state::app::Apps>>,
    /// The cores' idle states and governors ([`crate::idle`]); `None` with
    /// idle states off.
    idle: Option<crate::idle::Idle>,
    /// A model broke its contract (more I/Os in flight than it declared):
    /// the run stops and says this.
    broken: Option<String>,
    /// UnICom's central poller, under `completion = central`
    /// ([`central`]).
    central: Option<central::CentralState>,
    /// IRQ suspension of the CQs ([`suspend`]); `None` when off.
    suspend: Option<suspend::Suspend>,
}

/// What a run's world is assembled from (`crate::run` decides each part;
/// [`World::new`] starts the clock, the books and the request table empty).
pub(crate) struct Parts {
    pub events: Events,
    pub host: HostProfile,
    pub cpu: crate::cpu::Cpu,
    pub threads: Vec<Thread>,
    pub nvme: crate::nvme::Controller,
    pub window_from: Nanos,
    pub block: Option<crate::blk::Block>,
    pub polling: crate::polling::Polling,
    pub path: crate::iopath::Tracker,
    pub journal: Option<crate::fs::FileSystem>,
    pub job_threads: usize,
    pub idle: Option<crate::idle::Idle>,
    pub central: Option<central::CentralState>,
    /// IRQ suspension's timeout, if on ([`suspend`]).
    pub irq_suspend: Option<Nanos>,
}

impl World {
    /// The world of `parts` at time 0, its window open until the planned
    /// end or the last thread's.
    pub(crate) fn new(parts: Parts) -> World {
        let Parts {
            events,
            host,
            cpu,
            threads,
            nvme,
            window_from,
            block,
            polling,
            path,
            journal,
            job_threads,
            idle,
            central,
            irq_suspend,
        } = parts;
        let suspend = irq_suspend.map(|t| suspend::Suspend::new(nvme.irq_cores().len(), t));
        World {
            now: 0,
            events,
            host,
            cpu,
            threads,
            requests: Vec::new(),
            free: Vec::new(),
            nvme,
            window_from,
            window_to: Nanos::MAX,
            threads_done: 0,
            drain_until: Nanos::MAX,
            in_flight_at_end: 0,
            fell_behind: false,
            counts: Counts::default(),
            audit: Audit::default(),
            scratch: Vec::new(),
            block,
            polling,
            path,
            journal,
            job_threads,
            apps: None,
            idle,
            broken: None,
            central,
            suspend,
        }
    }

    /// Hands the application threads their drivers (by thread number) and
    /// the run its books ([`app`]).
    pub(crate) fn attach_apps(
        &mut self,
        drivers: impl IntoIterator<Item = crate::state::app::Driver>,
        apps: crate::state::app::Apps,
    ) {
        for (th, d) in self.threads.iter_mut().zip(drivers) {
            th.app = Some(Box::new(d));
            th.program = &program::AppModel;
        }
        self.apps = Some(Box::new(apps));
    }

    /// The planned end of the run at `t`: the window closes then.
    pub(crate) fn end_at(&mut self, t: Nanos) {
        self.events.push(t, Ev::End);
    }

    /// Keeps the request records as `keep` says, or from a first run's
    /// `cuts` ([`crate::iopath::Tracker::keep`]).
    pub(crate) fn keep_records(&mut self, keep: crate::iopath::Keep, cuts: Option<&[usize]>) {
        self.path.keep(keep, cuts);
    }

    /// Keeps at most `total` request records ([`crate::iopath::Tracker::cap`]).
    pub(crate) fn cap_records(&mut self, total: usize) {
        self.path.cap(total);
    }

    /// Counts the records measured and kept into the audit (after the run).
    pub(crate) fn count_records(&mut self) {
        (self.audit.records_measured, self.audit.records_kept) = self.path.records();
    }

    /// This run is the second of a run whose first kept too few records.
    pub(crate) fn count_tail_rerun(&mut self) {
        self.audit.tail_reruns += 1;
    }

    /// Why a model broke its contract, if one did (taken once).
    pub(crate) fn take_broken(&mut self) -> Option<String> {
        self.broken.take()
    }

    pub(crate) fn now(&self) -> Nanos {
        self.now
    }

    pub(crate) fn host(&self) -> &HostProfile {
        &self.host
    }

    /// Every thread, by thread number (the jobs' first, [`Self::jobs`]).
    pub(crate) fn threads(&self) -> &[Thread] {
        &self.threads
    }

    /// The jobs' threads (JBD2, if any, follows them).
    pub(crate) fn jobs(&self) -> &[Thread] {
        &self.threads[..self.job_threads]
    }

    pub(crate) fn cpu(&self) -> &crate::cpu::Cpu {
        &self.cpu
    }

    pub(crate) fn nvme(&self) -> &crate::nvme::Controller {
        &self.nvme
    }

    pub(crate) fn path(&self) -> &crate::iopath::Tracker {
        &self.path
    }

    pub(crate) fn counts(&self) -> &Counts {
        &self.counts
    }

    pub(crate) fn audit(&self) -> &Audit {
        &self.audit
    }

    pub(crate) fn idle(&self) -> Option<&crate::idle::Idle> {
        self.idle.as_ref()
    }

    pub(crate) fn journal(&self) -> Option<&crate::fs::FileSystem> {
        self.journal.as_ref()
    }

    /// Whether a block-layer scheduler sits between threads and device.
    pub(crate) fn has_block_layer(&self) -> bool {
        self.block.is_some()
    }

    /// The host's completion mode ([`crate::polling`]).
    pub(crate) fn completion_mode(&self) -> crate::Completion {
        self.polling.mode()
    }

    /// The central poller's state, under `completion = central`.
    pub(crate) fn central(&self) -> Option<&central::CentralState> {
        self.central.as_ref()
    }

    /// Requests in flight when the planned end came.
    pub(crate) fn in_flight_at_end(&self) -> u64 {
        self.in_flight_at_end
    }

    /// Whether the run stopped for falling behind real time.
    pub(crate) fn fell_behind(&self) -> bool {
        self.fell_behind
    }

    /// The cores that run at least one thread, in order.
    pub(crate) fn used_cores(&self) -> Vec<usize> {
        let mut used: Vec<usize> = self.threads.iter().map(|t| t.spec.core).collect();
        used.sort_unstable();
        used.dedup();
        used
    }

    /// Runs until no event is left, or until the drain after the planned end
    /// is over. `progress` is called every so often.
    pub(crate) fn run(&mut self, planned_end: Nanos, progress: &mut dyn FnMut(Nanos, Nanos)) {
        let mut n: u32 = 0;
        let started = std::time::Instant::now();
        while let Some((t, ev)) = self.events.pop() {
            debug_assert!(t >= self.now, "time went back: {t} < {}", self.now);
            if t > self.drain_until {
                break;
            }
            self.now = t;
            self.audit.events += 1;
            if self.broken.is_some() {
                break;
            }
            self.audit.events_by_kind[ev.kind()] += 1;
            match ev {
                Ev::CoreDone { core, gen } => {
                    if self.cpu.is_current(core, gen) {
                        self.core_done(core);
                    } else {
                        self.audit.events_by_kind[9] += 1;
                    }
                }
                Ev::ServiceDone { req, .. } => self.service_done(req),
                Ev::Deadline { queue } => self.deadline(queue, t),
                Ev::Timer { tid, gen } => {
                    let th = &self.threads[tid as usize];
                    if th.sleep_gen == gen && th.state == TState::Sleeping {
                        let core = th.spec.core as u32;
                        self.raise(core, IrqWork::Timer { tid });
                    } else if th.uring_wait.is_some() {
                        self.uring_timer(tid, gen);
                    }
                }
                Ev::Start { tid } => self.start_thread(tid),
                Ev::Tick { core } => self.tick(core),
                Ev::End => self.end_window(),
                Ev::Commit { .. } => self.commit_timer(),
                Ev::IrqFallback { core, since } => self.irq_fallback(core, since),
            }
            n = n.wrapping_add(1);
            if n % (1 << 16) == 0 {
                progress(self.now, planned_end);
                // The one clock the simulator reads: a guard, not a model
                // input (crate::limits::BEHIND_REAL_TIME).
                let behind = std::time::Duration::from_nanos(self.now) + BEHIND_REAL_TIME;
                if started.elapsed() > behind {
                    self.fell_behind = true;
                    break;
                }
            }
        }
        progress(self.now, planned_end);
        self.finish();
    }

    /// What the world's own structures hold, bytes (capacities, not
    /// lengths: what is allocated).
    fn state_bytes(&self) -> u64 {
        use std::mem::size_of;
        let hist = |h: &Histogram<u64>| h.distinct_values() * size_of::<u64>();
        let threads: usize = self
            .threads
            .iter()
            .map(|t| {
                size_of::<Thread>()
                    + hist(&t.read.clat)
                    + hist(&t.write.clat)
                    + (t.batch.capacity() + t.ready.capacity() + t.got.capacity()) * 4
                    + t.app
                        .as_ref()
                        .map_or(0, |_| size_of::<crate::state::app::Driver>())
            })
            .sum();
        let requests = self.requests.capacity() * size_of::<Request>() + self.free.capacity() * 4;
        let block = self.block.as_ref().map_or(0, |b| b.bytes());
        (threads
            + self.cpu.bytes()
            + requests
            + self.nvme.bytes()
            + block
            + self.events.bytes()
            + self.apps.as_ref().map_or(0, |a| a.bytes())) as u64
    }

    /// The threads' requests not yet taken back (a block layer's pieces
    /// not counted).
    fn requests_in_flight(&self) -> u64 {
        let busy = self
            .requests
            .iter()
            .filter(|r| r.state != RState::Free)
            .count();
        let pieces = self.block.as_ref().map_or(0, |b| b.in_flight());
        (busy - pieces) as u64
    }

    /// The measured window as it stands (its end is `Nanos::MAX` until the
    /// planned end or the last thread's).
    pub(crate) fn window(&self) -> (Nanos, Nanos) {
        (self.window_from, self.window_to)
    }

    pub(crate) fn measuring(&self, t: Nanos) -> bool {
        t >= self.window_from && t < self.window_to
    }

    fn end_window(&mut self) {
        self.window_to = self.window_to.min(self.now);
        self.drain_until = self.now.saturating_add(crate::limits::MAX_SERVICE);
        self.in_flight_at_end = self.requests_in_flight();
        for tid in 0..self.threads.len() {
            let th = &mut self.threads[tid];
            th.spec.issuer.stop();
            match th.state {
                // Sleeping only to throttle: wake now so it drains or ends.
                TState::Sleeping => {
                    th.sleep_gen += 1;
                    let gen = th.sleep_gen;
                    self.events.push(
                        self.now,
                        Ev::Timer {
                            tid: tid as u32,
                            gen,
                        },
                    );
                }
                TState::NotStarted => th.state = TState::Done,
                _ => {}
            }
        }
        if self.apps.is_some() {
            self.apps_stop();
        }
    }

    /// A thread has finished; the last one to finish closes the window
    /// unless the planned end already has.
    pub(crate) fn thread_done(&mut self) {
        self.threads_done += 1;
        // fio's cpuio `exit_on_io_done` (engines/cpu.c): a burner stops at
        // its next cycle once no job doing I/O is running or pending.
        let io_running = self.threads[..self.job_threads]
            .iter()
            .any(|t| !t.spec.job.ioengine.is_noio() && t.state != TState::Done);
        if !io_running {
            for t in &mut self.threads[..self.job_threads] {
                if t.spec.job.exit_on_io_done && t.spec.job.ioengine.is_noio() {
                    t.spec.issuer.stop();
                }
            }
        }
        if self.threads_done == self.job_threads {
            self.window_to = self.window_to.min(self.now);
            self.central_stop();
        }
    }

    /// Closes the books when the last event has run.
    fn finish(&mut self) {
        if self.window_to == Nanos::MAX {
            self.window_to = self.now;
        }
        let w = self.window();
        self.cpu.close(self.now, w);
        self.audit.stranded = self.requests_in_flight();
        if let Some(b) = &self.block {
            self.audit.block_wait = b.waits().to_vec();
        }
        self.audit.request_slots = self.requests.len() as u64;
        self.audit.unfinished_threads = self.threads[..self.job_threads]
            .iter()
            .filter(|t| t.state != TState::Done)
            .count() as u64;
        self.audit.window_ns = self.window_to - self.window_from.min(self.window_to);
        self.audit.state_bytes = self.state_bytes();
        self.audit.core_accounted_ns = self
            .used_cores()
            .into_iter()
            .map(|c| {
                let t = self.cpu.time(c);
                (c, t.user + t.kernel + t.irq + t.idle)
            })
            .collect();
    }
}

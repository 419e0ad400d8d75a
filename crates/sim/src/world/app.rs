//! Threads driven by an application model ([`apps::AppThread`], issue 16)
//! instead of fio's loop: the model says what the thread does next and the
//! simulator charges it with the same mechanisms as a job's thread (its
//! core and CFS, its core's SQ/CQ and policy, the handler, the device, the
//! block layer, polling where the host's mode polls a blocking call).
//!
//! - `Compute(ns)`: a user segment.
//! - `Submit(ios)`: the submitting call, as fio's batch: `syscall` +
//!   `submit_per_request` each, the I/Os reaching the device (or the block
//!   layer) when it ends, with the model's marks. A `Waiter::Blocking`
//!   thread's call then waits for the I/Os it submitted.
//! - `Wait { min, max }`: the waiting call as a job's engine makes it
//!   (`io_getevents` for `Waiter::Libaio`); when it returns the model is
//!   told the tags of the I/Os it took ([`apps::AppThread::completed`]).
//! - `SleepUntil(t)`: a timer sleep, woken by the timer's interrupt.
//! - `Park`: sleeps until a thread of its instance wakes it.
//! - `Done`: the thread finishes.
//!
//! Wakes: after every call into a model the simulator drains its
//! operations and the wakes it made. A wake of a parked thread of the same
//! instance goes through the scheduler's wake-up path
//! ([`World::enqueue_woken`]: CFS placement and the wake-up preemption
//! check; a target on another core is kicked there); the waker pays a
//! futex_wake call first (`syscall` + `wakeup` per thread woken, the
//! handler's cost of a wake-up). A wake of a thread that is not parked is
//! dropped, and no call is charged when nobody was woken: glibc's mutexes
//! and condition variables skip the system call when no one waits (our
//! reading of nptl's `lll_unlock` and `__condvar_cancel_waiting`).

use apps::{Action, AppIo, PlacedThread};
use hdrhistogram::Histogram;
use policy::Nanos;

use crate::cause::{Cause, Mix};
use crate::limits::{MAX_IN_FLIGHT, MAX_SERVICE, MAX_THREADS};
use crate::workload::{ThreadSpec, Waiter};
use crate::world::{Kind, Step, TState, World};
use crate::{HostProfile, SimError};

/// The longest user segment charged at once: a longer `Compute` runs as
/// several back to back (our choice, the device's bound on a command, so
/// virtual time never nears overflow).
const MAX_SEGMENT: Nanos = MAX_SERVICE;

use crate::state::app::{Apps, Driver, OpStats};

impl World {
    /// Applies the model's next action (the thread is on its CPU).
    pub(crate) fn app_plan(&mut self, tid: u32, core: u32) {
        let now = self.now;
        let th = &mut self.threads[tid as usize];
        let d = th.app.as_mut().expect("an application thread");
        if let Some(n) = d.then_wait.take() {
            self.app_wait(tid, n, n);
            return;
        }
        let action = match d.pending.take() {
            Some(action) => action,
            None => {
                let action = d.model.next(now, &mut th.rng);
                let woken = self.app_collect(tid);
                if woken > 0 {
                    // The futex_wake call comes first: the action waits.
                    let d = self.threads[tid as usize].app.as_mut().expect("app");
                    d.pending = Some(action);
                    let cost = self.host.syscall + self.host.wakeup * woken;
                    let mix = Mix::two(Cause::Syscall, self.host.syscall, Cause::Wakeup);
                    self.start_seg(core, Kind::Kernel, mix, cost, Step::Plan);
                    return;
                }
                action
            }
        };
        match action {
            Action::Compute(ns) => {
                let now_ns = ns.min(MAX_SEGMENT);
                if ns > MAX_SEGMENT {
                    let d = self.threads[tid as usize].app.as_mut().expect("app");
                    d.pending = Some(Action::Compute(ns - MAX_SEGMENT));
                }
                self.start_seg(core, Kind::User, Mix::of(Cause::User), now_ns, Step::Plan);
            }
            Action::Submit(ios) => self.app_submit(tid, ios),
            Action::Wait { min, max } => self.app_wait(tid, min, max),
            Action::SleepUntil(t) => self.sleep_then(tid, core, t.max(now), Step::Plan),
            Action::Park => {
                let th = &mut self.threads[tid as usize];
                th.state = TState::Parked;
                th.next = Step::Plan;
                self.leave_cpu(core);
            }
            Action::Done => self.finished(tid, core),
        }
    }

    /// The submitting call with the model's I/Os; a blocking thread's call
    /// then waits for them.
    fn app_submit(&mut self, tid: u32, ios: Vec<AppIo>) {
        let polled = self.polling(tid);
        let th = &mut self.threads[tid as usize];
        let d = th.app.as_mut().expect("app");
        let n = u32::try_from(ios.len()).unwrap_or(u32::MAX);
        if th.in_flight.saturating_add(n) > d.max_in_flight {
            // The bound its queues were sized and checked by (limits).
            self.broken = Some(format!(
                "thread '{}': submitted {n} I/O(s) with {} in flight, above its max_in_flight {} (an application model's bug)",
                th.spec.job.name, th.in_flight, d.max_in_flight
            ));
            let core = th.spec.core as u32;
            self.finished(tid, core);
            return;
        }
        if th.spec.waiter == Waiter::Blocking && n > 0 {
            d.then_wait = Some(n);
        }
        for io in ios {
            // An application model has no criticality tag of its own.
            let slot = self.new_routed_request(tid, io.marks, io.write, io.bytes, polled, false);
            let apps = self.apps.as_mut().expect("an application run");
            apps.set_tag(slot, io.tag);
            self.threads[tid as usize].batch.push(slot);
        }
        self.step(tid, Step::Submit);
    }

    /// The waiting call: returns once `min` of the thread's I/Os are taken
    /// (at most what it has in flight: a model asking for more would wait
    /// forever), taking at most `max`.
    fn app_wait(&mut self, tid: u32, min: u32, max: u32) {
        let th = &mut self.threads[tid as usize];
        th.needed = min.min(th.in_flight);
        th.reap_max = max.max(th.needed);
        if th.needed == 0 && th.ready.is_empty() {
            // Nothing to wait for and nothing to take: the call still
            // costs a system call (our choice; io_uring would peek its
            // ring from user space), so a model that polls an empty queue
            // lets time pass rather than looping at one instant.
            let (core, cost) = (th.spec.core as u32, self.host.syscall);
            let mix = Mix::of(Cause::Syscall);
            self.start_seg(core, Kind::Kernel, mix, cost, Step::Reap);
            return;
        }
        if th.spec.waiter == Waiter::Blocking {
            // The blocking call itself waits (its return path reaps).
            self.step(tid, Step::Reap);
        } else {
            self.step(tid, Step::GetEvents);
        }
    }

    /// The waiting call returned `tags`: the model is told (the wakes and
    /// operations this makes are drained after its next decision, at the
    /// same instant).
    pub(crate) fn app_completed(&mut self, tid: u32, mut tags: Vec<u64>) {
        let now = self.now;
        let d = self.threads[tid as usize].app.as_mut().expect("app");
        d.model.completed(&tags, now);
        tags.clear();
        if let Some(apps) = self.apps.as_mut() {
            apps.tags_buf = tags;
        }
    }

    /// Drains the model's finished operations into the books and its wakes
    /// into the scheduler; the number of parked threads it woke.
    fn app_collect(&mut self, tid: u32) -> u64 {
        let (from, to) = self.window();
        let measured = |t: Nanos| t >= from && t < to;
        let apps = self.apps.as_mut().expect("an application run");
        let d = self.threads[tid as usize].app.as_mut().expect("app");
        let (instance, background) = (d.instance, d.background);
        d.model.drain_ops(&mut apps.ops_buf);
        d.model.drain_wakes(&mut apps.wakes_buf);
        let mut ops = std::mem::take(&mut apps.ops_buf);
        self.audit.app_ops += ops.len() as u64;
        for op in ops.drain(..) {
            apps.record(instance, background, op, measured(op.end));
        }
        apps.ops_buf = ops;
        let mut wakes = std::mem::take(&mut apps.wakes_buf);
        let mut woken = 0;
        let waker_core = self.threads[tid as usize].spec.core;
        for index in wakes.drain(..) {
            let target = self
                .apps
                .as_ref()
                .and_then(|a| a.tids.get(instance)?.get(index).copied().flatten());
            let Some(target) = target else {
                self.audit.app_bad_wakes += 1;
                continue;
            };
            if self.threads[target as usize].state == TState::Parked {
                self.app_wake(target, waker_core);
                woken += 1;
            }
        }
        if let Some(apps) = self.apps.as_mut() {
            apps.wakes_buf = wakes;
        }
        woken
    }

    /// A parked thread becomes runnable through the scheduler's wake-up
    /// path; its core, if another than the waker's, is kicked (it may
    /// idle, or preempt what runs there).
    fn app_wake(&mut self, tid: u32, waker_core: usize) {
        self.enqueue_woken(tid);
        let core = self.threads[tid as usize].spec.core;
        if core != waker_core {
            self.kick(core as u32);
        }
    }

    /// The planned end: every model is told to stop and finish what it has
    /// in flight, and every parked thread is woken to see it (no thread
    /// pays for that: the run's end is nobody's work).
    pub(crate) fn apps_stop(&mut self) {
        for tid in 0..self.threads.len() {
            if self.threads[tid].app.is_none() {
                continue;
            }
            let d = self.threads[tid].app.as_mut().expect("app");
            d.model.stop();
            // Its operations and wakes are drained like after any call;
            // every parked thread is woken below anyway.
            self.app_collect(tid as u32);
        }
        for tid in 0..self.threads.len() {
            if self.threads[tid].app.is_some() && self.threads[tid].state == TState::Parked {
                self.app_wake(tid as u32, usize::MAX);
            }
        }
    }

    /// The application part of the report.
    pub(crate) fn apps_report(&self) -> Option<report::AppsReport> {
        let apps = self.apps.as_ref()?;
        let window = self.window_to.saturating_sub(self.window_from);
        let rate = |n: u64| {
            if window == 0 {
                0.0
            } else {
                n as f64 * 1e9 / window as f64
            }
        };
        let mut book: Vec<&OpStats> = apps.book.iter().filter(|s| s.ops > 0).collect();
        book.sort_by_key(|s| (s.instance, s.background, s.kind));
        let entry =
            |instance: usize, kind: &str, background: bool, ops, items, lat: &Histogram<u64>| {
                report::OpReport {
                    instance,
                    name: apps.names[instance].clone(),
                    kind: kind.to_string(),
                    background,
                    ops,
                    items,
                    ops_per_sec: rate(ops),
                    items_per_sec: rate(items),
                    lat: report::LatencyStats::from_histogram(lat),
                    cdf: report::latency::cdf(lat),
                }
            };
        let mut ops: Vec<report::OpReport> = Vec::with_capacity(book.len() + apps.names.len());
        for (i, s) in book.iter().enumerate() {
            ops.push(entry(
                s.instance,
                s.kind.name(),
                s.background,
                s.ops,
                s.items,
                &s.lat,
            ));
            // After an instance's last foreground kind, when it has more
            // than one: their joint entry (`all`), whose percentiles are
            // over every foreground operation (YCSB's and KVell's overall
            // latency, TOS Fig 23), not a mix of the kinds' own.
            let last =
                !matches!(book.get(i + 1), Some(n) if n.instance == s.instance && !n.background);
            if s.background || !last {
                continue;
            }
            let kinds: Vec<&&OpStats> = book
                .iter()
                .filter(|o| o.instance == s.instance && !o.background)
                .collect();
            if kinds.len() < 2 {
                continue;
            }
            let mut joint = kinds[0].lat.clone();
            for k in &kinds[1..] {
                joint.add(&k.lat).expect("histograms of the same bounds");
            }
            let n = kinds.iter().map(|k| k.ops).sum();
            let items = kinds.iter().map(|k| k.items).sum();
            ops.push(entry(s.instance, "all", false, n, items, &joint));
        }
        let frac = |ns: Nanos| {
            if window == 0 {
                0.0
            } else {
                ns as f64 / window as f64
            }
        };
        let cores = self
            .used_cores()
            .into_iter()
            .map(|c| {
                let t = self.cpu.time(c);
                let (irqs, ctx) = self.cpu.counts(c);
                report::CoreReport {
                    core: c,
                    user: frac(t.user),
                    kernel: frac(t.kernel),
                    irq: frac(t.irq),
                    idle: frac(t.idle),
                    interrupts: irqs,
                    context_switches: ctx,
                }
            })
            .collect();
        Some(report::AppsReport { ops, cores })
    }
}

/// The application's threads as simulated threads, each pinned to its core,
/// the threads of one instance one process; refuses what the simulator
/// cannot hold (a core the host lacks, more than [`MAX_THREADS`] threads or
/// [`MAX_IN_FLIGHT`] I/Os in flight, a thread deeper than the device's
/// queues), one line naming the thread.
pub(crate) fn place(
    threads: Vec<PlacedThread>,
    host: &HostProfile,
    queue_depth: u32,
    runtime: Nanos,
) -> Result<(Vec<ThreadSpec>, Vec<Driver>, Apps), SimError> {
    if threads.is_empty() {
        return Err(SimError::Config("the application has no threads".into()));
    }
    if threads.len() > MAX_THREADS {
        return Err(SimError::Config(format!(
            "{} application threads: more than {MAX_THREADS}, the simulator's bound (each holds 0.5 MB of latency histograms)",
            threads.len()
        )));
    }
    let mut names: Vec<Option<String>> = Vec::new();
    let mut tids: Vec<Vec<Option<u32>>> = Vec::new();
    let mut in_flight = 0u64;
    let mut specs = Vec::with_capacity(threads.len());
    let mut drivers = Vec::with_capacity(threads.len());
    for (tid, t) in threads.into_iter().enumerate() {
        let fail = |reason: String| SimError::Config(format!("thread '{}': {reason}", t.name));
        if t.core >= host.cores as usize {
            return Err(fail(format!(
                "core {} does not exist on host '{}' ({} cores, 0-{})",
                t.core,
                host.name,
                host.cores,
                host.cores - 1
            )));
        }
        // Instances and indices name threads: none can pass the count.
        if t.instance >= MAX_THREADS || t.index >= MAX_THREADS {
            return Err(fail(format!(
                "instance {} index {}: each must be below {MAX_THREADS}, the most threads a run has",
                t.instance, t.index
            )));
        }
        if t.instance >= tids.len() {
            tids.resize(t.instance + 1, Vec::new());
            names.resize(t.instance + 1, None);
        }
        let slots = &mut tids[t.instance];
        if t.index >= slots.len() {
            slots.resize(t.index + 1, None);
        }
        if slots[t.index].is_some() {
            return Err(fail(format!(
                "instance {} has two threads of index {}",
                t.instance, t.index
            )));
        }
        slots[t.index] = Some(tid as u32);
        names[t.instance].get_or_insert_with(|| t.name.split('/').next().unwrap_or("").to_string());
        let depth = t.thread.max_in_flight();
        if depth > queue_depth {
            return Err(fail(format!(
                "max_in_flight {depth} exceeds the device's queue depth {queue_depth}"
            )));
        }
        in_flight += u64::from(depth);
        if in_flight > MAX_IN_FLIGHT {
            return Err(fail(format!(
                "more than {MAX_IN_FLIGHT} I/Os in flight over all threads (the sum of max_in_flight): the simulator's bound"
            )));
        }
        let waiter = t.thread.waiter();
        // A stand-in job: its name and engine are what the report shows
        // and what the completion mode reads (a blocking call polls when
        // the host's mode polls); every other option is fio's default,
        // which no part of an application thread's path reads.
        let job = jobs::Job {
            name: t.name.clone(),
            ioengine: match waiter {
                Waiter::Blocking => jobs::Engine::Psync,
                Waiter::Libaio => jobs::Engine::Libaio,
                Waiter::IoUring => jobs::Engine::IoUring,
            },
            thread: true,
            ..jobs::Job::default()
        };
        let bounds = jobs::Bounds {
            runtime: Some(runtime),
            bytes: None,
            ios: None,
        };
        specs.push(ThreadSpec {
            issuer: jobs::Issuer::new(&job, bounds, 0),
            job,
            waiter,
            core: t.core,
            process: t.instance as u32,
            start: 0,
            measure_from: 0,
            stop_at: Some(runtime),
            bounds,
            after: Vec::new(),
            serial: false,
            kthread: false,
            uring: None,
        });
        drivers.push(Driver::new(t.instance, t.background, t.thread));
    }
    let names = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| n.unwrap_or_else(|| format!("instance{i}")))
        .collect();
    Ok((specs, drivers, Apps::new(names, tids)))
}

//! Application threads in the simulator (issue 16): threads driven by an
//! `apps::AppThread` model instead of fio's loop. The models here are the
//! tests' own: a blocking-pread engine (each operation two dependent reads),
//! an aio-batch engine (each operation one `io_submit` of a batch, Barrier
//! on its last I/O, then `io_getevents` for all of it), and a producer that
//! wakes a parked consumer on another core.

mod common;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use apps::{Action, AppIo, AppThread, OpDone, OpKind, PlacedThread, Waiter};
use common::check_exactly_once;
use policy::{Marks, Nanos, PolicySpec, MS, US};
use proptest::prelude::*;
use rand::RngCore;
use report::RunReport;
use sim::{Audit, SimConfig, SimError};

/// What a model saw: operations it finished and when, so a test can count
/// those in the window itself.
#[derive(Debug, Default)]
struct Seen {
    /// End of every operation finished, per (kind, items).
    ends: Vec<(OpKind, u32, Nanos)>,
    /// Tags returned more than once, or never submitted.
    bad_tags: u64,
}

type Shared = Rc<RefCell<Seen>>;

/// Bookkeeping every test model shares: the operations to hand over, the
/// tags out, whether it was told to stop.
#[derive(Debug)]
struct Base {
    seen: Shared,
    ops: Vec<OpDone>,
    out: Vec<u64>,
    next_tag: u64,
    stopped: bool,
    /// Operations left before it ends on its own (None: until stopped).
    left: Option<u64>,
}

impl Base {
    fn new(seen: &Shared, left: Option<u64>) -> Base {
        Base {
            seen: seen.clone(),
            ops: Vec::new(),
            out: Vec::new(),
            next_tag: 0,
            stopped: false,
            left,
        }
    }

    fn io(&mut self, marks: Marks) -> AppIo {
        self.next_tag += 1;
        self.out.push(self.next_tag);
        AppIo {
            tag: self.next_tag,
            write: false,
            bytes: 4096,
            marks,
        }
    }

    fn take(&mut self, tags: &[u64]) {
        for t in tags {
            match self.out.iter().position(|o| o == t) {
                Some(i) => {
                    self.out.swap_remove(i);
                }
                None => self.seen.borrow_mut().bad_tags += 1,
            }
        }
    }

    fn finish(&mut self, kind: OpKind, start: Nanos, end: Nanos, items: u32) {
        self.ops.push(OpDone {
            kind,
            start,
            end,
            items,
        });
        self.seen.borrow_mut().ends.push((kind, items, end));
        if let Some(n) = self.left.as_mut() {
            *n -= 1;
        }
    }

    /// No new operation: stopped, or its count is done.
    fn over(&self) -> bool {
        self.stopped || self.left == Some(0)
    }
}

/// A blocking-pread engine: each operation computes 2 us, then reads an
/// index block and, once it is back, a data block (dependent reads, each a
/// blocking `pread` marked Urgent as TOS Table 1 marks blocking reads).
#[derive(Debug)]
struct Pread {
    base: Base,
    /// 0: compute next; 1: submit the index read; 2: the data read; 3: done
    /// with both.
    phase: u8,
    start: Nanos,
}

impl Pread {
    fn new(seen: &Shared, left: Option<u64>) -> Pread {
        Pread {
            base: Base::new(seen, left),
            phase: 0,
            start: 0,
        }
    }
}

impl AppThread for Pread {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }
    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        match self.phase {
            0 if self.base.over() => Action::Done,
            0 => {
                self.start = now;
                self.phase = 1;
                Action::Compute(2 * US)
            }
            1 | 2 => {
                self.phase += 1;
                Action::Submit(vec![self.base.io(Marks::URGENT)])
            }
            _ => unreachable!("phase 3 is left in completed()"),
        }
    }
    fn completed(&mut self, tags: &[u64], now: Nanos) {
        self.base.take(tags);
        if self.phase == 3 {
            self.base.finish(OpKind::Read, self.start, now, 1);
            self.phase = 0;
        }
    }
    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.base.ops);
    }
    fn stop(&mut self) {
        self.base.stopped = true;
    }
    fn max_in_flight(&self) -> u32 {
        1
    }
}

/// An aio-batch engine: each operation computes 1 us, submits `batch` reads
/// in one `io_submit` (the last marked Barrier when `barrier`), then waits
/// for all of them in `io_getevents`; items: the batch.
#[derive(Debug)]
struct AioBatch {
    base: Base,
    batch: u32,
    barrier: bool,
    /// 0: compute; 1: submit; 2: wait; (back to 0 when all are in).
    phase: u8,
    start: Nanos,
}

impl AioBatch {
    fn new(seen: &Shared, left: Option<u64>, batch: u32, barrier: bool) -> AioBatch {
        AioBatch {
            base: Base::new(seen, left),
            batch,
            barrier,
            phase: 0,
            start: 0,
        }
    }
}

impl AppThread for AioBatch {
    fn waiter(&self) -> Waiter {
        Waiter::Libaio
    }
    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        match self.phase {
            0 if self.base.over() => Action::Done,
            0 => {
                self.start = now;
                self.phase = 1;
                Action::Compute(US)
            }
            1 => {
                self.phase = 2;
                let ios = (0..self.batch)
                    .map(|i| {
                        let last = i + 1 == self.batch;
                        self.base.io(if last && self.barrier {
                            Marks::BARRIER
                        } else {
                            Marks::NONE
                        })
                    })
                    .collect();
                Action::Submit(ios)
            }
            _ => {
                let left = self.base.out.len() as u32;
                Action::Wait {
                    min: left,
                    max: left,
                }
            }
        }
    }
    fn completed(&mut self, tags: &[u64], now: Nanos) {
        self.base.take(tags);
        if self.phase == 2 && self.base.out.is_empty() {
            self.base.finish(OpKind::Scan, self.start, now, self.batch);
            self.phase = 0;
        }
    }
    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.base.ops);
    }
    fn stop(&mut self) {
        self.base.stopped = true;
    }
    fn max_in_flight(&self) -> u32 {
        self.batch
    }
}

/// The queue between a producer and its consumer (one instance).
#[derive(Debug, Default)]
struct Channel {
    items: VecDeque<Nanos>,
    producer_done: bool,
}

/// Produces an item every `every` ns of its own compute (a background
/// thread), waking the consumer (index 1 of its instance) for each.
#[derive(Debug)]
struct Producer {
    base: Base,
    chan: Rc<RefCell<Channel>>,
    every: Nanos,
    wakes: Vec<usize>,
    computing: bool,
}

impl AppThread for Producer {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }
    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        if self.computing {
            self.computing = false;
            self.chan.borrow_mut().items.push_back(now);
            self.wakes.push(1);
            self.base.finish(OpKind::Background, now, now + 1, 1);
        }
        if self.base.over() {
            self.chan.borrow_mut().producer_done = true;
            self.wakes.push(1);
            return Action::Done;
        }
        self.computing = true;
        Action::Compute(self.every)
    }
    fn completed(&mut self, _tags: &[u64], _now: Nanos) {}
    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.base.ops);
    }
    fn stop(&mut self) {
        self.base.stopped = true;
    }
    fn max_in_flight(&self) -> u32 {
        0
    }
    fn drain_wakes(&mut self, out: &mut Vec<usize>) {
        out.append(&mut self.wakes);
    }
}

/// Takes items off the channel and reads one block for each (blocking);
/// parks when the channel is empty, ends when the producer is done and the
/// channel empty. An operation runs from the item's production to its read.
#[derive(Debug)]
struct Consumer {
    base: Base,
    chan: Rc<RefCell<Channel>>,
    current: Option<Nanos>,
}

impl AppThread for Consumer {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }
    fn next(&mut self, _now: Nanos, _rng: &mut dyn RngCore) -> Action {
        let mut chan = self.chan.borrow_mut();
        match chan.items.pop_front() {
            Some(made) => {
                self.current = Some(made);
                drop(chan);
                Action::Submit(vec![self.base.io(Marks::URGENT)])
            }
            // The producer drains its items after the end too, so the
            // consumer ends on its word, not on stop().
            None if chan.producer_done => Action::Done,
            None => Action::Park,
        }
    }
    fn completed(&mut self, tags: &[u64], now: Nanos) {
        self.base.take(tags);
        let made = self.current.take().expect("a read for an item");
        self.base.finish(OpKind::Read, made, now, 1);
    }
    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.base.ops);
    }
    fn stop(&mut self) {
        self.base.stopped = true;
    }
    fn max_in_flight(&self) -> u32 {
        1
    }
}

fn placed(
    name: &str,
    instance: usize,
    index: usize,
    core: usize,
    t: impl AppThread + 'static,
) -> PlacedThread {
    PlacedThread {
        name: name.into(),
        instance,
        core,
        background: false,
        index,
        thread: Box::new(t),
    }
}

/// A producer on `producer_core` and its consumer on `consumer_core`, one
/// instance.
fn pair(
    seen: &Shared,
    instance: usize,
    producer_core: usize,
    consumer_core: usize,
    every: Nanos,
) -> Vec<PlacedThread> {
    let chan = Rc::new(RefCell::new(Channel::default()));
    let producer = Producer {
        base: Base::new(seen, None),
        chan: chan.clone(),
        every,
        wakes: Vec::new(),
        computing: false,
    };
    let consumer = Consumer {
        base: Base::new(seen, None),
        chan,
        current: None,
    };
    let mut p = placed(
        &format!("pc{instance}/producer"),
        instance,
        0,
        producer_core,
        producer,
    );
    p.background = true;
    vec![
        p,
        placed(
            &format!("pc{instance}/consumer"),
            instance,
            1,
            consumer_core,
            consumer,
        ),
    ]
}

fn config(policy: &str, runtime: Nanos, seed: u64) -> SimConfig {
    common::config("optane", PolicySpec::named(policy), runtime, seed)
}

fn run(threads: Vec<PlacedThread>, cfg: &SimConfig) -> (RunReport, Audit) {
    sim::simulate_app(threads, cfg, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// The report's operations per (kind, background), summed over instances.
fn ops_of(r: &RunReport, kind: &str) -> (u64, u64) {
    r.apps
        .as_ref()
        .expect("an application report")
        .ops
        .iter()
        .filter(|o| o.kind == kind)
        .fold((0, 0), |(n, i), o| (n + o.ops, i + o.items))
}

/// The invariants every application run keeps: every I/O exactly once,
/// every thread finished, every core's window accounted (in the audit and
/// as the report's shares), every tag handed back once, and the report's
/// operations those the models finished inside the window: before its
/// end, or at it when the last thread's end closed it (the operation that
/// ended it counts, as fio counts the I/O its job ends on).
fn check(r: &RunReport, a: &Audit, seen: &Seen, runtime: Nanos) {
    let closed_early = r.duration_ns < runtime;
    let inside = |end: Nanos| end < r.duration_ns || (closed_early && end == r.duration_ns);
    check_exactly_once(a);
    assert_eq!(seen.bad_tags, 0);
    assert_eq!(a.app_bad_wakes, 0);
    let apps = r.apps.as_ref().expect("an application report");
    for c in &apps.cores {
        let sum = c.user + c.kernel + c.irq + c.idle;
        assert!((sum - 1.0).abs() < 1e-9, "core {}: {sum}", c.core);
    }
    for kind in OpKind::ALL {
        let (n, items) = seen
            .ends
            .iter()
            .filter(|&&(k, _, end)| k == kind && inside(end))
            .fold((0, 0), |(n, i), &(_, items, _)| {
                (n + 1, i + u64::from(items))
            });
        assert_eq!(ops_of(r, kind.name()), (n, items), "{kind}");
    }
    assert_eq!(a.app_ops, seen.ends.len() as u64);
}

#[test]
fn a_blocking_engine_and_an_aio_engine_complete_every_io_once() {
    let seen = Shared::default();
    let threads = vec![
        placed("kv/reader0", 0, 0, 0, Pread::new(&seen, None)),
        placed("kv/reader1", 0, 1, 1, Pread::new(&seen, None)),
        placed("batch/aio0", 1, 0, 2, AioBatch::new(&seen, None, 8, true)),
    ];
    let (r, a) = run(threads, &config("cint", 20 * MS, 1));
    check(&r, &a, &seen.borrow(), 20 * MS);
    let (reads, _) = ops_of(&r, "read");
    let (scans, items) = ops_of(&r, "scan");
    // Two dependent reads of about 10 us each on Optane: tens of thousands
    // of operations in 20 ms over two threads; each scan is 8 items.
    assert!(reads > 1_000, "{reads}");
    assert!(scans > 100 && items == 8 * scans, "{scans} {items}");
    let apps = r.apps.as_ref().unwrap();
    assert_eq!(
        apps.cores.iter().map(|c| c.core).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    // Every blocking read is Urgent: its core takes an interrupt for
    // nearly each (two may merge while a handler is pending).
    let ios0 = r.jobs[0].read.io_ops;
    assert!(
        apps.cores[0].interrupts >= ios0 * 9 / 10,
        "{:?} {ios0}",
        apps.cores[0]
    );
    let read = apps.ops.iter().find(|o| o.kind == "read").unwrap();
    assert_eq!(read.name, "kv");
    assert!(read.lat.percentile(50.0) > 15_000, "{:?}", read.lat);
    assert!(read.cdf.windows(2).all(|w| w[0].1 <= w[1].1));
    assert_eq!(r.jobs.len(), 3);
    assert_eq!(r.jobs[0].name, "kv/reader0");
}

#[test]
fn op_counts_end_on_their_own_before_the_runtime() {
    let seen = Shared::default();
    let threads = vec![
        placed("kv/reader0", 0, 0, 0, Pread::new(&seen, Some(300))),
        placed("kv/aio", 0, 1, 0, AioBatch::new(&seen, Some(50), 4, false)),
    ];
    let (r, a) = run(threads, &config("default", 1_000 * MS, 1));
    check(&r, &a, &seen.borrow(), 1_000 * MS);
    assert_eq!(ops_of(&r, "read"), (300, 300));
    assert_eq!(ops_of(&r, "scan"), (50, 200));
    // The window closed at the last thread's end, long before 1 s.
    assert!(r.duration_ns < 100 * MS, "{}", r.duration_ns);
}

#[test]
fn a_producer_wakes_its_parked_consumer_on_another_core() {
    let seen = Shared::default();
    // An item every 50 us: the consumer's read takes about 10, so it parks
    // between items and only the producer's wake brings it back.
    let threads = pair(&seen, 0, 0, 1, 50 * US);
    let (r, a) = run(threads, &config("cint", 10 * MS, 1));
    check(&r, &a, &seen.borrow(), 10 * MS);
    let produced = ops_of(&r, "background").0;
    let consumed = ops_of(&r, "read").0;
    assert!(produced > 150, "{produced}");
    // Each item is read once, in the window or in the drain after it.
    let all_reads = seen
        .borrow()
        .ends
        .iter()
        .filter(|e| e.0 == OpKind::Read)
        .count();
    let all_made = seen
        .borrow()
        .ends
        .iter()
        .filter(|e| e.0 == OpKind::Background)
        .count();
    assert_eq!(all_reads, all_made);
    assert!(consumed + 2 >= produced, "{consumed} {produced}");
    let apps = r.apps.as_ref().unwrap();
    let bg = apps.ops.iter().find(|o| o.background).unwrap();
    assert_eq!((bg.kind.as_str(), bg.name.as_str()), ("background", "pc0"));
    // The consumer is switched in once per item at least (parked between).
    let core1 = apps.cores.iter().find(|c| c.core == 1).unwrap();
    assert!(core1.context_switches >= consumed, "{core1:?}");
    // Its operation (from production to its read's return) includes the
    // wake-up: more than the read alone (about 10 us), far less than the
    // gap between items.
    let read = apps.ops.iter().find(|o| o.kind == "read").unwrap();
    assert!(
        read.lat.mean > 10_000.0 && read.lat.mean < 40_000.0,
        "{:?}",
        read.lat
    );
    // The wake is a futex_wake call on the producer's core: kernel time.
    assert!(r.jobs[0].sys_ns > 0);
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let go = |seed| {
        let seen = Shared::default();
        let mut threads = vec![
            placed("kv/reader0", 0, 0, 0, Pread::new(&seen, None)),
            placed("b/aio", 1, 0, 0, AioBatch::new(&seen, None, 4, true)),
        ];
        threads.extend(pair(&seen, 2, 1, 0, 30 * US));
        let (r, _) = run(threads, &config("cint", 5 * MS, seed));
        report::json::document(&r)
    };
    assert_eq!(go(7), go(7));
    assert_ne!(go(7), go(8));
}

#[test]
fn barrier_on_the_batch_end_cuts_interrupts_under_cint() {
    let per_op = |policy: &str| {
        let seen = Shared::default();
        let threads = vec![placed(
            "b/aio",
            0,
            0,
            0,
            AioBatch::new(&seen, None, 8, true),
        )];
        let (r, a) = run(threads, &config(policy, 20 * MS, 1));
        check(&r, &a, &seen.borrow(), 20 * MS);
        let (ops, _) = ops_of(&r, "scan");
        r.interrupts as f64 / ops as f64
    };
    let default = per_op("default");
    let cint = per_op("cint");
    // default: about one interrupt per completion (8 per batch); cint
    // coalesces the unmarked ones and fires at the Barrier.
    assert!(default > 4.0, "default {default}");
    assert!(cint < default / 2.0, "cint {cint} default {default}");
}

#[test]
fn per_core_time_is_the_window() {
    let seen = Shared::default();
    let mut threads = vec![
        placed("kv/r0", 0, 0, 0, Pread::new(&seen, None)),
        placed("kv/r1", 0, 1, 0, Pread::new(&seen, None)),
    ];
    // The producer (all user time) on core 3, its consumer beside the
    // readers: a CPU hog sharing a core with them would hold it for its
    // CFS slice (8 ms on this host) before they ran.
    threads.extend(pair(&seen, 1, 3, 0, 20 * US));
    let (r, a) = run(threads, &config("adaptive", 7 * MS, 3));
    check(&r, &a, &seen.borrow(), 7 * MS);
    assert_eq!(a.window_ns, 7 * MS);
    let apps = r.apps.as_ref().unwrap();
    assert_eq!(apps.cores.len(), 2);
    assert_eq!(
        apps.cores.iter().map(|c| c.interrupts).sum::<u64>(),
        r.interrupts
    );
    assert_eq!(
        apps.cores.iter().map(|c| c.context_switches).sum::<u64>(),
        r.context_switches
    );
    // The producer computes all the time.
    assert!(apps.cores[1].user > 0.9, "{:?}", apps.cores[1]);
    let json = report::json::render(&r);
    assert!(json["cinterrupts"]["run"]["apps"].is_array(), "{json}");
    assert_eq!(json["cinterrupts"]["run"]["cores"][1]["core"], 3);
    let text = report::text::render(&r);
    assert!(text.contains("kv read: ops="), "{text}");
    assert!(text.contains("pc1 background (background): ops="), "{text}");
}

#[test]
fn a_thread_on_a_missing_core_is_one_clear_error() {
    let seen = Shared::default();
    let threads = vec![
        placed("kv/reader0", 0, 0, 0, Pread::new(&seen, None)),
        placed("kv/reader1", 0, 1, 28, Pread::new(&seen, None)),
    ];
    let err = sim::simulate_app(threads, &config("cint", MS, 1), &mut |_, _| {}).unwrap_err();
    let msg = err.to_string();
    assert_eq!(
        msg,
        "thread 'kv/reader1': core 28 does not exist on host 'xeon-e5-2660v4' (28 cores, 0-27)"
    );
    assert!(matches!(err, SimError::Config(_)));
}

#[test]
fn a_run_needs_a_runtime_and_threads() {
    let mut cfg = config("cint", MS, 1);
    cfg.runtime = None;
    let seen = Shared::default();
    let one = vec![placed("kv/r", 0, 0, 0, Pread::new(&seen, None))];
    let err = sim::simulate_app(one, &cfg, &mut |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("needs a runtime"), "{err}");
    let err = sim::simulate_app(Vec::new(), &config("cint", MS, 1), &mut |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("no threads"), "{err}");
}

/// A model that submits more than it declared is stopped, one line.
#[test]
fn a_model_past_its_bound_stops_the_run() {
    let seen = Shared::default();
    // Submits batches of 9 and declares 8.
    let aio = AioBatch::new(&seen, None, 9, false);
    #[derive(Debug)]
    struct Liar(AioBatch);
    impl AppThread for Liar {
        fn waiter(&self) -> Waiter {
            self.0.waiter()
        }
        fn next(&mut self, now: Nanos, rng: &mut dyn RngCore) -> Action {
            self.0.next(now, rng)
        }
        fn completed(&mut self, tags: &[u64], now: Nanos) {
            self.0.completed(tags, now)
        }
        fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
            self.0.drain_ops(out)
        }
        fn stop(&mut self) {
            self.0.stop()
        }
        fn max_in_flight(&self) -> u32 {
            self.0.batch - 1
        }
    }
    let threads = vec![placed("b/liar", 0, 0, 0, Liar(aio))];
    let err = sim::simulate_app(threads, &config("cint", MS, 1), &mut |_, _| {}).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "thread 'b/liar': submitted 9 I/O(s) with 0 in flight, above its max_in_flight 8"
        ),
        "{err}"
    );
}

/// One thread of a random mix.
#[derive(Clone, Debug)]
enum Kind {
    Pread,
    Aio { batch: u32, barrier: bool },
    Pair { every_us: u64 },
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Pread),
        (1u32..=16, any::<bool>()).prop_map(|(batch, barrier)| Kind::Aio { batch, barrier }),
        (5u64..=100).prop_map(|every_us| Kind::Pair { every_us }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random small mixes keep the invariants: every I/O once, every
    /// thread finished (parked consumers woken at the end), every core's
    /// window accounted, the operations counted those in the window.
    #[test]
    fn random_app_mixes_keep_the_invariants(
        mix in prop::collection::vec((kind(), 0usize..4, 0usize..4, prop::option::of(1u64..200)), 1..5),
        policy in prop_oneof![Just("default"), Just("cint"), Just("adaptive")],
        polled in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let seen = Shared::default();
        let mut threads = Vec::new();
        for (i, (k, core, other, left)) in mix.into_iter().enumerate() {
            match k {
                Kind::Pread => threads.push(placed(&format!("i{i}/pread"), i, 0, core, Pread::new(&seen, left))),
                Kind::Aio { batch, barrier } => threads.push(placed(
                    &format!("i{i}/aio"), i, 0, core, AioBatch::new(&seen, left, batch, barrier),
                )),
                Kind::Pair { every_us } => threads.extend(pair(&seen, i, core, other, every_us * US)),
            }
        }
        // 5 ms: the slowest configuration (a producer every 100 us, or 16
        // reads a batch behind two others on one core) still finishes
        // dozens of operations; the fastest ends on its own counts.
        let mut cfg = config(policy, 5 * MS, seed);
        if polled {
            // exec's polled delivery (the cross-validation's host).
            cfg.host.irq_taken = sim::IrqTaken::Poll;
        }
        let (r, a) = run(threads, &cfg);
        check(&r, &a, &seen.borrow(), 5 * MS);
        let ops: u64 = r.apps.as_ref().unwrap().ops.iter().map(|o| o.ops).sum();
        prop_assert!(ops > 0);
    }
}

/// A model that polls with nothing out (`Wait { min: 0 }`) pays a system
/// call each time, so time passes and the run ends at its runtime; a wake
/// naming no thread of its instance is counted, dropped and said.
#[test]
fn polling_nothing_lets_time_pass_and_a_stray_wake_is_said() {
    #[derive(Debug, Default)]
    struct Poller {
        stopped: bool,
        woke: bool,
    }
    impl AppThread for Poller {
        fn waiter(&self) -> Waiter {
            Waiter::IoUring
        }
        fn next(&mut self, _now: Nanos, _rng: &mut dyn RngCore) -> Action {
            if self.stopped {
                Action::Done
            } else {
                Action::Wait { min: 0, max: 4 }
            }
        }
        fn completed(&mut self, tags: &[u64], _now: Nanos) {
            assert!(tags.is_empty());
        }
        fn drain_ops(&mut self, _out: &mut Vec<OpDone>) {}
        fn stop(&mut self) {
            self.stopped = true;
        }
        fn max_in_flight(&self) -> u32 {
            0
        }
        fn drain_wakes(&mut self, out: &mut Vec<usize>) {
            if !std::mem::replace(&mut self.woke, true) {
                out.push(5);
            }
        }
    }
    let seen = Shared::default();
    let threads = vec![
        placed("p/poller", 0, 0, 1, Poller::default()),
        placed("p/reader", 0, 1, 0, Pread::new(&seen, None)),
    ];
    let (r, a) = run(threads, &config("cint", 2 * MS, 1));
    assert_eq!(a.window_ns, 2 * MS);
    assert_eq!((a.unfinished_threads, a.app_bad_wakes), (0, 1));
    // The poller's core: all system calls.
    assert!(r.jobs[0].sys_ns > 2 * MS * 9 / 10, "{}", r.jobs[0].sys_ns);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("1 wake(s) named no thread")),
        "{:?}",
        r.notes
    );
}

/// The shipped KVell examples (`examples/apps`, the apps crate's engine)
/// run through the simulator keeping every invariant: every I/O once,
/// every thread finished after the end, every core's window accounted.
#[test]
fn the_kvell_examples_run_through_the_simulator() {
    for name in ["kvell-ycsb-a", "kvell-ycsb-c", "kvell-ycsb-e-16"] {
        let path = format!(
            "{}/../../examples/apps/{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let file = apps::file::AppFile::load(std::path::Path::new(&path))
            .unwrap_or_else(|e| panic!("{e}"));
        let threads = file.threads(1).unwrap_or_else(|e| panic!("{e}"));
        let (r, a) = run(threads, &config("cint", 5 * MS, 1));
        check_exactly_once(&a);
        let apps = r.apps.as_ref().unwrap();
        let ops: u64 = apps
            .ops
            .iter()
            .filter(|o| !o.background)
            .map(|o| o.ops)
            .sum();
        assert!(ops > 0, "{name}");
    }
}

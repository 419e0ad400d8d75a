//! The KVell-like engine as a set of state machines, driven by the fake
//! front end of `common` (no simulator).

mod common;

use std::collections::{HashMap, HashSet};

use apps::kvell::{page_of_tag, Config, RequestDistribution, TIMER_SLACK_NS, WORKER_USLEEP_NS};
use apps::{OpKind, PlacedThread};
use common::{Run, Trace};
use jobs::DefaultMarks;
use policy::Marks;
use proptest::prelude::*;

/// A small instance: `workers` workers, `clients` clients, 4 000 items.
fn small(workload: &str, workers: usize, clients: usize, ops: u64) -> Config {
    Config {
        worker_cores: (0..workers).collect(),
        client_cores: (workers..workers + clients).collect(),
        workload: workload.into(),
        items: 4_000,
        ops,
        request_distribution: RequestDistribution::Uniform,
        ..Config::default()
    }
}

fn threads(config: &Config, seed: u64) -> Vec<PlacedThread> {
    config.threads(0, "kv", seed).expect("valid config")
}

fn run(config: &Config, seed: u64) -> Trace {
    Run {
        seed,
        ..Run::default()
    }
    .run(threads(config, seed))
}

fn count(trace: &Trace, kind: OpKind) -> usize {
    trace.ops.iter().filter(|o| o.kind == kind).count()
}

/// The invariants every run keeps: each I/O reaped once (checked by the
/// front end), Barrier on exactly the last I/O of each `io_submit` under
/// Table 1, each write's page read before on the same worker, the ops
/// counted.
fn check(config: &Config, trace: &Trace) {
    let workers = config.worker_cores.len();
    // Every submitted I/O reaped exactly once.
    let submitted: Vec<(usize, u64)> = trace
        .submits
        .iter()
        .flat_map(|s| s.ios.iter().map(move |io| (s.thread, io.tag)))
        .collect();
    assert_eq!(submitted.len(), trace.reaped.len());
    let mut reaped: HashMap<(usize, u64), usize> = HashMap::new();
    for r in &trace.reaped {
        *reaped.entry((r.thread, r.tag)).or_default() += 1;
    }
    let mut per_tag: HashMap<(usize, u64), usize> = HashMap::new();
    for s in &submitted {
        *per_tag.entry(*s).or_default() += 1;
    }
    assert_eq!(per_tag, reaped, "submitted and reaped differ");
    for s in &trace.submits {
        assert!(s.thread < workers, "a client submitted I/O");
        let n = s.ios.len();
        for (i, io) in s.ios.iter().enumerate() {
            let want = match (config.default_marks, i + 1 == n) {
                (DefaultMarks::Table1, true) => Marks::BARRIER,
                _ => Marks::NONE,
            };
            assert_eq!(io.marks, want, "I/O {i} of {n} at {}", s.time);
            assert_eq!(io.bytes, config.page_bytes);
        }
    }
    // A write's page was read before, on the same worker (KVell writes
    // only pages in its page cache, which only reads fill).
    let mut read_done: Vec<HashSet<u64>> = vec![HashSet::new(); workers];
    let mut reads_of: HashMap<(usize, u64), bool> = HashMap::new();
    for s in &trace.submits {
        for io in &s.ios {
            reads_of.insert((s.thread, io.tag), io.write);
        }
    }
    let mut events: Vec<(u64, u8, usize, u64, bool)> = Vec::new();
    for s in &trace.submits {
        for io in &s.ios {
            events.push((s.time, 1, s.thread, io.tag, io.write));
        }
    }
    for r in &trace.reaped {
        events.push((r.time, 0, r.thread, r.tag, reads_of[&(r.thread, r.tag)]));
    }
    events.sort_by_key(|e| (e.0, e.1));
    for (time, kind, thread, tag, write) in events {
        let page = page_of_tag(tag);
        match (kind, write) {
            (0, false) => {
                read_done[thread].insert(page);
            }
            (1, true) => assert!(
                read_done[thread].contains(&page),
                "worker {thread} writes page {page} at {time} never read"
            ),
            _ => {}
        }
    }
    // Every operation finished once: KVell's share each
    // (`nb_requests / nb_load_injectors`).
    if config.ops > 0 {
        let clients = config.client_cores.len() as u64;
        assert_eq!(trace.ops.len() as u64, config.ops / clients * clients);
    }
    // Only workers finish operations (the callbacks run there).
    assert!(trace.op_threads.iter().all(|&t| t < workers));
}

#[test]
fn workload_a_finishes_every_op_and_io_once() {
    let config = small("a", 2, 4, 4_000);
    let trace = run(&config, 7);
    check(&config, &trace);
    assert!(count(&trace, OpKind::Read) > 0 && count(&trace, OpKind::Update) > 0);
}

#[test]
fn op_mix_matches_the_workload() {
    for (workload, kind, share) in [
        ("a", OpKind::Update, 0.5),
        ("b", OpKind::Read, 0.95),
        ("c", OpKind::Read, 1.0),
        ("d", OpKind::Insert, 0.05),
        ("e", OpKind::Scan, 0.95),
        ("f", OpKind::ReadModifyWrite, 0.5),
    ] {
        let mut config = small(workload, 2, 2, 10_000);
        config.scan_length = 4;
        if workload == "d" {
            config.request_distribution = RequestDistribution::Latest;
        }
        let trace = run(&config, 3);
        check(&config, &trace);
        let got = count(&trace, kind) as f64 / trace.ops.len() as f64;
        // 10 000 draws: 4 standard deviations of a share of 0.5 is 0.02.
        assert!(
            (got - share).abs() < 0.02,
            "workload {workload}: {kind} is {got}, want {share}"
        );
    }
}

/// Without a page cache, an update is a read of its page, then a write of
/// the same page in a later `io_submit`, each write preceded by its read
/// (the invariant in `check`); writes are as many as updates, less those
/// joined to a write of the same page already queued.
#[test]
fn an_update_reads_then_writes_its_page() {
    let mut config = small("a", 1, 1, 2_000);
    config.items = 1_000_000;
    config.page_cache_pages = 0;
    let trace = run(&config, 11);
    check(&config, &trace);
    let updates = count(&trace, OpKind::Update);
    let writes: usize = trace
        .submits
        .iter()
        .map(|s| s.ios.iter().filter(|io| io.write).count())
        .sum();
    let reads: usize = trace
        .submits
        .iter()
        .map(|s| s.ios.iter().filter(|io| !io.write).count())
        .sum();
    assert!(
        writes <= updates && writes * 100 >= updates * 95,
        "{writes} writes, {updates} updates"
    );
    assert!(reads <= trace.ops.len() && reads * 100 >= trace.ops.len() * 95);
    // A batch is all reads or, after the reads' callbacks, all writes:
    // KVell submits the writes before it dequeues new requests.
    for s in &trace.submits {
        let w = s.ios.iter().filter(|io| io.write).count();
        assert!(w == 0 || w == s.ios.len(), "a batch mixes reads and writes");
    }
}

/// A read-modify-write reads its page, then updates it: the update's read
/// finds the page in the cache, so it costs a read and a write I/O, one
/// after the other.
#[test]
fn a_read_modify_write_reads_then_writes() {
    let mut config = small("f", 1, 1, 2_000);
    config.items = 1_000_000;
    let trace = run(&config, 17);
    check(&config, &trace);
    let rmw = count(&trace, OpKind::ReadModifyWrite);
    let writes: usize = trace
        .submits
        .iter()
        .map(|s| s.ios.iter().filter(|io| io.write).count())
        .sum();
    assert!(
        writes <= rmw && writes * 100 >= rmw * 95,
        "{writes} writes, {rmw} RMWs"
    );
    for op in &trace.ops {
        let least = match op.kind {
            OpKind::ReadModifyWrite => 20_000,
            _ => 10_000,
        };
        assert!(op.end - op.start >= least, "{op:?}");
    }
}

/// A scan of L items issues one page read per distinct page and finishes
/// once all have completed. A queue of 4 requests splits the scan's 16
/// items over several `io_submit`s, so finishing early would show.
#[test]
fn a_scan_reads_its_items_pages() {
    let mut found = false;
    for seed in 0..50 {
        let mut config = small("e", 1, 1, 1);
        config.items = 100_000;
        config.scan_length = 16;
        config.page_cache_pages = 0;
        config.max_pending_callbacks = 4;
        let trace = run(&config, seed);
        check(&config, &trace);
        let op = trace.ops[0];
        if op.kind != OpKind::Scan {
            continue;
        }
        found = true;
        assert_eq!(op.items, 16);
        let mut pages = HashSet::new();
        let mut reads = 0;
        for s in &trace.submits {
            for io in &s.ios {
                assert!(!io.write);
                pages.insert((s.thread, page_of_tag(io.tag)));
                reads += 1;
            }
        }
        assert_eq!(reads, pages.len());
        assert!((14..=16).contains(&reads), "{reads} reads for 16 items");
        assert!(
            trace.submits.len() >= 4,
            "{} io_submits",
            trace.submits.len()
        );
        let last = trace.reaped.iter().map(|r| r.time).max().unwrap();
        assert!(
            op.end >= last,
            "scan ends at {} before its last read {last}",
            op.end
        );
        // From the first item's start: four rounds of 10 us I/O at least.
        assert!(
            op.end - op.start >= 40_000,
            "scan of {} ns",
            op.end - op.start
        );
        break;
    }
    assert!(found, "no seed drew a scan first");
}

#[test]
fn the_last_io_of_each_submit_carries_barrier() {
    let config = small("b", 2, 2, 3_000);
    let trace = run(&config, 5);
    check(&config, &trace);
    assert!(
        trace.submits.iter().any(|s| s.ios.len() > 1),
        "no batch of more than one I/O"
    );
    // The authors' microbenchmark kernel marks nothing.
    let mut basis = config.clone();
    basis.default_marks = DefaultMarks::Basis;
    let trace = run(&basis, 5);
    check(&basis, &trace);
}

/// Batches reach the queue's size when clients keep it full: KVell's "10s
/// of requests" per `io_submit` (TOS 3.4).
#[test]
fn batches_are_bounded_by_the_queue() {
    let config = small("c", 1, 4, 5_000);
    let trace = run(&config, 9);
    check(&config, &trace);
    let max = trace.submits.iter().map(|s| s.ios.len()).max().unwrap();
    assert!(max <= config.pending_callbacks() as usize);
    assert!(max >= 10, "largest batch {max}");
    let mut capped = config.clone();
    capped.never_exceed_queue_depth = true;
    let trace = run(&capped, 9);
    check(&capped, &trace);
    let max = trace.submits.iter().map(|s| s.ios.len()).max().unwrap();
    assert!(max <= capped.queue_depth as usize, "{max} > QUEUE_DEPTH");
}

#[test]
fn clients_park_on_a_full_queue_and_are_woken() {
    let mut config = small("c", 1, 3, 3_000);
    config.max_pending_callbacks = 4;
    let trace = run(&config, 13);
    check(&config, &trace);
    assert!(trace.parks > 0, "no client waited for a slot");
    assert_eq!(trace.parks, trace.wakes, "a parked client was never woken");
}

#[test]
fn stop_drains_and_ends_in_done() {
    let mut config = small("a", 2, 4, 0);
    config.ops = 0; // no bound: the front end stops the run
    let trace = Run {
        stop_at: Some(2_000_000),
        ..Run::default()
    }
    .run(threads(&config, 1));
    check(&config, &trace);
    assert!(!trace.ops.is_empty());
    // Nothing new starts after the stop: only each client's operation
    // generated before it may still be enqueued (a client waiting for a
    // slot); what was in flight finished (every thread Done, every I/O
    // reaped).
    let late = trace.ops.iter().filter(|o| o.start > 2_000_000).count();
    assert!(
        late <= config.client_cores.len(),
        "{late} ops started after the stop"
    );
    assert!(trace.end >= 2_000_000);
}

#[test]
fn a_seed_gives_the_same_run() {
    let config = small("f", 2, 2, 2_000);
    let a = run(&config, 21);
    let b = run(&config, 21);
    assert_eq!(a, b);
    let c = run(&config, 22);
    assert_ne!(a.ops, c.ops);
}

#[test]
fn latency_runs_from_enqueue_to_callback() {
    // One client, one worker, a queue of one: every read waits for its own
    // I/O, the worker's CPU for it (lookup, iocb, callback:
    // `worker_request_ns`) and, at most, for the worker's `usleep(1)` poll
    // (1 us plus the timer slack) if the worker found its queue empty.
    let mut config = small("c", 1, 1, 50);
    config.max_pending_callbacks = 1;
    let cpu = config.worker_request_ns;
    let trace = run(&config, 2);
    check(&config, &trace);
    for op in &trace.ops {
        let latency = op.end - op.start;
        assert!(
            (10_000 + cpu..10_000 + cpu + WORKER_USLEEP_NS + TIMER_SLACK_NS + 5_000)
                .contains(&latency),
            "latency {latency}"
        );
    }
    // Some reads found the worker polling, some not.
    assert!(trace.ops.iter().any(|o| o.end - o.start < 15_000 + cpu));
}

#[test]
fn threads_are_named_placed_and_indexed() {
    let config = small("a", 2, 4, 100);
    let t = config.threads(3, "kv", 0).unwrap();
    let names: Vec<_> = t.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "kv/worker0",
            "kv/worker1",
            "kv/client0",
            "kv/client1",
            "kv/client2",
            "kv/client3"
        ]
    );
    assert!(t
        .iter()
        .enumerate()
        .all(|(i, t)| t.index == i && t.instance == 3));
    assert_eq!(
        t.iter().map(|t| t.core).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
    assert_eq!(t[0].thread.max_in_flight(), 2 * 4 * 48);
}

#[test]
fn bad_configs_name_the_option() {
    let mut c = small("g", 1, 1, 10);
    assert_eq!(c.validate().unwrap_err().option, "workload");
    c.workload = "a".into();
    c.item_bytes = 5000;
    assert_eq!(c.validate().unwrap_err().option, "item_bytes");
    c.item_bytes = 1024;
    c.client_cores.clear();
    assert_eq!(c.validate().unwrap_err().option, "client_cores");
}

fn arb_config() -> impl Strategy<Value = Config> {
    (
        1usize..4,
        1usize..5,
        0usize..6,
        50u64..3_000,
        1u32..20,
        1u32..16,
        (0u32..2, 1u32..24),
        any::<bool>(),
        (0u64..2, 1u64..64),
        0usize..3,
        1u64..300,
        any::<bool>(),
    )
        .prop_map(
            |(
                workers,
                clients,
                wl,
                items,
                scan,
                qd,
                (mp_on, mp),
                never,
                (pc_on, pc),
                dist,
                ops,
                basis,
            )| Config {
                worker_cores: (0..workers).collect(),
                client_cores: (workers..workers + clients).collect(),
                workload: ["a", "b", "c", "d", "e", "f"][wl].into(),
                items,
                scan_length: scan,
                queue_depth: qd,
                max_pending_callbacks: mp_on * mp,
                never_exceed_queue_depth: never,
                page_cache_pages: pc_on * pc,
                request_distribution: [
                    RequestDistribution::Uniform,
                    RequestDistribution::Zipfian,
                    RequestDistribution::Latest,
                ][dist],
                ops: ops.max(clients as u64),
                default_marks: if basis {
                    DefaultMarks::Basis
                } else {
                    DefaultMarks::Table1
                },
                ..Config::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_config_keeps_the_invariants(config in arb_config(), seed in 0u64..1000) {
        let trace = run(&config, seed);
        check(&config, &trace);
    }
}

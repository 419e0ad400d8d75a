//! The RocksDB-like engine and its dump tool, driven by a tiny fake front
//! end: every thread has its own core, every I/O completes a fixed delay
//! after it is submitted, parked threads wake when a thread of the instance
//! names them. No simulator, no timing.

use apps::file::{AppFile, EngineConfig};
use apps::rocks::db::{Run as L0Run, Shared};
use apps::rocks::dump::{dump_entry_bytes, table_reads, Dumper};
use apps::rocks::layout::{chunks, Layout};
use apps::rocks::reader::Reader;
use apps::rocks::writer::Writer;
use apps::rocks::{Benchmark, Config, DumpConfig};
use apps::{Action, AppIo, AppThread, OpDone, OpKind, PlacedThread};
use policy::{Marks, Nanos};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

const DELAY: Nanos = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    Ready(Nanos),
    InFlight(Nanos),
    Parked,
    Done,
}

/// What a run did, per thread: its I/Os (in submission order) and ops.
#[derive(Debug, Default, PartialEq)]
struct Trace {
    ios: Vec<Vec<AppIo>>,
    ops: Vec<Vec<OpDone>>,
    wakes: Vec<Vec<usize>>,
    end: Nanos,
}

/// Runs `threads` until all are done, calling `stop` on every thread at
/// `stop_at`. Panics on a deadlock (nothing runnable, something not done),
/// an I/O completed twice or never, or more steps than `max_steps`.
fn run(mut threads: Vec<PlacedThread>, stop_at: Option<Nanos>, seed: u64) -> Trace {
    let n = threads.len();
    for (i, t) in threads.iter().enumerate() {
        assert_eq!(t.index, i);
    }
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut state = vec![Run::Ready(0); n];
    let mut in_flight: Vec<Option<u64>> = vec![None; n];
    let mut trace = Trace {
        ios: vec![Vec::new(); n],
        ops: vec![Vec::new(); n],
        wakes: vec![Vec::new(); n],
        end: 0,
    };
    let mut stopped = false;
    let mut steps = 0u64;
    loop {
        steps += 1;
        assert!(steps < 5_000_000, "too many steps");
        // The earliest event: a ready thread or a completion.
        let next = state
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Run::Ready(t) | Run::InFlight(t) => Some((*t, i)),
                _ => None,
            })
            .min();
        let Some((now, i)) = next else {
            assert!(state.iter().all(|s| *s == Run::Done), "deadlock: {state:?}");
            return trace;
        };
        if let Some(stop) = stop_at {
            if !stopped && now >= stop {
                stopped = true;
                for t in threads.iter_mut() {
                    t.thread.stop();
                }
            }
        }
        trace.end = now;
        let th = &mut threads[i].thread;
        if let Run::InFlight(_) = state[i] {
            let tag = in_flight[i].take().expect("a tag in flight");
            th.completed(&[tag], now);
        }
        let action = th.next(now, &mut rng);
        state[i] = match action {
            Action::Compute(ns) => Run::Ready(now + ns.max(1)),
            Action::Submit(ios) => {
                assert_eq!(ios.len(), 1, "a blocking thread submits one I/O");
                let io = ios[0];
                assert!(
                    trace.ios[i].iter().all(|o| o.tag != io.tag),
                    "tag {} reused",
                    io.tag
                );
                assert!(io.bytes > 0);
                trace.ios[i].push(io);
                in_flight[i] = Some(io.tag);
                Run::InFlight(now + DELAY)
            }
            Action::Wait { .. } => panic!("a blocking thread waits only inside its Submit"),
            Action::SleepUntil(t) => Run::Ready(t.max(now + 1)),
            Action::Park => Run::Parked,
            Action::Done => Run::Done,
        };
        let mut ops = Vec::new();
        th.drain_ops(&mut ops);
        for op in &ops {
            assert!(op.start <= op.end && op.end <= now);
            // One thread runs one op at a time: each op once, in order.
            if let Some(last) = trace.ops[i].last() {
                assert!(op.start >= last.end, "ops overlap: {last:?} {op:?}");
            }
        }
        trace.ops[i].extend(ops);
        let mut wakes = Vec::new();
        th.drain_wakes(&mut wakes);
        for &w in &wakes {
            assert!(w < n);
            if state[w] == Run::Parked {
                state[w] = Run::Ready(now + 1);
            }
        }
        trace.wakes[i].extend(wakes);
        assert!(in_flight.iter().flatten().count() <= n);
    }
}

fn names(threads: &[PlacedThread]) -> Vec<String> {
    threads.iter().map(|t| t.name.clone()).collect()
}

fn small(benchmark: Benchmark) -> Config {
    let mut c = Config::new(benchmark);
    c.num = 100_000;
    c.write_buffer_size = 256 * 1024;
    c.threads = 2;
    c.cores = vec![1, 5];
    c
}

fn layout(c: &Config) -> Layout {
    Layout::new(
        c.key_size,
        c.value_size,
        c.block_size,
        c.write_buffer_size,
        c.logical_block_size,
    )
}

fn all_ios(t: &Trace) -> impl Iterator<Item = &AppIo> {
    t.ios.iter().flatten()
}

fn ops_of(t: &Trace, kind: OpKind) -> Vec<OpDone> {
    t.ops
        .iter()
        .flatten()
        .filter(|o| o.kind == kind)
        .copied()
        .collect()
}

#[test]
fn readrandom_gets_read_one_block_each_without_cache() {
    let mut c = small(Benchmark::Readrandom);
    c.threads = 4;
    c.reads = Some(500);
    c.cache_size = 0;
    let threads = c.threads(0, "rocks", 1).unwrap();
    assert_eq!(
        names(&threads),
        [
            "rocks/reader0",
            "rocks/reader1",
            "rocks/reader2",
            "rocks/reader3"
        ]
    );
    assert_eq!(
        threads.iter().map(|t| t.core).collect::<Vec<_>>(),
        [1, 5, 1, 5]
    );
    let t = run(threads, None, 1);
    assert_eq!(ops_of(&t, OpKind::Read).len(), 2000);
    let l = layout(&c);
    for reads in &t.ios {
        assert_eq!(reads.len(), 500);
        for io in reads {
            assert!(!io.write);
            assert_eq!(io.marks, Marks::URGENT);
            // One 4216-byte block widened to 512-byte sectors.
            assert!(io.bytes == 4608 || io.bytes == 5120, "{}", io.bytes);
            assert!(io.bytes >= l.block_bytes);
        }
    }
}

#[test]
fn each_random_l0_file_costs_a_get_one_more_read() {
    // No bloom filter: a get reads a block in every L0 file whose range
    // holds its key (random puts: all of them) before the base level.
    let mut c = small(Benchmark::Readwhilewriting);
    c.num = 20_000_000;
    c.cache_size = 0;
    c.reads = Some(1000);
    let shared = Shared::default();
    {
        let mut db = shared.lock();
        db.readers = 1;
        for _ in 0..3 {
            db.l0.push(L0Run {
                entries: 10,
                random: true,
            });
        }
        // The load's sequential runs never overlap: no extra read.
        db.l0.push(L0Run {
            entries: 1000,
            random: false,
        });
    }
    let reader = Reader::new(&c, layout(&c), shared);
    let placed = PlacedThread {
        name: "rocks/reader0".into(),
        instance: 0,
        core: 0,
        background: false,
        index: 0,
        thread: Box::new(reader),
    };
    let t = run(vec![placed], None, 11);
    assert_eq!(t.ops[0].len(), 1000);
    // 10 of 20 M keys per file: found early about once in 2 M gets.
    assert_eq!(t.ios[0].len(), 4000);
}

#[test]
fn cache_hits_read_nothing() {
    let mut c = small(Benchmark::Readrandom);
    c.reads = Some(300);
    c.cache_size = 1 << 40;
    c.cache_warm = true;
    let t = run(c.threads(0, "rocks", 2).unwrap(), None, 2);
    assert_eq!(all_ios(&t).count(), 0);
    assert_eq!(ops_of(&t, OpKind::Read).len(), 600);
}

#[test]
fn partial_cache_reads_in_proportion() {
    let mut c = small(Benchmark::Readrandom);
    c.threads = 1;
    c.reads = Some(4000);
    c.cache_warm = true;
    let l = layout(&c);
    c.cache_size = l.data_bytes(c.num) / 4;
    let t = run(c.threads(0, "rocks", 3).unwrap(), None, 3);
    let reads = all_ios(&t).count();
    assert!((2700..3300).contains(&reads), "{reads} reads for 4000 gets");
}

/// db_bench opens its block cache empty: it fills with the blocks the gets
/// read, shared by the instance's threads, so a short run reads the device
/// for more of its gets than a full cache would let it, and never more
/// than once per block of data the cache can hold.
#[test]
fn a_cold_cache_fills_with_the_blocks_read() {
    let mut c = small(Benchmark::Readrandom);
    c.threads = 2;
    c.reads = Some(2000);
    let l = layout(&c);
    let data = l.data_bytes(c.num);
    c.cache_size = data / 4;
    let cold = all_ios(&run(c.threads(0, "rocks", 3).unwrap(), None, 3)).count();
    c.cache_warm = true;
    let warm = all_ios(&run(c.threads(0, "rocks", 3).unwrap(), None, 3)).count();
    // Warm: 3/4 of 4000 gets miss (about 3,000). Cold: the hit
    // probability starts at 0 and grows by one block over the data's
    // blocks per miss, so after m misses about m^2 / (2 x blocks) gets
    // have hit: about 3,700 reads here, 300 hits.
    let blocks = l.blocks(c.num) as f64;
    let m = 4000.0 - 4000.0f64.powi(2) / (2.0 * blocks);
    assert!(
        (cold as f64 - m).abs() < 0.05 * m && cold > warm + 500,
        "cold {cold} (about {m:.0}), warm {warm}"
    );
    // A cache as large as the data: every block read at most once.
    c.cache_size = 1 << 40;
    c.cache_warm = false;
    let reads = all_ios(&run(c.threads(0, "rocks", 3).unwrap(), None, 3)).count() as u64;
    assert!(
        reads > 0 && reads <= l.blocks(c.num),
        "{reads} reads of {} blocks",
        l.blocks(c.num)
    );
}

#[test]
fn writer_wakes_flush_when_the_memtable_fills() {
    let mut c = small(Benchmark::Readwhilewriting);
    c.disable_auto_compactions = true;
    let l = layout(&c);
    let shared = Shared::default();
    {
        let mut db = shared.lock();
        db.flusher = Some(7);
        db.readers = 1;
    }
    let mut w = Writer::new(&c, l, shared.clone());
    let mut rng = Pcg64Mcg::seed_from_u64(0);
    let mut now = 0;
    let mut puts = 0u64;
    let mut woke_at = Vec::new();
    while puts < 3 * l.memtable_entries + 1 {
        match w.next(now, &mut rng) {
            Action::Compute(ns) => now += ns,
            Action::Park => {
                // Stalled: finish the oldest flush by hand.
                let mut db = shared.lock();
                let run = db.immutable.pop_front().unwrap();
                db.l0.push(run);
            }
            a => panic!("writer: {a:?}"),
        }
        let mut ops = Vec::new();
        w.drain_ops(&mut ops);
        puts += ops.len() as u64;
        let mut wakes = Vec::new();
        w.drain_wakes(&mut wakes);
        if wakes.contains(&7) {
            woke_at.push((puts, shared.lock().immutable.len()));
        }
    }
    // The put after each full memtable switches it and wakes the flush
    // thread; the stall (two memtables waiting) wakes it again.
    let m = l.memtable_entries;
    assert_eq!(woke_at[0], (m, 1));
    assert!(woke_at.iter().any(|&(p, _)| p == 2 * m));
    let db = shared.lock();
    for r in db.immutable.iter().chain(db.l0.iter()) {
        assert_eq!(r.entries, m);
        assert!(r.random);
    }
}

#[test]
fn readwhilewriting_flushes_each_memtable_once_with_its_bytes() {
    let mut c = small(Benchmark::Readwhilewriting);
    c.disable_auto_compactions = true;
    c.key_range = Some(10_000);
    let threads = c.threads(0, "rocks", 4).unwrap();
    assert_eq!(
        names(&threads),
        [
            "rocks/writer",
            "rocks/reader0",
            "rocks/reader1",
            "rocks/flush"
        ]
    );
    assert!(threads[3].background && !threads[0].background);
    let t = run(threads, Some(200_000_000), 4);
    let l = layout(&c);
    let flushes = &t.ops[3];
    assert!(flushes.len() >= 2, "{} flushes", flushes.len());
    let expected: Vec<u64> = chunks(l.sst_bytes(l.memtable_entries), 1 << 20, &l);
    let writes: Vec<u64> = t.ios[3].iter().map(|io| io.bytes).collect();
    // Every flush writes one memtable's SST, in 1 MiB pieces; a flush under
    // way at the stop finishes.
    assert_eq!(writes.len(), expected.len() * flushes.len());
    for (w, e) in writes.iter().zip(expected.iter().cycle()) {
        assert_eq!(w, e);
    }
    for f in flushes {
        assert_eq!(f.items as u64, l.memtable_entries);
    }
    assert!(t.ios[3]
        .iter()
        .all(|io| io.write && io.marks == Marks::URGENT));
    // Readers read more as L0 files accumulate (no bloom filter).
    let puts = ops_of(&t, OpKind::Insert).len() as u64;
    assert!(puts >= 2 * l.memtable_entries);
    let gets = (t.ops[1].len() + t.ops[2].len()) as u64;
    let reads = (t.ios[1].len() + t.ios[2].len()) as u64;
    assert!(reads > gets / 2, "{reads} reads for {gets} gets");
}

#[test]
fn marks_default_urgent_app_cint_unmarks_background_only() {
    for app_cint in [false, true] {
        let mut c = small(Benchmark::Readwhilewriting);
        c.app_cint = app_cint;
        c.key_range = Some(10_000);
        c.level0_file_num_compaction_trigger = 2;
        let threads = c.threads(0, "rocks", 5).unwrap();
        assert_eq!(threads[4].name, "rocks/compaction");
        let t = run(threads, Some(300_000_000), 5);
        let background = if app_cint { Marks::NONE } else { Marks::URGENT };
        for (i, ios) in t.ios.iter().enumerate() {
            let want = if i >= 3 { background } else { Marks::URGENT };
            assert!(ios.iter().all(|io| io.marks == want), "thread {i}");
        }
        // The compaction read and wrote the random L0 files.
        assert!(t.ios[4].iter().any(|io| !io.write));
        assert!(t.ios[4].iter().any(|io| io.write));
        assert!(!ops_of(&t, OpKind::Background).is_empty());
    }
}

#[test]
fn fillbatch_writes_batches_of_1000_and_moves_l0_trivially() {
    for app_cint in [false, true] {
        let mut c = small(Benchmark::Fillbatch);
        c.app_cint = app_cint;
        c.threads = 1;
        c.num = 60_500;
        let threads = c.threads(0, "load", 6).unwrap();
        assert_eq!(
            names(&threads),
            ["load/writer", "load/flush", "load/compaction"]
        );
        let t = run(threads, None, 6);
        let batches = ops_of(&t, OpKind::WriteBatch);
        // db_bench: num / 1000 batches of 1000 sequential keys.
        assert_eq!(batches.len(), 60);
        assert!(batches.iter().all(|b| b.items == 1000));
        // Sequential keys: no compaction I/O, only flush writes.
        assert!(t.ios[2].is_empty());
        assert!(all_ios(&t).all(|io| io.write));
        // A 256 KiB memtable holds fewer than 1000 entries, so each batch
        // fills one: batches 2 to 60 each switch it, and the flush thread
        // writes all 59 (the last memtable stays in the WAL, as at
        // db_bench's exit).
        assert!(layout(&c).memtable_entries < 1000);
        assert_eq!(t.ops[1].len(), 59);
        assert!(t.ops[1].iter().all(|f| f.items == 1000));
        let want = if app_cint { Marks::NONE } else { Marks::URGENT };
        assert!(all_ios(&t).all(|io| io.marks == want));
    }
}

#[test]
fn stop_drains_every_thread_to_done() {
    for b in [
        Benchmark::Readrandom,
        Benchmark::Readwhilewriting,
        Benchmark::Fillbatch,
    ] {
        let mut c = small(b);
        c.key_range = Some(10_000);
        c.num = 1_000_000;
        let t = run(c.threads(0, "rocks", 7).unwrap(), Some(50_000_000), 7);
        assert!(t.end < 200_000_000, "{b:?} ran on to {}", t.end);
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let mut c = small(Benchmark::Readwhilewriting);
    c.key_range = Some(10_000);
    // Half the key range's blocks fit: hits and misses both happen.
    c.cache_size = 5 << 20;
    let a = run(c.threads(0, "rocks", 8).unwrap(), Some(100_000_000), 8);
    let b = run(c.threads(0, "rocks", 8).unwrap(), Some(100_000_000), 8);
    assert!(a == b, "two runs with one seed differ");
    let d = run(c.threads(0, "rocks", 8).unwrap(), Some(100_000_000), 9);
    assert!(a != d, "two seeds gave one run");
}

#[test]
fn dump_reads_every_block_with_growing_readahead_and_writes_every_key() {
    for app_cint in [false, true] {
        let mut c = DumpConfig::new(50_000);
        c.app_cint = app_cint;
        c.target_file_size_base = 8 << 20;
        let threads = c.threads(1, "dump", 0).unwrap();
        assert_eq!(names(&threads), ["dump/dump"]);
        let t = run(threads, None, 0);
        let ops = ops_of(&t, OpKind::Background);
        let keys: u64 = ops.iter().map(|o| o.items as u64).sum();
        assert_eq!(keys, 50_000);
        let l = *Dumper::new(&c).layout();
        let read: u64 = t.ios[0].iter().filter(|i| !i.write).map(|i| i.bytes).sum();
        assert!(read >= l.data_bytes(50_000));
        assert!(read < l.data_bytes(50_000) + 20 * (256 << 10));
        let written: u64 = t.ios[0].iter().filter(|i| i.write).map(|i| i.bytes).sum();
        let out = 50_000 * dump_entry_bytes(16, 1024);
        assert_eq!(
            written,
            out / c.write_size * c.write_size + l.aligned(out % c.write_size)
        );
        let want = if app_cint { Marks::NONE } else { Marks::URGENT };
        assert!(t.ios[0].iter().all(|io| io.marks == want));
    }
}

#[test]
fn table_iterator_readahead_doubles_to_256_kib() {
    let l = Layout::new(16, 1024, 4096, 64 << 20, 512);
    let reads = table_reads(&l, 2000);
    // Two single-block reads, then the block plus 8, 16, ... 256 KiB.
    assert_eq!(reads[0], (0, l.span_bytes(0, l.block_bytes)));
    assert_eq!(reads[1].0, 1);
    assert!(reads[2].1 >= l.block_bytes + 8192);
    let sizes: Vec<u64> = reads.iter().map(|r| r.1).collect();
    assert!(sizes[3] > sizes[2] && sizes[4] > sizes[3]);
    assert!(sizes
        .iter()
        .all(|&s| s <= l.block_bytes + (256 << 10) + 1024));
    // Contiguous coverage: every block is read exactly once.
    let total: u64 = sizes.iter().sum();
    assert!(total >= 2000 * l.block_bytes && total < 2000 * l.block_bytes + (256 << 10) + 8192);
}

#[test]
fn bad_configs_are_refused() {
    let mut c = small(Benchmark::Readrandom);
    c.cores.clear();
    assert!(c.threads(0, "r", 0).is_err());
    let mut c = small(Benchmark::Readrandom);
    c.key_range = Some(c.num + 1);
    assert!(c.threads(0, "r", 0).is_err());
    assert_eq!(c.validate().unwrap_err().option, "key_range");
    let mut d = DumpConfig::new(10);
    d.logical_block_size = 1000;
    assert_eq!(d.validate().unwrap_err().option, "logical_block_size");
    // Every key has a default, so one key parses alone.
    let c: Config = toml::from_str("threads = 4\n").unwrap();
    assert_eq!(c.threads, 4);
    assert_eq!(Config::REQUIRED, ["benchmark"]);
    let c: Result<Config, _> = toml::from_str("benchmark = \"readrandom\"\nbogus = 1\n");
    assert!(c.is_err());
    let c: Config = toml::from_str("benchmark = \"fillbatch\"\napp_cint = true\n").unwrap();
    assert_eq!(c.num, 20_000_000);
    assert_eq!(c.cache_size, 8 << 20);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_configs_keep_the_invariants(
        b in 0..3usize,
        threads in 1..4u32,
        num in 2_000..40_000u64,
        range_div in 1..5u64,
        wbs_kib in 64..512u64,
        cache in prop_oneof![Just(0u64), Just(8u64 << 20), Just(1u64 << 40)],
        app_cint: bool,
        auto: bool,
        stop_ms in prop::option::of(1..100u64),
        seed: u64,
    ) {
        let benchmark = [Benchmark::Readrandom, Benchmark::Readwhilewriting, Benchmark::Fillbatch][b];
        let mut c = Config::new(benchmark);
        c.threads = threads;
        c.num = num;
        c.key_range = Some(num / range_div);
        c.reads = Some(200);
        c.write_buffer_size = wbs_kib * 1024;
        c.cache_size = cache;
        c.app_cint = app_cint;
        c.disable_auto_compactions = !auto;
        c.cores = vec![0, 1];
        // readwhilewriting's writer runs until the readers are done.
        let stop = stop_ms.map(|ms| ms * 1_000_000);
        let placed = c.threads(0, "p", seed).unwrap();
        let roles = names(&placed);
        let t = run(placed, stop, seed);
        for (i, ios) in t.ios.iter().enumerate() {
            let background = roles[i].ends_with("flush") || roles[i].ends_with("compaction");
            for io in ios {
                let want = if background && app_cint { Marks::NONE } else { Marks::URGENT };
                prop_assert_eq!(io.marks, want);
                if roles[i].contains("reader") {
                    prop_assert!(!io.write);
                }
            }
        }
        if stop.is_none() && benchmark == Benchmark::Readrandom {
            prop_assert_eq!(ops_of(&t, OpKind::Read).len() as u64, 200 * threads as u64);
        }
        if stop.is_none() && benchmark == Benchmark::Fillbatch {
            prop_assert_eq!(ops_of(&t, OpKind::WriteBatch).len() as u64, num / 1000);
        }
        if cache == 1 << 40 {
            // The cache starts empty (db_bench's): at most one read per
            // data block of the key range, across the readers.
            let blocks = c.key_range() as f64 / 4.0;
            let reads = t.ios.iter().zip(&roles).filter(|(_, r)| r.contains("reader")).map(|(ios, _)| ios.len()).sum::<usize>();
            prop_assert!(reads as f64 <= blocks.ceil() + 4.0, "{} reads of about {} blocks", reads, blocks);
        }
    }
}

/// The example files load through the application file, and their
/// instances place their threads.
#[test]
fn example_files_load() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/apps");
    for (file, threads) in [
        ("rocksdb-readrandom.toml", 4),
        ("rocksdb-readwhilewriting.toml", 5),
        ("rocksdb-fillbatch.toml", 3),
        ("rocksdb-dump.toml", 5),
    ] {
        let f = AppFile::load(std::path::Path::new(&format!("{dir}/{file}")))
            .unwrap_or_else(|e| panic!("{e}"));
        let placed = f.threads(0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(placed.len(), threads, "{file}");
        for inst in &f.instances {
            match &inst.engine {
                EngineConfig::Rocksdb(c) => {
                    assert_eq!((c.key_size, c.value_size), (16, 1024), "{file}");
                    assert!(c.cores.len() <= 2);
                }
                EngineConfig::Dump(c) => assert_eq!(c.num, 10_000_000),
                e => panic!("{file}: {e:?}"),
            }
        }
    }
}

#[test]
fn the_application_file_names_a_bad_rocksdb_key() {
    let error = |text: &str| AppFile::parse(text, "r.toml").unwrap_err().to_string();
    let e = error("[[instance]]\nname = \"r\"\nengine = \"rocksdb\"\nthreads = 2\n");
    assert!(e.contains("option 'benchmark'"), "{e}");
    let e = error(
        "[[instance]]\nname = \"r\"\nengine = \"rocksdb\"\nbenchmark = \"readrandom\"\nbloom_bits = 10\n",
    );
    assert!(e.starts_with("r.toml:5: option 'bloom_bits'"), "{e}");
    let e = error(
        "[[instance]]\nname = \"r\"\nengine = \"rocksdb\"\nbenchmark = \"readrandom\"\nkey_range = 0\n",
    );
    assert!(e.contains("option 'key_range'"), "{e}");
    let e = error("[[instance]]\nname = \"d\"\nengine = \"dump\"\nwrite_size = 0\n");
    assert!(e.contains("option 'write_size'"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_dumps_keep_the_invariants(
        num in 1..30_000u64,
        value_size in 1..3000u32,
        file_kib in 16..4096u64,
        write_kib in 1..2048u64,
        app_cint: bool,
        stop_ms in prop::option::of(1..50u64),
        seed: u64,
    ) {
        let mut c = DumpConfig::new(num);
        c.value_size = value_size;
        c.target_file_size_base = file_kib * 1024;
        c.write_size = write_kib * 1024;
        c.app_cint = app_cint;
        let t = run(c.threads(0, "d", seed).unwrap(), stop_ms.map(|m| m * 1_000_000), seed);
        let want = if app_cint { Marks::NONE } else { Marks::URGENT };
        prop_assert!(t.ios[0].iter().all(|io| io.marks == want));
        let keys: u64 = t.ops[0].iter().map(|o| o.items as u64).sum();
        if stop_ms.is_none() {
            prop_assert_eq!(keys, num);
            let l = *Dumper::new(&c).layout();
            let read: u64 = t.ios[0].iter().filter(|i| !i.write).map(|i| i.bytes).sum();
            prop_assert!(read >= l.data_bytes(num));
            let written: u64 = t.ios[0].iter().filter(|i| i.write).map(|i| i.bytes).sum();
            prop_assert!(written >= num * dump_entry_bytes(16, value_size));
        } else {
            prop_assert!(keys <= num);
        }
    }
}

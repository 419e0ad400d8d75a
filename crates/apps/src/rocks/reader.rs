//! A db_bench reader (`ReadRandom`, tools/db_bench_tool.cc): gets of
//! uniformly random keys (`GetRandomKey`: `rand_int % FLAGS_num`), one
//! after another, each a `DB::Get`, its latency the get's (the artifact
//! reads `rocksdb.db.get.micros` from `-statistics`).
//!
//! A get looks in the memtables, then in each L0 file whose key range holds
//! the key, newest first, then in the one file of the lower levels that
//! holds it, and stops where it finds the key. What that costs on a
//! database fillbatch loaded (sequential keys, so no two files overlap) and
//! readrandom/readwhilewriting then read with `--disable_auto_compactions`:
//! - index and filter blocks: no I/O. db_bench leaves
//!   `cache_index_and_filter_blocks` false (`DEFINE_bool(
//!   cache_index_and_filter_blocks, false`), so each table reader preloads
//!   its index when the table is opened (table/block_based/
//!   block_based_table_reader.cc `Open`: `preload_all =
//!   !table_options.cache_index_and_filter_blocks`), and `max_open_files =
//!   -1` (options.h) opens every table at `DB::Open`;
//! - no bloom filter: `DEFINE_int32(bloom_bits, -1` and `filter_policy_(
//!   FLAGS_bloom_bits >= 0 ? NewBloomFilterPolicy(...) : nullptr)`, so every
//!   L0 file whose range covers the key costs a data-block read;
//! - the load's files never overlap, so a key is in exactly one of them
//!   and range checks skip the others: one data-block read;
//! - readwhilewriting's writer puts random keys, so each L0 file it flushes
//!   spans the whole key range: one more data-block read per such file,
//!   until the key is found in one (probability entries / key range, keys
//!   taken as distinct: our simplification).
//!
//! Checked with real RocksDB (Debian's db_bench 7.8.3, tmpfs, `--key_size=16
//! --value_size=1024 --compression_type=none --seed=7`, a database from
//! `--benchmarks=fillbatch --num=400000`, then `--use_existing_db=1
//! --disable_auto_compactions=1 --statistics`):
//! - `--benchmarks=readrandom --num=400000 --reads=20000` (8 MiB cache):
//!   `block.cache.data.miss COUNT : 19654`, `data.hit COUNT : 346`, index
//!   and filter `miss`/`hit` 0: one data block per get, no index or filter
//!   access, 1.7% hits (our model: 8 MiB / 422 MB = 2.0%);
//! - `--benchmarks=readwhilewriting --write_buffer_size=4194304
//!   --num=400000 --duration=8 --threads=1`: `number.keys.read 14999`,
//!   `data.miss 146238`, `data.hit 22846`: 11.3 data blocks per get once
//!   the writer had flushed about 50 random L0 files
//!   (`number.keys.written 205374`), `memtable.hit 124` (0.8%).
//!
//! Each data block read is a block-cache miss with probability 1 -
//! `cached / data bytes` of the key range (our simple model of an LRU block
//! cache under uniform keys), where `cached` is what the cache holds: it
//! starts empty, as db_bench opens it (or full with `cache_warm`), and each
//! miss adds its block, up to `cache_size`. A miss is one blocking direct
//! `pread` of the block widened to the device's logical block size.

use policy::Nanos;
use rand::{Rng, RngCore};

use super::config::Config;
use super::costs;
use super::db::Shared;
use super::io_marks;
use super::layout::Layout;
use crate::{Action, AppIo, AppThread, OpDone, OpKind, Waiter};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between gets.
    Idle,
    /// The get's own CPU (memtable and index lookups) is running.
    Lookup,
    /// A block read is in flight.
    Reading(u64),
    /// The block read returned: its checksum and search come next.
    Returned,
}

#[derive(Debug)]
pub struct Reader {
    layout: Layout,
    shared: Shared,
    key_range: u64,
    /// Data bytes of the key range, and the block cache's capacity.
    data: u64,
    cache_size: u64,
    left: Option<u64>,
    state: State,
    /// Device reads still to do for this get (bytes each), last first.
    plan: Vec<u64>,
    op_start: Nanos,
    next_tag: u64,
    stopping: bool,
    finished: bool,
    ops: Vec<OpDone>,
}

impl Reader {
    pub fn new(cfg: &Config, layout: Layout, shared: Shared) -> Reader {
        let key_range = cfg.key_range();
        let data = layout.data_bytes(key_range).max(1);
        if cfg.cache_warm {
            let mut db = shared.lock();
            db.cached_bytes = db.cached_bytes.max(cfg.cache_size.min(data));
        }
        Reader {
            layout,
            shared,
            key_range,
            data,
            cache_size: cfg.cache_size,
            left: cfg.reads_per_thread(),
            state: State::Idle,
            plan: Vec::new(),
            op_start: 0,
            next_tag: 0,
            stopping: false,
            finished: false,
            ops: Vec::new(),
        }
    }

    /// The probability that a block lookup hits the block cache now.
    pub fn hit_probability(&self) -> f64 {
        self.hit_with(self.shared.lock().cached_bytes)
    }

    fn hit_with(&self, cached: u64) -> f64 {
        (cached.min(self.cache_size) as f64 / self.data as f64).min(1.0)
    }

    /// One block lookup: true if it misses the cache (the block is read
    /// from the device, then cached).
    fn misses(&mut self, rng: &mut dyn RngCore) -> bool {
        let mut db = self.shared.lock();
        if rng.random_bool(self.hit_with(db.cached_bytes)) {
            return false;
        }
        db.cached_bytes = (db.cached_bytes + self.layout.block_bytes).min(self.cache_size);
        true
    }

    /// Draws one get: which blocks it reads from the device.
    fn plan_get(&mut self, rng: &mut dyn RngCore) {
        self.plan.clear();
        let key = rng.random_range(0..self.key_range);
        let (memtable, l0) = {
            let db = self.shared.lock();
            let mem: u64 = db.active + db.immutable.iter().map(|r| r.entries).sum::<u64>();
            let l0: Vec<u64> = db
                .l0
                .iter()
                .rev()
                .filter(|r| r.random)
                .map(|r| r.entries)
                .collect();
            (mem, l0)
        };
        let range = self.key_range as f64;
        if rng.random_bool((memtable as f64 / range).min(1.0)) {
            return;
        }
        let mut reads = Vec::new();
        for entries in l0 {
            // A random block of this file (its keys are spread over the
            // range, so any block is as likely).
            let block = rng.random_range(0..self.layout.blocks(entries).max(1));
            if self.misses(rng) {
                reads.push(self.layout.block_read_bytes(block));
            }
            if rng.random_bool((entries as f64 / range).min(1.0)) {
                reads.reverse();
                self.plan = reads;
                return;
            }
        }
        // The base levels: the block the sequential load put the key in.
        if self.misses(rng) {
            let block = key / self.layout.entries_per_block;
            reads.push(self.layout.block_read_bytes(block));
        }
        reads.reverse();
        self.plan = reads;
    }
}

impl AppThread for Reader {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }

    fn next(&mut self, now: Nanos, rng: &mut dyn RngCore) -> Action {
        match self.state {
            State::Idle => {
                if self.stopping || self.left == Some(0) {
                    if !self.finished {
                        self.finished = true;
                        let mut db = self.shared.lock();
                        db.readers = db.readers.saturating_sub(1);
                    }
                    return Action::Done;
                }
                if let Some(l) = self.left.as_mut() {
                    *l -= 1;
                }
                self.plan_get(rng);
                self.op_start = now;
                self.state = State::Lookup;
                Action::Compute(costs::GET_NS)
            }
            // The block's checksum and search are in GET_NS (measured on
            // the path that reads every block).
            State::Returned | State::Lookup => match self.plan.pop() {
                Some(bytes) => {
                    let tag = self.next_tag;
                    self.next_tag += 1;
                    self.state = State::Reading(tag);
                    Action::Submit(vec![AppIo {
                        tag,
                        write: false,
                        bytes,
                        // Foreground reads stay Urgent under app-cint too.
                        marks: io_marks(false),
                    }])
                }
                None => {
                    self.ops.push(OpDone {
                        kind: OpKind::Read,
                        start: self.op_start,
                        end: now,
                        items: 1,
                    });
                    self.state = State::Idle;
                    self.next(now, rng)
                }
            },
            State::Reading(_) => Action::Wait { min: 1, max: 1 },
        }
    }

    fn completed(&mut self, tags: &[u64], _now: Nanos) {
        match self.state {
            State::Reading(t) if tags == [t] => {
                self.state = State::Returned;
            }
            _ => panic!("reader: completion {tags:?} in state {:?}", self.state),
        }
    }

    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.ops);
    }

    fn stop(&mut self) {
        self.stopping = true;
        self.shared.lock().stopping = true;
    }

    fn max_in_flight(&self) -> u32 {
        1
    }
}

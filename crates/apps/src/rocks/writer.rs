//! db_bench's writer: readwhilewriting's `BGWriter` (one `DB::Put` of a
//! random key at a time, until the readers are done) and fillbatch's
//! `DoWrite(SEQUENTIAL)` (`WriteBatch`es of 1000 sequential keys,
//! `entries_per_batch_ = 1000` whatever `--batch_size` says, `num / 1000`
//! of them: `while (!duration.Done(entries_per_batch_))`), all in
//! tools/db_bench_tool.cc.
//!
//! A write appends to the WAL and inserts into the memtable. The WAL is a
//! buffered `write()` into the page cache: db_bench's `--sync` and
//! `--disable_wal` are false, RocksDB's `manual_wal_flush` false and
//! `wal_bytes_per_sync` 0 (include/rocksdb/options.h), and the WAL is not
//! opened O_DIRECT (env/env.cc: `AssignEnvOptions` and
//! `OptimizeForLogWrite` leave `use_direct_writes` false; only
//! `OptimizeForCompactionTableWrite` sets it from
//! `use_direct_io_for_flush_and_compaction`). So a write costs CPU and no device I/O; the kernel's later
//! writeback of those pages is not modelled.
//!
//! When the memtable is full the write switches to a new one and wakes the
//! flush thread; it stops (a write stall, parked until a flush finishes)
//! while `max_write_buffer_number` full memtables wait for their flush, or
//! while `level0_stop_writes_trigger` L0 files wait for compaction with
//! auto compactions on (db/column_family.cc
//! `GetWriteStallConditionAndCause`: `kMemtableLimit`,
//! `kL0FileCountLimit`). The stall is inside `DB::Write`, so in the op's
//! latency. An op is one `DB::Write` (a put, or a batch with `items` =
//! its keys, db_bench counting fillbatch's throughput in keys:
//! `FinishedOps(..., entries_per_batch_, kWrite)`); fillbatch builds each
//! batch before it, outside the op.

use policy::Nanos;
use rand::RngCore;

use super::config::{Benchmark, Config};
use super::costs;
use super::db::{Run, Shared};
use super::layout::Layout;
use crate::{Action, AppThread, OpDone, OpKind, Waiter};

/// fillbatch's keys per `WriteBatch` (tools/db_bench_tool.cc: `name ==
/// "fillbatch"` sets `entries_per_batch_ = 1000`).
pub const FILLBATCH_ENTRIES_PER_BATCH: u64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    /// fillbatch builds its batch before `DB::Write` (outside the op).
    Building,
    /// An op has begun and waits to be let in (memtable switch, stall).
    Admit,
    /// Parked in a write stall.
    Stalled,
    /// The write's CPU is running.
    Writing,
}

#[derive(Debug)]
pub struct Writer {
    shared: Shared,
    batch: bool,
    entries: u64,
    memtable_entries: u64,
    max_write_buffer_number: usize,
    l0_stop: Option<usize>,
    /// Ops left (fillbatch: batches); `None`: until the readers are done.
    left: Option<u64>,
    state: State,
    op_start: Nanos,
    stopping: bool,
    ops: Vec<OpDone>,
    wakes: Vec<usize>,
}

impl Writer {
    pub fn new(cfg: &Config, layout: Layout, shared: Shared) -> Writer {
        let batch = cfg.benchmark == Benchmark::Fillbatch;
        Writer {
            shared,
            batch,
            entries: if batch {
                FILLBATCH_ENTRIES_PER_BATCH
            } else {
                1
            },
            memtable_entries: layout.memtable_entries,
            max_write_buffer_number: cfg.max_write_buffer_number as usize,
            l0_stop: (!cfg.disable_auto_compactions)
                .then_some(cfg.level0_stop_writes_trigger as usize),
            left: batch.then_some(cfg.num / FILLBATCH_ENTRIES_PER_BATCH),
            state: State::Idle,
            op_start: 0,
            stopping: false,
            ops: Vec::new(),
            wakes: Vec::new(),
        }
    }

    fn finish(&mut self) -> Action {
        let mut db = self.shared.lock();
        db.writer_done = true;
        self.wakes.extend(db.flusher);
        self.wakes.extend(db.compactor);
        Action::Done
    }

    /// Switches a full memtable and decides whether the write may go on.
    fn admit(&mut self) -> bool {
        let mut db = self.shared.lock();
        if db.active >= self.memtable_entries {
            let run = Run {
                entries: db.active,
                random: !self.batch,
            };
            db.immutable.push_back(run);
            db.active = 0;
            self.wakes.extend(db.flusher);
        }
        let memtables = db.immutable.len() >= self.max_write_buffer_number;
        let l0 = self.l0_stop.is_some_and(|stop| db.l0.len() >= stop);
        if memtables || l0 {
            db.writer_stalled = true;
            // Wake whoever can end the stall, in case it parked first.
            self.wakes.extend(db.flusher);
            if l0 {
                self.wakes.extend(db.compactor);
            }
            false
        } else {
            db.writer_stalled = false;
            true
        }
    }
}

impl AppThread for Writer {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        loop {
            match self.state {
                State::Idle => {
                    let readers_done = !self.batch && self.shared.lock().readers == 0;
                    if self.stopping || self.left == Some(0) || readers_done {
                        return self.finish();
                    }
                    if let Some(l) = self.left.as_mut() {
                        *l -= 1;
                    }
                    if self.batch {
                        self.state = State::Building;
                        let all = costs::FILLBATCH_KEY_NS * self.entries;
                        return Action::Compute(
                            all - all * costs::FILLBATCH_IN_WRITE_PERCENT / 100,
                        );
                    }
                    self.op_start = now;
                    self.state = State::Admit;
                }
                State::Building => {
                    self.op_start = now;
                    self.state = State::Admit;
                }
                State::Admit | State::Stalled => {
                    if !self.admit() {
                        self.state = State::Stalled;
                        return Action::Park;
                    }
                    self.state = State::Writing;
                    return Action::Compute(if self.batch {
                        costs::FILLBATCH_KEY_NS * self.entries * costs::FILLBATCH_IN_WRITE_PERCENT
                            / 100
                    } else {
                        costs::PUT_NS
                    });
                }
                State::Writing => {
                    self.shared.lock().active += self.entries;
                    self.ops.push(OpDone {
                        kind: if self.batch {
                            OpKind::WriteBatch
                        } else {
                            OpKind::Insert
                        },
                        start: self.op_start,
                        end: now,
                        items: self.entries as u32,
                    });
                    self.state = State::Idle;
                }
            }
        }
    }

    fn completed(&mut self, tags: &[u64], _now: Nanos) {
        panic!("writer: it issues no I/O, yet {tags:?} completed");
    }

    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.ops);
    }

    fn stop(&mut self) {
        self.stopping = true;
        self.shared.lock().stopping = true;
    }

    fn max_in_flight(&self) -> u32 {
        0
    }

    fn drain_wakes(&mut self, out: &mut Vec<usize>) {
        out.append(&mut self.wakes);
    }
}

//! RocksDB's background threads: the memtable flush and the compaction
//! (`max_background_jobs = 2`, include/rocksdb/options.h: one flush and one
//! compaction at a time, db/db_impl/db_impl_compaction_flush.cc
//! `GetBGJobLimits`).
//!
//! Both write SSTs with direct I/O (`--use_direct_io_for_flush_and_
//! compaction=true`) through a `WritableFileWriter` whose buffer grows to
//! `writable_file_max_buffer_size` (db_bench: 1 MiB) before each `pwrite`
//! (util/file_reader_writer.cc `WritableFileWriter::Append`/`WriteDirect`),
//! so a file is written as sequential 1 MiB writes, the last padded to the
//! alignment. A compaction reads its inputs through a `FilePrefetchBuffer`
//! of `compaction_readahead_size`, which `SanitizeOptions` sets to 2 MiB
//! under `use_direct_reads` (db/db_impl/db_impl_open.cc: `if
//! (result.use_direct_reads && result.compaction_readahead_size == 0)
//! ... = 1024 * 1024 * 2`), reading `max(n, readahead)` at a time.
//!
//! Under `app_cint` the authors' patch marks all of it non-Urgent (TOS
//! 4.1.2 "RocksDB Background Tasks"); otherwise every piece is a blocking
//! call, Urgent by TOS Table 1. The SST's `fdatasync` at the end of a
//! flush is not modelled: on a device without a volatile write cache
//! (Optane) it sends the device nothing.

use std::collections::VecDeque;

use policy::Nanos;
use rand::RngCore;

use super::config::Config;
use super::costs;
use super::db::{Run, Shared};
use super::io_marks;
use super::layout::{chunks, Layout};
use crate::{Action, AppIo, AppThread, OpDone, OpKind, Waiter};

/// A compaction's read size under direct reads (db_impl_open.cc,
/// `SanitizeOptions`: 2 MiB).
pub const COMPACTION_READAHEAD: u64 = 2 * 1024 * 1024;

/// One step of a background job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Cpu(Nanos),
    Io { write: bool, bytes: u64 },
}

/// A sequence of steps run one at a time on a blocking thread.
#[derive(Debug, Default)]
struct Job {
    steps: VecDeque<Step>,
    in_flight: Option<u64>,
    start: Nanos,
    entries: u64,
    inputs: usize,
}

enum Progress {
    Act(Action),
    Finished,
}

impl Job {
    /// The next action; `next_tag` is the thread's tag counter (tags stay
    /// unique across its jobs).
    fn advance(&mut self, marks: policy::Marks, next_tag: &mut u64) -> Progress {
        if self.in_flight.is_some() {
            return Progress::Act(Action::Wait { min: 1, max: 1 });
        }
        match self.steps.pop_front() {
            Some(Step::Cpu(ns)) => Progress::Act(Action::Compute(ns)),
            Some(Step::Io { write, bytes }) => {
                let tag = *next_tag;
                *next_tag += 1;
                self.in_flight = Some(tag);
                Progress::Act(Action::Submit(vec![AppIo {
                    tag,
                    write,
                    bytes,
                    marks,
                }]))
            }
            None => Progress::Finished,
        }
    }

    fn completed(&mut self, tags: &[u64], who: &str) {
        match self.in_flight {
            Some(t) if tags == [t] => self.in_flight = None,
            _ => panic!("{who}: completion {tags:?}, in flight {:?}", self.in_flight),
        }
    }
}

fn cpu_of(bytes: u64) -> Nanos {
    bytes * costs::BACKGROUND_NS_PER_KIB / 1024
}

/// The steps of writing `bytes` of SST: CPU to build each piece, then its
/// write.
pub fn write_steps(bytes: u64, max_buffer: u64, layout: &Layout) -> Vec<Step> {
    chunks(bytes, max_buffer, layout)
        .into_iter()
        .flat_map(|b| {
            [
                Step::Cpu(cpu_of(b)),
                Step::Io {
                    write: true,
                    bytes: b,
                },
            ]
        })
        .collect()
}

/// RocksDB's flush thread: parked until the writer fills a memtable, then
/// writes it to a new L0 SST.
#[derive(Debug)]
pub struct Flusher {
    shared: Shared,
    layout: Layout,
    max_buffer: u64,
    marks: policy::Marks,
    trigger: Option<usize>,
    job: Option<Job>,
    next_tag: u64,
    ops: Vec<OpDone>,
    wakes: Vec<usize>,
    done: bool,
}

impl Flusher {
    pub fn new(cfg: &Config, layout: Layout, shared: Shared) -> Flusher {
        Flusher {
            shared,
            layout,
            max_buffer: cfg.writable_file_max_buffer_size,
            marks: io_marks(cfg.app_cint),
            trigger: (!cfg.disable_auto_compactions)
                .then_some(cfg.level0_file_num_compaction_trigger as usize),
            job: None,
            next_tag: 0,
            ops: Vec::new(),
            wakes: Vec::new(),
            done: false,
        }
    }

    fn finish_job(&mut self, job: Job, now: Nanos) {
        let mut db = self.shared.lock();
        let run = db.immutable.pop_front().unwrap_or(Run {
            entries: job.entries,
            random: false,
        });
        db.l0.push(run);
        db.flushes += 1;
        if db.writer_stalled {
            self.wakes.extend(db.writer);
        }
        if self.trigger.is_some_and(|t| db.l0.len() >= t) {
            self.wakes.extend(db.compactor);
        }
        self.ops.push(OpDone {
            kind: OpKind::Background,
            start: job.start,
            end: now,
            items: job.entries as u32,
        });
    }
}

impl AppThread for Flusher {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        loop {
            if self.done {
                return Action::Done;
            }
            if let Some(job) = self.job.as_mut() {
                match job.advance(self.marks, &mut self.next_tag) {
                    Progress::Act(a) => return a,
                    Progress::Finished => {
                        let job = self.job.take().expect("a job");
                        self.finish_job(job, now);
                        continue;
                    }
                }
            }
            let mut db = self.shared.lock();
            let wanted = !db.stopping || db.writer_stalled;
            match db.immutable.front() {
                Some(run) if wanted => {
                    let bytes = self.layout.sst_bytes(run.entries);
                    self.job = Some(Job {
                        steps: write_steps(bytes, self.max_buffer, &self.layout).into(),
                        start: now,
                        entries: run.entries,
                        ..Job::default()
                    });
                }
                _ if db.writer_done => {
                    db.flush_done = true;
                    self.wakes.extend(db.compactor);
                    self.done = true;
                }
                _ => return Action::Park,
            }
        }
    }

    fn completed(&mut self, tags: &[u64], _now: Nanos) {
        match self.job.as_mut() {
            Some(job) => job.completed(tags, "flush"),
            None => panic!("flush: completion {tags:?} with no job"),
        }
    }

    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.ops);
    }

    fn stop(&mut self) {
        self.shared.lock().stopping = true;
    }

    fn max_in_flight(&self) -> u32 {
        1
    }

    fn drain_wakes(&mut self, out: &mut Vec<usize>) {
        out.append(&mut self.wakes);
    }
}

/// RocksDB's compaction thread, for L0 → L1 (level compaction,
/// `level0_file_num_compaction_trigger` files). L0 files that do not
/// overlap (fillbatch's sequential runs) move down without being read or
/// written (db/compaction/compaction.cc `IsTrivialMove`: allowed when
/// `level0_non_overlapping()` and one input level), so fillbatch's load
/// compacts with no I/O. Checked with Debian's db_bench 7.8.3:
/// `--benchmarks=fillbatch --num=400000 --write_buffer_size=4194304
/// --key_size=16 --value_size=1024 --compression_type=none --statistics`:
/// `compact.read.bytes COUNT : 0`, `compact.write.bytes COUNT : 0`,
/// `flush.write.bytes COUNT : 417839068`, and its LOG says `Moved #4 files
/// to level-1` (68 moves). Overlapping files (random puts) are read and
/// rewritten: our simplification counts only the L0 inputs, not the L1
/// files a real compaction merges them with.
#[derive(Debug)]
pub struct Compactor {
    shared: Shared,
    layout: Layout,
    max_buffer: u64,
    marks: policy::Marks,
    trigger: usize,
    job: Option<Job>,
    next_tag: u64,
    ops: Vec<OpDone>,
    wakes: Vec<usize>,
    done: bool,
}

impl Compactor {
    pub fn new(cfg: &Config, layout: Layout, shared: Shared) -> Compactor {
        Compactor {
            shared,
            layout,
            max_buffer: cfg.writable_file_max_buffer_size,
            marks: io_marks(cfg.app_cint),
            trigger: cfg.level0_file_num_compaction_trigger as usize,
            job: None,
            next_tag: 0,
            ops: Vec::new(),
            wakes: Vec::new(),
            done: false,
        }
    }

    /// Reads and writes interleaved: each 2 MiB read, then the output it
    /// yields.
    fn steps(&self, bytes: u64) -> VecDeque<Step> {
        let mut out = VecDeque::new();
        for read in chunks(bytes, COMPACTION_READAHEAD, &self.layout) {
            out.push_back(Step::Io {
                write: false,
                bytes: read,
            });
            out.extend(write_steps(read, self.max_buffer, &self.layout));
        }
        out
    }

    fn finish_job(&mut self, job: Job, now: Nanos) {
        let mut db = self.shared.lock();
        let n = job.inputs.min(db.l0.len());
        db.l0.drain(..n);
        db.compactions += 1;
        if db.writer_stalled {
            self.wakes.extend(db.writer);
        }
        self.ops.push(OpDone {
            kind: OpKind::Background,
            start: job.start,
            end: now,
            items: job.entries as u32,
        });
    }
}

impl AppThread for Compactor {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        loop {
            if self.done {
                return Action::Done;
            }
            if let Some(job) = self.job.as_mut() {
                match job.advance(self.marks, &mut self.next_tag) {
                    Progress::Act(a) => return a,
                    Progress::Finished => {
                        let job = self.job.take().expect("a job");
                        self.finish_job(job, now);
                        continue;
                    }
                }
            }
            let mut db = self.shared.lock();
            let wanted = !db.stopping || db.writer_stalled;
            if wanted && db.l0.len() >= self.trigger {
                let inputs = db.l0.len();
                if db.l0.iter().all(|r| !r.random) {
                    db.l0.clear();
                    db.trivial_moves += 1;
                    if db.writer_stalled {
                        self.wakes.extend(db.writer);
                    }
                    continue;
                }
                let entries: u64 = db.l0.iter().map(|r| r.entries).sum();
                let bytes: u64 = db.l0.iter().map(|r| self.layout.sst_bytes(r.entries)).sum();
                drop(db);
                self.job = Some(Job {
                    steps: self.steps(bytes),
                    start: now,
                    entries,
                    inputs,
                    ..Job::default()
                });
            } else if db.writer_done && db.flush_done {
                self.done = true;
            } else {
                return Action::Park;
            }
        }
    }

    fn completed(&mut self, tags: &[u64], _now: Nanos) {
        match self.job.as_mut() {
            Some(job) => job.completed(tags, "compaction"),
            None => panic!("compaction: completion {tags:?} with no job"),
        }
    }

    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.ops);
    }

    fn stop(&mut self) {
        self.shared.lock().stopping = true;
    }

    fn max_in_flight(&self) -> u32 {
        1
    }

    fn drain_wakes(&mut self, out: &mut Vec<usize>) {
        out.append(&mut self.wakes);
    }
}

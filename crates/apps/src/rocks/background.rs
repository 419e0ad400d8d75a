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
pub(crate) struct Job {
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

/// What a background thread holds whatever its role: the job it runs, its
/// tags, the operations and wakes not yet drained.
#[derive(Debug)]
pub(crate) struct Base {
    shared: Shared,
    layout: Layout,
    max_buffer: u64,
    marks: policy::Marks,
    job: Option<Job>,
    next_tag: u64,
    ops: Vec<OpDone>,
    wakes: Vec<usize>,
    done: bool,
}

impl Base {
    fn new(cfg: &Config, layout: Layout, shared: Shared) -> Base {
        Base {
            shared,
            layout,
            max_buffer: cfg.writable_file_max_buffer_size,
            marks: io_marks(cfg.app_cint),
            job: None,
            next_tag: 0,
            ops: Vec::new(),
            wakes: Vec::new(),
            done: false,
        }
    }

    /// A finished job's operation.
    fn finished(&mut self, job: &Job, now: Nanos) {
        self.ops.push(OpDone {
            kind: OpKind::Background,
            start: job.start,
            end: now,
            items: job.entries as u32,
        });
    }
}

/// What a job that ended leaves for the thread: another job, nothing to do
/// yet (park until woken), or nothing more (done).
pub(crate) enum Next {
    Start(Job),
    Again,
    Park,
    Done,
}

/// One background role: which job comes next, and what a finished job
/// changes in the instance's state.
pub(crate) trait Role: std::fmt::Debug {
    /// Its name in panics (`flush`, `compaction`).
    const NAME: &'static str;
    /// With no job running, at `now`: the next job, if any.
    fn next_job(&mut self, base: &mut Base, now: Nanos) -> Next;
    /// `job` ended at `now`.
    fn finish_job(&mut self, base: &mut Base, job: Job, now: Nanos);
}

/// A background thread in its role: one job at a time, each a sequence of
/// CPU and blocking I/O steps ([`Job`]).
#[derive(Debug)]
pub struct Background<R: Role> {
    base: Base,
    role: R,
}

impl<R: Role> AppThread for Background<R> {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        let b = &mut self.base;
        loop {
            if b.done {
                return Action::Done;
            }
            if let Some(job) = b.job.as_mut() {
                match job.advance(b.marks, &mut b.next_tag) {
                    Progress::Act(a) => return a,
                    Progress::Finished => {
                        let job = b.job.take().expect("a job");
                        self.role.finish_job(b, job, now);
                        continue;
                    }
                }
            }
            match self.role.next_job(b, now) {
                Next::Start(job) => b.job = Some(job),
                Next::Again => {}
                Next::Park => return Action::Park,
                Next::Done => b.done = true,
            }
        }
    }

    fn completed(&mut self, tags: &[u64], _now: Nanos) {
        match self.base.job.as_mut() {
            Some(job) => job.completed(tags, R::NAME),
            None => panic!("{}: completion {tags:?} with no job", R::NAME),
        }
    }

    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.base.ops);
    }

    fn stop(&mut self) {
        self.base.shared.lock().stopping = true;
    }

    fn max_in_flight(&self) -> u32 {
        1
    }

    fn drain_wakes(&mut self, out: &mut Vec<usize>) {
        out.append(&mut self.base.wakes);
    }
}

/// RocksDB's flush thread: parked until the writer fills a memtable, then
/// writes it to a new L0 SST.
pub type Flusher = Background<Flush>;

/// The flush role: `trigger` is the L0 file count that wakes the
/// compaction (none with auto compactions off).
#[derive(Debug)]
pub struct Flush {
    trigger: Option<usize>,
}

impl Flusher {
    pub fn new(cfg: &Config, layout: Layout, shared: Shared) -> Flusher {
        Background {
            base: Base::new(cfg, layout, shared),
            role: Flush {
                trigger: (!cfg.disable_auto_compactions)
                    .then_some(cfg.level0_file_num_compaction_trigger as usize),
            },
        }
    }
}

impl Role for Flush {
    const NAME: &'static str = "flush";

    fn next_job(&mut self, b: &mut Base, now: Nanos) -> Next {
        let mut db = b.shared.lock();
        let wanted = !db.stopping || db.writer_stalled;
        match db.immutable.front() {
            Some(run) if wanted => {
                let bytes = b.layout.sst_bytes(run.entries);
                Next::Start(Job {
                    steps: write_steps(bytes, b.max_buffer, &b.layout).into(),
                    start: now,
                    entries: run.entries,
                    ..Job::default()
                })
            }
            _ if db.writer_done => {
                db.flush_done = true;
                b.wakes.extend(db.compactor);
                Next::Done
            }
            _ => Next::Park,
        }
    }

    fn finish_job(&mut self, b: &mut Base, job: Job, now: Nanos) {
        {
            let mut db = b.shared.lock();
            let run = db.immutable.pop_front().unwrap_or(Run {
                entries: job.entries,
                random: false,
            });
            db.l0.push(run);
            db.flushes += 1;
            if db.writer_stalled {
                b.wakes.extend(db.writer);
            }
            if self.trigger.is_some_and(|t| db.l0.len() >= t) {
                b.wakes.extend(db.compactor);
            }
        }
        b.finished(&job, now);
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
pub type Compactor = Background<Compact>;

/// The compaction role: `trigger` L0 files start one.
#[derive(Debug)]
pub struct Compact {
    trigger: usize,
}

impl Compactor {
    pub fn new(cfg: &Config, layout: Layout, shared: Shared) -> Compactor {
        Background {
            base: Base::new(cfg, layout, shared),
            role: Compact {
                trigger: cfg.level0_file_num_compaction_trigger as usize,
            },
        }
    }
}

/// Reads and writes interleaved: each 2 MiB read, then the output it
/// yields.
fn compaction_steps(b: &Base, bytes: u64) -> VecDeque<Step> {
    let mut out = VecDeque::new();
    for read in chunks(bytes, COMPACTION_READAHEAD, &b.layout) {
        out.push_back(Step::Io {
            write: false,
            bytes: read,
        });
        out.extend(write_steps(read, b.max_buffer, &b.layout));
    }
    out
}

impl Role for Compact {
    const NAME: &'static str = "compaction";

    fn next_job(&mut self, b: &mut Base, now: Nanos) -> Next {
        let mut db = b.shared.lock();
        let wanted = !db.stopping || db.writer_stalled;
        if wanted && db.l0.len() >= self.trigger {
            let inputs = db.l0.len();
            if db.l0.iter().all(|r| !r.random) {
                db.l0.clear();
                db.trivial_moves += 1;
                if db.writer_stalled {
                    b.wakes.extend(db.writer);
                }
                return Next::Again;
            }
            let entries: u64 = db.l0.iter().map(|r| r.entries).sum();
            let bytes: u64 = db.l0.iter().map(|r| b.layout.sst_bytes(r.entries)).sum();
            drop(db);
            Next::Start(Job {
                steps: compaction_steps(b, bytes),
                start: now,
                entries,
                inputs,
                ..Job::default()
            })
        } else if db.writer_done && db.flush_done {
            Next::Done
        } else {
            Next::Park
        }
    }

    fn finish_job(&mut self, b: &mut Base, job: Job, now: Nanos) {
        {
            let mut db = b.shared.lock();
            let n = job.inputs.min(db.l0.len());
            db.l0.drain(..n);
            db.compactions += 1;
            if db.writer_stalled {
                b.wakes.extend(db.writer);
            }
        }
        b.finished(&job, now);
    }
}

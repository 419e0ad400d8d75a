//! Application models at the level of their operations (issue 16; TOS
//! 5.4-5.5): one YCSB `read` or one RocksDB `get` issues several dependent
//! or batched I/Os and has a latency of its own.
//!
//! Every application thread is an [`AppThread`]: a pure state machine, as
//! the policy crate's strategies are, that says what the thread does next
//! ([`Action`]: user CPU, a submitting call, a waiting call, a sleep) and is
//! told which of its I/Os the waiting call returned. A front end (the
//! simulator) charges the actions on its cores, device and interrupt policy;
//! the model never sees time it is not given.
//!
//! - [`closed`]: a tiny generic closed-loop engine (user CPU, then dependent
//!   blocking reads or one aio batch per operation), for the simulator's
//!   scale benchmark and front-end tests.
//! - [`mod@file`]: the application file a user writes (TOML): the engine, its
//!   threads and their cores, the workload.
//! - [`kvell`]: a KVell-like engine (Lepers et al., SOSP'19, as TOS 3.4 and
//!   5.4.2 describe it), driven by YCSB ([`jobs::ycsb`]).
//! - [`rocks`]: a RocksDB-like engine (`db_bench` readrandom,
//!   readwhilewriting, fillbatch) and its dump tool (TOS 4.1.2, 5.4.1, 5.5.1).

pub mod closed;
pub mod file;
pub mod kvell;
pub mod rocks;

use std::fmt;

pub use jobs::Waiter;
use policy::{Marks, Nanos};
use rand::RngCore;

/// The most threads one key may ask for (a rocksdb instance's `threads`,
/// a kvell instance's `worker_cores` and `client_cores`) and the most
/// `[[instance]]`s a file holds (each runs at least one thread). Our bound:
/// the simulator runs at most 256 threads in all (`sim`'s
/// `limits::MAX_THREADS`, each thread holding 0.5 MB of latency histograms;
/// a compile-time check there keeps the two equal), so a larger count could never run,
/// and the paper's runs use at most 8 readers and 6 KVell threads. Checked
/// when the file is read, before any thread's state is allocated.
pub const MAX_THREADS: usize = 256;

/// One I/O of an application thread. `tag` is the thread's own name for it,
/// handed back by [`AppThread::completed`]; the front end never reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppIo {
    pub tag: u64,
    pub write: bool,
    pub bytes: u64,
    /// The marks the device sees: the kernel's defaults for the call that
    /// submits it (TOS Table 1, [`jobs::default_marks_of`]) or the
    /// application's own (`preadv2` flags, app-cint).
    pub marks: Marks,
}

/// What an application thread does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// User-space CPU work of this many ns (an index lookup, a memtable
    /// insert, a completion callback), then ask again.
    Compute(Nanos),
    /// One submitting system call carrying these I/Os (`pread`: one;
    /// `io_submit`: a batch). For a [`Waiter::Blocking`] thread the call
    /// then waits for its I/O, as if `Wait { min: 1, max: 1 }` followed.
    Submit(Vec<AppIo>),
    /// The waiting call (`io_getevents(min, max)`): returns once at least
    /// `min` of the thread's I/Os have completed, taking at most `max`.
    Wait { min: u32, max: u32 },
    /// Sleep on a timer until then (a background thread's period, a
    /// client's pacing), then ask again.
    SleepUntil(Nanos),
    /// Sleep until another thread of the same instance wakes it (a futex or
    /// condition variable: a worker with an empty queue, a flush thread
    /// with no full memtable), then ask again. Its wakers name it through
    /// [`AppThread::drain_wakes`].
    Park,
    /// Nothing in flight and nothing more to do.
    Done,
}

/// The kinds of operation the models finish, each with its own latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    /// YCSB `read`; RocksDB `get`.
    Read,
    /// YCSB `update`.
    Update,
    /// YCSB `insert`; RocksDB `put` (one key, readwhilewriting's writer).
    Insert,
    /// YCSB `scan`.
    Scan,
    /// YCSB read-modify-write (workload F).
    ReadModifyWrite,
    /// RocksDB `fillbatch`'s write of one batch.
    WriteBatch,
    /// A background job's unit of work: a memtable flush, a compaction, a
    /// dump tool's step.
    Background,
}

impl OpKind {
    pub const ALL: [OpKind; 7] = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
        OpKind::WriteBatch,
        OpKind::Background,
    ];

    /// The name reports use (YCSB's and db_bench's own words).
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Update => "update",
            OpKind::Insert => "insert",
            OpKind::Scan => "scan",
            OpKind::ReadModifyWrite => "read-modify-write",
            OpKind::WriteBatch => "write-batch",
            OpKind::Background => "background",
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One finished operation: its kind and when it started and ended (the
/// front end counts it if its end is in the measured window).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpDone {
    pub kind: OpKind,
    pub start: Nanos,
    pub end: Nanos,
    /// Items it covered (a scan's length, a batch's keys; 1 otherwise):
    /// db_bench counts fillbatch's throughput in keys.
    pub items: u32,
}

/// One application thread as a state machine. The front end calls
/// [`AppThread::next`] whenever the thread is on a CPU with nothing left of
/// its last action, and [`AppThread::completed`] when a waiting call returns.
pub trait AppThread: fmt::Debug {
    /// How its waiting calls wait (a blocking `pread`, `io_getevents`).
    fn waiter(&self) -> Waiter;
    /// The next action at `now`.
    fn next(&mut self, now: Nanos, rng: &mut dyn RngCore) -> Action;
    /// Its waiting call returned these I/Os (by tag) at `now`.
    fn completed(&mut self, tags: &[u64], now: Nanos);
    /// Operations finished since the last call, oldest first, moved into
    /// `out` (bounded: the front end drains it after every action).
    fn drain_ops(&mut self, out: &mut Vec<OpDone>);
    /// The run's end: start no new operation, finish those in flight, then
    /// [`Action::Done`].
    fn stop(&mut self);
    /// At most this many of its I/Os are ever in flight at once (the
    /// front end sizes its queues and refuses what passes its bounds).
    fn max_in_flight(&self) -> u32;
    /// The threads of its own instance it has woken since the last call
    /// (by their index among the instance's threads, in the order
    /// [`mod@file`] places them), moved into `out`. The front end wakes each
    /// one that is parked ([`Action::Park`]) through its scheduler, as a
    /// futex wake does; a wake for a thread that is not parked is lost
    /// unless the model re-checks its own state before parking (which
    /// every model here does, as real code re-checks under its lock).
    fn drain_wakes(&mut self, _out: &mut Vec<usize>) {}
}

/// One thread of an application, placed: what the front end runs.
#[derive(Debug)]
pub struct PlacedThread {
    /// Its name in reports: the instance's name, its role and index
    /// (`kvell/worker0`, `rocks/reader3`, `rocks/flush`).
    pub name: String,
    /// The instance it belongs to (its index in the file): threads of one
    /// instance share its address space (switching between them is a
    /// thread switch; between instances, a process switch).
    pub instance: usize,
    /// The core it is pinned to (TOS 5.4: "each application on two cores",
    /// `numactl -C`, KVell's `main 0 2 4`).
    pub core: usize,
    /// A kernel-less background thread of the application whose operations
    /// are not the ones the experiment measures (RocksDB's flush): reported
    /// apart.
    pub background: bool,
    /// Its index among its instance's threads ([`AppThread::drain_wakes`]).
    pub index: usize,
    pub thread: Box<dyn AppThread>,
}

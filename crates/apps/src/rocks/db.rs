//! What the threads of one RocksDB instance share: its memtables, its L0
//! files and who is waiting for whom (RocksDB's `DBImpl` state under its
//! mutex, `bg_cv_`). The front end runs one thread at a time, so a mutex
//! that is never contended stands in for RocksDB's.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// One full memtable or one L0 file: how many entries, and whether its keys
/// are random over the key range (a readwhilewriting put) or one sequential
/// run (fillbatch: files that never overlap).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub entries: u64,
    pub random: bool,
}

#[derive(Debug, Default)]
pub struct Db {
    /// Entries in the active memtable.
    pub active: u64,
    /// Full memtables, oldest first; the flush thread flushes the front.
    pub immutable: VecDeque<Run>,
    /// L0 files written since the run began, oldest first (the load's
    /// files are all in L1 and below, or in one L0 run of sequential keys:
    /// either way one block read per get).
    pub l0: Vec<Run>,
    /// The writer is parked in a write stall (too many memtables, or
    /// `level0_stop_writes_trigger` L0 files).
    pub writer_stalled: bool,
    /// The run is ending (any thread's `stop`).
    pub stopping: bool,
    pub writer_done: bool,
    /// Readers still running: readwhilewriting's writer stops once none
    /// is (db_bench `BGWriter`: `num_done + 1 >= num_initialized`).
    pub readers: u32,
    pub flush_done: bool,
    /// Bytes of data blocks in the block cache (at most `cache_size`): it
    /// fills with each block a get reads (an LRU over uniform keys keeps
    /// what it has, so the hit probability is this over the data bytes).
    pub cached_bytes: u64,
    /// Counters for tests and reports.
    pub flushes: u64,
    pub compactions: u64,
    pub trivial_moves: u64,
    /// Thread indices (`PlacedThread::index`) to wake.
    pub writer: Option<usize>,
    pub flusher: Option<usize>,
    pub compactor: Option<usize>,
}

/// A handle on an instance's shared state.
#[derive(Clone, Debug, Default)]
pub struct Shared(Arc<Mutex<Db>>);

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, Db> {
        // A thread that panicked holding the lock has already failed the
        // run; its state is still the last consistent one.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

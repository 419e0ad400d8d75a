//! A RocksDB-like engine (RocksDB 6.4.6's `db_bench`: readrandom,
//! readwhilewriting, fillbatch; TOS 5.4.1, 5.5) and its dump tool (TOS
//! 4.1.2 "RocksDB Dump", 5.5.1), as [`AppThread`]s.
//!
//! - [`config`]: db_bench's flags and their defaults, cited.
//! - [`layout`]: data blocks, SSTs and memtables in bytes.
//! - [`costs`]: user CPU per get, put, batch, flushed and dumped byte,
//!   measured with db_bench on this machine.
//! - [`db`]: the state an instance's threads share (memtables, L0).
//! - [`reader`]: a get loop (db_bench `ReadRandom`).
//! - [`writer`]: readwhilewriting's `BGWriter` and fillbatch's `DoWrite`.
//! - `background`: the flush and compaction threads.
//! - [`dump`]: `rocksdb_dump` (tools/dump/db_dump_tool.cc).
//!
//! Every I/O is a blocking `pread`/`pwrite` on O_DIRECT (the artifact's
//! `--use_direct_reads=true --use_direct_io_for_flush_and_compaction=true`):
//! Urgent by the kernel's default (TOS Table 1, a blocking call), and
//! explicitly unmarked (`RWF_URGENT | RWF_BARRIER`, TOS 4.1.1) where the
//! authors' patch says non-Urgent under `app_cint`: flush, compaction and
//! the dump tool; gets stay Urgent either way.

pub(crate) mod background;
pub mod config;
pub mod costs;
pub mod db;
pub mod dump;
pub mod layout;
pub mod reader;
pub mod writer;

pub use config::{Benchmark, Config, ConfigError, DumpConfig};
pub use layout::Layout;

use jobs::{Call, DefaultMarks, RwfFlags};
use policy::Marks;

use crate::{AppThread, PlacedThread};
use background::{Compactor, Flusher};
use db::Shared;
use dump::Dumper;
use reader::Reader;
use writer::Writer;

/// The marks of a blocking `pread`/`pwrite` RocksDB issues: the kernel's
/// default (TOS Table 1: a blocking call is Urgent) unless the patched
/// RocksDB passes both RWF flags (explicitly unmarked, TOS 4.1.1).
pub fn io_marks(non_urgent: bool) -> Marks {
    if non_urgent {
        RwfFlags::UNMARKED.to_marks().unwrap_or(Marks::NONE)
    } else {
        DefaultMarks::Table1.of(Call::Blocking { nowait: false })
    }
}

impl Config {
    /// The instance's threads in db_bench's order: readwhilewriting's and
    /// fillbatch's writer first (db_bench thread 0), then the readers, then
    /// RocksDB's flush thread and (auto compactions on) its compaction
    /// thread; placed round-robin over `cores`. Randomness comes from the
    /// front end's generator at each `next`, so `_seed` is unused.
    pub fn threads(
        &self,
        instance: usize,
        name: &str,
        _seed: u64,
    ) -> Result<Vec<PlacedThread>, String> {
        self.validate().map_err(|e| e.to_string())?;
        let layout = Layout::new(
            self.key_size,
            self.value_size,
            self.block_size,
            self.write_buffer_size,
            self.logical_block_size,
        );
        let shared = Shared::default();
        let mut out: Vec<(String, bool, Box<dyn AppThread>)> = Vec::new();
        let writes = self.benchmark.writes();
        if writes {
            shared.lock().writer = Some(0);
            let w = Writer::new(self, layout, shared.clone());
            out.push(("writer".into(), false, Box::new(w)));
        }
        if self.benchmark != Benchmark::Fillbatch {
            shared.lock().readers = self.threads;
            for r in 0..self.threads {
                let reader = Reader::new(self, layout, shared.clone());
                out.push((format!("reader{r}"), false, Box::new(reader)));
            }
        }
        if writes {
            shared.lock().flusher = Some(out.len());
            let f = Flusher::new(self, layout, shared.clone());
            out.push(("flush".into(), true, Box::new(f)));
            if !self.disable_auto_compactions {
                shared.lock().compactor = Some(out.len());
                let c = Compactor::new(self, layout, shared.clone());
                out.push(("compaction".into(), true, Box::new(c)));
            }
        }
        Ok(place(out, &self.cores, instance, name))
    }
}

impl DumpConfig {
    /// The dump tool's one thread.
    pub fn threads(
        &self,
        instance: usize,
        name: &str,
        _seed: u64,
    ) -> Result<Vec<PlacedThread>, String> {
        self.validate().map_err(|e| e.to_string())?;
        let d = Dumper::new(self);
        Ok(place(
            vec![("dump".into(), false, Box::new(d))],
            &self.cores,
            instance,
            name,
        ))
    }
}

fn place(
    threads: Vec<(String, bool, Box<dyn AppThread>)>,
    cores: &[usize],
    instance: usize,
    name: &str,
) -> Vec<PlacedThread> {
    threads
        .into_iter()
        .enumerate()
        .map(|(index, (role, background, thread))| PlacedThread {
            name: format!("{name}/{role}"),
            instance,
            core: cores[index % cores.len()],
            background,
            index,
            thread,
        })
        .collect()
}

//! What a RocksDB instance runs: db_bench's flags (RocksDB 6.4.6,
//! `tools/db_bench_tool.cc`) and the dump tool's (`tools/dump/`).
//!
//! Every default is db_bench 6.4.6's unless a comment names it the
//! artifact's (`amytai/cinterrupts-osdi`, `fig15/run-4.sh`,
//! `tab3/fillbatch.sh`) or our choice.

use serde::Deserialize;

/// db_bench's `--benchmarks=` the paper runs (TOS 5.4.1, 5.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Benchmark {
    /// `threads` readers doing `reads` gets each over `key_range` keys
    /// (db_bench `ReadRandom`).
    #[default]
    Readrandom,
    /// One writer (db_bench adds it: `num_threads++`, thread 0 runs
    /// `BGWriter`) putting random keys while `threads` readers run for
    /// `duration` (db_bench `ReadWhileWriting`).
    Readwhilewriting,
    /// One writer filling `num` sequential keys in batches of 1000
    /// (db_bench `fillbatch`: `entries_per_batch_ = 1000; WriteSeq`, which
    /// overrides `--batch_size`).
    Fillbatch,
}

impl Benchmark {
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Readrandom => "readrandom",
            Benchmark::Readwhilewriting => "readwhilewriting",
            Benchmark::Fillbatch => "fillbatch",
        }
    }

    /// Whether the benchmark has a writer (and so a memtable to flush).
    pub fn writes(self) -> bool {
        !matches!(self, Benchmark::Readrandom)
    }
}

/// One db_bench run on a RocksDB-like engine.
///
/// Every key has a default (`#[serde(default)]`), so the application file
/// can check one key alone; `benchmark` must still be given
/// ([`Config::REQUIRED`]).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub benchmark: Benchmark,
    /// db_bench `--threads` (default 1): readers; readwhilewriting adds its
    /// writer, fillbatch runs one writer whatever this says (the artifact
    /// runs it with `--threads=1`).
    pub threads: u32,
    /// The cores the process may run on (`numactl -C 1,5`: the artifact's
    /// two cores); threads are placed round-robin over them in thread order
    /// (our choice: Linux would migrate them within the set).
    pub cores: Vec<usize>,
    /// Keys in the database (the fillbatch load's `--num`). Default 20 M:
    /// the artifact's load for Fig 22 (`fig15/run-4.sh`: `--num=20000000`),
    /// which TOS 5.4.1's "after loading the database to 20 GB" matches; TOS
    /// says 10 M for the load of Table 3 (`tab3/fillbatch.sh`:
    /// `--num=10000000`) and for Table 6's databases (5.5.1).
    pub num: u64,
    /// The keys this run's reads and writes draw from, uniformly (db_bench
    /// `GetRandomKey`/`BGWriter`: `% FLAGS_num`): the run's own `--num`,
    /// `num` when absent. The artifact's readwhilewriting runs pass no
    /// `--num`, so db_bench's default 1,000,000 applies (`DEFINE_int64(num,
    /// 1000000`), as in its `default` readrandom runs.
    pub key_range: Option<u64>,
    /// `--key_size` (db_bench default 16; artifact 16).
    pub key_size: u32,
    /// `--value_size` (db_bench default 100; artifact 1024).
    pub value_size: u32,
    /// `--reads` per reader thread (db_bench: -1 means `num`; artifact
    /// readrandom 100000). Ignored when `duration` is set.
    pub reads: Option<u64>,
    /// `--duration` in seconds (0: `reads` decide; artifact readwhilewriting
    /// 30). The model keeps no clock: the front end stops the run after
    /// [`Config::duration_ns`].
    pub duration: u64,
    /// `--cache_size` bytes of block cache (db_bench `DEFINE_int64(cache_size,
    /// 8 << 20`; the artifact passes none).
    pub cache_size: u64,
    /// Whether the block cache starts full (`true`) or, as db_bench opens
    /// it, empty (`false`, default: `NewLRUCache(FLAGS_cache_size)` at
    /// open, tools/db_bench_tool.cc), filling with each block a get reads.
    /// The exec cross-validation's short runs see the difference (a 2,000-get
    /// run on a 21 MB database read the device for 0.72-0.84 of its gets,
    /// where a full 8 MiB cache would give 0.60, examples/apps/xval).
    pub cache_warm: bool,
    /// `--write_buffer_size` (`Options().write_buffer_size = 64 << 20`,
    /// include/rocksdb/options.h).
    pub write_buffer_size: u64,
    /// `--max_write_buffer_number` (2, include/rocksdb/advanced_options.h):
    /// writes stop while this many full memtables wait for their flush
    /// (db/column_family.cc `GetWriteStallConditionAndCause`:
    /// `num_unflushed_memtables >= max_write_buffer_number`).
    pub max_write_buffer_number: u32,
    /// `--block_size` (`BlockBasedTableOptions::block_size = 4 * 1024`,
    /// include/rocksdb/table.h): uncompressed bytes per data block.
    pub block_size: u32,
    /// `--writable_file_max_buffer_size` (db_bench `1024 * 1024`): the
    /// largest write a flush or compaction issues with direct I/O.
    pub writable_file_max_buffer_size: u64,
    /// `--disable_auto_compactions` (db_bench default false: the load
    /// compacts; the artifact's readrandom and readwhilewriting pass true).
    pub disable_auto_compactions: bool,
    /// `--level0_file_num_compaction_trigger` (4, include/rocksdb/options.h).
    pub level0_file_num_compaction_trigger: u32,
    /// `--level0_stop_writes_trigger` (36, advanced_options.h): writes stop
    /// at this many L0 files while auto compactions are on.
    pub level0_stop_writes_trigger: u32,
    /// The authors' patched RocksDB (TOS 4.1.2): flush and compaction I/O
    /// explicitly non-Urgent (`preadv2`/`pwritev2` with RWF_URGENT |
    /// RWF_BARRIER); gets stay Urgent.
    pub app_cint: bool,
    /// The device's logical block size, the alignment of direct I/O
    /// (`GetRequiredBufferAlignment` = `logical_sector_size_`,
    /// env/io_posix.cc). Our choice 512: NVMe drives, the P4800X among them,
    /// ship formatted with 512-byte LBAs.
    pub logical_block_size: u64,
}

/// The dump tool on its own database (TOS 4.1.2 "RocksDB Dump", 5.5.1):
/// `rocksdb_dump` (`tools/dump/db_dump_tool.cc`, the tool the authors'
/// `rocksdb/cint.patch` changes) iterating the whole database and appending
/// every key and value to a dump file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DumpConfig {
    /// Its cores (one thread: the tool iterates in its main thread).
    pub cores: Vec<usize>,
    /// Keys in the database it dumps (TOS 5.5.1: "two databases with 10 M
    /// key-value pairs"; our default follows the text, the artifact having
    /// no Table 6 script).
    pub num: u64,
    pub key_size: u32,
    pub value_size: u32,
    pub block_size: u32,
    /// Bytes per SST file (`target_file_size_base = 64 * 1048576`,
    /// advanced_options.h): the iterator's readahead starts over in each.
    pub target_file_size_base: u64,
    /// Bytes of dump output per write. Our choice 1 MiB, as a
    /// WritableFileWriter would buffer (`writable_file_max_buffer_size`):
    /// the real tool appends each key and value with a plain `write()`
    /// into the page cache, which the kernel writes back later; TOS 4.1.2
    /// and 5.5.1 count the dump's writes as its own Urgent I/O, and this
    /// is how we give them to the device.
    pub write_size: u64,
    /// The authors' patched dump tool (`cint.patch`: `disable_urgent =
    /// true` for the database and the dump file): reads and writes
    /// non-Urgent.
    pub app_cint: bool,
    pub logical_block_size: u64,
}

fn default_cores() -> Vec<usize> {
    vec![0]
}
fn default_num() -> u64 {
    20_000_000
}
fn default_dump_num() -> u64 {
    10_000_000
}
fn default_key_size() -> u32 {
    16
}
/// The artifact's 1 KiB values (db_bench's own default is 100): every
/// paper run passes `--value_size=1024`.
fn default_value_size() -> u32 {
    1024
}
fn default_cache_size() -> u64 {
    8 << 20
}
fn default_write_buffer_size() -> u64 {
    64 << 20
}
fn default_max_write_buffer_number() -> u32 {
    2
}
fn default_block_size() -> u32 {
    4 * 1024
}
fn default_writable_file_max_buffer_size() -> u64 {
    1024 * 1024
}
fn default_l0_trigger() -> u32 {
    4
}
fn default_l0_stop() -> u32 {
    36
}
fn default_logical_block_size() -> u64 {
    512
}
fn default_target_file_size_base() -> u64 {
    64 * 1048576
}

/// Our bound on `block_size` (a data block's bytes): the layout counts a
/// block's entries one by one (at least 11 bytes each, so at most 6.1 M
/// steps here) and every block is one read. 64 MiB is 16384 times
/// RocksDB's default 4 KiB; its largest documented blocks are a few MB.
pub const MAX_BLOCK_SIZE: u32 = 64 << 20;

/// Our bound on the writes of one flush: a flush or compaction builds its
/// steps (a CPU step and a write per piece of at most
/// `writable_file_max_buffer_size` bytes, 16 bytes each) before it starts,
/// so one memtable's flush is at most 4096 pieces (128 KiB of steps), and a
/// compaction of `level0_file_num_compaction_trigger` files that many times
/// it. db_bench's defaults flush 64 MiB in 1 MiB writes: 65 pieces; 4096
/// allows a 4 GiB memtable in 1 MiB writes or the default one in 16 KiB
/// writes.
pub const MAX_FLUSH_WRITES: u64 = 4096;

/// Our bounds on `key_size` and `value_size`: RocksDB's own
/// recommended maxima (its wiki's FAQ: "The maximum recommended sizes for
/// key and value are 8MB and 3GB respectively"). db_bench's defaults are
/// 16 and 100 bytes; the paper's values are 1024.
pub const MAX_KEY_SIZE: u32 = 8 << 20;
pub const MAX_VALUE_SIZE: u32 = 3 << 30;

/// Our bound on a database's data bytes (`num` keys laid out in blocks):
/// 1 PiB, over a thousand times the paper's 750 GB device, keeps every
/// offset the model computes far from 64-bit overflow.
pub const MAX_DATABASE_BYTES: u64 = 1 << 50;

/// Our bound on `write_buffer_size`: a memtable of 1 TiB, 16384 times
/// db_bench's 64 MiB, keeps the model's byte counts of a flush far from
/// 64-bit overflow (and [`MAX_FLUSH_WRITES`] bounds its writes).
pub const MAX_WRITE_BUFFER_SIZE: u64 = 1 << 40;

/// Our bound on the dump's `target_file_size_base`: the dump plans each
/// table's reads before reading it (16 bytes per read, one per 256 KiB of
/// readahead once it has grown), so a 64 GiB table plans 2^18 reads, 4 MiB.
/// RocksDB's default is 64 MiB.
pub const MAX_TARGET_FILE_SIZE_BASE: u64 = 64 << 30;

/// A configuration error: the option and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub option: &'static str,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "option '{}': {}", self.option, self.message)
    }
}

fn err(option: &'static str, message: impl Into<String>) -> Result<(), ConfigError> {
    Err(ConfigError {
        option,
        message: message.into(),
    })
}

impl Default for Config {
    fn default() -> Config {
        Config::new(Benchmark::default())
    }
}

impl Default for DumpConfig {
    fn default() -> DumpConfig {
        DumpConfig::new(default_dump_num())
    }
}

impl Config {
    /// Keys the application file must give.
    pub const REQUIRED: &'static [&'static str] = &["benchmark"];

    /// A config with every default for `benchmark`.
    pub fn new(benchmark: Benchmark) -> Config {
        Config {
            benchmark,
            threads: 1,
            cores: default_cores(),
            num: default_num(),
            key_range: None,
            key_size: default_key_size(),
            value_size: default_value_size(),
            reads: None,
            duration: 0,
            cache_size: default_cache_size(),
            cache_warm: false,
            write_buffer_size: default_write_buffer_size(),
            max_write_buffer_number: default_max_write_buffer_number(),
            block_size: default_block_size(),
            writable_file_max_buffer_size: default_writable_file_max_buffer_size(),
            disable_auto_compactions: false,
            level0_file_num_compaction_trigger: default_l0_trigger(),
            level0_stop_writes_trigger: default_l0_stop(),
            app_cint: false,
            logical_block_size: default_logical_block_size(),
        }
    }

    /// The keys reads and writes draw from.
    pub fn key_range(&self) -> u64 {
        self.key_range.unwrap_or(self.num)
    }

    /// How long the front end runs it before stopping it (`--duration`),
    /// if the benchmark is timed.
    pub fn duration_ns(&self) -> Option<policy::Nanos> {
        (self.duration > 0).then(|| self.duration.saturating_mul(1_000_000_000))
    }

    /// Gets per reader: `reads`, or `key_range` (db_bench: `reads_ =
    /// FLAGS_reads < 0 ? FLAGS_num`); unbounded when `duration` is set.
    pub fn reads_per_thread(&self) -> Option<u64> {
        if self.duration > 0 {
            None
        } else {
            Some(self.reads.unwrap_or(self.key_range()))
        }
    }

    /// Every check, naming the option at fault.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.cores.is_empty() {
            return err("cores", "at least one core");
        }
        if self.num == 0 {
            return err("num", "at least 1 key");
        }
        if self.key_range() == 0 || self.key_range() > self.num {
            return err(
                "key_range",
                format!("from 1 to the database's num ({})", self.num),
            );
        }
        if self.threads == 0 && self.benchmark != Benchmark::Fillbatch {
            return err("threads", "at least 1 reader");
        }
        if self.threads as usize > crate::MAX_THREADS {
            return err(
                "threads",
                format!(
                    "{} is more than {} (the most threads the simulator runs)",
                    self.threads,
                    crate::MAX_THREADS
                ),
            );
        }
        check_block_size(self.block_size)?;
        check_entry(self.key_size, self.value_size)?;
        if self.write_buffer_size == 0 {
            return err("write_buffer_size", "positive");
        }
        if self.write_buffer_size > MAX_WRITE_BUFFER_SIZE {
            return err(
                "write_buffer_size",
                format!(
                    "{} is more than {MAX_WRITE_BUFFER_SIZE} (1 TiB)",
                    self.write_buffer_size
                ),
            );
        }
        if self.max_write_buffer_number == 0 {
            return err("max_write_buffer_number", "at least 1");
        }
        if self.writable_file_max_buffer_size == 0 {
            return err("writable_file_max_buffer_size", "positive");
        }
        if self.level0_file_num_compaction_trigger == 0 {
            return err("level0_file_num_compaction_trigger", "at least 1");
        }
        if !self.logical_block_size.is_power_of_two() {
            return err("logical_block_size", "a power of two");
        }
        let layout = super::Layout::new(
            self.key_size,
            self.value_size,
            self.block_size,
            self.write_buffer_size,
            self.logical_block_size,
        );
        check_database(self.num, &layout)?;
        let flush = layout.sst_bytes(layout.memtable_entries);
        let writes = flush.div_ceil(self.writable_file_max_buffer_size);
        if writes > MAX_FLUSH_WRITES {
            // The key the user moved from db_bench's default.
            let option = if self.write_buffer_size > default_write_buffer_size() {
                "write_buffer_size"
            } else {
                "writable_file_max_buffer_size"
            };
            return err(
                option,
                format!(
                    "a flush of {flush} bytes in writes of at most {} (writable_file_max_buffer_size) is {writes} writes: more than {MAX_FLUSH_WRITES} (write_buffer_size {})",
                    self.writable_file_max_buffer_size, self.write_buffer_size
                ),
            );
        }
        Ok(())
    }
}

/// `key_size` and `value_size` within RocksDB's recommended maxima.
fn check_entry(key_size: u32, value_size: u32) -> Result<(), ConfigError> {
    if key_size > MAX_KEY_SIZE {
        return err(
            "key_size",
            format!(
                "{key_size} is more than {MAX_KEY_SIZE} (8 MiB, RocksDB's recommended maximum)"
            ),
        );
    }
    if value_size > MAX_VALUE_SIZE {
        return err(
            "value_size",
            format!(
                "{value_size} is more than {MAX_VALUE_SIZE} (3 GiB, RocksDB's recommended maximum)"
            ),
        );
    }
    Ok(())
}

/// `num` keys' data blocks within [`MAX_DATABASE_BYTES`].
fn check_database(num: u64, layout: &super::Layout) -> Result<(), ConfigError> {
    let bytes = u128::from(num.div_ceil(layout.entries_per_block)) * u128::from(layout.block_bytes);
    if bytes > u128::from(MAX_DATABASE_BYTES) {
        return err(
            "num",
            format!(
                "{num} keys of {} bytes' blocks are {bytes} bytes: more than {MAX_DATABASE_BYTES} (1 PiB)",
                layout.block_bytes
            ),
        );
    }
    Ok(())
}

fn check_block_size(block_size: u32) -> Result<(), ConfigError> {
    if block_size == 0 {
        return err("block_size", "positive");
    }
    if block_size > MAX_BLOCK_SIZE {
        return err(
            "block_size",
            format!("{block_size} is more than {MAX_BLOCK_SIZE} (64 MiB)"),
        );
    }
    Ok(())
}

impl DumpConfig {
    /// A dump of `num` keys with every other default.
    pub fn new(num: u64) -> DumpConfig {
        DumpConfig {
            cores: default_cores(),
            num,
            key_size: default_key_size(),
            value_size: default_value_size(),
            block_size: default_block_size(),
            target_file_size_base: default_target_file_size_base(),
            write_size: default_writable_file_max_buffer_size(),
            app_cint: false,
            logical_block_size: default_logical_block_size(),
        }
    }

    /// Every check, naming the option at fault.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.cores.is_empty() {
            return err("cores", "at least one core");
        }
        check_block_size(self.block_size)?;
        check_entry(self.key_size, self.value_size)?;
        if self.write_size == 0 {
            return err("write_size", "positive");
        }
        if self.target_file_size_base == 0 {
            return err("target_file_size_base", "positive");
        }
        if !self.logical_block_size.is_power_of_two() {
            return err("logical_block_size", "a power of two");
        }
        let layout = super::Layout::new(
            self.key_size,
            self.value_size,
            self.block_size,
            u64::MAX,
            self.logical_block_size,
        );
        check_database(self.num, &layout)?;
        if self.target_file_size_base > MAX_TARGET_FILE_SIZE_BASE {
            return err(
                "target_file_size_base",
                format!(
                    "{} is more than {MAX_TARGET_FILE_SIZE_BASE} (64 GiB; the dump plans each table's reads at once)",
                    self.target_file_size_base
                ),
            );
        }
        Ok(())
    }
}

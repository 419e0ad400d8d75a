//! The dump tool (TOS 4.1.2 "RocksDB Dump", 5.5.1): `rocksdb_dump`,
//! tools/dump/db_dump_tool.cc `DbDumpTool::Run`, the tool the authors'
//! `rocksdb/cint.patch` changes (`options.disable_urgent = true` on the
//! database it opens and on the dump file's `EnvOptions`).
//!
//! It opens the database read-only, walks it with one iterator
//! (`db->NewIterator(ReadOptions())`, `SeekToFirst`, `Next`) and appends
//! each key and value, each with a 4-byte length, to the dump file.
//!
//! Reads: direct, as the paper's RocksDB instances read
//! (`rocksdb_dump --db_options=use_direct_reads=true`, tools/dump/
//! rocksdb_dump.cc parses that string; the tool's own default is buffered
//! reads, whose device I/O would be the kernel's readahead, not the tool's
//! preads). TOS 5.5.1 counts the dump's reads as its own Urgent `pread`s,
//! and so do we. The iterator reads each SST's data blocks in order. With
//! `ReadOptions::readahead_size == 0` (the default) a table iterator turns
//! on auto readahead after two block reads (`BlockBasedTableIterator::
//! InitDataBlock`, table/block_based/block_based_table_reader.cc:
//! `kMinNumFileReadsToStartAutoReadahead = 2`); under direct reads a
//! `FilePrefetchBuffer` then reads the block plus `readahead_size_` bytes,
//! starting at `kInitAutoReadaheadSize` 8 KiB and doubling per prefetch up to
//! `kMaxAutoReadaheadSize` 256 KiB (`TryReadFromCache`: `Prefetch(offset,
//! n + readahead_size_)`, util/file_reader_writer.cc), reusing what the
//! buffer already holds and reading only the rest. Each table starts over.
//!
//! Writes: see [`DumpConfig::write_size`]: blocking writes of `write_size`
//! bytes of output.
//!
//! Every read and write is Urgent by default (a blocking call, TOS Table 1)
//! and explicitly unmarked under `app_cint`. Its throughput is reported as
//! [`OpKind::Background`] ops, one per data block dumped, `items` = the
//! block's keys.

use policy::{Marks, Nanos};
use rand::RngCore;

use super::config::DumpConfig;
use super::costs;
use super::io_marks;
use super::layout::Layout;
use crate::{Action, AppIo, AppThread, OpDone, OpKind, Waiter};

/// table/block_based/block_based_table_reader.h.
pub const MIN_FILE_READS_TO_START_AUTO_READAHEAD: u64 = 2;
pub const INIT_AUTO_READAHEAD: u64 = 8 * 1024;
pub const MAX_AUTO_READAHEAD: u64 = 256 * 1024;

/// Bytes a dump file holds per entry: two 4-byte lengths, the key, the
/// value (db_dump_tool.cc: `EncodeFixed32` of each size).
pub fn dump_entry_bytes(key_size: u32, value_size: u32) -> u64 {
    8 + key_size as u64 + value_size as u64
}

/// The reads one table iterator issues over `blocks` blocks of `layout`,
/// in order: `(block index, bytes read)` for the blocks that need I/O.
pub fn table_reads(layout: &Layout, blocks: u64) -> Vec<(u64, u64)> {
    let b = layout.block_bytes;
    let a = layout.alignment;
    let mut out = Vec::new();
    let mut buffer_end = 0u64; // aligned end of the prefetch buffer
    let mut prefetching = false;
    let mut readahead = INIT_AUTO_READAHEAD;
    for i in 0..blocks {
        let (off, end) = (i * b, i * b + b);
        if prefetching && end <= buffer_end {
            continue;
        }
        if i < MIN_FILE_READS_TO_START_AUTO_READAHEAD {
            out.push((i, layout.span_bytes(off, b)));
            continue;
        }
        let new_end = (end + readahead).div_ceil(a) * a;
        let start = if prefetching && off <= buffer_end {
            buffer_end
        } else {
            off / a * a
        };
        out.push((i, new_end - start));
        buffer_end = new_end;
        prefetching = true;
        readahead = (readahead * 2).min(MAX_AUTO_READAHEAD);
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Next: the next block (a read if it needs one, else its CPU).
    Block,
    /// The block's read is in flight.
    Reading(u64),
    /// The block is in memory: its keys' CPU next.
    Keys,
    /// Its keys are copied: output writes next, then the op.
    Output,
    /// An output write is in flight.
    Writing(u64),
    Done,
}

#[derive(Debug)]
pub struct Dumper {
    layout: Layout,
    marks: Marks,
    write_size: u64,
    entry_bytes: u64,
    num: u64,
    blocks_per_file: u64,
    total_blocks: u64,
    /// The next block (global index) and the current table's reads.
    block: u64,
    reads: Vec<(u64, u64)>,
    read_at: usize,
    pending_output: u64,
    state: State,
    op_start: Nanos,
    next_tag: u64,
    stopping: bool,
    ops: Vec<OpDone>,
}

impl Dumper {
    pub fn new(cfg: &DumpConfig) -> Dumper {
        let layout = Layout::new(
            cfg.key_size,
            cfg.value_size,
            cfg.block_size,
            u64::MAX,
            cfg.logical_block_size,
        );
        Dumper {
            layout,
            marks: io_marks(cfg.app_cint),
            write_size: cfg.write_size,
            entry_bytes: dump_entry_bytes(cfg.key_size, cfg.value_size),
            num: cfg.num,
            blocks_per_file: (cfg.target_file_size_base / layout.block_bytes).max(1),
            total_blocks: layout.blocks(cfg.num),
            block: 0,
            reads: Vec::new(),
            read_at: 0,
            pending_output: 0,
            state: State::Block,
            op_start: 0,
            next_tag: 0,
            stopping: false,
            ops: Vec::new(),
        }
    }

    /// The layout of the database it dumps.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn keys_in(&self, block: u64) -> u64 {
        let first = block * self.layout.entries_per_block;
        self.layout.entries_per_block.min(self.num - first)
    }

    fn submit(&mut self, write: bool, bytes: u64) -> Action {
        let tag = self.next_tag;
        self.next_tag += 1;
        self.state = if write {
            State::Writing(tag)
        } else {
            State::Reading(tag)
        };
        Action::Submit(vec![AppIo {
            tag,
            write,
            bytes,
            marks: self.marks,
        }])
    }
}

impl AppThread for Dumper {
    fn waiter(&self) -> Waiter {
        Waiter::Blocking
    }

    fn next(&mut self, now: Nanos, _rng: &mut dyn RngCore) -> Action {
        loop {
            match self.state {
                State::Block => {
                    if self.block >= self.total_blocks || self.stopping {
                        if self.pending_output > 0 {
                            // The file's tail, padded (our choice: written
                            // at the end, as a close would).
                            let bytes = self.layout.aligned(self.pending_output);
                            self.pending_output = 0;
                            return self.submit(true, bytes);
                        }
                        self.state = State::Done;
                        continue;
                    }
                    self.op_start = now;
                    let in_file = self.block % self.blocks_per_file;
                    if in_file == 0 {
                        let file_blocks = self.blocks_per_file.min(self.total_blocks - self.block);
                        self.reads = table_reads(&self.layout, file_blocks);
                        self.read_at = 0;
                    }
                    match self.reads.get(self.read_at) {
                        Some(&(i, bytes)) if i == in_file => {
                            self.read_at += 1;
                            return self.submit(false, bytes);
                        }
                        _ => self.state = State::Keys,
                    }
                }
                State::Keys => {
                    let keys = self.keys_in(self.block);
                    self.pending_output += keys * self.entry_bytes;
                    self.state = State::Output;
                    return Action::Compute(keys * costs::DUMP_KEY_NS);
                }
                State::Output => {
                    if self.pending_output >= self.write_size {
                        self.pending_output -= self.write_size;
                        return self.submit(true, self.write_size);
                    }
                    let keys = self.keys_in(self.block);
                    self.ops.push(OpDone {
                        kind: OpKind::Background,
                        start: self.op_start,
                        end: now,
                        items: keys as u32,
                    });
                    self.block += 1;
                    self.state = State::Block;
                }
                State::Reading(_) | State::Writing(_) => {
                    return Action::Wait { min: 1, max: 1 };
                }
                State::Done => return Action::Done,
            }
        }
    }

    fn completed(&mut self, tags: &[u64], _now: Nanos) {
        self.state = match self.state {
            State::Reading(t) if tags == [t] => State::Keys,
            State::Writing(t) if tags == [t] => {
                if self.block >= self.total_blocks || self.stopping {
                    State::Block
                } else {
                    State::Output
                }
            }
            s => panic!("dump: completion {tags:?} in state {s:?}"),
        };
    }

    fn drain_ops(&mut self, out: &mut Vec<OpDone>) {
        out.append(&mut self.ops);
    }

    fn stop(&mut self) {
        self.stopping = true;
    }

    fn max_in_flight(&self) -> u32 {
        1
    }
}

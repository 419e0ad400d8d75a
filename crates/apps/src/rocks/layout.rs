//! Where the bytes are: data blocks, SST files and memtables, as RocksDB
//! 6.4.6 lays them out for db_bench's fixed-size keys and values.
//!
//! Every key and value has the same size, so every data block holds the
//! same number of entries and the layout is arithmetic.
//!
//! Checked against real RocksDB (Debian's 7.8.3, the same block and flush
//! policy as 6.4.6): `db_bench --benchmarks=fillseq --num=100000
//! --key_size=16 --value_size=1024 --compression_type=none` in tmpfs, then
//! `sst_dump --show_properties` on its first SST: `# data blocks: 15571`,
//! `# entries: 62281`, `data block size: 65395065`, file 65706712 bytes:
//! 4.0 entries and 4200 bytes per block and 62 281 entries per 64 MiB
//! memtable, against our 4, 4221 and 62 895 (the test below).

/// The 8-byte sequence number and type RocksDB appends to each user key
/// (the internal key; db/dbformat.h, `PackSequenceAndType`).
pub const INTERNAL_KEY_TAIL: u64 = 8;
/// The block trailer: one compression-type byte and a 4-byte checksum
/// (table/format.h `kBlockTrailerSize = 5`).
pub const BLOCK_TRAILER: u64 = 5;
/// `block_size_deviation` (10, include/rocksdb/table.h): a block closes
/// early once it is 90% full and the next entry would overflow it.
pub const BLOCK_SIZE_DEVIATION: u64 = 10;
/// Bytes per index entry (`index_block_restart_interval = 1`, table.h: every
/// entry a restart): the separator key (internal key, shortened by
/// `FindShortestSeparator`: we keep it whole), a block handle (two varints,
/// at most `kMaxEncodedLength` 20, table/format.h; ~6 for our offsets and
/// sizes) and a 4-byte restart offset. Our estimate, within a few bytes.
pub const INDEX_ENTRY_OVERHEAD: u64 = 6 + 4 + 3;
/// The table's tail after the index: properties and meta-index blocks and
/// the 53-byte footer (table/format.h `kNewVersionsEncodedLength`). Our
/// choice 4 KiB: the properties block holds a few hundred bytes of names
/// and counters.
pub const TABLE_TAIL: u64 = 4096;
/// The memtable's bytes per entry beyond the encoded key and value: the
/// skiplist node's next pointers (InlineSkipList, branching 4: 4/3 levels
/// on average, 8 bytes each) and the arena's alignment. Our choice 16.
pub const MEMTABLE_ENTRY_OVERHEAD: u64 = 16;

/// How long a varint encoding of `v` is (util/coding.h `VarintLength`).
pub fn varint_len(mut v: u64) -> u64 {
    let mut n = 1;
    while v >= 128 {
        v >>= 7;
        n += 1;
    }
    n
}

/// The data-block geometry of a table of `key_size`-byte keys and
/// `value_size`-byte values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Entries per data block.
    pub entries_per_block: u64,
    /// Bytes of one data block on disk, trailer included.
    pub block_bytes: u64,
    /// Entries per memtable before it is full.
    pub memtable_entries: u64,
    /// The direct-I/O alignment (the device's logical block size).
    pub alignment: u64,
    key_size: u64,
}

impl Layout {
    pub fn new(
        key_size: u32,
        value_size: u32,
        block_size: u32,
        write_buffer_size: u64,
        alignment: u64,
    ) -> Layout {
        let key = key_size as u64 + INTERNAL_KEY_TAIL;
        let value = value_size as u64;
        let block_size = block_size as u64;
        // table/block_based/flush_block_policy.cc, FlushBlockBySizePolicy:
        // close the block when its estimate reaches block_size, or when the
        // next entry would pass block_size and the block is past the
        // deviation limit. Sizes from table/block_based/block_builder.cc:
        // `Reset` starts the estimate at two u32s (one restart and the
        // count); `Add` adds the three varints, the key (not delta-encoded
        // here: our simplification, a few bytes per entry) and the value;
        // `EstimateSizeAfterKV` counts the shared varint as 4 bytes.
        let deviation_limit = (block_size * (100 - BLOCK_SIZE_DEVIATION)).div_ceil(100);
        let entry = varint_len(0) + varint_len(key) + varint_len(value) + key + value;
        let restart_interval = 16; // block_restart_interval, table.h
        let mut estimate = 8u64;
        let mut n = 0u64;
        loop {
            if n > 0 {
                let restart = if n % restart_interval == 0 { 4 } else { 0 };
                let after =
                    estimate + key + value + restart + 4 + varint_len(key) + varint_len(value);
                if estimate >= block_size || (after > block_size && estimate > deviation_limit) {
                    break;
                }
            }
            if n > 0 && n % restart_interval == 0 {
                estimate += 4;
            }
            estimate += entry;
            n += 1;
        }
        let memtable_entry =
            varint_len(key) + key + varint_len(value) + value + MEMTABLE_ENTRY_OVERHEAD;
        Layout {
            entries_per_block: n,
            block_bytes: estimate + BLOCK_TRAILER,
            memtable_entries: (write_buffer_size / memtable_entry).max(1),
            alignment,
            key_size: key,
        }
    }

    /// Data blocks holding `entries`.
    pub fn blocks(&self, entries: u64) -> u64 {
        entries.div_ceil(self.entries_per_block)
    }

    /// Bytes of the data blocks of `num` keys.
    pub fn data_bytes(&self, num: u64) -> u64 {
        self.blocks(num) * self.block_bytes
    }

    /// Bytes of an SST holding `entries`: its data blocks, its index, its
    /// tail.
    pub fn sst_bytes(&self, entries: u64) -> u64 {
        let blocks = self.blocks(entries);
        blocks * self.block_bytes + blocks * (self.key_size + INDEX_ENTRY_OVERHEAD) + TABLE_TAIL
    }

    /// The bytes a direct read of block `index` transfers: the block and its
    /// trailer widened to the alignment on both sides
    /// (`RandomAccessFileReader::Read` with `use_direct_io()`: `Rounddown`
    /// the offset, `Roundup` the end; util/file_reader_writer.cc).
    pub fn block_read_bytes(&self, index: u64) -> u64 {
        self.span_bytes(index * self.block_bytes, self.block_bytes)
    }

    /// `len` bytes at `offset`, widened to the alignment.
    pub fn span_bytes(&self, offset: u64, len: u64) -> u64 {
        let a = self.alignment;
        let start = offset / a * a;
        let end = (offset + len).div_ceil(a) * a;
        end - start
    }

    /// `len` rounded up to the alignment: a direct write's last piece is
    /// padded (WritableFileWriter with direct I/O writes whole pages).
    pub fn aligned(&self, len: u64) -> u64 {
        len.div_ceil(self.alignment) * self.alignment
    }
}

/// Cuts `total` bytes into sequential pieces of at most `chunk`, each
/// aligned, the last padded.
pub fn chunks(total: u64, chunk: u64, layout: &Layout) -> Vec<u64> {
    let mut out = Vec::new();
    let mut left = total;
    while left > 0 {
        let n = left.min(chunk);
        out.push(layout.aligned(n));
        left -= n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_1kib_entries_per_4kib_block() {
        // 16 + 8 key bytes, 1024 value bytes: 1052 per entry; 3 entries
        // (3164) are under the 3687 deviation limit, so a 4th is added
        // (4216 >= 4096) and the block closes.
        let l = Layout::new(16, 1024, 4096, 64 << 20, 512);
        assert_eq!(l.entries_per_block, 4);
        assert_eq!(l.block_bytes, 8 + 4 * 1052 + 5);
        assert!(l.block_read_bytes(0) == 4608);
        assert!(l.memtable_entries > 60_000 && l.memtable_entries < 64_000);
    }

    #[test]
    fn matches_a_real_sst_within_one_percent() {
        // The sst_dump figures in the module's documentation.
        let l = Layout::new(16, 1024, 4096, 64 << 20, 512);
        let near = |ours: f64, real: f64| (ours / real - 1.0).abs() < 0.01;
        assert!(near(l.block_bytes as f64, 65_395_065.0 / 15_571.0));
        assert!(near(l.memtable_entries as f64, 62_281.0));
        assert!(near(l.sst_bytes(62_281) as f64, 65_706_712.0));
    }

    #[test]
    fn small_values_fill_a_block() {
        let l = Layout::new(16, 100, 4096, 64 << 20, 4096);
        assert!(l.entries_per_block > 30);
        assert!(l.block_bytes <= 4096 + 200);
    }

    #[test]
    fn chunks_cover_the_total() {
        let l = Layout::new(16, 1024, 4096, 64 << 20, 512);
        let c = chunks(3 * 1024 * 1024 + 100, 1024 * 1024, &l);
        assert_eq!(c.len(), 4);
        assert_eq!(c[3], 512);
    }
}

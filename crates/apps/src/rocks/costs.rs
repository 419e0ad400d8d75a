//! CPU per operation, measured on this machine (2 vCPUs, AMD EPYC) with
//! Debian's db_bench 7.8.3 (`rocksdb-tools`; the paper ran 6.4.6, which
//! Debian does not ship) on a database in tmpfs (`/dev/shm`), so no device
//! I/O: `--key_size=16 --value_size=1024 --compression_type=none
//! --threads=1 --seed=7`, the database from `--benchmarks=fillseq
//! --num=1000000`.
//!
//! Each constant is the difference of the process CPU time (`/usr/bin/time
//! -f %U,%S,%e`: user s, system s, wall s) of two runs that differ only in
//! their op count, over the extra ops, which cancels `DB::Open` and warm-up.
//! The machine was shared (load average about 6 on its 2 vCPUs while these
//! ran, 2026-11-26), which makes the wall times useless and inflates CPU
//! times too (caches shared with other work): read them as upper bounds.
//! The script: `crates/apps/measure/rocks-costs.sh`.

use policy::Nanos;

/// User CPU of one `DB::Get` whose data block comes from a `pread`: the
/// memtable and index lookups, the block's checksum, its search.
///
/// `readrandom --use_existing_db=1 --num=1000000 --cache_size=0`
/// (`no_block_cache`: every get reads its block), `--reads=300000`:
/// `1.89,1.01,9.20`; `--reads=1300000`: `8.91,4.91,80.50`; user (8.91 -
/// 1.89) s / 1 M = 7.0 us (the system time, 3.9 us, is tmpfs's pread: the
/// front end charges its own I/O path). With the block cache holding
/// everything (`--cache_size=4294967296`, `--reads=500000`:
/// `3.63,2.46,18.81`; `--reads=2500000`: `18.52,2.65,52.29`) a get costs
/// (18.52 - 3.63) / 2 M = 7.4 us: the same within the noise, so one
/// constant serves hits and misses.
pub const GET_NS: Nanos = 7_000;

/// CPU of one readwhilewriting `DB::Put` (random key, 64 MiB memtables,
/// WAL on).
///
/// `fillrandom --disable_auto_compactions=1` (default 64 MiB memtables,
/// which flush): `--num=200000`: `2.78,1.13,8.74`; `--num=1000000`:
/// `13.40,4.00,60.54`; user (13.40 - 2.78) s / 800 K = 13.3 us, less the
/// flush thread's share ([`BACKGROUND_NS_PER_KIB`] x 1.04 KiB = 0.3 us),
/// plus the WAL's `write()` into the page cache, a system call the front
/// end does not otherwise charge: 1.2 us (`dd if=/dev/zero
/// of=/dev/shm/rocks-dd bs=262 count=2000000`: `0.30,2.53,10.63`;
/// `count=400000`: `0.06,0.67,3.37`; (0.24 + 1.86) s / 1.6 M = 1.3 us per
/// small write). 13.3 - 0.3 + 1.2 = 14.2 us. (With one 4 GiB memtable,
/// `--write_buffer_size=4294967296`, a put costs 20.5 us user: a skiplist
/// of 1 M random keys misses the caches more than one of 60 K.)
pub const PUT_NS: Nanos = 14_200;

/// CPU per key of fillbatch's `WriteBatch` of 1000 sequential keys (the
/// batch's building, its WAL record's `write()`, the memtable inserts).
///
/// `fillbatch --write_buffer_size=4294967296` (no flush): `--num=200000`:
/// `0.61,3.67,27.91`; `--num=1000000`: `2.91,4.31,46.31`; (2.30 user +
/// 0.64 system) s / 800 K = 3.7 us. Sequential keys insert at the
/// skiplist's end, hence far cheaper than random puts.
pub const FILLBATCH_KEY_NS: Nanos = 3_700;

/// The share of [`FILLBATCH_KEY_NS`] spent inside `DB::Write` (WAL and
/// memtable), the rest building the batch (keys, values, `batch.Put`):
/// the op's latency is the write's (the artifact reads
/// `rocksdb.db.write.micros` from `-statistics`, tab3/parse_fillbatch.sh).
///
/// `fillbatch --num=500000 --write_buffer_size=4294967296 --statistics`:
/// `20.794 micros/op ... 10.397 seconds`, `rocksdb.db.write.micros ... P100
/// : 4957507.000000 COUNT : 500 SUM : 9758079`: without the one 5 s
/// outlier (the 4 GiB arena's page faults), (9.758 - 4.958) / (10.397 -
/// 4.958) = 88% of the time in `DB::Write`; with 4 MiB memtables
/// (`--num=400000 --write_buffer_size=4194304`: `3.920 seconds`, `SUM :
/// 3436315`) 88% again.
pub const FILLBATCH_IN_WRITE_PERCENT: Nanos = 88;

/// CPU per key the dump tool spends: the iterator's `Next` and the four
/// `Append`s (`write()` system calls into the page cache,
/// tools/dump/db_dump_tool.cc) of its two lengths, key and value.
///
/// `readseq --use_existing_db=1 --num=1000000 --cache_size=4294967296`:
/// `1.73,2.30,42.71`, at most 1.7 us user per key (open included; the
/// system time is tmpfs's reads); four writes of 4, 16, 4 and 1024 bytes
/// at 1.3 us each (the `dd` runs of [`PUT_NS`], 262 bytes: their mean):
/// 1.7 + 5.2 = 6.9 us.
pub const DUMP_KEY_NS: Nanos = 6_900;

/// CPU per KiB a flush or compaction spends building SST blocks (copying
/// entries into blocks, crc32c over them). Our choice, 250 ns/KiB (about 4
/// GB/s, memcpy and hardware crc32c speed): the flush thread's CPU cannot
/// be told apart from the writer's in db_bench's process time.
pub const BACKGROUND_NS_PER_KIB: Nanos = 250;

#!/bin/bash
# Measures the CPU constants of crates/apps/src/rocks/costs.rs.
# CPU time (user, sys; getrusage via /usr/bin/time) of db_bench 7.8.3 runs
# on tmpfs (no device I/O). Two runs differing only in op count; the
# difference divided by the extra ops is the per-op CPU, free of open/load.
D=/dev/shm/rocks-cpu
T="/usr/bin/time -f %U,%S,%e"
COMMON="--key_size=16 --value_size=1024 --compression_type=none --threads=1 --seed=7"
rm -rf $D
db_bench --db=$D --benchmarks=fillseq --num=1000000 $COMMON >/dev/null 2>&1
for r in 500000 2500000; do
  echo "readrandom cached reads=$r"; $T db_bench --db=$D --use_existing_db=1 --benchmarks=readrandom --num=1000000 --reads=$r --cache_size=4294967296 $COMMON 2>&1 | grep -E 'micros/op|^[0-9.]+,'
done
for r in 300000 1300000; do
  echo "readrandom nocache reads=$r"; $T db_bench --db=$D --use_existing_db=1 --benchmarks=readrandom --num=1000000 --reads=$r --cache_size=0 $COMMON 2>&1 | grep -E 'micros/op|^[0-9.]+,'
done
for r in 1000000; do
  echo "readseq num=1000000"; $T db_bench --db=$D --use_existing_db=1 --benchmarks=readseq --num=1000000 --cache_size=4294967296 $COMMON 2>&1 | grep -E 'micros/op|^[0-9.]+,'
done
for n in 200000 1000000; do
  rm -rf $D; echo "fillrandom wal num=$n"; $T db_bench --db=$D --benchmarks=fillrandom --num=$n --write_buffer_size=4294967296 $COMMON 2>&1 | grep -E 'micros/op|^[0-9.]+,'
done
for n in 200000 1000000; do
  rm -rf $D; echo "fillrandom flushing num=$n"; $T db_bench --db=$D --benchmarks=fillrandom --num=$n --disable_auto_compactions=1 $COMMON 2>&1 | grep -E 'micros/op|^[0-9.]+,'
done
for n in 200000 1000000; do
  rm -rf $D; echo "fillbatch num=$n"; $T db_bench --db=$D --benchmarks=fillbatch --num=$n --write_buffer_size=4294967296 $COMMON 2>&1 | grep -E 'micros/op|^[0-9.]+,'
done
rm -rf $D
echo "write() of 262 bytes x 2000000 to tmpfs"; $T dd if=/dev/zero of=/dev/shm/rocks-dd bs=262 count=2000000 2>&1 | grep -E '^[0-9.]+,'
echo "write() of 262 bytes x 400000 to tmpfs"; $T dd if=/dev/zero of=/dev/shm/rocks-dd bs=262 count=400000 2>&1 | grep -E '^[0-9.]+,'
rm -f /dev/shm/rocks-dd

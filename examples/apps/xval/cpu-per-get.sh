#!/bin/bash
# marginal CPU per get: plain O_DIRECT, exec --observe, exec --device optane cint
# Usage: cpu-per-get.sh DB (a database loaded by measure.sh: SCRATCH/db)
# Prints: rep mode reads user system (sh times of db_bench) loadavg.
# The marginal CPU per get is the difference of two read counts / 10,000.
B=${CINTERRUPTS:-target/release/cinterrupts}; DB=${1:?usage: cpu-per-get.sh DB}
F="--benchmarks=readrandom -use_existing_db=true --disable_auto_compactions=true --histogram=1 --key_size=16 --value_size=1024 --num=250000 --use_direct_io_for_flush_and_compaction=true --use_direct_reads=true -compression_type=none --db=$DB --threads=1"
cat $DB/*.sst > /dev/null
for rep in 1 2 3; do for mode in plain observe optane; do for n in 2000 12000; do
  case $mode in
    plain) pre=() ;;
    observe) pre=($B exec --observe --quiet --) ;;
    optane) pre=($B exec --device optane --policy cint --delta 15us --thr 32 --quiet --) ;;
  esac
  r=$("${pre[@]}" sh -c 'db_bench "$@" >/dev/null 2>&1; times' sh $F --reads=$n | tail -1)
  echo "$rep $mode $n $r $(cut -d' ' -f1 /proc/loadavg)"
done; done; done

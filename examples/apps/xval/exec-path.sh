#!/bin/bash
# The costs of exec's path on this machine, for the host profile
# profiles/hosts/vm-exec.toml (issue 16 item 4: the model run with the costs
# exec has). Prints one line per figure.
#
#   examples/apps/xval/exec-path.sh [SCRATCH_DIR]
#
# 1. perf bench syscall basic: one system call (getppid), ns.
# 2. perf bench sched pipe -T on CPU 0: two threads of one process on one
#    core passing a byte through two pipes; one op = 2 writes, 2 reads, 2
#    wake-ups and 2 switches.
# 3. db_bench readrandom under `exec --device optane --policy cint` (the
#    cross-validation's database and flags, measure.sh), 1 and 2 threads,
#    2,000 and 42,000 reads per thread, 3 repetitions: the marginal user and
#    system CPU per get (sh's `times` of db_bench, 10 ms ticks: 0.25 us at
#    40,000 extra gets), net of the open and warm-up.
set -euo pipefail
scratch=${1:-/tmp/cinterrupts-xval}
bin=${CINTERRUPTS:-target/release/cinterrupts}
keys=250000
db=$scratch/db
common=(--key_size=16 --value_size=1024 "--num=$keys"
    --use_direct_io_for_flush_and_compaction=true --use_direct_reads=true
    -compression_type=none "--db=$db")
readflags=(--benchmarks=readrandom -use_existing_db=true
    --disable_auto_compactions=true "${common[@]}")
command -v perf >/dev/null || { echo "exec-path.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
command -v db_bench >/dev/null || { echo "exec-path.sh: db_bench not found (apt-get install rocksdb-tools)" >&2; exit 1; }
if ! ls "$db"/*.sst >/dev/null 2>&1; then
    mkdir -p "$scratch"
    db_bench --benchmarks=fillbatch --threads=1 -batch_size=4000 "${common[@]}" >/dev/null 2>&1
    db_bench "${readflags[@]}" --threads=1 --reads=1 >/dev/null 2>&1
fi
echo "date $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "syscall_ns $(perf bench syscall basic 2>&1 | awk '/usecs\/op/ {printf "%.0f", $1 * 1000}')"
echo "pipe_thread_roundtrip_ns $(taskset -c 0 perf bench sched pipe -T -l 200000 2>&1 | awk '/usecs\/op/ {printf "%.0f", $1 * 1000}')"
cat "$db"/*.sst > /dev/null
secs() { awk -v t="$1" 'BEGIN { split(t, a, "m"); sub("s", "", a[2]); print a[1] * 60 + a[2] }'; }
for rep in 1 2 3; do for t in 1 2; do
    declare -A u s
    for n in 2000 42000; do
        r=$("$bin" exec --device optane --policy cint --delta 15us --thr 32 --quiet -- \
            sh -c 'db_bench "$@" >/dev/null 2>&1; times' sh "${readflags[@]}" "--threads=$t" "--reads=$n" | tail -1)
        u[$n]=$(secs "${r%% *}"); s[$n]=$(secs "${r##* }")
    done
    gets=$((40000 * t))
    echo "rep $rep threads $t user_us_per_get $(echo "(${u[42000]} - ${u[2000]}) * 1000000 / $gets" | bc -l | cut -c1-5) system_us_per_get $(echo "(${s[42000]} - ${s[2000]}) * 1000000 / $gets" | bc -l | cut -c1-5) load $(cut -d' ' -f1 /proc/loadavg)"
done; done

#!/usr/bin/env bash
# Issue 16 item 4: real db_bench readrandom under `cinterrupts exec`, the
# measured side of the RocksDB-like model's cross-validation. Writes one
# JSON file (every run's figures, the commands, the machine) and keeps every
# run's raw output (db_bench stdout, exec's JSON report and stderr) in the
# scratch directory.
#
#   examples/apps/xval/measure.sh OUT.json [SCRATCH_DIR]
#
# Environment (defaults are the committed run's):
#   CINTERRUPTS  the cinterrupts binary   [target/release/cinterrupts]
#   KEYS=250000  keys loaded (ours: 16 B keys, 1 KiB values make a ~263 MB
#                database, 32x db_bench's default 8 MiB block cache, so ~97%
#                of gets read the device; fillbatch loads it in ~10 s here)
#   READS=10000  reads per thread (ours: 0.6-2 s per run at 50-170 us per
#                get; the artifact's 100,000, artifact-configs.md:63)
#   REPS=5       repetitions of every configuration (to see the noise; as
#                the artifact's 5 runs, artifact-configs.md:57)
#   THREADS="1 2"  (the artifact's 4, artifact-configs.md:63, scaled to this
#                VM's 2 vCPUs, of which exec's device thread takes one)
#   NICE=-20     every measured run under `nice -n NICE` (ours: this VM's 2
#                vCPUs are shared with other work, load average 6-8 while
#                we measured; at nice 0 a run's throughput varied 4x from
#                one repetition to the next, at -20 CFS gives the run ~99%
#                of a CPU it contends for; 0 to measure as-is)
set -euo pipefail
out=${1:?usage: measure.sh OUT.json [SCRATCH_DIR]}
scratch=${2:-/tmp/cinterrupts-xval}
bin=${CINTERRUPTS:-target/release/cinterrupts}
keys=${KEYS:-250000}
reads=${READS:-10000}
reps=${REPS:-5}
threads=${THREADS:-1 2}
nice=${NICE:--20}
command -v db_bench >/dev/null || { echo "measure.sh: db_bench not found (apt-get install rocksdb-tools; scripts/setup)" >&2; exit 1; }
[ -x "$bin" ] || { echo "measure.sh: $bin is not an executable (cargo build --release -p cinterrupts, or set CINTERRUPTS)" >&2; exit 1; }
command -v jq >/dev/null || { echo "measure.sh: jq not found (apt-get install jq)" >&2; exit 1; }
command -v bc >/dev/null || { echo "measure.sh: bc not found (apt-get install bc)" >&2; exit 1; }
db=$scratch/db
runs=$scratch/runs
mkdir -p "$runs"

# db_bench's flags for every run: the artifact's (artifact-configs.md:59-60,
# 63-64: 16 B keys, 1 KiB values, direct reads and flush/compaction I/O, no
# compression) and the histogram (mean and p99 per get). Block cache:
# db_bench's default 8 MiB (the artifact sets none).
common=(--key_size=16 --value_size=1024 "--num=$keys"
    --use_direct_io_for_flush_and_compaction=true --use_direct_reads=true
    -compression_type=none "--db=$db")
readflags=(--benchmarks=readrandom -use_existing_db=true
    --disable_auto_compactions=true --histogram=1 "${common[@]}")

# Load (artifact-configs.md:59-61: fillbatch, one thread, batch 4000), then
# open once with a single read: the reopen replays the load's last memtable
# from the WAL into an L0 file, so every measured run sees the same 4 SSTs
# and no open writes anything.
t0=$(date +%s.%N)
rm -rf "$db"
db_bench --benchmarks=fillbatch --threads=1 -batch_size=4000 "${common[@]}" > "$scratch/load.out" 2> "$scratch/load.err"
db_bench "${readflags[@]}" --threads=1 --reads=1 > "$scratch/normalize.out" 2> "$scratch/normalize.err"
load_s=$(echo "$(date +%s.%N) - $t0" | bc)
ssts=$(ls "$db"/*.sst | wc -l)
db_bytes=$(du -sb "$db" | cut -f1)

# exec --device moves the data through the page cache (crates/exec/README.md):
# warm it, so that no run pays this VM's disk (~170 us) on top of the profile.
warm() { cat "$db"/*.sst > /dev/null; }

# The systems: the artifact's (artifact-configs.md:66-67).
policy_args() {
    case $1 in
        default) echo "--policy default" ;;
        adaptive) echo "--policy adaptive --delta 6us --thr 32" ;;
        cint) echo "--policy cint --delta 15us --thr 32" ;;
    esac
}

# One run: its raw files and NAME.meta.json in runs/, its record on stdout.
run() { # system threads rep reads
    local sys=$1 t=$2 rep=$3 n=$4 name="$1-t$2-r$3-n$4" la0 la1 s0 s1 cmd
    la0=$(cut -d' ' -f1 /proc/loadavg)
    s0=$(date +%s.%N)
    if [ "$sys" = plain ]; then
        cmd=(nice -n "$nice" db_bench "${readflags[@]}" "--threads=$t" "--reads=$n")
        "${cmd[@]}" > "$runs/$name.out" 2> "$runs/$name.err"
    else
        warm
        # shellcheck disable=SC2207
        cmd=(nice -n "$nice" "$bin" exec --device optane $(policy_args "$sys") --output-format json
            -o "$runs/$name.json" -- db_bench "${readflags[@]}" "--threads=$t" "--reads=$n")
        "${cmd[@]}" > "$runs/$name.out" 2> "$runs/$name.err"
    fi
    s1=$(date +%s.%N)
    la1=$(cut -d' ' -f1 /proc/loadavg)
    jq -nc --arg system "$sys" --argjson threads "$t" --argjson rep "$rep" --argjson reads "$n" \
        --argjson load0 "$la0" --argjson load1 "$la1" --argjson wall "$(echo "$s1 - $s0" | bc)" \
        --arg command "${cmd[*]}" \
        '{system: $system, threads: $threads, rep: $rep, reads_per_thread: $reads,
          loadavg_before: $load0, loadavg_after: $load1, wall_s: $wall, command: $command}' \
        > "$runs/$name.meta.json"
    record "$name"
}

# One run's figures from its raw files -> one JSON object on stdout.
record() { # name
    local name=$1 line hist pct ops avg p50 p99 found dev='null' contention=false
    [ -f "$runs/$name.json" ] && dev=$(jq -c '.cinterrupts as $c | {commands: $c.exec.routing.commands, interrupts: $c.interrupts, completions_per_interrupt: $c.completions_per_interrupt, urgent_only: $c.urgent_only_interrupts, delivery_mean_ns: $c.delivery_ns.mean, delivery_p99_ns: $c.delivery_ns.p99, handler_cpu_ns: $c.exec.routing.handler_cpu_ns}' "$runs/$name.json")
    line=$(grep -m1 '^readrandom' "$runs/$name.out")
    ops=$(awk '{for (i=1;i<=NF;i++) if ($i=="ops/sec") print $(i-1)}' <<<"$line")
    found=$(sed -n 's/.*(\([0-9]*\) of \([0-9]*\) found).*/\1/p' <<<"$line")
    hist=$(grep -m1 '^Count:' "$runs/$name.out")
    pct=$(grep -m1 '^Percentiles:' "$runs/$name.out")
    avg=$(awk '{for (i=1;i<=NF;i++) if ($i=="Average:") print $(i+1)}' <<<"$hist")
    p50=$(awk '{for (i=1;i<=NF;i++) if ($i=="P50:") print $(i+1)}' <<<"$pct")
    p99=$(awk '{for (i=1;i<=NF;i++) if ($i=="P99:") print $(i+1)}' <<<"$pct")
    grep -q 'contention' "$runs/$name.err" && contention=true
    jq -c --argjson ops "$ops" --argjson avg "$avg" --argjson p50 "$p50" --argjson p99 "$p99" \
        --argjson found "${found:-0}" --argjson device "$dev" --argjson contention "$contention" \
        '. + {ops_per_sec: $ops, get_mean_us: $avg, get_p50_us: $p50, get_p99_us: $p99, found: $found,
          device: $device,
          commands_per_get: (if $device == null then null else $device.commands / (.reads_per_thread * .threads) end),
          contention: $contention}' "$runs/$name.meta.json"
}

# The open's own device reads (table footers and index blocks): one get per
# thread, so that commands per get can be taken net of them.
open_runs=()
for t in $threads; do
    open_runs+=("$(run cint "$t" 0 1)")
done
all=()
for rep in $(seq 1 "$reps"); do
    for t in $threads; do
        for sys in plain default adaptive cint; do
            r=$(run "$sys" "$t" "$rep" "$reads")
            all+=("$r")
            jq -r '"\(.system) t\(.threads) r\(.rep): \(.ops_per_sec) ops/s, mean \(.get_mean_us) us, p99 \(.get_p99_us) us, cmds/get \(.commands_per_get // "-"), load \(.loadavg_before)"' <<<"$r" >&2
        done
    done
done

printf '%s\n' "${all[@]}" | jq -s \
    --argjson open "$(printf '%s\n' "${open_runs[@]}" | jq -s .)" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --arg kernel "$(uname -r)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --argjson ncpu "$(nproc)" \
    --arg haltpoll "$(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo unknown)" \
    --arg dbbench "$(db_bench --version 2>&1 | head -1)" \
    --arg cinterrupts "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --argjson keys "$keys" --argjson reads "$reads" --argjson reps "$reps" --argjson nice "$nice" \
    --arg load "$(grep -m1 '^fillbatch' "$scratch/load.out")" --argjson load_s "$load_s" \
    --argjson ssts "$ssts" --argjson db_bytes "$db_bytes" \
    '{date: $date,
      machine: {kernel: $kernel, cpu: $cpu, vcpus: $ncpu, guest_halt_poll_ns: $haltpoll,
                db_bench: $dbbench, cinterrupts_commit: $cinterrupts,
                note: "program on CPU 0, exec device thread on CPU 1 (exec default: the highest allowed CPU); 2 vCPUs shared with other work, loadavg per run"},
      params: {keys: $keys, key_size: 16, value_size: 1024, block_cache: "8 MiB (db_bench default)",
               reads_per_thread: $reads, reps: $reps, nice: $nice, device: "optane", load_seconds: $load_s,
               load_line: $load, ssts: $ssts, db_bytes: $db_bytes},
      open_only: $open,
      runs: .,
      summary: (group_by([.system, .threads]) | map({
          system: .[0].system, threads: .[0].threads, n: length,
          ops_per_sec: (map(.ops_per_sec) | {mean: (add/length), min: min, max: max}),
          get_mean_us: (map(.get_mean_us) | {mean: (add/length), min: min, max: max}),
          get_p50_us: (map(.get_p50_us) | {mean: (add/length), min: min, max: max}),
          get_p99_us: (map(.get_p99_us) | {mean: (add/length), min: min, max: max}),
          commands_per_get: (map(.commands_per_get) | if .[0] == null then null else add/length end),
          completions_per_interrupt: (map(.device.completions_per_interrupt) | if .[0] == null then null else add/length end)
      }))}' > "$out"
echo "measure.sh: wrote $out" >&2

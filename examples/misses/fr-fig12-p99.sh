#!/bin/bash
# Issue 23 item 8, FastResponse read path (our experiment fr-fig12, FR 4.2
# Fig 12). Two misses whose causes crates/repro/README.md gave as guesses:
#  (1) "B-Opt's p99 is 49% below SelectISR's (mean over the 5)": ours is
#      about 2x. Guess: a get arriving during a spill waits behind LD's 8
#      pieces of 32 KiB at the write ceiling (8 x 32 KiB / 2.0 GB/s =
#      131 us), which SelectISR's gets (no LD) meet only when the spill's
#      own queue is short.
#  (2) "SelectISR cuts readrandom's average latency by 21%": ours is
#      higher than Vanilla's. Guess: the spinning get shares core 0 with
#      the cpuio thread and CFS hands the core to it mid-spin, so the
#      completion waits for the get's next turn.
# For each TO workload, Vanilla, SelectISR and B-Opt, seeds 1-3, it prints
# readrandom's mean and p99 and, from CINTERRUPTS_IOPATH_RECORDS, (1) the
# gets between the 98th and 99.5th percentile of latency (those that set
# the p99): their device queue wait and the commands they found at the
# device, and the share of all gets that found 1 or more, and 8 or more,
# commands there; (2) the gets whose completion waited more than 1 ms
# after the device finished it ("after": a polled get's thread off its
# CPU, or an interrupt's thread waiting for it), how many, what they add to
# the mean, how long they had queued and how long "after" was. Then a probe (not FR's
# workload): the same co-runs without the spill job (--section: readrandom,
# the TO reads and, for Bayes and Kmeans, the cpuio job).
#
# Configuration, as reproduce runs fr-fig12 (crates/repro/src/figures/
# fastresponse.rs, fr_fig12.rs; crates/repro/README.md "FastResponse"):
# the job file is examples/fastresponse/ls-readrandom.fio followed by
# to-GROUP.fio (the co-run), every job on core 0 (--cpus_allowed=0), host
# xeon-e5-2630v3 (FR 4.1), device optane-900p, device policy default; the
# systems (HostSettings::fastresponse, FR 4.1): vanilla = --wakeup vanilla;
# selectisr = + --completion select-isr; b-opt = --block-scheduler ld (8
# tokens, 32k pieces: FR 3.3) --wakeup vanilla; 2 s runs (CORUN_RUNTIME),
# seeds 1-3 (reproduce --quick's).
#
#   examples/misses/fr-fig12-p99.sh [SEEDS]   (default "1 2 3")
set -euo pipefail
bin=${CINTERRUPTS:-target/release/cinterrupts}
seeds=${1:-1 2 3}
dir=examples/fastresponse
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

settings() { # system
    case $1 in
    vanilla) echo "--wakeup vanilla" ;;
    selectisr) echo "--completion select-isr --wakeup vanilla" ;;
    b-opt) echo "--block-scheduler ld --wakeup vanilla" ;;
    esac
}

# Runs a co-run per seed; writes $tmp/NAME-SEED.{json,csv}.
run() { # name group system [sections...]
    local name=$1 group=$2 sys=$3
    shift 3
    { cat "$dir/ls-readrandom.fio"; echo; cat "$dir/to-$group.fio"; } > "$tmp/$group.fio"
    for s in $seeds; do
        # shellcheck disable=SC2046
        CINTERRUPTS_IOPATH_RECORDS="$tmp/$name-$s.csv" "$bin" sim "$tmp/$group.fio" \
            --cpus_allowed=0 --host xeon-e5-2630v3 --device optane-900p --policy default \
            $(settings "$sys") "$@" --runtime 2s --seed "$s" --output-format json -q \
            -o "$tmp/$name-$s.json"
    done
}

# readrandom's mean and p99 (fio's, us), means over the seeds.
fio_stats() { # name
    for s in $seeds; do
        jq -r '.jobs[0].read.clat_ns | "\(.mean) \(.percentile["99.000000"])"' "$tmp/$1-$s.json"
    done | awk '{ m += $1; p += $2; n++ } END { printf "%8.1f %8.1f", m / n / 1e3, p / n / 1e3 }'
}

# Over the seeds' gets pooled (job 0 of the records): the 98-99.5% band's
# queue wait and depth; the shares finding >= 1 and >= 8 at the device;
# gets with after > 1 ms: count, what they add to the mean, their mean
# queue and after.
records() { # name
    for s in $seeds; do awk -F, 'NR > 1 && $1 == 0' "$tmp/$1-$s.csv"; done |
        sort -t, -k2,2n | awk -F, '
        { c[NR] = $2; q[NR] = $4; d[NR] = $9; a[NR] = $7
          if ($9 >= 1) one++; if ($9 >= 8) eight++
          if ($7 > 1000000) { late++; lsum += $7; lq += $4 } }
        END {
            lo = int(NR * 0.98) + 1; hi = int(NR * 0.995)
            for (i = lo; i <= hi; i++) { n++; bq += q[i]; bd += d[i] }
            printf "%7.1f %6.1f %6.2f%% %6.2f%% %5d %8.1f %9.1f %9.1f",
                bq / n / 1e3, bd / n, one / NR * 100, eight / NR * 100, late,
                lsum / NR / 1e3, late ? lq / late / 1e6 : 0, late ? lsum / late / 1e6 : 0
        }'
}

echo "readrandom per co-run and system (seeds pooled; times in us; late = gets whose completion waited > 1 ms after the device finished it)"
printf '%-9s %-9s %8s %8s %7s %6s %7s %7s %5s %8s %9s %9s\n' \
    TO system mean p99 "band q" "band d" ">=1 dev" ">=8 dev" late "late +us" "late q ms" "late a ms"
for g in terasort bayes kmeans pagerank index; do
    for sys in vanilla selectisr b-opt; do
        run "$g-$sys" "$g" "$sys"
        printf '%-9s %-9s %s %s\n' "$g" "$sys" "$(fio_stats "$g-$sys")" "$(records "$g-$sys")"
    done
done

echo
echo "probe: the same co-runs without the spill job (readrandom, the TO reads and any cpuio job)"
printf '%-9s %-9s %8s %8s %7s %6s %7s %7s %5s %8s %9s %9s\n' \
    TO system mean p99 "band q" "band d" ">=1 dev" ">=8 dev" late "late +us" "late q ms" "late a ms"
for g in terasort bayes kmeans pagerank index; do
    sections=(--section=ls-readrandom "--section=to-$g-read")
    grep -q "^\[to-$g-map\]" "$dir/to-$g.fio" && sections+=("--section=to-$g-map")
    for sys in vanilla selectisr b-opt; do
        run "$g-$sys-nospill" "$g" "$sys" "${sections[@]}"
        printf '%-9s %-9s %s %s\n' "$g" "$sys" "$(fio_stats "$g-$sys-nospill")" "$(records "$g-$sys-nospill")"
    done
done

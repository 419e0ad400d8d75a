#!/bin/bash
# Issue 23 item 8, TOS Fig 11: does the sync read's latency under adaptive
# stay flat across thr because it waits behind the async job's queue
# (RESULTS.md, "Fig 11's thr sweep")? Runs Fig 11's configuration in the
# simulator and splits the sync read's latency with the JSON's
# io_path.jobs[].parts (crates/sim/README.md): device queue (doorbell to a
# unit starting it), service, deliver (device done to the handler handing
# it over: the interrupt's wait), after (handler end, T_Sched, return), and
# the commands at the device when it arrived and when it finished. Then
# the same with the async job's iodepth (and its submit batch, which the
# artifact sets equal to it) cut to 256, 64 and 16, and with iodepth 512
# submitted 16 at a time: probes, not the artifact's setting.
#
# Every parameter, as the artifact runs Fig 11 (amytai/cinterrupts-osdi
# d4dfa8a, /work/shared/papers/artifact-configs.md row "Fig 11"):
#   job file fig6/rand_mix.fio ([libaio] randread + [psync] randread, both
#     on one CPU, cpus_allowed=1): crates/repro/artifact/fig6/rand_mix.fio
#   --blocksize=4K --iodepth=512 --iodepth_batch_submit=512
#     --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=512
#     (fig6/test.sh); 256 is the depth TOS 3.3's text gives
#   adaptive = alpha-1000000-T (delta 1 s: only thr fires), T in 4 16 64
#     (fig6/test.sh's thrs; the paper's labels: TOS Fig 11 / OSDI Fig 8)
#   cint = cint-1000000-65535 (fig6.gp's cint line: Urgent only)
#   default marks: basis (cinterrupts-01-basis.patch: pread Urgent,
#     io_submit unmarked), device optane (P4800X), host xeon-e5-2660v4
#   runtime 200 ms x seeds 1-3: reproduce --quick's (the artifact runs 60 s
#     x 10; the simulator is steady far sooner)
#
#   examples/misses/fig11-hol.sh [RUNTIME] [SEEDS]   (default 200ms "1 2 3")
set -euo pipefail
bin=${CINTERRUPTS:-target/release/cinterrupts}
runtime=${1:-200ms}
seeds=${2:-1 2 3}
job=crates/repro/artifact/fig6/rand_mix.fio
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run's sync job (psync, jobs[1]): clat, parts (us), depth, and the
# async job's IOPS and the interrupt rate.
one() { # iodepth batch policy seed
    rm -f "$tmp/r.json"
    "$bin" sim "$job" --blocksize=4K --iodepth="$1" --iodepth_batch_submit="$2" \
        --iodepth_batch_complete_min=1 --iodepth_batch_complete_max="$1" \
        --default-marks basis --policy "$3" --device optane \
        --runtime "$runtime" --seed "$4" --output-format json -q -o "$tmp/r.json" || return 1
    jq -r '.cinterrupts as $c | $c.run.io_path.jobs[1].parts as $p
        | [$p.clat_ns, $p.submit_ns, $p.queue_ns, $p.service_ns, $p.deliver_ns,
           $p.after_ns, $c.run.io_path.jobs[1].t_sched_mean_ns, $p.depth_at_arrival,
           $p.depth_at_done,
           .jobs[0].read.iops, $c.interrupts * 1e9 / $c.duration_ns]
        | map(tostring) | join(" ")' "$tmp/r.json"
}

# Mean over the seeds (nothing if a run measured no I/O).
point() { # iodepth batch policy
    for s in $seeds; do one "$1" "$2" "$3" "$s" 2>/dev/null || return 0; done |
        awk '{ for (i = 1; i <= NF; i++) t[i] += $i; n++ }
             END { for (i = 1; i <= NF; i++) printf "%s ", t[i] / n; print "" }'
}

printf '%-7s %-5s %-9s %8s %7s %7s %7s %7s %7s %7s %6s %6s %9s %7s %8s\n' \
    iodepth batch system "sync us" submit queue service deliver after t_sched ahead behind "async IOPS" "irq/s" "x cint"
# depth/batch: the artifact's 512/512; then probes: the paper's text's 256;
# 64 and 16; and 512 submitted 16 at a time (the submit batch of the
# artifact's Fig 15 and Fig 20 jobs, fig10/rand_mix_batched.fio and
# fig14/rand_read_libaio.fio).
for cfg in 512/512 256/256 64/64 16/16 512/16; do
    depth=${cfg%/*} batch=${cfg#*/}
    c=""
    for sys in cint 4 16 64; do
        if [ "$sys" = cint ]; then pol=cint-1000000-65535; else pol=alpha-1000000-$sys; fi
        label=$([ "$sys" = cint ] && echo cint || echo "thr $sys")
        out=$(point "$depth" "$batch" "$pol")
        if [ -z "$out" ]; then
            printf '%-7s %-5s %-9s no I/O measured: %s in flight never reach thr, only the 1 s delta fires\n' \
                "$depth" "$batch" "$label" "$((depth + 1))"
            continue
        fi
        read -r clat sub q svc del aft ts dep left aiops irq <<<"$out"
        [ -z "$c" ] && c=$clat
        awk -v d="$depth" -v b="$batch" -v l="$label" -v clat="$clat" -v sub_="$sub" -v q="$q" \
            -v svc="$svc" -v del="$del" -v aft="$aft" -v ts="$ts" -v dep="$dep" -v left="$left" -v ai="$aiops" \
            -v irq="$irq" -v c="$c" 'BEGIN {
            printf "%-7s %-5s %-9s %8.1f %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %6.1f %6.1f %9.0f %7.0f %8.2f\n",
                d, b, l, clat / 1e3, sub_ / 1e3, q / 1e3, svc / 1e3, del / 1e3, aft / 1e3,
                ts / 1e3, dep, left, ai, irq, clat / c }'
    done
done

#!/bin/bash
# Issue 23 item 8, TOS Table 6: why is adaptive's p99 get latency above
# cint's in the simulator (paper: 0.15 of cint's, "adaptive tames the p99")?
# Runs Table 6's application file under cint and adaptive, and two probes
# that change where the dump runs (not Table 6's setting):
#   table6   examples/apps/rocksdb-dump.toml as shipped (readrandom, 4
#            threads on cores 1 and 5; the dump tool's one thread on the
#            same cores: TOS 5.5.1 "on the same cores", the artifact's
#            numactl -C 1,5)
#   no-dump  the readrandom instance alone
#   dump-c3  the dump's thread on core 3, a core of its own
#   t6-full  table6 on a copy of the host profile with preemption = "full"
#            (a woken thread may preempt a kernel path: is the wait for
#            core 1 the dump's running kernel path?)
# and prints, per run: the gets (ops/s, mean, p50, p99, p99 / cint's),
# interrupts/s and completions per interrupt, the dump's share of the
# completions, the device's queue (mean and max commands), each used core's
# idle share; then where the reads that set the gets' p99 spend their time
# (the readers' reads between the 98th and 99.5th percentile of their
# latency, from CINTERRUPTS_IOPATH_RECORDS; a get does 1.00 device read):
# submit, device queue, service, deliver (the interrupt's wait), after (of
# which T_Sched), the depth they found, and the share on core 1 (the core
# the dump's thread runs on in table6).
#
# Systems, as the artifact's RocksDB module parameters
# (/work/shared/papers/artifact-configs.md, "Macrobenchmarks";
# crates/repro/src/figures/macro_systems.rs): cint irq_poller_delay=15
# irq_poller_max_thr=32 (cint, 15 us / 32, OOO off); adaptive
# irq_poller_delay=6 irq_poller_max_thr=32 (adaptive, 6 us / 32). Device
# optane, host xeon-e5-2660v4 (TOS 5.1, 5.4); runtime 200 ms x seeds 1-3
# (reproduce --quick's).
#
#   examples/misses/table6-p99.sh [RUNTIME] [SEEDS]   (default 200ms "1 2 3")
set -euo pipefail
bin=${CINTERRUPTS:-target/release/cinterrupts}
runtime=${1:-200ms}
seeds=${2:-1 2 3}
file=examples/apps/rocksdb-dump.toml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$file" "$tmp/table6.toml"
cp "$file" "$tmp/t6-full.toml"
sed 's/^preemption = .*/preemption = "full"/' profiles/hosts/xeon-e5-2660v4.toml > "$tmp/full-host.toml"
grep -q '^preemption = "full"' "$tmp/full-host.toml"
awk '/^\[\[instance\]\]/ { n++ } n < 2' "$file" > "$tmp/no-dump.toml"
awk '/^\[\[instance\]\]/ { n++ } { if (n == 2 && /^cores/) print "cores = [3]"; else print }' \
    "$file" > "$tmp/dump-c3.toml"

policy() { # system
    case $1 in
    cint) echo "--policy cint --delta 15us --thr 32 --ooo off" ;;
    adaptive) echo "--policy adaptive --delta 6us --thr 32" ;;
    esac
}

echo "gets, interrupts, device and cores (mean of the seeds)"
printf '%-8s %-9s %8s %7s %7s %7s %9s %8s %8s %8s %7s %6s  %s\n' \
    config system "gets/s" mean p50 p99 "p99/cint" "irq/s" "compl/irq" "dump cpl" "qd mean" "qd max" "idle: cores 1 5 (1 3 5)"
host() { # config
    if [ "$1" = t6-full ]; then echo "--host $tmp/full-host.toml"; else echo "--host xeon-e5-2660v4"; fi
}

for cfg in table6 no-dump dump-c3 t6-full; do
    c99=""
    for sys in cint adaptive; do
        for s in $seeds; do
            # shellcheck disable=SC2046
            CINTERRUPTS_IOPATH_RECORDS="$tmp/$cfg-$sys-$s.csv" "$bin" sim "$tmp/$cfg.toml" \
                $(policy "$sys") $(host "$cfg") --runtime "$runtime" --seed "$s" --output-format json -q \
                -o "$tmp/$cfg-$sys-$s.json"
            jq -r '.cinterrupts as $c | ($c.duration_ns / 1e9) as $t
                | (.jobs | map(select(.jobname | startswith("dump")))
                   | map(.read.io_ops + .write.io_ops) | add // 0) as $dump
                | [$c.run.apps[0].ops_per_sec, $c.run.apps[0].lat_us.mean, $c.run.apps[0].lat_us.p50,
                   $c.run.apps[0].lat_us.p99, $c.interrupts / $t, $c.completions / $c.interrupts,
                   $dump / $c.completions, $c.run.io_path.device_queue_depth.mean,
                   $c.run.io_path.device_queue_depth.max]
                  + [$c.run.cpu_util[] | .idle] | map(tostring) | join(" ")' "$tmp/$cfg-$sys-$s.json"
        done | awk '{ for (i = 1; i <= NF; i++) t[i] += $i; n++; k = NF }
                    END { for (i = 1; i <= k; i++) printf "%s ", t[i] / n; print "" }' > "$tmp/m"
        read -r -a v < "$tmp/m"
        [ -z "$c99" ] && c99=${v[3]}
        idle=""
        for ((i = 9; i < ${#v[@]}; i++)); do idle+=$(awk -v x="${v[$i]}" 'BEGIN { printf "%.1f%% ", x * 100 }'); done
        awk -v cfg="$cfg" -v sys="$sys" -v ops="${v[0]}" -v mean="${v[1]}" -v p50="${v[2]}" \
            -v p99="${v[3]}" -v c99="$c99" -v irq="${v[4]}" -v cpi="${v[5]}" -v dump="${v[6]}" \
            -v qd="${v[7]}" -v qmax="${v[8]}" -v idle="$idle" 'BEGIN {
            printf "%-8s %-9s %8.0f %7.1f %7.1f %7.1f %9.2f %8.0f %8.3f %7.2f%% %7.2f %6.0f  %s\n",
                cfg, sys, ops, mean, p50, p99, p99 / c99, irq, cpi, dump * 100, qd, qmax, idle }'
    done
done

echo
echo "the readers' reads between their 98th and 99.5th percentile of latency (us; seeds pooled)"
printf '%-8s %-9s %6s %7s %7s %7s %7s %7s %7s %7s %6s %6s\n' \
    config system reads clat submit queue service deliver after t_sched depth "core 1"
for cfg in table6 no-dump dump-c3 t6-full; do
    for sys in cint adaptive; do
        for s in $seeds; do
            # The readers are the first 4 jobs (rocks/reader0..3; 0 and 2 on core 1).
            awk -F, -v s="$s" 'NR > 1 && $1 < 4 { print s "," $0 }' "$tmp/$cfg-$sys-$s.csv"
        done | sort -t, -k3,3n | awk -F, -v cfg="$cfg" -v sys="$sys" '
            { c[NR] = $0 }
            END {
                lo = int(NR * 0.98) + 1; hi = int(NR * 0.995)
                for (i = lo; i <= hi; i++) {
                    split(c[i], f, ",")
                    n++; for (k = 3; k <= 11; k++) t[k] += f[k]
                    if (f[2] == 0 || f[2] == 2) one++
                }
                printf "%-8s %-9s %6d %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %6.2f %5.0f%%\n",
                    cfg, sys, n, t[3] / n / 1e3, t[4] / n / 1e3, t[5] / n / 1e3, t[6] / n / 1e3,
                    t[7] / n / 1e3, t[8] / n / 1e3, t[9] / n / 1e3, t[10] / n, one / n * 100
            }'
    done
done

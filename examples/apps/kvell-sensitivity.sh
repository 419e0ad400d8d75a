#!/bin/bash
# What-if, not calibration: how KVell's default-vs-cint gap (TOS Fig 23,
# YCSB-A) moves with the host's per-wake and per-interrupt costs. Runs the
# simulator on copies of the calibrated host (profiles/hosts/
# xeon-e5-2660v4.toml) with context_switch at 1-4 us, and irq_entry and
# per_completion at 2x and 4x, under default and cint (15 us / 32, the
# artifact's KVell parameters), and prints each run's KVell throughput
# and worker core 0's CPU shares.
#
#   examples/apps/kvell-sensitivity.sh [RUNTIME]   (default 200ms)
set -euo pipefail
bin=${CINTERRUPTS:-target/release/cinterrupts}
runtime=${1:-200ms}
host=profiles/hosts/xeon-e5-2660v4.toml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # label profile
    for p in default cint; do
        args=(--policy "$p")
        [ "$p" = cint ] && args+=(--delta 15us --thr 32)
        out=$("$bin" sim examples/apps/kvell-ycsb-a.toml --host "$2" "${args[@]}" --runtime "$runtime" 2>&1)
        ops=$(grep -m1 'kvell all: ops' <<<"$out" | sed 's/.*(\([^)]*\)).*/\1/')
        cpu=$(grep -m1 'cpu 0: user' <<<"$out" | sed 's/^ *cpu 0: //')
        echo "$1 $p: kvell $ops; worker core: $cpu"
    done
}
for cs in 1us 2us 3us 4us; do
    sed "s/^context_switch = .*/context_switch = \"$cs\"/" "$host" > "$tmp/cs-$cs.toml"
    run "context_switch=$cs" "$tmp/cs-$cs.toml"
done
for f in 2 4; do
    awk -v f="$f" '/^(irq_entry|per_completion) = "[0-9]+ns"/ { split($0, a, "\""); sub("ns", "", a[2]); print $1 " = \"" a[2] * f "ns\""; next } { print }' "$host" > "$tmp/irq-$f.toml"
    run "interrupt cost x$f" "$tmp/irq-$f.toml"
done

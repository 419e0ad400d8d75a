#!/usr/bin/env bash
# Cost per routed 4 KiB O_DIRECT read (RESULTS.md, "exec: what one routed read costs"):
# fio QD1 randread, 64 MiB file, 3 s, natively and under exec with and
# without --device and --stage, for each engine of $ENGINES (default
# psync; issue 25 adds libaio and io_uring).
# Usage: [ENGINES="psync libaio io_uring"] examples/exec/routed-cost.sh [DIR]
# from the repository root after cargo build --release; root (--stage).
set -euo pipefail
C=${CINTERRUPTS:-target/release/cinterrupts}
dir=${1:-/var/tmp/cost}; shift || true
mkdir -p $dir
for engine in ${ENGINES:-psync}; do
echo "== ioengine=$engine"
job="--name=r --directory=$dir --filename=f --size=64m --direct=1 --ioengine=$engine --rw=randread --bs=4k --runtime=3 --time_based --output-format=json"
one(){ python3 -c "
import json,sys
j=json.load(sys.stdin)['jobs'][0]['read']
print(f\"{sys.argv[1]}\tIOPS {j['iops']:.0f}\tclat mean {j['clat_ns']['mean']/1000:.2f} us\tp50 {j['clat_ns']['percentile']['50.000000']/1000:.2f} us\")" "$1"; }
fio $job --create_only=1 >/dev/null
fio $job | one "native"
$C exec -o /dev/null -- fio $job 2>/dev/null | one "exec (own O_DIRECT call, default policy)"
$C exec --device optane -o /dev/null -- fio $job 2>/dev/null | one "exec --device optane"
$C exec --observe --stage $dir -o /dev/null -- fio $job 2>/dev/null | one "exec --observe --stage (zram, native calls)"
$C exec --stage $dir -o /dev/null -- fio $job 2>/dev/null | one "exec --stage (zram)"
$C exec --stage $dir --device optane -o /dev/null -- fio $job 2>/dev/null | one "exec --stage --device optane"
done

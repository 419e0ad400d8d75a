#!/usr/bin/env bash
# MariaDB 10.11 in its pread mode under exec --device optane, as root with
# --user=mysql: sysbench oltp_read_write, then one line of exec's report
# (RESULTS.md, "exec: cint on databases", the MariaDB table).
# Usage: examples/exec/mariadb-marks.sh LABEL SECONDS [exec args...]
#   e.g. ... cint 5 --policy cint --marks-for mariadb
set -euo pipefail
label=$1; secs=$2; shift 2
C=${CINTERRUPTS:-$PWD/target/release/cinterrupts}
d=$(mktemp -d /tmp/maria-meas.XXXX); chmod 777 $d
mariadb-install-db --no-defaults --datadir=$d/data --user=mysql --auth-root-authentication-method=normal >/dev/null 2>&1
args=(--no-defaults --skip-networking --skip-grant-tables --innodb-use-native-aio=0 --innodb-flush-method=O_DIRECT
  --innodb-buffer-pool-size=6M --innodb-log-file-size=16M --innodb-buffer-pool-dump-at-shutdown=0
  --innodb-buffer-pool-load-at-startup=0 --datadir=$d/data --socket=$d/sock --pid-file=$d/pid --log-error=$d/err.log --user=mysql)
$C exec --device optane --output-format json -o $d/r.json "$@" -- mariadbd "${args[@]}" >/dev/null 2>&1 &
pid=$!
for i in $(seq 100); do mariadb --socket=$d/sock -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb --socket=$d/sock -e 'create database sb'
sb=(sysbench oltp_read_write --db-driver=mysql --mysql-user=root --mysql-db=sb --mysql-socket=$d/sock --tables=2 --table-size=2000)
"${sb[@]}" prepare >/dev/null
out=$("${sb[@]}" --time=$secs --threads=2 run)
mariadb-admin --socket=$d/sock shutdown
wait $pid || true
tps=$(echo "$out" | awk '/transactions:/{gsub(/\(/,"",$3); print $3}')
lat=$(echo "$out" | awk '/95th percentile:/{print $3}')
python3 - "$label" "$tps" "$lat" $d/r.json <<'PY'
import json,sys
label,tps,lat,f=sys.argv[1:]
c=json.load(open(f))['cinterrupts']; e=c['exec']
req=e['requests']
def s(k): return "/".join(str(req[k][m]) for m in ('urgent','barrier','unmarked'))
print(f"{label}\tTPS {tps}\tp95 {lat} ms\tinterrupts {c['interrupts']}\tcompletions {c['completions']}\tper_irq {c['completions_per_interrupt']:.2f}\tdelivery_p50 {c['delivery_ns']['p50'] if c.get('delivery_ns') else '-'}\treads {s('reads')}\twrites {s('writes')}\tflushes {s('flushes')}")
PY
rm -rf $d

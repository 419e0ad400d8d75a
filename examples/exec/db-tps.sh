#!/usr/bin/env bash
# A database's throughput under exec with its data staged on zram, and
# where each routed completion's delay went (RESULTS.md, "exec: the
# databases' TPS after the routing cut"). Root only (--stage).
# Usage: examples/exec/db-tps.sh mariadb|mariadb-uring|postgres LABEL SECONDS [exec args...]
#   e.g. ... mariadb observe 30 --observe
#        ... postgres cint 30 --device optane --policy cint --marks-for postgres
# MariaDB 10.11 as examples/exec/mariadb-marks.sh starts it (pread mode,
# O_DIRECT, as root with --user=mysql; `mariadb-uring`: its default
# io_uring mode), sysbench oltp_read_write, 2 tables of 2000 rows, 2
# threads. PostgreSQL 15 as crates/cli/tests/db_postgres.rs starts it
# (root exec, runuser -u postgres, the server in the foreground, WAL
# O_DIRECT|O_DSYNC), pgbench -i -s 2, then pgbench -c 2 -j 2.
set -euo pipefail
db=$1; label=$2; secs=$3; shift 3
C=${CINTERRUPTS:-$PWD/target/release/cinterrupts}
d=$(mktemp -d /tmp/db-tps.XXXX); chmod 777 $d
case $db in
mariadb|mariadb-uring)
  mariadb-install-db --no-defaults --datadir=$d/data --user=mysql --auth-root-authentication-method=normal >/dev/null 2>&1
  args=(--no-defaults --skip-networking --skip-grant-tables --innodb-flush-method=O_DIRECT
    --innodb-buffer-pool-size=6M --innodb-log-file-size=16M --innodb-buffer-pool-dump-at-shutdown=0
    --innodb-buffer-pool-load-at-startup=0 --datadir=$d/data --socket=$d/sock --pid-file=$d/pid --log-error=$d/err.log --user=mysql)
  [ $db = mariadb ] && args+=(--innodb-use-native-aio=0)
  $C exec --stage $d/data --output-format json -o $d/r.json "$@" -- mariadbd "${args[@]}" >$d/exec.out 2>&1 &
  pid=$!
  for i in $(seq 300); do mariadb --socket=$d/sock -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
  mariadb --socket=$d/sock -e 'create database sb'
  sb=(sysbench oltp_read_write --db-driver=mysql --mysql-user=root --mysql-db=sb --mysql-socket=$d/sock --tables=2 --table-size=2000)
  "${sb[@]}" prepare >/dev/null
  out=$("${sb[@]}" --time=$secs --threads=2 run)
  mariadb-admin --socket=$d/sock shutdown
  tps=$(echo "$out" | awk '/transactions:/{gsub(/\(/,"",$3); print $3}')
  ;;
postgres)
  B=/usr/lib/postgresql/15/bin
  chown postgres $d
  runuser -u postgres -- $B/initdb -D $d/data --auth=trust --no-sync >/dev/null
  args=(-D $d/data -c listen_addresses= -c unix_socket_directories=$d -c wal_level=minimal -c max_wal_senders=0
    -c wal_sync_method=open_datasync -c shared_buffers=16MB)
  $C exec --stage $d/data --output-format json -o $d/r.json "$@" -- runuser -u postgres -- $B/postgres "${args[@]}" >$d/exec.out 2>&1 &
  pid=$!
  for i in $(seq 300); do $B/pg_isready -q -h $d && break; sleep 0.2; done
  runuser -u postgres -- $B/pgbench -h $d -i -s 2 -q postgres >/dev/null 2>&1
  out=$(runuser -u postgres -- $B/pgbench -h $d -T $secs -c 2 -j 2 postgres 2>&1)
  runuser -u postgres -- $B/pg_ctl -D $d/data -m fast -w stop >/dev/null
  tps=$(echo "$out" | awk '/^tps = /{print $3; exit}')
  ;;
*) echo "db-tps.sh: unknown database '$db' (mariadb, mariadb-uring, postgres)" >&2; exit 2;;
esac
wait $pid || { echo "exec exited $?: $(tail -5 $d/exec.out)" >&2; }
python3 - "$db" "$label" "$tps" $d/r.json <<'PY'
import json,sys
db,label,tps,f=sys.argv[1:]
c=json.load(open(f))['cinterrupts']; e=c['exec']; r=e.get('routing') or {}
k=r.get('cost') or {}
us=lambda key: f"{k.get(key,0)/1e3:.2f}"
print(f"{db}\t{label}\tTPS {tps}\tcompletions {c.get('completions')}\tinterrupts {c.get('interrupts')}"
      f"\tfetch {us('fetch_ns')}\tmodel {us('device_model_ns')}\thold {us('strategy_hold_ns')}"
      f"\tirq {us('interrupt_ns')}\thandler {us('handler_ns')}\twake {us('wake_ns')}\tmachine {us('machine_ns')}"
      f"\tspin_ms {k.get('waiter_spin_cpu_ns',0)/1e6:.0f}\tspin_hits {k.get('spin_hits')}\tsleeps {k.get('sleeps')}"
      f"\tparks {k.get('device_parks')}\trings {k.get('device_rings')}\tdelivered_by {k.get('delivered_by')}")
PY
rm -rf $d

//! Debian's PostgreSQL 15 under `cinterrupts exec --device optane` (issue
//! 24 item 8, its first part): its WAL written with direct I/O
//! (`wal_sync_method = open_datasync` with `wal_level = minimal`: the WAL
//! segments opened `O_DIRECT | O_DSYNC`, PostgreSQL 15 docs, "WAL
//! Configuration"), a seconds-long pgbench load, a fast shutdown, then a
//! restart without `exec`: exec's count of WAL writes is within 10% of
//! `pg_stat_wal`'s, pgbench's balances agree (every account, teller
//! and branch change is one history row) and amcheck finds every index
//! sound.
//!
//! Not yet here (issue 24): data-file direct I/O (PostgreSQL 16's
//! `debug_io_direct`; 15's data files are buffered, so exec sees the WAL
//! only). The server runs as the `postgres` user
//! (initdb refuses root): when the test is root, exec runs as root and the
//! server becomes postgres under it (`runuser -u postgres`), which is
//! routed through the descriptors it inherits (issue 24 item 3); its
//! processes report as postgres and none is named `region not mapped`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{require, turn};

const BIN: &str = "/usr/lib/postgresql/15/bin";

/// Each step's bound: the whole test takes about 10 s here.
const STEP: Duration = Duration::from_secs(60);

fn root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// `program` with `args`, as the `postgres` user when the test is root.
fn as_postgres(program: &str, args: &[String]) -> Command {
    if root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", program]).args(args);
        c
    } else {
        let mut c = Command::new(program);
        c.args(args);
        c
    }
}

fn tool(name: &str) -> String {
    format!("{BIN}/{name}")
}

/// Runs `cmd` to completion within [`STEP`], or kills it and fails.
fn bounded(cmd: &mut Command) -> std::process::Output {
    common::output_within(cmd, STEP)
}

fn ok(cmd: &mut Command) -> String {
    let o = bounded(cmd);
    assert!(
        o.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A server started by the test, stopped (immediate) if the test fails.
struct Server {
    child: Child,
    dir: PathBuf,
}

impl Server {
    /// `exec` is the report's path and the `cinterrupts` to run (a copy the
    /// `postgres` user can reach), or none for a native start; `marks` are
    /// exec's marking options.
    fn start(dir: &Path, exec: Option<(&Path, &Path)>, marks: &[&str]) -> Server {
        let mut args: Vec<String> = vec![
            "-D".into(),
            dir.join("data").display().to_string(),
            "-c".into(),
            "listen_addresses=".into(),
            "-c".into(),
            format!("unix_socket_directories={}", dir.display()),
        ];
        for setting in [
            // The WAL with direct I/O (O_DIRECT | O_DSYNC segments).
            "wal_level=minimal",
            "max_wal_senders=0",
            "wal_sync_method=open_datasync",
            "shared_buffers=16MB",
        ] {
            args.extend(["-c".into(), setting.into()]);
        }
        let mut cmd = match exec {
            Some((report, cinterrupts)) => {
                let mut all: Vec<String> =
                    ["exec", "--device", "optane", "--output-format", "json"]
                        .map(String::from)
                        .to_vec();
                all.extend(marks.iter().map(|m| m.to_string()));
                all.push("-o".into());
                all.push(report.display().to_string());
                all.push("--".into());
                if root() {
                    // exec as root, the server becoming postgres under it
                    // (issue 24 item 3: a server that drops privileges).
                    let mut c = Command::new(cinterrupts);
                    c.args(all)
                        .args(["runuser", "-u", "postgres", "--"])
                        .arg(tool("postgres"))
                        .args(args);
                    c
                } else {
                    all.push(tool("postgres"));
                    all.extend(args);
                    as_postgres(&cinterrupts.display().to_string(), &all)
                }
            }
            None => as_postgres(&tool("postgres"), &args),
        };
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut s = Server {
            child,
            dir: dir.to_path_buf(),
        };
        let start = Instant::now();
        loop {
            let ready = Command::new(tool("pg_isready"))
                .args(["-q", "-h"])
                .arg(dir)
                .status()
                .unwrap();
            if ready.success() {
                break;
            }
            if let Some(status) = s.child.try_wait().unwrap() {
                panic!("postgres exited at start-up ({status})");
            }
            assert!(
                start.elapsed() < STEP,
                "postgres did not answer in {STEP:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    }

    fn psql(&self, sql: &str) -> String {
        ok(&mut as_postgres(
            "psql",
            &[
                "-X".into(),
                "-At".into(),
                "-h".into(),
                self.dir.display().to_string(),
                "-d".into(),
                "postgres".into(),
                "-v".into(),
                "ON_ERROR_STOP=1".into(),
                "-c".into(),
                sql.into(),
            ],
        ))
        .trim()
        .to_string()
    }

    fn pgbench(&self, args: &[&str]) -> String {
        let mut all = vec!["-h".to_string(), self.dir.display().to_string()];
        all.extend(args.iter().map(|s| s.to_string()));
        all.push("postgres".into());
        ok(&mut as_postgres(&tool("pgbench"), &all))
    }

    /// A fast shutdown, waited for.
    fn stop(mut self, mode: &str) -> std::process::ExitStatus {
        ok(&mut as_postgres(
            &tool("pg_ctl"),
            &[
                "-D".into(),
                self.dir.join("data").display().to_string(),
                "-m".into(),
                mode.into(),
                "-w".into(),
                "stop".into(),
            ],
        ));
        common::wait_within(&mut self.child, STEP, "postgres's shutdown")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = as_postgres(
                &tool("pg_ctl"),
                &[
                    "-D".into(),
                    self.dir.join("data").display().to_string(),
                    "-m".into(),
                    "immediate".into(),
                    "stop".into(),
                ],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// pgbench's books balance: every change to an account, teller or branch
/// is a row of history with its delta.
fn balances(s: &Server) -> String {
    s.psql(
        "select (select sum(abalance) from pgbench_accounts) || ' ' || \
                (select sum(tbalance) from pgbench_tellers) || ' ' || \
                (select sum(bbalance) from pgbench_branches) || ' ' || \
                (select coalesce(sum(delta), 0) from pgbench_history) || ' ' || \
                (select count(*) from pgbench_history)",
    )
}

/// A new cluster (initdb) in `DIR/data`, DIR under /tmp (ext4 here, so
/// O_DIRECT is real) and the postgres user's: the test's own target
/// directory may be closed to it. Fails naming scripts/setup first if
/// PostgreSQL's programs are missing.
fn cluster() -> tempfile::TempDir {
    for p in ["postgres", "initdb", "pg_ctl", "pg_isready", "pgbench"] {
        assert!(
            Path::new(&tool(p)).is_file(),
            "`{}` is not installed: run scripts/setup (apt-get install postgresql)",
            tool(p)
        );
    }
    require("psql", "postgresql-client");
    require("runuser", "util-linux");
    let dir = tempfile::Builder::new()
        .prefix("cinterrupts-pg.")
        .tempdir_in("/tmp")
        .unwrap();
    let d = dir.path();
    if root() {
        ok(Command::new("chown").arg("postgres").arg(d));
    }
    ok(&mut as_postgres(
        &tool("initdb"),
        &[
            "-D".into(),
            d.join("data").display().to_string(),
            "-A".into(),
            "trust".into(),
            "--no-sync".into(),
        ],
    ));
    dir
}

#[test]
fn postgres_with_direct_wal_under_exec_keeps_its_books_and_indexes_natively() {
    let _one = turn();
    let dir = cluster();
    let d = dir.path();
    let report = d.join("exec.json");
    let cinterrupts = common::reachable_cinterrupts(d);
    let server = Server::start(d, Some((&report, &cinterrupts)), &[]);
    let before = server.psql("select wal_write from pg_stat_wal");
    server.pgbench(&["-i", "-s", "2", "-q"]);
    let run = server.pgbench(&["-T", "3", "-c", "2"]);
    assert!(run.contains("number of failed transactions: 0"), "{run}");
    let under_exec = balances(&server);
    assert!(server.stop("fast").success());

    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let c = &r["cinterrupts"];
    let writes: u64 = c["exec"]["requests"]["writes"]
        .as_object()
        .unwrap_or_else(|| panic!("no requests.writes: {r}"))
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(writes > 20, "the WAL's direct writes routed: {c}");
    assert_eq!(c["exec"]["routing"]["errors"], 0, "{c}");
    let flushes: u64 = c["exec"]["requests"]["flushes"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    let commands = c["exec"]["routing"]["commands"].as_u64().unwrap();
    assert!(
        commands as f64 >= 0.95 * (writes + flushes) as f64,
        "routed: {commands} commands for {writes} writes and {flushes} flushes: {c}"
    );
    assert!(
        !c["exec"]["not_routed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["what"] == "region not mapped"),
        "{c}"
    );
    if root() {
        let postgres: u64 = String::from_utf8_lossy(
            &Command::new("id")
                .args(["-u", "postgres"])
                .output()
                .unwrap()
                .stdout,
        )
        .trim()
        .parse()
        .unwrap();
        let theirs = c["exec"]["processes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["uid"] == postgres)
            .count();
        assert!(
            theirs >= 2,
            "the server's processes report as postgres: {c}"
        );
    }

    // Natively: PostgreSQL's own count of its WAL writes agrees with exec's,
    // the books balance and every index is sound. `pg_stat_wal.wal_write`
    // counts each `pg_pwrite` of XLogWrite (PostgreSQL 15,
    // src/backend/access/transam/xlog.c, XLogWrite's write loop), and the
    // statistics survive a clean shutdown, so the count at the native
    // restart, less the count before the load, is every WAL write of the run
    // under exec, its shutdown checkpoint included. The count before the
    // load is initdb's (not under exec).
    let server = Server::start(d, None, &[]);
    let after = server.psql("select wal_write from pg_stat_wal");
    let own = after.parse::<u64>().unwrap() - before.parse::<u64>().unwrap();
    eprintln!("exec: {writes} WAL writes; pg_stat_wal: {own} ({before} before the load)");
    assert!(
        writes.abs_diff(own) * 10 <= own,
        "exec's {writes} WAL writes within 10% of pg_stat_wal's {own}"
    );
    let b = balances(&server);
    assert_eq!(b, under_exec, "the same books natively");
    let v: Vec<i64> = b.split(' ').map(|x| x.parse().unwrap()).collect();
    assert!(
        v[0] == v[1] && v[1] == v[2] && v[2] == v[3] && v[4] > 0,
        "{b}"
    );
    server.psql("create extension amcheck");
    let checked = server.psql(
        "select count(bt_index_check(c.oid, true)) from pg_index i \
         join pg_class c on c.oid = i.indexrelid join pg_am a on a.oid = c.relam \
         where a.amname = 'btree' and c.relname like 'pgbench%'",
    );
    assert_eq!(checked, "3", "the three pgbench primary keys checked");
    assert!(server.stop("fast").success());
}

/// `--marks-for postgres` (issue 24 item 6): the checkpointer's direct
/// writes (its WAL: PostgreSQL 15's data files are buffered, so exec sees
/// no data page) unmarked, the backends' and the WAL writer's WAL writes
/// and the flush command after each (O_DSYNC) Urgent, told apart by
/// process title in the report (`requests_by_title`).
#[test]
fn postgres_marks_for_postgres_unmarks_the_checkpointer_and_keeps_backends_wal_urgent() {
    let _one = turn();
    let dir = cluster();
    let d = dir.path();
    let report = d.join("exec.json");
    let cinterrupts = common::reachable_cinterrupts(d);
    let server = Server::start(
        d,
        Some((&report, &cinterrupts)),
        &["--marks-for", "postgres"],
    );
    server.pgbench(&["-i", "-s", "1", "-q"]);
    let run = server.pgbench(&["-T", "2", "-c", "2"]);
    assert!(run.contains("number of failed transactions: 0"), "{run}");
    // A checkpoint now, and the shutdown's: the checkpointer writes (and
    // flushes) their WAL records itself.
    server.psql("checkpoint");
    assert!(server.stop("fast").success());

    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let c = &r["cinterrupts"]["exec"];
    assert_eq!(c["marks_for"][0], "postgres", "{c}");
    let titles = c["requests_by_title"]
        .as_object()
        .unwrap_or_else(|| panic!("no requests_by_title: {c}"));
    // (urgent, barrier, unmarked) of `kind` added up over the titles that
    // contain `part`.
    let sum = |part: &str, kind: &str| {
        let mut t = (0, 0, 0);
        for (title, v) in titles {
            if title.contains(part) {
                let n = |m: &str| v[kind][m].as_u64().unwrap();
                t = (t.0 + n("urgent"), t.1 + n("barrier"), t.2 + n("unmarked"));
            }
        }
        t
    };
    let ckpt = sum("postgres: checkpointer", "writes");
    assert!(
        ckpt.0 == 0 && ckpt.1 == 0 && ckpt.2 > 0,
        "checkpointer {ckpt:?}: {c}"
    );
    let ckpt_flush = sum("postgres: checkpointer", "flushes");
    assert!(ckpt_flush.0 == 0 && ckpt_flush.2 > 0, "{ckpt_flush:?}: {c}");
    // The WAL writer's are log writes, on the commit path: Urgent.
    let ww = sum("postgres: walwriter", "writes");
    assert_eq!((ww.1, ww.2), (0, 0), "walwriter: {c}");
    // Backends: "postgres: USER DB [local] STATE".
    let backends = sum("[local]", "writes");
    let backend_flushes = sum("[local]", "flushes");
    assert!(
        backends.0 > 10 && backends.1 == 0 && backends.2 == 0,
        "backends {backends:?}: {c}"
    );
    assert!(
        backend_flushes.0 > 10 && backend_flushes.2 == 0,
        "{backend_flushes:?}: {c}"
    );
    eprintln!(
        "--marks-for postgres: checkpointer writes {ckpt:?} flushes {ckpt_flush:?}; walwriter writes {ww:?}; backends writes {backends:?} flushes {backend_flushes:?} (urgent, barrier, unmarked)"
    );
}

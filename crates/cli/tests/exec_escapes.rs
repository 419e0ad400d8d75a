//! `cinterrupts exec` leaves nothing out silently (issue 38 item 5, and
//! the signals of item 6): processes that outlive the program, a launch
//! through `setpriv`, io_uring under `--observe`, mmap write-back, an
//! inherited-ignored SIGINT, the I/O before an `execve`, usage errors, and
//! signals: every one passed on, `timeout`'s one SIGTERM counted once, a
//! program killed by a signal seen so by exec's parent.
//!
//! Each test failed before its fix (the commit says how). Every wait is
//! bounded; none times anything tightly.

mod common;

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, compile_c, output_within, require, stderr, turn};
use serde_json::Value;

const BOUND: Duration = Duration::from_secs(60);
const BLOCK: usize = 4096;

/// A directory every user can read (a test's program may become nobody).
fn open_dir() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("cinterrupts-escapes.")
        .tempdir_in("/tmp")
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// A file of `blocks` 4 KiB blocks, readable by all.
fn data(dir: &Path, blocks: usize) -> PathBuf {
    let p = dir.join("data");
    std::fs::write(&p, vec![7u8; blocks * BLOCK]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
    p
}

/// `exec EXTRA --output-format json -o REPORT -- PROGRAM`, bounded.
fn exec(dir: &Path, extra: &[&str], program: &[&str]) -> (Output, Value) {
    let report = dir.join("report.json");
    let _ = std::fs::remove_file(&report);
    let mut c = bin();
    c.current_dir(dir)
        .arg("exec")
        .args(extra)
        .args(["--output-format", "json", "-o"])
        .arg(&report)
        .arg("--")
        .args(program);
    let o = output_within(&mut c, BOUND);
    let v = std::fs::read(&report)
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or_else(|e| panic!("no report ({e}): {}", stderr(&o)));
    (o, v)
}

fn reads(v: &Value) -> u64 {
    let r = &v["cinterrupts"]["exec"]["requests"]["reads"];
    ["urgent", "barrier", "unmarked"]
        .iter()
        .map(|k| r[k].as_u64().unwrap())
        .sum()
}

fn not_routed<'a>(v: &'a Value, what: &str) -> Vec<&'a Value> {
    v["cinterrupts"]["exec"]["not_routed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["what"] == what)
        .collect()
}

fn limits(v: &Value) -> Vec<String> {
    v["cinterrupts"]["exec"]["limits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

/// A daemon's double fork (`pg_ctl start`): the program exits at once, its
/// grandchild reads 16 blocks with O_DIRECT half a second later. Before:
/// exec reported 0 reads and exited while the grandchild ran unrouted.
/// Now exec waits for it, its reads routed and counted, and says so in
/// one line.
#[test]
fn a_daemons_double_fork_is_waited_for_and_routed() {
    let _one = turn();
    let dir = open_dir();
    let file = data(dir.path(), 16);
    let done = dir.path().join("done");
    let script = format!(
        "( ( sleep 0.5; dd if={f} of=/dev/null bs=4096 count=16 iflag=direct 2>/dev/null; touch {d} ) & ); exit 0",
        f = file.display(),
        d = done.display()
    );
    let (o, v) = exec(dir.path(), &[], &["sh", "-c", &script]);
    assert!(o.status.success(), "{}", stderr(&o));
    // exec ended after the grandchild, not before.
    assert!(done.exists(), "exec ended before its program's daemon");
    assert_eq!(reads(&v), 16, "{v}");
    assert_eq!(v["cinterrupts"]["completions"], 16, "{v}");
    let outlived = v["cinterrupts"]["exec"]["outlived"].as_array().unwrap();
    assert!(
        outlived
            .iter()
            .any(|p| p["comm"] == "sleep" || p["comm"] == "sh"),
        "{v}"
    );
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("still run")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("exec waits for them"), "{err}");
}

/// A program launched through `setpriv` or `runuser` to another user (as
/// the README's `runuser -u postgres`): the library's trap of inline io_uring calls
/// cannot be installed there (seccomp needs CAP_SYS_ADMIN or
/// no_new_privs), but none of these processes makes a ring. Before: each
/// was named "inline io_uring calls not trapped" and said so on stderr at
/// its start. Now: not named, one limit line; its reads still routed.
#[test]
fn a_launch_through_setpriv_has_no_false_untrapped_entries() {
    let _one = turn();
    require("setpriv", "util-linux");
    require("runuser", "util-linux");
    assert_eq!(
        // SAFETY: geteuid cannot fail.
        unsafe { libc::geteuid() },
        0,
        "this test runs as root, as the README's runuser launch does"
    );
    let dir = open_dir();
    let file = data(dir.path(), 8);
    let script = format!(
        "dd if={} of=/dev/null bs=4096 count=8 iflag=direct 2>/dev/null",
        file.display()
    );
    for launch in [
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ][..],
        &["runuser", "-u", "nobody", "--"][..],
    ] {
        let mut program = launch.to_vec();
        program.extend(["sh", "-c", &script]);
        let (o, v) = exec(dir.path(), &[], &program);
        untrapped_but_unused(&o, &v);
    }
}

fn untrapped_but_unused(o: &Output, v: &Value) {
    assert!(o.status.success(), "{}", stderr(o));
    assert_eq!(reads(v), 8, "{v}");
    assert!(
        not_routed(v, "inline io_uring calls not trapped").is_empty(),
        "{v}"
    );
    let err = stderr(o);
    assert!(!err.contains("are not routed"), "{err}");
    assert!(
        limits(v)
            .iter()
            .any(|l| l.contains("none of which set up an io_uring ring")),
        "{v}"
    );
}

/// `--observe` with an io_uring program (fio): the report said
/// `io_uring: "route"` while the rings were the kernel's, uncounted. Now
/// it says `pass`, names the ring and says why in a limit line.
#[test]
fn observe_says_its_io_uring_rings_are_the_kernels() {
    let _one = turn();
    require("fio", "fio");
    let dir = open_dir();
    let file = data(dir.path(), 64);
    let f = format!("--filename={}", file.display());
    let (o, v) = exec(
        dir.path(),
        &["--observe"],
        &[
            "fio",
            "--name=r",
            &f,
            "--rw=randread",
            "--bs=4k",
            "--ioengine=io_uring",
            "--direct=1",
            "--iodepth=4",
            "--number_ios=64",
            "--output-format=terse",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = &v["cinterrupts"]["exec"];
    assert_eq!(e["io_uring"], "pass", "{v}");
    assert_eq!(e["calls"]["io_uring"], 0, "{v}");
    assert!(
        limits(&v).iter().any(|l| l.starts_with("--observe:")),
        "{v}"
    );
    assert!(!not_routed(
        &v,
        "io_uring ring set up (its requests are neither routed nor counted)"
    )
    .is_empty());
}

/// A program that maps its file shared and writable, writes through the
/// mapping, then runs another program with `execv` after 8 O_DIRECT
/// reads. Before: no word of the mapping, and the 8 reads were lost with
/// the image. Now: "mmap write-back" names it, and the reads are kept.
#[test]
fn mmap_write_back_is_named_and_io_before_execve_is_kept() {
    let _one = turn();
    let dir = open_dir();
    let file = data(dir.path(), 8);
    let exe = compile_c(
        dir.path(),
        "mapper",
        r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY | O_DIRECT);
    void *buf;
    if (fd < 0 || posix_memalign(&buf, 4096, 4096)) return 10;
    for (int i = 0; i < 8; i++)
        if (pread(fd, buf, 4096, i * 4096) != 4096) return 11;
    int w = open(argv[1], O_RDWR);
    char *m = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, w, 0);
    if (m == MAP_FAILED) return 12;
    m[1] = 9;
    /* A tmpfs mapping (a memfd) has no write-back to a disk. */
    int t = memfd_create("x", 0);
    if (ftruncate(t, 4096) || mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, t, 0) == MAP_FAILED) return 13;
    char *args[] = {"true", 0};
    execv("/bin/true", args);
    return 14;
}
"#,
        &["-O2", "-Wall"],
    );
    let (o, v) = exec(
        dir.path(),
        &[],
        &[exe.to_str().unwrap(), file.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(reads(&v), 8, "{v}");
    let m = not_routed(&v, "mmap write-back");
    assert_eq!(m.len(), 1, "{v}");
    assert_eq!(m[0]["calls"], 1, "{v}");
    assert_eq!(m[0]["comm"], "mapper", "{v}");
    // Both images reported, the same process.
    let procs = v["cinterrupts"]["exec"]["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 2, "{v}");
    assert_eq!(procs[0]["pid"], procs[1]["pid"], "{v}");
}

/// SIGINT ignored by exec's launcher (a script's `cmd &`, `nohup`): it
/// stays ignored for the program, as a shell leaves it, and exec says so.
#[test]
fn an_inherited_ignored_sigint_stays_ignored_and_is_said() {
    let _one = turn();
    let dir = open_dir();
    let report = dir.path().join("report.json");
    let mut c = bin();
    c.arg("exec")
        .args(["--output-format", "json", "-o"])
        .arg(&report)
        .args(["--", "sh", "-c", "grep SigIgn /proc/self/status"]);
    // SAFETY: in the forked child, before exec: an async-signal-safe call.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        })
    };
    let o = output_within(&mut c, BOUND);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let mask = out
        .split_whitespace()
        .nth(1)
        .and_then(|m| u64::from_str_radix(m, 16).ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert_ne!(mask & (1 << (libc::SIGINT - 1)), 0, "{out}");
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let said: Vec<String> = limits(&v)
        .into_iter()
        .filter(|l| l.starts_with("SIGINT was ignored"))
        .collect();
    assert_eq!(said.len(), 1, "{v}");
    assert_eq!(
        stderr(&o)
            .lines()
            .filter(|l| l.contains("SIGINT was ignored"))
            .count(),
        1,
        "{}",
        stderr(&o)
    );
}

/// Usage errors: exit 2 and one line, as the README says, for every bad
/// option value; a missing `--` gets the command line it meant; a
/// `--stage-size` too small for the file system is refused before any
/// device is made or anything said mounted.
#[test]
fn usage_errors_exit_2_in_one_line_with_a_hint_for_a_missing_dash_dash() {
    let dir = open_dir();
    let one_line = |o: &Output| {
        let err = stderr(o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        err
    };
    let o = output_within(
        bin().args(["exec", "--policy", "bogus", "--", "true"]),
        BOUND,
    );
    assert!(one_line(&o).contains("--policy"));
    let o = output_within(
        bin().args(["exec", "--device", "bogus", "--", "true"]),
        BOUND,
    );
    one_line(&o);
    let o = output_within(bin().args(["exec", "--quiet", "fio", "job.fio"]), BOUND);
    let err = one_line(&o);
    assert!(
        err.contains("cinterrupts exec --quiet -- fio job.fio"),
        "{err}"
    );
    let d = dir.path().to_str().unwrap();
    let o = output_within(
        bin().args(["exec", "--stage", d, "--stage-size", "1m", "--", "true"]),
        BOUND,
    );
    let err = one_line(&o);
    assert!(err.contains("--stage-size"), "{err}");
    assert!(!err.contains("mounted"), "{err}");
}

/// `exec -- PROGRAM` started with its stderr in a file; the program
/// writes `$D/ready` once its traps are set.
fn spawn_traps(dir: &Path, extra: &[&str], script: &str) -> std::process::Child {
    let err = std::fs::File::create(dir.join("stderr")).unwrap();
    let mut c = bin();
    // The signals a launcher may leave ignored (nohup, a script's `cmd &`,
    // a CI runner): exec keeps an inherited ignore for the program, and a
    // non-interactive shell cannot trap a signal ignored on entry (POSIX,
    // "trap"), so the test gives exec the defaults a job-control shell
    // gives a foreground job.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        })
    };
    c.current_dir(dir)
        // A process group of its own, as a job-control shell gives a job:
        // the kernel discards SIGTSTP sent to a process of an orphaned
        // group (kernel/signal.c, get_signal: `is_current_pgrp_orphaned`
        // for a stop signal other than SIGSTOP; POSIX), and a suite run from a
        // background launcher can be one. Exec's parent, the test, is then
        // in another group of the same session.
        .process_group(0)
        .arg("exec")
        .args(extra)
        .args(["--output-format", "json", "-o"])
        .arg(dir.join("report.json"))
        .args(["--", "sh", "-c"])
        .arg(format!("D='{}'; {script}", dir.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap()
}

/// A process SIGKILLed when dropped (gone already: nothing happens, the
/// test's processes are short-lived and pids are not reused so fast).
struct Killed(i32);

impl Drop for Killed {
    fn drop(&mut self) {
        // SAFETY: a process the test started (through exec).
        unsafe { libc::kill(self.0, libc::SIGKILL) };
    }
}

fn read_pid(p: &Path) -> i32 {
    std::fs::read_to_string(p).unwrap().trim().parse().unwrap()
}

fn wait_for(what: &str, f: impl Fn() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < BOUND, "still not {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_exit(c: &mut std::process::Child) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(st) = c.try_wait().unwrap() {
            return st;
        }
        if start.elapsed() > BOUND {
            let _ = c.kill();
            panic!("exec still running");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// USR1, USR2, QUIT, WINCH, ALRM and a real-time signal sent to exec all
/// reach the program (before: any but INT, TERM and HUP killed exec and
/// orphaned the program). The program records each and exits 0 at USR2.
#[test]
fn every_signal_sent_to_exec_reaches_the_program() {
    let _one = turn();
    let dir = open_dir();
    let script =
        "for s in USR1 QUIT WINCH ALRM 35; do trap \"echo $s >> \\\"\\$D/got\\\"\" $s; done; \
                  trap 'exit 0' USR2; echo $$ > \"$D/pid\"; touch \"$D/ready\"; while :; do sleep 0.05; done";
    let mut c = spawn_traps(dir.path(), &[], script);
    let ready = dir.path().join("ready");
    wait_for("ready", || ready.exists());
    // The program ended whatever happens (an exec killed by a signal left
    // it running before).
    let _program = Killed(read_pid(&dir.path().join("pid")));
    let got = dir.path().join("got");
    let lines = || {
        std::fs::read_to_string(&got)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let pid = c.id() as i32;
    for (k, sig) in [
        libc::SIGUSR1,
        libc::SIGQUIT,
        libc::SIGWINCH,
        libc::SIGALRM,
        libc::SIGRTMIN() + 1,
    ]
    .into_iter()
    .enumerate()
    {
        // SAFETY: our child.
        unsafe { libc::kill(pid, sig) };
        wait_for("the program's trap", || lines() > k);
    }
    // SAFETY: our child.
    unsafe { libc::kill(pid, libc::SIGUSR2) };
    let st = wait_exit(&mut c);
    let err = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert_eq!(st.code(), Some(0), "{err}");
    let got = std::fs::read_to_string(&got).unwrap();
    assert_eq!(
        got.lines().collect::<Vec<_>>(),
        ["USR1", "QUIT", "WINCH", "ALRM", "35"],
        "{got}"
    );
}

/// The state letter of /proc/PID/stat (`T`: stopped).
fn state(pid: i32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit(')')
        .next()
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("")
        .to_string()
}

/// SIGTSTP sent to exec stops the program and then exec (a shell waiting
/// for exec sees its job stop); SIGCONT continues both. Before: exec
/// stopped alone, the program ran on.
#[test]
fn sigtstp_stops_the_program_and_exec_and_sigcont_continues_both() {
    let _one = turn();
    let dir = open_dir();
    let script = "echo $$ > \"$D/pid\"; touch \"$D/ready\"; trap 'exit 0' USR2; \
                  while :; do sleep 0.05; done";
    let mut c = spawn_traps(dir.path(), &[], script);
    let ready = dir.path().join("ready");
    wait_for("ready", || ready.exists());
    let program = read_pid(&dir.path().join("pid"));
    let _program = Killed(program);
    let exec = c.id() as i32;
    let _exec = Killed(exec);
    // SAFETY: our child.
    unsafe { libc::kill(exec, libc::SIGTSTP) };
    wait_for("both stopped", || {
        state(exec) == "T" && state(program) == "T"
    });
    // SAFETY: our child.
    unsafe { libc::kill(exec, libc::SIGCONT) };
    wait_for("both running", || {
        state(exec) != "T" && state(program) != "T"
    });
    // SAFETY: our child.
    unsafe { libc::kill(exec, libc::SIGUSR2) };
    let st = wait_exit(&mut c);
    // Once (1 in about 10 runs, a loaded machine, 2026-12-07) exec ended
    // by a signal here: the status and exec's stderr say which next time.
    assert_eq!(
        st.code(),
        Some(0),
        "{st:?}; exec's stderr: {}",
        std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default()
    );
}

/// `timeout` sends its SIGTERM to exec and then to its whole group, exec
/// included (coreutils timeout.c). Before: counted as a second signal,
/// the program (which takes 0.5 s to shut down on SIGTERM) was killed.
/// Now it shuts down, its status passes through.
#[test]
fn timeouts_group_sigterm_is_one_signal() {
    let _one = turn();
    require("timeout", "coreutils");
    let dir = open_dir();
    let report = dir.path().join("report.json");
    let mut c = Command::new("timeout");
    c.args(["--preserve-status", "1"])
        .arg(env!("CARGO_BIN_EXE_cinterrupts"))
        .args(["exec", "--output-format", "json", "-o"])
        .arg(&report)
        .args([
            "--",
            "sh",
            "-c",
            "trap 'sleep 0.5; exit 7' TERM; while :; do sleep 0.05; done",
        ]);
    let o = output_within(&mut c, BOUND);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(
        v["cinterrupts"]["exec"]["killed_after_signal"],
        Value::Null,
        "{v}"
    );
    assert_eq!(
        v["cinterrupts"]["exec"]["interrupted_by"]["name"],
        "SIGTERM"
    );
}

/// The same SIGTERM sent twice by one sender 30 ms apart (timeout's two
/// sends, to exec and to its group, made so that the second does not
/// merge with the first while it is pending; within `signals::SAME_SEND`,
/// 100 ms): one signal, passed on once; the program's own 0.5 s shutdown
/// is not cut short by a SIGKILL.
#[test]
fn one_senders_repeated_sigterm_is_one_signal() {
    let _one = turn();
    let dir = open_dir();
    let script = "trap 'sleep 0.5; exit 7' TERM; echo $$ > \"$D/pid\"; touch \"$D/ready\"; \
                  while :; do sleep 0.05; done";
    let mut c = spawn_traps(dir.path(), &[], script);
    let ready = dir.path().join("ready");
    wait_for("ready", || ready.exists());
    let _program = Killed(read_pid(&dir.path().join("pid")));
    for _ in 0..2 {
        // SAFETY: our child.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        std::thread::sleep(Duration::from_millis(30));
    }
    let st = wait_exit(&mut c);
    let err = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert_eq!(st.code(), Some(7), "{err}");
    let v: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    assert_eq!(
        v["cinterrupts"]["exec"]["killed_after_signal"],
        Value::Null,
        "{v}"
    );
}

/// A program killed by SIGSEGV or SIGABRT: exec's parent sees the wait
/// status the kernel gave it (WIFSIGNALED), not exit 139 or 134.
#[test]
fn a_signalled_program_is_seen_signalled_by_execs_parent() {
    let _one = turn();
    let dir = open_dir();
    for (sig, name) in [(libc::SIGSEGV, "SEGV"), (libc::SIGABRT, "ABRT")] {
        let (o, v) = exec(dir.path(), &[], &["sh", "-c", &format!("kill -{name} $$")]);
        assert_eq!(o.status.signal(), Some(sig), "{}", stderr(&o));
        assert_eq!(o.status.code(), None);
        assert_eq!(v["cinterrupts"]["exec"]["status"]["signal"], sig, "{v}");
    }
}

/// `--kill-after` is opt-in: `--help` says exec waits for the program's
/// own shutdown by default.
#[test]
fn kill_after_is_opt_in_and_help_says_so() {
    let o = output_within(bin().args(["exec", "--help"]), BOUND);
    let help = String::from_utf8_lossy(&o.stdout).replace('\n', " ");
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("Default: never by the clock"), "{help}");
}

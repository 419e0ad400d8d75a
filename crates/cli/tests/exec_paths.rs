//! Issue 24 items 2 and 3 under `cinterrupts exec`: every path a program
//! takes to the disk is routed or named (inline aio and io_uring system
//! calls through the seccomp filter, a statically linked program); a
//! process that becomes another user is routed; a signal handler's O_DIRECT
//! `pread` inside a routed `pread` passes through exactly (it deadlocked);
//! an `exec` run as a user says what it cannot do there.
//!
//! Each program is a small C file compiled here; files live in Cargo's
//! target tmp directory (ext4 on this VM, which enforces O_DIRECT's
//! alignment). Every run is bounded.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{exec_device_json, output_within, require, stderr, turn};
use serde_json::Value;

const BOUND: Duration = Duration::from_secs(120);
const BLOCK: usize = 4096;

/// A directory every user can reach (the programs below become `nobody`).
fn open_dir() -> tempfile::TempDir {
    // Under /tmp: the clone's own target directory may sit under a
    // directory closed to other users (a CI clone in a 0700 mktemp
    // directory did).
    let d = tempfile::Builder::new()
        .prefix("cinterrupts-paths.")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// `cinterrupts` run as nobody: a copy in `dir` (an open directory), so
/// that the directories above the build (a CI clone in a 0700 mktemp
/// directory) do not matter.
fn as_nobody(dir: &Path) -> Command {
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid",
        "nobody",
        "--regid",
        "nogroup",
        "--clear-groups",
        "--",
    ])
    .arg(common::reachable_cinterrupts(dir));
    c
}

/// `src` compiled to `dir/name`.
fn compile(dir: &Path, name: &str, src: &str) -> PathBuf {
    common::compile_c(dir, name, src, &["-O2", "-Wall"])
}

/// A file of `blocks` 4 KiB blocks, block k filled with byte k % 251,
/// readable by everyone.
fn data_file(dir: &Path, blocks: usize) -> PathBuf {
    let p = dir.join("data");
    let mut v = Vec::with_capacity(blocks * BLOCK);
    for k in 0..blocks {
        v.extend(vec![(k % 251) as u8; BLOCK]);
    }
    std::fs::write(&p, v).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    p
}

fn report(path: &Path) -> Value {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["cinterrupts"]["exec"].clone()
}

/// The `not_routed` entries whose `what` starts with `what`.
fn named<'a>(r: &'a Value, what: &str) -> Vec<&'a Value> {
    r["not_routed"]
        .as_array()
        .unwrap_or_else(|| panic!("no not_routed: {r}"))
        .iter()
        .filter(|n| n["what"].as_str().unwrap_or("").starts_with(what))
        .collect()
}

/// Raw x86_64 system calls with all six registers set, as libaio's and
/// liburing's own stubs make them (no PLT, no glibc `syscall()`).
const RAW: &str = r#"
static long raw6(long n, long a1, long a2, long a3, long a4, long a5, long a6) {
    long r;
    register long r10 __asm__("r10") = a4;
    register long r8 __asm__("r8") = a5;
    register long r9 __asm__("r9") = a6;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a1), "S"(a2), "d"(a3),
                     "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return r;
}
"#;

#[test]
fn inline_aio_and_io_uring_calls_are_named_and_run_unchanged() {
    let _one = turn();
    let dir = open_dir();
    let src = format!(
        r#"
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/aio_abi.h>
{RAW}
int main(void) {{
    aio_context_t ctx = 0;
    if (raw6(SYS_io_setup, 8, (long)&ctx, 0, 0, 0, 0) != 0) return 10;
    /* nr 0: the kernel returns 0 and does nothing. */
    for (int i = 0; i < 5; i++)
        if (raw6(SYS_io_submit, ctx, 0, 0, 0, 0, 0) != 0) return 11;
    /* The library's own marker: let through by the filter, not named. */
    if (raw6(SYS_io_destroy, ctx, 0, 0, 0, 0, 0xc1c1000000000024L) != 0) return 12;
    char params[120];
    memset(params, 0, sizeof params);
    long ring = raw6(425 /* io_uring_setup */, 4, (long)params, 0, 0, 0, 0);
    printf("%ld\n", ring);
    return ring >= 0 ? 0 : 13;
}}
"#
    );
    let exe = compile(dir.path(), "inline", &src);
    let rep = dir.path().join("report.json");
    // `--io-uring pass`: the ring is the kernel's, named (under the default
    // `route` the library traps the inline setup and routes the ring:
    // io_uring_setup_is_routed_by_default_..., below).
    let o = output_within(
        exec_device_json(&rep)
            .args(["--io-uring", "pass"])
            .arg("--")
            .arg(&exe),
        BOUND,
    );
    assert!(o.status.success(), "{o:?}");
    let r = report(&rep);
    let one = |what: &str, calls: u64| {
        let n = named(&r, what);
        assert_eq!(n.len(), 1, "{what}: {r}");
        assert_eq!(n[0]["calls"], calls, "{what}: {r}");
        assert_eq!(n[0]["comm"], "inline", "{r}");
        assert!(n[0]["pid"].as_u64().unwrap() > 0, "{r}");
    };
    one("inline io_setup", 1);
    one("inline io_submit", 5);
    one("io_uring ring", 1);
    assert!(named(&r, "inline io_destroy").is_empty(), "{r}");
    // Once on stderr per kind.
    let err = stderr(&o);
    for kind in ["inline io_setup", "inline io_submit", "io_uring ring"] {
        let lines = err
            .lines()
            .filter(|l| l.starts_with(&format!("cinterrupts: exec: not routed: {kind}")))
            .count();
        assert_eq!(lines, 1, "{kind}: {err}");
    }
}

/// `io_uring_setup` made inline (liburing's way) and through glibc's
/// `syscall()` (fio's), then `io_uring_enter` on no ring: each result and
/// errno on one line.
const URING: &str = r#"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
RAW
int main(void) {
    char params[120];
    memset(params, 0, sizeof params);
    long inl = raw6(425 /* io_uring_setup */, 4, (long)params, 0, 0, 0, 0);
    memset(params, 0, sizeof params);
    errno = 0;
    long lib = syscall(425, 4, params);
    int lib_errno = errno;
    /* fd -1: EBADF from a kernel with io_uring, ENOSYS from one without. */
    long enter = raw6(426 /* io_uring_enter */, -1, 0, 0, 0, 0, 0);
    printf("inline %s syscall %s errno %d enter %ld\n", inl >= 0 ? "ring" : strerror(-inl),
           lib >= 0 ? "ring" : "failed", lib_errno, enter);
    return 0;
}
"#;

/// Issue 25 item 1: under `--io-uring refuse` every `io_uring_setup` fails
/// with ENOSYS, as on a kernel built without io_uring, whichever way it is
/// made, each named; under `route` (the default), `pass` and natively, a
/// ring: routed, the kernel's (named), the kernel's.
#[test]
fn io_uring_setup_gets_enosys_under_refuse_and_a_ring_under_route_pass_and_natively() {
    let _one = turn();
    let dir = open_dir();
    let exe = compile(dir.path(), "uring", &URING.replace("RAW", RAW));
    let stdout = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let native = output_within(&mut Command::new(&exe), BOUND);
    assert_eq!(
        stdout(&native),
        "inline ring syscall ring errno 0 enter -9\n",
        "{native:?}"
    );
    for mode in [None, Some("pass")] {
        let rep = dir.path().join("pass.json");
        let mut c = exec_device_json(&rep);
        if let Some(m) = mode {
            c.args(["--io-uring", m]);
        }
        let o = output_within(c.arg("--").arg(&exe), BOUND);
        assert!(o.status.success(), "{o:?}");
        assert_eq!(stdout(&o), stdout(&native), "{mode:?}: {o:?}");
        let r = report(&rep);
        assert_eq!(r["io_uring"], mode.unwrap_or("route"), "{r}");
        // Both setups (inline: trapped; syscall(): interposed) are routed
        // under route; the kernel's rings are named under pass.
        let rings = usize::from(mode == Some("pass"));
        assert_eq!(named(&r, "io_uring ring").len(), rings, "{r}");
        assert!(named(&r, "io_uring refused").is_empty(), "{r}");
    }
    let rep = dir.path().join("refuse.json");
    let o = output_within(
        exec_device_json(&rep)
            .args(["--io-uring", "refuse"])
            .arg("--")
            .arg(&exe),
        BOUND,
    );
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        stdout(&o),
        format!(
            "inline {} syscall failed errno {} enter -{}\n",
            std::io::Error::from_raw_os_error(libc::ENOSYS)
                .to_string()
                .split(" (os error")
                .next()
                .unwrap(),
            libc::ENOSYS,
            libc::ENOSYS
        ),
        "{o:?}"
    );
    let r = report(&rep);
    assert_eq!(r["io_uring"], "refuse", "{r}");
    assert!(named(&r, "io_uring ring").is_empty(), "{r}");
    // One entry for the process: the listener's refusal and the library's.
    let n = named(&r, "io_uring refused");
    assert_eq!(n.len(), 1, "{r}");
    assert_eq!(n[0]["calls"], 2, "{r}");
    assert_eq!(n[0]["comm"], "uring", "{r}");
    // Said once on stderr, with the limit line.
    let err = stderr(&o);
    for start in [
        "cinterrupts: exec: not routed: io_uring refused",
        "cinterrupts: exec: limit: io_uring refused (--io-uring refuse)",
    ] {
        assert_eq!(
            err.lines().filter(|l| l.starts_with(start)).count(),
            1,
            "{start}: {err}"
        );
    }
}

/// `exec` run as a user (no CAP_SYS_ADMIN: the filter goes in with
/// no_new_privs) refuses the same way: the filter is there.
#[test]
fn io_uring_is_refused_for_exec_as_nobody_too() {
    require("setpriv", "util-linux");
    let _one = turn();
    let dir = open_dir();
    let exe = compile(dir.path(), "uring", &URING.replace("RAW", RAW));
    let rep = dir.path().join("nobody.json");
    let o = output_within(
        as_nobody(dir.path())
            .args([
                "exec",
                "--io-uring",
                "refuse",
                "--output-format",
                "json",
                "-o",
            ])
            .arg(&rep)
            .arg("--")
            .arg(&exe),
        BOUND,
    );
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.ends_with(&format!(
            "syscall failed errno {} enter -{}\n",
            libc::ENOSYS,
            libc::ENOSYS
        )) && !out.contains("ring"),
        "{out}"
    );
    let r = report(&rep);
    let n = named(&r, "io_uring refused");
    assert_eq!(n.len(), 1, "{r}");
    assert_eq!(n[0]["calls"], 2, "{r}");
    assert!(
        r["limits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap_or("").contains("exec's seccomp listener")),
        "{r}"
    );
}

/// fio's io_uring engine under `--io-uring refuse` fails as on a kernel
/// without io_uring, with fio's own error line, and exec names the
/// refusal; a bad `--io-uring` value is one clap line naming the option.
#[test]
fn fio_io_uring_engine_under_refuse_fails_with_its_own_error_and_is_named() {
    require("fio", "fio");
    let _one = turn();
    let dir = open_dir();
    let data = data_file(dir.path(), 64);
    let rep = dir.path().join("fio.json");
    let o = output_within(
        exec_device_json(&rep)
            .args(["--io-uring", "refuse", "--", "fio", "--name=uring"])
            .arg(format!("--filename={}", data.display()))
            .args([
                "--ioengine=io_uring",
                "--direct=1",
                "--rw=randread",
                "--bs=4k",
                "--size=256k",
            ]),
        BOUND,
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    // fio 3.33, engines/io_uring.c: the job's error and its hint.
    for line in [
        "func=io_queue_init, error=Function not implemented",
        "fio: your kernel doesn't support io_uring",
    ] {
        assert!(out.contains(line), "no '{line}': {out}");
    }
    let r = report(&rep);
    let n = named(&r, "io_uring refused");
    assert_eq!(n.len(), 1, "{r}");
    assert_eq!(n[0]["comm"], "fio", "{r}");
    assert!(n[0]["calls"].as_u64().unwrap() >= 1, "{r}");

    let bad = output_within(
        common::bin().args(["exec", "--io-uring", "maybe", "--", "true"]),
        BOUND,
    );
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let err = stderr(&bad);
    assert!(
        err.lines()
            .next()
            .unwrap_or("")
            .contains("invalid value 'maybe' for '--io-uring <route|pass|refuse>'"),
        "{err}"
    );
}

#[test]
fn a_statically_linked_program_is_named_before_it_runs() {
    let _one = turn();
    let dir = open_dir();
    // Its own aio call is still named (the filter needs no library).
    let src = format!(
        "#include <sys/syscall.h>\n#include <linux/aio_abi.h>\n{RAW}\n\
             int main(void) {{ aio_context_t c = 0; \
             return raw6(SYS_io_setup, 4, (long)&c, 0, 0, 0, 0) != 0; }}\n"
    );
    let exe = common::compile_c(dir.path(), "static", &src, &["-static"]);
    let rep = dir.path().join("report.json");
    let o = output_within(exec_device_json(&rep).arg("--").arg(&exe), BOUND);
    assert!(o.status.success(), "{o:?}");
    let r = report(&rep);
    let n = named(&r, "statically linked program");
    assert_eq!(n.len(), 1, "{r}");
    assert!(n[0]["why"].as_str().unwrap().contains("PT_INTERP"), "{r}");
    assert_eq!(n[0]["pid"], named(&r, "inline io_setup")[0]["pid"], "{r}");
    assert_eq!(named(&r, "inline io_setup")[0]["calls"], 1, "{r}");
    assert!(
        stderr(&o).contains("not routed: ") && stderr(&o).contains("is statically linked"),
        "{}",
        stderr(&o)
    );
}

/// The C program that reads `data` with O_DIRECT preads, block k holding
/// byte k % 251: `setuid` to nobody first when asked.
fn reader_src(become_nobody: bool) -> String {
    format!(
        r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {{
    int blocks = atoi(argv[2]), n = atoi(argv[3]);
    if ({become_nobody} && (setgid(65534) != 0 || setuid(65534) != 0)) return 20;
    int fd = open(argv[1], O_RDONLY | O_DIRECT);
    if (fd < 0) return 21;
    unsigned char *buf;
    if (posix_memalign((void **)&buf, 4096, 4096)) return 22;
    for (int i = 0; i < n; i++) {{
        int k = (i * 7) % blocks;
        if (pread(fd, buf, 4096, (off_t)k * 4096) != 4096) return 23;
        for (int j = 0; j < 4096; j++) if (buf[j] != k % 251) return 24;
    }}
    printf("%d %d\n", getuid(), n);
    return 0;
}}
"#,
        become_nobody = i32::from(become_nobody)
    )
}

#[test]
fn a_program_that_becomes_nobody_is_routed() {
    let _one = turn();
    // SAFETY: getuid has no preconditions.
    assert_eq!(unsafe { libc::getuid() }, 0, "this test runs as root");
    let dir = open_dir();
    let data = data_file(dir.path(), 64);
    let exe = compile(dir.path(), "nobody", &reader_src(true));
    let rep = dir.path().join("report.json");
    const N: u64 = 200;
    let o = output_within(
        exec_device_json(&rep)
            .arg("--")
            .arg(&exe)
            .arg(&data)
            .args(["64", &N.to_string()]),
        BOUND,
    );
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("65534 {N}")
    );
    let r = report(&rep);
    // Its record came (written as nobody), and says so.
    let procs = r["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 1, "{r}");
    assert_eq!(procs[0]["uid"], 65534, "{r}");
    assert!(procs[0].get("unmapped").is_none(), "{r}");
    // Every pread went through the device.
    assert_eq!(r["requests"]["reads"]["urgent"], N, "{r}");
    assert_eq!(r["routing"]["commands"], N, "{r}");
    assert_eq!(r["not_routed"], serde_json::json!([]), "{r}");
    assert_eq!(r["processes_not_routed"], 0, "{r}");
}

#[test]
fn a_process_that_cannot_map_the_region_is_named() {
    let _one = turn();
    let dir = open_dir();
    let data = data_file(dir.path(), 8);
    let exe = compile(dir.path(), "nobody", &reader_src(true));
    let rep = dir.path().join("report.json");
    // The inherited descriptor gone (as a daemon that closes every
    // descriptor it did not open, then execs): the /proc path is left,
    // which nobody may not open. (bash: dash takes one-digit descriptors
    // only, and the region's is numbered high.)
    let o = output_within(
        exec_device_json(&rep)
            .arg("--")
            .args([
                "bash",
                "-c",
                "fd=${CINTERRUPTS_EXEC_SHM_FD%%:*}; eval \"exec $fd>&-\"; exec \"$@\"",
                "bash",
            ])
            .arg(&exe)
            .arg(&data)
            .args(["8", "10"]),
        BOUND,
    );
    assert!(o.status.success(), "{o:?}");
    let r = report(&rep);
    let n = named(&r, "region not mapped");
    assert_eq!(n.len(), 1, "{r}");
    assert_eq!(r["processes_not_routed"], 1, "{r}");
    assert_eq!(n[0]["uid"], 65534, "{r}");
    assert_eq!(n[0]["comm"], "nobody", "{r}");
    assert!(n[0]["why"].as_str().unwrap().contains("/proc/"), "{r}");
    assert!(
        stderr(&o).contains("not routed: region not mapped: nobody["),
        "{}",
        stderr(&o)
    );
    // Its reads were counted, not routed.
    assert_eq!(r["requests"]["reads"]["urgent"], 10, "{r}");
    assert_eq!(r["routing"]["commands"], 0, "{r}");
}

#[test]
fn preads_from_a_signal_handler_inside_a_routed_pread_pass_through() {
    let _one = turn();
    let dir = open_dir();
    let data = data_file(dir.path(), 64);
    let src = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>
static int fd;
static unsigned char *hbuf;
static volatile sig_atomic_t handled, bad;
static void on_alarm(int sig) {
    (void)sig;
    int k = (handled * 13) % 64;
    for (int r = 0; r < 2; r++) {
        if (pread(fd, hbuf, 4096, (off_t)k * 4096) != 4096) { bad = 1; return; }
        for (int j = 0; j < 4096; j++) if (hbuf[j] != k % 251) { bad = 2; return; }
    }
    handled++;
}
int main(int argc, char **argv) {
    int n = atoi(argv[2]);
    fd = open(argv[1], O_RDONLY | O_DIRECT);
    unsigned char *buf;
    if (fd < 0 || posix_memalign((void **)&buf, 4096, 4096) || posix_memalign((void **)&hbuf, 4096, 4096)) return 30;
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval it = {{0, 500}, {0, 500}};
    setitimer(ITIMER_REAL, &it, 0);
    for (int i = 0; i < n; i++) {
        int k = (i * 7) % 64;
        if (pread(fd, buf, 4096, (off_t)k * 4096) != 4096) return 31;
        for (int j = 0; j < 4096; j++) if (buf[j] != k % 251) return 32;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, 0);
    printf("%d %d\n", n, (int)handled);
    return bad ? 33 + bad : 0;
}
"#;
    let exe = compile(dir.path(), "handler", src);
    let rep = dir.path().join("report.json");
    let n = 4000;
    let o = output_within(
        exec_device_json(&rep)
            .arg("--")
            .arg(&exe)
            .arg(&data)
            .arg(n.to_string()),
        BOUND,
    );
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let handled: u64 = out.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(handled > 0, "the timer fired: {out}");
    let r = report(&rep);
    let reads = r["requests"]["reads"]["urgent"].as_u64().unwrap();
    let nested = &r["processes"][0]["counts"]["nested"];
    // Every pread is either routed (counted a request) or passed through
    // from inside a routed one (counted nested).
    assert_eq!(
        reads + nested.as_u64().unwrap(),
        n + 2 * handled,
        "{out}: {r}"
    );
    assert!(nested.as_u64().unwrap() > 0, "some landed inside: {r}");
    let named = named(&r, "call inside a routed call");
    assert_eq!(named.len(), 1, "{r}");
    assert_eq!(named[0]["calls"], *nested, "{r}");
}

#[test]
fn exec_as_nobody_says_what_it_cannot_do() {
    require("setpriv", "util-linux");
    let _one = turn();
    let dir = open_dir();
    let data = data_file(dir.path(), 16);
    let exe = compile(dir.path(), "reader", &reader_src(false));
    let rep = dir.path().join("report.json");
    let o = output_within(
        common::exec_device_json_by(as_nobody(dir.path()), &rep)
            .arg("--")
            .arg(&exe)
            .arg(&data)
            .args(["16", "50"]),
        BOUND,
    );
    assert!(o.status.success(), "{o:?}");
    let r = report(&rep);
    let limits: Vec<&str> = r["limits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        limits.iter().any(|l| l.contains("no SCHED_FIFO")),
        "{limits:?}"
    );
    assert!(
        limits.iter().any(|l| l.contains("no_new_privs")),
        "{limits:?}"
    );
    let err = stderr(&o);
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("cinterrupts: exec: limit: "))
            .count(),
        limits.len(),
        "{err}"
    );
    // Still routed, and the filter still watches.
    assert_eq!(r["requests"]["reads"]["urgent"], 50, "{r}");
    assert_eq!(r["routing"]["commands"], 50, "{r}");
}

//! Helpers shared by the binary's end-to-end tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Fails the calling test, in one line naming scripts/setup, unless
/// `program` is on the PATH: a test that needs a Debian package's program
/// never passes by skipping (issue 23). `package` installs it.
#[track_caller]
pub fn require(program: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    if !found {
        missing(program, package);
    }
}

/// As [`require`], for a shared library the dynamic linker must find.
#[track_caller]
pub fn require_library(soname: &std::ffi::CStr, package: &str) {
    // SAFETY: a NUL-terminated name; the handle is closed again at once.
    let h = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_LAZY) };
    if h.is_null() {
        missing(&soname.to_string_lossy(), package);
    }
    // SAFETY: the handle dlopen just returned.
    unsafe { libc::dlclose(h) };
}

#[track_caller]
fn missing(what: &str, package: &str) -> ! {
    panic!("`{what}` is not installed: run scripts/setup (apt-get install {package})");
}

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cinterrupts"))
}

/// The binary with no array task's variables (Slurm's, an Indexed Job's)
/// from the test's environment: `--store` verbs take their shard from them.
pub fn bin_outside_array() -> Command {
    let mut cmd = bin();
    for v in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_COUNT",
        "JOB_COMPLETION_INDEX",
    ] {
        cmd.env_remove(v);
    }
    cmd
}

/// The counts line a `--store` verb prints on stderr (`VERB: 15 runs: 9
/// stored before, 6 run now, 0 failed (...)`), without the verb and what
/// follows in parentheses.
pub fn store_counts(o: &Output, verb: &str) -> String {
    let err = stderr(o);
    let line = err.lines().find(|l| l.contains(" runs: "));
    let line = line.unwrap_or_else(|| panic!("no counts in: {err}"));
    let line = line.trim_start_matches(verb).trim_start_matches(": ");
    line.split(" (").next().unwrap().to_string()
}

/// `cmd`'s output, which must be a success (else its stderr is shown).
pub fn succeeds(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{:?}: {}", cmd.get_args(), stderr(&o));
    o
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Asserts a failure with exactly one line on stderr containing `want`.
/// The emulator's warning that another emulation on the machine holds a
/// CPU (`emu::run::claim`) is the machine's state, not the error's: it is
/// not counted (another test binary or user may be emulating beside us).
pub fn assert_one_line_error(o: &Output, want: &str) {
    assert!(!o.status.success(), "should fail: {}", stdout(o));
    let err = stderr(o);
    let lines = err
        .trim_end()
        .lines()
        .filter(|l| !l.starts_with("cinterrupts: contention: another emulation holds CPU"))
        .count();
    assert_eq!(lines, 1, "one line, got: {err}");
    assert!(err.contains(want), "'{want}' not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// What a bounded run of the binary did: its status and output, its peak
/// resident memory (the kernel's `ru_maxrss` for the child alone) and the
/// wall time it took. Issue 12: no hostile input may make a command use more
/// than 200 MB or run more than 10 s past its stated runtime.
pub struct Bounded {
    pub output: Output,
    pub max_rss_mib: f64,
    pub elapsed: std::time::Duration,
}

/// Runs `cmd` with `stdin` fed to it, kills it (and fails the test) if it runs
/// past `limit`, and measures its peak RSS through `wait4`.
pub fn bounded(mut cmd: Command, stdin: &[u8], limit: std::time::Duration) -> Bounded {
    use std::io::{Read, Write};
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let start = std::time::Instant::now();
    // Reaped below through wait4 (for its rusage), not Child::wait.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    // Feed and drain on their own threads so a full pipe never stalls the
    // child (or this test) and a child that never reads stdin is fine.
    let input = stdin.to_vec();
    let mut sink = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = sink.write_all(&input);
    });
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut killed = false;
    loop {
        // SAFETY: pid is our own child, not yet reaped; status and usage are
        // valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4 failed: {}", std::io::Error::last_os_error());
        if !killed && start.elapsed() > limit {
            // SAFETY: signalling our own live child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let elapsed = start.elapsed();
    let _ = feeder.join();
    let output = Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    };
    assert!(
        !killed,
        "still running after {limit:?}; stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Bounded {
        output,
        max_rss_mib: usage.ru_maxrss as f64 / 1024.0,
        elapsed,
    }
}

/// The memory bound for any command on hostile input.
pub const MEMORY_BOUND_MIB: f64 = 200.0;

/// Runs the binary with `args` under [`bounded`] and asserts the memory bound.
pub fn hostile(args: &[&str], stdin: &[u8], limit_secs: u64) -> Bounded {
    let mut cmd = bin();
    cmd.args(args);
    let b = bounded(cmd, stdin, std::time::Duration::from_secs(limit_secs));
    assert!(
        b.max_rss_mib <= MEMORY_BOUND_MIB,
        "{args:?} used {:.0} MiB (bound {MEMORY_BOUND_MIB} MiB)",
        b.max_rss_mib
    );
    b
}

/// Each emulation (`run`, or `exec` routing a program) pins a busy-polling
/// device thread and a poller to this machine's two CPUs; two at once would
/// measure each other and could stall. The tests of one file take turns
/// (cargo runs the files one after another).
static EMU: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn turn() -> std::sync::MutexGuard<'static, ()> {
    EMU.lock().unwrap_or_else(|e| e.into_inner())
}

/// `cinterrupts exec EXEC_ARGS --output-format json -o REPORT -- fio
/// --output-format=json FILE` run in `dir` (fio leaves its verify state
/// file, local-*-verify.state, there): fio's JSON and our report.
pub fn exec_fio_json(
    dir: &Path,
    exec_args: &[&str],
    file: &Path,
    report: &Path,
) -> (serde_json::Value, serde_json::Value) {
    require("fio", "fio");
    let o = bin()
        .arg("exec")
        .args(exec_args)
        .args([
            "--output-format",
            "json",
            "-o",
            report.to_str().unwrap(),
            "--",
        ])
        .args(["fio", "--output-format=json", file.to_str().unwrap()])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let fio = serde_json::from_slice(&o.stdout).expect("fio's JSON intact");
    let ours = serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap();
    (fio, ours)
}

/// Runs `cmd` to completion within `limit` and returns its output, or
/// kills it and fails the test: no step of a test can hang. Its output is
/// drained as it comes, so a talkative program never stalls on a pipe.
pub fn output_within(cmd: &mut Command, limit: std::time::Duration) -> Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let status = wait_within(&mut child, limit, &format!("{cmd:?}"));
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Waits for `child` to exit within `limit`, or kills it and fails the
/// test naming `what`: no wait of a test can hang.
pub fn wait_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} ran past {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `cinterrupts exec --device optane --output-format json -o REPORT`,
/// ready for `--` and the program.
pub fn exec_device_json(report: &Path) -> Command {
    exec_device_json_by(bin(), report)
}

/// As [`exec_device_json`], `cinterrupts` started by `c` (another user's).
pub fn exec_device_json_by(mut c: Command, report: &Path) -> Command {
    c.args([
        "exec",
        "--device",
        "optane",
        "--output-format",
        "json",
        "-o",
    ])
    .arg(report);
    c
}

/// Linux's `struct iocb` (include/uapi/linux/aio_abi.h, little-endian), as
/// the tests' programs hand it to libaio.
#[repr(C)]
#[derive(Default)]
pub struct Iocb {
    pub data: u64,
    pub key: u32,
    pub rw_flags: libc::c_int,
    pub opcode: u16,
    pub reqprio: i16,
    pub fildes: u32,
    pub buf: u64,
    pub nbytes: u64,
    pub offset: i64,
    pub reserved2: u64,
    pub flags: u32,
    pub resfd: u32,
}

/// Linux's `struct io_event` (include/uapi/linux/aio_abi.h).
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

/// `src` written to `dir/name.c` and compiled with `flags` to `dir/name`
/// (Debian's gcc: a missing `cc` fails naming scripts/setup).
#[track_caller]
pub fn compile_c(dir: &Path, name: &str, src: &str, flags: &[&str]) -> std::path::PathBuf {
    require("cc", "gcc");
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    let o = Command::new("cc")
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .output()
        .unwrap();
    assert!(o.status.success(), "cc {flags:?} {name}: {}", stderr(&o));
    exe
}

/// libaio.so.1's global `io_setup`, `io_submit` and `io_getevents`, as a
/// program linked to libaio calls them (the preload library's, under
/// exec).
pub struct Libaio {
    pub setup: AioSetup,
    pub submit: AioSubmit,
    pub getevents: AioGetEvents,
}

pub type AioSetup = unsafe extern "C" fn(libc::c_int, *mut usize) -> libc::c_int;
pub type AioSubmit = unsafe extern "C" fn(usize, libc::c_long, *mut *mut Iocb) -> libc::c_int;
pub type AioGetEvents = unsafe extern "C" fn(
    usize,
    libc::c_long,
    libc::c_long,
    *mut IoEvent,
    *mut libc::timespec,
) -> libc::c_int;

impl Libaio {
    /// Loads libaio.so.1 (Debian: libaio1) and finds the three symbols.
    pub fn load() -> Libaio {
        // SAFETY: dlopen and dlsym of a system library's documented
        // symbols, transmuted to their C signatures (libaio.h).
        unsafe {
            let h = libc::dlopen(c"libaio.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
            assert!(
                !h.is_null(),
                "libaio.so.1 is needed: run scripts/setup (libaio1)"
            );
            let sym = |n: &std::ffi::CStr| {
                let p = libc::dlsym(libc::RTLD_DEFAULT, n.as_ptr());
                assert!(!p.is_null(), "{n:?}");
                p
            };
            Libaio {
                setup: std::mem::transmute::<*mut libc::c_void, AioSetup>(sym(c"io_setup")),
                submit: std::mem::transmute::<*mut libc::c_void, AioSubmit>(sym(c"io_submit")),
                getevents: std::mem::transmute::<*mut libc::c_void, AioGetEvents>(sym(
                    c"io_getevents",
                )),
            }
        }
    }

    /// Reaps events of `ctx` until `ev` is full, each call waiting for at
    /// least one.
    pub fn reap_all(&self, ctx: usize, ev: &mut [IoEvent]) {
        let mut got = 0;
        while got < ev.len() {
            // SAFETY: room for the rest of `ev`; no timeout.
            let r = unsafe {
                (self.getevents)(
                    ctx,
                    1,
                    (ev.len() - got) as libc::c_long,
                    ev[got..].as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            assert!(r > 0, "io_getevents: {r}");
            got += r as usize;
        }
    }
}

/// A copy of `cinterrupts` and its preload library in `dir`, which the
/// `postgres` user, or `nobody`, can run: the build's own directory may be closed to it
/// (a clone under `mktemp -d` is mode 700).
pub fn reachable_cinterrupts(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let exe = Path::new(env!("CARGO_BIN_EXE_cinterrupts"));
    let built = exe.parent().unwrap();
    let lib = [
        built.join(exec::PRELOAD_NAME),
        built.join("deps").join(exec::PRELOAD_NAME),
    ]
    .into_iter()
    // The newer of the two, as `exec::find_preload` takes it (cargo
    // refreshes the copy beside the binary only when the library is built
    // as a root; a stale one there lacks what the tests check).
    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max_by_key(|(t, _)| *t)
    .map(|(_, p)| p)
    .expect("the preload library beside the binary (cargo build --workspace)");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let copy = bin.join("cinterrupts");
    std::fs::copy(exe, &copy).unwrap();
    std::fs::copy(&lib, bin.join(exec::PRELOAD_NAME)).unwrap();
    for p in [bin.clone(), copy.clone(), bin.join(exec::PRELOAD_NAME)] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    copy
}

/// The environment a differential case's child reads: its case, its file
/// and where it writes its record.
pub const CHILD_CASE: &str = "CINTERRUPTS_CHILD_CASE";
pub const CHILD_FILE: &str = "CINTERRUPTS_CHILD_FILE";
pub const CHILD_OUT: &str = "CINTERRUPTS_CHILD_OUT";

/// How a differential case runs: natively, under `exec` (the program's own
/// calls, no device model) or under `exec --device optane`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    Native,
    Exec,
    Device,
}

/// One run of `case` by this test binary's ignored test `child`, on a
/// fresh file made by `setup` (in the target's tmp directory, on the
/// disk's file system, which enforces O_DIRECT's alignment), within
/// `limit`: the child's record, the file's final contents and, under
/// exec, its report (`Null` natively).
pub fn run_child(
    child: &str,
    case: &str,
    how: How,
    setup: &dyn Fn(&Path),
    limit: std::time::Duration,
) -> (serde_json::Value, Vec<u8>, serde_json::Value) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = dir.path().join("data");
    setup(&file);
    let out = dir.path().join("out.json");
    let report = dir.path().join("report.json");
    let me = std::env::current_exe().unwrap();
    let mut cmd = match how {
        How::Native => Command::new(&me),
        How::Exec => {
            let mut c = bin();
            c.args(["exec", "--output-format", "json", "-o"])
                .arg(&report)
                .arg("--")
                .arg(&me);
            c
        }
        How::Device => {
            let mut c = exec_device_json(&report);
            c.arg("--").arg(&me);
            c
        }
    };
    cmd.args(["--ignored", "--exact", child, "--test-threads", "1"])
        .env(CHILD_CASE, case)
        .env(CHILD_FILE, &file)
        .env(CHILD_OUT, &out);
    let b = bounded(cmd, b"", limit);
    let o = &b.output;
    assert!(
        o.status.success(),
        "{case} ({how:?}): {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(o)
    );
    let v = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let r = std::fs::read(&report)
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or(serde_json::Value::Null);
    (v, std::fs::read(&file).unwrap(), r)
}

/// What `sweep merge --out DIR` writes: a sharded or Slurm merge must give
/// each byte for byte as one machine's.
pub const MERGED_FILES: [&str; 8] = [
    "made_by.json",
    "table.csv",
    "table.json",
    "fronts.csv",
    "fronts.json",
    "fronts.svg",
    "report.md",
    "report.html",
];

/// `v` without its `made_by` objects (issue 42's record of what made a
/// result: its time and load differ from run to run, the results must
/// not), after checking it had at least one.
pub fn results_only(mut v: serde_json::Value) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) -> usize {
        match v {
            serde_json::Value::Object(m) => {
                let here = usize::from(m.remove("made_by").is_some());
                here + m.values_mut().map(strip).sum::<usize>()
            }
            serde_json::Value::Array(a) => a.iter_mut().map(strip).sum(),
            _ => 0,
        }
    }
    assert!(strip(&mut v) > 0, "no made_by in {v}");
    v
}

/// A JSON text's [`results_only`].
pub fn results_of(text: &str) -> serde_json::Value {
    results_only(serde_json::from_str(text).expect("a JSON document"))
}

/// `made_by` (issue 42 item 1) names this checkout's commit (and whether
/// its code paths are dirty, as `git status` says now), this machine's
/// kernel and CPUs, a load average at the start and the end, and a command
/// line holding `words` in order.
pub fn assert_made_by(made_by: &serde_json::Value, words: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .output()
            .expect("git runs (scripts/setup installs it)");
        assert!(o.status.success(), "git {args:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let code = &made_by["code"];
    assert_eq!(
        code["commit"],
        git(&["rev-parse", "HEAD"]).trim(),
        "{made_by}"
    );
    let dirty = !git(&[
        "status",
        "--porcelain",
        "--",
        "crates",
        "Cargo.toml",
        "Cargo.lock",
    ])
    .trim()
    .is_empty();
    assert_eq!(code["dirty"], dirty, "{made_by}");
    for k in ["source", "cargo_lock"] {
        let h = code[k].as_str().unwrap_or("");
        assert!(
            h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()),
            "{k}: {made_by}"
        );
    }
    assert!(
        code["rustc"].as_str().unwrap().starts_with("rustc "),
        "{made_by}"
    );
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(made_by["machine"]["kernel"], kernel.trim(), "{made_by}");
    assert!(
        made_by["machine"]["cpus"].as_u64().unwrap() >= 1,
        "{made_by}"
    );
    for k in ["load_start", "load_end"] {
        assert_eq!(
            made_by[k].as_array().map(Vec::len),
            Some(3),
            "{k}: {made_by}"
        );
    }
    let command: Vec<&str> = made_by["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let mut at = 0;
    for w in words {
        at += command[at..]
            .iter()
            .position(|c| c == w)
            .unwrap_or_else(|| panic!("{w} in order in {command:?}"))
            + 1;
    }
}

/// A merged sweep's file `name` in `dir` as text, what made the merge left
/// out: the report's `merge: ...` rows (its command line, time and load
/// differ from merge to merge; the points' code versions stay) and
/// `made_by.json`'s `made_by`.
pub fn merged_results(dir: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    if name == "made_by.json" {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(v["made_by"]["code"]["commit"].is_string(), "{v}");
        v.as_object_mut().unwrap().remove("made_by");
        return v.to_string();
    }
    text.lines()
        .filter(|l| !l.contains("merge: "))
        .collect::<Vec<_>>()
        .join("\n")
}

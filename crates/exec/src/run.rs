//! Starting the program under the preload library and adding up what its
//! processes saw.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use jobs::DefaultMarks;

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;

use crate::config::{
    Config, Critical, IoUring, ENV_BOOST, ENV_COMPLETION, ENV_CRITICAL, ENV_DEVICE, ENV_IO_URING,
    ENV_MARKS, ENV_OUT, ENV_OUT_FD, ENV_RULES,
};
use crate::counts::Counts;
use crate::marks::Rule;
use crate::record::{NotRoutedOf, Record};
use crate::route::{RouteOptions, Routed, Router};
use crate::stage::{StageOptions, StageReport};
use crate::watch::NotRouted;

/// The shared object's file name, as cargo builds it.
pub const PRELOAD_NAME: &str = "libcinterrupts_preload.so";

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("the preload library {PRELOAD_NAME} is not beside {0} (build the workspace: cargo build --release)")]
    NoPreload(String),
    #[error("cannot run '{program}': {why}")]
    Spawn {
        program: String,
        why: std::io::Error,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("cannot start the device: {0}")]
    Device(String),
    #[error("{0}")]
    Stage(#[from] crate::stage::StageError),
}

/// How to run the program.
#[derive(Clone, Debug)]
pub struct Options {
    pub preload: PathBuf,
    pub default_marks: DefaultMarks,
    pub rules: Vec<Rule>,
    /// FastResponse's critical tag (`--critical-thread`, `--critical-file`).
    pub critical: Vec<Critical>,
    /// `--critical-boost`: given to a thread at its first critical request.
    pub boost: emu::Boost,
    /// What RWF 0x20 and 0x40 of the program's calls mean (`--rwf-marks`).
    pub rwf_marks: crate::config::RwfMarks,
    /// Route the program's direct I/O through the emulated device (`None`:
    /// observe only, every call to the kernel).
    pub route: Option<RouteOptions>,
    /// `--stage DIR`: the data directory on a zram device for the run.
    pub stage: Option<StageOptions>,
    /// How long the program may take to end after a signal passed on to
    /// it before what is left of it is killed (`--kill-after`); `None`:
    /// never by the clock (a second SIGINT or SIGTERM still kills).
    pub kill_after: Option<std::time::Duration>,
    /// `--io-uring`: the program's rings the kernel's (pass), or every
    /// `io_uring_setup` failing with ENOSYS (refuse).
    pub io_uring: IoUring,
    /// What a caller of the library sets that `cinterrupts exec` leaves
    /// at its defaults.
    pub harness: Harness,
}

/// What a caller of the library (`reproduce --mode app`, issue 39 item
/// 3) sets beyond `cinterrupts exec`'s options: where the program's output
/// goes, and how long it may run. The defaults are the binary's: the
/// caller's stdout and stderr, no limit.
#[derive(Clone, Debug, Default)]
pub struct Harness {
    /// The program's stdout, written to this file (created or truncated).
    pub stdout: Option<PathBuf>,
    /// The program's stderr, written to this file (created or truncated).
    pub stderr: Option<PathBuf>,
    /// The longest the program (and what outlives it) may run: past it,
    /// they are killed as `kill_after` kills ([`Escalated::why`]
    /// `timeout`), and the report says so.
    ///
    /// [`Escalated::why`]: crate::Escalated::why
    pub timeout: Option<std::time::Duration>,
}

/// How the program ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Exited(i32),
    Signalled(i32),
}

impl ExecError {
    /// The exit code a shell gives a program it cannot run: 127 when it is
    /// not found, 126 when it cannot be executed; 1 for our own failures.
    pub fn exit_code(&self) -> i32 {
        match self {
            ExecError::Spawn { why, .. } if why.kind() == std::io::ErrorKind::NotFound => 127,
            ExecError::Spawn { .. } => 126,
            // A bad option value, as clap's usage errors (README: 2).
            ExecError::Stage(crate::stage::StageError::TooSmall { .. }) => 2,
            _ => 1,
        }
    }
}

impl Status {
    /// The exit code a shell gives it (128 + the signal for a signal).
    pub fn code(self) -> i32 {
        match self {
            Status::Exited(c) => c,
            Status::Signalled(s) => 128 + s,
        }
    }
}

/// What the run saw.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: Status,
    /// One record per process that exited through `exit` or `_exit` (a
    /// process killed by a signal leaves none).
    pub processes: Vec<Record>,
    /// All processes' counts added up.
    pub counts: Counts,
    /// What the device and the driver did, when routed.
    pub routed: Option<Routed>,
    /// The signal `exec` received and passed on to the program while it
    /// ran (any but SIGCONT, SIGWINCH and the stops): the report is
    /// partial.
    pub interrupted: Option<i32>,
    /// The program's start to its end, ns.
    pub duration_ns: u64,
    /// Where the data lived, with `--stage`; its `error` says where the
    /// data is kept when it could not be put back.
    pub staging: Option<StageReport>,
    /// The program did not end after the signal passed on: killed.
    pub escalated: Option<crate::signals::Escalated>,
    /// Ways to the disk that did not pass through the library, by kind and
    /// process (issue 24 item 2).
    pub not_routed: Vec<NotRouted>,
    /// What this `exec` could not do here (not root: no SCHED_FIFO
    /// fallback, no_new_privs), each said on stderr too.
    pub limits: Vec<String>,
    /// Processes the program started that outlived it, which exec waited
    /// for, routed, before its report (pid and name; issue 38 item 5).
    pub outlived: Vec<(i32, String)>,
    /// The program's perf counters (cycles, instructions, task clock) over
    /// its run, over its direct requests (issue 37 item 3).
    pub counters: report::Counters,
}

/// `--rwf-marks`' default for the running kernel (`uname -r`).
pub fn running_kernel_rwf() -> crate::RwfMarks {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    crate::RwfMarks::for_kernel(release.trim())
}

/// The preload library beside the running binary (cargo puts a workspace's
/// cdylib beside its binaries), or in its `deps/`.
pub fn find_preload() -> Result<PathBuf, ExecError> {
    let exe = std::env::current_exe()?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    // The newer of the two: cargo refreshes the copy beside the binary only
    // when the library itself is built as a root, while building the
    // binary (which depends on it) refreshes `deps/` alone.
    [dir.join(PRELOAD_NAME), dir.join("deps").join(PRELOAD_NAME)]
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
        .ok_or_else(|| ExecError::NoPreload(dir.display().to_string()))
}

/// Runs `program` with `args` under the library, its stdin, stdout and
/// stderr the caller's, and waits for it and for what it started that
/// outlives it. Signals received meanwhile are passed on to it
/// (`signals`); a second SIGINT or SIGTERM, or `kill_after` past the
/// first, kills what is left of it; the temporary directory goes on every
/// return.
pub fn run(opts: &Options, program: &OsStr, args: &[OsString]) -> Result<Outcome, ExecError> {
    let spawn_error = |why| ExecError::Spawn {
        program: program.to_string_lossy().into_owned(),
        why,
    };
    let path = crate::spawn::resolve(program).map_err(spawn_error)?;
    let statically_linked = crate::spawn::statically_linked(&path);
    // The seccomp listener's answering process, forked while this one has
    // no other thread (before the device's), so that it may outlive us.
    let helper = crate::watch::Helper::fork(opts.io_uring);
    let forwarding = crate::signals::Forwarding::install();
    // The program's processes that outlive it (a daemon's double fork:
    // `pg_ctl start`) become exec's children, not init's, so that exec
    // sees them and waits for them (issue 38 item 5). The helper, forked
    // before, is exec's child already.
    // SAFETY: a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    // What an exec killed with SIGKILL left (no handler runs then).
    sweep_stale(&std::env::temp_dir());
    let out = tempfile::Builder::new().prefix(TEMP_PREFIX).tempdir()?;
    std::fs::write(out.path().join(OWNER), owner_line(std::process::id()))?;
    // Staged first (the device thread does not spin through the copy);
    // put back on every path out, whatever the program did.
    let staged = match &opts.stage {
        Some(s) => Some(crate::stage::stage(s, &|l| {
            eprintln!("cinterrupts: exec: {l}")
        })?),
        None => None,
    };
    let result = run_program(
        opts,
        Program {
            name: program,
            path,
            args,
            statically_linked,
        },
        helper,
        &forwarding,
        out.path(),
        staged.as_ref().map(|s| s.dir()),
    );
    let staging = staged.map(crate::stage::Staged::finish);
    match result {
        Ok(mut o) => {
            o.staging = staging;
            Ok(o)
        }
        Err(e) => {
            if let Some(err) = staging.and_then(|s| s.error) {
                eprintln!("cinterrupts: exec: error: staging: {err}");
            }
            Err(e)
        }
    }
}

/// The program to run, as resolved before anything else started.
struct Program<'a> {
    name: &'a OsStr,
    path: PathBuf,
    args: &'a [OsString],
    statically_linked: bool,
}

fn run_program(
    opts: &Options,
    prog: Program,
    helper: Option<crate::watch::Helper>,
    forwarding: &crate::signals::Forwarding,
    out: &Path,
    staged: Option<&Path>,
) -> Result<Outcome, ExecError> {
    let Program {
        name: program,
        path,
        args,
        statically_linked,
    } = prog;
    let spawn_error = |why| ExecError::Spawn {
        program: program.to_string_lossy().into_owned(),
        why,
    };
    // Every process of the program writes its record here, whatever user
    // it became (issue 24 item 3: a server dropping its privileges): the
    // directory is writable by all, sticky (none removes another's file)
    // and not listable; it is reached through a descriptor each process
    // inherits, so a directory above it closed to that user does not matter.
    std::fs::set_permissions(out, std::os::unix::fs::PermissionsExt::from_mode(0o1733))?;
    let (out_dir, out_ino) = open_dir(out)?;
    let out_dir = high(&out_dir)?;
    let out_fd = (out_dir.as_raw_fd(), out_ino);
    let mut limits = Vec::new();
    let mut not_routed = Vec::new();
    // As a shell leaves them (bash's `cmd &` in a script, `nohup`): the
    // program starts with them ignored, and exec does not pass them on.
    for &sig in forwarding.ignored() {
        if [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP].contains(&sig) {
            limits.push(format!(
                "{} was ignored when exec started (inherited, as under nohup or a script's `cmd &`): it stays ignored for {} and exec does not pass it on",
                crate::signals::name(sig),
                program.to_string_lossy()
            ));
        }
    }
    let comm: String = path
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(15).collect())
        .unwrap_or_default();
    // The library first; a program's own LD_PRELOAD after it.
    let mut preload = opts.preload.clone().into_os_string();
    if let Some(theirs) = std::env::var_os("LD_PRELOAD").filter(|p| !p.is_empty()) {
        preload.push(":");
        preload.push(theirs);
    }
    let mut env: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(k, _)| k != shm::ENV_SHM && k != shm::ENV_SHM_FD && k != ENV_DEVICE)
        .collect();
    let mut set = |k: &str, v: OsString| {
        env.insert(k.into(), v);
    };
    set("LD_PRELOAD", preload);
    set(ENV_OUT, out.into());
    set(ENV_OUT_FD, format!("{}:{}", out_fd.0, out_fd.1).into());
    set(ENV_MARKS, opts.default_marks.name().into());
    set(ENV_RULES, Config::rules_env(&opts.rules).into());
    set(ENV_CRITICAL, Critical::env(&opts.critical).into());
    set(ENV_BOOST, opts.boost.as_str().into());
    set(crate::config::ENV_RWF, opts.rwf_marks.name().into());
    set(ENV_IO_URING, opts.io_uring.name().into());
    set(
        ENV_COMPLETION,
        opts.route
            .as_ref()
            .map_or(crate::config::Polling::Interrupt, |r| r.polling)
            .as_str()
            .into(),
    );
    let mut inherit = vec![out_fd.0];
    // Kept open (ours) while the program runs.
    let mut region_fd: Option<OwnedFd> = None;
    // The device first, so that a program's first request finds it; it
    // stops when dropped, whatever happens to the program.
    let router = match &opts.route {
        Some(r) => {
            let router = Router::start(r).map_err(ExecError::Device)?;
            let mode = if r.device.is_some() {
                "modelled"
            } else {
                "direct"
            };
            let (spec, fd) = router.inherited();
            // SAFETY: the router's descriptor, open while it runs.
            let region = high(unsafe { &std::os::fd::BorrowedFd::borrow_raw(fd) })?;
            let ino = spec.split_once(':').map_or("0", |(_, i)| i);
            set(shm::ENV_SHM, router.path().into());
            set(
                shm::ENV_SHM_FD,
                format!("{}:{ino}", region.as_raw_fd()).into(),
            );
            set(ENV_DEVICE, mode.into());
            inherit.push(region.as_raw_fd());
            region_fd = Some(region);
            if let Err(e) = fifo_allowed() {
                limits.push(format!(
                    "no SCHED_FIFO here ({e}): the interrupt handler's fallback cannot preempt a program thread on the target core, so an interrupt waits until that core idles (issue 24 measured p99 delivery 4.1 ms against 0.12 ms as root)"
                ));
            }
            Some(router)
        }
        None => None,
    };
    // The seccomp filter naming what bypasses the library. Root has
    // CAP_SYS_ADMIN and installs it as it is; any other user needs
    // no_new_privs (man 2 seccomp), which also makes setuid programs run
    // without their privileges (they would not load the library anyway:
    // LD_PRELOAD is ignored for them).
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    // A statically linked program too: its own aio and io_uring calls are
    // named, though nothing else of its I/O is seen.
    let sockets = crate::watch::socket_pair().ok();
    if !root && sockets.is_some() {
        limits.push(
            "not root: no_new_privs is set for the seccomp filter that watches inline aio and io_uring calls, so a setuid program started by this one runs without its privileges".into(),
        );
    }
    let filter = sockets.as_ref().map(|(_, child)| crate::watch::Install {
        prog: crate::watch::program(opts.io_uring),
        sock: child.as_raw_fd(),
        no_new_privs: !root,
        helper: helper.as_ref().map(crate::watch::Helper::sock),
    });
    if statically_linked {
        not_routed.push(NotRouted {
            what: "statically linked program".into(),
            pid: 0,
            comm: comm.clone(),
            calls: None,
            uid: None,
            why: Some(format!(
                "{} has no dynamic linker (no PT_INTERP), which is what loads the preload library: none of its I/O is seen or routed (its aio and io_uring system calls are named, by the seccomp filter)",
                path.display()
            )),
        });
        eprintln!(
            "cinterrupts: exec: not routed: {} is statically linked: none of its I/O is seen or routed",
            path.display()
        );
    }
    let mut cmd = Command::new(&path);
    cmd.args(args);
    if let Some(p) = &opts.harness.stdout {
        cmd.stdout(std::fs::File::create(p)?);
    }
    if let Some(p) = &opts.harness.stderr {
        cmd.stderr(std::fs::File::create(p)?);
    }
    let mut argv = vec![program.to_os_string()];
    argv.extend(args.iter().cloned());
    crate::spawn::Child {
        path: path.clone(),
        argv,
        envp: env.into_iter().collect(),
        inherit,
        filter,
    }
    .hook(&mut cmd)
    .map_err(spawn_error)?;
    // Our working directory inside a staged DIR is the directory the bind
    // hides: the program starts in the same path looked up again, on the
    // staged copy (its writes would otherwise go under the bind, and the
    // copy back would delete them).
    if let (Some(dir), Ok(cwd)) = (staged, std::env::current_dir()) {
        if cwd.starts_with(dir) {
            cmd.current_dir(cwd);
        }
    }
    let started = std::time::Instant::now();
    // The program from its execve on, and every thread and process it
    // starts (perf stat's enable_on_exec): opened before it is spawned, so
    // that a program that ends at once is counted too.
    let perf = emu::counters::Counters::open_for_exec();
    let spawned = match &opts.route {
        Some(r) => spawn_away_from(&mut cmd, r.device_cpu),
        None => cmd.spawn(),
    };
    let mut child = spawned.map_err(spawn_error)?;
    forwarding.started(child.id());
    let mut helper = helper;
    let watcher = match sockets.map(|(ours, theirs)| {
        drop(theirs);
        crate::watch::receive(&ours)
    }) {
        // Handed to the helper by the program's process itself.
        Some(Ok(None)) => None,
        Some(Ok(Some(listener))) => match &helper {
            Some(h) if h.give(&listener) => None,
            _ => {
                helper = None;
                crate::watch::Watcher::start(listener, opts.io_uring).ok()
            }
        },
        Some(Err(why)) => {
            helper = None;
            limits.push(format!(
                "inline aio and io_uring calls are not watched: {why}"
            ));
            None
        }
        None => {
            helper = None;
            None
        }
    };
    if opts.io_uring == IoUring::Refuse {
        limits.push(if watcher.is_some() || helper.is_some() {
            "io_uring refused (--io-uring refuse): every io_uring_setup of the program fails with ENOSYS, as on a kernel built without io_uring (io_uring_enter and io_uring_register too), by the preload library's syscall() and exec's seccomp listener".into()
        } else {
            "io_uring refused (--io-uring refuse) only where the preload library sees the call (glibc's syscall()): without the seccomp filter an inline io_uring_setup (liburing's) sets up a ring, named in not_routed when the library finds it open at the process's exit".into()
        });
    }
    if let Some(pid) = not_routed.first_mut().filter(|_| statically_linked) {
        pid.pid = child.id();
    }
    let deadline = opts.harness.timeout.map(|t| (started, t));
    let mut escalated = forwarding.wait_ended(child.id(), opts.kill_after, deadline);
    let status = child.wait().map_err(spawn_error)?;
    // What it started and left running: waited for, its I/O still routed
    // and its records still written here (issue 38 item 5).
    let mut outlived = Vec::new();
    let rest = forwarding.wait_rest(
        helper.as_ref().map(crate::watch::Helper::pid),
        opts.kill_after,
        deadline,
        &mut |all| {
            outlived = all.to_vec();
            let names: Vec<String> = all.iter().map(|(p, c)| format!("{c}[{p}]")).collect();
            eprintln!(
                "cinterrupts: exec: {} ended; {} process(es) it started still run ({}): exec waits for them, their I/O routed and counted, before its report (stop them, or send exec SIGTERM: passed on to them)",
                program.to_string_lossy(),
                all.len(),
                names.join(", ")
            );
        },
    );
    escalated = escalated.or(rest);
    let duration_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    // The program has exited: its threads' and children's counts are in.
    let perf = perf.read();
    drop(region_fd);
    let routed = router.map(Router::finish);
    if let Some(w) = watcher {
        not_routed.extend(w.finish());
    }
    if let Some(h) = helper {
        match h.finish() {
            Some(seen) => not_routed.extend(seen),
            None => limits.push(
                "the seccomp filter's answering process did not say what it saw: inline aio and io_uring calls may be missing from not_routed".into(),
            ),
        }
    }
    let interrupted = forwarding.received();
    let status = match (status.code(), status.signal()) {
        (Some(c), _) => Status::Exited(c),
        (None, Some(s)) => Status::Signalled(s),
        (None, None) => Status::Exited(-1),
    };
    let mut processes = Vec::new();
    for entry in std::fs::read_dir(out)? {
        let path = entry?.path();
        if path.extension() != Some(OsStr::new("json")) {
            continue;
        }
        // A record that does not read is a process that did not finish
        // writing it: counted as not reported.
        if let Ok(r) = serde_json::from_slice::<Record>(&std::fs::read(&path)?) {
            processes.push(r);
        }
    }
    processes.sort_by_key(|r| r.pid);
    let mut counts = Counts::default();
    let mut untrapped_unused = Vec::new();
    for r in &processes {
        counts.add(&r.counts);
        // A ring the filter saw is named once, by the filter.
        let seen = |n: &NotRouted| n.what == crate::watch::IO_URING && n.pid == r.pid;
        let ring = r.io_uring || r.counts.calls.io_uring > 0 || not_routed.iter().any(seen);
        let mine: Vec<NotRouted> = r
            .not_routed()
            .into_iter()
            .filter(|n| n.what != crate::watch::IO_URING || !not_routed.iter().any(seen))
            .collect();
        for n in mine {
            // A process whose trap could not be installed (it became
            // another user without CAP_SYS_ADMIN or no_new_privs:
            // `runuser -u postgres`, `setpriv`) but that made no ring has
            // no io_uring call that escaped: not named (issue 38 item 5:
            // 20 such false entries for PostgreSQL, which uses none).
            if n.what == crate::record::UNTRAPPED && !ring {
                untrapped_unused.push(format!("{}[{}]", n.comm, n.pid));
                continue;
            }
            add_not_routed(&mut not_routed, n);
        }
    }
    if !untrapped_unused.is_empty() {
        // The first few by name: a server's twenty processes are one line.
        const NAMED: usize = 4;
        let mut who = untrapped_unused[..untrapped_unused.len().min(NAMED)].join(", ");
        if untrapped_unused.len() > NAMED {
            who += &format!(" and {} more", untrapped_unused.len() - NAMED);
        }
        limits.push(format!(
            "the io_uring trap could not be installed in {} process(es) ({who}: a process that became another user has neither CAP_SYS_ADMIN nor no_new_privs for seccomp), none of which set up an io_uring ring: no io_uring call escaped",
            untrapped_unused.len(),
        ));
    }
    // Its direct requests (reads and writes; flushes are not I/Os here).
    let ios = counts.reads.total() + counts.writes.total();
    Ok(Outcome {
        status,
        processes,
        counts,
        routed,
        interrupted,
        duration_ns,
        staging: None,
        escalated,
        not_routed,
        limits,
        outlived,
        counters: perf.to_report(
            ios,
            "the program and the threads and processes it started, user and kernel",
        ),
    })
}

/// `n` added to `all`: a refusal of a process already named (the filter's
/// and the library's are different calls: the library's never reached the
/// kernel) adds its calls and its why to that entry.
fn add_not_routed(all: &mut Vec<NotRouted>, n: NotRouted) {
    let same = all
        .iter_mut()
        .find(|m| n.what == crate::watch::IO_URING_REFUSED && m.what == n.what && m.pid == n.pid);
    let Some(m) = same else {
        all.push(n);
        return;
    };
    m.calls = Some(m.calls.unwrap_or(0) + n.calls.unwrap_or(0));
    m.uid = m.uid.or(n.uid);
    m.why = match (m.why.take(), n.why) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
}

/// `dir` opened as a path descriptor (close-on-exec here; the program
/// inherits it), and its inode.
fn open_dir(dir: &Path) -> std::io::Result<(OwnedFd, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    Ok((fd, std::fs::metadata(dir)?.ino()))
}

/// A copy of `fd` (close-on-exec) numbered high, for the program to
/// inherit: its own descriptors then get the numbers they get natively
/// (the first `open` is 3; issue 24's conformance suite compares them).
/// Below 1024 and the soft RLIMIT_NOFILE, so the kernel's table need not
/// grow far for it.
fn high(fd: &impl AsFd) -> std::io::Result<OwnedFd> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    let base = lim.rlim_cur.min(1024).saturating_sub(16).max(3) as libc::c_int;
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we hold; a fresh one back.
    let d = unsafe { libc::fcntl(fd.as_fd().as_raw_fd(), libc::F_DUPFD_CLOEXEC, base) };
    if d < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the new descriptor is ours.
    Ok(unsafe { OwnedFd::from_raw_fd(d) })
}

/// Whether a thread of ours may take SCHED_FIFO (the interrupt handler's
/// fallback needs it): tried on a thread that ends at once.
fn fifo_allowed() -> std::io::Result<()> {
    std::thread::spawn(|| {
        let param = libc::sched_param { sched_priority: 1 };
        // SAFETY: this short-lived thread's own policy.
        match unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) }
        {
            0 => Ok(()),
            e => Err(std::io::Error::from_raw_os_error(e)),
        }
    })
    .join()
    .unwrap_or_else(|_| Err(std::io::ErrorKind::Other.into()))
}

/// The program runs on every allowed CPU but the device's (its thread
/// spins there, as the authors' emulator's controller owns its core,
/// TOS 4.2.1); its children inherit the mask. Set on the calling thread
/// for the spawn (a child inherits its parent thread's mask) and put back
/// after: a `pre_exec` hook would make std fork and `execvp`, which runs a
/// file that is not a program through /bin/sh instead of refusing it.
fn spawn_away_from(cmd: &mut Command, device_cpu: usize) -> std::io::Result<std::process::Child> {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: sched_getaffinity fills the set it is given.
    let mut mine: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, size, &mut mine) } != 0 {
        return cmd.spawn();
    }
    let mut theirs = mine;
    // SAFETY: CPU_CLR/CPU_COUNT on our own set.
    unsafe { libc::CPU_CLR(device_cpu, &mut theirs) };
    if unsafe { libc::CPU_COUNT(&theirs) } == 0 {
        return cmd.spawn();
    }
    // SAFETY: this thread's own mask, set and restored.
    unsafe { libc::sched_setaffinity(0, size, &theirs) };
    let child = cmd.spawn();
    unsafe { libc::sched_setaffinity(0, size, &mine) };
    child
}

/// The temporary directory's name: `cinterrupts-exec.` and tempfile's
/// random part.
const TEMP_PREFIX: &str = "cinterrupts-exec.";
/// The file in it that names the exec that made it: `PID STARTTIME`
/// (`/proc/PID/stat` field 22, clock ticks since boot), so that a reused
/// pid is not taken for its maker.
const OWNER: &str = "exec.owner";

/// `PID STARTTIME` for a live process, or `None` when it is gone.
fn owner_line(pid: u32) -> String {
    format!("{pid} {}", start_time(pid).unwrap_or(0))
}

fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's closing parenthesis: field 3 onwards (man 5
    // proc); the start time is field 22.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Removes the temporary directories of ours under `tmp` whose exec is
/// gone (killed with SIGKILL: every other way out removes its own).
/// Only directories this user owns that name their maker in [`OWNER`]
/// are touched: another user's, an older exec's (no such file) and a live
/// exec's stay.
fn sweep_stale(tmp: &Path) {
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            continue;
        }
        let dir = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me {
            continue;
        }
        let Ok(line) = std::fs::read_to_string(dir.join(OWNER)) else {
            continue;
        };
        let mut it = line.split_whitespace().map(|v| v.parse::<u64>().ok());
        let (Some(Some(pid)), Some(Some(start))) = (it.next(), it.next()) else {
            continue;
        };
        let alive = u32::try_from(pid)
            .ok()
            .and_then(start_time)
            .is_some_and(|t| t == start);
        if !alive {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

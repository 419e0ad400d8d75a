//! Starting the program under the preload library and adding up what its
//! processes saw.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use jobs::DefaultMarks;

use crate::config::{
    Config, Critical, ENV_BOOST, ENV_COMPLETION, ENV_CRITICAL, ENV_DEVICE, ENV_MARKS, ENV_OUT,
    ENV_RULES,
};
use crate::counts::Counts;
use crate::marks::Rule;
use crate::record::Record;
use crate::route::{RouteOptions, Routed, Router};

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
    /// Route the program's direct I/O through the emulated device (`None`:
    /// observe only, every call to the kernel).
    pub route: Option<RouteOptions>,
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
    /// The signal (SIGINT, SIGTERM or SIGHUP) `exec` received and passed
    /// on to the program while it ran: the report is partial.
    pub interrupted: Option<i32>,
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
/// stderr the caller's, and waits for it. SIGINT, SIGTERM and SIGHUP
/// received meanwhile are passed on to it (`signals`); the temporary
/// directory goes on every return.
pub fn run(opts: &Options, program: &OsStr, args: &[OsString]) -> Result<Outcome, ExecError> {
    let forwarding = crate::signals::Forwarding::install();
    let out = tempfile::Builder::new()
        .prefix("cinterrupts-exec.")
        .tempdir()?;
    // The library first; a program's own LD_PRELOAD after it.
    let mut preload = opts.preload.clone().into_os_string();
    if let Some(theirs) = std::env::var_os("LD_PRELOAD").filter(|p| !p.is_empty()) {
        preload.push(":");
        preload.push(theirs);
    }
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("LD_PRELOAD", preload)
        .env(ENV_OUT, out.path())
        .env(ENV_MARKS, opts.default_marks.name())
        .env(ENV_RULES, Config::rules_env(&opts.rules))
        .env(ENV_CRITICAL, Critical::env(&opts.critical))
        .env(ENV_BOOST, opts.boost.as_str())
        .env(
            ENV_COMPLETION,
            opts.route
                .as_ref()
                .map_or(crate::config::Polling::Interrupt, |r| r.polling)
                .name(),
        )
        .env_remove(shm::ENV_SHM)
        .env_remove(ENV_DEVICE);
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
            cmd.env(shm::ENV_SHM, router.path()).env(ENV_DEVICE, mode);
            Some(router)
        }
        None => None,
    };
    let spawned = match &opts.route {
        Some(r) => spawn_away_from(&mut cmd, r.device_cpu),
        None => cmd.spawn(),
    };
    let status = spawned
        .and_then(|mut child| {
            forwarding.started(child.id());
            forwarding.wait_ended(child.id());
            child.wait()
        })
        .map_err(|why| ExecError::Spawn {
            program: program.to_string_lossy().into_owned(),
            why,
        })?;
    let routed = router.map(Router::finish);
    let interrupted = forwarding.received();
    let status = match (status.code(), status.signal()) {
        (Some(c), _) => Status::Exited(c),
        (None, Some(s)) => Status::Signalled(s),
        (None, None) => Status::Exited(-1),
    };
    let mut processes = Vec::new();
    for entry in std::fs::read_dir(out.path())? {
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
    for r in &processes {
        counts.add(&r.counts);
    }
    Ok(Outcome {
        status,
        processes,
        counts,
        routed,
        interrupted,
    })
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

//! SIGINT, SIGTERM and SIGHUP while the program runs: passed on to it, so
//! that `kill EXEC_PID` ends the program as it would end a program run
//! without us, and `exec` lives on to wait for it, write its (partial)
//! report and remove its temporary directory (issue 24 item 4).
//!
//! The handler records the signal and sends it to the program's process
//! (not its group: the program shares ours, and a terminal's Ctrl-C
//! reaches every member of the foreground group by itself). A signal the
//! kernel sent (a terminal's SIGINT or SIGHUP, `si_code` > 0) went to the
//! whole group already and is not sent again. A signal that was ignored
//! when we started (`nohup`) stays ignored, for us and for the program.
//!
//! A program that has not ended at a second SIGINT or SIGTERM, or
//! `--kill-after` after the first SIGINT or SIGTERM exec passed on, is
//! killed: SIGKILL to the program's process, every process descended from
//! it, and its own process group if it made one (it shares ours otherwise,
//! and ours holds exec). The report is still written, partial, and says
//! so. Not by the clock after a terminal's own signal (the kernel's, sent
//! to the whole group: an interactive program's Ctrl-C cancels, it does
//! not end it), nor ever after SIGHUP (many servers reload on it).

use std::sync::atomic::{AtomicI32, Ordering::SeqCst};
use std::time::{Duration, Instant};

/// The signals passed on.
pub const FORWARDED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The program's pid while it runs and is not yet waited for; 0 otherwise.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// The first signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// SIGINTs and SIGTERMs received, whoever sent them.
static COUNT: AtomicI32 = AtomicI32::new(0);
/// Whether exec passed a SIGINT or SIGTERM on itself (one sent to exec
/// alone, not a terminal's): `--kill-after` counts from then.
static PASSED_ON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What was killed when the program did not end after a signal.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Escalated {
    /// `second signal` or `kill-after`.
    pub why: String,
    /// Time from the first signal to the kill, ms.
    pub after_ms: u64,
    /// Processes sent SIGKILL.
    pub killed: u32,
}

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    let _ = RECEIVED.compare_exchange(0, sig, SeqCst, SeqCst);
    let ends = sig == libc::SIGINT || sig == libc::SIGTERM;
    if ends {
        COUNT.fetch_add(1, SeqCst);
    }
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let from_kernel = !info.is_null() && unsafe { (*info).si_code } > 0;
    if ends && !from_kernel {
        PASSED_ON.store(true, SeqCst);
    }
    let pid = CHILD.load(SeqCst);
    if pid > 0 && !from_kernel {
        // SAFETY: kill is async-signal-safe; `pid` is our unreaped child.
        unsafe { libc::kill(pid, sig) };
    }
}

/// The handlers, installed while it lives; the previous dispositions are
/// put back when dropped.
pub struct Forwarding {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl Forwarding {
    pub fn install() -> Forwarding {
        RECEIVED.store(0, SeqCst);
        COUNT.store(0, SeqCst);
        PASSED_ON.store(false, SeqCst);
        CHILD.store(0, SeqCst);
        let mut previous = Vec::new();
        for sig in FORWARDED {
            // SAFETY: reading then setting this process's dispositions with
            // valid sigaction structures.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_signal as *const () as usize;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut new.sa_mask);
                if libc::sigaction(sig, &new, std::ptr::null_mut()) == 0 {
                    previous.push((sig, old));
                }
            }
        }
        Forwarding { previous }
    }

    /// The program started as `pid`: a signal received before it did is
    /// passed on now.
    pub fn started(&self, pid: u32) {
        CHILD.store(pid as i32, SeqCst);
        let sig = RECEIVED.load(SeqCst);
        if sig != 0 {
            // SAFETY: our child, not yet waited for.
            unsafe { libc::kill(pid as libc::pid_t, sig) };
        }
    }

    /// Waits until the program `pid` has ended without reaping it, then
    /// stops passing signals to it, so that none can reach another process
    /// given its pid once it is reaped. A second signal, or `kill_after`
    /// past the first, kills it and what descends from it.
    pub fn wait_ended(&self, pid: u32, kill_after: Duration) -> Option<Escalated> {
        let mut first: Option<Instant> = None;
        let mut escalated = None;
        loop {
            // SAFETY: a valid out-pointer; WNOWAIT leaves the child to reap.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
                )
            };
            // SAFETY: waitid filled it (si_pid 0: not ended yet).
            if r != 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                || r == 0 && unsafe { info.si_pid() } != 0
            {
                break;
            }
            let n = COUNT.load(SeqCst);
            if n > 0 && escalated.is_none() {
                let since = *first.get_or_insert_with(Instant::now);
                let why = if n >= 2 {
                    Some("a second signal")
                } else if PASSED_ON.load(SeqCst) && since.elapsed() >= kill_after {
                    Some("kill-after")
                } else {
                    None
                };
                if let Some(why) = why {
                    escalated = Some(Escalated {
                        why: why.into(),
                        after_ms: since.elapsed().as_millis() as u64,
                        killed: kill_tree(pid as i32),
                    });
                }
            }
            // The program's end is seen within 5 ms (exec's report and
            // exit wait no longer); a wake-up costs ~nothing beside it.
            std::thread::sleep(Duration::from_millis(5));
        }
        CHILD.store(0, SeqCst);
        escalated
    }

    /// The first signal received since [`Forwarding::install`].
    pub fn received(&self) -> Option<i32> {
        Some(RECEIVED.load(SeqCst)).filter(|&s| s != 0)
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        CHILD.store(0, SeqCst);
        for (sig, old) in &self.previous {
            // SAFETY: putting back the disposition read at install.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
    }
}

/// SIGKILL to `pid`, to every process descended from it (found through
/// each process's parent in /proc/PID/stat, gathered before any is
/// killed, so none is reparented away first), and to its process group if
/// it is not ours; returns how many processes were sent it.
fn kill_tree(pid: i32) -> u32 {
    let mut parent = std::collections::HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        // "PID (COMM) STATE PPID ...": after the last ')'.
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|v| v.parse::<i32>().ok());
        if let Some(pp) = ppid {
            parent.insert(p, pp);
        }
    }
    let mut tree = vec![pid];
    let mut k = 0;
    while k < tree.len() {
        let p = tree[k];
        tree.extend(parent.iter().filter(|&(_, &pp)| pp == p).map(|(&c, _)| c));
        k += 1;
    }
    // SAFETY: getpgid/kill/killpg on processes we started.
    unsafe {
        let group = libc::getpgid(pid);
        for &p in &tree {
            libc::kill(p, libc::SIGKILL);
        }
        if group > 0 && group != libc::getpgid(0) {
            libc::killpg(group, libc::SIGKILL);
        }
    }
    tree.len() as u32
}

/// A signal's name (`SIGTERM`), or its number.
pub fn name(sig: i32) -> String {
    match sig {
        libc::SIGHUP => "SIGHUP".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGQUIT => "SIGQUIT".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGPIPE => "SIGPIPE".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGABRT => "SIGABRT".into(),
        _ => format!("signal {sig}"),
    }
}

//! Every signal the program could receive, sent to `exec` while the
//! program runs, is passed on to it (issue 24 item 4, issue 38 item 6):
//! `kill -USR1 EXEC_PID` reaches the program as it would reach it run
//! without us, and `exec` lives on to wait for it, write its (partial)
//! report and remove its temporary directory. Not passed on: SIGKILL and
//! SIGSTOP (no handler can see them), SIGCHLD (exec's own children), the
//! faults a process raises on itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
//! SIGTRAP, SIGSYS: a handler returning from a fault of exec's would
//! loop), SIGPIPE (Rust's runtime ignores it in exec, so whether it was
//! inherited ignored cannot be known; the program starts with it at its
//! default) and glibc's two reserved real-time signals (32, 33: NPTL's).
//!
//! The handler records the signal and sends it to the program's process
//! (not its group: the program shares ours, and a terminal's Ctrl-C
//! reaches every member of the foreground group by itself). A signal the
//! kernel sent (a terminal's SIGINT, SIGQUIT, SIGTSTP, SIGWINCH or SIGHUP,
//! `si_code` > 0) went to the whole group already and is not sent again.
//! The same signal from the same sender again within [`SAME_SEND`] is one
//! sending, not passed on nor counted twice: `timeout` sends its SIGTERM
//! to its child and then to its whole group (coreutils timeout.c,
//! `send_sig (monitored_pid, sig)` then `send_sig (0, sig)`), and exec is
//! both. A signal that was ignored when we started (`nohup`, a script's
//! `cmd &`) stays ignored, for us and for the program, as a shell leaves
//! it ([`Forwarding::ignored`], said in one line).
//!
//! SIGTSTP, SIGTTIN and SIGTTOU stop the program (passed on when sent to
//! exec alone) and then exec itself (SIGSTOP), so that a shell waiting for
//! exec sees its job stop; SIGCONT continues both.
//!
//! A program that has not ended at a second SIGINT or SIGTERM, or
//! `--kill-after` (opt-in; none by default: exec waits for the program's
//! own shutdown) after the first SIGINT or SIGTERM exec passed on, is
//! killed: SIGKILL to the program's process, every process descended from
//! it, and its own process group if it made one (it shares ours otherwise,
//! and ours holds exec). The report is still written, partial, and says
//! so. Not by the clock after a terminal's own signal (the kernel's, sent
//! to the whole group: an interactive program's Ctrl-C cancels, it does
//! not end it), nor ever after SIGHUP (many servers reload on it).
//!
//! A program killed by a signal: [`reraise`] ends exec by the same signal
//! after its report, so that exec's parent sees the wait status the
//! kernel gave (WIFSIGNALED), not 128 + the signal.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering::SeqCst};
use std::time::{Duration, Instant};

/// Not passed on (the module's doc says why).
const NOT_PASSED: [libc::c_int; 10] = [
    libc::SIGKILL,
    libc::SIGSTOP,
    libc::SIGCHLD,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGSYS,
    libc::SIGPIPE,
];

/// Stop the program and then exec (job control).
const STOPPING: [libc::c_int; 3] = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];

/// The signals passed on: 1 to 31 but [`NOT_PASSED`], and glibc's
/// real-time signals from `SIGRTMIN()` (34: 32 and 33 are NPTL's own,
/// signal(7)) to `SIGRTMAX()`.
pub fn forwarded() -> Vec<libc::c_int> {
    (1..32)
        .filter(|s| !NOT_PASSED.contains(s))
        .chain(libc::SIGRTMIN()..=libc::SIGRTMAX())
        .collect()
}

/// The same signal from the same sender within this is one sending
/// (`timeout`'s kill of its child and of its group: two system calls in a
/// row, microseconds apart even when preempted between them on this
/// loaded VM; a person's or a script's second `kill`, meant as a second
/// signal, comes later: issue 24's test sends it 200 ms after the first).
pub const SAME_SEND: Duration = Duration::from_millis(100);

/// The last sending passed on, in one word ([`Sending`]): its number,
/// its sender and when. One word, so that two handlers running at once
/// agree on which of them saw it first: `timeout`'s two kills of one
/// SIGTERM are process-directed, and the kernel may run the second's
/// handler on another of exec's threads while the first's is between
/// reading and writing three separate words (so both counted, and exec
/// killed the program as at a second signal: once in a fresh-clone CI run,
/// 2026-12-07, `timeouts_group_sigterm_is_one_signal`).
static LAST: AtomicU64 = AtomicU64::new(0);
/// Signals received while no program pid is set for the handler (the
/// program's end, before its descendants are waited for): bit `sig - 1`,
/// passed on by the waiting loop.
static PENDING: AtomicU64 = AtomicU64::new(0);

/// The program's pid while it runs and is not yet waited for; 0 otherwise.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// The first signal received (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// SIGINTs and SIGTERMs received, whoever sent them.
static COUNT: AtomicI32 = AtomicI32::new(0);
/// Whether exec passed a SIGINT or SIGTERM on itself (one sent to exec
/// alone, not a terminal's): `--kill-after` counts from then.
static PASSED_ON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A process that outlived the program: its pid and name.
pub type Outlived = (i32, String);

/// What was killed when the program did not end after a signal.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Escalated {
    /// `a second signal`, `kill-after`, or `timeout` (the library
    /// caller's `Harness::timeout`: no signal, the program ran too long).
    pub why: String,
    /// Time from the first signal to the kill, ms (`timeout`: from the
    /// program's start).
    pub after_ms: u64,
    /// Processes sent SIGKILL.
    pub killed: u32,
}

fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime is async-signal-safe (signal-safety(7)).
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// One sending as [`LAST`] holds it: the signal (7 bits: up to SIGRTMAX,
/// 64), the sender's pid (22 bits: Linux's PID_MAX_LIMIT is 2^22 on
/// 64-bit, include/linux/threads.h) and the time in ms (35 bits, compared
/// modulo 2^35 ms, about a year: only differences under [`SAME_SEND`]
/// matter). 0 is "none yet": signal 0 is never delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sending(u64);

impl Sending {
    const MS_BITS: u32 = 35;
    const MS_MASK: u64 = (1 << Self::MS_BITS) - 1;

    fn new(sig: libc::c_int, sender: libc::pid_t, now_ns: u64) -> Sending {
        let sig = (sig as u64) & 0x7f;
        let pid = (sender as u64) & ((1 << 22) - 1);
        let ms = (now_ns / 1_000_000) & Self::MS_MASK;
        Sending(sig << 57 | pid << Self::MS_BITS | ms)
    }

    /// Whether `self` and `other` are the same signal from the same sender.
    fn same_sender(self, other: Sending) -> bool {
        self.0 >> Self::MS_BITS == other.0 >> Self::MS_BITS
    }

    /// Whether `other` came less than [`SAME_SEND`] before `self`.
    fn within(self, other: Sending) -> bool {
        let dt = (self.0 & Self::MS_MASK).wrapping_sub(other.0 & Self::MS_MASK) & Self::MS_MASK;
        dt < SAME_SEND.as_millis() as u64
    }

    /// Records `self` in `last` and says whether it repeats the sending
    /// there (the same signal from the same sender within [`SAME_SEND`]).
    /// A compare-and-swap, not a load and a store: of two handlers racing
    /// with one sending, exactly one finds it new.
    fn again(self, last: &AtomicU64) -> bool {
        let mut seen = last.load(SeqCst);
        loop {
            let prev = Sending(seen);
            let again = seen != 0 && prev.same_sender(self) && self.within(prev);
            match last.compare_exchange(seen, self.0, SeqCst, SeqCst) {
                Ok(_) => return again,
                Err(now) => seen = now,
            }
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let (code, sender) = if info.is_null() {
        (0, 0)
    } else {
        unsafe { ((*info).si_code, (*info).si_pid()) }
    };
    let from_kernel = code > 0;
    let now = monotonic_ns();
    if !from_kernel {
        // One sending that reached exec twice (timeout's child and group).
        if Sending::new(sig, sender, now).again(&LAST) {
            return;
        }
    }
    let ends = sig == libc::SIGINT || sig == libc::SIGTERM;
    if sig != libc::SIGCONT && !STOPPING.contains(&sig) && sig != libc::SIGWINCH {
        let _ = RECEIVED.compare_exchange(0, sig, SeqCst, SeqCst);
    }
    if ends {
        COUNT.fetch_add(1, SeqCst);
    }
    if ends && !from_kernel {
        PASSED_ON.store(true, SeqCst);
    }
    let pid = CHILD.load(SeqCst);
    if !from_kernel {
        if pid > 0 {
            // SAFETY: kill is async-signal-safe; `pid` is our unreaped child.
            unsafe { libc::kill(pid, sig) };
        } else if sig <= 64 {
            PENDING.fetch_or(1 << (sig - 1), SeqCst);
        }
    }
    // Exec stops too, as its job's shell expects (SIGCONT continues it);
    // before the program has a pid, `started` passes the stop on and then
    // stops exec (stopping now would keep the program from starting and
    // leave it running when it does).
    if STOPPING.contains(&sig) && (pid > 0 || from_kernel) {
        // SAFETY: async-signal-safe.
        unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
    }
}

/// The handlers, installed while it lives; the previous dispositions are
/// put back when dropped.
pub struct Forwarding {
    previous: Vec<(libc::c_int, libc::sigaction)>,
    ignored: Vec<libc::c_int>,
}

impl Forwarding {
    pub fn install() -> Forwarding {
        RECEIVED.store(0, SeqCst);
        COUNT.store(0, SeqCst);
        PASSED_ON.store(false, SeqCst);
        CHILD.store(0, SeqCst);
        PENDING.store(0, SeqCst);
        LAST.store(0, SeqCst);
        let mut previous = Vec::new();
        let mut ignored = Vec::new();
        for sig in forwarded() {
            // SAFETY: reading then setting this process's dispositions with
            // valid sigaction structures.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                if old.sa_sigaction == libc::SIG_IGN {
                    ignored.push(sig);
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
        Forwarding { previous, ignored }
    }

    /// The signals that were ignored when exec started (inherited: `nohup`,
    /// a script's `cmd &`): they stay ignored, for exec and the program.
    pub fn ignored(&self) -> &[libc::c_int] {
        &self.ignored
    }

    /// The program started as `pid`: a signal received before it did is
    /// passed on now.
    pub fn started(&self, pid: u32) {
        CHILD.store(pid as i32, SeqCst);
        // From here the handler passes signals on itself; those it kept
        // while the program had no pid go now, each once (the same signal
        // sent twice before the start was one pending signal for a process,
        // signal(7)). Under load a program can be ready, and signalled,
        // before this runs.
        let pending = PENDING.swap(0, SeqCst);
        let mut sent = pending;
        for sig in 1..=64 {
            if pending & (1 << (sig - 1)) != 0 {
                // SAFETY: our child, not yet waited for.
                unsafe { libc::kill(pid as libc::pid_t, sig) };
            }
        }
        let sig = RECEIVED.load(SeqCst);
        if sig > 0 && sig <= 64 && sent & (1 << (sig - 1)) == 0 {
            // SAFETY: our child, not yet waited for.
            unsafe { libc::kill(pid as libc::pid_t, sig) };
            sent |= 1 << (sig - 1);
        }
        if STOPPING.iter().any(|s| sent & (1 << (s - 1)) != 0) {
            // The stop the handler left for the start (job control).
            // SAFETY: stopping this process; SIGCONT continues it.
            unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
        }
    }

    /// Waits until the program `pid` has ended without reaping it, then
    /// stops passing signals to it, so that none can reach another process
    /// given its pid once it is reaped. A second signal, or `kill_after`
    /// past the first, or `deadline` (a start and the time allowed from
    /// it) past, kills it and what descends from it.
    pub fn wait_ended(
        &self,
        pid: u32,
        kill_after: Option<Duration>,
        deadline: Option<(Instant, Duration)>,
    ) -> Option<Escalated> {
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
                } else if PASSED_ON.load(SeqCst) && kill_after.is_some_and(|k| since.elapsed() >= k)
                {
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
            if escalated.is_none() {
                escalated = timed_out(deadline, || kill_tree(pid as i32));
            }
            // The program's end is seen within 5 ms (exec's report and
            // exit wait no longer); a wake-up costs ~nothing beside it.
            std::thread::sleep(Duration::from_millis(5));
        }
        CHILD.store(0, SeqCst);
        escalated
    }

    /// After the program has ended: waits for the processes it started
    /// that outlived it (a daemon's double fork), reparented to exec (the
    /// child subreaper, `PR_SET_CHILD_SUBREAPER`, man 2 prctl), all but
    /// `skip` (exec's own helper). `told` gets them once (pid, comm of
    /// every one descended from exec, after the program), before the
    /// wait. Signals exec receives meanwhile are passed on to each
    /// process exec is the parent of; a second SIGINT or SIGTERM, or
    /// `kill_after` past the first passed on, or `deadline` past (as
    /// [`Forwarding::wait_ended`]), kills them and all they started.
    pub fn wait_rest(
        &self,
        skip: Option<i32>,
        kill_after: Option<Duration>,
        deadline: Option<(Instant, Duration)>,
        told: &mut dyn FnMut(&[Outlived]),
    ) -> Option<Escalated> {
        let mut first: Option<Instant> = None;
        let mut escalated: Option<Escalated> = None;
        let mut said = false;
        let count_before = COUNT.load(SeqCst);
        loop {
            // The ended ones (the helper too, if it has: its finish
            // then finds it reaped).
            // SAFETY: a null status pointer; WNOHANG.
            while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
            let roots: Vec<i32> = crate::tree::children()
                .into_iter()
                .filter(|&p| Some(p) != skip)
                .collect();
            if roots.is_empty() {
                return escalated;
            }
            if !said {
                said = true;
                let all: Vec<Outlived> = crate::tree::descendants(&roots)
                    .into_iter()
                    .map(|p| (p, crate::tree::comm(p)))
                    .collect();
                told(&all);
            }
            let pending = PENDING.swap(0, SeqCst);
            for sig in 1..=64 {
                if pending & (1 << (sig - 1)) != 0 {
                    for &p in &roots {
                        // SAFETY: our children, unreaped.
                        unsafe { libc::kill(p, sig) };
                    }
                }
            }
            if STOPPING.iter().any(|s| pending & (1 << (s - 1)) != 0) {
                // Job control, as the handler does while the program runs.
                // SAFETY: stopping this process; SIGCONT continues it.
                unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
            }
            let n = COUNT.load(SeqCst) - count_before;
            if n > 0 && escalated.is_none() {
                let since = *first.get_or_insert_with(Instant::now);
                let why = if n >= 2 {
                    Some("a second signal")
                } else if kill_after.is_some_and(|k| since.elapsed() >= k) {
                    Some("kill-after")
                } else {
                    None
                };
                if let Some(why) = why {
                    escalated = Some(Escalated {
                        why: why.into(),
                        after_ms: since.elapsed().as_millis() as u64,
                        killed: roots.iter().map(|&p| kill_tree(p)).sum(),
                    });
                }
            }
            if escalated.is_none() {
                escalated = timed_out(deadline, || roots.iter().map(|&p| kill_tree(p)).sum());
            }
            // Their end is seen within 20 ms; a /proc read per wake-up.
            std::thread::sleep(Duration::from_millis(20));
        }
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

/// When `deadline` (a start and the time allowed from it) has passed:
/// `kill` run, and what it killed as a `timeout`.
fn timed_out(
    deadline: Option<(Instant, Duration)>,
    kill: impl FnOnce() -> u32,
) -> Option<Escalated> {
    let (start, allowed) = deadline?;
    let ran = start.elapsed();
    (ran >= allowed).then(|| Escalated {
        why: "timeout".into(),
        after_ms: ran.as_millis() as u64,
        killed: kill(),
    })
}

/// SIGKILL to `pid`, to every process descended from it (gathered before
/// any is killed, so none is reparented away first), and to its process
/// group if it is not ours; returns how many processes were sent it.
fn kill_tree(pid: i32) -> u32 {
    let tree = crate::tree::descendants(&[pid]);
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

/// Ends this process by `sig`, as the program ended (issue 38 item 6: its
/// parent sees WIFSIGNALED with that signal, not exit 128 + it): the
/// default disposition back, the signal unblocked, no core of exec's own
/// (RLIMIT_CORE 0: the program's core, if any, was the kernel's to write),
/// then the signal sent to ourselves. Returns if it did not end us (a
/// signal whose default is not to terminate): exit with 128 + it then.
pub fn reraise(sig: i32) {
    // SAFETY: this process's own disposition, mask and limit; kill of
    // ourselves.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
    }
    // A signal is delivered before kill returns to its only unblocking
    // thread; another thread may take it: a moment for it.
    std::thread::sleep(Duration::from_millis(100));
}

/// A signal's name (`SIGTERM`, `SIGRTMIN+2`), or its number.
pub fn name(sig: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    match sig {
        // x86_64's numbering (arch/x86/include/uapi/asm/signal.h).
        1..=31 => NAMES[sig as usize - 1].into(),
        s if s >= libc::SIGRTMIN() && s <= libc::SIGRTMAX() => {
            format!("SIGRTMIN+{}", s - libc::SIGRTMIN())
        }
        _ => format!("signal {sig}"),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn one_sending_seen_twice_is_again_and_a_later_or_another_is_not() {
        let last = AtomicU64::new(0);
        let ms = 1_000_000;
        assert!(!Sending::new(libc::SIGTERM, 4242, 10 * ms).again(&last));
        assert!(Sending::new(libc::SIGTERM, 4242, 10 * ms + 5).again(&last));
        assert!(Sending::new(libc::SIGTERM, 4242, 60 * ms).again(&last));
        // Another sender, another signal, or the same one after SAME_SEND.
        assert!(!Sending::new(libc::SIGTERM, 4243, 61 * ms).again(&last));
        assert!(!Sending::new(libc::SIGINT, 4243, 62 * ms).again(&last));
        assert!(
            !Sending::new(libc::SIGINT, 4243, 62 * ms + SAME_SEND.as_nanos() as u64).again(&last)
        );
        // Across the 2^35 ms wrap of the packed clock.
        let wrap = (1u64 << 35) * ms;
        let last = AtomicU64::new(0);
        assert!(!Sending::new(libc::SIGTERM, 1, wrap - ms).again(&last));
        assert!(Sending::new(libc::SIGTERM, 1, wrap + ms).again(&last));
        // The largest pid and real-time signal keep their fields apart.
        let a = Sending::new(libc::SIGRTMAX(), (1 << 22) - 1, 0);
        assert!(!a.same_sender(Sending::new(libc::SIGRTMAX(), (1 << 22) - 2, 0)));
        assert!(!a.same_sender(Sending::new(libc::SIGRTMAX() - 1, (1 << 22) - 1, 0)));
    }

    #[test]
    fn of_two_handlers_racing_with_one_sending_exactly_one_finds_it_new() {
        // The race the single word closes: many threads at once with the
        // same sending, as timeout's two kills landing on two threads.
        for round in 0..200u64 {
            let last = std::sync::Arc::new(AtomicU64::new(0));
            let start = std::sync::Arc::new(std::sync::Barrier::new(4));
            let new: usize = (0..4)
                .map(|_| {
                    let (last, start) = (last.clone(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        !Sending::new(libc::SIGTERM, 99, round * 1_000_000_000).again(&last)
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|t| usize::from(t.join().unwrap()))
                .sum();
            assert_eq!(new, 1, "round {round}");
        }
    }

    use super::*;

    #[test]
    fn every_catchable_signal_but_the_faults_is_passed_on_and_named() {
        let f = forwarded();
        for s in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGWINCH,
            libc::SIGCONT,
            libc::SIGTSTP,
            libc::SIGALRM,
            libc::SIGRTMIN(),
            libc::SIGRTMAX(),
        ] {
            assert!(f.contains(&s), "{}", name(s));
        }
        for s in NOT_PASSED {
            assert!(!f.contains(&s), "{}", name(s));
        }
        assert!(!f.contains(&32) && !f.contains(&33));
        assert_eq!(name(libc::SIGUSR1), "SIGUSR1");
        assert_eq!(name(libc::SIGSYS), "SIGSYS");
        assert_eq!(name(libc::SIGWINCH), "SIGWINCH");
        assert_eq!(name(libc::SIGRTMIN() + 2), "SIGRTMIN+2");
    }
}

//! What reaches the disk without passing through the preload library
//! (issue 24 item 2): a program's own aio system calls (an inline
//! `syscall` instruction, as libaio's and liburing's stubs make them) and
//! io_uring rings. A seccomp filter, installed in the program's process
//! before it starts (inherited by every process and thread it makes),
//! sends each such call to `exec` as a user notification
//! (`SECCOMP_RET_USER_NOTIF`, man 2 seccomp_unotify); a process forked
//! from `exec` ([`Helper`], which outlives it) or else a thread of `exec`
//! ([`Watcher`]) records who made it (pid, comm, which call) and lets it
//! run at once, unchanged (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): the filter
//! names, it never routes nor alters. The one exception is asked for:
//! under `--io-uring refuse` ([`IoUring::Refuse`]) each `io_uring_setup`
//! is answered with the error ENOSYS instead (val 0, error -ENOSYS: man 2
//! seccomp_unotify), and `io_uring_enter` and `io_uring_register` fail
//! with ENOSYS inside the kernel (`SECCOMP_RET_ERRNO`), as on a kernel
//! built without io_uring.
//!
//! The library's own aio calls pass [`shm::OWN_CALL`] as their sixth
//! argument, which none of them reads, and are let through by the filter
//! itself; `io_uring_setup` is always notified. Every other call is
//! allowed by the filter without leaving the kernel.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::config::{IoUring, IO_URING_REFUSED_ERRNO};

/// `AUDIT_ARCH_X86_64`: EM_X86_64 (62) | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
/// (include/uapi/linux/audit.h).
const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
/// x32 system calls carry this bit (arch/x86/include/uapi/asm/unistd.h);
/// their aio calls are not watched.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// `struct seccomp_data` offsets (include/uapi/linux/seccomp.h): nr, arch,
/// instruction_pointer, args[6].
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const DATA_ARG5_LO: u32 = 16 + 5 * 8;
const DATA_ARG5_HI: u32 = DATA_ARG5_LO + 4;

/// io_pgetevents on x86_64 (arch/x86/entry/syscalls/syscall_64.tbl: 333;
/// not in the libc crate for glibc targets).
const SYS_IO_PGETEVENTS: libc::c_long = 333;

/// The aio calls the library makes itself, marked with [`shm::OWN_CALL`].
const AIO: [(libc::c_long, &str); 6] = [
    (libc::SYS_io_setup, "io_setup"),
    (libc::SYS_io_destroy, "io_destroy"),
    (libc::SYS_io_submit, "io_submit"),
    (libc::SYS_io_cancel, "io_cancel"),
    (libc::SYS_io_getevents, "io_getevents"),
    (SYS_IO_PGETEVENTS, "io_pgetevents"),
];

/// An io_uring ring in the report's words.
pub const IO_URING: &str = "io_uring ring set up (its requests are neither routed nor counted)";
/// An `io_uring_setup` failed with ENOSYS under `--io-uring refuse`, in
/// the report's words.
pub const IO_URING_REFUSED: &str = "io_uring refused";

/// What one notified call is, in the report's words.
fn what(nr: i32, io_uring: IoUring) -> String {
    if i64::from(nr) == libc::SYS_io_uring_setup {
        return match io_uring {
            // Under route, a setup the library did not answer (an inline
            // one from code it does not trap, or a process without it).
            IoUring::Route | IoUring::Pass => IO_URING.into(),
            IoUring::Refuse => IO_URING_REFUSED.into(),
        };
    }
    AIO.iter().find(|(n, _)| *n == i64::from(nr)).map_or_else(
        || format!("system call {nr}"),
        |(_, name)| format!("inline {name}"),
    )
}

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jeq(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

/// The filter: x86_64's aio calls and `io_uring_setup` whose sixth
/// argument is not [`shm::OWN_CALL`], to the listener; under
/// [`IoUring::Refuse`], `io_uring_enter` and `io_uring_register` fail with
/// ENOSYS in the kernel (no ring can exist to use them on, and a kernel
/// without io_uring fails them so: kernel/sys_ni.c); everything else
/// allowed.
pub fn program(io_uring: IoUring) -> Vec<libc::sock_filter> {
    let ld = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let ret = libc::BPF_RET | libc::BPF_K;
    let n = AIO.len() as u8;
    let mut p = vec![
        stmt(ld, DATA_ARCH),
        // Another ABI: allowed.
        jeq(AUDIT_ARCH_X86_64, 1, 0),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
        stmt(ld, DATA_NR),
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        stmt(ret, libc::SECCOMP_RET_ALLOW),
    ];
    if io_uring == IoUring::Refuse {
        let enosys = libc::SECCOMP_RET_ERRNO | IO_URING_REFUSED_ERRNO as u32;
        for nr in [libc::SYS_io_uring_enter, libc::SYS_io_uring_register] {
            p.extend([jeq(nr as u32, 0, 1), stmt(ret, enosys)]);
        }
    }
    p.extend([
        // io_uring_setup: to the sixth argument's check, as the aio calls
        // (past the aio list and its ALLOW): the library's own shadow
        // rings pass, the program's inline setups are notified.
        jeq(libc::SYS_io_uring_setup as u32, n + 1, 0),
    ]);
    // Each aio number jumps to the sixth argument's check, past the rest of
    // the list and the ALLOW after it.
    for (i, (nr, _)) in AIO.iter().enumerate() {
        let left = n - 1 - i as u8;
        p.push(jeq(*nr as u32, left + 1, 0));
    }
    p.extend([
        stmt(ret, libc::SECCOMP_RET_ALLOW),
        // aio: is args[5] OWN_CALL?
        stmt(ld, DATA_ARG5_LO),
        jeq(shm::OWN_CALL as u32, 0, 3),
        stmt(ld, DATA_ARG5_HI),
        jeq((shm::OWN_CALL >> 32) as u32, 0, 1),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
        stmt(ret, libc::SECCOMP_RET_USER_NOTIF),
    ]);
    p
}

/// What the child installs before it runs the program, and where its
/// listener goes.
pub struct Install {
    pub prog: Vec<libc::sock_filter>,
    /// exec's socket: the listener, or why there is none.
    pub sock: RawFd,
    /// Set no_new_privs first (not root).
    pub no_new_privs: bool,
    /// exec's end of the [`Helper`]'s socket, when there is a helper: the
    /// listener goes straight to it from the child, before the program
    /// runs, so that an exec killed at once (SIGKILL, before it could pass
    /// the listener on) leaves the program's watched calls answered.
    pub helper: Option<RawFd>,
}

/// The byte that tells exec the listener went to the helper.
const HANDED: u8 = 0;

/// What the child does before it runs the program: set (when asked)
/// no_new_privs, install the filter with a new listener and send the
/// listener to the helper (then [`HANDED`] to `exec`) or to `exec` through
/// `sock` (SCM_RIGHTS). On failure, one byte with the errno's low bits
/// goes instead, so that exec says why. Only async-signal-safe calls: it
/// runs between fork and execve.
///
/// # Safety
/// Call only in a forked child; `prog` must stay valid for the call.
pub unsafe fn install_in_child(
    prog: &libc::sock_fprog,
    sock: RawFd,
    no_new_privs: bool,
    helper: Option<RawFd>,
) {
    let mut err = 0;
    if no_new_privs && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        err = *libc::__errno_location();
    }
    let fd = if err == 0 {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            prog as *const libc::sock_fprog,
        ) as libc::c_int
    } else {
        -1
    };
    if fd < 0 && err == 0 {
        err = *libc::__errno_location();
    }
    let handed = fd >= 0 && helper.is_some_and(|h| send(h, Some(fd), b'L'));
    if handed {
        send(sock, None, HANDED);
    } else {
        send(sock, (fd >= 0).then_some(fd), err.clamp(0, 255) as u8);
    }
    if fd >= 0 {
        libc::close(fd);
    }
}

/// A connected pair of Unix sockets (close-on-exec): ours, the child's.
pub(crate) fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills two descriptors we then own.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// One byte, with `fd` (SCM_RIGHTS) if given, on the Unix socket `sock`.
/// Async-signal-safe.
///
/// # Safety
/// `sock` and `fd` must be open descriptors.
unsafe fn send(sock: RawFd, fd: Option<RawFd>, byte: u8) -> bool {
    let mut byte = [byte];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    // Room for one descriptor's control message, aligned for cmsghdr.
    let mut ctl = [0u64; 4];
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if let Some(fd) = fd {
        msg.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut RawFd, fd);
    }
    libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL) == 1
}

/// `exec`'s side of the socket: the listener the child sent (`None`: it
/// went to the helper), or why it could not install the filter.
pub fn receive(sock: &OwnedFd) -> Result<Option<OwnedFd>, String> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    let mut ctl = [0u64; 4];
    // SAFETY: a msghdr of our own buffers; the child sent before its
    // execve, which spawn waited for, so the message is there (or the
    // child never got so far: MSG_DONTWAIT).
    let (r, fd) = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&ctl);
        let r = libc::recvmsg(
            sock.as_raw_fd(),
            &mut msg,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        );
        let c = libc::CMSG_FIRSTHDR(&msg);
        let fd = if r == 1
            && !c.is_null()
            && (*c).cmsg_level == libc::SOL_SOCKET
            && (*c).cmsg_type == libc::SCM_RIGHTS
        {
            std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const RawFd)
        } else {
            -1
        };
        (r, fd)
    };
    if fd >= 0 {
        // SAFETY: the descriptor SCM_RIGHTS gave us.
        return Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) }));
    }
    if r != 1 {
        return Err("the program's process did not say whether the filter was installed".into());
    }
    if byte[0] == HANDED {
        return Ok(None);
    }
    Err(format!(
        "the seccomp filter could not be installed: {}",
        io::Error::from_raw_os_error(i32::from(byte[0]))
    ))
}

/// A way to the disk that did not pass through the library, named in the
/// report (`not_routed`) and once on stderr.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotRouted {
    /// `inline io_submit`, `io_uring ring set up`, `statically linked
    /// program`, `region not mapped`, ...
    pub what: String,
    pub pid: u32,
    pub comm: String,
    /// Calls seen (none for what is not a call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Why, for a refusal the filter's listener answered.
pub const REFUSED_BY_FILTER: &str = "io_uring_setup failed with ENOSYS (--io-uring refuse: as on a kernel without io_uring), answered by exec's seccomp listener";

/// Who a thread id belongs to: its process and the process's name.
fn owner(tid: u32) -> (u32, String) {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).unwrap_or_default();
    let tgid = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(tid);
    let comm = std::fs::read_to_string(format!("/proc/{tgid}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_default();
    (tgid, comm)
}

/// Calls by (system call number, process), with each process's name:
/// nothing is allocated per notification but a new process's first.
#[derive(Clone, Default)]
struct Seen {
    calls: BTreeMap<(i32, u32), u64>,
    comm: std::collections::HashMap<u32, String>,
}

/// The thread answering the listener, running.
pub struct Watcher {
    thread: Option<std::thread::JoinHandle<()>>,
    /// Written to stop the thread.
    stop: OwnedFd,
    seen: Arc<Mutex<Seen>>,
    io_uring: IoUring,
}

impl Watcher {
    /// Answers every notification of `listener` until [`Watcher::finish`]
    /// or until no process uses the filter any more (POLLHUP).
    pub fn start(listener: OwnedFd, io_uring: IoUring) -> io::Result<Watcher> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills two descriptors we then own.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let (rx, tx) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let seen = Arc::new(Mutex::new(Seen::default()));
        let theirs = seen.clone();
        let thread = std::thread::Builder::new()
            .name("exec-seccomp".into())
            .spawn(move || answer(&listener, &rx, &theirs, io_uring))?;
        Ok(Watcher {
            thread: Some(thread),
            stop: tx,
            seen,
            io_uring,
        })
    }

    /// Stops the thread (a process of the program still running after
    /// this gets ENOSYS from a watched call: man 2 seccomp_unotify) and
    /// returns what it saw.
    pub fn finish(mut self) -> Vec<NotRouted> {
        // SAFETY: one byte to our own pipe.
        unsafe { libc::write(self.stop.as_raw_fd(), [1u8].as_ptr() as *const _, 1) };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.seen
            .lock()
            .map(|s| listed(&s, self.io_uring))
            .unwrap_or_default()
    }
}

type Owners = std::collections::HashMap<u32, (u32, String)>;

fn answer(listener: &OwnedFd, stop: &OwnedFd, seen: &Mutex<Seen>, io_uring: IoUring) {
    let mut owners = Owners::default();
    loop {
        match poll2(listener, stop) {
            Polled::Again => continue,
            Polled::Listener => {
                if let Some(k) = answer_one(listener, &mut owners, io_uring) {
                    if let Ok(mut s) = seen.lock() {
                        count(&mut s, k);
                    }
                }
            }
            _ => return,
        }
    }
}

enum Polled {
    Again,
    /// A notification waits.
    Listener,
    /// Every process with the filter has exited (POLLHUP), or poll failed.
    Hangup,
    /// The other descriptor is readable (or closed).
    Other,
}

fn poll2(listener: &OwnedFd, other: &OwnedFd) -> Polled {
    let mut p = [
        libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: other.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // SAFETY: two pollfds of ours.
    if unsafe { libc::poll(p.as_mut_ptr(), 2, -1) } < 0 {
        if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            return Polled::Again;
        }
        return Polled::Hangup;
    }
    if p[1].revents != 0 {
        return Polled::Other;
    }
    if p[0].revents & libc::POLLIN != 0 {
        return Polled::Listener;
    }
    Polled::Hangup
}

/// (system call, pid, comm) of one notification, answered CONTINUE (an
/// `io_uring_setup` under [`IoUring::Refuse`]: the error ENOSYS, the call
/// never made); `None` if there was none to take (the caller died first,
/// or EINTR).
fn answer_one<'a>(
    listener: &OwnedFd,
    owners: &'a mut Owners,
    io_uring: IoUring,
) -> Option<(i32, u32, &'a str)> {
    // SAFETY: the kernel wants a zeroed seccomp_notif (man 2
    // seccomp_unotify: "EINVAL ... not zeroed").
    let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    if unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_RECV, &mut n) } != 0 {
        return None;
    }
    // Who, before the answer lets the call (and perhaps the process) go on.
    let (pid, comm) = owners.entry(n.pid).or_insert_with(|| owner(n.pid));
    let refused = io_uring == IoUring::Refuse && i64::from(n.data.nr) == libc::SYS_io_uring_setup;
    // man 2 seccomp_unotify: "error" set (negative) fails the call with
    // that errno, val ignored; flags CONTINUE runs it as made.
    let mut resp = if refused {
        libc::seccomp_notif_resp {
            id: n.id,
            val: 0,
            error: -IO_URING_REFUSED_ERRNO,
            flags: 0,
        }
    } else {
        libc::seccomp_notif_resp {
            id: n.id,
            val: 0,
            error: 0,
            flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        }
    };
    // SAFETY: our response for the id just received; ENOENT if the caller
    // is gone, which is nothing to do.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &mut resp,
        )
    };
    Some((n.data.nr, *pid, comm.as_str()))
}

fn count(seen: &mut Seen, (nr, pid, comm): (i32, u32, &str)) {
    *seen.calls.entry((nr, pid)).or_insert(0) += 1;
    seen.comm.entry(pid).or_insert_with(|| comm.to_string());
}

fn listed(seen: &Seen, io_uring: IoUring) -> Vec<NotRouted> {
    let mut v: Vec<NotRouted> = seen
        .calls
        .iter()
        .map(|(&(nr, pid), &calls)| NotRouted {
            what: what(nr, io_uring),
            pid,
            comm: seen.comm.get(&pid).cloned().unwrap_or_default(),
            calls: Some(calls),
            uid: None,
            why: (io_uring == IoUring::Refuse && i64::from(nr) == libc::SYS_io_uring_setup)
                .then(|| REFUSED_BY_FILTER.to_string()),
        })
        .collect();
    v.sort_by(|a, b| (&a.what, a.pid).cmp(&(&b.what, b.pid)));
    v
}

/// The listener's answering process: forked from `exec` before it starts
/// any thread, it outlives `exec`, so that a program whose `exec` was
/// killed (SIGKILL), or a process of it still running when `exec` is done,
/// keeps its watched calls (with no listener left they would fail with
/// ENOSYS: man 2 seccomp_unotify). It answers until no process uses the
/// filter (POLLHUP); it sends what it saw to `exec` once, when asked or at
/// that hang-up, whichever is first. It ignores every signal exec passes
/// on (a terminal's reach the whole group) and holds no descriptor of exec's
/// but its socket (stdio on /dev/null).
pub struct Helper {
    sock: OwnedFd,
    pid: libc::pid_t,
}

impl Helper {
    /// `None` when this process already runs other threads (a fork would
    /// copy locks some of them hold): the thread [`Watcher`] serves then.
    pub fn fork(io_uring: IoUring) -> Option<Helper> {
        let threads = std::fs::read_dir("/proc/self/task").ok()?.count();
        if threads != 1 {
            return None;
        }
        let (ours, theirs) = socket_pair().ok()?;
        // SAFETY: single-threaded (checked above), so the child may run
        // anything; it never returns (`_exit`), running none of our
        // destructors or atexit handlers.
        match unsafe { libc::fork() } {
            -1 => None,
            0 => {
                drop(ours);
                helper_main(theirs, io_uring);
            }
            pid => Some(Helper { sock: ours, pid }),
        }
    }

    /// exec's end of its socket (close-on-exec): the program's process
    /// sends the listener on it before its execve.
    pub fn sock(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// Its process id (a child of exec's, not the program's).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Hands it the listener (our copy is closed when dropped).
    pub fn give(&self, listener: &OwnedFd) -> bool {
        // SAFETY: our socket and the listener, both open.
        unsafe { send(self.sock.as_raw_fd(), Some(listener.as_raw_fd()), b'L') }
    }

    /// What it saw; `None` if it did not say within 2 s.
    pub fn finish(self) -> Option<Vec<NotRouted>> {
        // SAFETY: our socket; it may be gone (EPIPE, ignored: its report
        // may be queued already).
        unsafe { send(self.sock.as_raw_fd(), None, b'R') };
        let mut p = libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd of ours. It answers between two notifications
        // (microseconds, README); 2 s is for a machine far busier than ours.
        let ready = unsafe { libc::poll(&mut p, 1, 2000) } == 1;
        let mut buf = vec![0u8; 1 << 20];
        // SAFETY: into our buffer.
        let n = if ready {
            unsafe {
                libc::recv(
                    self.sock.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            }
        } else {
            -1
        };
        // SAFETY: our child; reaped if it has ended, else left to end.
        unsafe { libc::waitpid(self.pid, std::ptr::null_mut(), libc::WNOHANG) };
        let n = usize::try_from(n).ok()?;
        serde_json::from_slice(&buf[..n]).ok()
    }
}

/// The helper process's whole life.
fn helper_main(sock: OwnedFd, io_uring: IoUring) -> ! {
    // SAFETY: plain calls on this fresh process's own state.
    unsafe {
        // Every signal exec passes on, and SIGPIPE: a terminal's (Ctrl-\\
        // SIGQUIT, Ctrl-Z SIGTSTP) and a `kill -USR1 -PGID` reach the
        // whole group, and a helper killed or stopped would leave the
        // program's watched calls unanswered.
        for sig in crate::signals::forwarded() {
            libc::signal(sig, libc::SIG_IGN);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        let keep = sock.as_raw_fd();
        // Every other descriptor of exec's (a test's pipes, the region).
        for fd in 3..1024 {
            if fd != keep {
                libc::close(fd);
            }
        }
        libc::prctl(libc::PR_SET_NAME, c"cint-seccomp".as_ptr());
    }
    let mut seen = Seen::default();
    let mut owners = Owners::default();
    let mut listener: Option<OwnedFd> = None;
    let mut told = false;
    let mut exec_here = true;
    let tell = |seen: &Seen| {
        let text = serde_json::to_vec(&listed(seen, io_uring)).unwrap_or_default();
        // SAFETY: our socket and buffer; EPIPE when exec is gone.
        unsafe {
            libc::send(
                sock.as_raw_fd(),
                text.as_ptr() as *const libc::c_void,
                text.len(),
                libc::MSG_NOSIGNAL,
            )
        };
    };
    loop {
        let Some(l) = &listener else {
            // Waiting for the listener (or exec gone before it came).
            match receive_any(&sock) {
                Some((Some(fd), _)) => listener = Some(fd),
                Some((None, _)) => continue,
                None => unsafe { libc::_exit(0) },
            }
            continue;
        };
        let polled = if exec_here { poll2(l, &sock) } else { poll1(l) };
        match polled {
            Polled::Again => {}
            Polled::Listener => {
                if let Some(k) = answer_one(l, &mut owners, io_uring) {
                    count(&mut seen, k);
                }
            }
            Polled::Other => match receive_any(&sock) {
                Some((_, b'R')) if !told => {
                    tell(&seen);
                    told = true;
                }
                Some(_) => {}
                // exec is gone: answer on until the hang-up.
                None => exec_here = false,
            },
            Polled::Hangup => {
                if exec_here && !told {
                    tell(&seen);
                }
                // SAFETY: ends this process, nothing of exec's to run.
                unsafe { libc::_exit(0) };
            }
        }
    }
}

fn poll1(listener: &OwnedFd) -> Polled {
    let mut p = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd of ours.
    if unsafe { libc::poll(&mut p, 1, -1) } < 0 {
        if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            return Polled::Again;
        }
        return Polled::Hangup;
    }
    if p.revents & libc::POLLIN != 0 {
        Polled::Listener
    } else {
        Polled::Hangup
    }
}

/// One message: its descriptor if it carried one, and its byte; `None` at
/// the end (the peer closed) or on an error.
fn receive_any(sock: &OwnedFd) -> Option<(Option<OwnedFd>, u8)> {
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    let mut ctl = [0u64; 4];
    // SAFETY: a msghdr of our own buffers.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&ctl);
        let r = libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if r <= 0 {
            return None;
        }
        let c = libc::CMSG_FIRSTHDR(&msg);
        let fd = (!c.is_null()
            && (*c).cmsg_level == libc::SOL_SOCKET
            && (*c).cmsg_type == libc::SCM_RIGHTS)
            .then(|| {
                OwnedFd::from_raw_fd(std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const RawFd))
            });
        Some((fd, byte[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_jumps_land_inside_it() {
        for io_uring in [IoUring::Pass, IoUring::Refuse] {
            let p = program(io_uring);
            for (i, ins) in p.iter().enumerate() {
                if ins.code as u32 & 0x07 == libc::BPF_JMP {
                    assert!(i + 1 + (ins.jt as usize) < p.len(), "jt of {i}");
                    assert!(i + 1 + (ins.jf as usize) < p.len(), "jf of {i}");
                }
            }
        }
        assert_eq!(
            what(libc::SYS_io_submit as i32, IoUring::Refuse),
            "inline io_submit"
        );
        assert_eq!(
            what(libc::SYS_io_uring_setup as i32, IoUring::Refuse),
            IO_URING_REFUSED
        );
    }

    /// The filter run on a `seccomp_data` by a small classic-BPF
    /// interpreter (the instructions it uses: ld abs, jeq, jge, ret).
    fn verdict(nr: libc::c_long, arch: u32, arg5: u64) -> u32 {
        verdict_of(IoUring::Pass, nr, arch, arg5)
    }

    fn verdict_of(io_uring: IoUring, nr: libc::c_long, arch: u32, arg5: u64) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as i32).to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        data[56..64].copy_from_slice(&arg5.to_le_bytes());
        let p = program(io_uring);
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &p[pc];
            let k = i.k;
            match i.code as u32 {
                c if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS => {
                    let o = k as usize;
                    acc = u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
                    pc += 1;
                }
                c if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K => {
                    pc += 1 + usize::from(if acc == k { i.jt } else { i.jf });
                }
                c if c == libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K => {
                    pc += 1 + usize::from(if acc >= k { i.jt } else { i.jf });
                }
                c if c == libc::BPF_RET | libc::BPF_K => return k,
                c => panic!("instruction {c:#x} at {pc}"),
            }
        }
    }

    #[test]
    fn the_filter_notifies_foreign_aio_and_io_uring_setups_only() {
        let (allow, notify) = (libc::SECCOMP_RET_ALLOW, libc::SECCOMP_RET_USER_NOTIF);
        let x86 = AUDIT_ARCH_X86_64;
        for (nr, _) in AIO {
            assert_eq!(verdict(nr, x86, 0), notify, "{nr}");
            assert_eq!(verdict(nr, x86, shm::OWN_CALL), allow, "{nr}");
            // Half the marker is not the marker.
            assert_eq!(verdict(nr, x86, shm::OWN_CALL & 0xffff_ffff), notify);
            assert_eq!(verdict(nr, x86, shm::OWN_CALL & !0xffff_ffff), notify);
        }
        assert_eq!(verdict(libc::SYS_io_uring_setup, x86, 0), notify);
        // The library's shadow rings are its own calls.
        assert_eq!(verdict(libc::SYS_io_uring_setup, x86, shm::OWN_CALL), allow);
        for nr in [
            libc::SYS_read,
            libc::SYS_pread64,
            libc::SYS_io_uring_enter,
            libc::SYS_getppid,
        ] {
            assert_eq!(verdict(nr, x86, 0), allow, "{nr}");
        }
        // x32's io_submit, and another architecture's numbers: allowed.
        assert_eq!(verdict(libc::SYS_io_submit | 0x4000_0000, x86, 0), allow);
        assert_eq!(verdict(libc::SYS_io_submit, 0x4000_0003, 0), allow);
    }

    #[test]
    fn under_refuse_setup_is_notified_and_enter_and_register_fail_with_enosys() {
        let x86 = AUDIT_ARCH_X86_64;
        let v = |nr| verdict_of(IoUring::Refuse, nr, x86, 0);
        let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        assert_eq!(v(libc::SYS_io_uring_setup), libc::SECCOMP_RET_USER_NOTIF);
        assert_eq!(v(libc::SYS_io_uring_enter), enosys);
        assert_eq!(v(libc::SYS_io_uring_register), enosys);
        assert_eq!(v(libc::SYS_io_submit), libc::SECCOMP_RET_USER_NOTIF);
        assert_eq!(
            verdict_of(IoUring::Refuse, libc::SYS_io_submit, x86, shm::OWN_CALL),
            libc::SECCOMP_RET_ALLOW
        );
        for nr in [libc::SYS_read, libc::SYS_getppid] {
            assert_eq!(v(nr), libc::SECCOMP_RET_ALLOW, "{nr}");
        }
    }
}

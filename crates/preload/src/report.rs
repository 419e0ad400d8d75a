//! Each process's record, written once when it exits (by `exit`'s atexit
//! handlers or by `_exit`) to `$CINTERRUPTS_EXEC_OUT/PID.json`, whole or
//! not at all (a temporary file renamed). A forked child starts from zero
//! and writes its own.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use wire::Record;

use crate::state::{config, BOOSTS, LIVE};

static WRITTEN: AtomicBool = AtomicBool::new(false);

/// Writes this process's record, once.
pub(crate) fn write_once() {
    let Some(c) = config() else { return };
    if WRITTEN.swap(true, SeqCst) {
        return;
    }
    crate::route::release_mine();
    // A ring set up without glibc's `syscall()` (liburing's own system
    // call stubs) is still seen here, once, if it is open at the exit.
    let ring = std::fs::read_dir("/proc/self/fd").is_ok_and(|d| {
        d.flatten().any(|e| {
            let ours = e
                .file_name()
                .to_str()
                .and_then(|n| n.parse().ok())
                .is_some_and(crate::uring::is_shadow);
            !ours
                && std::fs::read_link(e.path())
                    .is_ok_and(|l| l.as_os_str() == "anon_inode:[io_uring]")
        })
    });
    if ring {
        crate::route::say_once_io_uring();
    }
    let rec = Record {
        pid: std::process::id(),
        // SAFETY: getppid cannot fail.
        ppid: unsafe { libc::getppid() } as u32,
        exe: std::fs::read_link("/proc/self/exe")
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
        title: crate::facts::read_title()
            .as_str()
            .unwrap_or_default()
            .to_string(),
        counts: LIVE.snapshot(),
        boosted: BOOSTS.lock().map(|b| b.clone()).unwrap_or_default(),
        comm: std::fs::read_to_string("/proc/self/comm")
            .map(|c| c.trim_end().to_string())
            .unwrap_or_default(),
        // SAFETY: getuid cannot fail.
        uid: unsafe { libc::getuid() },
        unmapped: crate::route::unmapped(),
        io_uring: crate::route::saw_io_uring(),
        io_uring_refused: crate::route::io_uring_refused(),
        io_uring_features_refused: crate::uring::refusals(),
        io_uring_untrapped: crate::uring::UNTRAPPED.get().cloned(),
    };
    let Ok(text) = serde_json::to_vec(&rec) else {
        return;
    };
    let tmp = format!(".{}.tmp", rec.pid);
    let dst = format!("{}.json", rec.pid);
    if let Some(dir) = c.out_fd.filter(|&(fd, ino)| is_dir(fd, ino)) {
        if write_at(dir.0, &tmp, &dst, &text).is_ok() {
            return;
        }
    }
    if std::fs::write(c.out.join(&tmp), text).is_ok() {
        let _ = std::fs::rename(c.out.join(&tmp), c.out.join(&dst));
    } else {
        crate::route::say(&format!(
            "process {} ({}) could not write its counts to {}: they are missing from the report",
            rec.pid,
            rec.comm,
            c.out.display()
        ));
    }
}

/// Whether `fd` is still exec's counts directory (the program may have
/// closed the inherited descriptor and reused its number).
fn is_dir(fd: libc::c_int, ino: u64) -> bool {
    // SAFETY: fstat fills the struct; a closed descriptor returns -1.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
    ok && st.st_ino == ino && st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// `text` written to `tmp` in the directory `dir`, renamed to `dst`:
/// through the descriptor, whatever user this process has become.
fn write_at(dir: libc::c_int, tmp: &str, dst: &str, text: &[u8]) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let (t, d) = (
        CString::new(tmp).expect("no NUL"),
        CString::new(dst).expect("no NUL"),
    );
    // SAFETY: NUL-terminated names relative to an open directory.
    let fd = unsafe {
        libc::openat(
            dir,
            t.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor just opened, ours to close.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    f.write_all(text)?;
    drop(f);
    // SAFETY: as above.
    if unsafe { libc::renameat(dir, t.as_ptr(), dir, d.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

extern "C" fn at_exit() {
    write_once();
}

extern "C" fn in_child() {
    LIVE.reset();
    crate::facts::forked();
    WRITTEN.store(false, SeqCst);
    crate::uring::forget_in_child();
    crate::route::forget_in_child();
    // Its parent's libaio contexts are not the child's (the kernel does
    // not share them across fork); the twin descriptors are inherited.
    crate::aio::forget_in_child();
    if let Ok(mut b) = BOOSTS.lock() {
        b.clear();
    }
}

extern "C" fn init() {
    if config().is_none() {
        return;
    }
    // SAFETY: registering plain extern "C" functions.
    unsafe {
        libc::atexit(at_exit);
        libc::pthread_atfork(None, None, Some(in_child));
    }
    if crate::uring::routing() {
        if let Err(why) = crate::uring::trap::install() {
            crate::route::say(&format!(
                "io_uring calls made inline (liburing's, fio's) are not routed: {why}"
            ));
            let _ = crate::uring::UNTRAPPED.set(why);
        }
    }
}

/// Runs [`init`] when the library is loaded (before the program's main).
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

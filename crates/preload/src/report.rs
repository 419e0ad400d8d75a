//! Each process's record, written once when it exits (by `exit`'s atexit
//! handlers or by `_exit`) to `$CINTERRUPTS_EXEC_OUT/PID.json`, whole or
//! not at all (a temporary file renamed). A forked child starts from zero
//! and writes its own.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use exec::Record;

use crate::intercept::{config, LIVE};

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
            std::fs::read_link(e.path()).is_ok_and(|l| l.as_os_str() == "anon_inode:[io_uring]")
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
        boosted: crate::route::BOOSTS
            .lock()
            .map(|b| b.clone())
            .unwrap_or_default(),
    };
    let Ok(text) = serde_json::to_vec(&rec) else {
        return;
    };
    let tmp = c.out.join(format!(".{}.tmp", rec.pid));
    let dst = c.out.join(format!("{}.json", rec.pid));
    if std::fs::write(&tmp, text).is_ok() {
        let _ = std::fs::rename(&tmp, &dst);
    }
}

extern "C" fn at_exit() {
    write_once();
}

extern "C" fn in_child() {
    LIVE.reset();
    crate::facts::forked();
    WRITTEN.store(false, SeqCst);
    crate::route::forget_in_child();
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
}

/// Runs [`init`] when the library is loaded (before the program's main).
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

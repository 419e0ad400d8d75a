//! Standard output that a closed reader (`cinterrupts ... | head`) ends
//! quietly (issue 41 item 0).
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with
//! `BrokenPipe`, and `println!` panics on it (exit 101). As ripgrep does
//! (BurntSushi/ripgrep `crates/core/main.rs`: "A broken pipe means graceful
//! termination", its printing stops and it exits as it would have), a
//! broken pipe here stops the printing only: the verb goes on, its files
//! (`--report`, `--out`, a store) are written whole, and it exits 0. Any
//! other write error is kept and ends the verb with one line, non-zero.

use std::io::{self, ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The reader went away: nothing more is printed.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// The first write error other than a broken pipe.
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Prints `text` as `print!` would, unless stdout is closed.
pub fn write(text: &str) {
    if text.is_empty() || CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        failed(&e);
    }
}

/// Notes a failed write to stdout: a broken pipe closes it quietly, any
/// other error is kept for [`error`].
pub fn failed(e: &io::Error) {
    CLOSED.store(true, Ordering::Relaxed);
    if !is_broken_pipe(e) {
        let mut f = FAILED.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert_with(|| format!("<stdout>: cannot write: {e}"));
    }
}

pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == ErrorKind::BrokenPipe
}

/// Whether an error's chain holds a broken pipe: an `io::Error` of that
/// kind, or the line a library made of one (`<stdout>: cannot write:
/// Broken pipe (os error 32)`, sim's stream writer).
pub fn broken_pipe_in(e: &anyhow::Error) -> bool {
    let pipe = io::Error::from_raw_os_error(libc::EPIPE).to_string();
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>().is_some_and(is_broken_pipe)
            || c.to_string().starts_with("<stdout>: ") && c.to_string().ends_with(&pipe)
    })
}

/// The write error that is not a broken pipe, if one happened.
pub fn error() -> Option<String> {
    FAILED.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// `print!` that a closed stdout ends quietly ([`write()`]).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(&format!($($arg)*))
    };
}

/// `println!` that a closed stdout ends quietly ([`write()`]).
macro_rules! outln {
    () => {
        $crate::stdout::write("\n")
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(&format!("{}\n", format_args!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_is_quiet_and_other_errors_are_kept() {
        let pipe = io::Error::from_raw_os_error(libc::EPIPE);
        assert!(is_broken_pipe(&pipe));
        let lib = anyhow::anyhow!("<stdout>: cannot write: {pipe}");
        assert!(broken_pipe_in(&lib));
        assert!(broken_pipe_in(&anyhow::Error::new(pipe)));
        assert!(!broken_pipe_in(&anyhow::anyhow!("t.csv:3: bad")));
        failed(&io::Error::from_raw_os_error(libc::EPIPE));
        assert_eq!(error(), None);
        failed(&io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(error()
            .unwrap()
            .starts_with("<stdout>: cannot write: No space"));
    }
}

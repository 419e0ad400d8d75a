//! The partial-trace marker (issue 41 item 0): a trace known not to be
//! whole (`cinterrupts capture --allow-loss` lost events) has a file
//! beside it, `TRACE.partial`, whose first line says what was lost
//! (`lost 1821234 events (...); 592000 of 1500000 completions recorded`).
//!
//! A file beside the trace rather than a line in it, so that every format
//! carries it the same way (a binary blktrace file, a CSV that has no
//! comment syntax) and every reader's layout stays its format's. Every
//! verb that reads a trace asks [`partial`] and says so (a warning line,
//! `partial` in its JSON).

use std::io;
use std::path::{Path, PathBuf};

/// The marker of the trace at `trace`: `TRACE.partial`.
pub fn marker(trace: &Path) -> PathBuf {
    let mut name = trace.as_os_str().to_os_string();
    name.push(".partial");
    PathBuf::from(name)
}

/// What the trace at `trace` lost, if it is marked partial: the marker's
/// first line (or a word that it is, when the marker says no more).
pub fn partial(trace: &Path) -> Option<String> {
    let text = std::fs::read(marker(trace)).ok()?;
    let text = String::from_utf8_lossy(&text);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    Some(first.unwrap_or("marked partial").to_string())
}

/// Marks the trace at `trace` partial, `what` saying what was lost (one
/// line); whole or not at all (written beside, then renamed).
pub fn mark(trace: &Path, what: &str) -> io::Result<()> {
    let m = marker(trace);
    let mut tmp = m.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, format!("{}\n", what.replace('\n', " ")))?;
    std::fs::rename(&tmp, &m)
}

/// Removes the trace's marker, if any (a new trace written over a partial
/// one is not partial).
pub fn unmark(trace: &Path) -> io::Result<()> {
    match std::fs::remove_file(marker(trace)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The warning a verb prints for a partial trace, one line.
pub fn warning(trace: &Path, what: &str) -> String {
    format!(
        "warning: {} is a partial trace ({}): {what}; its results undercount",
        trace.display(),
        marker(trace).display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_trace_says_what_it_lost_and_unmarking_clears_it() {
        let dir = std::env::temp_dir().join(format!("traces-partial.{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = dir.join("t.blkparse");
        assert_eq!(partial(&t), None);
        mark(&t, "lost 12 events\n(dropped)").unwrap();
        assert_eq!(marker(&t), dir.join("t.blkparse.partial"));
        assert_eq!(partial(&t).as_deref(), Some("lost 12 events (dropped)"));
        assert!(warning(&t, "lost 12 events").contains("t.blkparse is a partial trace"));
        std::fs::write(marker(&t), "\n").unwrap();
        assert_eq!(partial(&t).as_deref(), Some("marked partial"));
        unmark(&t).unwrap();
        unmark(&t).unwrap();
        assert_eq!(partial(&t), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

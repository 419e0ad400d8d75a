//! After the program: exec's report to its destination (`-o FILE`,
//! stderr, or nowhere with `--quiet`), the notices the report would hold,
//! what happened to the program (a signal passed on, a kill after
//! `--kill-after`) and the exit status exec ends with: the program's own,
//! unless exec's report or staging failed (issue 38 item 6).

use std::error::Error;
use std::io::Write;
use std::path::Path;

use crate::{Options, Outcome, Status};

/// Where exec's report goes and in what form.
#[derive(Clone, Copy, Debug)]
pub struct Destination<'a> {
    /// The JSON document (`--output-format json`) instead of the text.
    pub json: bool,
    /// `-o FILE`, written whole or not at all; `None`: stderr.
    pub file: Option<&'a Path>,
    /// No report on stderr (a file is still written).
    pub quiet: bool,
    /// The `--marks-for` presets, named in the JSON document.
    pub presets: &'a [String],
}

/// An error and its causes on one line, `error: cause: cause`.
fn chain(e: &dyn Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line += &format!(": {c}");
        cause = c.source();
    }
    line
}

/// Refuses, in one line naming it, a `-o FILE` that could not be
/// written: a missing directory, a directory, no permission. Checked
/// before the program runs: found only after, it hid the program's exit
/// status. A file made for the check is removed again. A FIFO or a device
/// is only opened at the end (now it could block, or its reader would see
/// an end of file).
pub fn check_destination(path: &Path) -> Result<(), String> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Ok(());
    }
    report::file::AtomicFile::create(path)
        .map(drop)
        .map_err(|e| format!("{}: cannot write the report: {}", path.display(), chain(&e)))
}

/// Our lines on stderr: a failed write there (a closed terminal after
/// SIGHUP) must not hide the program's status.
fn say(line: &str) {
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Writes the report of `name`'s run to `to` and says on stderr what the
/// report does not; returns exec's exit code (the program's, 128 + a
/// signal), or ends exec by the program's own signal (the wait status
/// the kernel gave it, for our parent) unless our report failed.
pub fn finish(name: &str, opts: &Options, out: &Outcome, to: &Destination) -> i32 {
    let warnings = crate::summary::warnings(name, out);
    let report = if to.json {
        crate::summary::document(name, opts, out, &warnings, to.presets).to_text()
    } else {
        crate::text::text(name, opts, out, &warnings)
    };
    let mut code = out.status.code();
    // Where the data is when it could not be put back: said whatever the
    // report's destination, and the command fails.
    if let Some(err) = out.staging.as_ref().and_then(|s| s.error.as_ref()) {
        say(&format!("cinterrupts: exec: error: staging: {err}\n"));
        if code == 0 {
            code = 1;
        }
    }
    let on_stderr = to.file.is_none() && !to.quiet;
    if let Some(path) = to.file {
        if let Err(e) = report::file::write_atomically(path, report.as_bytes()) {
            say(&format!(
                "cinterrupts: error: {}: cannot write: {}\n",
                path.display(),
                chain(&e)
            ));
            if code == 0 {
                code = 1;
            }
        }
    } else if on_stderr {
        say(&report);
    }
    // The text report on stderr holds them already.
    if !on_stderr || to.json {
        for l in crate::text::notices(out, &warnings) {
            say(&format!("cinterrupts: exec: {l}\n"));
        }
    }
    if let Some(s) = out.interrupted {
        say(&format!(
            "cinterrupts: exec: received {}, passed on to {name}; the report is partial\n",
            crate::signal_name(s)
        ));
    }
    if let Some(e) = &out.escalated {
        say(&format!(
            "cinterrupts: exec: {name} had not ended {} ms after the signal ({}): SIGKILL to {} process(es)\n",
            e.after_ms, e.why, e.killed
        ));
    }
    if let Status::Signalled(s) = out.status {
        say(&format!(
            "cinterrupts: exec: {name} was killed by {} ({s}); exec ends by the same signal\n",
            crate::signal_name(s)
        ));
        // The wait status the kernel gave the program, for our parent
        // (issue 38 item 6); unless our own report failed.
        if code == out.status.code() {
            crate::reraise(s);
        }
    }
    code
}

//! Helpers shared by the binary's end-to-end tests.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cinterrupts"))
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Asserts a failure with exactly one line on stderr containing `want`.
pub fn assert_one_line_error(o: &Output, want: &str) {
    assert!(!o.status.success(), "should fail: {}", stdout(o));
    let err = stderr(o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line, got: {err}");
    assert!(err.contains(want), "'{want}' not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

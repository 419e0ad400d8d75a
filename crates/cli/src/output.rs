//! Results to a file (whole or not at all) or to stdout.

use std::path::Path;

use anyhow::{Context, Result};

/// `bytes` to `path`, whole or not at all.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    report::file::write_atomically(path, bytes)
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// `text` to `path` (whole or not at all), or to stdout.
pub fn emit(text: &str, path: Option<&Path>) -> Result<()> {
    match path {
        Some(path) => write_file(path, text.as_bytes()),
        None => {
            out!("{text}");
            Ok(())
        }
    }
}

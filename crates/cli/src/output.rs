//! Human-readable numbers and safe file output.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Nanoseconds at a scale a person reads: `812ns`, `6.00us`, `1.250ms`.
pub fn fmt_time(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.2}us", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.3}ms", ns as f64 / 1e6)
    } else {
        format!("{:.3}s", ns as f64 / 1e9)
    }
}

/// Writes `bytes` to a temporary file beside `path` and renames it into
/// place, so a failure never leaves a half-written file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().context("output path has no file name")?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("{}: cannot write", path.display()));
    }
    Ok(())
}

/// `text` to `path` (whole or not at all), or to stdout.
pub fn emit(text: &str, path: Option<&Path>) -> Result<()> {
    match path {
        Some(path) => write_atomically(path, text.as_bytes()),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_pick_a_readable_unit() {
        assert_eq!(fmt_time(812), "812ns");
        assert_eq!(fmt_time(6_000), "6.00us");
        assert_eq!(fmt_time(1_250_000), "1.250ms");
        assert_eq!(fmt_time(2_000_000_000), "2.000s");
    }
}

//! Writing an output file whole or not at all: a temporary file beside it,
//! synced, then renamed into place, so a failure (or a crash) never leaves a
//! half-written file where a reader expects results.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` whole or not at all. The directory must exist.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temporary(path)?;
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A hidden name beside `path`, unique to this process.
fn temporary(path: &Path) -> io::Result<PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    Ok(dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("report-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.txt");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        let missing = dir.join("no/such/dir/x");
        assert!(write_atomically(&missing, b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

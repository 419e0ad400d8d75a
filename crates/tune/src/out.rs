//! `tune --out DIR`: the directory made and checked before any run (an
//! unwritable place used to fail only after the whole sweep), then the two
//! figures and the numbers written into it, each file whole or not at all
//! (`report::file`).

use std::path::{Path, PathBuf};

use report::file::{refuse_dev, write_atomically, AtomicFile};

use crate::render::{files, Setup};
use crate::Tuning;

/// Makes `dir` and checks a file can be written in it.
pub fn prepare(dir: &Path) -> Result<(), String> {
    let cannot_create = |e: std::io::Error| format!("{}: cannot create: {e}", dir.display());
    refuse_dev(dir).map_err(cannot_create)?;
    std::fs::create_dir_all(dir).map_err(cannot_create)?;
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a directory (--out names where the files go)",
            dir.display()
        ));
    }
    // A file made and dropped unfinished: its temporary file is removed.
    let probe = dir.join("tune.json");
    AtomicFile::create(&probe).map_err(|e| format!("{}: cannot write: {e}", probe.display()))?;
    Ok(())
}

/// Writes the tuning's files (`render::files`) into `dir`; their paths,
/// in the order written.
pub fn write(dir: &Path, t: &Tuning, setup: &Setup) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
    let mut written = Vec::new();
    for (name, text) in &files(t, setup)? {
        let path = dir.join(name);
        write_atomically(&path, text.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_makes_the_directory_and_refuses_a_file() {
        let base = std::env::temp_dir().join(format!("tune-out-{}", std::process::id()));
        let dir = base.join("a/b");
        let made = prepare(&dir);
        let file = base.join("f");
        std::fs::write(&file, "x").unwrap();
        let refused = prepare(&file);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        let _ = std::fs::remove_dir_all(&base);
        assert_eq!(made, Ok(()));
        assert!(left.is_empty(), "the probe leaves nothing: {left:?}");
        let e = refused.unwrap_err();
        assert!(e.starts_with(&format!("{}: ", file.display())), "{e}");
    }
}

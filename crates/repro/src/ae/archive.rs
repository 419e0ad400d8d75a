//! The bundle's source archive: the workspace's tracked files (`git
//! ls-files`), every crate of Cargo.lock vendored (`cargo vendor
//! --locked`) with a `.cargo/config.toml` pointing crates-io at `vendor/`,
//! so the archive builds with `--offline` and no registry, and
//! `CODE-VERSION` (the commit and whether the tree was dirty) at its root,
//! for a build with no `.git`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ReproError;

/// The archive's name in the bundle.
pub const NAME: &str = "cinterrupts-src.tar.gz";

/// Which code the archive holds: `commit=<40 hex>` and `dirty=true|false`
/// lines in `CODE-VERSION`, the form the binary's build script reads when
/// there is no `.git`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeVersion {
    pub commit: String,
    /// Tracked files differ from the commit (untracked files are not in
    /// the archive, so they do not count).
    pub dirty: bool,
}

impl CodeVersion {
    pub fn file(&self) -> String {
        format!("commit={}\ndirty={}\n", self.commit, self.dirty)
    }
}

fn fail(what: impl std::fmt::Display) -> ReproError {
    ReproError::Write {
        path: "reproduce --ae".into(),
        reason: what.to_string(),
    }
}

/// Runs `program args` in `dir`; its stdout, or one line naming the
/// command and its first line of stderr.
fn output(dir: &Path, program: &std::ffi::OsStr, args: &[&str]) -> Result<Vec<u8>, ReproError> {
    let shown = format!("{} {}", program.to_string_lossy(), args.join(" "));
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| fail(format!("`{shown}`: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(fail(format!("`{shown}` failed ({}): {line}", out.status)));
    }
    Ok(out.stdout)
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, ReproError> {
    output(dir, "git".as_ref(), args)
}

/// The git work tree `dir` is in, with a `Cargo.lock` at its top: the
/// workspace the archive is made of. One line when there is none.
pub fn workspace(dir: &Path) -> Result<PathBuf, ReproError> {
    let top = git(dir, &["rev-parse", "--show-toplevel"]).map_err(|_| {
        fail(format!(
            "{}: not in a git work tree: the source archive is the workspace's tracked files \
             (`git ls-files`); run it in a clone of the workspace",
            dir.display()
        ))
    })?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim());
    if !top.join("Cargo.lock").is_file() {
        return Err(fail(format!(
            "{}: no Cargo.lock at the work tree's top: not the cinterrupts workspace",
            top.display()
        )));
    }
    Ok(top)
}

/// The commit checked out in `root` and whether a tracked file differs
/// from it.
pub fn code_version(root: &Path) -> Result<CodeVersion, ReproError> {
    let commit = String::from_utf8_lossy(&git(root, &["rev-parse", "HEAD"])?)
        .trim()
        .to_string();
    let status = git(root, &["status", "--porcelain", "--untracked-files=no"])?;
    Ok(CodeVersion {
        commit,
        dirty: !status.is_empty(),
    })
}

/// The tracked files, as `git ls-files -z` lists them (relative to `root`).
fn tracked(root: &Path) -> Result<Vec<String>, ReproError> {
    let out = git(root, &["ls-files", "-z"])?;
    Ok(out
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect())
}

/// `cargo vendor --locked`'s printed configuration with its `directory`
/// made relative: `vendor`, beside the archive's `.cargo/`, which is where
/// a relative path in `.cargo/config.toml` is taken from (cargo's
/// configuration docs, "Config-relative paths").
pub fn vendored_config(printed: &str) -> String {
    printed
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("directory = ") {
                "directory = \"vendor\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Writes the archive to `path`: the tracked files as they are on disk
/// (a tracked file deleted in the work tree is left out: the tree is then
/// dirty), `vendor/` (vendored into `scratch`, which is removed after),
/// `.cargo/config.toml` and `CODE-VERSION`. Names, modes and contents
/// only: owners and times are the tar crate's deterministic ones.
pub fn write(root: &Path, path: &Path, scratch: &Path) -> Result<CodeVersion, ReproError> {
    let version = code_version(root)?;
    let files = tracked(root)?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let vendor = scratch.join("vendor");
    let scratch_str = vendor.to_string_lossy().into_owned();
    let printed = output(root, &cargo, &["vendor", "--locked", &scratch_str])?;
    let mut config = String::new();
    if files.iter().any(|f| f == ".cargo/config.toml") {
        config = std::fs::read_to_string(root.join(".cargo/config.toml"))
            .map_err(|e| fail(format!("{}/.cargo/config.toml: {e}", root.display())))?;
        config.push('\n');
    }
    config.push_str(&vendored_config(&String::from_utf8_lossy(&printed)));
    let io = |e: std::io::Error| fail(format!("{}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(io)?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for f in &files {
        let on_disk = root.join(f);
        if f == ".cargo/config.toml" || std::fs::symlink_metadata(&on_disk).is_err() {
            continue;
        }
        tar.append_path_with_name(&on_disk, f)
            .map_err(|e| fail(format!("{}: {e}", on_disk.display())))?;
    }
    tar.append_dir_all("vendor", &vendor).map_err(io)?;
    let mut add = |name: &str, text: &str| {
        let mut h = tar::Header::new_gnu();
        h.set_size(text.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        tar.append_data(&mut h, name, text.as_bytes()).map_err(io)
    };
    add(".cargo/config.toml", &config)?;
    add("CODE-VERSION", &version.file())?;
    let gz = tar.into_inner().map_err(io)?;
    gz.finish().map_err(io)?.sync_all().map_err(io)?;
    std::fs::remove_dir_all(&vendor).map_err(|e| fail(format!("{scratch_str}: {e}")))?;
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendored_directory_is_made_relative_and_the_rest_kept() {
        let printed = "[source.crates-io]\nreplace-with = \"vendored-sources\"\n\n\
                       [source.vendored-sources]\ndirectory = \"/tmp/x/vendor\"\n";
        let c = vendored_config(printed);
        assert!(c.contains("replace-with = \"vendored-sources\""), "{c}");
        assert!(
            c.contains("[source.vendored-sources]\ndirectory = \"vendor\"\n"),
            "{c}"
        );
        assert!(!c.contains("/tmp/x"), "{c}");
    }

    #[test]
    fn code_version_is_written_as_the_build_script_reads_it() {
        let v = CodeVersion {
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            dirty: true,
        };
        assert_eq!(
            v.file(),
            "commit=0123456789abcdef0123456789abcdef01234567\ndirty=true\n"
        );
    }
}

//! The binary's code identity (issue 42 item 1), handed to
//! `report::made_by::set_code` by `main`: the git commit, whether the
//! sources differ from it, a SHA-256 of the sources, of `Cargo.lock`, and
//! the compiler's `rustc -V`.
//!
//! In a git tree the commit is `git rev-parse HEAD` and the tree is dirty
//! when `git status --porcelain` lists anything under the code's paths
//! (`crates/`, `Cargo.toml`, `Cargo.lock`; untracked files there count,
//! since a new module is code). In an evaluation bundle (`reproduce --ae`,
//! no `.git`) the bundle's `CODE-VERSION` file says both (`commit=`,
//! `dirty=`). Elsewhere the commit is `unknown` and the source hash alone
//! names the build.
//!
//! The build script reruns when any file under `crates/` changes (Cargo
//! scans a directory given to `rerun-if-changed` whole), when
//! `Cargo.toml`/`Cargo.lock` change, and when git's HEAD or index move
//! (a commit, a checkout): the identity is never older than the sources.
//! `git status` runs with `GIT_OPTIONAL_LOCKS=0` so that it does not
//! refresh the index itself and trigger the next rerun (git(1)).

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The paths whose content is the code.
const CODE_PATHS: [&str; 3] = ["crates", "Cargo.toml", "Cargo.lock"];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest
        .parent()
        .and_then(Path::parent)
        .expect("crates/cli sits two levels below the workspace root")
        .to_path_buf();
    for p in CODE_PATHS {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        root.join("CODE-VERSION").display()
    );

    let (commit, dirty) = match git(&root, &["rev-parse", "HEAD"]) {
        Some(head) => {
            if let Some(dir) = git(&root, &["rev-parse", "--absolute-git-dir"]) {
                let dir = PathBuf::from(dir.trim());
                println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
                println!("cargo:rerun-if-changed={}", dir.join("index").display());
            }
            let mut status = vec!["status", "--porcelain", "--"];
            status.extend(CODE_PATHS);
            let dirty = git(&root, &status).map_or(true, |s| !s.trim().is_empty());
            (head.trim().to_string(), dirty)
        }
        None => bundle_version(&root).unwrap_or_else(|| ("unknown".into(), false)),
    };

    let mut files = Vec::new();
    for p in CODE_PATHS {
        collect(&root, &root.join(p), &mut files);
    }
    files.sort();
    let mut source = Sha256::new();
    for (rel, path) in &files {
        let bytes = std::fs::read(path).unwrap_or_default();
        source.update((rel.len() as u64).to_le_bytes());
        source.update(rel.as_bytes());
        source.update((bytes.len() as u64).to_le_bytes());
        source.update(&bytes);
    }
    let lock = std::fs::read(root.join("Cargo.lock")).unwrap_or_default();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc = Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".into(), |s| s.trim().to_string());

    println!("cargo:rustc-env=CINTERRUPTS_COMMIT={commit}");
    println!("cargo:rustc-env=CINTERRUPTS_DIRTY={dirty}");
    println!(
        "cargo:rustc-env=CINTERRUPTS_SOURCE={}",
        hex(&source.finalize())
    );
    println!(
        "cargo:rustc-env=CINTERRUPTS_CARGO_LOCK={}",
        hex(&Sha256::digest(&lock))
    );
    println!("cargo:rustc-env=CINTERRUPTS_RUSTC={rustc}");
}

/// `git ARGS` in `root`, its standard output when it succeeds.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

/// An evaluation bundle's `CODE-VERSION`: `commit=HEX` and `dirty=BOOL`.
fn bundle_version(root: &Path) -> Option<(String, bool)> {
    let text = std::fs::read_to_string(root.join("CODE-VERSION")).ok()?;
    let mut commit = None;
    let mut dirty = false;
    for line in text.lines() {
        match line.split_once('=') {
            Some(("commit", c)) => commit = Some(c.trim().to_string()),
            Some(("dirty", d)) => dirty = d.trim() == "true",
            _ => {}
        }
    }
    commit.map(|c| (c, dirty))
}

/// Every file under `path` (or `path` itself), by its path relative to
/// `root`, skipping build output (`target` directories) and hidden
/// entries (an editor's or git's).
fn collect(root: &Path, path: &Path, out: &mut Vec<(String, PathBuf)>) {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.starts_with('.') || name == "target" {
        return;
    }
    if path.is_dir() {
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                collect(root, &e.path(), out);
            }
        }
    } else if path.is_file() {
        let rel = path.strip_prefix(root).unwrap_or(path);
        out.push((rel.to_string_lossy().into_owned(), path.to_path_buf()));
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

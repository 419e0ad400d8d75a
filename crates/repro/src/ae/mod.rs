//! `cinterrupts reproduce --ae DIR`: an evaluation bundle (issue 42 item
//! 2), as artifact evaluation asks for one (SOSP'26 and FAST'25 badges:
//! Available, Functional, Reproduced; the DPAS artifact of FAST'26 ships
//! the same parts). It runs `reproduce --quick` (the selected experiments,
//! or every one) and writes, whole or not at all ([`crate::staging`]):
//!
//! - `results/`: that run's report, whose verdicts the bundle stores;
//! - [`archive`]: the source with every crate vendored, `CODE-VERSION`;
//! - [`map`]: `FIGURES.md` and `figures.json`, each figure's command,
//!   outputs, claims and verdicts;
//! - [`scripts`]: `kick-the-tires.sh`, `full.sh`, `README-AE.md`;
//! - the licences, `CITATION.cff` and `.zenodo.json`, copied from the
//!   workspace's root, and `SHA256SUMS` of every file.

pub mod archive;
pub mod map;
pub mod scripts;

use std::path::{Path, PathBuf};

use sha2::Digest;

use crate::staging::Staged;
use crate::ReproError;

/// What a bundle directory holds: a directory holding anything else is
/// never replaced. `src/`, `out/` and `full-times.txt` are what the
/// scripts write beside the bundle when run in it.
pub const ENTRIES: &[&str] = &[
    "README-AE.md",
    "FIGURES.md",
    "figures.json",
    "kick-the-tires.sh",
    "full.sh",
    "SHA256SUMS",
    archive::NAME,
    "results",
    "LICENSE-MIT",
    "LICENSE-APACHE",
    "CITATION.cff",
    ".zenodo.json",
    "src",
    "out",
    "src.part",
    "full-times.txt",
];

/// The files of the workspace's root the bundle carries at its top too.
const COPIED: &[&str] = &[
    "LICENSE-MIT",
    "LICENSE-APACHE",
    "CITATION.cff",
    ".zenodo.json",
];

/// What `reproduce --ae` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    pub dir: PathBuf,
    /// Experiments, all when empty (as `--only`).
    pub only: Vec<String>,
    /// Where it was run: a directory of the workspace's git work tree.
    pub cwd: PathBuf,
    /// The command line, for the report.
    pub command: String,
}

/// The bundle made: its figures, its code version and the times measured.
#[derive(Clone, Debug)]
pub struct Made {
    pub figures: usize,
    pub version: archive::CodeVersion,
    pub quick: scripts::Measured,
    pub archive_secs: f64,
}

fn write_err(path: &Path, e: impl std::fmt::Display) -> ReproError {
    ReproError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

fn write_file(path: &Path, text: &str, executable: bool) -> Result<(), ReproError> {
    crate::write::atomic(path, text)?;
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| write_err(path, e))?;
    }
    Ok(())
}

/// Makes the bundle in `opts.dir`; `progress` follows the quick run.
pub fn make(opts: &Options, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Made, ReproError> {
    let root = archive::workspace(&opts.cwd)?;
    for f in COPIED {
        if !root.join(f).is_file() {
            return Err(write_err(&root.join(f), "missing: the bundle carries it"));
        }
    }
    let staged = Staged::prepare_for(&opts.dir, ENTRIES)?;
    let dir = staged.path().to_path_buf();
    let load_start = scripts::load_average();
    let started = std::time::Instant::now();
    crate::reproduce(
        &crate::Options {
            only: opts.only.clone(),
            plan: crate::run::Plan::quick(vec![report::Mode::Sim]),
            out: dir.join("results"),
            command: opts.command.clone(),
        },
        progress,
    )?;
    let quick = scripts::Measured {
        secs: started.elapsed().as_secs_f64(),
        load_start,
        load_end: scripts::load_average(),
    };
    let started = std::time::Instant::now();
    let version = archive::write(&root, &dir.join(archive::NAME), &dir)?;
    let archive_secs = started.elapsed().as_secs_f64();

    let summary_file = dir.join("results/summary.json");
    let summary: serde_json::Value = std::fs::read_to_string(&summary_file)
        .map_err(|e| write_err(&summary_file, e))
        .and_then(|t| serde_json::from_str(&t).map_err(|e| write_err(&summary_file, e)))?;
    let figures = map::figures(&summary, "results/summary.json")?;
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    write_file(
        &dir.join("figures.json"),
        &pretty(&map::json(&summary, &figures)),
        false,
    )?;
    write_file(&dir.join("FIGURES.md"), &map::markdown(&figures), false)?;
    write_file(
        &dir.join("kick-the-tires.sh"),
        &scripts::kick_the_tires(&figures),
        true,
    )?;
    let steps = scripts::steps(quick.clone());
    write_file(&dir.join("full.sh"), &scripts::full(&steps), true)?;
    let headline = summary["headline"].as_str().unwrap_or("");
    write_file(
        &dir.join("README-AE.md"),
        &scripts::readme(&version, &figures, &steps, headline, &rustc_version()),
        false,
    )?;
    for f in COPIED {
        std::fs::copy(root.join(f), dir.join(f)).map_err(|e| write_err(&root.join(f), e))?;
    }
    write_file(&dir.join("SHA256SUMS"), &sha256sums(&dir)?, false)?;
    staged.commit()?;
    Ok(Made {
        figures: figures.len(),
        version,
        quick,
        archive_secs,
    })
}

/// `rustc --version` (cargo's `RUSTC` when set), or `unknown`.
fn rustc_version() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// `sha256sum`'s format (`HEX  PATH`, two spaces: text mode) for every
/// file under `dir` but `SHA256SUMS`, sorted by path, so that `sha256sum
/// -c SHA256SUMS` in `dir` checks them.
pub fn sha256sums(dir: &Path) -> Result<String, ReproError> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| write_err(&d, e))? {
            let path = entry.map_err(|e| write_err(&d, e))?.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                files.push(path);
            }
        }
    }
    let mut rel: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|p| {
            let r = p.strip_prefix(dir).ok()?.to_string_lossy().into_owned();
            (r != "SHA256SUMS").then_some((r, p))
        })
        .collect();
    rel.sort();
    let mut out = String::new();
    for (name, path) in rel {
        let mut file = std::fs::File::open(&path).map_err(|e| write_err(&path, e))?;
        let mut hash = sha2::Sha256::new();
        std::io::copy(&mut file, &mut hash).map_err(|e| write_err(&path, e))?;
        out += &format!("{:x}  {name}\n", hash.finalize());
    }
    Ok(out)
}

/// `reproduce --ae-check FIGURES_JSON`: this run's `summary.json` against
/// the bundle's stored verdicts; a line per figure and how many failed.
pub fn check_files(
    map_file: &Path,
    summary_file: &Path,
) -> Result<(Vec<String>, usize), ReproError> {
    let read = |p: &Path| -> Result<serde_json::Value, ReproError> {
        let text = std::fs::read_to_string(p).map_err(|e| write_err(p, e))?;
        serde_json::from_str(&text).map_err(|e| write_err(p, e))
    };
    map::check(
        &read(map_file)?,
        &map_file.display().to_string(),
        &read(summary_file)?,
        &summary_file.display().to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256sums_lists_every_file_but_itself_as_sha256sum_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("results/figures")).unwrap();
        std::fs::write(dir.path().join("results/figures/a.svg"), "abc").unwrap();
        std::fs::write(dir.path().join("SHA256SUMS"), "old").unwrap();
        std::fs::write(dir.path().join("README-AE.md"), "").unwrap();
        let sums = sha256sums(dir.path()).unwrap();
        // FIPS 180-2's test vectors: SHA-256 of "abc" and of "".
        assert_eq!(
            sums,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  README-AE.md\n\
             ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  results/figures/a.svg\n"
        );
    }
}

//! `reproduce --ae` end to end (issue 42 item 2): the bundle is made from
//! this work tree, its checksums hold, and its source archive builds with
//! the network out of reach (`unshare -n`) and an empty CARGO_HOME (no
//! cached registry, no configuration), in its own target directory, and
//! its kick-the-tires script's first figure comes out OK; a verdict that
//! moved is a FAIL naming the claim.
//!
//! One experiment (`tos-fig4`: its 6 runs are the cheapest of `--quick`'s
//! on this machine) keeps the runs short; the offline build is the
//! archive's whole binary, unoptimised (`--debug`). Its time is printed:
//! `cargo test --release -p cinterrupts --test ae_bundle -- --nocapture`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

const FIRST: &str = "tos-fig4";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// The network namespace's own devices, as the kernel lists them
/// (`/proc/net/dev` is per namespace).
fn interfaces(o: &std::process::Output) -> Vec<String> {
    stdout(o)
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(|l| l.trim().to_string())
        .collect()
}

/// `unshare` with a network namespace of its own: as root `-n`; anyone
/// else in a user namespace too (`-rn`).
fn unshared() -> Command {
    require("unshare", "util-linux");
    let mut cmd = Command::new("unshare");
    // SAFETY: geteuid has no preconditions.
    cmd.arg(if unsafe { libc::geteuid() } == 0 {
        "-n"
    } else {
        "-rn"
    });
    cmd
}

#[test]
fn the_bundle_builds_offline_from_its_own_archive_and_its_first_figure_is_ok() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("bundle");
    let o = succeeds(bin().current_dir(workspace()).args([
        "reproduce",
        "--ae",
        bundle.to_str().unwrap(),
        "--only",
        FIRST,
        "--quiet",
    ]));
    assert!(stdout(&o).contains("1 figures"), "{}", stdout(&o));
    for f in [
        "README-AE.md",
        "FIGURES.md",
        "figures.json",
        "full.sh",
        "results/summary.json",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "CITATION.cff",
        ".zenodo.json",
    ] {
        assert!(bundle.join(f).is_file(), "{f}");
    }
    // Every file's checksum, as sha256sum checks them.
    succeeds(
        Command::new("sha256sum")
            .args(["-c", "--quiet", "SHA256SUMS"])
            .current_dir(&bundle),
    );

    // The network is out of reach in the namespace the build runs in.
    let o = succeeds(unshared().args(["cat", "/proc/net/dev"]));
    assert_eq!(interfaces(&o), ["lo"], "{}", stdout(&o));

    let cargo = PathBuf::from(std::env::var_os("CARGO").expect("cargo test sets CARGO"));
    let path = std::env::join_paths(
        std::iter::once(cargo.parent().unwrap().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let cargo_home = tmp.path().join("cargo-home");
    std::fs::create_dir(&cargo_home).unwrap();
    let started = std::time::Instant::now();
    let o = unshared()
        .args(["bash", "kick-the-tires.sh", "--debug", "--first"])
        .current_dir(&bundle)
        .env("CARGO_HOME", &cargo_home)
        .env("PATH", path)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTC_WRAPPER")
        .output()
        .unwrap();
    let out = stdout(&o);
    eprintln!(
        "kick-the-tires.sh --debug --first: {:.0} s in all\n{out}",
        started.elapsed().as_secs_f64()
    );
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains(&format!("F1 {FIRST}: OK")), "{out}");
    // Built from the archive, in the archive's own target directory, with
    // nothing fetched: the empty CARGO_HOME stayed without a registry.
    assert!(bundle.join("src/target/debug/cinterrupts").is_file());
    assert!(!cargo_home.join("registry").exists());
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(workspace())
        .output()
        .unwrap();
    let version = std::fs::read_to_string(bundle.join("src/CODE-VERSION")).unwrap();
    assert!(
        version.starts_with(&format!("commit={}\ndirty=", stdout(&head).trim())),
        "{version}"
    );

    // A stored verdict changed is a FAIL naming the claim, exit 1.
    let map = bundle.join("figures.json");
    let mut figures: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&map).unwrap()).unwrap();
    let claim = &mut figures["figures"][0]["claims"][0];
    let name = claim["claim"].as_str().unwrap().to_string();
    claim["verdict"] = "not a verdict".into();
    let tampered = tmp.path().join("tampered.json");
    std::fs::write(&tampered, figures.to_string()).unwrap();
    let o = bin()
        .args(["reproduce", "--quick", "--quiet", "--only", FIRST, "--out"])
        .arg(tmp.path().join("rerun"))
        .arg("--ae-check")
        .arg(&tampered)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("F1 {FIRST}: FAIL (\"{name}\"")),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains(", stored not a verdict, now "),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_bundle_outside_a_git_work_tree_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let o = bin()
        .current_dir(tmp.path())
        .env("GIT_CEILING_DIRECTORIES", tmp.path().parent().unwrap())
        .args(["reproduce", "--ae", "bundle", "--only", FIRST])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not in a git work tree"), "{err}");
    assert!(!tmp.path().join("bundle").exists());
}

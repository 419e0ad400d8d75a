//! fio's own example job files: Debian's `fio-examples` package (installed
//! by scripts/setup) puts fio 3.33's in /usr/share/doc/fio/examples.
//! Without them the test fails in one line naming scripts/setup.

use std::path::Path;

const DEBIAN_EXAMPLES: &str = "/usr/share/doc/fio/examples";

/// Fails the calling test, in one line naming scripts/setup, unless `path`
/// exists (the cli tests' `common::require` says the same of programs): a
/// test that needs a Debian package never passes by skipping (issue 23).
#[track_caller]
fn require_path(path: &str, package: &str) {
    if !Path::new(path).exists() {
        panic!("`{path}` is not installed: run scripts/setup (apt-get install {package})");
    }
}

#[test]
fn fios_examples_parse_or_are_refused_in_one_line() {
    require_path(DEBIAN_EXAMPLES, "fio-examples");
    let entries = std::fs::read_dir(DEBIAN_EXAMPLES).unwrap();
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    let mut ok = 0;
    for f in &files {
        match jobs::parse_file(f) {
            Ok(file) => {
                ok += 1;
                assert!(!file.jobs.is_empty(), "{}", f.display());
            }
            Err(e) => {
                let e = e.to_string();
                assert!(!e.contains('\n') && e.len() < 300, "{}: {e}", f.display());
                assert!(e.starts_with(&f.display().to_string()), "{e}");
            }
        }
    }
    eprintln!("{ok} of {} of fio's examples parse", files.len());
    // fio 3.33's 86 examples, at least 20 of which parse since issue 13
    // (null, zipf, bssplit, stonewall and the rest): a regression would
    // lose some.
    assert!(files.len() >= 86, "{} examples", files.len());
    assert!(ok >= 20, "{ok} of {} parse", files.len());
}

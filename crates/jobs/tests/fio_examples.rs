//! fio's own example job files, where the machine has them: Debian's
//! `fio-examples` package puts fio 3.33's in /usr/share/doc/fio/examples
//! (`apt-get install fio-examples`). Without them the test says so and
//! passes: the project installs nothing itself.

use std::path::Path;

const DEBIAN_EXAMPLES: &str = "/usr/share/doc/fio/examples";

#[test]
fn fios_examples_parse_or_are_refused_in_one_line() {
    let dir = Path::new(DEBIAN_EXAMPLES);
    let Ok(entries) = std::fs::read_dir(dir) else {
        eprintln!("skipped: {DEBIAN_EXAMPLES} is missing (Debian's fio-examples package is not installed)");
        return;
    };
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
    // fio 3.33's examples that parse since issue 13 (null, zipf, bssplit,
    // stonewall and the rest): a regression would lose some.
    if files.len() == 86 {
        assert!(ok >= 20, "{ok} of 86 parse");
    }
}

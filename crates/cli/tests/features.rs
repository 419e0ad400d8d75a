//! The README's features table (issue 42 item 3) is what `cinterrupts
//! features` makes from the code: a stale one fails here naming its first
//! differing row, `--update` rewrites it, and every registry's entries have
//! a row.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_one_line_error, bin, stderr, stdout, succeeds, write};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The table as the code gives it (the Markdown between the markers).
fn generated() -> String {
    let o = succeeds(bin().arg("features").arg("--root").arg(root()));
    stdout(&o)
}

const START: &str = "<!-- generated-features: cinterrupts features --update FILE -->";
const END: &str = "<!-- end generated-features -->";

#[test]
fn the_readme_features_table_is_the_codes() {
    let o = bin()
        .current_dir(root())
        .args(["features", "--check", "README.md"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}(from the workspace root: cargo run --release -- features --update README.md)",
        stderr(&o)
    );
    assert!(stdout(&o).contains("README.md: the features table is the code's"));
}

#[test]
fn every_registry_entry_has_a_row() {
    let md = generated();
    let row = |cell: &str| {
        assert!(
            md.lines().any(|l| l.starts_with(&format!("| `{cell}` |"))),
            "no row for `{cell}` in:\n{md}"
        )
    };
    for s in policy::catalogue::STRATEGIES {
        row(s.name);
    }
    for f in traces::Format::ALL {
        row(f.name());
    }
    for k in service::profile::KEYS {
        row(k.name);
    }
    for m in host::mechanism::MECHANISMS {
        let words = m.eras.len();
        let rows = md
            .lines()
            .filter(|l| l.contains(&format!("| `{}` |", m.key)))
            .count();
        assert_eq!(rows, words, "{}: a row per word with a kernel range", m.key);
    }
    for verb in ["sim", "coalesce", "features", "sweep run", "bench sim"] {
        row(verb);
    }
    assert!(
        md.contains("| `--completion hybrid` | `completion` | Linux 4.10 to 6.3"),
        "{md}"
    );
    assert!(!md.contains("| `help` |"), "{md}");
}

#[test]
fn a_stale_row_is_named_and_update_rewrites_it() {
    let dir = tempfile::tempdir().unwrap();
    let md = generated();
    let good = format!("# doc\n\n{START}\n{md}{END}\n\nafter\n");
    let row = md
        .lines()
        .position(|l| l.starts_with("| `cint` |"))
        .unwrap();
    let stale_row = "| `cint` | none | none |";
    let stale = good.replacen(md.lines().nth(row).unwrap(), stale_row, 1);
    let file = write(dir.path(), "README.md", &stale);
    let check = |f: &str| {
        bin()
            .args(["features", "--root"])
            .arg(root())
            .args(["--check", f])
            .output()
            .unwrap()
    };
    let o = check(&file);
    // The start marker is line 3: the table's first line is line 4.
    let want = format!("{file}:{}: stale table", row + 4);
    assert_one_line_error(&o, &want);
    assert!(stderr(&o).contains(stale_row), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        stale,
        "--check writes nothing"
    );

    succeeds(
        bin()
            .args(["features", "--root"])
            .arg(root())
            .args(["--update", &file]),
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), good);
    let o = check(&file);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("rows checked by no test"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_file_without_markers_or_a_root_without_tests_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = "# doc\nno table here\n";
    let file = write(dir.path(), "doc.md", text);
    let o = bin()
        .args(["features", "--root"])
        .arg(root())
        .args(["--update", &file])
        .output()
        .unwrap();
    assert_one_line_error(&o, &format!("{file}: no '{START}' line"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    let o = bin()
        .args(["features", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_one_line_error(
        &o,
        "no #[test] function under crates/*/src or crates/*/tests",
    );
}

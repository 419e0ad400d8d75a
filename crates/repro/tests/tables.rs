//! The verdict tables committed in the project's Markdown against a run
//! (issue 36 item 6): every generated table is what `reproduce --quick`
//! gives now, and no verdict table is left outside a generated block.

use std::path::{Path, PathBuf};

use report::Mode;
use repro::run::Plan;
use repro::tables;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every Markdown file of the workspace, build output and dot-directories
/// left out.
fn markdown(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                markdown(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

#[test]
fn committed_tables_are_what_a_quick_run_gives() {
    let root = root();
    let only = tables::experiments(&root).unwrap_or_else(|e| panic!("{e}"));
    assert!(!only.is_empty(), "the docs hold no generated table");
    let dir = tempfile::tempdir().unwrap();
    let opts = repro::Options {
        only: only.clone(),
        plan: Plan::quick(vec![Mode::Sim]),
        out: dir.path().to_path_buf(),
        command: "tests/tables.rs".into(),
    };
    repro::reproduce(&opts, &|_, _| {}).unwrap();
    let text = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    for doc in tables::DOCS {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        match tables::first_difference(&text, &summary) {
            Err(e) => panic!("{doc}: {e}"),
            Ok(Some(m)) => panic!(
                "{doc}:{}: the committed table differs from `reproduce --quick --only {}`:\n  committed: {}\n  the run:   {}\nRegenerate from the workspace root: cinterrupts reproduce --quick --update-docs --out DIR",
                m.line,
                only.join(","),
                m.committed,
                m.generated
            ),
            Ok(None) => {}
        }
    }
}

#[test]
fn no_verdict_table_is_written_by_hand() {
    let root = root();
    let mut files = Vec::new();
    markdown(&root, &mut files);
    assert!(files.len() > 10, "found only {files:?}");
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        let rows = tables::handwritten_verdict_rows(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        if let Some((line, row)) = rows.first() {
            found.push(format!("{rel}:{line}: {row}"));
        }
        // A block outside DOCS would never be regenerated.
        let has_block = !tables::blocks(&text).unwrap().is_empty();
        let listed = tables::DOCS.iter().any(|d| root.join(d) == *f);
        assert!(
            !has_block || listed,
            "{rel} holds a generated table but is not in repro::tables::DOCS"
        );
    }
    assert!(
        found.is_empty(),
        "verdict tables outside a generated block (generate them from a summary.json, crates/repro/src/tables.rs, or remove them):\n{}",
        found.join("\n")
    );
}

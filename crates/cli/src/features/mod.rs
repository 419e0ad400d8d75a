//! `cinterrupts features` (issue 42 item 3): the table of what the
//! workbench does, made from the code, with the tests that check each
//! feature.
//!
//! The rows come from the registries the crates keep ([`registry`]): every
//! device-side strategy, every host mechanism's word with the Linux
//! releases it exists in, every device profile key, every trace format and
//! every verb. Nothing is listed here by hand.
//!
//! "Checked by" is derived, not written: every function under `#[test]`
//! in `crates/*/src` and `crates/*/tests` is read ([`scan`]), and a test
//! checks a feature when its body (not the helpers it calls) spells it:
//! - a strategy: a string literal that is its name (`"cint"`), or a literal
//!   holding `--policy NAME` or `"NAME"` (TOML in a sweep spec);
//! - a host mechanism's word: the option and the word as two literals
//!   (`"--completion", "hybrid"`) or in one (`--completion hybrid`), or a
//!   TOML line of a literal setting its profile key to it (`completion =
//!   "hybrid"`); a word is whole (`hybrid` is not `hybrid-iopoll`); a flag:
//!   the option, or its key set to `true` or `on`;
//! - a device profile key: a TOML line of a literal setting it (under its
//!   table for `read.*` and `write.*`), or the key quoted as the errors
//!   quote it (`'queue_depth'`), in a test that reads a device profile
//!   (names `DeviceProfile`, or a literal holds `[read]`, `[write]` or
//!   `profiles/devices/`);
//! - a trace format: a literal that is its name, `--format NAME`, its
//!   variant in code (`Format::FioV2`) or `format = "NAME"`;
//! - a verb: in the binary's own tests (`crates/cli`), its name as a
//!   literal (`"sim"`; `"sweep", "run"` for a verb's verb, and `"run"`
//!   right after `"sweep"` is not the verb `run`), or `cinterrupts VERB` in
//!   a literal.
//!
//! The generator's own tests (`crates/cli/src/features/`,
//! `crates/cli/tests/features.rs`) spell features as fixtures: they count
//! for the `features` verb only.
//!
//! A test that walks a whole registry (names `STRATEGIES`, `MECHANISMS`,
//! `Format::ALL`, `KEYS`) checks every row of it: such tests are listed once
//! above their section's table, not on every row. Per row the first
//! [`SHOWN`] tests are named (those whose name holds the feature's word
//! first, then by file), then "+K more"; a row no test spells says "none".
//!
//! The table sits in a Markdown file between [`START`] and [`END`] (as
//! `repro::tables` keeps its verdict tables, with markers of its own so
//! that neither reads the other's); `--update FILE` rewrites it, `--check
//! FILE` names the first row that differs.

pub mod registry;
pub mod scan;

use std::fmt::Write as _;
use std::path::Path;

use registry::Section;
use scan::TestFn;

/// Tests named per row before "+K more".
pub const SHOWN: usize = 3;

/// The line before a generated features table.
pub const START: &str = "<!-- generated-features: cinterrupts features --update FILE -->";
/// The line after it.
pub const END: &str = "<!-- end generated-features -->";

/// The table, and the rows no test spells.
pub struct Features {
    /// The Markdown between the markers, each line ending in `\n`.
    pub markdown: String,
    /// `section: feature` for each row checked by no test.
    pub unchecked: Vec<String>,
    pub rows: usize,
}

/// The features of the workspace at `root`, whose binary's verbs are `cmd`.
pub fn generate(root: &Path, cmd: &clap::Command) -> Result<Features, String> {
    let tests = scan::tests(root)?;
    if tests.is_empty() {
        return Err(format!(
            "{}: no #[test] function under crates/*/src or crates/*/tests (run from the workspace root, or give --root)",
            root.display()
        ));
    }
    Ok(render(&registry::sections(cmd), &tests))
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Up to [`SHOWN`] tests by name, then `+K more`; `none`.
fn named(tests: &[&TestFn]) -> String {
    if tests.is_empty() {
        return "none".into();
    }
    let shown: Vec<String> = tests
        .iter()
        .take(SHOWN)
        .map(|t| format!("`{}`", t.shown()))
        .collect();
    let mut out = shown.join(", ");
    if tests.len() > SHOWN {
        let _ = write!(out, " +{} more", tests.len() - SHOWN);
    }
    out
}

/// The sections' tables with their tests.
pub fn render(sections: &[Section], tests: &[TestFn]) -> Features {
    let mut md = String::new();
    let mut unchecked = Vec::new();
    let mut rows = 0;
    for sec in sections {
        let scope: Vec<&TestFn> = tests.iter().filter(|t| (sec.context)(t)).collect();
        let whole: Vec<&TestFn> = scope
            .iter()
            .copied()
            .filter(|t| (sec.whole)(t) && !t.is_the_generators())
            .collect();
        let _ = writeln!(md, "### {}\n", sec.title);
        let _ = writeln!(
            md,
            "Looked for in {}. Tests that walk {} (every row): {}.\n",
            sec.context_shown,
            sec.whole_shown,
            named(&whole)
        );
        let _ = writeln!(md, "| {} | checked by |", sec.headers.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(sec.headers.len() + 1));
        for row in &sec.rows {
            rows += 1;
            let mut found: Vec<&TestFn> = scope
                .iter()
                .copied()
                .filter(|t| row.generator || !t.is_the_generators())
                .filter(|t| row.spellings.iter().any(|s| s.found_in(t)))
                .collect();
            // Stable: those named after the feature first, then by file.
            let word = row.word.to_ascii_lowercase().replace('-', "_");
            found.sort_by_key(|t| !t.name.contains(&word));
            if found.is_empty() {
                unchecked.push(format!("{}: {}", sec.title, row.cells[0].replace('`', "")));
            }
            let cells: Vec<String> = row.cells.iter().map(|c| cell(c)).collect();
            let _ = writeln!(md, "| {} | {} |", cells.join(" | "), named(&found));
        }
        md.push('\n');
    }
    // No blank line before the end marker.
    while md.ends_with("\n\n") {
        md.pop();
    }
    Features {
        markdown: md,
        unchecked,
        rows,
    }
}

/// The lines (0-based, end exclusive) between the markers of `text`; an
/// error says which marker is missing or doubled.
fn block(text: &str) -> Result<std::ops::Range<usize>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim() == START)
        .collect();
    let ends: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim() == END)
        .collect();
    match (starts.as_slice(), ends.as_slice()) {
        ([], _) => Err(format!("no '{START}' line")),
        ([s], [e]) if e > s => Ok(s + 1..*e),
        ([s], []) => Err(format!("line {}: no '{END}' after it", s + 1)),
        ([s], [e]) => Err(format!(
            "line {}: '{END}' before the start marker (line {})",
            e + 1,
            s + 1
        )),
        ([_], [_, e, ..]) => Err(format!("line {}: a second '{END}'", e + 1)),
        ([_, s, ..], _) => Err(format!(
            "line {}: a second start marker (one table per file)",
            s + 1
        )),
    }
}

/// `text` with the table between its markers replaced by `markdown`.
pub fn replace(text: &str, markdown: &str) -> Result<String, String> {
    let body = block(text)?;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for l in &lines[..body.start] {
        out += l;
        out.push('\n');
    }
    out += markdown;
    for l in &lines[body.end..] {
        out += l;
        out.push('\n');
    }
    Ok(out)
}

/// A committed row that differs from the code's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// 1-based line in the file.
    pub line: usize,
    pub committed: String,
    pub generated: String,
}

/// The first line of `text`'s table that differs from `markdown`, if any.
pub fn first_difference(text: &str, markdown: &str) -> Result<Option<Mismatch>, String> {
    let body = block(text)?;
    let committed: Vec<&str> = text.lines().collect::<Vec<_>>()[body.clone()].to_vec();
    let generated: Vec<&str> = markdown.lines().collect();
    let n = committed.len().max(generated.len());
    Ok((0..n)
        .find(|&i| committed.get(i) != generated.get(i))
        .map(|i| Mismatch {
            line: body.start + i + 1,
            committed: committed.get(i).unwrap_or(&"(the table ends)").to_string(),
            generated: generated.get(i).unwrap_or(&"(the table ends)").to_string(),
        }))
}

#[cfg(test)]
mod tests {
    use super::registry::Row;
    use super::scan::Spelling;
    use super::*;

    fn section(names: &[&str]) -> Section {
        Section {
            title: "Things".into(),
            headers: vec!["thing"],
            rows: names
                .iter()
                .map(|n| Row {
                    cells: vec![format!("`{n}|x`")],
                    spellings: vec![Spelling::Literal(n.to_string())],
                    word: n.to_string(),
                    generator: false,
                })
                .collect(),
            context: |_| true,
            context_shown: "every test",
            whole: |t| t.name.starts_with("all"),
            whole_shown: "`ALL`",
        }
    }

    fn test(name: &str, lits: &[&str]) -> TestFn {
        TestFn {
            file: format!("crates/x/tests/{name}.rs"),
            name: name.into(),
            literals: lits.iter().map(|s| s.to_string()).collect(),
            code: String::new(),
        }
    }

    #[test]
    fn rows_name_their_tests_up_to_the_limit_and_say_none() {
        let tests: Vec<TestFn> = (0..5)
            .map(|i| test(&format!("t{i}"), &["a"]))
            .chain([test("all_of_them", &[]), test("b_alone", &["b"])])
            .collect();
        let f = render(&[section(&["a", "b", "c"])], &tests);
        let md = &f.markdown;
        assert!(
            md.contains("| `a\\|x` | `t0::t0`, `t1::t1`, `t2::t2` +2 more |"),
            "{md}"
        );
        assert!(md.contains("| `b\\|x` | `b_alone::b_alone` |"), "{md}");
        assert!(md.contains("| `c\\|x` | none |"), "{md}");
        assert!(
            md.contains("walk `ALL` (every row): `all_of_them::all_of_them`."),
            "{md}"
        );
        assert_eq!(f.unchecked, ["Things: c|x"]);
        assert_eq!(f.rows, 3);
        assert!(!md.ends_with("\n\n"));
    }

    #[test]
    fn a_test_named_after_the_feature_comes_first() {
        let tests = vec![test("zz", &["b"]), test("checks_b", &["b"])];
        let f = render(&[section(&["b"])], &tests);
        assert!(
            f.markdown.contains("| `checks_b::checks_b`, `zz::zz` |"),
            "{}",
            f.markdown
        );
    }

    #[test]
    fn the_block_is_replaced_and_its_first_stale_row_named() {
        let doc = format!("# t\n{START}\n| old |\n| same |\n{END}\nafter\n");
        let new = "| new |\n| same |\n";
        let m = first_difference(&doc, new).unwrap().unwrap();
        assert_eq!(
            (m.line, m.committed.as_str(), m.generated.as_str()),
            (3, "| old |", "| new |")
        );
        let fixed = replace(&doc, new).unwrap();
        assert_eq!(
            fixed,
            format!("# t\n{START}\n| new |\n| same |\n{END}\nafter\n")
        );
        assert_eq!(first_difference(&fixed, new).unwrap(), None);
        let short = first_difference(&fixed, "| new |\n").unwrap().unwrap();
        assert_eq!(
            (short.line, short.generated.as_str()),
            (4, "(the table ends)")
        );
    }

    #[test]
    fn a_missing_or_doubled_marker_is_one_line() {
        assert!(block("text\n")
            .unwrap_err()
            .starts_with("no '<!-- generated-features"));
        assert!(block(&format!("{START}\n| x |\n"))
            .unwrap_err()
            .starts_with("line 1: no '"));
        let two = format!("{START}\n{END}\n{START}\n{END}\n");
        assert!(block(&two)
            .unwrap_err()
            .contains("line 3: a second start marker"));
        assert!(block(&format!("{END}\n{START}\n"))
            .unwrap_err()
            .contains("before the start marker"));
    }
}

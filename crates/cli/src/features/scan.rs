//! The workspace's tests as `cinterrupts features` reads them: every
//! function under `#[test]` in `crates/*/src` and `crates/*/tests` (so
//! `#[cfg(test)]` modules and `proptest!` blocks too), with the string
//! literals and the code of its body, and the spellings a feature is
//! looked for by ([`Spelling`]). Read with proc-macro2's lexer, so a brace
//! or a `#[test]` inside a string or a comment is not taken for code.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// One test function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestFn {
    /// The file, from the workspace root (`crates/policy/tests/paper.rs`).
    pub file: String,
    pub name: String,
    /// Its body's string literals in order, unescaped.
    pub literals: Vec<String>,
    /// Its body's code without the literals: tokens joined, punctuation
    /// without spaces (`Format::Blkparse`).
    pub code: String,
}

impl TestFn {
    /// As the table shows it: the file's stem and the function,
    /// `paper::strict_barrier`; a `mod.rs` by its directory, a `lib.rs` or
    /// `main.rs` by its crate's.
    pub fn shown(&self) -> String {
        let p = Path::new(&self.file);
        let name = |p: Option<&Path>| {
            p.and_then(|d| d.file_name())
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_string()
        };
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let stem = match stem {
            "mod" => name(p.parent()),
            "lib" | "main" => name(p.parent().and_then(Path::parent)),
            s => s.to_string(),
        };
        format!("{stem}::{}", self.name)
    }

    /// Whether it is one of `cinterrupts features`' own tests, whose
    /// bodies spell features as fixtures of the rule: they count for the
    /// `features` verb only.
    pub fn is_the_generators(&self) -> bool {
        self.file.starts_with("crates/cli/src/features/")
            || self.file == "crates/cli/tests/features.rs"
    }

    /// The crate directory it is in (`policy` for `crates/policy/...`).
    pub fn krate(&self) -> &str {
        self.file.split('/').nth(1).unwrap_or("")
    }
}

/// Where a table's table-section of TOML text must be for [`Spelling::Assign`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Table {
    /// Anywhere.
    Any,
    /// Before the text's first `[table]` header.
    Top,
    /// Under `[name]`.
    Named(String),
}

/// How a feature is spelt in a test's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// A string literal that is exactly this (`"cint"`).
    Literal(String),
    /// This text inside a string literal, not followed by a name
    /// character (`--policy cint`, not `--policy cint-6-32`).
    InLiteral(String),
    /// An option and its value as two literals (`"--completion",
    /// "hybrid"`), the value the word or the word and `,` or `=` and more
    /// (`"ld,tokens=4"`).
    Option { flag: String, word: String },
    /// An option given any value but these (`"--irq-suspend", "200us"`),
    /// as two literals or in one (`--irq-suspend 200us`).
    OptionBut { flag: String, except: Vec<String> },
    /// A line of TOML in a literal assigning `key` (`key = ...`), whose
    /// value holds `"word"` or the bare word (`None`: any value).
    Assign {
        key: String,
        word: Option<String>,
        table: Table,
    },
    /// Code naming this (`Format::Blkparse`, `STRATEGIES`), with no name
    /// character on either side.
    Code(String),
    /// A verb as the binary's arguments: these literals in a row, the
    /// first not right after one of `not_after` (`"run"` after `"sweep"`
    /// is `sweep run`, not `run`).
    Verb {
        path: Vec<String>,
        not_after: Vec<String>,
    },
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `needle` in `hay` with no name character after it (and, `both`, none
/// before it either).
fn bounded(hay: &str, needle: &str, both: bool) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let at = from + i;
        let end = at + needle.len();
        let after_ok = !hay[end..].chars().next().is_some_and(name_char);
        let before_ok = !both || !hay[..at].chars().next_back().is_some_and(name_char);
        if after_ok && before_ok {
            return true;
        }
        from = at + needle.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// `value` is `word`, or `word` then `,` or `=` and more.
fn is_word(value: &str, word: &str) -> bool {
    value == word
        || value
            .strip_prefix(word)
            .is_some_and(|rest| rest.starts_with([',', '=']))
}

impl Spelling {
    pub fn found_in(&self, t: &TestFn) -> bool {
        let lits = &t.literals;
        match self {
            Spelling::Literal(s) => lits.iter().any(|l| l == s),
            Spelling::InLiteral(s) => lits.iter().any(|l| bounded(l, s, false)),
            Spelling::Option { flag, word } => {
                lits.windows(2)
                    .any(|w| w[0] == *flag && is_word(&w[1], word))
                    || [" ", "="].iter().any(|sep| {
                        lits.iter()
                            .any(|l| bounded(l, &format!("{flag}{sep}{word}"), false))
                    })
            }
            Spelling::OptionBut { flag, except } => {
                let other = |v: &str| !v.is_empty() && !except.iter().any(|e| is_word(v, e));
                lits.windows(2).any(|w| w[0] == *flag && other(&w[1]))
                    || lits.iter().any(|l| {
                        l.split_whitespace()
                            .collect::<Vec<_>>()
                            .windows(2)
                            .any(|w| w[0] == flag && other(w[1]))
                            || l.split_whitespace().any(|a| {
                                a.strip_prefix(flag.as_str())
                                    .and_then(|r| r.strip_prefix('='))
                                    .is_some_and(other)
                            })
                    })
            }
            Spelling::Assign { key, word, table } => {
                lits.iter().any(|l| assigns(l, key, word.as_deref(), table))
            }
            Spelling::Code(s) => bounded(&t.code, s, true),
            Spelling::Verb { path, not_after } => (0..lits.len()).any(|i| {
                lits[i..].starts_with(path)
                    && !(i > 0 && not_after.iter().any(|p| *p == lits[i - 1]))
            }),
        }
    }
}

/// Whether TOML text `lit` has a line `key = VALUE` under `table` whose
/// value holds `word` (quoted or bare), or any value.
fn assigns(lit: &str, key: &str, word: Option<&str>, table: &Table) -> bool {
    let mut current: Option<&str> = None;
    for line in lit.lines() {
        let line = line.trim();
        if let Some(h) = line.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = Some(h.trim());
            continue;
        }
        let in_table = match table {
            Table::Any => true,
            Table::Top => current.is_none(),
            Table::Named(n) => current == Some(n.as_str()),
        };
        let Some(value) = line
            .strip_prefix(key)
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix('='))
        else {
            continue;
        };
        if !in_table {
            continue;
        }
        let holds = match word {
            None => true,
            Some(w) => bounded(value, &format!("\"{w}\""), false) || bounded(value.trim(), w, true),
        };
        if holds {
            return true;
        }
    }
    false
}

/// Every test function in the workspace at `root`, by file path then
/// place in the file. A file the lexer refuses is an error naming it.
pub fn tests(root: &Path) -> Result<Vec<TestFn>, String> {
    let crates = root.join("crates");
    let mut files = Vec::new();
    if !crates.is_dir() {
        return Ok(Vec::new());
    }
    let dirs = std::fs::read_dir(&crates).map_err(|e| format!("{}: {e}", crates.display()))?;
    for d in dirs {
        let d = d.map_err(|e| format!("{}: {e}", crates.display()))?.path();
        for sub in ["src", "tests"] {
            rust_files(&d.join(sub), &mut files)?;
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let rel = f
            .strip_prefix(root)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        out.extend(in_source(&rel, &text)?);
    }
    Ok(out)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries {
        let p = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if p.is_dir() {
            rust_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// The test functions of one file's text.
pub fn in_source(file: &str, text: &str) -> Result<Vec<TestFn>, String> {
    let tokens =
        TokenStream::from_str(text).map_err(|e| format!("{file}: not Rust to the lexer ({e})"))?;
    let mut out = Vec::new();
    walk(file, tokens, &mut out);
    Ok(out)
}

/// Whether `g` is the inside of `#[test]`.
fn is_test_attr(g: &proc_macro2::Group) -> bool {
    g.delimiter() == Delimiter::Bracket && g.stream().to_string().trim() == "test"
}

fn walk(file: &str, tokens: TokenStream, out: &mut Vec<TestFn>) {
    let toks: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < toks.len() {
        let test_attr = matches!(&toks[i], TokenTree::Punct(p) if p.as_char() == '#')
            && matches!(toks.get(i + 1), Some(TokenTree::Group(g)) if is_test_attr(g));
        if test_attr {
            if let Some((t, next)) = test_fn(file, &toks, i + 2) {
                out.push(t);
                i = next;
                continue;
            }
        }
        if let TokenTree::Group(g) = &toks[i] {
            walk(file, g.stream(), out);
        }
        i += 1;
    }
}

/// The function after a `#[test]` whose tokens start at `i`: other
/// attributes and qualifiers skipped, its name, its body (the first brace
/// group after the name).
fn test_fn(file: &str, toks: &[TokenTree], mut i: usize) -> Option<(TestFn, usize)> {
    loop {
        match toks.get(i)? {
            TokenTree::Punct(p) if p.as_char() == '#' => i += 2,
            TokenTree::Ident(id) if id == "fn" => break,
            TokenTree::Ident(_) => i += 1,
            _ => return None,
        }
    }
    let name = match toks.get(i + 1)? {
        TokenTree::Ident(id) => id.to_string(),
        _ => return None,
    };
    let mut j = i + 2;
    let body = loop {
        match toks.get(j)? {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break g.stream(),
            _ => j += 1,
        }
    };
    let mut literals = Vec::new();
    let mut code = String::new();
    flatten(body, &mut literals, &mut code);
    Some((
        TestFn {
            file: file.to_string(),
            name,
            literals,
            code,
        },
        j + 1,
    ))
}

fn flatten(tokens: TokenStream, literals: &mut Vec<String>, code: &mut String) {
    for t in tokens {
        match t {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                code.push_str(open);
                flatten(g.stream(), literals, code);
                code.push_str(close);
            }
            TokenTree::Ident(id) => {
                if code.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    code.push(' ');
                }
                code.push_str(&id.to_string());
            }
            TokenTree::Punct(p) => code.push(p.as_char()),
            TokenTree::Literal(l) => match string_value(&l.to_string()) {
                Some(s) => {
                    literals.push(s);
                    code.push_str("\"\"");
                }
                None => {
                    if code.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                        code.push(' ');
                    }
                    code.push_str(&l.to_string());
                }
            },
        }
    }
}

/// A string literal's value (`"a\"b"`, `r#"..."#`, `b"..."`), its common
/// escapes undone; `None` for any other literal.
fn string_value(src: &str) -> Option<String> {
    let s = src.strip_prefix('b').unwrap_or(src);
    if let Some(raw) = s.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let inner = raw.get(hashes + 1..raw.len().checked_sub(hashes + 1)?)?;
        return Some(inner.to_string());
    }
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            // A line continuation: the newline and the next line's indent.
            Some('\n') => {
                let rest: String = chars.clone().collect();
                let skip = rest.len() - rest.trim_start().len();
                for _ in 0..rest[..skip].chars().count() {
                    chars.next();
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r##"
        fn helper() { let _ = "--policy cint"; }
        #[test]
        fn cint_on_sim() {
            run(&["sim", "--policy", "cint", "--completion", "hybrid-iopoll"]);
            let t = "[read]\nmean = \"1us\"";
            let _ = Format::FioV2;
        }
        #[cfg(test)]
        mod tests {
            #[test]
            #[should_panic]
            fn nested() { let s = "a { #[test] fn fake() {} }"; let _ = r#"completion = ["poll"]"#; }
        }
        // #[test] fn in_a_comment() {}
    "##;

    fn parsed() -> Vec<TestFn> {
        in_source("crates/x/tests/y.rs", SRC).unwrap()
    }

    #[test]
    fn only_functions_under_test_are_read_with_their_literals() {
        let t = parsed();
        let names: Vec<&str> = t.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["cint_on_sim", "nested"]);
        assert_eq!(t[0].literals[..3], ["sim", "--policy", "cint"]);
        assert_eq!(t[0].literals[5], "[read]\nmean = \"1us\"");
        assert!(t[0].code.contains("Format::FioV2"), "{}", t[0].code);
        assert_eq!(t[1].literals[1], r#"completion = ["poll"]"#);
        assert_eq!(t[0].shown(), "y::cint_on_sim");
        assert_eq!(t[0].krate(), "x");
    }

    #[test]
    fn a_word_is_found_whole_and_not_as_part_of_a_longer_one() {
        let t = parsed();
        let opt = |f: &str, w: &str| Spelling::Option {
            flag: f.into(),
            word: w.into(),
        };
        assert!(opt("--completion", "hybrid-iopoll").found_in(&t[0]));
        assert!(!opt("--completion", "hybrid").found_in(&t[0]));
        assert!(Spelling::Literal("cint".into()).found_in(&t[0]));
        assert!(!Spelling::Literal("cint".into()).found_in(&t[1]));
        assert!(Spelling::Code("Format::FioV2".into()).found_in(&t[0]));
        assert!(!Spelling::Code("Format::Fio".into()).found_in(&t[0]));
        let assign = |k: &str, w: Option<&str>, table: Table| Spelling::Assign {
            key: k.into(),
            word: w.map(String::from),
            table,
        };
        assert!(assign("mean", None, Table::Named("read".into())).found_in(&t[0]));
        assert!(!assign("mean", None, Table::Named("write".into())).found_in(&t[0]));
        assert!(!assign("mean", None, Table::Top).found_in(&t[0]));
        assert!(assign("completion", Some("poll"), Table::Any).found_in(&t[1]));
        assert!(!assign("completion", Some("hybrid"), Table::Any).found_in(&t[1]));
        let but = Spelling::OptionBut {
            flag: "--completion".into(),
            except: vec!["interrupt".into()],
        };
        assert!(but.found_in(&t[0]));
        let verb = |p: &[&str], n: &[&str]| Spelling::Verb {
            path: p.iter().map(|s| s.to_string()).collect(),
            not_after: n.iter().map(|s| s.to_string()).collect(),
        };
        assert!(verb(&["sim"], &[]).found_in(&t[0]));
        assert!(!verb(&["sim"], &["bench"]).found_in(&TestFn {
            literals: vec!["bench".into(), "sim".into()],
            ..t[0].clone()
        }));
    }

    #[test]
    fn string_values_are_unescaped() {
        assert_eq!(string_value(r#""a\"b\nc""#).as_deref(), Some("a\"b\nc"));
        assert_eq!(
            string_value(r###"r#"x "y""#"###).as_deref(),
            Some("x \"y\"")
        );
        assert_eq!(string_value("\"a \\\n    b\"").as_deref(), Some("a b"));
        assert_eq!(string_value("42u32"), None);
    }
}

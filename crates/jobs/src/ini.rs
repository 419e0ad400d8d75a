//! fio's INI job-file syntax, lexed into sections of `option[=value]`
//! entries with their file and line. No option is interpreted here.
//!
//! - `[global]` and `[job]` headers; section names may not be empty.
//! - Whole-line comments start with `;` or `#` (after optional whitespace);
//!   a `;` or `#` preceded by whitespace starts a trailing comment.
//! - `key = value` splits at the first `=` only (`name=raw=random-read`).
//! - `${VAR}` in a value is replaced from the environment lookup; an
//!   undefined variable is an error.
//! - `include FILE` inside a section pulls FILE's options into it, in place
//!   (fio's HOWTO, "Include files"); an included file has no sections. The
//!   caller reads the file (see [`Includer`]).

use std::rc::Rc;

use crate::error::{escape_controls, quoted, JobError};

/// One `option[=value]` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The file it was read from: the job file, or a file it includes.
    pub file: Rc<str>,
    pub line: usize,
    pub key: String,
    /// `None` for a bare option (`time_based`); `Some("")` for `bs=`.
    pub value: Option<String>,
}

/// One `[name]` section and its entries, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub line: usize,
    pub name: String,
    pub entries: Vec<Entry>,
}

impl Section {
    /// `[global]` rather than a job.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Reads an included file's entries: called with the name as written after
/// `include`, the including file and the line of the directive.
pub(crate) type Includer<'a> = dyn FnMut(&str, &str, usize) -> Result<Vec<Entry>, JobError> + 'a;

/// Splits `text` into sections. `file` names the origin in errors; `env`
/// resolves `${VAR}`; `include` reads `include FILE` directives.
pub fn lex(
    text: &str,
    file: &str,
    env: &dyn Fn(&str) -> Option<String>,
    include: &mut Includer<'_>,
) -> Result<Vec<Section>, JobError> {
    let mut sections = Vec::new();
    lex_into(text, file, env, include, false, &mut sections)?;
    Ok(sections)
}

/// The entries of an included file, which may not hold sections (fio:
/// "No new sections in included files").
pub fn lex_included(
    text: &str,
    file: &str,
    env: &dyn Fn(&str) -> Option<String>,
    include: &mut Includer<'_>,
) -> Result<Vec<Entry>, JobError> {
    let mut sections = vec![Section {
        line: 0,
        name: String::new(),
        entries: Vec::new(),
    }];
    lex_into(text, file, env, include, true, &mut sections)?;
    Ok(sections.pop().map(|s| s.entries).unwrap_or_default())
}

/// `include NAME` (or fio's looser `include=NAME`): the name, if the line is
/// an include directive.
fn include_directive(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("include")?;
    match rest.chars().next() {
        None => Some(""),
        Some(c) if c.is_whitespace() || c == '=' => Some(rest[c.len_utf8()..].trim()),
        Some(_) => None,
    }
}

fn lex_into(
    text: &str,
    file: &str,
    env: &dyn Fn(&str) -> Option<String>,
    include: &mut Includer<'_>,
    nested: bool,
    sections: &mut Vec<Section>,
) -> Result<(), JobError> {
    let origin: Rc<str> = Rc::from(file);
    let syntax = |line: usize, message: String| JobError::Syntax {
        file: file.to_string(),
        line,
        message,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            continue;
        }
        let t = strip_trailing_comment(t);
        if let Some(inner) = t.strip_prefix('[') {
            if nested {
                return Err(syntax(
                    line,
                    "no new sections in included files (fio's rule)".to_string(),
                ));
            }
            let Some(name) = inner.strip_suffix(']') else {
                return Err(syntax(
                    line,
                    format!("section header '{}' must end with ']'", quoted(t)),
                ));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(JobError::EmptySection {
                    file: file.to_string(),
                    line,
                });
            }
            sections.push(Section {
                line,
                name: name.to_string(),
                entries: Vec::new(),
            });
            continue;
        }
        if let Some(name) = include_directive(t) {
            if sections.is_empty() {
                return Err(JobError::OptionBeforeSection {
                    file: file.to_string(),
                    line,
                    option: "include".to_string(),
                });
            }
            if name.is_empty() {
                return Err(JobError::MissingValue {
                    file: file.to_string(),
                    line,
                    option: "include".to_string(),
                });
            }
            let entries = include(name, file, line)?;
            sections
                .last_mut()
                .expect("checked above")
                .entries
                .extend(entries);
            continue;
        }
        let (key, value) = match t.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (t, None),
        };
        if key.is_empty() {
            return Err(syntax(
                line,
                format!("missing option name before '=' in '{}'", quoted(t)),
            ));
        }
        let Some(section) = sections.last_mut() else {
            return Err(JobError::OptionBeforeSection {
                file: file.to_string(),
                line,
                option: quoted(key),
            });
        };
        let value = match value {
            Some(v) => Some(substitute(v, env).map_err(|e| match e {
                Subst::Undefined(var) => JobError::UndefinedVariable {
                    file: file.to_string(),
                    line,
                    option: quoted(key),
                    var: quoted(&var),
                },
                Subst::Unterminated => JobError::InvalidValue {
                    file: file.to_string(),
                    line,
                    option: quoted(key),
                    message: escape_controls(&format!("unterminated '${{' in '{}'", quoted(v))),
                },
            })?),
            None => None,
        };
        section.entries.push(Entry {
            file: origin.clone(),
            line,
            key: key.to_string(),
            value,
        });
    }
    Ok(())
}

/// Cuts a `;` or `#` comment that follows whitespace, then trims.
fn strip_trailing_comment(t: &str) -> &str {
    let mut prev_blank = false;
    for (i, c) in t.char_indices() {
        if prev_blank && (c == ';' || c == '#') {
            return t[..i].trim_end();
        }
        prev_blank = c.is_whitespace();
    }
    t
}

enum Subst {
    Undefined(String),
    Unterminated,
}

/// Replaces each `${VAR}` once (the replacement is not scanned again).
fn substitute(v: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, Subst> {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(Subst::Unterminated)?;
        let var = &after[..end];
        match env(var) {
            Some(val) => out.push_str(&val),
            None => return Err(Subst::Undefined(var.to_string())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// [`super::lex`] with includes refused.
    fn lex(
        text: &str,
        file: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Vec<Section>, JobError> {
        super::lex(text, file, env, &mut |name, _, _| {
            panic!("include {name} in a test without includes")
        })
    }

    #[test]
    fn sections_entries_and_lines() {
        let text = "; top comment\n[global]\nbs = 4k\n\n  # indented comment\n[job1]\ntime_based\nname=raw=random-read ; trailing\n";
        let s = lex(text, "t.fio", &no_env).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].is_global());
        assert_eq!(
            s[0].entries[0],
            Entry {
                file: Rc::from("t.fio"),
                line: 3,
                key: "bs".into(),
                value: Some("4k".into())
            }
        );
        assert_eq!(s[1].line, 6);
        assert_eq!(s[1].entries[0].value, None);
        assert_eq!(s[1].entries[1].value.as_deref(), Some("raw=random-read"));
        assert_eq!(s[1].entries[1].line, 8);
    }

    #[test]
    fn hash_inside_a_value_is_kept() {
        let s = lex("[j]\nfilename=/tmp/a#b # comment\n", "t", &no_env).unwrap();
        assert_eq!(s[0].entries[0].value.as_deref(), Some("/tmp/a#b"));
    }

    #[test]
    fn variables_are_substituted() {
        let env = |k: &str| (k == "DEV").then(|| "/dev/nvme0n1".to_string());
        let s = lex("[j]\nfilename=${DEV}\n", "t", &env).unwrap();
        assert_eq!(s[0].entries[0].value.as_deref(), Some("/dev/nvme0n1"));
        let e = lex("[j]\nfilename=${NOPE}\n", "t.fio", &env).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.fio:2: option 'filename': undefined variable '${NOPE}'"
        );
        assert!(lex("[j]\nfilename=${DEV\n", "t", &env).is_err());
    }

    #[test]
    fn syntax_errors() {
        let e = lex("bs=4k\n[j]\n", "t.fio", &no_env).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.fio:1: option 'bs' appears before any [section]"
        );
        let e = lex("[j]\n[ ]\n", "t.fio", &no_env).unwrap_err();
        assert_eq!(e.to_string(), "t.fio:2: empty section name");
        assert!(lex("[j\n", "t", &no_env).is_err());
        assert!(lex("[j] x\n", "t", &no_env).is_err());
        let s = lex("\u{feff}[j] ; comment\r\nbs=4k\r\n", "t", &no_env).unwrap();
        assert_eq!(s[0].name, "j");
        assert_eq!(s[0].entries[0].value.as_deref(), Some("4k"));
        assert!(lex("[j]\n=4k\n", "t", &no_env).is_err());
    }
}

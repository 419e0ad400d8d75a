//! Profile files: TOML read with bounded size, every error one line naming
//! the file, the line and the key (issue 12), for the device profiles here
//! and the simulator's host profiles alike.

use std::ops::Range;
use std::path::Path;

use policy::quote::{line_of, one_line, quoted};
use policy::{Nanos, SEC};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use toml::Spanned;

use crate::limits::MAX_PROFILE_BYTES;

/// Errors loading a profile. Every message is one line naming the file and,
/// where known, the line and key.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("{file}: {reason}")]
    Read { file: String, reason: String },
    /// A bare name that is not a shipped profile.
    #[error(
        "unknown {kind} profile '{name}' (shipped: {shipped}; or give a path to a .toml file)"
    )]
    UnknownName {
        kind: &'static str,
        name: String,
        shipped: String,
    },
    /// The toml crate refused the file (malformed TOML, a missing or
    /// unknown key, a value of the wrong type): its own message, with the
    /// line of its span and the key there (or the table a missing key
    /// belongs in), found through toml's spans.
    #[error("{file}:{line}: {}{message}", key.as_ref().map(|k| format!("key '{k}': ")).unwrap_or_default())]
    Toml {
        file: String,
        line: usize,
        key: Option<String>,
        message: String,
    },
    /// A value out of range.
    #[error("{file}:{line}: key '{key}': {reason}")]
    BadValue {
        file: String,
        line: usize,
        key: String,
        reason: String,
    },
}

/// The text and origin of a shipped name or a path.
pub fn resolve(
    kind: &'static str,
    shipped: &[(&str, &str, &str)],
    name_or_path: &str,
) -> Result<(String, String), ProfileError> {
    if name_or_path.contains('/') || name_or_path.ends_with(".toml") {
        let text = read_bounded(Path::new(name_or_path)).map_err(|reason| ProfileError::Read {
            file: name_or_path.to_string(),
            reason,
        })?;
        return Ok((text, name_or_path.to_string()));
    }
    match shipped.iter().find(|(name, _, _)| *name == name_or_path) {
        Some((_, path, text)) => Ok((text.to_string(), path.to_string())),
        None => Err(ProfileError::UnknownName {
            kind,
            name: name_or_path.to_string(),
            shipped: shipped
                .iter()
                .map(|(n, _, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// A profile file's text: a regular file of at most [`MAX_PROFILE_BYTES`]
/// (a device node or a FIFO is refused before anything is read).
fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let not_regular = || "not a regular file (a profile is a .toml file)".to_string();
    // Checked before opening too: opening a FIFO blocks until a writer
    // comes.
    if !std::fs::metadata(path)
        .map_err(|e| e.to_string())?
        .is_file()
    {
        return Err(not_regular());
    }
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let too_big = || {
        format!(
            "larger than {} KiB, the most a profile may be (the shipped ones are 3 KB)",
            MAX_PROFILE_BYTES >> 10
        )
    };
    if meta.len() > MAX_PROFILE_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    // The file may grow after the check: read one byte past the bound.
    f.by_ref()
        .take(MAX_PROFILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "line {}: not UTF-8 text",
            1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
        )
    })
}

/// `ns` as the profiles write times (`30s`, `1s`).
pub fn human(ns: Nanos) -> String {
    if ns % SEC == 0 {
        format!("{}s", ns / SEC)
    } else {
        format!("{ns}ns")
    }
}

/// `table.key` or `key`.
pub fn dotted(table: Option<&str>, key: &str) -> String {
    match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    }
}

/// A TOML document's keys with toml's spans: of each key, and of its value
/// (a table's value spans its keys).
#[derive(Debug, Default)]
struct Node(Vec<(Spanned<String>, Spanned<Node>)>);

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a TOML value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut keys = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    keys.push(entry);
                }
                Ok(Node(keys))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Node::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
                Ok(Node::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
                Ok(Node::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
                Ok(Node::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
                Ok(Node::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Node, E> {
                Ok(Node::default())
            }
        }
        d.deserialize_any(Visit)
    }
}

/// One key of the document: its dotted path and toml's spans.
struct Key {
    path: String,
    key: Range<usize>,
    value: Range<usize>,
    table: bool,
}

/// Every key of `text`, tables before their keys (empty if toml cannot
/// read the text at all: then only the error's own span locates it).
fn keys(text: &str) -> Vec<Key> {
    fn walk(node: &Node, prefix: Option<&str>, out: &mut Vec<Key>) {
        for (k, v) in &node.0 {
            let path = dotted(prefix, k.get_ref());
            out.push(Key {
                path: path.clone(),
                key: k.span(),
                value: v.span(),
                table: !v.get_ref().0.is_empty(),
            });
            walk(v.get_ref(), Some(&path), out);
        }
    }
    let mut out = Vec::new();
    if let Ok(root) = toml::from_str::<Node>(text) {
        walk(&root, None, &mut out);
    }
    out
}

/// The line where `key` (dotted) is assigned, from toml's key span.
fn line_of_key(text: &str, key: &str) -> usize {
    keys(text)
        .iter()
        .find(|k| k.path == key)
        .map_or(1, |k| line_of(text, k.key.start))
}

pub fn bad_value(text: &str, origin: &str, key: &str, reason: &str) -> ProfileError {
    ProfileError::BadValue {
        file: origin.to_string(),
        line: line_of_key(text, key),
        key: quoted(key),
        reason: one_line(reason),
    }
}

/// A toml error as a one-line [`ProfileError`]: toml's own message, the
/// line its span starts on, and the key whose key or value the span falls
/// in (the innermost); for a span covering a whole table (a key missing
/// from it), that table.
fn convert(e: &toml::de::Error, text: &str, origin: &str) -> ProfileError {
    let message = policy::quote::joined_lines(e.message());
    // toml 0.8 has no message for a key without a value at the end of the
    // text (`x = `): say that much rather than end the line at the colon.
    let message = if message.is_empty() {
        "invalid TOML (toml gave no reason: a key without a value at the end of the file?)"
            .to_string()
    } else {
        message
    };
    let span = e.span();
    let keys = keys(text);
    let key = span.as_ref().and_then(|s| {
        let inside = |r: &Range<usize>| r.start <= s.start && s.end <= r.end.max(r.start + 1);
        keys.iter()
            .rev()
            .find(|k| inside(&k.key) || (!k.table && inside(&k.value)))
            .or_else(|| keys.iter().rev().find(|k| k.table && inside(&k.value)))
            .map(|k| quoted(&k.path))
    });
    // toml's messages can carry the input (a 1 MB key, a bad duration
    // string): one bounded line, as every front door quotes (found by the
    // fuzzer, crates/fuzz).
    ProfileError::Toml {
        file: origin.to_string(),
        line: span.map_or(1, |s| line_of(text, s.start)),
        key,
        message: one_line(&message),
    }
}

/// `text` as a `T` (a profile's struct), toml's errors as [`ProfileError`]s.
pub fn parse<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, ProfileError> {
    toml::from_str(text).map_err(|e| convert(&e, text, origin))
}

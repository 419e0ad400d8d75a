//! A store entry's seal: what an entry holds besides the run, and what
//! counts as bad (issue 42 item 5, "a store that cannot lie").
//!
//! An entry on disk is one JSON object: `key` (its file's name), `version`
//! (the code version the key was made with), `spec` (the hash of what asked
//! for the run: a sweep's spec, `""` where the experiment has none),
//! `config`, then `results` (a finished run) or `error` (a failed one), and
//! `checksum`: SHA-256 (FIPS 180-4), as 64 lowercase hex digits, of the
//! [`canonical`] text of every other field. A changed number, a cut file or
//! a file copied under another name no longer reads as a result: each is a
//! [`Fault`], and an entry with no checksum at all (one written before
//! entries carried one) is one too, never trusted.
//!
//! What the experiments do with a fault: `sweep run` runs the point again
//! and says how many it found, by kind; `sweep merge` refuses the merge,
//! listing every bad entry of every store at once, and refuses too
//! entries of more than one spec (`--spec` takes one) or of more than one
//! code version (`--mixed` keeps them apart); `tune` and `reproduce` stop
//! at a bad entry, naming its file (`Store::get`).
//!
//! SHA-256 rather than the keys' FNV-1a ([`crate::canon::fnv1a64`]): a key
//! only tells configurations apart, a checksum must notice any edit, and
//! the `sha2` crate (RustCrypto) is small and well kept.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::canon::canonical;

/// The field that holds the checksum.
const CHECKSUM: &str = "checksum";

/// The field that says what made the entry.
const MADE_BY: &str = "made_by";

/// What is wrong with an entry. Each reads as one line after the file's
/// name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 0 bytes: a write cut before its first byte, or a file emptied.
    Empty,
    /// Not a whole JSON entry: cut short, not JSON, or not an entry's
    /// fields (serde's reason).
    Truncated(String),
    /// No checksum: written before entries carried one (issue 42), so
    /// nothing vouches for it.
    NoChecksum,
    /// Its checksum is not that of its content: edited after it was
    /// written.
    Tampered,
    /// It holds another key than its file's name.
    WrongKey(String),
    /// Made from another spec (the hash it holds) than the one asked for.
    OtherSpec(String),
    /// Made by another code version (the one it holds) than this one.
    OtherVersion(String),
}

impl Fault {
    /// A word for counting faults of a kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Empty => "empty",
            Fault::Truncated(_) => "truncated",
            Fault::NoChecksum => "no checksum",
            Fault::Tampered => "tampered",
            Fault::WrongKey(_) => "wrong key",
            Fault::OtherSpec(_) => "other spec",
            Fault::OtherVersion(_) => "other version",
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Fault::Empty => f.write_str("empty (0 bytes)"),
            Fault::Truncated(why) => write!(f, "truncated: not a whole entry ({why})"),
            Fault::NoChecksum => {
                f.write_str("no checksum (written before entries carried one): not trusted")
            }
            Fault::Tampered => f.write_str("tampered: its checksum is not its content's"),
            Fault::WrongKey(k) => write!(f, "holds key {k}, not its name's"),
            Fault::OtherSpec(s) => write!(f, "made from another spec ({})", short(s)),
            Fault::OtherVersion(v) => write!(f, "made by another code version ({v})"),
        }
    }
}

/// A spec hash as tables and lines show it: its first 12 hex digits (or
/// `none` for the empty one).
pub fn short(spec: &str) -> &str {
    if spec.is_empty() {
        "none"
    } else {
        &spec[..spec.len().min(12)]
    }
}

/// SHA-256 of `v`'s [`canonical`] text, as 64 lowercase hex digits.
pub fn checksum(v: &Value) -> String {
    sha256_hex(canonical(v).as_bytes())
}

/// SHA-256 of `bytes`, as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `entry` as the text of its file: its fields, `made_by` (what made it:
/// `report::made_by::current`, issue 42 item 1, with the configuration's
/// `seed` when it has one) and their checksum, pretty JSON and a newline.
/// Readers of an entry's type skip `made_by` (serde ignores a field the
/// type lacks); the checksum covers it.
pub fn seal<T: Serialize>(entry: &T) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(entry)?;
    if let Value::Object(map) = &mut v {
        if !map.contains_key(MADE_BY) {
            let seeds: Vec<u64> = map
                .get("config")
                .and_then(|c| c.get("seed"))
                .and_then(Value::as_u64)
                .into_iter()
                .collect();
            let made_by = report::made_by::current(&seeds);
            map.insert(MADE_BY.into(), serde_json::to_value(made_by)?);
        }
    }
    let sum = checksum(&v);
    if let Value::Object(map) = &mut v {
        map.insert(CHECKSUM.into(), Value::String(sum));
    }
    let mut text = serde_json::to_string_pretty(&v)?;
    text.push('\n');
    Ok(text)
}

/// The entry in `bytes`, if whole and its checksum its content's.
pub fn open<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Fault> {
    if bytes.is_empty() {
        return Err(Fault::Empty);
    }
    let mut v: Value =
        serde_json::from_slice(bytes).map_err(|e| Fault::Truncated(e.to_string()))?;
    let Value::Object(map) = &mut v else {
        return Err(Fault::Truncated("not a JSON object".into()));
    };
    let Some(Value::String(sum)) = map.remove(CHECKSUM) else {
        return Err(Fault::NoChecksum);
    };
    if checksum(&v) != sum {
        return Err(Fault::Tampered);
    }
    serde_json::from_value(v).map_err(|e| Fault::Truncated(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sha256_matches_the_fips_180_example() {
        // FIPS 180-4's example "abc" (NIST CSRC, SHA256.pdf).
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_sealed_entry_opens_and_any_change_is_a_fault() {
        let entry = json!({ "key": "k", "results": { "p99_ns": 17000, "cpu": 0.1 } });
        let text = seal(&entry).unwrap();
        let mut opened = open::<Value>(text.as_bytes()).unwrap();
        let made_by = opened.as_object_mut().unwrap().remove("made_by").unwrap();
        assert_eq!(made_by["code"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(opened, entry);
        // Key order and spacing are not content.
        let v: Value = serde_json::from_str(&text).unwrap();
        let compact = serde_json::to_string(&v).unwrap();
        assert_eq!(open::<Value>(compact.as_bytes()).unwrap()["key"], "k");
        let edited = text.replace("17000", "17001");
        assert_eq!(open::<Value>(edited.as_bytes()), Err(Fault::Tampered));
        let cut = &text.as_bytes()[..text.len() / 2];
        assert!(matches!(open::<Value>(cut), Err(Fault::Truncated(_))));
        assert_eq!(open::<Value>(b""), Err(Fault::Empty));
        let bare = serde_json::to_string(&entry).unwrap();
        assert_eq!(open::<Value>(bare.as_bytes()), Err(Fault::NoChecksum));
        // What made it is checked too.
        let moved = text.replace("\"made_by\": {", "\"made_by\": {\"x\": 1, ");
        assert_eq!(open::<Value>(moved.as_bytes()), Err(Fault::Tampered));
    }
}

//! A configuration's one spelling and its hash, so that the same resolved
//! run gets the same key on every machine and in every run of the program.
//!
//! serde_json keeps insertion order in this workspace (`report` enables its
//! `preserve_order`), so its own output is not canonical: [`canonical`]
//! writes objects with their keys sorted, whatever order they were built in.

use serde_json::Value;

/// `v` as compact JSON with every object's keys sorted (byte order).
pub fn canonical(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                write(&map[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// FNV-1a, 64 bits: small, stable across platforms and Rust versions (std's
/// `DefaultHasher` promises neither), and enough to tell apart the few
/// thousand points of a sweep (no adversary picks them). No crate in the
/// lock file offers a cryptographic hash without a new dependency.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// [`fnv1a64`] as 16 lowercase hex digits, the form keys and fingerprints
/// take in file names and tables.
pub fn hex(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a64(bytes))
}

/// The key of a resolved configuration under a program version: [`hex`] of
/// its [`canonical`] text and the version. The version is in the key
/// because a new one may simulate differently: its runs are new runs.
pub fn key(config: &Value, version: &str) -> String {
    hex(format!("{}\ncinterrupts {version}", canonical(config)).as_bytes())
}

/// A loaded value's fingerprint: [`hex`] of its `Debug` spelling, which
/// names every field. It is stable within a version, which the key also
/// holds, so an edited profile (a changed field) is a new configuration.
pub fn fingerprint(loaded: &impl std::fmt::Debug) -> String {
    hex(format!("{loaded:?}").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let mut a = serde_json::Map::new();
        a.insert("z".into(), json!(1));
        a.insert("a".into(), json!({"y": [1, {"b": 2, "a": 1}], "x": "s"}));
        assert_eq!(
            canonical(&Value::Object(a)),
            r#"{"a":{"x":"s","y":[1,{"a":1,"b":2}]},"z":1}"#
        );
    }

    #[test]
    fn fnv_matches_the_reference_values() {
        // From the FNV reference test suite (fnv1a64 of "" and "a").
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(hex(b"a"), "af63dc4c8601ec8c");
    }
}

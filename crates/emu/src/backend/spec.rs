//! `--backend` strings: `file:PATH[,OPT..]` and `null:LATENCY[,depth=N][,OPT..]`;
//! and the modelled device `--device` names, built by the CLI from a
//! profile ([`BackendSpec::device`]).

use std::fmt;
use std::path::PathBuf;

use jobs::units::{parse_count, parse_duration, parse_u32};
use policy::{format_nanos, Nanos};

use service::DeviceProfile;

/// Which backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// io_uring with O_DIRECT on a regular file or a block device.
    File { path: PathBuf },
    /// Completes each command `latency` after it starts, at most `depth` at
    /// a time (the rest wait in arrival order).
    Null { latency: Nanos, depth: u32 },
    /// A profile's device: service times drawn from its distributions, on
    /// its units, under its ceilings ([`super::ModelBackend`]), the draws
    /// seeded by `seed`. The profile's queues and tuned delta/thr are not
    /// the device's timing: the emulator's queues are --queue-depth's, its
    /// policy the command line's.
    Timed {
        profile: Box<DeviceProfile>,
        seed: u64,
    },
}

/// Fault injection, for testing what a job sees when the device fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    /// Every Nth command (1-based count over the backend's life) completes
    /// with -EIO and transfers nothing. 0: never.
    pub error_every: u64,
    /// Every Nth read returns its data with one byte flipped (file backend
    /// only). 0: never.
    pub corrupt_every: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendSpec {
    pub kind: Kind,
    pub faults: Faults,
}

/// Linux null_blk's `hw_queue_depth` default.
pub const DEFAULT_NULL_DEPTH: u32 = 64;

const EXPECTED: &str =
    "expected file:PATH[,error_every=N][,corrupt_every=N] or null:LATENCY[,depth=N][,error_every=N]";

/// The `,key=value` options; anything else after `file:` belongs to the path.
const KEYS: [&str; 3] = ["depth", "error_every", "corrupt_every"];

/// `key=value` if `part` is one of [`KEYS`].
fn option(part: &str) -> Option<(&str, &str)> {
    part.split_once('=').filter(|(k, _)| KEYS.contains(k))
}

impl BackendSpec {
    /// A file backend without faults. Built rather than parsed, so that any
    /// path (one with a comma, or not UTF-8) is taken as it is.
    pub fn file(path: impl Into<std::path::PathBuf>) -> BackendSpec {
        BackendSpec {
            kind: Kind::File { path: path.into() },
            faults: Faults::default(),
        }
    }

    /// A profile's device without faults, its draws seeded by `seed`.
    pub fn device(profile: DeviceProfile, seed: u64) -> BackendSpec {
        BackendSpec {
            kind: Kind::Timed {
                profile: Box::new(profile),
                seed,
            },
            faults: Faults::default(),
        }
    }

    /// Whether the backend keeps the data written (only a file does).
    pub fn keeps_data(&self) -> bool {
        matches!(self.kind, Kind::File { .. })
    }

    /// Reads a `--backend` value. Errors are one line quoting the value and
    /// naming the part at fault.
    pub fn parse(s: &str) -> Result<BackendSpec, String> {
        let fail = |why: String| format!("--backend '{s}': {why}");
        let unknown = || fail(format!("unknown backend '{s}' ({EXPECTED})"));
        let (scheme, rest) = s.split_once(':').ok_or_else(unknown)?;
        let mut parts: Vec<&str> = rest.split(',').collect();
        let mut opts = Vec::new();
        match scheme {
            // Options are peeled off the end so that a path may hold commas.
            "file" => {
                while let Some(kv) = parts[1..].last().and_then(|p| option(p)) {
                    opts.insert(0, kv);
                    parts.pop();
                }
            }
            "null" => {
                for part in parts.drain(1..) {
                    opts.push(option(part).ok_or_else(|| {
                        fail(format!(
                            "unknown option '{part}' (expected depth=N or error_every=N)"
                        ))
                    })?);
                }
            }
            _ => return Err(unknown()),
        }
        let head = parts.join(",");

        let mut faults = Faults::default();
        let mut depth = None;
        let mut seen: Vec<&str> = Vec::new();
        for (key, value) in opts {
            if seen.contains(&key) {
                return Err(fail(format!("'{key}=' given twice")));
            }
            seen.push(key);
            let bad = |e: String| fail(format!("bad {key} '{value}': {e}"));
            match key {
                "depth" => depth = Some(parse_u32(value).map_err(bad)?),
                "error_every" => faults.error_every = parse_count(value).map_err(bad)?,
                _ => faults.corrupt_every = parse_count(value).map_err(bad)?,
            }
        }

        let kind = if scheme == "file" {
            if depth.is_some() {
                return Err(fail("depth= needs a null backend".to_string()));
            }
            if head.is_empty() {
                return Err(fail("empty path after 'file:'".to_string()));
            }
            Kind::File {
                path: PathBuf::from(head),
            }
        } else {
            if faults.corrupt_every != 0 {
                return Err(fail("corrupt_every needs a file backend".to_string()));
            }
            let latency = parse_duration(&head, None)
                .map_err(|e| fail(format!("bad latency '{head}': {e}")))?;
            let depth = depth.unwrap_or(DEFAULT_NULL_DEPTH);
            if depth == 0 {
                return Err(fail("bad depth '0': must be at least 1".to_string()));
            }
            Kind::Null { latency, depth }
        };
        Ok(BackendSpec { kind, faults })
    }
}

/// The canonical form: [`BackendSpec::parse`] reads it back to an equal spec
/// (but for a modelled device, `device:NAME`, which `--device` names).
impl fmt::Display for BackendSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::File { path } => write!(f, "file:{}", path.display())?,
            Kind::Null { latency, depth } => {
                write!(f, "null:{},depth={depth}", format_nanos(*latency))?
            }
            Kind::Timed { profile, .. } => write!(f, "device:{}", profile.name)?,
        }
        if self.faults.error_every != 0 {
            write!(f, ",error_every={}", self.faults.error_every)?;
        }
        if self.faults.corrupt_every != 0 {
            write!(f, ",corrupt_every={}", self.faults.corrupt_every)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, error_every: u64, corrupt_every: u64) -> BackendSpec {
        BackendSpec {
            kind: Kind::File { path: path.into() },
            faults: Faults {
                error_every,
                corrupt_every,
            },
        }
    }

    fn null(latency: Nanos, depth: u32, error_every: u64) -> BackendSpec {
        BackendSpec {
            kind: Kind::Null { latency, depth },
            faults: Faults {
                error_every,
                corrupt_every: 0,
            },
        }
    }

    /// Every grammar form, its parse and its canonical form.
    fn forms() -> Vec<(&'static str, BackendSpec, &'static str)> {
        vec![
            ("file:/tmp/x", file("/tmp/x", 0, 0), "file:/tmp/x"),
            ("file:rel/x.img", file("rel/x.img", 0, 0), "file:rel/x.img"),
            ("file:/tmp/a,b", file("/tmp/a,b", 0, 0), "file:/tmp/a,b"),
            (
                "file:/tmp/a,foo=1",
                file("/tmp/a,foo=1", 0, 0),
                "file:/tmp/a,foo=1",
            ),
            (
                "file:/tmp/x,corrupt_every=5,error_every=3",
                file("/tmp/x", 3, 5),
                "file:/tmp/x,error_every=3,corrupt_every=5",
            ),
            (
                "file:/a,b,error_every=2",
                file("/a,b", 2, 0),
                "file:/a,b,error_every=2",
            ),
            ("null:10us", null(10_000, 64, 0), "null:10us,depth=64"),
            ("null:0", null(0, 64, 0), "null:0,depth=64"),
            (
                "null:1.5us,depth=2",
                null(1_500, 2, 0),
                "null:1500ns,depth=2",
            ),
            (
                "null:1ms,error_every=1k,depth=1",
                null(1_000_000, 1, 1024),
                "null:1ms,depth=1,error_every=1024",
            ),
            (
                "null:10us,error_every=0",
                null(10_000, 64, 0),
                "null:10us,depth=64",
            ),
        ]
    }

    #[test]
    fn every_form_parses_and_round_trips() {
        for (text, want, canonical) in forms() {
            let spec = BackendSpec::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(spec, want, "{text}");
            assert_eq!(spec.to_string(), canonical, "{text}");
            assert_eq!(BackendSpec::parse(canonical), Ok(spec), "{canonical}");
        }
    }

    #[test]
    fn errors_are_one_line_naming_the_bad_part() {
        for (text, part) in [
            ("null:10xs", "bad latency '10xs': invalid duration '10xs'"),
            ("null:100", "bad latency '100'"),
            ("null:", "bad latency ''"),
            ("nvme:0", "unknown backend 'nvme:0' (expected file:PATH"),
            ("/tmp/x", "unknown backend '/tmp/x'"),
            (
                "null:10us,corrupt_every=2",
                "corrupt_every needs a file backend",
            ),
            ("null:10us,depth=0", "bad depth '0'"),
            ("null:10us,depth=x", "bad depth 'x'"),
            ("null:10us,foo=1", "unknown option 'foo=1'"),
            ("null:10us,depth=3,foo=1", "unknown option 'foo=1'"),
            ("null:10us,,depth=3", "unknown option ''"),
            ("null:10us,depth=2,depth=3", "'depth=' given twice"),
            ("file:", "empty path"),
            ("file:,error_every=2", "empty path"),
            ("file:/x,depth=2", "depth= needs a null backend"),
            ("file:/x,error_every=abc", "bad error_every 'abc'"),
            ("file:/x,corrupt_every=-1", "bad corrupt_every '-1'"),
        ] {
            let e = BackendSpec::parse(text).expect_err(text);
            assert!(
                e.starts_with(&format!("--backend '{text}': ")),
                "{text}: {e}"
            );
            assert!(e.contains(part), "{text}: {e}");
            assert!(!e.contains('\n'), "{text}: {e}");
        }
    }
}

//! The application file (TOML, `crates/apps/README.md`): one or more
//! `[[instance]]` tables, each an engine with its threads pinned to cores
//! and its workload:
//!
//! ```toml
//! [[instance]]
//! name = "kvell"
//! engine = "kvell"
//! worker_cores = [0, 1]
//! client_cores = [2, 3, 4, 5]
//! workload = "a"
//! ```
//!
//! Each instance is read in two steps: the file's tables with the place of
//! every key (for errors naming the line), then the table without `name`
//! as [`EngineConfig`], a serde enum tagged by `engine`. Every engine's
//! configuration gives each key a default (`#[serde(default)]`), so a key
//! can be checked alone: when the table is refused, the first key (in file
//! order) refused on its own is the one named. A new engine is a new
//! variant of [`EngineConfig`] and an arm in each of its three matches.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use policy::quote::line_of;
use serde::Deserialize;
use toml::Spanned;

use crate::{kvell, rocks, PlacedThread};

/// The most bytes an application file may hold. Our bound: the shipped
/// files are under 2 KB, and a file is parsed whole (a TOML value tree of
/// some tens of bytes per byte of text at worst), so 1 MiB keeps the parse
/// in tens of MB.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// One engine's configuration, by `engine = "..."`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "engine", rename_all = "lowercase")]
pub enum EngineConfig {
    /// A KVell-like store driven by YCSB ([`kvell::Config`]).
    Kvell(kvell::Config),
    /// A RocksDB-like engine running a db_bench benchmark
    /// ([`rocks::Config`]).
    Rocksdb(rocks::Config),
    /// RocksDB's dump tool on its own database ([`rocks::DumpConfig`]).
    Dump(rocks::DumpConfig),
}

impl EngineConfig {
    /// The engine names the file accepts, for error messages.
    pub const NAMES: &'static str = "kvell, rocksdb, dump";

    /// Its name as `engine = ` writes it.
    pub fn name(&self) -> &'static str {
        match self {
            EngineConfig::Kvell(_) => "kvell",
            EngineConfig::Rocksdb(_) => "rocksdb",
            EngineConfig::Dump(_) => "dump",
        }
    }

    /// Keys without a default that the file must give.
    fn required(&self) -> &'static [&'static str] {
        match self {
            EngineConfig::Kvell(_) => &["workload"],
            EngineConfig::Rocksdb(_) => rocks::Config::REQUIRED,
            EngineConfig::Dump(_) => &[],
        }
    }

    /// Checks beyond the keys' types: the option at fault and why.
    fn validate(&self) -> Result<(), (&'static str, String)> {
        match self {
            EngineConfig::Kvell(c) => c.validate().map_err(|e| (e.option, e.message)),
            EngineConfig::Rocksdb(c) => c.validate().map_err(|e| (e.option, e.message)),
            EngineConfig::Dump(c) => c.validate().map_err(|e| (e.option, e.message)),
        }
    }

    /// The instance's threads, placed.
    pub fn threads(
        &self,
        instance: usize,
        name: &str,
        seed: u64,
    ) -> Result<Vec<PlacedThread>, String> {
        match self {
            EngineConfig::Kvell(c) => c.threads(instance, name, seed),
            EngineConfig::Rocksdb(c) => c.threads(instance, name, seed),
            EngineConfig::Dump(c) => c.threads(instance, name, seed),
        }
    }
}

/// One `[[instance]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    pub name: String,
    pub engine: EngineConfig,
    /// The line of its first key, for errors found later.
    pub line: usize,
}

/// A parsed application file.
#[derive(Clone, Debug, PartialEq)]
pub struct AppFile {
    /// Where it came from (its path as given), for errors.
    pub origin: String,
    pub instances: Vec<Instance>,
}

/// An error in an application file, displayed as one line:
/// `ORIGIN:LINE: option 'OPTION': MESSAGE`, without the parts it lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    pub origin: String,
    pub line: Option<usize>,
    pub option: Option<String>,
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if let Some(option) = &self.option {
            write!(f, "option '{option}': ")?;
        }
        // One line, whatever the message carried.
        let message = self.message.trim().replace('\n', " ");
        f.write_str(&message)
    }
}

impl std::error::Error for FileError {}

type RawTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    instance: Vec<Spanned<RawTable>>,
}

/// serde's "unknown field `x`, expected one of ..." as ours.
fn reword(message: &str, engine: &str) -> String {
    let message = message.trim();
    match message.strip_prefix("unknown field ") {
        Some(rest) => match rest.split_once(", expected ") {
            Some((_, expected)) => {
                format!("unknown option for engine '{engine}' (expected {expected})")
            }
            None => format!("unknown option for engine '{engine}'"),
        },
        None => message.to_string(),
    }
}

/// The file's text: a regular file (a device node or a FIFO is refused
/// before it is opened) of at most [`MAX_FILE_BYTES`], read no further.
fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let cannot = |e: std::io::Error| format!("cannot read: {e}");
    let not_regular = || "cannot read: not a regular file".to_string();
    // Checked before opening too: opening a FIFO blocks until a writer comes.
    if !std::fs::metadata(path).map_err(cannot)?.is_file() {
        return Err(not_regular());
    }
    let mut f = std::fs::File::open(path).map_err(cannot)?;
    if !f.metadata().map_err(cannot)?.is_file() {
        return Err(not_regular());
    }
    let too_big = || {
        format!(
            "larger than {} KiB, the most an application file may be (the shipped ones are under 2 KB)",
            MAX_FILE_BYTES >> 10
        )
    };
    let mut bytes = Vec::new();
    // The file may grow after a check: read one byte past the bound.
    f.by_ref()
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| format!("cannot read: not UTF-8 text ({e})"))
}

impl AppFile {
    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<AppFile, FileError> {
        let origin = path.display().to_string();
        let text = read_bounded(path).map_err(|message| FileError {
            origin: origin.clone(),
            line: None,
            option: None,
            message,
        })?;
        AppFile::parse(&text, &origin)
    }

    /// Parses `text`; errors name `origin`.
    pub fn parse(text: &str, origin: &str) -> Result<AppFile, FileError> {
        let err = |offset: Option<usize>, option: Option<&str>, message: String| FileError {
            origin: origin.to_string(),
            line: offset.map(|o| line_of(text, o)),
            option: option.map(str::to_string),
            message,
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let message = e.message().to_string();
            let message = match message.strip_prefix("unknown field ") {
                Some(rest) => format!(
                    "unknown table or key {} (an application file holds [[instance]] tables)",
                    rest.split(',').next().unwrap_or(rest)
                ),
                None => message,
            };
            err(e.span().map(|s| s.start), None, message)
        })?;
        if let Some(extra) = raw.instance.get(crate::MAX_THREADS) {
            return Err(err(
                Some(extra.span().start),
                None,
                format!(
                    "more than {} [[instance]]s (each runs at least one thread; the most threads the simulator runs)",
                    crate::MAX_THREADS
                ),
            ));
        }
        if raw.instance.is_empty() {
            return Err(err(
                None,
                None,
                "no [[instance]]: an application file runs at least one".into(),
            ));
        }
        let mut instances: Vec<Instance> = Vec::new();
        let mut names: HashMap<String, usize> = HashMap::new();
        for spanned in raw.instance {
            let table_start = spanned.span().start;
            let table = spanned.into_inner();
            // Keys in file order: (key, its offset, its value).
            let mut keys: Vec<(Spanned<String>, Spanned<toml::Value>)> =
                table.into_iter().collect();
            keys.sort_by_key(|(k, _)| k.span().start);
            let entries: Vec<(String, usize, toml::Value)> = keys
                .into_iter()
                .map(|(k, v)| (k.get_ref().clone(), k.span().start, v.into_inner()))
                .collect();
            let first = entries.first().map_or(table_start, |(_, o, _)| *o);
            let at = |key: &str| {
                entries
                    .iter()
                    .find(|(k, _, _)| k == key)
                    .map(|(_, o, _)| *o)
            };
            let value = |key: &str| {
                entries
                    .iter()
                    .find(|(k, _, _)| k == key)
                    .map(|(_, o, v)| (*o, v))
            };
            let name = match value("name") {
                None => return Err(err(Some(first), Some("name"), "required".into())),
                Some((offset, v)) => match v {
                    toml::Value::String(s) if !s.is_empty() && !s.contains('/') => s.clone(),
                    _ => {
                        return Err(err(
                            Some(offset),
                            Some("name"),
                            "a non-empty string without '/'".into(),
                        ))
                    }
                },
            };
            if let Some(line) = names.get(&name) {
                return Err(err(
                    at("name"),
                    Some("name"),
                    format!("instance '{name}' is already defined at line {line}"),
                ));
            }
            let engine = match value("engine") {
                None => {
                    return Err(err(
                        Some(first),
                        Some("engine"),
                        format!("required ({})", EngineConfig::NAMES),
                    ))
                }
                Some((offset, v)) => match v {
                    toml::Value::String(s) => s.clone(),
                    _ => {
                        return Err(err(
                            Some(offset),
                            Some("engine"),
                            format!("a string ({})", EngineConfig::NAMES),
                        ))
                    }
                },
            };
            let rest: Vec<&(String, usize, toml::Value)> =
                entries.iter().filter(|(k, _, _)| k != "name").collect();
            let table_of = |entries: &mut dyn Iterator<Item = (String, toml::Value)>| {
                toml::Value::Table(entries.collect())
            };
            let whole = table_of(&mut rest.iter().map(|(k, _, v)| (k.clone(), v.clone())));
            let config: EngineConfig = match whole.try_into() {
                Ok(c) => c,
                Err(e) => {
                    let engine_only = table_of(&mut std::iter::once((
                        "engine".to_string(),
                        toml::Value::String(engine.clone()),
                    )));
                    let unknown = engine_only
                        .try_into::<EngineConfig>()
                        .err()
                        .is_some_and(|e| e.message().starts_with("unknown variant"));
                    if unknown {
                        return Err(err(
                            at("engine"),
                            Some("engine"),
                            format!("unknown engine '{engine}' ({})", EngineConfig::NAMES),
                        ));
                    }
                    // The first key refused alone is the one at fault.
                    let culprit =
                        rest.iter()
                            .filter(|(k, _, _)| k != "engine")
                            .find_map(|(k, offset, v)| {
                                let alone = table_of(
                                    &mut [
                                        ("engine".to_string(), toml::Value::String(engine.clone())),
                                        (k.clone(), v.clone()),
                                    ]
                                    .into_iter(),
                                );
                                alone
                                    .try_into::<EngineConfig>()
                                    .err()
                                    .map(|e| (k.clone(), *offset, e.message().to_string()))
                            });
                    return Err(match culprit {
                        Some((k, offset, message)) => {
                            err(Some(offset), Some(&k), reword(&message, &engine))
                        }
                        None => err(Some(first), None, e.message().to_string()),
                    });
                }
            };
            for &required in config.required() {
                if at(required).is_none() {
                    return Err(err(Some(first), Some(required), "required".into()));
                }
            }
            if let Err((option, message)) = config.validate() {
                return Err(err(at(option).or(Some(first)), Some(option), message));
            }
            let line = line_of(text, first);
            names.insert(name.clone(), line);
            instances.push(Instance {
                name,
                engine: config,
                line,
            });
        }
        Ok(AppFile {
            origin: origin.to_string(),
            instances,
        })
    }

    /// Every instance's threads, placed: instance `i` in file order, each
    /// thread's `index` within its instance. Instance `i` draws its layout
    /// from `seed` and `i`.
    pub fn threads(&self, seed: u64) -> Result<Vec<PlacedThread>, FileError> {
        let mut out = Vec::new();
        for (i, inst) in self.instances.iter().enumerate() {
            // Our choice: a distinct, reproducible seed per instance
            // (the 64-bit golden ratio spreads neighbouring indices).
            let seed = seed.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let threads = inst
                .engine
                .threads(i, &inst.name, seed)
                .map_err(|message| FileError {
                    origin: self.origin.clone(),
                    line: Some(inst.line),
                    option: None,
                    message,
                })?;
            out.extend(threads);
        }
        Ok(out)
    }
}

//! What the sweep crate's tests share: the examples, the tiny spec, a spec
//! written beside a copy of examples/mixed-16.fio.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use sweep::{RunOptions, Shard};

pub fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Writes `text` as the spec `name` in `dir`, with examples/mixed-16.fio
/// copied beside it so its paths are relative.
pub fn spec_named(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::copy(examples().join("mixed-16.fio"), dir.join("mixed-16.fio")).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// 2 strategies x 2 deltas x 2 seeds on the mixed workload, 20 ms each.
pub const TINY: &str = r#"
workloads = ["mixed-16.fio"]
devices = ["optane"]
seeds = [1, 2]
runtime = "20ms"
strategies = [
  { name = "adaptive", grid = { delta = ["2us", "6us"] } },
  { name = "cint", grid = { delta = ["2us", "6us"] } },
]
"#;

/// The mixed workload under `default` alone, over `seeds` (as TOML's list
/// holds them: `1, 2`), each point `runtime` long.
pub fn default_spec(seeds: &str, runtime: &str) -> String {
    format!(
        "workloads = [\"mixed-16.fio\"]\ndevices = [\"optane\"]\nseeds = [{seeds}]\nruntime = \"{runtime}\"\nstrategies = [\"default\"]\n"
    )
}

pub fn quiet(_: &str) {}

/// Every point of the spec, failed ones not retried.
pub const ALL: RunOptions = RunOptions {
    shard: Shard::ALL,
    retry_failed: false,
};

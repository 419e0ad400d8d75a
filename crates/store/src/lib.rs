//! Results kept by key, so that an experiment of many runs resumes where
//! it stopped and splits into shards for a cluster's array tasks (issue
//! 28): `sweep`'s points, `tune`'s runs and `reproduce`'s alike.
//!
//! The modules, bottom first: [`canon`] (a configuration's canonical text,
//! its hash and key), [`resolved`] (the parts every experiment's
//! configuration spells alike: a strategy with its parameters in force, a
//! loaded profile), [`shard`] (which runs a task takes), [`entry`] (an
//! entry's seal: its checksum, spec hash and code version, and what counts
//! as bad), [`dir`] (the directory of result files), [`tally`] (what a task found and did),
//! [`reports`] (a run's JSON report read back as its typed kind).
//! What an experiment stores of a run, and what a configuration holds
//! besides, is the experiment's.

pub mod canon;
pub mod dir;
pub mod entry;
pub mod reports;
pub mod resolved;
pub mod shard;
pub mod tally;

pub use canon::{canonical, fingerprint, key};
pub use dir::{Checked, Expect, Failed, Finished, Scan, State, Store, StoreError};
pub use entry::Fault;
pub use shard::Shard;
pub use tally::Tally;

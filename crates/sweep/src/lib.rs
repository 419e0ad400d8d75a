//! Design-space sweeps (issue 28): a TOML spec of strategies and their
//! parameter grids over workloads, devices, modes and seeds, expanded into
//! points; each point's result stored under a key derived from its fully
//! resolved configuration and the program's version, so a rerun skips
//! finished points and an interrupted sweep resumes; deterministic shards
//! for a cluster's array tasks; stores merged into one table with each
//! workload's Pareto fronts: each job's p99 and the worst job's against
//! interrupts per second and CPU per I/O, or the objectives named.
//!
//! The keys, the store's files and the shards are the `store` crate's
//! (shared with `tune`). The modules, bottom first:
//! [`spec`] (reading the spec), [`point`] (the points, made one at a time,
//! and their keys),
//! [`store`] (what a point's file holds), [`mod@run`] (running a shard
//! into a store), [`merge`] (the table), [`objective`] (what a front is
//! drawn on, as `--front` names it), [`front`] (Pareto fronts, the best
//! settings), [`picks`] (tune's picks against the fronts), [`figure`]
//! (the fronts drawn), [`page`] (the report), [`search`] and
//! [`search_run`] (`sweep search`: a refinement around the front instead
//! of the whole grid), [`slurm`] (the array script, and the search's
//! round-by-round driver).

pub mod figure;
pub mod front;
pub mod merge;
pub mod objective;
pub mod page;
pub mod picks;
pub mod point;
pub mod run;
pub mod search;
pub mod search_run;
pub mod slurm;
pub mod spec;
pub mod store;

pub use self::store::{Store, StoreError};
pub use ::store::Shard;
pub use point::{expand, version, Point, Points, VERSION};
pub use run::{plan, run, Counts, Plan, RunOptions};
pub use spec::{Spec, SpecError};

//! The application file (TOML): one or more instances, each an engine with
//! its threads pinned to cores and its workload. To be built (issue 16):
//! `[[instance]]` tables with `name`, `engine = "kvell" | "rocksdb" |
//! "dump"` and the engine's own keys; [`AppFile::threads`] places them.

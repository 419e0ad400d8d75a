//! A stable, coverage-less mutational fuzzer for the parsers that read
//! untrusted text: fio job files (`jobs::parse_str`), completion streams
//! (`policy::stream::parse`) and the TOML host and device profiles
//! (`sim::HostProfile::parse`, `sim::DeviceProfile::parse`). Issue 12's "keep
//! it fixed": cargo-fuzz needs a nightly toolchain, this needs none.
//!
//! Each execution mutates a corpus entry ([`mutate`]), runs the parser on a
//! worker thread and judges it ([`driver`]): a panic (caught), a hang (a
//! watchdog) or unbounded memory (the counting allocator installed below, for
//! the binary and the tests alike) is a finding.
//!
//! What it is not: it has no coverage feedback (it keeps inputs a parser
//! accepts, nothing more), and it cannot catch a stack overflow (the process
//! aborts; rerun with the same `--seed` to reproduce).

pub mod alloc;
pub mod driver;
pub mod mutate;
pub mod targets;

#[global_allocator]
static COUNTING: alloc::Counting = alloc::Counting;

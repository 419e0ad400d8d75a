#![doc = include_str!("../README.md")]

pub mod fio;
pub mod glob;
pub mod kernel;
pub mod presets;
pub mod rule;
pub mod trace;

pub use fio::{CintFlags, IoKind, JobMarks, Submission};
pub use glob::matches;
pub use kernel::{Call, DefaultMarks, RwfFlags, Sqe};
pub use policy::Marks;
pub use presets::{preset, PRESETS};
pub use rule::{first, parse_file, Facts, Mark, Needs, Op, Ops, Rule, SYNTAX};

/// A request's marks in the one order (the README's): the application's
/// own flags if it passed any; else the mark of the first rule that
/// matches (`rule`, asked only then: its facts may cost a system call;
/// `Some(None)` is `=> default`); else the kernel's defaults (`default`).
pub fn resolve(
    flags: RwfFlags,
    rule: impl FnOnce() -> Option<Option<Mark>>,
    default: impl FnOnce() -> Marks,
) -> Marks {
    if let Some(m) = flags.to_marks() {
        return m;
    }
    match rule() {
        Some(Some(m)) => m.marks(),
        // No rule, or `=> default`.
        _ => default(),
    }
}

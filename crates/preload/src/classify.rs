//! What the library decides of one request before it is routed: whether
//! the kernel keeps the program's RWF bits, the request's marks (the
//! program's flags, the marking rules, the kernel's defaults), and
//! FastResponse's critical tag, with the boost a thread gets at its first
//! critical request. Every interface (the blocking calls, libaio,
//! io_uring) classifies through here.

use std::cell::Cell;
use std::ffi::c_int;

use marks::{Call, RwfFlags};
use policy::Marks;
use wire::marks::{Facts, Op};
use wire::{Config, Fr, Kind, Target};

use crate::facts;
use crate::state::{config, BOOSTS, LIVE};

/// RWF_HIPRI (Linux uapi fs.h).
const RWF_HIPRI: c_int = 0x01;
/// The authors' kernel's flags (TOS 4.1.2; their RocksDB patch passes them
/// to preadv2/pwritev2 through the raw system call).
const RWF_URGENT: c_int = 0x20;
const RWF_BARRIER: c_int = 0x40;

/// What the library decided of one request: its marks, FastResponse's
/// critical tag, and whether the program asked to poll it (RWF_HIPRI).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tag {
    pub(crate) marks: Marks,
    pub(crate) critical: bool,
    pub(crate) hipri: bool,
}

/// A request's marks: the application's own RWF_URGENT/RWF_BARRIER
/// flags first (it said what it meant), then `exec`'s marking rules (they
/// stand for the application patches the paper made, TOS 5.4;
/// `wire::marks`), then the kernel's defaults. With them, FastResponse's
/// critical tag (`--critical-thread`, `--critical-file`), counted; a
/// thread's first critical request gives it `--critical-boost`. The facts
/// a rule asks for are learnt on the stack (`facts`), nothing allocated.
pub(crate) fn tag_of(c: &Config, fd: c_int, flags: c_int, call: Call, kind: Kind) -> Tag {
    // The program's flags decide alone: no fact is learnt for the rules
    // then (a file's path is a readlink, ~5-7 us).
    let rwf_flags = rwf(flags);
    let ruled = rwf_flags.to_marks().is_none();
    let thread = (ruled && c.needs.thread || c.critical_on(Target::Thread))
        .then(facts::thread_name)
        .flatten();
    let file = (ruled && c.needs.file || c.critical_on(Target::File))
        .then(|| facts::file_path(fd))
        .flatten();
    let (thread, file) = (
        thread.as_ref().and_then(|t| t.as_str()),
        file.as_ref().and_then(|t| t.as_str()),
    );
    let rule_for = |title: Option<&str>| {
        let f = Facts {
            thread,
            file,
            title,
            ..Facts::op(match kind {
                Kind::Read => Op::Read,
                Kind::Write => Op::Write,
                Kind::Flush => Op::Flush,
            })
        };
        c.rule_for(&f).map(|r| r.mark)
    };
    // The marking engine's one order (`marks::resolve`).
    let marks = marks::resolve(
        rwf_flags,
        || {
            if c.needs.title {
                facts::with_title(rule_for)
            } else {
                rule_for(None)
            }
        },
        || c.default_marks.of(call),
    );
    let critical = c.is_critical(thread, file);
    if critical {
        LIVE.fr(Fr::Critical);
        boost_me();
    }
    let hipri = flags & RWF_HIPRI != 0;
    if hipri {
        LIVE.fr(Fr::Hipri);
    }
    Tag {
        marks,
        critical,
        hipri,
    }
}

/// The program's marks in its RWF flags: the authors' RWF_URGENT and
/// RWF_BARRIER under `--rwf-marks authors`; none under `kernel`, where the
/// bits are this kernel's own flags (`wire::RwfMarks`).
fn rwf(flags: c_int) -> RwfFlags {
    if !authors() {
        return RwfFlags::default();
    }
    RwfFlags {
        urgent: flags & RWF_URGENT != 0,
        barrier: flags & RWF_BARRIER != 0,
    }
}

fn authors() -> bool {
    config().is_some_and(|c| c.rwf_marks == wire::RwfMarks::Authors)
}

/// The RWF bits the kernel is given: all of the program's, less the
/// authors' marks under `--rwf-marks authors`.
pub(crate) fn keep() -> c_int {
    if authors() {
        !(RWF_URGENT | RWF_BARRIER)
    } else {
        !0
    }
}

thread_local! {
    /// Whether this thread was given `--critical-boost` already.
    static BOOSTED: Cell<bool> = const { Cell::new(false) };
}

/// A thread's first critical request: it gets `--critical-boost` (FR 3.5
/// through this kernel's own mechanisms, as `run` gives a critical job's
/// thread), once.
pub(crate) fn boost_me() {
    let Some(c) = config() else { return };
    if c.boost == wire::Boost::None || BOOSTED.try_with(|b| b.replace(true)).unwrap_or(true) {
        return;
    }
    let error = c.boost.apply().err().map(|e| e.to_string());
    // SAFETY: gettid cannot fail.
    let tid = unsafe { libc::gettid() } as u32;
    let name = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
        .map(|n| n.trim_end().to_string())
        .unwrap_or_default();
    if let Ok(mut b) = BOOSTS.lock() {
        b.push(wire::Boosted {
            tid,
            name,
            how: c.boost.as_str().to_string(),
            error,
        });
    }
}

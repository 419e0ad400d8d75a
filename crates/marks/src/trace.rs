//! The marks a block trace implies (issue 41 item 5; `--marks-from`), as
//! rules beside TOS 4.1.1 Table 1.
//!
//! Table 1 gives each system call its marks: a blocking read or write and
//! (f)(data)sync Urgent, the last iocb of an `io_submit` Barrier, an
//! asynchronous write none. A block trace does not record the system
//! call; Table 1's logic on what it does record ([`crate::kernel::block`]:
//! reads, sync writes and flushes Urgent, other writes none) makes every
//! read Urgent, so on a captured trace cint equals default. The trace
//! itself carries more, and each rule below reads one fact of it:
//!
//! | rule | fact read | marks |
//! |---|---|---|
//! | `table1` (default) | direction, sync, flush | [`crate::kernel::block`] |
//! | `plug` | the request's plugged batch (blkparse `P`/`U`) | a batch of two or more is an `io_submit`'s: Barrier on its last request, the rest none; an unbatched request as `table1` (a synchronous one Urgent) |
//! | `class` | Thesios' `service_class` | latency-sensitive Urgent; throughput-oriented and other none |
//! | `process` | the issuing process and its requests in flight | a process never more than one in flight is a blocking one: as `table1` (its reads Urgent); any other is a batcher: none, Barrier on the last request of each burst |
//! | `none` | nothing | none |
//!
//! - A batch (`plug`) is the requests one unplug released together, two
//!   or more (the `traces` crate's `Batch`: Linux's `blk_start_plug` ..
//!   `blk_finish_plug`, which `io_submit` brackets its iocbs with, fs/aio.c;
//!   a plug around a single request, as ext4's direct I/O makes for every
//!   `pread`, batches nothing). Its last is the last its process queued,
//!   as Table 1's Barrier goes on an `io_submit`'s last iocb.
//! - A burst (`process`) is a maximal run of one process's requests in
//!   issue order during which the process always has one in flight: a
//!   request issued before all of the process's earlier ones completed
//!   joins their burst; one issued at or after the last completion starts
//!   a new one. Its last is the one issued last (the call that completes
//!   the batch the process then waits on). A process all of whose bursts
//!   hold one request never had two in flight: a blocking reader.
//! - In every rule but `class`, an asynchronous write (no sync, no flush)
//!   stays unmarked, in a batch or a burst or not: no thread waits for it
//!   (Table 1).
//! - Where a request lacks the rule's fact (no class in the trace; no
//!   process or no completion time for `process`), Table 1's logic
//!   applies, and the count of such requests is reported ([`Counts`]).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use policy::Marks;

use crate::kernel;

/// Which rule marks a trace's requests (`--marks-from`; the module's
/// table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MarksFrom {
    /// TOS Table 1's logic on the request's direction and flags.
    #[default]
    Table1,
    /// Plugged batches.
    Plug,
    /// The trace's service class.
    Class,
    /// The issuing process's requests in flight.
    Process,
    /// No marks.
    None,
}

impl MarksFrom {
    pub const ALL: [MarksFrom; 5] = [
        MarksFrom::Table1,
        MarksFrom::Plug,
        MarksFrom::Class,
        MarksFrom::Process,
        MarksFrom::None,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MarksFrom::Table1 => "table1",
            MarksFrom::Plug => "plug",
            MarksFrom::Class => "class",
            MarksFrom::Process => "process",
            MarksFrom::None => "none",
        }
    }

    /// The rule in a few words, for a report.
    pub fn describe(self) -> &'static str {
        match self {
            MarksFrom::Table1 => "TOS Table 1's logic: reads, sync writes and flushes Urgent, other writes none",
            MarksFrom::Plug => "plugged batches: Barrier on a batch's last request, the rest none; unbatched as Table 1",
            MarksFrom::Class => "service class: latency-sensitive Urgent, the others none",
            MarksFrom::Process => "per process: one never more than one in flight as Table 1; a batcher's requests none, Barrier on each burst's last",
            MarksFrom::None => "no marks",
        }
    }
}

impl fmt::Display for MarksFrom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MarksFrom {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        MarksFrom::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "'{s}' is not one of {}",
                    MarksFrom::ALL.map(MarksFrom::name).join(", ")
                )
            })
    }
}

/// A request's service class (Thesios' `service_class`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    LatencySensitive,
    ThroughputOriented,
    Other,
}

/// What its process's requests make of a request (`process`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Its process never had more than one in flight.
    Blocking,
    /// Its process did; `last`: the last of its burst.
    Batcher { last: bool },
}

/// What a trace records of one request, as the rules read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    pub write: bool,
    pub sync: bool,
    pub flush: bool,
    /// In a plugged batch of two or more: whether it is the batch's last.
    pub batch_last: Option<bool>,
    pub class: Option<Class>,
    /// From [`Bursts`], when its process and completion are known.
    pub role: Option<Role>,
}

/// A request's marks and whether the rule's fact was missing (Table 1's
/// logic applied instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub marks: Marks,
    pub fallback: bool,
}

/// The marks `from` gives a request with these facts (the module's
/// table).
pub fn mark(from: MarksFrom, f: &Facts) -> Decision {
    let table1 = kernel::block(f.write, f.sync, f.flush);
    let waited = !(f.write && !f.sync && !f.flush);
    let implied = |marks| Decision {
        marks,
        fallback: false,
    };
    let fallback = Decision {
        marks: table1,
        fallback: true,
    };
    match from {
        MarksFrom::Table1 => implied(table1),
        MarksFrom::None => implied(Marks::NONE),
        MarksFrom::Plug => match f.batch_last {
            Some(true) if waited => implied(Marks::BARRIER),
            Some(_) => implied(Marks::NONE),
            // Unbatched: a synchronous request is Urgent, as Table 1.
            None => implied(table1),
        },
        MarksFrom::Class => match f.class {
            Some(Class::LatencySensitive) => implied(Marks::URGENT),
            Some(_) => implied(Marks::NONE),
            None => fallback,
        },
        MarksFrom::Process => match f.role {
            Some(Role::Blocking) => implied(table1),
            Some(Role::Batcher { last: true }) if waited => implied(Marks::BARRIER),
            Some(Role::Batcher { .. }) => implied(Marks::NONE),
            None => fallback,
        },
    }
}

/// How many requests each mark got, and how many lacked the rule's fact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub urgent: u64,
    pub barrier: u64,
    pub none: u64,
    /// Marked by Table 1's logic for want of the rule's fact.
    pub fallback: u64,
}

impl Counts {
    pub fn add(&mut self, d: Decision) {
        if d.marks.urgent {
            self.urgent += 1;
        } else if d.marks.barrier {
            self.barrier += 1;
        } else {
            self.none += 1;
        }
        self.fallback += u64::from(d.fallback);
    }

    pub fn total(&self) -> u64 {
        self.urgent + self.barrier + self.none
    }
}

/// A request as [`Bursts`] sees it: its issue, its completion, and its
/// offset, which with its process and issue names it again later.
type Seen = (u64, u64, u64);

/// The `process` rule's first pass over a trace: every request with a
/// process and a completion time, then [`Bursts::finish`] gives each
/// process's role. It holds 24 bytes per such request until then (a
/// process's bursts are known only once all its requests are).
#[derive(Debug, Default)]
pub struct Bursts {
    per: HashMap<u32, Vec<Seen>>,
}

impl Bursts {
    pub fn observe(&mut self, pid: Option<u32>, issue: u64, complete: Option<u64>, offset: u64) {
        if let (Some(pid), Some(done)) = (pid, complete) {
            self.per
                .entry(pid)
                .or_default()
                .push((issue, done.max(issue), offset));
        }
    }

    /// Each process's role and the last request of each burst.
    pub fn finish(self) -> Roles {
        let mut roles = Roles::default();
        for (pid, mut seen) in self.per {
            // Issue order; the sort is stable, so ties keep the trace's.
            seen.sort_by_key(|s| s.0);
            let mut lasts = Vec::new();
            let mut end = 0u64;
            let mut size = 0usize;
            let mut blocking = true;
            for (i, &(issue, done, _)) in seen.iter().enumerate() {
                if i > 0 && issue >= end {
                    // All earlier ones completed: the burst ended.
                    lasts.push(i - 1);
                    blocking &= size == 1;
                    size = 0;
                    end = 0;
                }
                size += 1;
                end = end.max(done);
            }
            if !seen.is_empty() {
                lasts.push(seen.len() - 1);
                blocking &= size == 1;
            }
            if blocking {
                roles.blocking.insert(pid);
            } else {
                roles
                    .lasts
                    .extend(lasts.into_iter().map(|i| (pid, seen[i].0, seen[i].2)));
                roles.batchers.insert(pid);
            }
        }
        roles
    }
}

/// The `process` rule's verdicts ([`Bursts::finish`]).
#[derive(Debug, Default)]
pub struct Roles {
    blocking: HashSet<u32>,
    batchers: HashSet<u32>,
    /// (pid, issue, offset) of each burst's last request.
    lasts: HashSet<(u32, u64, u64)>,
}

impl Roles {
    /// A request's role (`None`: no process, or none seen with a
    /// completion). A burst's last is named once: a second request of the
    /// same process, issue time and offset is not also a last.
    pub fn role(&mut self, pid: Option<u32>, issue: u64, offset: u64) -> Option<Role> {
        let pid = pid?;
        if self.blocking.contains(&pid) {
            return Some(Role::Blocking);
        }
        if !self.batchers.contains(&pid) {
            return None;
        }
        Some(Role::Batcher {
            last: self.lasts.remove(&(pid, issue, offset)),
        })
    }

    /// How many processes were blocking and how many batchers.
    pub fn processes(&self) -> (usize, usize) {
        (self.blocking.len(), self.batchers.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read() -> Facts {
        Facts::default()
    }

    fn async_write() -> Facts {
        Facts {
            write: true,
            ..Facts::default()
        }
    }

    #[test]
    fn plug_puts_a_barrier_on_a_batch_s_last_and_leaves_the_unbatched_to_table_1() {
        let m = |f: Facts| mark(MarksFrom::Plug, &f).marks;
        let in_batch = |last| Facts {
            batch_last: Some(last),
            ..read()
        };
        assert_eq!(m(in_batch(true)), Marks::BARRIER);
        assert_eq!(m(in_batch(false)), Marks::NONE);
        assert_eq!(m(read()), Marks::URGENT, "an unbatched read waits");
        let sync_write = Facts {
            sync: true,
            ..async_write()
        };
        assert_eq!(m(sync_write), Marks::URGENT);
        assert_eq!(m(async_write()), Marks::NONE);
        let async_last = Facts {
            batch_last: Some(true),
            ..async_write()
        };
        assert_eq!(m(async_last), Marks::NONE, "no thread waits on writeback");
        assert!(!mark(MarksFrom::Plug, &read()).fallback);
    }

    #[test]
    fn class_marks_latency_sensitive_urgent_and_falls_back_without_a_class() {
        let f = |class| Facts {
            class: Some(class),
            ..async_write()
        };
        assert_eq!(
            mark(MarksFrom::Class, &f(Class::LatencySensitive)).marks,
            Marks::URGENT
        );
        for c in [Class::ThroughputOriented, Class::Other] {
            assert_eq!(mark(MarksFrom::Class, &f(c)).marks, Marks::NONE);
        }
        let d = mark(MarksFrom::Class, &read());
        assert_eq!((d.marks, d.fallback), (Marks::URGENT, true));
    }

    #[test]
    fn none_marks_nothing_and_table1_is_the_kernel_s_block_rule() {
        for f in [read(), async_write()] {
            assert_eq!(mark(MarksFrom::None, &f).marks, Marks::NONE);
            assert_eq!(
                mark(MarksFrom::Table1, &f).marks,
                kernel::block(f.write, f.sync, f.flush)
            );
        }
        assert_eq!("plug".parse::<MarksFrom>(), Ok(MarksFrom::Plug));
        assert_eq!(
            "x".parse::<MarksFrom>().unwrap_err(),
            "'x' is not one of table1, plug, class, process, none"
        );
    }

    #[test]
    fn bursts_tell_a_blocking_reader_from_a_batcher_and_find_each_burst_s_last() {
        let mut b = Bursts::default();
        // Process 1: one at a time (the next issued as the last completes).
        for i in 0..4u64 {
            b.observe(Some(1), i * 10, Some(i * 10 + 10), i);
        }
        // Process 2: bursts {0,1,2} (issued 0, 1, 2; done 5, 8, 4), then
        // {20} alone, then {30,31}.
        for (issue, done, off) in [
            (1, 8, 11),
            (0, 5, 10),
            (2, 4, 12),
            (20, 25, 13),
            (30, 40, 14),
            (31, 33, 15),
        ] {
            b.observe(Some(2), issue, Some(done), off);
        }
        // No process, or no completion: not seen.
        b.observe(None, 0, Some(1), 99);
        b.observe(Some(3), 0, None, 98);
        let mut r = b.finish();
        assert_eq!(r.processes(), (1, 1));
        assert_eq!(r.role(Some(1), 10, 1), Some(Role::Blocking));
        let last = |r: &mut Roles, issue, off| match r.role(Some(2), issue, off) {
            Some(Role::Batcher { last }) => last,
            other => panic!("{other:?}"),
        };
        let got: Vec<bool> = [(0, 10), (1, 11), (2, 12), (20, 13), (30, 14), (31, 15)]
            .into_iter()
            .map(|(i, o)| last(&mut r, i, o))
            .collect();
        assert_eq!(got, [false, false, true, true, false, true]);
        // A last is named once.
        assert!(!last(&mut r, 2, 12));
        assert_eq!(r.role(Some(3), 0, 98), None);
        assert_eq!(r.role(None, 0, 99), None);
        let batch_last = Facts {
            role: Some(Role::Batcher { last: true }),
            ..read()
        };
        assert_eq!(mark(MarksFrom::Process, &batch_last).marks, Marks::BARRIER);
        let d = mark(MarksFrom::Process, &read());
        assert_eq!((d.marks, d.fallback), (Marks::URGENT, true));
    }

    #[test]
    fn counts_add_up_by_mark() {
        let mut c = Counts::default();
        for f in [
            Facts {
                batch_last: Some(true),
                ..read()
            },
            Facts {
                batch_last: Some(false),
                ..read()
            },
            read(),
        ] {
            c.add(mark(MarksFrom::Plug, &f));
        }
        c.add(mark(MarksFrom::Class, &read()));
        assert_eq!(
            c,
            Counts {
                urgent: 2,
                barrier: 1,
                none: 1,
                fallback: 1
            }
        );
        assert_eq!(c.total(), 4);
    }
}

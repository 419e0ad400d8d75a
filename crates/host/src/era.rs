//! Kernel eras (issue 37 item 1): the Linux releases each host mechanism
//! exists in, each bound citing the commit that added or removed it, and
//! the out-of-tree patches some exist only as. The simulator models
//! mechanisms from kernels twenty releases apart (blk-mq hybrid polling,
//! removed in 6.4; EEVDF, added in 6.6); a run that asks for a kernel
//! ([`Kernel`], `--kernel 6.12`, a host profile's `kernel`) is refused a
//! combination that never coexisted ([`Era::admits`]).
//!
//! How each commit was checked (no local clone of Linux could be had: the
//! repository is over the 500 MB fetch limit, so each hash and title was
//! found in the public mailing-list archives and commit lists the search
//! tools hold; the release is the one named by the pull request or branch
//! that carried it):
//! - `05229beeddf7`: block polling (`blk_poll`, the `io_poll` queue
//!   attribute), Jens Axboe, 2015-11-05 (a blame of
//!   `include/linux/blk-mq.h`); merged for 4.4, whose merge window opened
//!   2015-11-01. Its title ("block: add block polling support") was not
//!   found beside the hash: NOT VERIFIED.
//! - `06426adf072b` "blk-mq: implement hybrid poll mode for sync O_DIRECT"
//!   (full hash on git.kernel.dk mirrors), in the "[PATCHSET v2] block: IO
//!   polling improvements" of 2016-11-03, "against my 4.10 block branch,
//!   for-4.10/block", which adds `io_poll_delay`.
//! - `54bdd67d0f88` "blk-mq: remove hybrid polling": applied 2023-03-20
//!   (Jens Axboe's b4 reply), merged through `for-6.4/block`. Keith Busch's
//!   commit message and thread: hybrid polling "was effectively killed off
//!   with 9650b453a3d4b1" and "still potentially reachable through
//!   io_uring until d729cf9acb93119 ("io_uring: don't sleep when polling
//!   for I/O")", part of the bio-based polling series of 5.16
//!   (`3e08773c3841` "block: switch polling to be bio based").
//! - `9650b453a3d4` "block: ignore RWF_HIPRI hint for sync dio": in Jens
//!   Axboe's "[GIT PULL] Block changes for 5.19-rc" (2022-05-22,
//!   `for-5.19/block-2022-05-22`), so mainline 5.19. The issue says 5.18:
//!   the 2022-05-10 thread asked to queue it "for 5.18 and stable" too;
//!   stable and RHEL 9 (kernel-5.14.0-114.el9) carry backports under other
//!   hashes. Mainline 5.18 does not have it by that pull.
//! - `dd41f596cda0` "sched: cfs core code" (Ingo Molnar, 2007-07-09):
//!   CFS, 2.6.23. `147f3efaa241` "sched/fair: Implement an EEVDF-like
//!   scheduling policy": v6.6 (the Fixes: tags of later fixes).
//! - `2b188cc1bb85` "Add io_uring IO interface", `def596e9557c`
//!   "io_uring: support for IO polling", `6c271ce2f1d5` "io_uring: add
//!   submission polling": Linux 5.1 (Fixes: tags; "v5.1" in valgrind's
//!   syscall table).
//! - `dd671c79e40b` "io_uring: make CQ ring wakeups be more efficient":
//!   the waker that checks `min_complete` before waking, in
//!   `for-5.4/io_uring-2019-09-27`; the hash is from a Fixes: tag, not
//!   checked against the merged tag: NOT VERIFIED as mainline's.
//! - `8ef12efe26c8` "io_uring: run regular file completions from
//!   task_work": in "[GIT PULL] io_uring updates for 5.15-rc1" ("Funnel IRQ
//!   completions through task_work"); the hash from two commit lists of
//!   that merge.
//! - `c0e0d6ba25f1` "io_uring: add IORING_SETUP_DEFER_TASKRUN": 6.1
//!   (liburing's man page: "Available since 6.1").
//! - `1100c4a2656d` "io_uring: add support for batch wait timeout" and
//!   `7ed9e09e2d13` "io_uring: wire up min batch wake timeout": in
//!   `for-6.12/io_uring`.
//! - `01ee194d1aba` "io_uring: add support for hybrid IOPOLL": 6.13 (its
//!   6.12.y backports resolve conflicts "due to missing commit
//!   01ee194d1aba"; the "[GIT PULL] io_uring changes for 6.13-rc1" thread
//!   of 2024-11-18 names it): [`HYBRID_IOPOLL`].
//! - The DPAS artifact (`DongDongJu/DPAS_FAST26`): its `kernel/Makefile`
//!   reads `5.18.0-rc6-dpas-fast26`; PAS, DPAS and its EHP baseline are
//!   patches to that release ([`DPAS_ARTIFACT`]).
//! - `5dc51ec86df6` "net: Add napi_struct parameter irq_suspend_timeout",
//!   `3fcbecbdeb04` "net: Add control functions for irq suspension",
//!   `ab5b28b007a7` "eventpoll: Trigger napi_busy_loop, if
//!   prefer_busy_poll is set", `8a6de2627fd3` "eventpoll: Control irq
//!   suspension for prefer_busy_poll": hashes and titles together in a
//!   commit list of the series' merge; the release from netdev 0x19's
//!   session "IRQ Suspension" ("merged to kernel 6.13"). Storage queues
//!   have no such mechanism in Linux: [`IRQ_SUSPEND_STORAGE`] is a port.
//!
//! Pure data and two checks; the command line and the host profiles call
//! them.

use std::fmt;
use std::str::FromStr;

/// A Linux release as `X.Y`. A third number (`5.0.8`, a stable release)
/// and a suffix (`6.18.44-fc-v1300`, `uname -r`) are read and dropped:
/// mechanisms come and go with releases, not stable updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Kernel {
    pub major: u16,
    pub minor: u16,
}

impl Kernel {
    pub const fn new(major: u16, minor: u16) -> Kernel {
        Kernel { major, minor }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// `6.12`, `5.0.8`, `6.18.44-fc-v1300`: X.Y, then anything after a `.`,
/// `-` or `+`.
impl FromStr for Kernel {
    type Err = String;

    fn from_str(s: &str) -> Result<Kernel, String> {
        let bad = || format!("kernel '{s}': want a Linux release X.Y (e.g. 6.12, 5.0.8)");
        let t = s.trim();
        let (major, rest) = t.split_once('.').ok_or_else(bad)?;
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (minor, tail) = rest.split_at(end);
        if !tail.is_empty() && !tail.starts_with(['.', '-', '+']) {
            return Err(bad());
        }
        let number = |n: &str| {
            (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .then(|| n.parse::<u16>().ok())
                .flatten()
        };
        match (number(major), number(minor)) {
            (Some(major), Some(minor)) if major >= 1 => Ok(Kernel { major, minor }),
            _ => Err(bad()),
        }
    }
}

/// One end of a range: the first release with (since) or without (until)
/// the mechanism, and the commit that made it so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    pub kernel: Kernel,
    /// As the release is named when X.Y says too little (`2.6.23`).
    pub release: &'static str,
    /// Short hash, 12 hex digits.
    pub commit: &'static str,
    pub title: &'static str,
    /// Whether hash, title and release were all found together in a public
    /// source (module docs); `false` names what was not.
    pub verified: bool,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.commit {
            "" => write!(f, "\"{}\" (its commit not found here)", self.title)?,
            c => write!(f, "{c} \"{}\"", self.title)?,
        }
        if !self.verified {
            write!(f, ", not verified")?;
        }
        Ok(())
    }
}

/// Where a mechanism exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// In mainline Linux from `since` (`None`: before every release this
    /// model names, 2.6.23) until `until` (the first release without it;
    /// `None`: still there in 6.18).
    Linux {
        since: Option<Bound>,
        until: Option<Bound>,
    },
    /// Only as an out-of-tree patch to one release, changing `base`, the
    /// mainline mechanism it modifies (FastResponse's boost changes CFS's
    /// wake-up preemption).
    Patch { by: Provenance, base: &'static Era },
    /// The simulator's own simplification, no kernel's: any kernel.
    Model,
}

/// An out-of-tree patch: whose, on which release, where it is described.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// Who wrote it (`FastResponse (Liu et al., ICS'22)`).
    pub patch: &'static str,
    /// The release it patches.
    pub on: Kernel,
    /// That release as its authors name it (`5.3.7`).
    pub release: &'static str,
    /// Where the paper says so.
    pub source: &'static str,
}

/// FastResponse's kernel: "We implement FastResponse based on Linux
/// kernel 5.3.7, and the source code is available at Github \[19\]" (FR 1;
/// FR 4.1: "integrated into a vanilla Linux kernel 5.3.7").
pub const FASTRESPONSE: Provenance = Provenance {
    patch: "FastResponse's patch (Liu et al., ICS'22)",
    on: Kernel::new(5, 3),
    release: "5.3.7",
    source: "FR 1, FR 4.1",
};

/// Calibrated interrupts' kernel: the Urgent and Barrier annotations and
/// the emulator are "cinterrupts' modified version of Linux 5.0.8" (TOS
/// 5.1; TOS 4: "We implement this emulation on Linux 5.0.8"). The
/// device-side policies (`policy`) stay asked of any kernel: they are this
/// project's subject, hypothetical hardware whichever kernel annotates.
pub const CINTERRUPTS: Provenance = Provenance {
    patch: "cinterrupts' patch (Tai et al., TOS 2022)",
    on: Kernel::new(5, 0),
    release: "5.0.8",
    source: "TOS 4, TOS 5.1",
};

/// The DPAS artifact's kernel (`DongDongJu/DPAS_FAST26`, `kernel/Makefile`:
/// VERSION 5, PATCHLEVEL 18, EXTRAVERSION `-rc6-dpas-fast26`): PAS, DPAS
/// and the EHP it compares with (EHP's own kernel was not read here).
pub const DPAS_ARTIFACT: Provenance = Provenance {
    patch: "the DPAS artifact (DongDongJu/DPAS_FAST26, FAST'26)",
    on: Kernel::new(5, 18),
    release: "5.18-rc6",
    source: "the artifact's kernel/Makefile",
};

/// UnICom's kernel: the authors' artifact patches Linux 6.5.1
/// (`RiweiPan/UnICom`, `kernel/linux-6.5.1/`: the NVMe driver's exports
/// and CFS's `pick_next_entity`, plus the `nap` module); the paper
/// (Pan et al., FAST'26) could be read only as its abstract.
pub const UNICOM: Provenance = Provenance {
    patch: "UnICom's patch (Pan et al., FAST'26)",
    on: Kernel::new(6, 5),
    release: "6.5.1",
    source: "artifact RiweiPan/UnICom kernel/linux-6.5.1",
};

/// What a mechanism is, and where it exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Era {
    /// As an error names it (`blk-mq hybrid polling`).
    pub what: &'static str,
    pub span: Span,
    /// What else a reader needs (how the mechanism faded before it went).
    pub note: &'static str,
}

/// The rule for patches (issue 37 item 1: "decide and document"): on the
/// release it patches, a patch is there; on another release it is a port,
/// allowed with a note ([`Era::port`]) while the mainline mechanism it
/// changes exists there, refused where that does not. FastResponse's boost
/// edits CFS's `check_preempt_wakeup`: a port to 5.0.8 (TOS's host) is the
/// same few lines; on 6.6 and later there is no CFS wake-up check to edit
/// (EEVDF replaced it), so `--kernel 6.12 --wakeup boost` is refused. Nobody
/// has published a port of FastResponse to any release; the note says the
/// run models one.
impl Era {
    /// Whether the mechanism exists on `k` (a patch on another release: as
    /// a port); the error says where it does.
    pub fn admits(&self, k: Kernel) -> Result<(), String> {
        match self.span {
            Span::Model => Ok(()),
            Span::Patch { by, base } => match base.admits(k) {
                Ok(()) => Ok(()),
                Err(_) if by.on == k => Ok(()),
                Err(why) => Err(format!(
                    "{} is {} to Linux {} ({}), a change to what {why}",
                    self.what, by.patch, by.release, by.source
                )),
            },
            Span::Linux { since, until }
                if since.map_or(true, |b| b.kernel <= k)
                    && until.map_or(true, |b| k < b.kernel) =>
            {
                Ok(())
            }
            Span::Linux { .. } => Err(self.to_string()),
        }
    }

    /// Whether the mechanism was gone by `k`: removed from mainline at or
    /// before it (a patch: the mainline code it changes was). A kernel that
    /// only predates a mechanism is not "gone by"; a host profile's pinned
    /// kernel refuses the first and notes the second (`cli::host_args`).
    pub fn gone_by(&self, k: Kernel) -> bool {
        match self.span {
            Span::Model => false,
            Span::Patch { by, base } => by.on != k && base.gone_by(k),
            Span::Linux { until, .. } => until.is_some_and(|b| b.kernel <= k),
        }
    }

    /// A patch admitted on a release other than its own: the note a run
    /// prints (the run models a port nobody published).
    pub fn port(&self, k: Kernel) -> Option<String> {
        match self.span {
            Span::Patch { by, .. } if by.on != k && self.admits(k).is_ok() => Some(format!(
                "{} is {} to Linux {} ({}); on {k} this models a port",
                self.what, by.patch, by.release, by.source
            )),
            _ => None,
        }
    }
}

/// `blk-mq hybrid polling exists in Linux 4.10 to 6.3 (added by ...;
/// removed in 6.4 by ...)`.
impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.what)?;
        match self.span {
            Span::Model => write!(f, "is the simulator's own, on any kernel")?,
            Span::Patch { by, base } => write!(
                f,
                "is {} to Linux {} ({}), a port elsewhere while {} exists ({})",
                by.patch,
                by.release,
                by.source,
                base.what,
                brief(base)
            )?,
            Span::Linux { since, until } => {
                let from = since.map_or("2.6.23".to_string(), |b| b.release.to_string());
                match (since, until) {
                    (None, None) => write!(f, "exists in every Linux release")?,
                    (_, None) => write!(f, "exists in Linux {from} and later")?,
                    (_, Some(u)) => match previous(u.kernel) {
                        Some(last) => write!(f, "exists in Linux {from} to {last}")?,
                        None => write!(f, "exists in Linux {from} to before {}", u.release)?,
                    },
                }
                let mut cites = Vec::new();
                if let Some(b) = since {
                    cites.push(format!("added in {} by {b}", b.release));
                }
                if let Some(u) = until {
                    cites.push(format!("removed in {} by {u}", u.release));
                }
                if !cites.is_empty() {
                    write!(f, " ({})", cites.join("; "))?;
                }
            }
        }
        if !self.note.is_empty() {
            write!(f, "; {}", self.note)?;
        }
        Ok(())
    }
}

/// The release before `k` when it is `X.Y` with Y > 0 (an `X.0`'s
/// predecessor is named by Linus, not by arithmetic).
fn previous(k: Kernel) -> Option<Kernel> {
    (k.minor > 0).then(|| Kernel::new(k.major, k.minor - 1))
}

/// Its range in a few words, for listings: `Linux 4.10-6.3`,
/// `FastResponse's patch (Liu et al., ICS'22) to 5.3.7`.
pub fn brief(era: &Era) -> String {
    match era.span {
        Span::Model => "any kernel (the simulator's own)".into(),
        Span::Patch { by, base } => format!(
            "{} to Linux {} (a port elsewhere, while {}: {})",
            by.patch,
            by.release,
            base.what,
            brief(base)
        ),
        Span::Linux { since, until } => {
            let from = since.map_or("2.6.23".to_string(), |b| b.release.to_string());
            let cite = |b: Option<Bound>, verb: &str| {
                b.filter(|b| !b.commit.is_empty())
                    .map(|b| format!(", {verb} {}", b.commit))
                    .unwrap_or_default()
            };
            match until {
                None if since.is_none() => "every Linux release".to_string(),
                None => format!("Linux {from}+{}", cite(since, "since")),
                Some(u) => format!(
                    "Linux {from} to {}{}{}",
                    previous(u.kernel).map_or(format!("before {}", u.release), |k| k.to_string()),
                    cite(since, "since"),
                    cite(Some(u), "removed by")
                ),
            }
        }
    }
}

const fn bound(
    major: u16,
    minor: u16,
    release: &'static str,
    commit: &'static str,
    title: &'static str,
    verified: bool,
) -> Option<Bound> {
    Some(Bound {
        kernel: Kernel::new(major, minor),
        release,
        commit,
        title,
        verified,
    })
}

const fn linux(
    what: &'static str,
    since: Option<Bound>,
    until: Option<Bound>,
    note: &'static str,
) -> Era {
    Era {
        what,
        span: Span::Linux { since, until },
        note,
    }
}

const fn patch(what: &'static str, by: Provenance, base: &'static Era) -> Era {
    Era {
        what,
        span: Span::Patch { by, base },
        note: "",
    }
}

// The bounds, each once (module docs: how each was found).

const BLOCK_POLL: Option<Bound> = bound(
    4,
    4,
    "4.4",
    "05229beeddf7",
    "block: add block polling support",
    false,
);
const HYBRID_ADDED: Option<Bound> = bound(
    4,
    10,
    "4.10",
    "06426adf072b",
    "blk-mq: implement hybrid poll mode for sync O_DIRECT",
    true,
);
const HYBRID_REMOVED: Option<Bound> = bound(
    6,
    4,
    "6.4",
    "54bdd67d0f88",
    "blk-mq: remove hybrid polling",
    true,
);
const SYNC_HIPRI_IGNORED: Option<Bound> = bound(
    5,
    19,
    "5.19",
    "9650b453a3d4",
    "block: ignore RWF_HIPRI hint for sync dio",
    true,
);
const CFS_ADDED: Option<Bound> =
    bound(2, 6, "2.6.23", "dd41f596cda0", "sched: cfs core code", true);
const EEVDF_ADDED: Option<Bound> = bound(
    6,
    6,
    "6.6",
    "147f3efaa241",
    "sched/fair: Implement an EEVDF-like scheduling policy",
    true,
);
const IO_URING_ADDED: Option<Bound> = bound(
    5,
    1,
    "5.1",
    "2b188cc1bb85",
    "Add io_uring IO interface",
    true,
);
const IOPOLL_ADDED: Option<Bound> = bound(
    5,
    1,
    "5.1",
    "def596e9557c",
    "io_uring: support for IO polling",
    true,
);
const SQPOLL_ADDED: Option<Bound> = bound(
    5,
    1,
    "5.1",
    "6c271ce2f1d5",
    "io_uring: add submission polling",
    true,
);
const CQ_WAKE_CHECKED: Option<Bound> = bound(
    5,
    4,
    "5.4",
    "dd671c79e40b",
    "io_uring: make CQ ring wakeups be more efficient",
    false,
);
const RW_TASK_WORK: Option<Bound> = bound(
    5,
    15,
    "5.15",
    "8ef12efe26c8",
    "io_uring: run regular file completions from task_work",
    true,
);
const DEFER_TASKRUN_ADDED: Option<Bound> = bound(
    6,
    1,
    "6.1",
    "c0e0d6ba25f1",
    "io_uring: add IORING_SETUP_DEFER_TASKRUN",
    true,
);
const HYBRID_IOPOLL_ADDED: Option<Bound> = bound(
    6,
    13,
    "6.13",
    "01ee194d1aba",
    "io_uring: add support for hybrid IOPOLL",
    true,
);
const MIN_WAIT_ADDED: Option<Bound> = bound(
    6,
    12,
    "6.12",
    "7ed9e09e2d13",
    "io_uring: wire up min batch wake timeout",
    true,
);

// Interrupts: how Linux completes a request unless told to poll, in every
// release.
pub const INTERRUPT: Era = linux("completion by interrupt", None, None, "");
/// Classic polling of a blk-mq queue (`completion = poll`; a `hipri` job).
pub const CLASSIC_POLL: Era = linux("blk-mq classic polling", BLOCK_POLL, None, "");
/// `completion = hybrid`, and `io_poll_delay`, which only hybrid reads.
pub const HYBRID: Era = linux(
    "blk-mq hybrid polling",
    HYBRID_ADDED,
    HYBRID_REMOVED,
    "unreachable from io_uring since 5.16 (d729cf9acb93) and from preadv2 since 5.19 (9650b453a3d4)",
);
/// `io_poll_delay`: the sysfs attribute hybrid polling reads, added and
/// removed with it (since 6.4 it reads -1 and ignores writes).
pub const IO_POLL_DELAY: Era = linux(
    "io_poll_delay (hybrid polling's sleep)",
    HYBRID_ADDED,
    HYBRID_REMOVED,
    "",
);
/// A synchronous read or write with RWF_HIPRI (fio's pvsync2 `hipri`)
/// polls.
pub const SYNC_HIPRI: Era = linux(
    "polling of a synchronous RWF_HIPRI read or write (pvsync2 hipri)",
    // preadv2 and RWF_HIPRI came in 4.6; the commit was not found here.
    bound(4, 6, "4.6", "", "preadv2/pwritev2 RWF_HIPRI", false),
    SYNC_HIPRI_IGNORED,
    "stable kernels and RHEL 9 carry backports",
);
pub const CFS_WAKEUP: Era = linux(
    "CFS's wake-up preemption (wakeup granularity, next buddy)",
    CFS_ADDED,
    EEVDF_ADDED,
    "",
);
pub const EEVDF: Era = linux("EEVDF", EEVDF_ADDED, None, "");
/// The simulator's plain wake-up rule.
pub const PLAIN_WAKEUP: Era = Era {
    what: "the plain wake-up rule",
    span: Span::Model,
    note: "",
};
/// ext4 `data=ordered` and JBD2: older than any release named here.
pub const ORDERED: Era = linux("ext4 data=ordered", None, None, "");
/// No block-layer scheduler of ours in the way (blk-mq's `none`).
pub const NO_SCHEDULER: Era = linux("no block-layer scheduler", None, None, "");
/// blk-mq's request path, which LD sits in (FR 3.3): in every release
/// this model names.
pub const BLK_MQ: Era = linux("blk-mq's request path", None, None, "");
// FastResponse's mechanisms, each with what it changes (FR 3.3-3.5, 4.1).
pub const LD: Era = patch("FastResponse's LD block scheduler", FASTRESPONSE, &BLK_MQ);
pub const SELECT_ISR: Era = patch(
    "SelectISR (critical I/O polls)",
    FASTRESPONSE,
    &CLASSIC_POLL,
);
pub const BOOST: Era = patch(
    "FastResponse's critical wake-up boost",
    FASTRESPONSE,
    &CFS_WAKEUP,
);
pub const FJOURNAL: Era = patch("FastResponse's fjournaling", FASTRESPONSE, &ORDERED);
pub const JBD2_CRITICAL: Era = patch(
    "JBD2 as a critical thread (boosted wake-ups)",
    FASTRESPONSE,
    &CFS_WAKEUP,
);
pub const FSYNC_IO_POLLS: Era = patch("SelectISR's polled fsync I/O", FASTRESPONSE, &CLASSIC_POLL);

pub const URING_MIN_COMPLETE: Era = linux(
    "io_uring's CQEs posted by the interrupt, the waker checking min_complete",
    CQ_WAKE_CHECKED,
    RW_TASK_WORK,
    "",
);
pub const URING_TASK_WORK: Era = linux(
    "io_uring's read/write completions through task_work",
    RW_TASK_WORK,
    None,
    "",
);
pub const URING_DEFER_TASKRUN: Era =
    linux("IORING_SETUP_DEFER_TASKRUN", DEFER_TASKRUN_ADDED, None, "");
pub const URING_MIN_WAIT: Era = linux(
    "io_uring's min-wait (io_uring_submit_and_wait_min_timeout)",
    MIN_WAIT_ADDED,
    None,
    "",
);
pub const URING_IOPOLL: Era = linux(
    "IORING_SETUP_IOPOLL",
    IOPOLL_ADDED,
    None,
    "IORING_SETUP_HYBRID_IOPOLL (6.13, 01ee194d1aba) is `completion = hybrid-iopoll`",
);
pub const URING_SQPOLL: Era = linux("IORING_SETUP_SQPOLL", SQPOLL_ADDED, None, "");
/// UnICom's central poller (`completion = central`): its TagSched edits
/// CFS's `pick_next_entity` (`kernel/sched/fair.c` of the artifact's
/// 6.5.1), which EEVDF replaced in 6.6: a port while CFS's wake-up path
/// exists.
pub const CENTRAL: Era = patch(
    "UnICom's central poller (TagPoll, TagSched)",
    UNICOM,
    &CFS_WAKEUP,
);
/// io_uring itself, for anything an io_uring job does.
pub const IO_URING: Era = linux("io_uring", IO_URING_ADDED, None, "");
// The sleep-then-poll strategies (issue 40, `crate::sleep`). PAS, DPAS and
// EHP change blk-mq's hybrid polling (`blk_mq_poll_hybrid`) and act on
// synchronous RWF_HIPRI I/O (block/fops.c, fs/iomap/direct-io.c), which
// mainline ignores from 5.19 (9650b453a3d4).
pub const PAS: Era = Era {
    what: "PAS (per-I/O adaptive sleep)",
    span: Span::Patch {
        by: DPAS_ARTIFACT,
        base: &HYBRID,
    },
    note: "acts on synchronous RWF_HIPRI I/O, which mainline ignores from 5.19 (9650b453a3d4)",
};
pub const DPAS: Era = Era {
    what: "DPAS (PAS, classic polling, overload and interrupts by queue depth)",
    span: Span::Patch {
        by: DPAS_ARTIFACT,
        base: &HYBRID,
    },
    note: "acts on synchronous RWF_HIPRI I/O, which mainline ignores from 5.19 (9650b453a3d4)",
};
pub const EHP: Era = Era {
    what: "EHP (efficient hybrid polling, as the DPAS artifact's baseline)",
    span: Span::Patch {
        by: DPAS_ARTIFACT,
        base: &HYBRID,
    },
    note: "acts on synchronous RWF_HIPRI I/O, which mainline ignores from 5.19 (9650b453a3d4)",
};
/// `completion = hybrid-iopoll`: an IOPOLL ring's flag.
pub const HYBRID_IOPOLL: Era = linux(
    "IORING_SETUP_HYBRID_IOPOLL",
    HYBRID_IOPOLL_ADDED,
    None,
    "io_uring IOPOLL rings only",
);

// IRQ suspension (issue 40): the napi series of Linux 6.13, in net-next's
// "Merge branch 'suspend-irqs-during-application-busy-periods'"; its four
// commits' hashes and titles from a commit list of that merge (the mailing
// list's v7 and v8 patches carry the same titles; v8 2024-11-08 is the one
// applied for 6.13). The first of them adds the parameter.
const NAPI_IRQ_SUSPEND_ADDED: Option<Bound> = bound(
    6,
    13,
    "6.13",
    "5dc51ec86df6",
    "net: Add napi_struct parameter irq_suspend_timeout",
    true,
);
/// Linux's own: a NAPI's IRQs suspended while its epoll consumer finds
/// events (net/core/dev.c `napi_suspend_irqs`, `napi_resume_irqs`;
/// fs/eventpoll.c). A network mechanism: the base of the storage port.
pub const NAPI_IRQ_SUSPEND: Era = linux(
    "napi IRQ suspension (irq_suspend_timeout)",
    NAPI_IRQ_SUSPEND_ADDED,
    None,
    "3fcbecbdeb04, ab5b28b007a7 and 8a6de2627fd3 complete it (dev.c's control functions, epoll's busy loop and its suspend/resume calls)",
);
/// No storage patch exists: the port is this workbench's, a model of what
/// 6.13's mechanism would do on an NVMe queue (`crate::irq_suspend`).
pub const IRQ_SUSPEND_PORT: Provenance = Provenance {
    patch: "this workbench's port (not in Linux; no storage patch published)",
    on: Kernel::new(6, 13),
    release: "6.13",
    source:
        "Karsten and Damato's napi series, Documentation/networking/napi.rst \"IRQ suspension\"",
};
/// `--irq-suspend TIME`: IRQ suspension of an NVMe completion queue.
pub const IRQ_SUSPEND_STORAGE: Era = patch(
    "IRQ suspension of a storage completion queue",
    IRQ_SUSPEND_PORT,
    &NAPI_IRQ_SUSPEND,
);
/// `--irq-suspend off`: interrupts as the device's policy raises them.
pub const NO_IRQ_SUSPEND: Era = linux("no IRQ suspension", None, None, "");

/// Every era this module declares, for the tests that hold each to its
/// form.
pub const ALL: &[Era] = &[
    INTERRUPT,
    CLASSIC_POLL,
    HYBRID,
    IO_POLL_DELAY,
    SYNC_HIPRI,
    CFS_WAKEUP,
    EEVDF,
    PLAIN_WAKEUP,
    ORDERED,
    NO_SCHEDULER,
    BLK_MQ,
    LD,
    SELECT_ISR,
    BOOST,
    FJOURNAL,
    JBD2_CRITICAL,
    FSYNC_IO_POLLS,
    URING_MIN_COMPLETE,
    URING_TASK_WORK,
    URING_DEFER_TASKRUN,
    URING_MIN_WAIT,
    URING_IOPOLL,
    URING_SQPOLL,
    IO_URING,
    PAS,
    DPAS,
    EHP,
    HYBRID_IOPOLL,
    CENTRAL,
    NAPI_IRQ_SUSPEND,
    IRQ_SUSPEND_STORAGE,
    NO_IRQ_SUSPEND,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Kernel {
        s.parse().unwrap()
    }

    #[test]
    fn a_release_reads_as_x_dot_y_whatever_follows() {
        assert_eq!(k("6.12"), Kernel::new(6, 12));
        assert_eq!(k("5.0.8"), Kernel::new(5, 0));
        assert_eq!(k("6.18.44-fc-v1300"), Kernel::new(6, 18));
        assert_eq!(k(" 4.10 "), Kernel::new(4, 10));
        // 4.10 is after 4.9, not before 4.2: numbers, not strings.
        assert!(k("4.10") > k("4.9"));
        assert!(k("6.4") > k("5.19"));
        assert_eq!(k("6.12").to_string(), "6.12");
        for bad in [
            "6",
            "6.",
            ".12",
            "6.x",
            "six.twelve",
            "0.1",
            "6.12a",
            "",
            "6..1",
        ] {
            let e = bad.parse::<Kernel>().unwrap_err();
            assert!(e.starts_with(&format!("kernel '{bad}'")), "{e}");
            assert_eq!(e.lines().count(), 1);
        }
    }

    #[test]
    fn hybrid_polling_exists_from_4_10_to_6_3() {
        for ok in ["4.10", "5.0", "5.3", "6.3"] {
            assert!(HYBRID.admits(k(ok)).is_ok(), "{ok}");
        }
        for no in ["4.9", "6.4", "6.12", "6.18"] {
            let e = HYBRID.admits(k(no)).unwrap_err();
            assert!(e.contains("exists in Linux 4.10 to 6.3"), "{e}");
            assert!(
                e.contains("54bdd67d0f88 \"blk-mq: remove hybrid polling\""),
                "{e}"
            );
        }
    }

    #[test]
    fn cfs_gives_way_to_eevdf_at_6_6() {
        assert!(CFS_WAKEUP.admits(k("6.5")).is_ok());
        assert!(CFS_WAKEUP.admits(k("6.6")).is_err());
        assert!(EEVDF.admits(k("6.5")).is_err());
        assert!(EEVDF.admits(k("6.6")).is_ok());
        assert!(EEVDF.admits(k("6.18")).is_ok());
        assert!(CFS_WAKEUP.admits(k("3.10")).is_ok());
        assert!(CFS_WAKEUP
            .admits(k("6.12"))
            .unwrap_err()
            .contains("147f3efaa241"));
    }

    #[test]
    fn sync_hipri_polling_ends_at_5_19_and_io_uring_waits_follow_their_releases() {
        assert!(SYNC_HIPRI.admits(k("5.18")).is_ok());
        assert!(SYNC_HIPRI.admits(k("5.19")).is_err());
        assert!(URING_MIN_COMPLETE.admits(k("5.14")).is_ok());
        assert!(URING_MIN_COMPLETE.admits(k("5.15")).is_err());
        assert!(URING_TASK_WORK.admits(k("5.15")).is_ok());
        assert!(URING_DEFER_TASKRUN.admits(k("6.0")).is_err());
        assert!(URING_DEFER_TASKRUN.admits(k("6.1")).is_ok());
        assert!(URING_MIN_WAIT.admits(k("6.11")).is_err());
        assert!(URING_MIN_WAIT.admits(k("6.12")).is_ok());
        assert!(URING_IOPOLL.admits(k("5.0")).is_err());
    }

    #[test]
    fn unicoms_poller_is_its_6_5_patch_a_port_before_and_refused_under_eevdf() {
        // TagSched edits CFS's pick_next_entity (the artifact's 6.5.1).
        assert!(CENTRAL.admits(k("6.5.1")).is_ok());
        assert_eq!(CENTRAL.port(k("6.5.1")), None);
        let note = CENTRAL.port(k("5.0.8")).unwrap();
        assert!(note.contains("UnICom") && note.contains("6.5.1"), "{note}");
        let e = CENTRAL.admits(k("6.12")).unwrap_err();
        assert!(e.contains("UnICom") && e.contains("6.5.1"), "{e}");
    }

    #[test]
    fn a_patch_is_itself_on_its_release_and_a_port_while_what_it_changes_exists() {
        assert!(BOOST.admits(k("5.3.7")).is_ok());
        assert_eq!(BOOST.port(k("5.3.7")), None);
        // TOS's 5.0.8 still has CFS: a port, with a note.
        assert!(BOOST.admits(k("5.0.8")).is_ok());
        let note = BOOST.port(k("5.0.8")).unwrap();
        assert!(
            note.contains("FastResponse's patch") && note.contains("5.3.7"),
            "{note}"
        );
        assert!(note.contains("FR 1") && note.contains("port"), "{note}");
        // 6.12 has no CFS wake-up check to change.
        let e = BOOST.admits(k("6.12")).unwrap_err();
        assert!(e.contains("5.3.7") && e.contains("147f3efaa241"), "{e}");
        assert_eq!(BOOST.port(k("6.12")), None);
        // SelectISR needs classic polling (4.4 on).
        assert!(SELECT_ISR.admits(k("4.3")).is_err());
        assert!(LD.admits(k("6.12")).is_ok());
        assert!(PLAIN_WAKEUP.admits(k("2.6")).is_ok());
        assert_eq!(PLAIN_WAKEUP.port(k("6.12")), None);
        assert!(INTERRUPT.admits(k("6.18")).is_ok());
    }

    #[test]
    fn x_dot_y_is_digits_on_both_sides() {
        // u16's parser takes a leading `+`; a release number does not.
        for bad in ["+6.12", "6.+1", "-6.1"] {
            assert!(bad.parse::<Kernel>().is_err(), "{bad}");
        }
    }

    #[test]
    fn gone_by_is_removed_at_or_before_not_merely_newer() {
        // Hybrid polling: added in 4.10, removed in 6.4 (54bdd67d0f88).
        assert!(HYBRID.gone_by(k("6.4")) && HYBRID.gone_by(k("6.18")));
        assert!(!HYBRID.gone_by(k("6.3")));
        assert!(!HYBRID.gone_by(k("4.9")), "older than it is not gone");
        assert!(!EEVDF.gone_by(k("5.3")) && !PLAIN_WAKEUP.gone_by(k("6.18")));
        // A patch is gone where what it changes is, except on its own
        // release: FastResponse's boost of CFS, gone from 6.6 (EEVDF).
        assert!(BOOST.gone_by(k("6.6")));
        assert!(!BOOST.gone_by(k("5.3")) && !BOOST.gone_by(k("5.0")));
    }

    #[test]
    fn a_patch_is_there_on_its_own_release_whatever_it_changes() {
        // The rule above `impl Era`: "on the release it patches, a patch is
        // there". No FastResponse mechanism changes what 5.3 lacks, so a
        // patch of EEVDF (6.6+) to 5.3.7 shows the rule alone.
        let odd = patch("a change to EEVDF", FASTRESPONSE, &EEVDF);
        assert!(odd.admits(k("5.3")).is_ok());
        assert!(!odd.gone_by(k("5.3")));
        let e = odd.admits(k("5.10")).unwrap_err();
        assert!(
            e.starts_with("a change to EEVDF is FastResponse's patch"),
            "{e}"
        );
        assert_eq!(
            odd.port(k("6.6"))
                .map(|n| n.ends_with("on 6.6 this models a port")),
            Some(true)
        );
        // A patch of what was removed: gone by then, except on its release.
        let late = patch("a change to hybrid polling", FASTRESPONSE, &HYBRID);
        assert!(late.gone_by(k("6.4")));
        assert!(!late.gone_by(k("5.0")));
    }

    #[test]
    fn the_release_before_an_x_dot_0_is_not_arithmetic() {
        // 5.19 came before 6.0, 3.19 before 4.0: named by Linus.
        assert_eq!(previous(Kernel::new(6, 4)), Some(Kernel::new(6, 3)));
        assert_eq!(previous(Kernel::new(6, 1)), Some(Kernel::new(6, 0)));
        assert_eq!(previous(Kernel::new(6, 0)), None);
        assert_eq!(previous(Kernel::new(4, 0)), None);
    }

    #[test]
    fn an_era_names_its_range_and_cites_only_what_it_has() {
        // Every release: no range, no citation, no note.
        assert_eq!(
            INTERRUPT.to_string(),
            "completion by interrupt exists in every Linux release"
        );
        assert_eq!(brief(&INTERRUPT), "every Linux release");
        // Since a release, cited.
        assert_eq!(
            EEVDF.to_string(),
            "EEVDF exists in Linux 6.6 and later (added in 6.6 by 147f3efaa241 \"sched/fair: Implement an EEVDF-like scheduling policy\")"
        );
        assert_eq!(brief(&EEVDF), "Linux 6.6+, since 147f3efaa241");
        // A bound whose commit was not found is named by title, marked
        // unverified, and left out of the brief's citations.
        let s = SYNC_HIPRI.to_string();
        assert!(
            s.contains("added in 4.6 by \"preadv2/pwritev2 RWF_HIPRI\" (its commit not found here), not verified; removed in 5.19 by 9650b453a3d4 \"block: ignore RWF_HIPRI hint for sync dio\")"),
            "{s}"
        );
        assert!(
            s.ends_with("; stable kernels and RHEL 9 carry backports"),
            "{s}"
        );
        assert_eq!(
            brief(&SYNC_HIPRI),
            "Linux 4.6 to 5.18, removed by 9650b453a3d4"
        );
        // Only an unverified bound says so.
        assert!(!HYBRID.to_string().contains("not verified"));
        assert!(CLASSIC_POLL
            .to_string()
            .contains("\"block: add block polling support\", not verified"));
        // The simulator's own.
        assert_eq!(
            PLAIN_WAKEUP.to_string(),
            "the plain wake-up rule is the simulator's own, on any kernel"
        );
        assert_eq!(brief(&PLAIN_WAKEUP), "any kernel (the simulator's own)");
    }

    #[test]
    fn irq_suspension_is_6_13s_for_networks_and_a_port_for_storage() {
        assert!(NAPI_IRQ_SUSPEND.admits(k("6.12")).is_err());
        assert!(NAPI_IRQ_SUSPEND.admits(k("6.13")).is_ok());
        assert!(NAPI_IRQ_SUSPEND.to_string().contains("5dc51ec86df6"));
        // The storage port: refused where the napi mechanism is not, a
        // port (with its note) after 6.13, never gone.
        let e = IRQ_SUSPEND_STORAGE.admits(k("6.12")).unwrap_err();
        assert!(
            e.contains("not in Linux") && e.contains("5dc51ec86df6"),
            "{e}"
        );
        assert!(IRQ_SUSPEND_STORAGE.admits(k("6.18")).is_ok());
        let note = IRQ_SUSPEND_STORAGE.port(k("6.18")).unwrap();
        assert!(note.contains("this models a port"), "{note}");
        assert!(!IRQ_SUSPEND_STORAGE.gone_by(k("6.18")));
        assert!(NO_IRQ_SUSPEND.admits(k("2.6")).is_ok());
    }

    #[test]
    fn every_bound_cites_a_short_hash_and_a_title() {
        for era in ALL {
            if let Span::Linux { since, until } = era.span {
                for b in [since, until].into_iter().flatten() {
                    let hex =
                        b.commit.len() == 12 && b.commit.bytes().all(|c| c.is_ascii_hexdigit());
                    // The one bound without a hash says so and is unverified.
                    assert!(hex || !b.verified, "{}: {}", era.what, b.commit);
                    assert!(!b.title.is_empty(), "{}", era.what);
                    assert!(
                        b.release.starts_with(&b.kernel.to_string()),
                        "{}: {} vs {}",
                        era.what,
                        b.release,
                        b.kernel
                    );
                }
                if let (Some(s), Some(u)) = (since, until) {
                    assert!(s.kernel < u.kernel, "{}", era.what);
                }
            }
            assert_eq!(era.to_string().lines().count(), 1);
        }
    }
}

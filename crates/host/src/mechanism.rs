//! The host's mechanisms declared once (issue 26 item 2), as `policy`
//! declares its strategies: each choice a host can be given (the
//! block-layer scheduler, the completion mode, hybrid polling's sleep,
//! io_uring's wait, the CPU scheduler's wake-up rule, the journal, JBD2 as
//! critical, polled fsync I/O) is one row of [`MECHANISMS`], with its host-profile key, its
//! command-line option, the words it takes, its help, the front ends that
//! apply it and its parser. The command line (`sim`, `run`, `exec`), the
//! host profiles, `reproduce` and the reports read the rows; what a
//! mechanism does stays in its own module ([`crate::ld`], [`crate::poll`],
//! [`crate::uring`], [`crate::cfs`], [`crate::fsync`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

use crate::cfs::{BoostRule, Rule};
use crate::era::{self, Era, Kernel};
use crate::fsync::FsyncConfig;
use crate::ld::{LdConfig, DEFAULT_SPLIT, DEFAULT_TOKENS};
use crate::poll::{HybridSleep, Mode};
use crate::uring;

/// Which block-layer scheduler runs between the threads and the device
/// (host profile key `block_scheduler`, `--block-scheduler`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum BlockScheduler {
    /// Every request goes to the device whole, at once (default).
    #[default]
    None,
    /// FastResponse's LD ([`crate::ld`]).
    Ld {
        /// Non-critical pieces in flight at most, device-wide (default 8).
        tokens: u32,
        /// Bytes per piece of a non-critical request (default 32 KiB).
        split: u64,
        /// A critical request takes a free token if one is free, as the
        /// authors' code does (default off, as the paper).
        opportunistic: bool,
    },
}

impl BlockScheduler {
    /// LD with its defaults (8 tokens, 32 KiB pieces, not opportunistic).
    pub const LD: BlockScheduler = BlockScheduler::Ld {
        tokens: DEFAULT_TOKENS,
        split: DEFAULT_SPLIT,
        opportunistic: false,
    };

    /// The LD the emulator's driver runs (`run`, `exec`), on one hardware
    /// queue as [`LdConfig::default`]; `None` for no scheduler. One
    /// reading, so that every front end spells `--block-scheduler` alike.
    pub fn ld(&self) -> Option<LdConfig> {
        match *self {
            BlockScheduler::None => None,
            BlockScheduler::Ld {
                tokens,
                split,
                opportunistic,
            } => Some(LdConfig {
                tokens,
                split,
                opportunistic,
                ..LdConfig::default()
            }),
        }
    }
}

impl fmt::Display for BlockScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockScheduler::None => write!(f, "none"),
            BlockScheduler::Ld {
                tokens,
                split,
                opportunistic,
            } => {
                write!(f, "ld,tokens={tokens},split=")?;
                if split % 1024 == 0 {
                    write!(f, "{}k", split / 1024)?;
                } else {
                    write!(f, "{split}")?;
                }
                if *opportunistic {
                    write!(f, ",opportunistic")?;
                }
                Ok(())
            }
        }
    }
}

/// `none`, or `ld` followed by options separated by commas: `tokens=N`
/// (at least 1), `split=SIZE` (bytes, or with `k`/`m` for KiB/MiB; at
/// least 512), `opportunistic`.
impl FromStr for BlockScheduler {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.split(',').map(str::trim);
        match parts.next().unwrap_or("") {
            "none" => match parts.next() {
                None => Ok(BlockScheduler::None),
                Some(opt) => Err(format!("block scheduler none takes no options ('{opt}')")),
            },
            "ld" => {
                let (mut tokens, mut split, mut opportunistic) =
                    (DEFAULT_TOKENS, DEFAULT_SPLIT, false);
                for opt in parts {
                    match opt.split_once('=') {
                        Some(("tokens", v)) => {
                            tokens = v
                                .parse()
                                .ok()
                                .filter(|&n| n >= 1)
                                .ok_or_else(|| format!("ld: tokens={v}: want a whole number >= 1"))?;
                        }
                        Some(("split", v)) => {
                            split = size(v)
                                .filter(|&n| n >= 512)
                                .ok_or_else(|| format!("ld: split={v}: want a size >= 512 bytes (e.g. 32k)"))?;
                        }
                        None if opt == "opportunistic" => opportunistic = true,
                        _ => {
                            return Err(format!(
                                "ld: unknown option '{opt}' (tokens=N, split=SIZE, opportunistic)"
                            ))
                        }
                    }
                }
                Ok(BlockScheduler::Ld {
                    tokens,
                    split,
                    opportunistic,
                })
            }
            other => Err(format!(
                "unknown block scheduler '{other}' (none, or ld[,tokens=N][,split=SIZE][,opportunistic])"
            )),
        }
    }
}

/// `4096`, `32k`, `1m` (KiB and MiB, as fio's sizes).
fn size(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let (num, mult) = match v.strip_suffix(['k', 'm']) {
        Some(n) if v.ends_with('k') => (n, 1024),
        Some(n) => (n, 1024 * 1024),
        None => (v.as_str(), 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

impl<'de> Deserialize<'de> for BlockScheduler {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Which wake-up preemption rule the scheduler applies
/// (host profile key `wakeup_rule`, `--wakeup`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wakeup {
    /// The simulator's own (default): a woken thread preempts when the
    /// running one is ahead by more than the profile's
    /// `sched_wakeup_granularity`; no `next` buddy.
    #[default]
    Plain,
    /// Linux CFS as [`crate::cfs`]'s Vanilla: the same check with the
    /// granularity Linux derives from the host's core count
    /// ([`crate::cfs::wakeup_granularity`], 4 ms for 8 or more CPUs), and the
    /// `next` buddy, picked when not unfair.
    Vanilla,
    /// FastResponse's critical boost, Algorithm 1 as the paper prints it
    /// (`crate::cfs` Boost(Paper)): a critical wakee becomes `next` and the
    /// running thread is marked for rescheduling; a critical `next` sticks.
    Boost,
    /// The boost as the authors' code has it (Boost(Code)): a critical
    /// wakee always preempts; a critical `next` is picked without the
    /// fairness check.
    BoostCode,
    /// Linux 6.6+'s EEVDF ([`crate::eevdf`]): the eligible task with the
    /// earliest virtual deadline runs, a wakee preempts when it is that
    /// task and the running one's slice is not protected, sleepers keep
    /// their lag. The scheduler of the kernel this project's VM runs (6.18).
    Eevdf,
}

impl Wakeup {
    /// The rule [`crate::cfs`] applies; `None` for the simulator's plain
    /// one and for EEVDF ([`crate::eevdf`]).
    pub fn rule(self) -> Option<Rule> {
        match self {
            Wakeup::Plain => None,
            Wakeup::Vanilla => Some(Rule::Vanilla),
            Wakeup::Boost => Some(Rule::Boost(BoostRule::Paper)),
            Wakeup::BoostCode => Some(Rule::Boost(BoostRule::Code)),
            Wakeup::Eevdf => None,
        }
    }
}

impl fmt::Display for Wakeup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Wakeup::Plain => "plain",
            Wakeup::Vanilla => "vanilla",
            Wakeup::Boost => "boost",
            Wakeup::BoostCode => "boost-code",
            Wakeup::Eevdf => "eevdf",
        })
    }
}

impl FromStr for Wakeup {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "plain" => Ok(Wakeup::Plain),
            "vanilla" => Ok(Wakeup::Vanilla),
            "boost" => Ok(Wakeup::Boost),
            "boost-code" => Ok(Wakeup::BoostCode),
            "eevdf" => Ok(Wakeup::Eevdf),
            other => Err(format!(
                "unknown wake-up rule '{other}' (plain, vanilla, boost, boost-code, eevdf)"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Wakeup {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The ext4 journal mode (host profile key `journal`, `--journal`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Journal {
    /// ext4 `data=ordered` for every caller (FR 2.1; FR's Vanilla to
    /// BS-Opt).
    #[default]
    Ordered,
    /// FastResponse's file-level journaling for critical callers (FR 3.4;
    /// BSJ-Opt): D1 and an f-transaction by the caller, no JBD2.
    Fjournal,
}

impl Journal {
    pub fn config(self) -> FsyncConfig {
        match self {
            Journal::Ordered => FsyncConfig::ORDERED,
            Journal::Fjournal => FsyncConfig::FJOURNAL,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Journal::Ordered => "ordered",
            Journal::Fjournal => "fjournal",
        }
    }
}

impl fmt::Display for Journal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Journal {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "ordered" => Ok(Journal::Ordered),
            "fjournal" => Ok(Journal::Fjournal),
            other => Err(format!(
                "unknown journal mode '{other}' (ordered, fjournal)"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Journal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

// The completion mode is `poll::Mode`, the one enum for every front end
// (the simulator's and exec's copies went with issue 26): its words here.
impl Mode {
    /// Whether a request of a job or thread with `critical` polls.
    pub fn polls(self, critical: bool) -> bool {
        match self {
            Mode::Interrupt => false,
            Mode::Poll | Mode::Hybrid => true,
            Mode::SelectIsr => critical,
            // DPAS and EHP may still send a request to interrupts: their
            // decision, per request (`crate::sleep::Decision`).
            Mode::Pas | Mode::Dpas | Mode::Ehp => true,
            // An io_uring ring's flag: a blocking call takes interrupts, as
            // on the 6.13+ kernels that have it (no synchronous polling
            // since 5.19, 9650b453a3d4).
            Mode::HybridIopoll => false,
            // Its queues raise no interrupt: the central poller reaps them.
            Mode::Central => true,
        }
    }

    /// How a `hipri` job polls under this host setting: hybrid if the host
    /// polls hybrid (Linux's `io_poll_delay` is the queue's, whoever
    /// polls: block/blk-mq.c `blk_mq_poll_hybrid`), else classic. PAS,
    /// DPAS and EHP are the queue's too (the DPAS artifact's sysfs knobs);
    /// HYBRID_IOPOLL is an io_uring ring's (a front end applies it to
    /// io_uring jobs only).
    pub fn hipri(self) -> Mode {
        match self {
            Mode::Hybrid => Mode::Hybrid,
            Mode::Pas | Mode::Dpas | Mode::Ehp | Mode::HybridIopoll => self,
            _ => Mode::Poll,
        }
    }
}

/// Interrupts, as Linux completes a request unless told to poll.
impl Default for Mode {
    fn default() -> Mode {
        Mode::Interrupt
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "interrupt" => Ok(Mode::Interrupt),
            "poll" | "classic" => Ok(Mode::Poll),
            "hybrid" => Ok(Mode::Hybrid),
            "select-isr" | "selectisr" => Ok(Mode::SelectIsr),
            "pas" => Ok(Mode::Pas),
            "dpas" => Ok(Mode::Dpas),
            "ehp" => Ok(Mode::Ehp),
            "hybrid-iopoll" => Ok(Mode::HybridIopoll),
            "central" => Ok(Mode::Central),
            other => Err(format!(
                "unknown completion mode '{other}' (interrupt, poll, hybrid, select-isr, pas, dpas, ehp, hybrid-iopoll, central)"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Linux's `io_poll_delay = 0`: half the mean, as hybrid polling sleeps
/// unless told a fixed time.
impl Default for HybridSleep {
    fn default() -> HybridSleep {
        HybridSleep::HalfMean
    }
}

/// `half-mean`, or the fixed sleep as a duration (`8us`).
impl fmt::Display for HybridSleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HybridSleep::HalfMean => f.write_str("half-mean"),
            HybridSleep::Fixed(ns) => f.write_str(&policy::format_nanos(*ns)),
        }
    }
}

/// Linux's sysfs `io_poll_delay` (block/blk-sysfs.c, since Linux 4.10's
/// 64f1c21e86f7 "blk-mq: make the polling code adaptive"): `0` sleeps half
/// the mean completion time of the request's size and direction, `> 0`
/// that many microseconds; `-1`, classic polling, is `completion = poll`
/// here. So `half-mean` or a duration above 0.
impl FromStr for HybridSleep {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "half-mean" => Ok(HybridSleep::HalfMean),
            // A bare number is microseconds, as sysfs takes it.
            other => match policy::time::parse_duration(other, Some(policy::US)) {
                Ok(0) => Err(format!(
                    "io_poll_delay '{other}': a fixed sleep is above 0 (half-mean is Linux's 0, completion = poll its -1)"
                )),
                Ok(ns) => Ok(HybridSleep::Fixed(ns)),
                Err(e) => Err(format!(
                    "io_poll_delay '{other}': half-mean or a duration ({e})"
                )),
            },
        }
    }
}

impl<'de> Deserialize<'de> for HybridSleep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A front end that applies host mechanisms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrontEnd {
    /// `cinterrupts sim`: every mechanism, in virtual time.
    Sim,
    /// `cinterrupts run`: the emulator's driver on real threads.
    Run,
    /// `cinterrupts exec`: real programs routed through the emulator.
    Exec,
}

impl FrontEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            FrontEnd::Sim => "sim",
            FrontEnd::Run => "run",
            FrontEnd::Exec => "exec",
        }
    }
}

/// How a mechanism's option takes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A word or a word with parameters (`ld,tokens=4`).
    Word,
    /// On when given, no value (`--jbd2-critical`); `on`/`off`, `true`/
    /// `false` in a profile.
    Flag,
}

/// The mechanisms a run turns on over its host profile's, each `None` for
/// the profile's own. One field per row of [`MECHANISMS`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// `block_scheduler`: `none` or `ld[,tokens=N][,split=SIZE][,opportunistic]`.
    pub block_scheduler: Option<BlockScheduler>,
    /// `completion`: interrupt, poll, hybrid, select-isr.
    pub completion: Option<Mode>,
    /// `io_poll_delay`: hybrid polling's sleep, half-mean or a duration.
    pub io_poll_delay: Option<HybridSleep>,
    /// `wakeup_rule`: plain, vanilla, boost, boost-code.
    pub wakeup: Option<Wakeup>,
    /// `journal`: ordered (ext4 `data=ordered`) or fjournal (FR 3.4).
    pub journal: Option<Journal>,
    /// `jbd2_critical`: JBD2's journal I/O bypasses LD and its wake-ups
    /// are boosted (FR 4.4).
    pub jbd2_critical: Option<bool>,
    /// `fsync_io_polls`: the fsync path's I/Os of the threads the
    /// completion mode polls for are polled (FR 4.4's SelectISR).
    pub fsync_io_polls: Option<bool>,
    /// `uring`: how an io_uring job's thread waits for its completions
    /// ([`uring::STRATEGIES`]; issue 25).
    pub uring: Option<uring::Strategy>,
    /// `irq_suspend`: IRQ suspension of each completion queue, off or its
    /// timeout ([`crate::irq_suspend`]; issue 40).
    pub irq_suspend: Option<crate::irq_suspend::IrqSuspend>,
}

/// One host mechanism: where it is named and how it is read.
pub struct Mechanism {
    /// The host profile's key (`wakeup_rule`).
    pub key: &'static str,
    /// The command line's option, without `--` (`wakeup`).
    pub flag: &'static str,
    /// The value's shape in help (`plain|vanilla|boost|boost-code`).
    pub value_name: &'static str,
    pub kind: Kind,
    /// A value other than the default, for the help and the tests that
    /// hold the profile key and the option to one meaning.
    pub example: &'static str,
    /// What it is and what each word does, for every front end.
    pub help: &'static str,
    /// The front ends that apply it, each with what is particular to it
    /// there (appended to the help).
    pub front_ends: &'static [(FrontEnd, &'static str)],
    /// Reads `value` into its field of the settings.
    pub set: fn(&mut Settings, &str) -> Result<(), String>,
    /// Its field as the option would be written, if set (a flag: only when
    /// on).
    pub get: fn(&Settings) -> Option<String>,
    /// The Linux releases each of its words exists in ([`crate::era`];
    /// issue 37 item 1): `(word, era)`, the word as [`Mechanism::get`]
    /// writes it up to its first `,` or `=`; `"on"` for a flag; `""` for
    /// every value.
    pub eras: &'static [(&'static str, Era)],
}

impl Mechanism {
    /// Whether `front` applies it.
    pub fn supports(&self, front: FrontEnd) -> bool {
        self.front_ends.iter().any(|(f, _)| *f == front)
    }

    /// The era of `value` as [`Mechanism::get`] writes it (a flag's `""`
    /// is on); `None` for a word without one (the tests hold every word
    /// to having one).
    pub fn era(&self, value: &str) -> Option<&'static Era> {
        let word = match self.kind {
            Kind::Flag => "on",
            Kind::Word => value.split([',', '=']).next().unwrap_or("").trim(),
        };
        self.eras
            .iter()
            .find(|(w, _)| w.is_empty() || *w == word)
            .map(|(_, e)| e)
    }

    /// The help as `front` gives it: the common text and the front end's
    /// own sentence.
    pub fn help_for(&self, front: FrontEnd) -> String {
        match self.front_ends.iter().find(|(f, _)| *f == front) {
            Some((_, "")) | None => self.help.to_string(),
            Some((_, note)) => format!("{} {note}", self.help),
        }
    }
}

fn flag(value: &str) -> Result<bool, String> {
    match value.trim() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        other => Err(format!("expected on or off, not '{other}'")),
    }
}

fn shown(on: Option<bool>) -> Option<String> {
    (on == Some(true)).then(String::new)
}

/// Every host mechanism, in the order the command line describes them.
pub const MECHANISMS: &[Mechanism] = &[
    Mechanism {
        key: "block_scheduler",
        flag: "block-scheduler",
        value_name: "none|ld[,...]",
        kind: Kind::Word,
        example: "ld,tokens=4,split=64k",
        help: "Block-layer scheduler between the threads and the device: `none` (default), or FastResponse's Limited Depth, `ld[,tokens=N][,split=SIZE][,opportunistic]` (FR 3.3: 8 tokens bound the non-critical pieces in flight, non-critical requests split into 32k pieces, each its own command; critical requests bypass it).",
        front_ends: &[
            (FrontEnd::Sim, "Instead of the host profile's `block_scheduler`."),
            (FrontEnd::Run, "Critical=1 jobs bypass it."),
            (FrontEnd::Exec, "Critical requests are the marked ones (--critical-thread, --critical-file)."),
        ],
        set: |s, v| {
            s.block_scheduler = Some(v.parse()?);
            Ok(())
        },
        get: |s| s.block_scheduler.as_ref().map(|b| b.to_string()),
        eras: &[("none", era::NO_SCHEDULER), ("ld", era::LD)],
    },
    Mechanism {
        key: "completion",
        flag: "completion",
        value_name: "interrupt|poll|hybrid|select-isr|pas|dpas|ehp|hybrid-iopoll|central",
        kind: Kind::Word,
        example: "select-isr",
        help: "How a blocked thread learns of its completion: `interrupt` (default), `poll` (spins on a poll queue, whose CQ raises no interrupt, its CPU busy), `hybrid` (sleeps half its size bucket's mean latency, then spins: Linux's io_poll_delay=0), `select-isr` (critical requests poll, the rest take interrupts: FastResponse 4.1's SelectISR), `pas` (DPAS FAST'26's per-I/O adaptive sleep: each size bucket's sleep moved up after a wake-up that had to spin, down after one that found its entry there), `dpas` (DPAS: classic polling, PAS, an overloaded mode or interrupts, chosen every 100 I/Os from the CPU's queue depth and PAS's floor hits), `ehp` (EHP, JSA 2022, as the DPAS artifact's baseline: sleep the last 10 ms window's minimum latency less two context switches and an interrupt; a size whose minimum is above ten times that takes interrupts), `hybrid-iopoll` (io_uring's IORING_SETUP_HYBRID_IOPOLL, Linux 6.13: an IOPOLL ring sleeps half the least poll time it has seen, then polls; for io_uring jobs with hipri, blocking engines take interrupts) or `central` (UnICom, FAST'26: one kernel thread on a core of its own polls every blocking thread's queue, which raises no interrupt; a thread alone on its core spins on its request's status, one sharing its core is skipped by the scheduler until the poller completes it).",
        front_ends: &[
            (FrontEnd::Sim, "Instead of the host profile's `completion`. A job with fio's hipri (pvsync2, io_uring) polls whatever the mode: hybrid under `hybrid`; a pvsync2 job by `pas`, `dpas` or `ehp` under them (an io_uring job classic there: io_uring has not slept in its polling since 5.16, d729cf9acb93); an io_uring job by `hybrid-iopoll` under it; else classic. PAS, DPAS and EHP keep their state per core, HYBRID_IOPOLL per thread (its ring)."),
            (FrontEnd::Run, "Hybrid's sleep is less the timer's measured overshoot; `pas`, `dpas`, `ehp` and `hybrid-iopoll` sleep exactly what they decide (they learn this VM's timer from their feedback, as they would a kernel's), one strategy per job thread. A job with hipri=1 polls whatever this says. `central` is simulated only: refused here."),
            (FrontEnd::Exec, "The thread spins on its slot's completion ring; with a poll queue, a preadv2 with RWF_HIPRI (fio's pvsync2 hipri=1) polls too. libaio contexts always take interrupts. `pas`, `dpas`, `ehp`, `hybrid-iopoll` and `central` are refused here: a program's reaping does not apply them yet."),
        ],
        set: |s, v| {
            s.completion = Some(v.parse()?);
            Ok(())
        },
        get: |s| s.completion.map(|c| c.as_str().to_string()),
        eras: &[
            ("interrupt", era::INTERRUPT),
            ("poll", era::CLASSIC_POLL),
            ("hybrid", era::HYBRID),
            ("select-isr", era::SELECT_ISR),
            ("pas", era::PAS),
            ("dpas", era::DPAS),
            ("ehp", era::EHP),
            ("hybrid-iopoll", era::HYBRID_IOPOLL),
            ("central", era::CENTRAL),
        ],
    },
    Mechanism {
        key: "io_poll_delay",
        flag: "io-poll-delay",
        value_name: "half-mean|TIME",
        kind: Kind::Word,
        example: "8us",
        help: "How long hybrid polling sleeps before it spins (Linux's sysfs io_poll_delay): `half-mean` (default, Linux's 0: half the mean completion time of the request's size and direction in the last 100 ms window) or a fixed time (Linux's value > 0, in microseconds there). Only with `--completion hybrid`, or a hipri job under it.",
        front_ends: &[(FrontEnd::Sim, "Instead of the host profile's `io_poll_delay`.")],
        set: |s, v| {
            s.io_poll_delay = Some(v.parse()?);
            Ok(())
        },
        get: |s| s.io_poll_delay.map(|d| d.to_string()),
        eras: &[("", era::IO_POLL_DELAY)],
    },
    Mechanism {
        key: "wakeup_rule",
        flag: "wakeup",
        value_name: "plain|vanilla|boost|boost-code|eevdf",
        kind: Kind::Word,
        example: "boost",
        help: "The CPU scheduler's wake-up preemption rule: `plain` (default: preempt beyond the profile's sched_wakeup_granularity), `vanilla` (Linux CFS, its next buddy, the granularity from the core count: 4 ms for 8 or more), `boost` (FastResponse's critical boost, FR Alg. 1: a critical job's wake-up preempts at once), `boost-code` (the authors' code) or `eevdf` (Linux 6.6+: the eligible thread with the earliest virtual deadline runs, slices of 0.75 ms x (1 + ilog2(min(cores, 8))), a running thread's slice protected from wake-ups, sleepers keep their lag).",
        front_ends: &[(FrontEnd::Sim, "Instead of the host profile's `wakeup_rule`.")],
        set: |s, v| {
            s.wakeup = Some(v.parse()?);
            Ok(())
        },
        get: |s| s.wakeup.map(|w| w.to_string()),
        eras: &[
            ("plain", era::PLAIN_WAKEUP),
            ("vanilla", era::CFS_WAKEUP),
            ("boost", era::BOOST),
            ("boost-code", era::BOOST),
            ("eevdf", era::EEVDF),
        ],
    },
    Mechanism {
        key: "journal",
        flag: "journal",
        value_name: "ordered|fjournal",
        kind: Kind::Word,
        example: "fjournal",
        help: "The ext4 journal mode for jobs with fsync=N or fdatasync=N: `ordered` (default; ext4 data=ordered: the file's data D1, then the JBD2 thread writes other files' dirty data D2, the journal JD and the commit block JC) or `fjournal` (FastResponse's file-level journaling: a critical job writes D1 and its own f-transaction, no JBD2).",
        front_ends: &[(FrontEnd::Sim, "Instead of the host profile's `journal`.")],
        set: |s, v| {
            s.journal = Some(v.parse()?);
            Ok(())
        },
        get: |s| s.journal.map(|j| j.to_string()),
        eras: &[("ordered", era::ORDERED), ("fjournal", era::FJOURNAL)],
    },
    Mechanism {
        key: "jbd2_critical",
        flag: "jbd2-critical",
        value_name: "",
        kind: Kind::Flag,
        example: "on",
        help: "Run the JBD2 journal thread as critical (FastResponse 4.4): its journal writes bypass the block layer's limit and its wake-ups are boosted.",
        front_ends: &[(FrontEnd::Sim, "Instead of the host profile's `jbd2_critical` (default off).")],
        set: |s, v| {
            s.jbd2_critical = Some(flag(v)?);
            Ok(())
        },
        get: |s| shown(s.jbd2_critical),
        eras: &[("on", era::JBD2_CRITICAL)],
    },
    Mechanism {
        key: "fsync_io_polls",
        flag: "fsync-io-polls",
        value_name: "",
        kind: Kind::Flag,
        example: "on",
        help: "Poll the fsync path's I/Os (D1, D2, JD, JC, the f-transaction) of the threads the completion mode polls for (FastResponse 4.4's SelectISR).",
        front_ends: &[(FrontEnd::Sim, "Instead of the host profile's `fsync_io_polls` (default off: they complete by interrupt, as in Linux).")],
        set: |s, v| {
            s.fsync_io_polls = Some(flag(v)?);
            Ok(())
        },
        get: |s| shown(s.fsync_io_polls),
        eras: &[("on", era::FSYNC_IO_POLLS)],
    },
    Mechanism {
        key: "uring",
        flag: "uring",
        value_name: "STRATEGY",
        kind: Kind::Word,
        example: "min-wait=20us,nr=4",
        help: "How an io_uring job's thread waits for its completions (host::uring; `cinterrupts policies` lists them): `min-complete` (default: CQEs posted by the interrupt, woken once min_complete are there; Linux 5.4-5.14), `task-work` (woken for every interrupt, Linux 5.15+ without DEFER_TASKRUN), `defer-taskrun` (completions run only when the thread enters the kernel), `min-wait=TIME[,nr=N][,timeout=TIME]` (Linux 6.12's io_uring_submit_and_wait_min_timeout), `iopoll` or `sqpoll`. A job's own hipri (IOPOLL) or sqthread_poll (SQPOLL) wins.",
        front_ends: &[
            (FrontEnd::Sim, "Instead of the host profile's `uring`."),
            (FrontEnd::Run, "Given, the report adds the threads' wake-ups per I/O; task-work, defer-taskrun and sqpoll are refused (`sim --uring` models them)."),
        ],
        set: |s, v| {
            s.uring = Some(uring::parse(v)?);
            Ok(())
        },
        get: |s| s.uring.map(|u| u.to_string()),
        eras: &[
            ("min-complete", era::URING_MIN_COMPLETE),
            ("task-work", era::URING_TASK_WORK),
            ("defer-taskrun", era::URING_DEFER_TASKRUN),
            ("min-wait", era::URING_MIN_WAIT),
            ("iopoll", era::URING_IOPOLL),
            ("sqpoll", era::URING_SQPOLL),
        ],
    },
    Mechanism {
        key: "irq_suspend",
        flag: "irq-suspend",
        value_name: "off|TIME",
        kind: Kind::Word,
        example: "200us",
        help: "IRQ suspension of each completion queue (host::irq_suspend; Linux 6.13's napi irq_suspend_timeout, Karsten and Damato, carried to NVMe queues): `off` (default) or the timeout. An interrupt delivered masks its queue's vector; while a thread's reaping call (io_getevents, io_uring_enter, a blocking call's wait) finds completions on the CQ the queue stays masked and the timer restarts; a call that finds nothing and sleeps unmasks it, and the timer unmasks it at the latest, delivering a held interrupt. The device's policy decides the interrupts once unmasked. Not with `--completion poll` (no interrupts to suspend).",
        front_ends: &[(FrontEnd::Sim, "Instead of the host profile's `irq_suspend`; a reaping call's pass over the CQ costs per_completion for each entry it takes and a wake-up for each other thread it wakes.")],
        set: |s, v| {
            s.irq_suspend = Some(v.parse()?);
            Ok(())
        },
        get: |s| s.irq_suspend.map(|v| v.to_string()),
        eras: &[("off", era::NO_IRQ_SUSPEND), ("", era::IRQ_SUSPEND_STORAGE)],
    },
];

/// The table as `cinterrupts policies` prints it: one block per row, its
/// option and profile key, the front ends that apply it, and its help.
pub fn listing() -> String {
    let mut out = String::from(
        "Host mechanisms (over the host profile's own; host::mechanism):
",
    );
    for m in MECHANISMS {
        let fronts: Vec<&str> = m.front_ends.iter().map(|(f, _)| f.as_str()).collect();
        let value = match m.kind {
            Kind::Word => format!(" {}", m.value_name),
            Kind::Flag => String::new(),
        };
        out += &format!(
            "  --{}{value}  (host key {}; {})\n      {}\n",
            m.flag,
            m.key,
            fronts.join(", "),
            m.help
        );
        for (word, e) in m.eras {
            let shown = match (m.kind, *word) {
                (Kind::Flag, _) | (_, "") => String::new(),
                (Kind::Word, w) => format!("{w}: "),
            };
            out += &format!("      kernel: {shown}{}\n", era::brief(e));
        }
    }
    out
}

/// A mechanism set that a kernel does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anachronism {
    pub row: &'static Mechanism,
    /// Its value as the option writes it (empty for a flag).
    pub value: String,
    /// Where it exists, citing the commits ([`Era`]'s text).
    pub era: String,
}

impl PartialEq for Mechanism {
    fn eq(&self, other: &Mechanism) -> bool {
        self.key == other.key
    }
}
impl Eq for Mechanism {}

impl fmt::Debug for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mechanism({})", self.key)
    }
}

impl Anachronism {
    /// As the command line gave it: `--completion hybrid`.
    pub fn option(&self) -> String {
        match self.row.kind {
            Kind::Flag => format!("--{}", self.row.flag),
            Kind::Word => format!("--{} {}", self.row.flag, self.value),
        }
    }
}

impl Settings {
    /// The first mechanism set, in table order, that `kernel` does not
    /// have; `None` when every one it sets coexisted there.
    pub fn anachronism(&self, kernel: Kernel) -> Option<Anachronism> {
        MECHANISMS.iter().find_map(|m| {
            let value = (m.get)(self)?;
            let era = m.era(&value)?;
            era.admits(kernel)
                .err()
                .map(|era| Anachronism { row: m, value, era })
        })
    }

    /// The first mechanism set, in table order, that was gone by `kernel`
    /// ([`Era::gone_by`]): removed before it, not merely newer than it.
    pub fn gone(&self, kernel: Kernel) -> Option<Anachronism> {
        MECHANISMS.iter().find_map(|m| {
            let value = (m.get)(self)?;
            let era = m.era(&value)?;
            if !era.gone_by(kernel) {
                return None;
            }
            era.admits(kernel)
                .err()
                .map(|era| Anachronism { row: m, value, era })
        })
    }

    /// The notes for the patches `self` sets that `kernel` has only as a
    /// port ([`Era::port`]), one per mechanism, as `--option value: note`.
    pub fn ports(&self, kernel: Kernel) -> Vec<String> {
        MECHANISMS
            .iter()
            .filter_map(|m| {
                let value = (m.get)(self)?;
                let note = m.era(&value)?.port(kernel)?;
                Some(match m.kind {
                    Kind::Flag => format!("--{}: {note}", m.flag),
                    Kind::Word => format!("--{} {value}: {note}", m.flag),
                })
            })
            .collect()
    }
}

/// The row whose command-line option is `flag` (without `--`).
pub fn mechanism(flag: &str) -> Option<&'static Mechanism> {
    MECHANISMS.iter().find(|m| m.flag == flag)
}

impl Settings {
    /// The settings as the command line writes them (`--wakeup vanilla
    /// --block-scheduler ld,...`), in table order; empty for none.
    pub fn describe(&self) -> String {
        MECHANISMS
            .iter()
            .filter_map(|m| {
                (m.get)(self).map(|v| match m.kind {
                    Kind::Flag => format!("--{}", m.flag),
                    Kind::Word => format!("--{} {v}", m.flag),
                })
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `other`'s mechanisms over these, each where `other` sets it.
    pub fn merge(&mut self, other: &Settings) {
        for m in MECHANISMS {
            if let Some(v) = (m.get)(other) {
                let v = if v.is_empty() { "on" } else { v.as_str() };
                (m.set)(self, v).expect("a row reads back what it writes");
            }
        }
        // A flag set off is not written by `get`: carry it as well.
        if other.jbd2_critical == Some(false) {
            self.jbd2_critical = Some(false);
        }
        if other.fsync_io_polls == Some(false) {
            self.fsync_io_polls = Some(false);
        }
    }

    /// The mechanisms set that `front` does not apply, by option.
    pub fn unsupported(&self, front: FrontEnd) -> Vec<&'static str> {
        MECHANISMS
            .iter()
            .filter(|m| (m.get)(self).is_some() && !m.supports(front))
            .map(|m| m.flag)
            .collect()
    }
}

/// The host profile a run takes, for the era check: its name, its pinned
/// kernel and the mechanisms it sets itself.
pub struct Pinned<'a> {
    pub name: &'a str,
    pub kernel: Option<Kernel>,
    pub explicit: &'a Settings,
}

impl Settings {
    /// The kernel the run models (`given`, the command line's `--kernel`,
    /// else the host profile's) and
    /// the notes to print (patches run as ports; a profile taken to
    /// another kernel). With `--kernel`, refused in one line naming the
    /// mechanism, where it exists and the commit: a mechanism of the
    /// command line's or of the profile's own that this kernel never had
    /// (`host::era`). Without it, the host profile's pinned kernel refuses
    /// a command-line mechanism that was gone by it (`--host
    /// xeon-e5-2660v4-linux-6.12 --completion hybrid`: removed in 6.4) and
    /// notes one that is only newer than it: the papers' profiles (5.0.8)
    /// are the hardware model that io_uring strategies of 6.x are studied
    /// on (`reproduce`'s ours-uring), so a newer mechanism on an older
    /// profile runs, said once. The profile's own keys were checked as it
    /// loaded.
    pub fn kernel_era(
        &self,
        given: Option<Kernel>,
        host: Option<Pinned<'_>>,
    ) -> Result<KernelEra, String> {
        let pinned = host.as_ref().and_then(|h| h.kernel);
        let Some(k) = given.or(pinned) else {
            return Ok(KernelEra::default());
        };
        let whose = match (given, &host) {
            (Some(k), _) => format!("--kernel {k}"),
            (None, Some(h)) => format!("host profile {}'s kernel = \"{k}\"", h.name),
            (None, None) => unreachable!("a kernel came from one of them"),
        };
        let mut notes = Vec::new();
        if let Some(a) = self.gone(k) {
            return Err(format!("{}: {}; {whose} is outside it", a.option(), a.era));
        }
        if let Some(a) = self.anachronism(k) {
            let line = format!("{}: {}; {whose} is outside it", a.option(), a.era);
            if given.is_some() {
                return Err(line);
            }
            notes.push(format!(
                "{line}: run as asked (--kernel {k} refuses such a combination)"
            ));
        }
        notes.extend(self.ports(k));
        if let (Some(h), Some(given)) = (&host, given) {
            if let Some(a) = h.explicit.anachronism(given) {
                return Err(format!(
                    "host profile {}: {} = \"{}\": {}; --kernel {given} is outside it",
                    h.name,
                    a.row.key,
                    if a.value.is_empty() { "on" } else { &a.value },
                    a.era
                ));
            }
            if pinned != Some(given) {
                notes.extend(
                    h.explicit
                        .ports(given)
                        .into_iter()
                        .map(|n| format!("host profile {}: {n}", h.name)),
                );
                notes.push(format!(
                    "host profile {} models {}; run on Linux {given} with its costs as they are (keys it leaves unset keep the simulator's defaults, no kernel's)",
                    h.name,
                    pinned.map_or("no kernel in particular".to_string(), |p| format!("Linux {p}"))
                ));
            }
        }
        Ok(KernelEra {
            kernel: Some(k),
            strict: given.is_some(),
            notes,
        })
    }
}

/// What [`Settings::kernel_era`] found.
#[derive(Debug, Default)]
pub struct KernelEra {
    /// The kernel the run models, if any was given or pinned.
    pub kernel: Option<Kernel>,
    /// Given by `--kernel`: the run refuses what it never had (else notes).
    pub strict: bool,
    /// Notes to print once nothing refused the run.
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_poll_delay_reads_as_sysfs_means_it() {
        assert_eq!("half-mean".parse(), Ok(HybridSleep::HalfMean));
        assert_eq!("8us".parse(), Ok(HybridSleep::Fixed(8_000)));
        // A bare number is microseconds, as sysfs takes it.
        assert_eq!("8".parse(), Ok(HybridSleep::Fixed(8_000)));
        for bad in ["0", "0us", "-1", "soon"] {
            let e = bad.parse::<HybridSleep>().unwrap_err();
            assert!(e.starts_with(&format!("io_poll_delay '{bad}'")), "{e}");
        }
        assert!("0".parse::<HybridSleep>().unwrap_err().contains("above 0"));
        for d in [HybridSleep::HalfMean, HybridSleep::Fixed(1_500)] {
            assert_eq!(d.to_string().parse(), Ok(d), "{d}");
        }
        assert_eq!(HybridSleep::default(), HybridSleep::HalfMean);
        let row = mechanism("io-poll-delay").unwrap();
        let mut s = Settings::default();
        (row.set)(&mut s, "12us").unwrap();
        assert_eq!(s.io_poll_delay, Some(HybridSleep::Fixed(12_000)));
        assert_eq!((row.get)(&s).as_deref(), Some("12us"));
        assert_eq!(s.describe(), "--io-poll-delay 12us");
    }

    /// The words a row's help offers: its value name's, or io_uring's
    /// strategies.
    fn words(m: &Mechanism) -> Vec<&'static str> {
        match (m.kind, m.key) {
            (Kind::Flag, _) => vec!["on"],
            (_, "uring") => uring::STRATEGIES.iter().map(|r| r.name).collect(),
            _ => m
                .value_name
                .split('|')
                .map(|w| w.split('[').next().unwrap())
                .collect(),
        }
    }

    #[test]
    fn every_mechanism_and_every_word_has_a_kernel_era() {
        for m in MECHANISMS {
            assert!(!m.eras.is_empty(), "{} has no era", m.key);
            for w in words(m) {
                assert!(m.era(w).is_some(), "{} {w}: no era", m.key);
            }
            // No word listed twice, and no era for a word the row lacks.
            for (w, _) in m.eras {
                assert!(w.is_empty() || words(m).contains(w), "{} {w}", m.key);
            }
        }
        // io_uring's row and its catalogue agree.
        let row = mechanism("uring").unwrap();
        for r in uring::STRATEGIES {
            assert_eq!(row.era(r.name), Some(&r.era), "{}", r.name);
        }
    }

    #[test]
    fn settings_a_kernel_never_had_are_named_by_option_and_commit() {
        let k = |s: &str| s.parse::<Kernel>().unwrap();
        let mut s = Settings::default();
        assert_eq!(s.anachronism(k("2.6")), None);
        (mechanism("completion").unwrap().set)(&mut s, "hybrid").unwrap();
        assert_eq!(s.anachronism(k("5.0.8")), None);
        let a = s.anachronism(k("6.12")).unwrap();
        assert_eq!(a.option(), "--completion hybrid");
        assert!(a.era.contains("54bdd67d0f88"), "{}", a.era);
        // A flag reads as on, and is named without a value.
        let mut s = Settings {
            jbd2_critical: Some(true),
            ..Settings::default()
        };
        assert_eq!(s.anachronism(k("5.3")), None);
        assert_eq!(s.ports(k("5.3")), Vec::<String>::new());
        // On 5.0 a port (a note), on 6.6+ refused: no CFS to boost in.
        assert_eq!(s.anachronism(k("5.0")), None);
        assert_eq!(s.ports(k("5.0")).len(), 1);
        assert_eq!(s.anachronism(k("6.6")).unwrap().option(), "--jbd2-critical");
        s.jbd2_critical = Some(false);
        assert_eq!(s.anachronism(k("6.6")), None);
        assert!(s.ports(k("5.0")).is_empty());
        // A word with parameters is judged by its word.
        (mechanism("uring").unwrap().set)(&mut s, "min-wait=20us,nr=4").unwrap();
        assert!(s.anachronism(k("6.12")).is_none());
        let a = s.anachronism(k("6.6")).unwrap();
        assert_eq!(a.option(), "--uring min-wait=20us,nr=4");
        assert!(a.era.contains("7ed9e09e2d13"), "{}", a.era);
    }

    #[test]
    fn the_listing_shows_each_rows_kernels() {
        let l = listing();
        assert!(l.contains("kernel: hybrid: Linux 4.10 to 6.3"), "{l}");
        assert!(l.contains("kernel: eevdf: Linux 6.6+"), "{l}");
        let n = l.matches("      kernel: ").count();
        let want: usize = MECHANISMS.iter().map(|m| m.eras.len()).sum();
        assert_eq!(n, want);
    }
}

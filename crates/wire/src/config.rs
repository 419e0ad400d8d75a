//! What `exec` tells the library through the environment: where to write,
//! which kernel's default marks apply, and the rules that override them.
//!
//! `CINTERRUPTS_EXEC_OUT` (a directory), `CINTERRUPTS_EXEC_MARKS` (`table1`
//! or `basis`), `CINTERRUPTS_EXEC_RULES` (the marking rules, one a line in
//! `crate::marks`'s syntax, as `exec` parsed and printed them; the first
//! that matches wins).

use std::path::PathBuf;

use ::marks::DefaultMarks;

use crate::marks::{Facts, Needs, Rule};
use crate::sys::Boost;

pub const ENV_OUT: &str = "CINTERRUPTS_EXEC_OUT";
/// The same directory as a descriptor every process inherits (`N:INODE`,
/// issue 24 item 3): a process that became another user writes its record
/// through it, whatever the directories above allow that user.
pub const ENV_OUT_FD: &str = "CINTERRUPTS_EXEC_OUT_FD";
pub const ENV_MARKS: &str = "CINTERRUPTS_EXEC_MARKS";
pub const ENV_RULES: &str = "CINTERRUPTS_EXEC_RULES";
pub const ENV_CRITICAL: &str = "CINTERRUPTS_EXEC_CRITICAL";
pub const ENV_COMPLETION: &str = "CINTERRUPTS_EXEC_COMPLETION";
pub const ENV_BOOST: &str = "CINTERRUPTS_EXEC_BOOST";
/// How the library reads RWF 0x20 and 0x40 ([`RwfMarks`]).
pub const ENV_RWF: &str = "CINTERRUPTS_EXEC_RWF";

/// What RWF 0x20 and 0x40 of a program's `preadv2`/`pwritev2`/iocb mean.
/// The authors' kernel (Linux 5.0.8, `cinterrupts-01-basis.patch`, TOS
/// 4.1.2) gave them RWF_URGENT and RWF_BARRIER; Linux 6.9 assigned 0x20 to
/// RWF_NOAPPEND and 6.11 0x40 to RWF_ATOMIC (include/uapi/linux/fs.h). On
/// this VM's 6.18, `pwritev2(.., 0x20)` on an O_APPEND descriptor writes at
/// the offset given and `pwritev2(.., 0x40)` on ext4 is EOPNOTSUPP
/// (measured 2026-11-27 with Python's `os.pwritev`): read as the authors'
/// marks and taken out, the same calls append and succeed. So which one
/// `exec` applies is the user's choice, defaulting to the running kernel's
/// meaning where the two collide ([`RwfMarks::for_kernel`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RwfMarks {
    /// The bits are marks, taken out before the kernel sees the call (a
    /// program built for the authors' kernel: their RocksDB patch).
    Authors,
    /// The bits go to the kernel unchanged and mark nothing.
    #[default]
    Kernel,
}

impl RwfMarks {
    pub const NAMES: &'static str = "authors, kernel";

    pub fn name(self) -> &'static str {
        match self {
            RwfMarks::Authors => "authors",
            RwfMarks::Kernel => "kernel",
        }
    }

    pub fn parse(s: &str) -> Option<RwfMarks> {
        match s {
            "authors" => Some(RwfMarks::Authors),
            "kernel" => Some(RwfMarks::Kernel),
            _ => None,
        }
    }

    /// The default for a kernel release (`uname -r`): `Authors` before
    /// Linux 6.9, where neither bit means anything else; `Kernel` from 6.9
    /// (an unreadable release counts as new).
    pub fn for_kernel(release: &str) -> RwfMarks {
        let mut it = release.split(['.', '-']).map(|p| p.parse::<u32>().ok());
        match (it.next().flatten(), it.next().flatten()) {
            (Some(major), Some(minor)) if (major, minor) < (6, 9) => RwfMarks::Authors,
            _ => RwfMarks::Kernel,
        }
    }
}
/// Set when the requests are routed through the device: `modelled` (a
/// `--device` profile times them; the program's data moves through the
/// page cache) or `direct` (the program's own O_DIRECT call is the device).
/// The shared region's path is in [`shm::ENV_SHM`].
pub const ENV_DEVICE: &str = "CINTERRUPTS_EXEC_DEVICE";
/// `--io-uring`: `route`, `pass` or `refuse` ([`IoUring`]).
pub const ENV_IO_URING: &str = "CINTERRUPTS_EXEC_IO_URING";

/// `ENOSYS`, what a kernel built without io_uring returns for
/// `io_uring_setup`, `io_uring_enter` and `io_uring_register`
/// (CONFIG_IO_URING=n: io_uring/io_uring.c is not built, and
/// kernel/sys_ni.c's `COND_SYSCALL(io_uring_setup)` and its two siblings
/// make each call `sys_ni_syscall`, which returns -ENOSYS). Chosen over
/// the EPERM of `kernel.io_uring_disabled=2` (io_uring/io_uring.c,
/// `io_uring_allowed`, Linux 6.6+) because ENOSYS is what programs take
/// for "no io_uring here" (MariaDB 10.11 logs "io_uring_queue_init()
/// failed with ENOSYS: check seccomp filters, and the kernel version"
/// and falls back to its pread mode; fio says "your kernel doesn't
/// support io_uring"); EPERM says a sysctl to change (MariaDB's message
/// for it names `kernel.io_uring_disabled`), not a feature missing.
pub const IO_URING_REFUSED_ERRNO: i32 = libc::ENOSYS;

/// What becomes of a program's io_uring (`exec --io-uring`, issue 25 item
/// 1: what cannot be provided is refused at setup, with the errno the
/// kernel uses for an unsupported feature, and named in the report).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IoUring {
    /// The rings are routed (the default): the kernel moves the data
    /// through a shadow ring, the emulated device decides when each
    /// storage CQE becomes visible (the preload library's `uring`).
    #[default]
    Route,
    /// The ring is the kernel's: its requests are neither routed nor
    /// counted, the ring named in the report.
    Pass,
    /// Every `io_uring_setup` fails with ENOSYS ([`IO_URING_REFUSED_ERRNO`])
    /// as on a kernel without io_uring, so a program that can falls back
    /// to calls `exec` routes; each refusal named in the report.
    Refuse,
}

impl IoUring {
    pub fn name(self) -> &'static str {
        match self {
            IoUring::Route => "route",
            IoUring::Pass => "pass",
            IoUring::Refuse => "refuse",
        }
    }

    pub fn parse(s: &str) -> Option<IoUring> {
        match s {
            "route" => Some(IoUring::Route),
            "pass" => Some(IoUring::Pass),
            "refuse" => Some(IoUring::Refuse),
            _ => None,
        }
    }
}

/// Where the library routes the requests it sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteEnv {
    /// The shared region (`/proc/EXEC_PID/fd/N`).
    pub shm: String,
    /// The region's inherited descriptor ([`shm::ENV_SHM_FD`], `N:INODE`),
    /// tried first.
    pub shm_fd: Option<String>,
    /// A modelled device's timing: the data moves through the page cache.
    pub modelled: bool,
}

/// What a rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The calling thread's name (`/proc/self/task/TID/comm`, 15 bytes at
    /// most, as `prctl(PR_SET_NAME)` sets it).
    Thread,
    /// The file's path (`/proc/self/fd/N`).
    File,
}

/// `--critical-thread GLOB` or `--critical-file GLOB`: FastResponse's
/// critical tag (FR 3.1-3.2 tag a thread or a process through a system
/// call; here a rule stands for that call, as the marking rules stand for
/// the paper's application patches). A request is critical when its
/// thread's name matches a thread rule or its file's path a file rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Critical {
    pub target: Target,
    pub glob: String,
}

impl Critical {
    pub fn parse(target: Target, s: &str) -> Result<Critical, String> {
        if s.is_empty() {
            return Err("the glob is empty".into());
        }
        if s.contains('\n') {
            return Err("a glob cannot hold a newline".into());
        }
        Ok(Critical {
            target,
            glob: s.to_string(),
        })
    }

    /// The rule as one line of `CINTERRUPTS_EXEC_CRITICAL`.
    pub fn to_line(&self) -> String {
        let t = match self.target {
            Target::Thread => "thread",
            Target::File => "file",
        };
        format!("{t} {}", self.glob)
    }

    fn from_line(line: &str) -> Option<Critical> {
        let (t, rest) = line.split_once(' ')?;
        let target = match t {
            "thread" => Target::Thread,
            "file" => Target::File,
            _ => return None,
        };
        Critical::parse(target, rest).ok()
    }

    pub fn env(rules: &[Critical]) -> String {
        rules
            .iter()
            .map(Critical::to_line)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// How a routed blocking call learns of its completion (`exec
/// --completion`): the host's one completion mode (`host::poll::Mode`,
/// declared in `host::mechanism`). Under `poll` and `hybrid` the thread
/// spins on its slot's completion ring and its commands go to a poll queue
/// (interrupts off); hybrid sleeps first, half its size bucket's mean
/// latency less the timer's measured overshoot (`crate::sys::HybridTimer`,
/// `host::poll::HybridStats` per thread); `select-isr` polls the critical
/// requests only.
pub use host::poll::Mode as Polling;

/// Whether a blocking request polls under `mode`: as the mode says for a
/// request of its criticality, and any the program asked to poll
/// (RWF_HIPRI, as fio's `hipri=1` on pvsync2) whatever the mode.
pub fn polls(mode: Polling, critical: bool, hipri: bool) -> bool {
    hipri || mode.polls(critical)
}

/// The library's configuration in one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub out: PathBuf,
    /// [`ENV_OUT_FD`]: the directory's inherited descriptor and its inode.
    pub out_fd: Option<(i32, u64)>,
    pub default_marks: DefaultMarks,
    /// The marking rules, in order.
    pub rules: Vec<Rule>,
    /// The facts the marking rules ask for (`Needs::of(&rules)`).
    pub needs: Needs,
    /// The critical tag's rules.
    pub critical: Vec<Critical>,
    pub polling: Polling,
    /// What RWF 0x20 and 0x40 mean.
    pub rwf_marks: RwfMarks,
    /// Given to a thread at its first critical request.
    pub boost: Boost,
    /// `None`: the library observes and every call goes to the kernel.
    pub route: Option<RouteEnv>,
    /// What becomes of the program's io_uring ([`ENV_IO_URING`]).
    pub io_uring: IoUring,
}

impl Config {
    /// From the environment; `None` when `exec` did not set it (the
    /// library then does nothing). Lines it cannot read are skipped: `exec`
    /// checked them before starting the program.
    pub fn from_env() -> Option<Config> {
        let out = std::env::var_os(ENV_OUT)?;
        let default_marks = std::env::var(ENV_MARKS)
            .ok()
            .and_then(|m| m.parse().ok())
            .unwrap_or_default();
        let rules: Vec<Rule> = std::env::var(ENV_RULES)
            .map(|r| r.lines().filter_map(|l| Rule::parse(l).ok()).collect())
            .unwrap_or_default();
        let critical = std::env::var(ENV_CRITICAL)
            .map(|r| r.lines().filter_map(Critical::from_line).collect())
            .unwrap_or_default();
        let polling = std::env::var(ENV_COMPLETION)
            .ok()
            .and_then(|m| m.parse::<Polling>().ok())
            .unwrap_or_default();
        let rwf_marks = std::env::var(ENV_RWF)
            .ok()
            .and_then(|m| RwfMarks::parse(&m))
            .unwrap_or_default();
        let boost = std::env::var(ENV_BOOST)
            .ok()
            .and_then(|b| Boost::parse(&b))
            .unwrap_or_default();
        let out_fd = std::env::var(ENV_OUT_FD).ok().and_then(|v| {
            let (fd, ino) = v.split_once(':')?;
            Some((fd.parse().ok()?, ino.parse().ok()?))
        });
        let route = std::env::var(shm::ENV_SHM).ok().map(|shm| RouteEnv {
            shm,
            shm_fd: std::env::var(shm::ENV_SHM_FD).ok(),
            modelled: std::env::var(ENV_DEVICE).is_ok_and(|d| d == "modelled"),
        });
        let io_uring = std::env::var(ENV_IO_URING)
            .ok()
            .and_then(|m| IoUring::parse(&m))
            .unwrap_or_default();
        Some(Config {
            out: out.into(),
            out_fd,
            default_marks,
            needs: Needs::of(&rules),
            rules,
            critical,
            polling,
            rwf_marks,
            boost,
            route,
            io_uring,
        })
    }

    /// The rules as `CINTERRUPTS_EXEC_RULES` holds them.
    pub fn rules_env(rules: &[Rule]) -> String {
        rules
            .iter()
            .map(Rule::to_line)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Whether a critical rule reads the thread's name (or the file's
    /// path): then it is learnt for every request, as the marking rules'
    /// facts are when no flag of the program decides its marks.
    pub fn critical_on(&self, target: Target) -> bool {
        self.critical.iter().any(|r| r.target == target)
    }

    /// Whether a request of this thread on this file is critical.
    pub fn is_critical(&self, thread: Option<&str>, file: Option<&str>) -> bool {
        self.critical.iter().any(|r| {
            let text = match r.target {
                Target::Thread => thread,
                Target::File => file,
            };
            text.is_some_and(|t| crate::glob::matches(&r.glob, t))
        })
    }

    /// The first marking rule that matches the request, if any.
    pub fn rule_for(&self, f: &Facts) -> Option<&Rule> {
        crate::marks::first(&self.rules, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marks::Mark;

    #[test]
    fn rules_round_trip_through_the_environment_text() {
        let rules = vec![
            Rule::legacy(true, "rocksdb:*=none").unwrap(),
            Rule::legacy(false, "*/dump/*=barrier").unwrap(),
            Rule::parse("write title='postgres: *background writer*' => none").unwrap(),
        ];
        let text = Config::rules_env(&rules);
        let back: Vec<Rule> = text.lines().map(|l| Rule::parse(l).unwrap()).collect();
        assert_eq!(back, rules);
    }

    #[test]
    fn critical_rules_round_trip_and_polling_follows_the_mode() {
        let rules = vec![
            Critical::parse(Target::Thread, "rocksdb:high*").unwrap(),
            Critical::parse(Target::File, "*/wal/*").unwrap(),
        ];
        let back: Vec<Critical> = Critical::env(&rules)
            .lines()
            .filter_map(Critical::from_line)
            .collect();
        assert_eq!(back, rules);
        assert!(Critical::parse(Target::File, "").is_err());
        assert!(polls(Polling::Poll, false, false));
        assert!(polls(Polling::SelectIsr, true, false));
        assert!(!polls(Polling::SelectIsr, false, false));
        assert!(polls(Polling::Interrupt, false, true), "RWF_HIPRI polls");
        for m in Polling::ALL {
            assert_eq!(m.as_str().parse::<Polling>(), Ok(m));
        }
        for m in [IoUring::Route, IoUring::Pass, IoUring::Refuse] {
            assert_eq!(IoUring::parse(m.name()), Some(m));
        }
        assert_eq!(IoUring::parse("maybe"), None);
    }

    #[test]
    fn rwf_marks_default_to_the_running_kernels_meaning() {
        assert_eq!(RwfMarks::for_kernel("5.0.8"), RwfMarks::Authors);
        assert_eq!(RwfMarks::for_kernel("6.8.0-49-generic"), RwfMarks::Authors);
        assert_eq!(RwfMarks::for_kernel("6.9"), RwfMarks::Kernel);
        assert_eq!(RwfMarks::for_kernel("6.18.44-fc-v669"), RwfMarks::Kernel);
        assert_eq!(RwfMarks::for_kernel("garbage"), RwfMarks::Kernel);
        for m in [RwfMarks::Authors, RwfMarks::Kernel] {
            assert_eq!(RwfMarks::parse(m.name()), Some(m));
        }
    }

    #[test]
    fn the_first_matching_rule_wins() {
        let c = Config {
            out: "/x".into(),
            out_fd: None,
            default_marks: DefaultMarks::Table1,
            rules: vec![
                Rule::legacy(true, "rocksdb:*=none").unwrap(),
                Rule::legacy(false, "*.sst=barrier").unwrap(),
            ],
            needs: Needs::default(),
            critical: vec![Critical::parse(Target::File, "*.sst").unwrap()],
            polling: Polling::Interrupt,
            rwf_marks: RwfMarks::Authors,
            boost: Boost::None,
            route: None,
            io_uring: IoUring::Pass,
        };
        assert!(c.is_critical(None, Some("/db/1.sst")));
        assert!(!c.is_critical(Some("db_bench"), Some("/db/LOG")));
        let mark = |thread, file| {
            let f = Facts {
                thread,
                file,
                ..Facts::op(crate::marks::Op::Read)
            };
            c.rule_for(&f).map(|r| r.mark)
        };
        assert_eq!(
            mark(Some("rocksdb:low0"), Some("/db/1.sst")),
            Some(Some(Mark::None))
        );
        assert_eq!(
            mark(Some("db_bench"), Some("/db/1.sst")),
            Some(Some(Mark::Barrier))
        );
        assert_eq!(mark(Some("db_bench"), Some("/db/LOG")), None);
        assert_eq!(mark(None, None), None);
    }
}

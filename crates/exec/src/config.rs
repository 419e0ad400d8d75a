//! What `exec` tells the library through the environment: where to write,
//! which kernel's default marks apply, and the rules that override them.
//!
//! `CINTERRUPTS_EXEC_OUT` (a directory), `CINTERRUPTS_EXEC_MARKS` (`table1`
//! or `basis`), `CINTERRUPTS_EXEC_RULES` (one rule a line:
//! `thread GLOB=MARK` or `file GLOB=MARK`, MARK `urgent`, `barrier` or
//! `none`; the first rule that matches wins, thread rules before file
//! rules as given).

use std::path::PathBuf;

use jobs::DefaultMarks;
use policy::Marks;

pub const ENV_OUT: &str = "CINTERRUPTS_EXEC_OUT";
pub const ENV_MARKS: &str = "CINTERRUPTS_EXEC_MARKS";
pub const ENV_RULES: &str = "CINTERRUPTS_EXEC_RULES";
/// Set when the requests are routed through the device: `modelled` (a
/// `--device` profile times them; the program's data moves through the
/// page cache) or `direct` (the program's own O_DIRECT call is the device).
/// The shared region's path is in [`shm::ENV_SHM`].
pub const ENV_DEVICE: &str = "CINTERRUPTS_EXEC_DEVICE";

/// Where the library routes the requests it sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteEnv {
    /// The shared region (`/proc/EXEC_PID/fd/N`).
    pub shm: String,
    /// A modelled device's timing: the data moves through the page cache.
    pub modelled: bool,
}

/// A mark a rule gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Urgent,
    Barrier,
    None,
}

impl Mark {
    pub fn parse(s: &str) -> Result<Mark, String> {
        match s {
            "urgent" => Ok(Mark::Urgent),
            "barrier" => Ok(Mark::Barrier),
            "none" => Ok(Mark::None),
            _ => Err(format!("invalid mark '{s}' (urgent, barrier, none)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mark::Urgent => "urgent",
            Mark::Barrier => "barrier",
            Mark::None => "none",
        }
    }

    pub fn marks(self) -> Marks {
        match self {
            Mark::Urgent => Marks::URGENT,
            Mark::Barrier => Marks::BARRIER,
            Mark::None => Marks::NONE,
        }
    }
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

/// `--mark-thread GLOB=MARK` or `--mark-file GLOB=MARK`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub target: Target,
    pub glob: String,
    pub mark: Mark,
}

impl Rule {
    /// `GLOB=MARK` for `target` (the last `=` splits: a glob may hold one).
    pub fn parse(target: Target, s: &str) -> Result<Rule, String> {
        let (glob, mark) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("'{s}' is not GLOB=MARK"))?;
        if glob.is_empty() {
            return Err(format!("'{s}': the glob is empty"));
        }
        if glob.contains('\n') {
            return Err("a glob cannot hold a newline".into());
        }
        Ok(Rule {
            target,
            glob: glob.to_string(),
            mark: Mark::parse(mark)?,
        })
    }

    /// The rule as one line of `CINTERRUPTS_EXEC_RULES`.
    pub fn to_line(&self) -> String {
        let t = match self.target {
            Target::Thread => "thread",
            Target::File => "file",
        };
        format!("{t} {}={}", self.glob, self.mark.name())
    }

    fn from_line(line: &str) -> Option<Rule> {
        let (t, rest) = line.split_once(' ')?;
        let target = match t {
            "thread" => Target::Thread,
            "file" => Target::File,
            _ => return None,
        };
        Rule::parse(target, rest).ok()
    }
}

/// The library's configuration in one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub out: PathBuf,
    pub default_marks: DefaultMarks,
    pub rules: Vec<Rule>,
    /// `None`: the library observes and every call goes to the kernel.
    pub route: Option<RouteEnv>,
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
        let rules = std::env::var(ENV_RULES)
            .map(|r| r.lines().filter_map(Rule::from_line).collect())
            .unwrap_or_default();
        let route = std::env::var(shm::ENV_SHM).ok().map(|shm| RouteEnv {
            shm,
            modelled: std::env::var(ENV_DEVICE).is_ok_and(|d| d == "modelled"),
        });
        Some(Config {
            out: out.into(),
            default_marks,
            rules,
            route,
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

    pub fn has(&self, target: Target) -> bool {
        self.rules.iter().any(|r| r.target == target)
    }

    /// The first rule matching this thread or file, if any.
    pub fn rule_for(&self, thread: Option<&str>, file: Option<&str>) -> Option<Mark> {
        self.rules.iter().find_map(|r| {
            let text = match r.target {
                Target::Thread => thread?,
                Target::File => file?,
            };
            crate::glob::matches(&r.glob, text).then_some(r.mark)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_round_trip_through_the_environment_text() {
        let rules = vec![
            Rule::parse(Target::Thread, "rocksdb:*=none").unwrap(),
            Rule::parse(Target::File, "*/dump/*=barrier").unwrap(),
        ];
        let text = Config::rules_env(&rules);
        let back: Vec<Rule> = text.lines().filter_map(Rule::from_line).collect();
        assert_eq!(back, rules);
    }

    #[test]
    fn bad_rules_say_why() {
        assert!(Rule::parse(Target::Thread, "rocksdb")
            .unwrap_err()
            .contains("GLOB=MARK"));
        assert!(Rule::parse(Target::File, "x=soon")
            .unwrap_err()
            .contains("invalid mark 'soon'"));
        assert!(Rule::parse(Target::File, "=none")
            .unwrap_err()
            .contains("empty"));
    }

    #[test]
    fn the_first_matching_rule_wins() {
        let c = Config {
            out: "/x".into(),
            default_marks: DefaultMarks::Table1,
            rules: vec![
                Rule::parse(Target::Thread, "rocksdb:*=none").unwrap(),
                Rule::parse(Target::File, "*.sst=barrier").unwrap(),
            ],
            route: None,
        };
        assert_eq!(
            c.rule_for(Some("rocksdb:low0"), Some("/db/1.sst")),
            Some(Mark::None)
        );
        assert_eq!(
            c.rule_for(Some("db_bench"), Some("/db/1.sst")),
            Some(Mark::Barrier)
        );
        assert_eq!(c.rule_for(Some("db_bench"), Some("/db/LOG")), None);
        assert_eq!(c.rule_for(None, None), None);
    }
}

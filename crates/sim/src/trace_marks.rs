//! A trace's requests marked by the rule `--marks-from` names (the
//! marking engine's `marks::trace`: Table 1's logic, plugged batches, the
//! service class, the issuing process, or none), counted per mark for the
//! report. Used by `coalesce --trace` (after its `--mark` rules) and
//! `sim --trace`.
//!
//! The `process` rule needs each process's requests in flight over the
//! whole trace: [`Marker::open`] reads the trace once first (holding 24
//! bytes per request until the pass ends, `marks::trace::Bursts`), so it
//! needs a trace it can read twice (a file).

use std::path::Path;

pub use marks::trace::MarksFrom;
use marks::trace::{self as rule, Bursts, Class, Counts, Facts, Roles};
use policy::Marks;
use traces::{Request, ServiceClass};

/// Marks a trace's requests by one rule and counts them.
#[derive(Debug, Default)]
pub struct Marker {
    from: MarksFrom,
    /// Whether the rule was asked for (`--marks-from`): only then does
    /// the report say it, so the default's outputs are as before.
    named: bool,
    roles: Option<Roles>,
    counts: Counts,
    /// Decided by a `--mark` rule before this one.
    by_rule: u64,
    /// The `process` rule's processes: blocking ones and batchers.
    processes: (usize, usize),
}

/// What the report says of the marks (text: [`Marker::line`]; JSON: this
/// object).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MarksSummary {
    pub rule: &'static str,
    pub description: &'static str,
    pub urgent: u64,
    pub barrier: u64,
    pub none: u64,
    /// Marked by a `--mark` rule (coalesce), before the trace's rule.
    pub by_mark_rule: u64,
    /// Lacked the rule's fact (no class; no process or completion):
    /// marked by Table 1's logic.
    pub table1_for_want_of_the_fact: u64,
    /// The `process` rule: processes never more than one in flight, and
    /// the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocking_processes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batcher_processes: Option<usize>,
}

fn class(c: ServiceClass) -> Class {
    match c {
        ServiceClass::LatencySensitive => Class::LatencySensitive,
        ServiceClass::ThroughputOriented => Class::ThroughputOriented,
        ServiceClass::Other => Class::Other,
    }
}

impl Marker {
    /// TOS Table 1's logic, unnamed: the reports print what they printed
    /// before `--marks-from` existed.
    pub fn table1() -> Marker {
        Marker::default()
    }

    /// The rule `from` (`None`: Table 1's, unnamed) for the trace at
    /// `path`; `process` reads the trace once here. One line naming the
    /// trace if it cannot be read.
    pub fn open(
        from: Option<MarksFrom>,
        path: &Path,
        format: Option<traces::Format>,
    ) -> Result<Marker, String> {
        let mut m = Marker {
            from: from.unwrap_or_default(),
            named: from.is_some(),
            ..Marker::default()
        };
        if m.from == MarksFrom::Process {
            let mut bursts = Bursts::default();
            for r in traces::open(path, format).map_err(|e| e.to_string())? {
                let r = r.map_err(|e| e.to_string())?;
                bursts.observe(r.pid, r.issue_ns, r.complete_ns, r.offset);
            }
            let roles = bursts.finish();
            m.processes = roles.processes();
            m.roles = Some(roles);
        }
        Ok(m)
    }

    /// The rule's marks for `r`, counted.
    pub fn mark(&mut self, r: &Request) -> Marks {
        let role = self
            .roles
            .as_mut()
            .and_then(|roles| roles.role(r.pid, r.issue_ns, r.offset));
        let facts = Facts {
            write: r.write,
            sync: r.sync,
            flush: r.flush,
            batch_last: r.batch.map(|b| b.last),
            class: r.class.map(class),
            role,
        };
        let d = rule::mark(self.from, &facts);
        self.counts.add(d);
        d.marks
    }

    /// `r`'s marks: a `--mark` rule's (`rule`, asked first; `Some`: it
    /// decided), else this rule's; counted either way.
    pub fn mark_after(&mut self, r: &Request, rule: Option<Marks>) -> Marks {
        match rule {
            Some(m) => {
                self.by_rule += 1;
                self.counts.add(rule::Decision {
                    marks: m,
                    fallback: false,
                });
                m
            }
            None => self.mark(r),
        }
    }

    /// What the report says, when the rule was asked for.
    pub fn summary(&self) -> Option<MarksSummary> {
        let process = self.from == MarksFrom::Process;
        self.named.then(|| MarksSummary {
            rule: self.from.name(),
            description: self.from.describe(),
            urgent: self.counts.urgent,
            barrier: self.counts.barrier,
            none: self.counts.none,
            by_mark_rule: self.by_rule,
            table1_for_want_of_the_fact: self.counts.fallback,
            blocking_processes: process.then_some(self.processes.0),
            batcher_processes: process.then_some(self.processes.1),
        })
    }

    /// The report's line (`marks from plug (...): N Urgent, ...`), when
    /// the rule was asked for; else empty.
    pub fn line(&self) -> String {
        let Some(s) = self.summary() else {
            return String::new();
        };
        let mut t = format!(
            "marks from {} ({}): {} Urgent, {} Barrier, {} none",
            s.rule, s.description, s.urgent, s.barrier, s.none
        );
        if s.by_mark_rule > 0 {
            t += &format!("; {} of them by --mark rules", s.by_mark_rule);
        }
        if s.table1_for_want_of_the_fact > 0 {
            t += &format!(
                "; {} lacked the rule's fact, marked by Table 1's logic",
                s.table1_for_want_of_the_fact
            );
        }
        if let (Some(b), Some(n)) = (s.blocking_processes, s.batcher_processes) {
            t += &format!("; {b} blocking processes, {n} batchers");
        }
        t + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_says_nothing_and_a_named_rule_counts_its_marks() {
        let mut m = Marker::table1();
        assert_eq!(m.mark(&Request::default()), Marks::URGENT);
        assert_eq!((m.summary(), m.line()), (None, String::new()));
        let mut m = Marker {
            from: MarksFrom::Class,
            named: true,
            ..Marker::default()
        };
        let ls = Request {
            class: Some(ServiceClass::LatencySensitive),
            write: true,
            ..Default::default()
        };
        let bg = Request {
            class: Some(ServiceClass::ThroughputOriented),
            ..Default::default()
        };
        assert_eq!(m.mark(&ls), Marks::URGENT);
        assert_eq!(m.mark(&bg), Marks::NONE);
        assert_eq!(m.mark(&Request::default()), Marks::URGENT, "no class");
        assert_eq!(m.mark_after(&bg, Some(Marks::BARRIER)), Marks::BARRIER);
        let s = m.summary().unwrap();
        assert_eq!(
            (
                s.urgent,
                s.barrier,
                s.none,
                s.by_mark_rule,
                s.table1_for_want_of_the_fact
            ),
            (2, 1, 1, 1, 1)
        );
        assert!(
            m.line().starts_with("marks from class (service class"),
            "{}",
            m.line()
        );
    }
}

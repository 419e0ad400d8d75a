//! What a task found and did over its runs, said in one line the same way
//! by every experiment that keeps its runs.

/// A task's runs: found stored, run now, failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub runs: usize,
    /// Found in the store: not run.
    pub before: usize,
    /// Run now and stored.
    pub now: usize,
    pub failed: usize,
}

impl Tally {
    /// `15 runs: 9 stored before, 6 run now, 0 failed`, in the
    /// experiment's words for a run (`runs`, `points`) and for one found
    /// in the store (`stored before`, `finished before`).
    pub fn line(&self, run: &str, found: &str) -> String {
        format!(
            "{} {run}: {} {found}, {} run now, {} failed",
            self.runs, self.before, self.now, self.failed
        )
    }
}

//! `cfs`: the CPU scheduler's wake-up decision, Linux CFS as FR 2.2 ("Root
//! Cause 3") describes it and FastResponse's critical boost (FR 3.5,
//! Algorithm 1).
//!
//! - Vanilla (Linux 5.3 `kernel/sched/fair.c`, the kernel FR patched):
//!   `check_preempt_wakeup` preempts the current task, and makes the wakee
//!   the `next` buddy, only when `wakeup_preempt_entity(curr, wakee) == 1`:
//!   the current task's vruntime is ahead of the wakee's by more than the
//!   wake-up granularity ("4 milliseconds on our server", FR 2.2), which
//!   `wakeup_gran` scales by the wakee's weight. `pick_next_entity` takes
//!   `next` only if that is "not unfair": it is not ahead of the leftmost by
//!   more than the granularity (`wakeup_preempt_entity(next, left) < 1`).
//! - Boost (FR Alg. 1): when `next` is empty or holds a non-critical task, a
//!   critical wakee becomes `next` "oblivious to the time threshold" (line 3)
//!   and the run queue is marked need_resched (line 4). Otherwise the normal
//!   wake-up flow runs (line 7).
//! - Sticky (FR 3.5): "once next points to a critical process, we do not
//!   change the next until the awakened critical process is rescheduled".
//!   What sticks is the `next` pointer, and only while it holds a critical
//!   task: the normal flow may still preempt the current task, but it cannot
//!   overwrite a critical `next`; a non-critical `next` is overwritten as in
//!   Linux. It ends when the critical task is picked to run, or leaves the
//!   queue.
//!
//! Where the authors' code differs from the prose (digest A.2.3, A.6 item 5),
//! [`BoostRule`] offers both; see there for the default.
//!
//! Not modelled: the LAST_BUDDY (set only with `sched_nr_latency` = 8 or more
//! runnable tasks) and NEXT_BUDDY (off by default) features, the skip buddy
//! (`yield`), and group scheduling: one run queue of tasks, as
//! `crates/sim/src/sched.rs` has it. Placement of a woken task's vruntime
//! (`place_entity`) is the caller's; the views passed in are after it.

use policy::{Nanos, MS};

/// A task's id, as the simulator numbers its threads.
pub type TaskId = u32;

/// `NICE_0_LOAD` (kernel/sched/sched.h, without the 64-bit fixed-point
/// shift): the weight of a nice-0 task, for which `calc_delta_fair` leaves
/// the granularity unscaled.
pub const NICE_0_WEIGHT: u32 = 1024;

/// `sysctl_sched_wakeup_granularity` before scaling: "1 msec * (1 +
/// ilog(ncpus))" (fair.c, `normalized_sysctl_sched_wakeup_granularity` =
/// 1000000UL).
pub const WAKEUP_GRANULARITY_PER_FACTOR: Nanos = MS;

/// `get_update_sysctl_factor` caps the CPU count at 8 (`min_t(unsigned int,
/// num_online_cpus(), 8)`), so the granularity stops growing at 4 ms.
pub const SCALING_CPU_CAP: u32 = 8;

/// The wake-up granularity Linux sets for `ncpus` online CPUs with the
/// default `SCHED_TUNABLESCALING_LOG`: 1 ms x (1 + ilog2(min(ncpus, 8)))
/// (fair.c `get_update_sysctl_factor`, `update_sysctl`). 8 or more CPUs
/// give FR 2.2's "4 milliseconds on our server" (2 x 8 cores, FR 4.1).
pub fn wakeup_granularity(ncpus: u32) -> Nanos {
    let cpus = ncpus.clamp(1, SCALING_CPU_CAP);
    WAKEUP_GRANULARITY_PER_FACTOR * Nanos::from(1 + cpus.ilog2())
}

/// What the scheduler knows of a task at a decision. A queued task's
/// vruntime does not change until it runs again, so a view taken at
/// wake-up still holds when `next` is picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskView {
    pub id: TaskId,
    pub vruntime: Nanos,
    /// Load weight; [`NICE_0_WEIGHT`] for nice 0.
    pub weight: u32,
    /// Latency-sensitive, set by FR's user API (FR 3.2; `p->critical`).
    pub critical: bool,
}

impl TaskView {
    /// A nice-0 task.
    pub fn new(id: TaskId, vruntime: Nanos, critical: bool) -> Self {
        TaskView {
            id,
            vruntime,
            weight: NICE_0_WEIGHT,
            critical,
        }
    }
}

/// Where the authors' code and prose differ on the boost.
///
/// - `Paper` (default): Algorithm 1 as printed. A critical wakee with no
///   critical `next` takes `next` and preempts; with a critical `next`
///   already there it goes the normal way (preempts only beyond the
///   granularity). At pick time a critical `next` still has to be "not
///   unfair": "the process pointed by next is scheduled only if the
///   difference between its vtime and the minimum vtime is less than a
///   given threshold" (FR 3.5), the paper's guard against starvation.
/// - `Code`: the authors' patch (schedopt, fair.c). `check_preempt_wakeup`
///   always preempts for a critical wakee (`goto preempt`), even when a
///   critical `next` keeps it from becoming `next`; `pick_next_entity` takes
///   a critical `next` without the fairness check. This drops the paper's
///   guard (digest A.6 item 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoostRule {
    Paper,
    Code,
}

/// Which wake-up rule runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Linux CFS unchanged (FR's Vanilla, FR 4.1).
    Vanilla,
    /// FR's critical boost (BS-Opt and BSJ-Opt, FR 4.1).
    Boost(BoostRule),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfsConfig {
    pub rule: Rule,
    /// `sysctl_sched_wakeup_granularity` for a nice-0 wakee; see
    /// [`wakeup_granularity`].
    pub granularity: Nanos,
}

impl CfsConfig {
    /// Linux's default granularity for `ncpus` online CPUs.
    pub fn new(rule: Rule, ncpus: u32) -> Self {
        CfsConfig {
            rule,
            granularity: wakeup_granularity(ncpus),
        }
    }
}

/// What a wake-up decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// `resched_curr`: the current task is marked need_resched and the CPU
    /// enters the scheduler at its next chance (Alg. 1 line 4).
    pub preempt_now: bool,
    /// The wakee became the `next` buddy (Alg. 1 line 3; `set_next_buddy`).
    pub set_next: bool,
}

/// One CPU's CFS run queue, as far as the wake-up decision needs it: the
/// `next` buddy (the run queue's other state is the caller's).
#[derive(Clone, Debug)]
pub struct Cfs {
    cfg: CfsConfig,
    /// The `next` buddy, with its view when it was set.
    next: Option<TaskView>,
}

impl Cfs {
    pub fn new(cfg: CfsConfig) -> Self {
        Cfs { cfg, next: None }
    }

    pub fn config(&self) -> &CfsConfig {
        &self.cfg
    }

    /// The `next` buddy, if any.
    pub fn next(&self) -> Option<TaskId> {
        self.next.map(|t| t.id)
    }

    /// `wakeup_gran`: the granularity in the wakee's virtual time
    /// (`calc_delta_fair`: gran x NICE_0_LOAD / weight).
    fn gran(&self, se: &TaskView) -> Nanos {
        if se.weight == NICE_0_WEIGHT || se.weight == 0 {
            return self.cfg.granularity;
        }
        let scaled =
            u128::from(self.cfg.granularity) * u128::from(NICE_0_WEIGHT) / u128::from(se.weight);
        Nanos::try_from(scaled).unwrap_or(Nanos::MAX)
    }

    /// `wakeup_preempt_entity(curr, se)`: -1 if `se` is not behind `curr`,
    /// 1 if behind by more than the granularity, 0 in between.
    fn wakeup_preempt_entity(&self, curr: &TaskView, se: &TaskView) -> i32 {
        if curr.vruntime <= se.vruntime {
            return -1;
        }
        if curr.vruntime - se.vruntime > self.gran(se) {
            1
        } else {
            0
        }
    }

    /// `set_next_buddy`, with FR's refusal to overwrite a critical `next`
    /// (the sticky rule, FR 3.5). Returns whether the wakee is now `next`.
    fn set_next_buddy(&mut self, se: TaskView) -> bool {
        let sticky = matches!(self.cfg.rule, Rule::Boost(_));
        if sticky && self.next.is_some_and(|n| n.critical && n.id != se.id) {
            return false;
        }
        self.next = Some(se);
        true
    }

    /// A task woke on this CPU and was enqueued (`check_preempt_wakeup`).
    /// `current` is the running task, `None` when the CPU is idle.
    pub fn on_wakeup(
        &mut self,
        _now: Nanos,
        current: Option<TaskView>,
        wakee: TaskView,
    ) -> Decision {
        let Some(curr) = current else {
            // The idle task "by definition" is preempted by a non-idle one
            // (check_preempt_curr, fair.c); no buddy is needed to pick the
            // only runnable task.
            return Decision {
                preempt_now: true,
                set_next: false,
            };
        };
        if curr.id == wakee.id {
            return Decision {
                preempt_now: false,
                set_next: false,
            };
        }
        if let Rule::Boost(how) = self.cfg.rule {
            let next_critical = self.next.is_some_and(|n| n.critical);
            if wakee.critical && !next_critical {
                // Alg. 1 lines 1-4.
                self.next = Some(wakee);
                return Decision {
                    preempt_now: true,
                    set_next: true,
                };
            }
            if wakee.critical && how == BoostRule::Code {
                // The patch: `set_next_buddy(pse); goto preempt;`, the
                // buddy refused while a critical `next` sticks.
                let set_next = self.set_next_buddy(wakee);
                return Decision {
                    preempt_now: true,
                    set_next,
                };
            }
            // Alg. 1 line 7: the normal wake-up flow, below.
        }
        if self.wakeup_preempt_entity(&curr, &wakee) == 1 {
            let set_next = self.set_next_buddy(wakee);
            return Decision {
                preempt_now: true,
                set_next,
            };
        }
        Decision {
            preempt_now: false,
            set_next: false,
        }
    }

    /// The CPU picks the task to run (`pick_next_entity`). `left` is the
    /// leftmost candidate: the queued task with the least vruntime, or the
    /// current task if it is still runnable and has less. Returns the task
    /// to run; the `next` buddy is cleared if it is picked.
    pub fn pick_next(&mut self, _now: Nanos, left: TaskView) -> TaskId {
        let mut pick = left.id;
        if let Some(next) = self.next {
            let forced = next.critical && self.cfg.rule == Rule::Boost(BoostRule::Code);
            // "Someone really wants this to run. If it's not unfair, run it."
            if forced || self.wakeup_preempt_entity(&next, &left) < 1 {
                pick = next.id;
            }
        }
        if self.next.is_some_and(|n| n.id == pick) {
            self.next = None; // clear_buddies
        }
        pick
    }

    /// A task left the run queue (slept, exited, migrated): a `next` buddy
    /// pointing at it is cleared (`dequeue_entity` -> `clear_buddies`).
    pub fn on_dequeue(&mut self, _now: Nanos, task: TaskId) {
        if self.next.is_some_and(|n| n.id == task) {
            self.next = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vanilla() -> Cfs {
        Cfs::new(CfsConfig::new(Rule::Vanilla, 16))
    }

    fn boost(how: BoostRule) -> Cfs {
        Cfs::new(CfsConfig::new(Rule::Boost(how), 16))
    }

    fn task(id: TaskId, vruntime: Nanos) -> TaskView {
        TaskView::new(id, vruntime, false)
    }

    fn critical(id: TaskId, vruntime: Nanos) -> TaskView {
        TaskView::new(id, vruntime, true)
    }

    const NONE: Decision = Decision {
        preempt_now: false,
        set_next: false,
    };
    const BOTH: Decision = Decision {
        preempt_now: true,
        set_next: true,
    };

    #[test]
    fn granularity_grows_with_log2_of_the_cpus_up_to_eight() {
        assert_eq!(wakeup_granularity(1), MS);
        assert_eq!(wakeup_granularity(2), 2 * MS);
        assert_eq!(wakeup_granularity(4), 3 * MS);
        assert_eq!(wakeup_granularity(8), 4 * MS);
        assert_eq!(wakeup_granularity(64), 4 * MS);
        // FR's server, 2 x octa-core: "4 milliseconds on our server".
        assert_eq!(wakeup_granularity(16), 4 * MS);
        assert_eq!(wakeup_granularity(0), MS);
    }

    #[test]
    fn vanilla_does_not_preempt_inside_the_granularity() {
        let mut cfs = vanilla();
        let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), task(2, 6 * MS));
        assert_eq!(d, NONE);
        assert_eq!(cfs.next(), None);
        // Exactly the granularity is not "more than" it.
        let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), task(2, 6 * MS - 1));
        assert_eq!(d, BOTH);
        // A critical wakee is nothing special to vanilla CFS.
        let mut cfs = vanilla();
        let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(2, 9 * MS));
        assert_eq!(d, NONE);
    }

    #[test]
    fn vanilla_preempts_beyond_the_granularity_and_sets_next() {
        let mut cfs = vanilla();
        let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), task(2, 5 * MS));
        assert_eq!(d, BOTH);
        assert_eq!(cfs.next(), Some(2));
        // The leftmost is not far ahead of next: next runs and is cleared.
        assert_eq!(cfs.pick_next(0, task(3, 4 * MS)), 2);
        assert_eq!(cfs.next(), None);
    }

    #[test]
    fn the_granularity_is_scaled_by_the_wakee_weight() {
        let mut cfs = vanilla();
        // A heavier wakee (nice -5, weight 3121) sees a smaller granularity.
        let heavy = TaskView {
            weight: 3121,
            ..task(2, 8 * MS)
        };
        assert_eq!(cfs.on_wakeup(0, Some(task(1, 10 * MS)), heavy), BOTH);
        // A lighter one (nice 5, weight 335) a larger one.
        let mut cfs = vanilla();
        let light = TaskView {
            weight: 335,
            ..task(2, 0)
        };
        assert_eq!(cfs.on_wakeup(0, Some(task(1, 10 * MS)), light), NONE);
    }

    #[test]
    fn a_zero_weight_wakee_gets_the_unscaled_granularity() {
        // calc_delta_fair divides by the weight; a weight of 0 (no load
        // given) is taken as nice 0 rather than dividing by it.
        let zero = |vruntime| TaskView {
            weight: 0,
            ..task(2, vruntime)
        };
        let mut cfs = vanilla();
        assert_eq!(cfs.on_wakeup(0, Some(task(1, 10 * MS)), zero(6 * MS)), NONE);
        assert_eq!(
            cfs.on_wakeup(0, Some(task(1, 10 * MS)), zero(6 * MS - 1)),
            BOTH
        );
    }

    #[test]
    fn a_critical_wakee_under_the_boost_preempts_inside_the_granularity() {
        for how in [BoostRule::Paper, BoostRule::Code] {
            let mut cfs = boost(how);
            // 10 us behind, far inside 4 ms; even ahead of the current task.
            let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(2, 10 * MS + 5));
            assert_eq!(d, BOTH, "{how:?}");
            assert_eq!(cfs.next(), Some(2));
            // A non-critical wakee is still vanilla under the boost.
            let mut cfs = boost(how);
            let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), task(2, 9 * MS));
            assert_eq!(d, NONE, "{how:?}");
        }
    }

    #[test]
    fn the_boost_overwrites_a_non_critical_next() {
        let mut cfs = boost(BoostRule::Paper);
        assert_eq!(cfs.on_wakeup(0, Some(task(1, 10 * MS)), task(2, 0)), BOTH);
        assert_eq!(cfs.next(), Some(2));
        let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(3, 9 * MS));
        assert_eq!(d, BOTH);
        assert_eq!(cfs.next(), Some(3));
    }

    #[test]
    fn the_normal_flow_under_the_boost_overwrites_a_non_critical_next() {
        // FR 3.5: only a critical next sticks; a non-critical one is
        // overwritten as in Linux (check_preempt_wakeup -> set_next_buddy).
        for how in [BoostRule::Paper, BoostRule::Code] {
            let mut cfs = boost(how);
            assert_eq!(cfs.on_wakeup(0, Some(task(1, 10 * MS)), task(2, 0)), BOTH);
            let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), task(3, MS));
            assert_eq!(d, BOTH, "{how:?}");
            assert_eq!(cfs.next(), Some(3), "{how:?}");
        }
    }

    #[test]
    fn a_critical_next_sticks_until_it_runs() {
        for how in [BoostRule::Paper, BoostRule::Code] {
            let mut cfs = boost(how);
            cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(2, 10 * MS));
            // A non-critical wakee far behind preempts, but next stays.
            let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), task(3, 0));
            assert_eq!(
                d,
                Decision {
                    preempt_now: true,
                    set_next: false
                },
                "{how:?}"
            );
            assert_eq!(cfs.next(), Some(2));
            // Once the critical task has been picked, next is free again.
            assert_eq!(cfs.pick_next(0, task(1, 10 * MS)), 2);
            assert_eq!(cfs.next(), None);
            assert_eq!(cfs.on_wakeup(0, Some(task(2, 10 * MS)), task(3, 0)), BOTH);
            assert_eq!(cfs.next(), Some(3));
        }
    }

    #[test]
    fn a_second_critical_wakee_follows_the_normal_flow_in_the_paper() {
        let mut cfs = boost(BoostRule::Paper);
        cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(2, 10 * MS));
        // Alg. 1 line 7: inside the granularity, no preemption; next stays.
        let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(3, 9 * MS));
        assert_eq!(d, NONE);
        assert_eq!(cfs.next(), Some(2));
    }

    #[test]
    fn a_second_critical_wakee_always_preempts_in_the_code() {
        let mut cfs = boost(BoostRule::Code);
        cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(2, 10 * MS));
        let d = cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(3, 9 * MS));
        assert_eq!(
            d,
            Decision {
                preempt_now: true,
                set_next: false
            }
        );
        assert_eq!(cfs.next(), Some(2));
    }

    #[test]
    fn the_paper_keeps_the_fairness_guard_at_pick_time_and_the_code_drops_it() {
        // The critical next is 5 ms ahead of the leftmost (more than 4 ms).
        let mut paper = boost(BoostRule::Paper);
        paper.on_wakeup(0, Some(task(1, 20 * MS)), critical(2, 10 * MS));
        assert_eq!(paper.pick_next(0, task(3, 5 * MS)), 3);
        // Not picked: it has not run, so it still sticks.
        assert_eq!(paper.next(), Some(2));
        assert_eq!(paper.pick_next(0, task(2, 10 * MS)), 2);
        assert_eq!(paper.next(), None);

        let mut code = boost(BoostRule::Code);
        code.on_wakeup(0, Some(task(1, 20 * MS)), critical(2, 10 * MS));
        assert_eq!(code.pick_next(0, task(3, 5 * MS)), 2);
        assert_eq!(code.next(), None);
    }

    #[test]
    fn an_idle_cpu_runs_the_wakee_at_once() {
        let mut cfs = vanilla();
        let d = cfs.on_wakeup(0, None, task(2, 0));
        assert!(d.preempt_now);
        assert_eq!(cfs.next(), None);
    }

    #[test]
    fn a_dequeued_next_is_cleared() {
        let mut cfs = boost(BoostRule::Paper);
        cfs.on_wakeup(0, Some(task(1, 10 * MS)), critical(2, 10 * MS));
        cfs.on_dequeue(0, 2);
        assert_eq!(cfs.next(), None);
        assert_eq!(cfs.pick_next(0, task(1, 10 * MS)), 1);
    }
}

//! `eevdf`: the CPU scheduler's pick and wake-up rule since Linux 6.6,
//! Earliest Eligible Virtual Deadline First (Stoica and Abdel-Wahab, "Earliest
//! Eligible Virtual Deadline First: A Flexible and Accurate Mechanism for
//! Proportional Share Resource Allocation", 1995; Linux kernel/sched/fair.c
//! as of 6.18, the kernel this project's VM runs).
//!
//! One run queue of equal-weight (nice 0) tasks, as `sim`'s:
//!
//! - Each task asks for a `slice` of CPU (`sysctl_sched_base_slice`, 0.75 ms
//!   scaled by 1 + ilog2(min(ncpus, 8)), [`base_slice`]); its virtual
//!   deadline is its vruntime plus the slice (`update_deadline`: for nice 0,
//!   `calc_delta_fair(slice)` is the slice).
//! - `V` is the queue's average vruntime over the runnable tasks, the
//!   running one included (`avg_vruntime`); a task is *eligible* when its
//!   vruntime is not ahead of `V` (`entity_eligible`: lag `V - v` >= 0).
//! - The pick (`pick_eevdf`) takes, among the eligible tasks, the one with
//!   the earliest deadline; the running task keeps the CPU while its slice is
//!   protected (`RUN_TO_PARITY`: `protect_slice`, vruntime below `vprot`,
//!   set at its pick to its deadline when every slice is the same,
//!   `set_protect_slice`), and while it is eligible and its deadline is the
//!   earliest.
//! - A wake-up preempts when the pick, made at once, is the wakee
//!   (`check_preempt_wakeup_fair`: `pick_eevdf(cfs_rq) == pse`); the slice
//!   protection of the running task holds it off. `PREEMPT_SHORT` (a wakee
//!   with a shorter slice cancels the protection) never applies with equal
//!   slices.
//! - A task that used its slice (vruntime past its deadline) gets the next
//!   deadline and the CPU is rescheduled (`update_deadline`, from
//!   `update_curr` at the tick).
//! - A sleeping task keeps its lag (`PLACE_LAG`): at sleep `vlag = V - v`,
//!   clamped to the largest slice plus a tick (`entity_lag`); at wake-up it
//!   is placed at `V - vlag x (W + w) / W`, the lag scaled for the load `W`
//!   already there (`place_entity`), with a fresh deadline. An ineligible
//!   sleeper (negative lag) stays in place, as `DELAY_DEQUEUE` keeps it on
//!   the queue, until `V` passes it; then its lag is zero (`DELAY_ZERO`).
//!
//! Not modelled: weights other than nice 0 (the simulator's threads are all
//! nice 0), custom slices (`sched_setattr`), the delayed sleeper's own part in
//! `V` while it waits on the queue, group scheduling, and the `next` buddy
//! (`PICK_BUDDY` only serves `yield_to` and cgroup wake-ups, `NEXT_BUDDY` is
//! off by default).

use policy::{Nanos, US};

/// A task's id, as the simulator numbers its threads.
pub type TaskId = u32;

/// `normalized_sysctl_sched_base_slice` (kernel/sched/fair.c, 750000ULL):
/// the base slice before scaling.
pub const BASE_SLICE_PER_FACTOR: Nanos = 750 * US;

/// `get_update_sysctl_factor` caps the CPU count at 8, as for CFS.
pub const SCALING_CPU_CAP: u32 = 8;

/// The base slice Linux sets for `ncpus` online CPUs with the default
/// `SCHED_TUNABLESCALING_LOG`: 0.75 ms x (1 + ilog2(min(ncpus, 8)))
/// (`update_sysctl`): 1.5 ms on this project's 2-vCPU VM, 3 ms on 8 or more.
pub fn base_slice(ncpus: u32) -> Nanos {
    let cpus = ncpus.clamp(1, SCALING_CPU_CAP);
    BASE_SLICE_PER_FACTOR * Nanos::from(1 + cpus.ilog2())
}

/// What EEVDF keeps of a task beyond its vruntime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Task {
    deadline: Nanos,
    /// The vruntime up to which the running task's slice is protected.
    vprot: Nanos,
    /// `V - v` at its last sleep (clamped), its place on return.
    vlag: i64,
}

/// The rule's state for one run queue: every task's deadline, protection and
/// lag, by task id.
#[derive(Clone, Debug)]
pub struct Eevdf {
    slice: Nanos,
    /// `TICK_NSEC`, part of the lag's bound.
    tick: Nanos,
    tasks: Vec<Task>,
}

/// A runnable task as the pick sees it: (task, vruntime).
pub type Entity = (TaskId, Nanos);

impl Eevdf {
    /// `slice` for every task ([`base_slice`]); `tick` the scheduler tick.
    pub fn new(slice: Nanos, tick: Nanos) -> Eevdf {
        Eevdf {
            slice: slice.max(1),
            tick,
            tasks: Vec::new(),
        }
    }

    pub fn slice(&self) -> Nanos {
        self.slice
    }

    fn task(&mut self, id: TaskId) -> &mut Task {
        let i = id as usize;
        if i >= self.tasks.len() {
            self.tasks.resize(i + 1, Task::default());
        }
        &mut self.tasks[i]
    }

    /// A task's virtual deadline (0 for one never placed).
    pub fn deadline(&self, id: TaskId) -> Nanos {
        self.tasks.get(id as usize).map_or(0, |t| t.deadline)
    }

    /// `avg_vruntime`: the mean vruntime of the runnable tasks (equal
    /// weights), `None` for none.
    pub fn average(entities: impl IntoIterator<Item = Nanos>) -> Option<Nanos> {
        let (mut sum, mut n) = (0u128, 0u128);
        for v in entities {
            sum += u128::from(v);
            n += 1;
        }
        // Rounded down, as the kernel's division of the weighted sum.
        (n > 0).then(|| (sum / n) as Nanos)
    }

    /// The largest lag kept across a sleep: the largest slice plus a tick
    /// (`entity_lag`: `cfs_rq_max_slice(cfs_rq) + TICK_NSEC`).
    fn lag_limit(&self) -> i64 {
        i64::try_from(self.slice.saturating_add(self.tick)).unwrap_or(i64::MAX)
    }

    /// A new task enters the queue at `vruntime` (`place_entity` with
    /// `ENQUEUE_INITIAL`: `PLACE_DEADLINE_INITIAL` gives it half a slice, so
    /// that it starts soon).
    pub fn start(&mut self, id: TaskId, vruntime: Nanos) {
        let half = self.slice / 2;
        *self.task(id) = Task {
            deadline: vruntime.saturating_add(half),
            vprot: 0,
            vlag: 0,
        };
    }

    /// The running task `id` left the queue to sleep at `vruntime`, with `V`
    /// the queue's average including it: its lag is kept for its return.
    pub fn sleep(&mut self, id: TaskId, vruntime: Nanos, average: Nanos) {
        let limit = self.lag_limit();
        let limit = i128::from(limit);
        let lag = (i128::from(average) - i128::from(vruntime)).clamp(-limit, limit);
        self.task(id).vlag = lag as i64;
    }

    /// Where a waking task goes (`place_entity`, `PLACE_LAG`), given its
    /// vruntime at sleep, the queue's average `average` (`None`: nothing
    /// runnable) and `load`, the runnable tasks already there, the running
    /// one included. Returns its vruntime; its deadline is set.
    pub fn wake(
        &mut self,
        id: TaskId,
        vruntime: Nanos,
        average: Option<Nanos>,
        load: u64,
    ) -> Nanos {
        let slice = self.slice;
        let t = self.task(id);
        let placed = match average {
            // Alone: no lag to keep (`cfs_rq->nr_queued` is 0), at the
            // queue's own clock, which the caller's vruntime already is.
            None => vruntime,
            Some(v) if t.vlag < 0 => {
                // Ineligible at its sleep: still queued, delayed
                // (DELAY_DEQUEUE), in place until V passes it; then picked,
                // dequeued with its lag clipped to 0 (DELAY_ZERO).
                if v >= vruntime {
                    v
                } else {
                    t.vlag = 0;
                    return vruntime;
                }
            }
            Some(v) => {
                // lag x (W + w) / W, so that the lag survives the average
                // moving by the task's own arrival (place_entity's comment).
                let lag = i128::from(t.vlag) * i128::from(load + 1) / i128::from(load.max(1));
                let placed = (i128::from(v) - lag).max(0);
                placed as Nanos
            }
        };
        t.vlag = 0;
        t.deadline = placed.saturating_add(slice);
        placed
    }

    /// `entity_eligible`: not ahead of the average.
    fn eligible(vruntime: Nanos, average: Nanos) -> bool {
        vruntime <= average
    }

    /// `pick_eevdf`: among `queued` and the running task `current` (if it is
    /// still runnable), the eligible one with the earliest deadline; the
    /// running task while its slice is protected (`protect`) and it is
    /// eligible. Ties go to the earlier vruntime, then the lower id (the
    /// kernel's tree order is by deadline, then insertion).
    pub fn pick(
        &self,
        queued: &[Entity],
        current: Option<Entity>,
        protect: bool,
    ) -> Option<TaskId> {
        let all = queued.iter().copied().chain(current);
        let average = Eevdf::average(all.clone().map(|(_, v)| v))?;
        if queued.len() + usize::from(current.is_some()) == 1 {
            return all.map(|(id, _)| id).next();
        }
        let current = current.filter(|&(_, v)| Eevdf::eligible(v, average));
        if let Some((id, v)) = current {
            if protect && v < self.tasks.get(id as usize).map_or(0, |t| t.vprot) {
                return Some(id);
            }
        }
        let key = |&(id, v): &Entity| (self.deadline(id), v, id);
        let best = queued
            .iter()
            .copied()
            .filter(|&(_, v)| Eevdf::eligible(v, average))
            .min_by_key(key);
        match (best, current) {
            (Some(b), Some(c)) if key(&c) < key(&b) => Some(c.0),
            (Some(b), _) => Some(b.0),
            (None, Some(c)) => Some(c.0),
            // Nothing eligible can only be rounding: the earliest deadline.
            (None, None) => queued.iter().copied().min_by_key(key).map(|(id, _)| id),
        }
    }

    /// `id` was picked to run (`set_next_entity`): its slice is protected
    /// up to its deadline (every slice being the same, `set_protect_slice`
    /// leaves `vprot` at the deadline).
    pub fn picked(&mut self, id: TaskId) {
        let t = self.task(id);
        t.vprot = t.deadline;
    }

    /// The running task's vruntime reached `vruntime` (`update_curr` ->
    /// `update_deadline`): past its deadline it gets the next one, and the
    /// CPU is to be rescheduled. Returns whether its slice ended.
    pub fn ran_to(&mut self, id: TaskId, vruntime: Nanos) -> bool {
        let slice = self.slice;
        let t = self.task(id);
        if vruntime < t.deadline {
            return false;
        }
        t.deadline = vruntime.saturating_add(slice);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::MS;

    #[test]
    fn the_base_slice_grows_with_log2_of_the_cpus_up_to_eight() {
        assert_eq!(base_slice(1), 750 * US);
        assert_eq!(base_slice(2), 1_500 * US);
        assert_eq!(base_slice(4), 2_250 * US);
        assert_eq!(base_slice(8), 3 * MS);
        assert_eq!(base_slice(28), 3 * MS);
        assert_eq!(base_slice(0), 750 * US);
    }

    fn queue() -> Eevdf {
        Eevdf::new(3 * MS, 4 * MS)
    }

    #[test]
    fn the_pick_is_the_eligible_task_with_the_earliest_deadline() {
        let mut e = queue();
        // Deadlines: 1 at 10 ms, 2 at 8 ms, 3 at 5 ms; vruntimes 5, 6, 9 ms:
        // V = 6.67 ms, so 3 (ahead of V) is not eligible despite its deadline.
        e.wake(1, 7 * MS, None, 0);
        e.wake(2, 5 * MS, None, 0);
        e.wake(3, 2 * MS, None, 0);
        let q = [(1, 5 * MS), (2, 6 * MS), (3, 9 * MS)];
        assert_eq!(e.pick(&q, None, true), Some(2));
        // With 3 behind, it is eligible and first.
        let q = [(1, 5 * MS), (2, 6 * MS), (3, 4 * MS)];
        assert_eq!(e.pick(&q, None, true), Some(3));
    }

    #[test]
    fn a_protected_slice_holds_off_an_earlier_deadline_until_it_is_used() {
        let mut e = queue();
        e.wake(9, 10 * MS, None, 0); // deadline 13 ms
        e.picked(9);
        e.start(1, 10 * MS); // a new task: deadline 11.5 ms, eligible
        let cur = Some((9, 10 * MS));
        assert_eq!(e.pick(&[(1, 10 * MS)], cur, true), Some(9));
        // Without the protection, the earlier deadline wins.
        assert_eq!(e.pick(&[(1, 10 * MS)], cur, false), Some(1));
        // Protected but no longer eligible (ahead of V = 10.5 ms): it loses.
        assert_eq!(e.pick(&[(1, 10 * MS)], Some((9, 11 * MS)), true), Some(1));
        // Eligible, protected, and it keeps the CPU.
        assert_eq!(e.pick(&[(1, 12 * MS)], Some((9, 11 * MS)), true), Some(9));
    }

    #[test]
    fn a_used_slice_gets_the_next_deadline() {
        let mut e = queue();
        e.wake(1, 0, None, 0);
        assert!(!e.ran_to(1, 3 * MS - 1));
        assert!(e.ran_to(1, 3 * MS));
        assert_eq!(e.deadline(1), 6 * MS);
    }

    #[test]
    fn a_sleeper_keeps_its_lag_scaled_for_the_load_it_returns_to() {
        let mut e = queue();
        // Slept 1 ms behind V: returns 1 ms x (1 + 1) / 1 behind the new V
        // with one task running.
        e.sleep(1, 4 * MS, 5 * MS);
        assert_eq!(e.wake(1, 4 * MS, Some(20 * MS), 1), 18 * MS);
        assert_eq!(e.deadline(1), 21 * MS);
        // The lag is bounded by a slice plus a tick (7 ms here).
        e.sleep(2, 0, 100 * MS);
        assert_eq!(e.wake(2, 0, Some(100 * MS), 3), 100 * MS - 7 * MS * 4 / 3);
    }

    #[test]
    fn an_ineligible_sleeper_waits_in_place_until_the_average_passes_it() {
        let mut e = queue();
        e.sleep(1, 8 * MS, 5 * MS); // 3 ms ahead of V
        assert_eq!(e.wake(1, 8 * MS, Some(6 * MS), 1), 8 * MS);
        e.sleep(1, 8 * MS, 5 * MS);
        assert_eq!(e.wake(1, 8 * MS, Some(9 * MS), 1), 9 * MS);
        assert_eq!(e.deadline(1), 12 * MS);
    }

    // The cases below hold the arithmetic to kernel/sched/fair.c as of
    // 147f3efaa241 ("sched/fair: Implement an EEVDF-like scheduling
    // policy", v6.6) and the later commits this module cites; each names
    // the function whose rule it checks.

    #[test]
    fn a_new_task_starts_with_half_a_slice() {
        // place_entity: PLACE_DEADLINE_INITIAL with ENQUEUE_INITIAL,
        // `vslice /= 2`, then `se->deadline = se->vruntime + vslice`.
        let mut e = queue();
        e.start(1, 10 * MS);
        assert_eq!(e.deadline(1), 10 * MS + 1_500 * US);
        e.start(2, 0);
        assert_eq!(e.deadline(2), 1_500 * US);
        assert_eq!(e.slice(), 3 * MS);
        // No slice is empty (a zero would make every deadline now).
        assert_eq!(Eevdf::new(0, 4 * MS).slice(), 1);
    }

    #[test]
    fn a_used_slice_is_renewed_from_where_the_task_is() {
        // update_deadline: `if ((s64)(se->vruntime - se->deadline) < 0)
        // return false;` then `se->deadline = se->vruntime +
        // calc_delta_fair(se->slice, se)`: from the vruntime reached (a
        // tick late, past the old deadline), not from the old deadline.
        let mut e = queue();
        e.wake(1, 0, None, 0);
        assert!(e.ran_to(1, 3_400 * US));
        assert_eq!(e.deadline(1), 6_400 * US);
        assert!(!e.ran_to(1, 6_399 * US));
        assert_eq!(e.deadline(1), 6_400 * US);
    }

    #[test]
    fn the_average_is_rounded_down_and_never_overflows() {
        // avg_vruntime divides the weighted sum by the load (div_s64).
        assert_eq!(Eevdf::average([1, 2]), Some(1));
        assert_eq!(Eevdf::average([3, 4, 6]), Some(4));
        assert_eq!(Eevdf::average([u64::MAX, u64::MAX]), Some(u64::MAX));
        assert_eq!(Eevdf::average([]), None);
    }

    #[test]
    fn a_task_exactly_at_the_average_is_eligible() {
        // entity_eligible: "Entity is eligible once it received less
        // service than it ought to have, eg. lag >= 0", lag = V - v: at
        // v == V it is eligible. V = (4 + 6 + 8) / 3 = 6 ms: the running
        // task (6 ms, deadline 7 ms) and the queued one at 4 ms are
        // eligible, the one at 8 ms (deadline 5 ms) is not.
        let mut e = queue();
        e.wake(1, 17 * MS, None, 0); // deadline 20 ms
        e.wake(2, 4 * MS, None, 0); // deadline 7 ms
        e.wake(3, 2 * MS, None, 0); // deadline 5 ms
        let q = [(1, 4 * MS), (3, 8 * MS)];
        assert_eq!(e.pick(&q, Some((2, 6 * MS)), true), Some(2));
        // Not running but queued at V, it is picked the same.
        assert_eq!(
            e.pick(&[(1, 4 * MS), (2, 6 * MS), (3, 8 * MS)], None, true),
            Some(2)
        );
    }

    #[test]
    fn the_protection_ends_at_the_deadline_it_was_set_to() {
        // protect_slice: `(s64)(se->vprot - se->vruntime) > 0`, so the
        // running task at exactly vprot is no longer protected;
        // set_protect_slice leaves vprot at the deadline when every slice
        // is the same.
        let mut e = queue();
        e.wake(9, 10 * MS, None, 0); // deadline 13 ms
        e.picked(9);
        e.wake(1, 9_500 * US, None, 0); // deadline 12.5 ms
        e.wake(2, 14 * MS, None, 0); // deadline 17 ms
                                     // V = 13 ms: 9 (at its vprot) and 1 are eligible; 1's deadline is
                                     // earlier.
        let q = [(1, 12 * MS), (2, 14 * MS)];
        assert_eq!(e.pick(&q, Some((9, 13 * MS)), true), Some(1));
        // Just short of vprot it keeps the CPU (V = 13 ms - 1/3 ns: 9
        // still eligible).
        let q = [(1, 12 * MS), (2, 14 * MS)];
        assert_eq!(e.pick(&q, Some((9, 13 * MS - 1)), true), Some(9));
        // A task never picked has no protection.
        let e = queue();
        assert_eq!(e.pick(&[(1, 5 * MS)], Some((7, 5 * MS)), true), Some(1));
    }

    #[test]
    fn the_running_task_with_the_earliest_deadline_keeps_the_cpu() {
        // pick_eevdf (147f3efaa241): `if (!best || (curr &&
        // deadline_gt(deadline, best, curr))) best = curr;`: unprotected,
        // the running task still wins when its deadline is the earliest
        // of the eligible.
        let mut e = queue();
        e.wake(1, 2 * MS, None, 0); // deadline 5 ms
        e.wake(2, MS, None, 0); // deadline 4 ms
        assert_eq!(e.pick(&[(1, 5 * MS)], Some((2, 5 * MS)), false), Some(2));
        assert_eq!(e.pick(&[(2, 5 * MS)], Some((1, 5 * MS)), false), Some(2));
        // The running task eligible, every queued one ahead of V: the
        // running one.
        assert_eq!(e.pick(&[(1, 9 * MS)], Some((2, MS)), false), Some(2));
    }

    #[test]
    fn a_sleeper_without_lag_returns_at_the_average() {
        // place_entity: `se->vruntime = vruntime - lag` with V and the lag
        // scaled; a lag of 0 (it slept at V) places it at the new V,
        // behind where it slept if V is now behind that.
        let mut e = queue();
        e.sleep(1, 5 * MS, 5 * MS);
        assert_eq!(e.wake(1, 5 * MS, Some(3 * MS), 1), 3 * MS);
        assert_eq!(e.deadline(1), 6 * MS);
        // A lag is spent by its placement: waking again without a sleep
        // between keeps none.
        e.sleep(2, 4 * MS, 5 * MS);
        assert_eq!(e.wake(2, 4 * MS, Some(10 * MS), 1), 8 * MS);
        assert_eq!(e.wake(2, 8 * MS, Some(10 * MS), 1), 10 * MS);
        // With nothing else runnable the lag is not applied (the kernel's
        // `cfs_rq->nr_queued` is 0): the task stays where it is.
        e.sleep(3, 4 * MS, 5 * MS);
        assert_eq!(e.wake(3, 4 * MS, None, 0), 4 * MS);
        assert_eq!(e.deadline(3), 7 * MS);
    }

    #[test]
    fn a_lag_scales_by_the_load_and_truncates_as_div_s64() {
        // place_entity: `lag *= load + w; lag = div_s64(lag, load)`, nice 0
        // weights: lag x (n + 1) / n for n runnable, truncated. 1 ms of lag
        // over 3 tasks: 1.333333 ms.
        let mut e = queue();
        e.sleep(1, 9 * MS, 10 * MS);
        assert_eq!(e.wake(1, 9 * MS, Some(10 * MS), 3), 10 * MS - 1_333_333);
        // `if (WARN_ON_ONCE(!load)) load = 1;`
        e.sleep(1, 9 * MS, 10 * MS);
        assert_eq!(e.wake(1, 9 * MS, Some(10 * MS), 0), 9 * MS);
        // A lag larger than the clock: placed at 0, not wrapped.
        let mut e = Eevdf::new(50 * MS, 4 * MS);
        e.sleep(1, 0, 40 * MS);
        assert_eq!(e.wake(1, 0, Some(10 * MS), 1), 0);
    }

    #[test]
    fn an_ineligible_sleeper_placed_once_the_average_reaches_it() {
        // At V == v the delayed task is eligible (entity_eligible, lag
        // >= 0), so the kernel's next pick_next_entity dequeues it
        // (DEQUEUE_DELAYED, its lag clipped to 0 by DELAY_ZERO). This model
        // does not time that pick: it takes a delayed sleeper as dequeued
        // once V has reached it, placed at V with a fresh deadline, as for
        // any V past it.
        let mut e = queue();
        e.wake(1, 0, None, 0);
        e.sleep(1, 8 * MS, 5 * MS);
        assert_eq!(e.wake(1, 8 * MS, Some(8 * MS), 1), 8 * MS);
        assert_eq!(e.deadline(1), 11 * MS);
        // Short of it, it stays in place with the deadline it had.
        e.sleep(1, 12 * MS, 10 * MS);
        assert_eq!(e.wake(1, 12 * MS, Some(11 * MS), 1), 12 * MS);
        assert_eq!(e.deadline(1), 11 * MS);
    }

    #[test]
    fn a_lone_task_is_picked_whatever_its_deadline() {
        let e = queue();
        assert_eq!(e.pick(&[(4, 50 * MS)], None, true), Some(4));
        assert_eq!(e.pick(&[], Some((4, 50 * MS)), true), Some(4));
        assert_eq!(e.pick(&[], None, true), None);
    }
}

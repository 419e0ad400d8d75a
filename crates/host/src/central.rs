//! `central`: UnICom's central completion poller (Pan, Liang, Noh, Li,
//! Guan, Kuo, Xue, "UnICom: A Universally High-Performant I/O Completion
//! Mechanism for Modern Computer Systems", USENIX FAST'26; issue 40): one
//! kernel thread polls the completion queues of every thread (TagPoll),
//! and a thread waiting for its I/O is skipped by the CPU scheduler while
//! its tag is in flight instead of sleeping and being woken (TagSched).
//!
//! **What could be read.** The paper's text could not: only its abstract
//! (usenix.org/conference/fast26/presentation/pan), which names TagSched
//! ("a lightweight tag-guided scheduling mechanism that minimizes sleep
//! and wake-up overhead"), TagPoll ("a centralized kernel-level I/O
//! completion thread that consolidates polling across threads and
//! processes") and SKIP (kernel-assisted direct access). The authors'
//! artifact could, `RiweiPan/UnICom` (commit 33284e5b1; "UnICom (namely
//! Nap in the source code)", its README), and every rule below cites it:
//! `kernel/nap/*.c` (the module) and the CFS changes under
//! `kernel/linux-6.5.1/kernel/sched/`. The artifact's "nap" mode is the
//! module built with `NAP_USE_NAP_POLL` (`utils/enable_nap.sh`: `make
//! NAP_POLL=1`; `kernel/nap/Makefile`: `-DNAP_USE_NAP_POLL`).
//!
//! **TagPoll, the poller's loop** (`nap_main.c`, `nap_io_complete_task`):
//! forever, one pass over all of the namespace's queues in order, each
//! drained whole (`nvme_nap_complete_io`: every CQE whose phase matches,
//! one CQ doorbell write for the lot, then `complete_io` per entry); a
//! pass that completed nothing calls `cond_resched()`; every pass ends in
//! `cpu_relax()`. **The poller never sleeps**: there is no timer, no
//! wait queue and no use of the tags' expected completion times in the
//! artifact; the tags guide the waiters' scheduling (below), not the
//! poller's. So [`Poller::after_pass`] answers "again" or "let another
//! runnable task in first", never "sleep until". A tag-guided sleep of
//! the poller (until the earliest expected completion) is not modelled:
//! nothing published or readable says UnICom does it.
//!
//! **Its core** (`nap_main.c`: `ct_cpu_id = 31`, a module parameter, the
//! thread bound with `set_cpus_allowed_ptr(current, cpumask_of(cpuid))`;
//! `ae/micro-io/io-only-read/run_motiv_exp_4k.bash` runs the `nap` mode's
//! threads on cores 16-30 and the other modes' on 16-31): a core of its
//! own, the last of the benchmark's range. [`place`] picks the
//! highest-numbered core no thread runs on; when every core runs a thread
//! it shares the highest-numbered one (assumed: the artifact never
//! shares; the core is then the CPU scheduler's to divide).
//!
//! **No interrupts** (`nap_nvme_queues.c`, `alloc_cq`: the CQ is created
//! with `NVME_QUEUE_PHYS_CONTIG` only, not `NVME_CQ_IRQ_ENABLED`): the
//! poller's queues raise none, and nothing else completes their
//! requests. A device-side strategy (coalescing, adaptive, cint) has
//! nothing to act on there ([`RAISES_INTERRUPTS`]).
//!
//! **TagSched, a waiter's side** (`nap_nvme_request.c`, `nvme_nap_poll`;
//! the scheduler's `nap_submit_update_sched_state` and
//! `nap_complete_update_sched_state`, `kernel/sched/fair.c`): at
//! submission the thread's `cskip` goes down by one (a tag in flight); CFS
//! (`pick_next_entity`, patched) then prefers any entity with `cskip >= 0`
//! to it. How the thread waits is decided per I/O at the previous
//! completion (`complete_io`: `nr_running_tasks(req->task) <= 1` ->
//! `IOCT_POLL`, else `IOCT_NAP_POLL`; a queue starts at `IOCT_NAP_POLL`,
//! `nap_init_io_queues`): alone on its core it spins on the request's
//! status word (`cpu_relax()`, [`WaitKind::Spin`]); with company it
//! calls `schedule()` in a loop, skipped while its tag is in flight
//! ([`WaitKind::Skip`]): the others run. It never leaves the run queue,
//! so no `try_to_wake_up` is needed to bring it back.
//!
//! **Whom the poller wakes** (`complete_io`, then
//! `nap_complete_update_sched_state`): per completed entry, under the
//! waiter's run-queue lock, `cskip` goes up by one; at 0 the waiter may be
//! picked again, and when another task that is not an I/O thread
//! (`my_io_flag != 1`) runs on its core the poller marks that core for
//! rescheduling (`resched_curr`: an IPI for a remote core) so the waiter
//! gets it back ([`preempts`]). A spinning waiter just sees its status
//! word change: no wake-up at all.
//!
//! **What the CPU pays**: the poller's core whole, busy whether or not a
//! tag is in flight; each completion's reap on that core ([`Costs::reap`]);
//! a waiter that skips costs the poller one run-queue update and, when it
//! preempts, one resched ([`Costs::wake`]); a spinning waiter keeps its
//! own core busy for its whole wait, as classic polling does, but reaps
//! nothing (the poller did). Not modelled: SKIP, the artifact's direct
//! path that bypasses the block layer and the file system's mapping on
//! submission (`nap_submit_multiple_requests`), and the 128 KiB split
//! (`MAX_PER_BIO_PAGES`).
//!
//! Pure: tags, queues and waiters are numbers the caller chooses; time is
//! the caller's. The simulator applies the decisions
//! (`crates/sim/src/world/central.rs`).

use std::collections::VecDeque;

use policy::Nanos;

/// Whether the poller's queues raise interrupts: no (`alloc_cq` creates
/// them without `NVME_CQ_IRQ_ENABLED`, `nap_nvme_queues.c`).
pub const RAISES_INTERRUPTS: bool = false;

/// How a thread waits for its tag (`complete_io`'s `IOCT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitKind {
    /// `IOCT_POLL`: alone on its core, it spins on the request's status
    /// word until the poller completes it.
    Spin,
    /// `IOCT_NAP_POLL`: it calls `schedule()`, and CFS skips it while its
    /// tag is in flight; the others on its core run.
    Skip,
}

/// How the next wait of a thread goes, given how many tasks were runnable
/// on its core at its last completion, itself included (`complete_io`:
/// `nr_running <= 1` -> `IOCT_POLL`, else `IOCT_NAP_POLL`).
pub fn wait_kind(nr_running: u32) -> WaitKind {
    if nr_running <= 1 {
        WaitKind::Spin
    } else {
        WaitKind::Skip
    }
}

/// Whether completing a waiter's last tag preempts the task running on its
/// core (`nap_complete_update_sched_state`: `cfs_rq->curr != se &&
/// cfs_rq->curr->my_io_flag != 1`): only a task that is not the waiter and
/// not an I/O thread; an idle core (no current) needs no resched.
pub fn preempts(current: Option<Current>) -> bool {
    matches!(current, Some(Current::Other))
}

/// What runs on a waiter's core when its tag completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Current {
    /// The waiter itself (spinning, or between its `schedule()` calls).
    Waiter,
    /// Another I/O thread (`my_io_flag == 1`, set in `nap_ioc_submit_io`).
    IoThread,
    /// Any other task.
    Other,
}

/// The poller's costs, measured elsewhere (the host profile's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    /// Reaping one entry and completing its request (`complete_io`).
    pub reap: Nanos,
    /// Making one waiter runnable again (`cskip` under its run queue's
    /// lock) and, when it preempts, the resched.
    pub wake: Nanos,
}

impl Costs {
    /// What one pass costs the poller's core: each entry reaped, each
    /// waiter made runnable. A pass that finds nothing costs nothing
    /// beyond the spin it is part of.
    pub fn pass(&self, reaped: u64, woken: u64) -> Nanos {
        self.reap * reaped + self.wake * woken
    }
}

/// What the poller does after a pass (`nap_io_complete_task`'s loop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// It completed something: `cpu_relax()` and the next pass at once.
    Again,
    /// Nothing: `cond_resched()` (another runnable task on its core runs
    /// first), then the next pass. Never a sleep.
    Yield,
}

/// One completed entry, as a pass hands it over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub tag: u32,
    pub waiter: u32,
    /// The waiter has no tag left in flight (`cskip` back at 0): CFS may
    /// pick it again, and a skipping waiter is made runnable.
    pub runnable: bool,
}

/// The central poller's books: the entries posted and not yet reaped, per
/// queue, and per waiter its tags in flight (`cskip`, negated).
#[derive(Clone, Debug)]
pub struct Poller {
    /// Per queue, `(tag, waiter)` posted by the device, in posting order.
    posted: Vec<VecDeque<(u32, u32)>>,
    /// Per waiter, its tags in flight (the artifact's `-cskip`).
    in_flight: Vec<u32>,
}

impl Poller {
    /// A poller over `queues` queues for `waiters` threads.
    pub fn new(queues: usize, waiters: usize) -> Poller {
        Poller {
            posted: vec![VecDeque::new(); queues.max(1)],
            in_flight: vec![0; waiters],
        }
    }

    /// `waiter` submitted a tag (`nap_submit_update_sched_state`, -1).
    pub fn submitted(&mut self, waiter: u32) {
        self.in_flight[waiter as usize] += 1;
    }

    /// Tags `waiter` has in flight.
    pub fn in_flight(&self, waiter: u32) -> u32 {
        self.in_flight[waiter as usize]
    }

    /// The device posted `tag`'s entry on `queue`: the next pass finds it.
    pub fn posted(&mut self, queue: usize, tag: u32, waiter: u32) {
        let q = queue % self.posted.len();
        self.posted[q].push_back((tag, waiter));
    }

    /// Whether a pass now would find something.
    pub fn pending(&self) -> bool {
        self.posted.iter().any(|q| !q.is_empty())
    }

    /// One pass over every queue in order, each drained whole
    /// (`nvme_nap_complete_io`), appending what it completed to `out`.
    pub fn pass(&mut self, out: &mut Vec<Done>) {
        for q in &mut self.posted {
            for (tag, waiter) in q.drain(..) {
                let n = &mut self.in_flight[waiter as usize];
                *n = n.saturating_sub(1);
                out.push(Done {
                    tag,
                    waiter,
                    runnable: *n == 0,
                });
            }
        }
    }

    /// What the loop does after a pass that completed `found` entries.
    pub fn after_pass(found: usize) -> Next {
        if found == 0 {
            Next::Yield
        } else {
            Next::Again
        }
    }
}

/// The poller's core among `cores`, `used` being the cores the threads
/// run on: the highest-numbered free one (the artifact's `ct_cpu_id`, the
/// last core of its range, kept from the threads), dedicated; else the
/// highest-numbered core, shared (assumed: the artifact never shares).
pub fn place(cores: usize, used: &[usize]) -> (usize, bool) {
    let cores = cores.max(1);
    match (0..cores).rev().find(|c| !used.contains(c)) {
        Some(c) => (c, true),
        None => (cores - 1, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_drains_every_queue_in_order_and_frees_a_waiter_at_its_last_tag() {
        let mut p = Poller::new(3, 2);
        p.submitted(0);
        p.submitted(0);
        p.submitted(1);
        p.posted(2, 10, 0);
        p.posted(0, 11, 1);
        assert!(p.pending());
        let mut out = Vec::new();
        p.pass(&mut out);
        // Queue 0 before queue 2, whatever the posting order.
        assert_eq!(
            out,
            [
                Done {
                    tag: 11,
                    waiter: 1,
                    runnable: true
                },
                Done {
                    tag: 10,
                    waiter: 0,
                    runnable: false
                },
            ]
        );
        assert!(!p.pending());
        assert_eq!(p.in_flight(0), 1, "one tag still out: still skipped");
        p.posted(2, 12, 0);
        out.clear();
        p.pass(&mut out);
        assert!(out[0].runnable);
    }

    #[test]
    fn queues_beyond_the_pollers_wrap_onto_its_queues() {
        let mut p = Poller::new(2, 1);
        p.submitted(0);
        p.posted(5, 1, 0);
        let mut out = Vec::new();
        p.pass(&mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn the_poller_never_sleeps() {
        // nap_io_complete_task: cond_resched() when a pass found nothing,
        // straight on otherwise; no timer anywhere.
        assert_eq!(Poller::after_pass(0), Next::Yield);
        assert_eq!(Poller::after_pass(3), Next::Again);
    }

    #[test]
    fn a_thread_alone_on_its_core_spins_and_one_with_company_is_skipped() {
        assert_eq!(wait_kind(0), WaitKind::Spin);
        assert_eq!(wait_kind(1), WaitKind::Spin);
        assert_eq!(wait_kind(2), WaitKind::Skip);
        assert_eq!(wait_kind(32), WaitKind::Skip);
    }

    #[test]
    fn only_a_task_that_is_neither_the_waiter_nor_an_io_thread_is_preempted() {
        assert!(preempts(Some(Current::Other)));
        assert!(!preempts(Some(Current::IoThread)));
        assert!(!preempts(Some(Current::Waiter)));
        assert!(!preempts(None));
    }

    #[test]
    fn a_pass_costs_its_reaps_and_wakes_only() {
        let c = Costs {
            reap: 300,
            wake: 1_000,
        };
        assert_eq!(c.pass(0, 0), 0);
        assert_eq!(c.pass(4, 1), 4 * 300 + 1_000);
    }

    #[test]
    fn the_poller_takes_a_free_core_else_shares_the_last() {
        assert_eq!(place(4, &[0, 1]), (3, true));
        assert_eq!(place(4, &[0, 3]), (2, true));
        assert_eq!(place(2, &[0, 1]), (1, false));
        assert_eq!(place(1, &[0]), (0, false));
    }
}

//! The host side of the problem (issue 15): what the kernel does around the
//! device, as FastResponse (Liu et al., ICS'22; `shared/papers/fastresponse.txt`)
//! changes it and as TOS 2 compares it with interrupts. Each module is a
//! small pure state machine in the `policy` crate's style: state, one entry
//! per event, time passed in as `u64` nanoseconds, no clock and no I/O. The
//! simulator charges their costs in virtual time; the emulator's driver
//! applies the block-layer and completion parts to real I/O.
//!
//! [`ld`]: FastResponse's Limited Depth block-layer scheduler (FR 3.3,
//! Fig. 9). Critical requests bypass it whole and never wait; non-critical
//! ones are split into 32 KB pieces queued in LBA order on their hardware
//! queue's dispatch queue, and go to the device only with one of a
//! device-wide pool of tokens (8 by default, after FR 2.2's "queue depth no
//! more than 8" and the authors' README; a parameter for Fig. 19a's sweep),
//! released at completion; a request is done at its last piece. The
//! authors' opportunistic token for critical requests is an option.
//!
//! [`poll`]: how a waiter learns of its completion and what the CPU pays:
//! interrupts (FR 2.1; when the interrupt fires is `policy`'s decision,
//! calibrated or not), classic polling and Linux's hybrid polling (TOS 2,
//! Fig. 5; Linux 5.3's `blk_mq_poll_hybrid_sleep`: half the mean of the
//! request's size bucket over the last 100 ms window, then spin), and FR's
//! SelectISR baseline (FR 4.1: critical I/O polls, the rest is
//! interrupt-driven). The interrupt path's costs are parameters.

//! [`cfs`]: the CPU scheduler's wake-up decision, one run queue's `next`
//! buddy. Vanilla CFS preempts the running task for a wakee only when the
//! wakee is behind by more than the wake-up granularity (1 ms x (1 +
//! ilog2(min(ncpus, 8))), "4 milliseconds on our server", FR 2.2);
//! FastResponse's boost (FR 3.5, Algorithm 1) makes a critical wakee `next`
//! and marks need_resched regardless, and a critical `next` sticks until it
//! runs. The paper keeps a fairness guard at pick time that the authors'
//! code drops; [`cfs::BoostRule`] has both.
//!
//! [`eevdf`]: the pick and wake-up rule of Linux 6.6 and later (the
//! scheduler of the VM this project runs on): the eligible task with the
//! earliest virtual deadline, slice protection, lag kept across sleeps.
//!
//! [`fsync`]: the ext4 `data=ordered` fsync path as a cost model (FR 2.1,
//! Fig. 3): D1, then JBD2's compound transaction D2, JD, JC, each waiting for
//! the one before, six context switches for one fsync; JBD2 commits one
//! transaction at a time and later fsyncs join or wait as ext4's do. FR's
//! fjournaling (FR 3.4) has a critical caller write D1 and its own
//! f-transaction (header, extent blocks, commit block) in a separate area:
//! no D2, no JBD2 wake-ups.

//!
//! [`uring`]: io_uring's own completion batching on the host side (issue
//! 25): the caller's `min_complete`, task_work wake-ups, DEFER_TASKRUN,
//! min-wait (Linux 6.12's `io_uring_submit_and_wait_min_timeout`), IOPOLL
//! and SQPOLL, each a row of [`uring::STRATEGIES`]; one wait's decisions
//! (sleep, spin, wake to run task work, return) given when completions
//! reach the task and when its timer fires.
//!
//! [`cpuidle`]: what an idle core does and what its wake-up costs (issue
//! 37 item 2): the idle-state tables of Intel's servers and of this VM,
//! the `menu`, `teo` and `haltpoll` governors, and the PM QoS latency
//! limits (global, and the per-device limit of Kristo's blk-mq proposal).
//!
//! [`central`]: UnICom's central completion poller (FAST'26, issue 40):
//! one kernel thread polls every queue (TagPoll), which raises no
//! interrupt; a waiter spins on its status word when alone on its core and
//! is skipped by the scheduler while its tag is in flight otherwise
//! (TagSched); the poller never sleeps. From the authors' artifact; the
//! paper's text could not be read.
//!
//! [`mechanism`]: every choice above declared once, as `policy` declares
//! its strategies: the table the command line, the profiles, `reproduce`
//! and the reports read (issue 26 item 2).
//!
//! [`era`]: the Linux releases each mechanism exists in, each bound citing
//! the commit that added or removed it, and the out-of-tree patches some
//! exist only as (issue 37 item 1): what `--kernel` and a host profile's
//! `kernel` check a run against.
//!
//! [`sleep`]: the "sleep, then poll" strategies after Linux's hybrid
//! polling (issue 40), one interface ([`sleep::SleepPoll`]) for the
//! simulator and the emulator: [`pas`] and [`dpas`] (DPAS, FAST'26, from
//! its artifact's kernel), [`ehp`] (EHP, JSA 2022, as that artifact's
//! baseline) and [`iopoll`] (io_uring's IORING_SETUP_HYBRID_IOPOLL, Linux
//! 6.13).
//! [`irq_suspend`]: Linux 6.13's napi IRQ suspension (Karsten and Damato)
//! carried to a storage completion queue (issue 40): masked while its
//! consumers' reaping calls keep finding completions, a timer bounding the
//! worst case, resumed when a consumer finds nothing and sleeps.

pub mod central;
pub mod cfs;
pub mod cpuidle;
pub mod eevdf;
pub mod era;
pub mod fsync;
pub mod irq_suspend;
pub mod ld;
pub mod mechanism;
pub mod poll;
pub mod uring;

pub mod dpas;
pub mod ehp;
pub mod iopoll;
pub mod pas;
pub mod sleep;

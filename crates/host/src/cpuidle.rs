//! `cpuidle`: what an idle core does until its next wake-up, and what that
//! wake-up costs (issue 37 item 2). Both papers turned C-states off (TOS 5,
//! "we disable C-states"; FR 4.1, the same for its host); a server left as
//! shipped has them on, and a core that slept in a deep state pays that
//! state's exit latency before the interrupt handler (or the woken thread)
//! runs.
//!
//! - Idle-state tables ([`Table`]): each state's name, exit latency and
//!   target residency (the least idle time for which entering it pays),
//!   as the driver declares them. Intel's servers from Linux's
//!   `drivers/idle/intel_idle.c` (torvalds/linux at commit
//!   00433eae1771d355f20c152ddc5976baedb427e2, the stored snapshot read for
//!   this module: `skx_cstates`, `icx_cstates`, `spr_cstates`; the flags
//!   that matter here: C1E is `CPUIDLE_FLAG_ALWAYS_ENABLE`, C6 is
//!   `CPUIDLE_FLAG_TLB_FLUSHED`); every table starts with the cpuidle
//!   core's `POLL` state (drivers/cpuidle/poll_state.c: exit latency 0,
//!   target residency 0, `CPUIDLE_FLAG_POLLING`). This project's VM runs
//!   `cpuidle-haltpoll` (read on this machine, Linux 6.18:
//!   `/sys/devices/system/cpu/cpu*/cpuidle/state*/{name,latency,residency}`
//!   gives `POLL` 0/0 and `haltpoll idle` 1/1 us;
//!   `/sys/devices/system/cpu/cpuidle/current_governor` is `haltpoll`;
//!   `/sys/module/haltpoll/parameters/guest_halt_poll_ns` reads 0).
//! - Governors, pure state machines, one per core: `menu`
//!   (drivers/cpuidle/governors/menu.c, torvalds/linux commit
//!   010e85f9e47c6a92740b7d73e0fca8f792573582, [`Menu`]), `teo`
//!   (governors/teo.c, commit 04bae4e2267d49eb9cfec403acd0462b8d00d637,
//!   [`Teo`]) and `haltpoll` (governors/haltpoll.c, commit
//!   2cc2c3cb54de578666d905537e4c15969caf0dc5, [`Haltpoll`]). Each
//!   selects a state at idle entry from what it knows then (the time till
//!   the next timer, its history, the latency limit) and learns at exit
//!   how long the core actually slept.
//! - The PM QoS latency limit ([`Qos`]): the global one user space sets
//!   through `/dev/cpu_dma_latency` (kernel/power/qos.c,
//!   `cpu_latency_qos`), and the per-device limit of Tero Kristo's blk-mq
//!   proposal — **a proposal, not merged**: "[RFC PATCH 0/2] block: CPU
//!   latency PM QoS tuning" (linux-block, 2024-08-29, Message-ID
//!   20240829075423.1345042-1-tero.kristo@linux.intel.com) and "[PATCHv2
//!   0/2] blk-mq: add CPU latency limit control" (2024-10-18, Message-ID
//!   20241018075416.436916-1-tero.kristo@linux.intel.com): sysfs
//!   `cpu_lat_limit_us` and `cpu_lat_timeout_ms` per block device; the
//!   limit holds on the CPUs doing block I/O and is dropped once the queue
//!   has been idle for the timeout.
//!
//! What is simplified, by source line:
//! - menu: the tick is taken as never stopped at selection
//!   (`tick_nohz_tick_stopped()` false), so the `predicted_us < TICK_USEC`
//!   stopped-tick branch and `tick_wakeup` correction of `menu_update` are
//!   not modelled; `nr_iowaiters` is what the caller says (the simulator:
//!   threads blocked on the core); the governor's `needs_update` deferral
//!   is folded into [`Menu::reflect`]. Later kernels dropped the iowait
//!   multiplier ("cpuidle: menu: Remove iowait influence", 2024); this is
//!   the version read.
//! - teo: the util-awareness shortcut (`teo_cpu_is_utilized`, 2-state
//!   drivers) is not modelled (the simulator keeps no PELT utilisation);
//!   in step 2 the shallower state found is taken as it is, without the
//!   kernel's `first_suitable_idx` refinement around polling states.
//! - POLL: `poll_idle` spins for at most `cpuidle_poll_time` (the target
//!   residency of the first non-polling state the latency limit allows, or
//!   a tick) and then returns to the governor; here a poll that outlives
//!   its window falls to state 1 for the rest of the idle period (the
//!   governor is not asked again).
//! - Exit latency is paid whole on every wake-up from the state (the
//!   table's number is the driver's worst case; teo itself takes half of
//!   it as "a very rough approximation of the average").

use policy::{Nanos, US};

/// One idle state, as a cpuidle driver declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub name: &'static str,
    /// `exit_latency`: the time from the wake-up event to the first
    /// instruction the core runs, ns.
    pub exit_latency: Nanos,
    /// `target_residency`: the least idle time for which the state pays
    /// for its entry and exit, ns.
    pub target_residency: Nanos,
    /// `CPUIDLE_FLAG_POLLING`: the core spins (and counts as busy).
    pub polling: bool,
}

/// drivers/cpuidle/poll_state.c, `cpuidle_poll_state_init`: exit latency
/// 0, target residency 0, `CPUIDLE_FLAG_POLLING`. State 0 of every x86
/// driver (`CPUIDLE_DRIVER_STATE_START` 1 with `ARCH_HAS_CPU_RELAX`).
pub const POLL: State = State {
    name: "POLL",
    exit_latency: 0,
    target_residency: 0,
    polling: true,
};

/// A hardware state from a driver's table, times in us as the tables give
/// them.
const fn cstate(name: &'static str, exit_us: u64, residency_us: u64) -> State {
    State {
        name,
        exit_latency: exit_us * US,
        target_residency: residency_us * US,
        polling: false,
    }
}

/// Which table a host's cores idle by (host-profile key `idle_states`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Table {
    /// C-states off (both papers; every shipped profile): an idle core
    /// wakes at no cost.
    #[default]
    Off,
    /// Skylake-SP (`skx_cstates`).
    Skx,
    /// Ice Lake-SP (`icx_cstates`).
    Icx,
    /// Sapphire Rapids (`spr_cstates`, also Emerald Rapids).
    Spr,
    /// A KVM guest with `cpuidle-haltpoll`, as this project's VM.
    Haltpoll,
    /// Polling only (`idle=poll`, or a driver with no usable state).
    Poll,
}

/// intel_idle.c `skx_cstates[]`: C1 2/2 us (`CPUIDLE_FLAG_IRQ_ENABLE`),
/// C1E 10/20 us, C6 133/600 us (`CPUIDLE_FLAG_TLB_FLUSHED |
/// CPUIDLE_FLAG_IBRS`).
const SKX: &[State] = &[
    POLL,
    cstate("C1", 2, 2),
    cstate("C1E", 10, 20),
    cstate("C6", 133, 600),
];

/// intel_idle.c `icx_cstates[]`: C1 1/1 us, C1E 4/4 us, C6 170/600 us
/// (tuned#808 quotes the same 170 us).
const ICX: &[State] = &[
    POLL,
    cstate("C1", 1, 1),
    cstate("C1E", 4, 4),
    cstate("C6", 170, 600),
];

/// intel_idle.c `spr_cstates[]`: C1 1/1 us, C1E 2/4 us, C6 290/800 us
/// (`CPUIDLE_FLAG_INIT_XSTATE`).
const SPR: &[State] = &[
    POLL,
    cstate("C1", 1, 1),
    cstate("C1E", 2, 4),
    cstate("C6", 290, 800),
];

/// This VM's sysfs (Linux 6.18, `cpuidle-haltpoll`): `POLL` 0/0 and
/// `haltpoll idle` latency 1, residency 1 (us). The 1 us is the driver's
/// declaration (the guest cannot see what the host's halt costs), not a
/// measurement.
const HALTPOLL: &[State] = &[POLL, cstate("haltpoll idle", 1, 1)];

const POLL_ONLY: &[State] = &[POLL];

impl Table {
    /// Every table by its key name, `off` first.
    pub const ALL: [(&'static str, Table); 6] = [
        ("off", Table::Off),
        ("skx", Table::Skx),
        ("icx", Table::Icx),
        ("spr", Table::Spr),
        ("haltpoll", Table::Haltpoll),
        ("poll", Table::Poll),
    ];

    /// The states, shallowest first; empty when off.
    pub fn states(self) -> &'static [State] {
        match self {
            Table::Off => &[],
            Table::Skx => SKX,
            Table::Icx => ICX,
            Table::Spr => SPR,
            Table::Haltpoll => HALTPOLL,
            Table::Poll => POLL_ONLY,
        }
    }

    pub fn name(self) -> &'static str {
        Table::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .expect("every table is named")
    }

    pub fn parse(s: &str) -> Result<Table, String> {
        Table::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = Table::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown idle states `{s}` (one of {})", names.join(", "))
            })
    }
}

/// Which governor picks the state (host-profile key `idle_governor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GovernorKind {
    /// `menu`: the default of most distribution kernels on tickless
    /// systems (its `rating` 20 beats ladder's 10 and haltpoll's 9).
    #[default]
    Menu,
    Teo,
    Haltpoll,
}

impl GovernorKind {
    pub const ALL: [(&'static str, GovernorKind); 3] = [
        ("menu", GovernorKind::Menu),
        ("teo", GovernorKind::Teo),
        ("haltpoll", GovernorKind::Haltpoll),
    ];

    pub fn name(self) -> &'static str {
        GovernorKind::ALL
            .iter()
            .find(|(_, g)| *g == self)
            .map(|(n, _)| *n)
            .expect("every governor is named")
    }

    pub fn parse(s: &str) -> Result<GovernorKind, String> {
        GovernorKind::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, g)| *g)
            .ok_or_else(|| format!("unknown idle governor `{s}` (one of menu, teo, haltpoll)"))
    }
}

/// "No limit": `PM_QOS_CPU_LATENCY_DEFAULT_VALUE` is 2000 s
/// (include/linux/pm_qos.h, `2000 * USEC_PER_SEC`).
pub const NO_LIMIT: Nanos = 2_000_000_000_000;

/// The proposal's per-device limit: `cpu_lat_limit_us` and
/// `cpu_lat_timeout_ms` (Kristo's RFC cover letter: 10 us and 3 ms in
/// its example). A proposal, not merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimit {
    pub limit: Nanos,
    pub timeout: Nanos,
}

/// The CPU latency limits in force.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Qos {
    /// `/dev/cpu_dma_latency`: the least of the values open file
    /// descriptors hold (kernel/power/qos.c); `None`: no request.
    pub global: Option<Nanos>,
    /// Kristo's per-device limit (a proposal, not merged).
    pub device: Option<DeviceLimit>,
}

impl Qos {
    /// `cpuidle_governor_latency_req`: the least limit that holds for a
    /// core whose last block I/O was dispatched at `last_io`, at `now`.
    /// The device limit holds from a dispatch until the queue has been
    /// idle for its timeout (the proposal's delayed work).
    pub fn latency_req(&self, now: Nanos, last_io: Option<Nanos>) -> Nanos {
        let global = self.global.unwrap_or(NO_LIMIT);
        let device = match (self.device, last_io) {
            (Some(d), Some(t)) if now.saturating_sub(t) < d.timeout => d.limit,
            _ => NO_LIMIT,
        };
        global.min(device)
    }
}

/// How long the POLL state spins before it gives up
/// (drivers/cpuidle/cpuidle.c `cpuidle_poll_time`): the target residency
/// of the first non-polling state whose exit latency the limit allows,
/// else a tick.
pub fn poll_time(states: &[State], latency_req: Nanos, tick: Nanos) -> Nanos {
    states
        .iter()
        .skip(1)
        .find(|s| !s.polling && s.exit_latency <= latency_req)
        .map_or(tick, |s| s.target_residency)
}

/// What a governor knows at idle entry.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// Time till the next timer event the core knows of
    /// (`tick_nohz_get_sleep_length`), ns.
    pub sleep_length: Nanos,
    /// Time till the next tick (`delta_next`), ns.
    pub till_tick: Nanos,
    /// The PM QoS limit in force ([`Qos::latency_req`]).
    pub latency_req: Nanos,
    /// Threads waiting on I/O on this core (`nr_iowait_cpu`).
    pub iowaiters: u32,
}

/// One core's governor.
#[derive(Clone, Debug)]
pub enum Governor {
    Menu(Menu),
    Teo(Teo),
    Haltpoll(Haltpoll),
}

impl Governor {
    pub fn new(
        kind: GovernorKind,
        states: &[State],
        tick: Nanos,
        haltpoll: HaltpollParams,
    ) -> Governor {
        match kind {
            GovernorKind::Menu => Governor::Menu(Menu::new(tick)),
            GovernorKind::Teo => Governor::Teo(Teo::new(states.len(), tick)),
            GovernorKind::Haltpoll => Governor::Haltpoll(Haltpoll::new(haltpoll)),
        }
    }

    /// The state to enter.
    pub fn select(&mut self, states: &[State], e: &Entry) -> usize {
        match self {
            Governor::Menu(m) => m.select(states, e),
            Governor::Teo(t) => t.select(states, e),
            Governor::Haltpoll(h) => h.select(states, e),
        }
    }

    /// The core left state `idx` after `residency` ns; `poll_limit_hit`:
    /// a POLL that ran out its window (`dev->poll_time_limit`).
    pub fn reflect(
        &mut self,
        states: &[State],
        idx: usize,
        residency: Nanos,
        poll_limit_hit: bool,
    ) {
        match self {
            Governor::Menu(m) => m.reflect(states, idx, residency, poll_limit_hit),
            Governor::Teo(t) => t.reflect(states, idx, residency),
            Governor::Haltpoll(h) => h.reflect(idx, residency, poll_limit_hit),
        }
    }

    /// How long POLL spins when chosen: haltpoll's own adaptive window
    /// (`dev->poll_limit_ns`, which `cpuidle_poll_time` returns when set),
    /// else [`poll_time`].
    pub fn poll_window(&self, states: &[State], latency_req: Nanos, tick: Nanos) -> Nanos {
        match self {
            Governor::Haltpoll(h) if h.poll_limit > 0 => h.poll_limit,
            _ => poll_time(states, latency_req, tick),
        }
    }
}

// --- menu --------------------------------------------------------------

/// menu.c: `BUCKETS` 12, `INTERVALS` 8 (`INTERVAL_SHIFT` 3),
/// `RESOLUTION` 1024, `DECAY` 8, `MAX_INTERESTING` 50000 (us).
const BUCKETS: usize = 12;
const INTERVALS: usize = 8;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
const MAX_INTERESTING: u64 = 50_000;

/// The menu governor's per-CPU state (`struct menu_device`), times in us
/// as the kernel keeps them.
#[derive(Clone, Debug)]
pub struct Menu {
    tick_us: u64,
    next_timer_us: u64,
    bucket: usize,
    correction: [u64; BUCKETS],
    intervals: [u64; INTERVALS],
    ptr: usize,
}

/// `which_bucket`: the order of magnitude of the expected duration, in
/// two groups by whether I/O is pending.
fn which_bucket(duration_us: u64, iowaiters: u32) -> usize {
    let base = if iowaiters > 0 { BUCKETS / 2 } else { 0 };
    base + match duration_us {
        0..=9 => 0,
        10..=99 => 1,
        100..=999 => 2,
        1_000..=9_999 => 3,
        10_000..=99_999 => 4,
        _ => 5,
    }
}

impl Menu {
    /// `menu_enable_device`: every correction factor at unity.
    pub fn new(tick: Nanos) -> Menu {
        Menu {
            tick_us: tick / US,
            next_timer_us: 0,
            bucket: 0,
            correction: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            ptr: 0,
        }
    }

    /// `get_typical_interval`: the mean of the last 8 idle periods when
    /// their spread is small (stddev <= 20 us, or mean > 6 stddev with at
    /// least 6 of 8 samples), dropping the largest outliers one at a time;
    /// `u64::MAX` when there is none.
    fn typical_interval(&self, predicted_us: u64) -> u64 {
        let mut thresh = u64::MAX;
        loop {
            let kept = self.intervals.iter().filter(|&&v| v <= thresh);
            let (mut min, mut max, mut sum, mut divisor) = (u64::MAX, 0, 0u64, 0u64);
            for &v in kept {
                sum += v;
                divisor += 1;
                max = max.max(v);
                min = min.min(v);
            }
            if min >= predicted_us {
                return u64::MAX;
            }
            let avg = sum / divisor;
            let variance = self
                .intervals
                .iter()
                .filter(|&&v| v <= thresh)
                .map(|&v| {
                    let d = v as i128 - avg as i128;
                    (d * d) as u128
                })
                .sum::<u128>()
                / divisor as u128;
            let avg2 = avg as u128 * avg as u128;
            if (avg2 > variance * 36 && divisor * 4 >= INTERVALS as u64 * 3) || variance <= 400 {
                return avg;
            }
            if divisor * 4 <= INTERVALS as u64 * 3 {
                return u64::MAX;
            }
            thresh = max - 1;
        }
    }

    /// `menu_select`.
    pub fn select(&mut self, states: &[State], e: &Entry) -> usize {
        let latency_req_us = e.latency_req / US;
        self.next_timer_us = e.sleep_length / US;
        self.bucket = which_bucket(self.next_timer_us, e.iowaiters);
        if states.len() <= 1
            || latency_req_us == 0
            || self.next_timer_us < states[1].target_residency / US
            || latency_req_us < states[1].exit_latency / US
        {
            return 0;
        }
        // Round to the closest (DIV_ROUND_CLOSEST_ULL).
        let scale = RESOLUTION * DECAY;
        let mut predicted = (self.next_timer_us * self.correction[self.bucket] + scale / 2) / scale;
        predicted = predicted.min(self.typical_interval(predicted));
        // The tick is running (the simplification above): the performance
        // multiplier, 1 + 10 per I/O waiter, caps the exit latency.
        let interactivity = predicted / (1 + 10 * e.iowaiters as u64);
        let latency_req_us = latency_req_us.min(interactivity);
        let mut idx: Option<usize> = None;
        for (i, s) in states.iter().enumerate() {
            let first = *idx.get_or_insert(i);
            let (exit, residency) = (s.exit_latency / US, s.target_residency / US);
            if residency > predicted {
                // A physical state rather than polling, if a timer comes
                // soon enough.
                if states[first].polling
                    && exit <= latency_req_us
                    && residency <= self.next_timer_us
                {
                    predicted = residency;
                    idx = Some(i);
                    break;
                }
                if predicted < self.tick_us {
                    break;
                }
                predicted = states[first].target_residency / US;
                break;
            }
            if exit > latency_req_us {
                break;
            }
            idx = Some(i);
        }
        let mut idx = idx.unwrap_or(0);
        let till_tick_us = e.till_tick / US;
        if (states[idx].polling || predicted < self.tick_us)
            && idx > 0
            && states[idx].target_residency / US > till_tick_us
        {
            // The tick stays: don't pick a state the tick would cut short.
            while idx > 0 {
                idx -= 1;
                if states[idx].target_residency / US <= till_tick_us {
                    break;
                }
            }
        }
        idx
    }

    /// `menu_update`: learn from the idle period that just ended.
    pub fn reflect(
        &mut self,
        states: &[State],
        idx: usize,
        residency: Nanos,
        poll_limit_hit: bool,
    ) {
        let target = &states[idx];
        let mut measured = if target.polling && poll_limit_hit {
            self.next_timer_us
        } else {
            let m = residency / US;
            let exit = target.exit_latency / US;
            if m > 2 * exit {
                m - exit
            } else {
                m / 2
            }
        };
        measured = measured.min(self.next_timer_us);
        let mut factor = self.correction[self.bucket];
        factor -= factor / DECAY;
        if self.next_timer_us > 0 && measured < MAX_INTERESTING {
            factor += RESOLUTION * measured / self.next_timer_us;
        } else {
            factor += RESOLUTION;
        }
        self.correction[self.bucket] = factor;
        self.intervals[self.ptr] = measured;
        self.ptr = (self.ptr + 1) % INTERVALS;
    }
}

// --- teo ---------------------------------------------------------------

/// teo.c: `PULSE` 1024, `DECAY_SHIFT` 3, `NR_RECENT` 9.
const PULSE: u64 = 1024;
const DECAY_SHIFT: u32 = 3;
const NR_RECENT: usize = 9;

#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    intercepts: u64,
    hits: u64,
    recent: u64,
}

/// The teo governor's per-CPU state (`struct teo_cpu`).
#[derive(Clone, Debug)]
pub struct Teo {
    bins: Vec<Bin>,
    total: u64,
    recent_idx: [Option<usize>; NR_RECENT],
    next_recent: usize,
    sleep_length: Nanos,
}

impl Teo {
    pub fn new(states: usize, _tick: Nanos) -> Teo {
        Teo {
            bins: vec![Bin::default(); states.max(1)],
            total: 0,
            recent_idx: [None; NR_RECENT],
            next_recent: 0,
            sleep_length: 0,
        }
    }

    /// `teo_select`, steps 1-3 of the file's description.
    pub fn select(&mut self, states: &[State], e: &Entry) -> usize {
        self.sleep_length = e.sleep_length;
        let duration = e.sleep_length;
        if states.len() < 2 || states[1].target_residency > duration {
            return 0;
        }
        let (mut intercept_sum, mut hit_sum, mut recent_sum) = (0, 0, 0);
        let (mut idx, mut idx_intercepts, mut idx_hits, mut idx_recent) = (0, 0, 0, 0);
        let mut constraint = 0;
        for (i, s) in states.iter().enumerate().skip(1) {
            let prev = self.bins[i - 1];
            intercept_sum += prev.intercepts;
            hit_sum += prev.hits;
            recent_sum += prev.recent;
            if s.exit_latency <= e.latency_req {
                constraint = i;
            }
            if s.target_residency > duration {
                break;
            }
            idx = i;
            idx_intercepts = intercept_sum;
            idx_hits = hit_sum;
            idx_recent = recent_sum;
        }
        // Step 2: early wake-ups dominate (intercepts of the shallower
        // states beat hits and intercepts of the candidate and deeper), or
        // most of the recent wake-ups were early.
        let alt_intercepts = 2 * idx_intercepts > self.total.saturating_sub(idx_hits);
        let alt_recent = idx_recent > (NR_RECENT / 2) as u64;
        if alt_intercepts || alt_recent {
            let (mut isum, mut rsum) = (0, 0);
            for i in (0..idx).rev() {
                let b = self.bins[i];
                isum += b.intercepts;
                rsum += b.recent;
                if (!alt_recent || 2 * rsum > idx_recent)
                    && (!alt_intercepts || 2 * isum > idx_intercepts)
                {
                    idx = i;
                    break;
                }
            }
        }
        idx.min(constraint)
    }

    /// `teo_update`: was the wake-up in the sleep length's bin (a hit) or
    /// an earlier one (an intercept)?
    pub fn reflect(&mut self, states: &[State], idx: usize, residency: Nanos) {
        let measured = if residency >= self.sleep_length {
            u64::MAX
        } else {
            let lat = states[idx].exit_latency;
            if residency >= lat {
                residency - lat / 2
            } else {
                residency / 2
            }
        };
        self.total = 0;
        let (mut idx_timer, mut idx_duration) = (0, 0);
        for (i, s) in states.iter().enumerate() {
            let b = &mut self.bins[i];
            b.hits -= b.hits >> DECAY_SHIFT;
            b.intercepts -= b.intercepts >> DECAY_SHIFT;
            self.total += b.hits + b.intercepts;
            if s.target_residency <= self.sleep_length {
                idx_timer = i;
                if s.target_residency <= measured {
                    idx_duration = i;
                }
            }
        }
        let slot = self.next_recent;
        self.next_recent = (self.next_recent + 1) % NR_RECENT;
        if let Some(old) = self.recent_idx[slot] {
            self.bins[old].recent -= 1;
        }
        if idx_timer == idx_duration {
            self.bins[idx_timer].hits += PULSE;
            self.recent_idx[slot] = None;
        } else {
            self.bins[idx_duration].intercepts += PULSE;
            self.bins[idx_duration].recent += 1;
            self.recent_idx[slot] = Some(idx_duration);
        }
        self.total += PULSE;
    }
}

// --- haltpoll ----------------------------------------------------------

/// haltpoll.c's module parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HaltpollParams {
    /// `guest_halt_poll_ns`: the most the poll window grows to.
    pub max: Nanos,
    /// `guest_halt_poll_shrink`: divisor when an idle period outlasts it.
    pub shrink: u64,
    /// `guest_halt_poll_grow`: multiplier.
    pub grow: u64,
    /// `guest_halt_poll_grow_start`: the first window, ns.
    pub grow_start: Nanos,
    /// `guest_halt_poll_allow_shrink`.
    pub allow_shrink: bool,
}

impl Default for HaltpollParams {
    /// The source's defaults (haltpoll.c: 200000, 2, 2, 50000, true).
    /// This VM reads `guest_halt_poll_ns` 0 (the window never opens), the
    /// rest as the source.
    fn default() -> Self {
        HaltpollParams {
            max: 200_000,
            shrink: 2,
            grow: 2,
            grow_start: 50_000,
            allow_shrink: true,
        }
    }
}

/// The haltpoll governor (KVM guests): poll for a window, then halt; the
/// window grows while idle periods end inside `guest_halt_poll_ns` and
/// shrinks when they outlast it.
#[derive(Clone, Debug)]
pub struct Haltpoll {
    params: HaltpollParams,
    /// `dev->poll_limit_ns`, 0 at enable.
    pub poll_limit: Nanos,
    last: Option<usize>,
    last_poll_limit_hit: bool,
}

impl Haltpoll {
    pub fn new(params: HaltpollParams) -> Haltpoll {
        Haltpoll {
            params,
            poll_limit: 0,
            last: None,
            last_poll_limit_hit: false,
        }
    }

    /// `haltpoll_select`.
    pub fn select(&mut self, states: &[State], e: &Entry) -> usize {
        if states.len() < 2 || e.latency_req == 0 {
            return 0;
        }
        if self.poll_limit == 0 {
            return 1;
        }
        match self.last {
            // Polled last time: halt if the window ran out, else poll again.
            Some(0) if self.last_poll_limit_hit => 1,
            _ => 0,
        }
    }

    /// `haltpoll_reflect` and `adjust_poll_limit`.
    pub fn reflect(&mut self, idx: usize, residency: Nanos, poll_limit_hit: bool) {
        self.last = Some(idx);
        self.last_poll_limit_hit = poll_limit_hit;
        if idx == 0 {
            return;
        }
        let p = self.params;
        if residency > self.poll_limit && residency <= p.max {
            self.poll_limit = (self.poll_limit * p.grow).max(p.grow_start).min(p.max);
        } else if residency > p.max && p.allow_shrink {
            // `guest_halt_poll_shrink` 0 closes the window at once.
            self.poll_limit = self.poll_limit.checked_div(p.shrink).unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::MS;

    fn entry(sleep: Nanos, req: Nanos, iowaiters: u32) -> Entry {
        Entry {
            sleep_length: sleep,
            till_tick: 4 * MS,
            latency_req: req,
            iowaiters,
        }
    }

    fn names(t: Table) -> Vec<&'static str> {
        t.states().iter().map(|s| s.name).collect()
    }

    #[test]
    fn the_server_tables_are_intel_idles() {
        assert_eq!(names(Table::Icx), ["POLL", "C1", "C1E", "C6"]);
        let c6 = |t: Table| t.states()[3];
        assert_eq!(
            (c6(Table::Skx).exit_latency, c6(Table::Skx).target_residency),
            (133 * US, 600 * US)
        );
        assert_eq!(
            (c6(Table::Icx).exit_latency, c6(Table::Icx).target_residency),
            (170 * US, 600 * US)
        );
        assert_eq!(
            (c6(Table::Spr).exit_latency, c6(Table::Spr).target_residency),
            (290 * US, 800 * US)
        );
        assert!(Table::Off.states().is_empty());
        assert_eq!(Table::parse("icx"), Ok(Table::Icx));
        assert!(Table::parse("icelake").unwrap_err().contains("skx"));
    }

    #[test]
    fn menu_learns_long_periods_and_goes_deep() {
        // No history yet: eight intervals of 0 are a typical interval of
        // 0, whose performance cap (0 / 1) admits only POLL.
        let mut m = Menu::new(4 * MS);
        let s = Table::Icx.states();
        assert_eq!(s[m.select(s, &entry(3 * MS, NO_LIMIT, 0))].name, "POLL");
        // Eight long idle periods teach it: 3 ms sleeps choose C6.
        for _ in 0..8 {
            m.select(s, &entry(3 * MS, NO_LIMIT, 0));
            m.reflect(s, 0, 3 * MS, false);
        }
        assert_eq!(s[m.select(s, &entry(3 * MS, NO_LIMIT, 0))].name, "C6");
    }

    #[test]
    fn menu_learns_short_periods_and_stays_shallow() {
        let mut m = Menu::new(4 * MS);
        let s = Table::Icx.states();
        for _ in 0..8 {
            m.select(s, &entry(3 * MS, NO_LIMIT, 0));
            m.reflect(s, 0, 3 * MS, false);
        }
        // Regular 30 us idle periods (an I/O at QD1): typical interval 30.
        for _ in 0..8 {
            m.select(s, &entry(3 * MS, NO_LIMIT, 0));
            m.reflect(s, 2, 30 * US, false);
        }
        assert_eq!(s[m.select(s, &entry(3 * MS, NO_LIMIT, 0))].name, "C1E");
        // An I/O waiter multiplies the exit latency by 11: 30/11 = 2 us
        // admits C1 (1 us) but not C1E (4 us).
        assert_eq!(s[m.select(s, &entry(3 * MS, NO_LIMIT, 1))].name, "C1");
    }

    #[test]
    fn the_latency_limit_caps_the_state() {
        let s = Table::Icx.states();
        let mut m = Menu::new(4 * MS);
        for _ in 0..8 {
            m.select(s, &entry(3 * MS, NO_LIMIT, 0));
            m.reflect(s, 0, 3 * MS, false);
        }
        assert_eq!(s[m.select(s, &entry(3 * MS, 10 * US, 0))].name, "C1E");
        assert_eq!(m.select(s, &entry(3 * MS, 0, 0)), 0);
        let mut t = Teo::new(s.len(), 4 * MS);
        assert_eq!(s[t.select(s, &entry(3 * MS, NO_LIMIT, 0))].name, "C6");
        assert_eq!(s[t.select(s, &entry(3 * MS, 10 * US, 0))].name, "C1E");
    }

    #[test]
    fn teo_goes_shallower_after_intercepts() {
        let s = Table::Icx.states();
        let mut t = Teo::new(s.len(), 4 * MS);
        assert_eq!(s[t.select(s, &entry(3 * MS, NO_LIMIT, 0))].name, "C6");
        // Woken after 20 us every time, long before the 3 ms timer.
        for _ in 0..10 {
            let i = t.select(s, &entry(3 * MS, NO_LIMIT, 0));
            t.reflect(s, i, 20 * US);
        }
        assert_eq!(s[t.select(s, &entry(3 * MS, NO_LIMIT, 0))].name, "C1E");
    }

    #[test]
    fn qos_takes_the_least_and_the_device_limit_times_out() {
        let q = Qos {
            global: Some(50 * US),
            device: Some(DeviceLimit {
                limit: 10 * US,
                timeout: 3 * MS,
            }),
        };
        assert_eq!(q.latency_req(10 * MS, Some(9 * MS)), 10 * US);
        assert_eq!(q.latency_req(10 * MS, Some(6 * MS)), 50 * US);
        assert_eq!(q.latency_req(10 * MS, None), 50 * US);
        assert_eq!(Qos::default().latency_req(0, Some(0)), NO_LIMIT);
    }

    #[test]
    fn haltpoll_grows_its_window_then_shrinks_it() {
        let s = Table::Haltpoll.states();
        let mut h = Haltpoll::new(HaltpollParams::default());
        let e = entry(3 * MS, NO_LIMIT, 0);
        assert_eq!(h.select(s, &e), 1, "no window yet: halt");
        h.reflect(1, 30 * US, false);
        assert_eq!(h.poll_limit, 50_000, "grow_start");
        assert_eq!(h.select(s, &e), 0, "after a halt: poll");
        h.reflect(1, 80 * US, false);
        assert_eq!(h.poll_limit, 100_000);
        h.reflect(1, MS, false);
        assert_eq!(h.poll_limit, 50_000, "an idle period past 200 us halves it");
        // This VM: guest_halt_poll_ns = 0, the window never opens.
        let mut vm = Haltpoll::new(HaltpollParams {
            max: 0,
            ..HaltpollParams::default()
        });
        vm.reflect(1, 30 * US, false);
        assert_eq!((vm.poll_limit, vm.select(s, &e)), (0, 1));
    }

    // The cases below hold the governors' arithmetic to the sources the
    // module cites (menu.c at 010e85f9e47c, teo.c at 04bae4e2267d,
    // haltpoll.c at 2cc2c3cb54de); each names the kernel function.

    #[test]
    fn tables_and_governors_read_back_by_name() {
        for (name, t) in Table::ALL {
            assert_eq!(t.name(), name);
            assert_eq!(Table::parse(name), Ok(t));
        }
        for (name, g) in GovernorKind::ALL {
            assert_eq!(g.name(), name);
            assert_eq!(GovernorKind::parse(name), Ok(g));
        }
        assert_eq!(GovernorKind::default(), GovernorKind::Menu);
        let e = GovernorKind::parse("ladder").unwrap_err();
        assert!(e.contains("`ladder`") && e.contains("teo"), "{e}");
        assert_eq!(names(Table::Haltpoll), ["POLL", "haltpoll idle"]);
        assert_eq!(names(Table::Poll), ["POLL"]);
        assert_eq!(names(Table::Skx), ["POLL", "C1", "C1E", "C6"]);
        assert_eq!(names(Table::Spr), ["POLL", "C1", "C1E", "C6"]);
        // Only POLL polls; the tables' times are in us.
        let c1e = Table::Skx.states()[2];
        assert_eq!(
            (c1e.exit_latency, c1e.target_residency, c1e.polling),
            (10 * US, 20 * US, false)
        );
        assert!(Table::Skx.states()[0].polling);
    }

    #[test]
    fn menu_buckets_are_decades_split_by_pending_io() {
        // which_bucket: `if (nr_iowaiters) bucket = BUCKETS/2;` then one
        // bucket per decade of us: < 10, < 100, < 1000, < 10000, < 100000,
        // the rest.
        for (us, b) in [
            (0, 0),
            (9, 0),
            (10, 1),
            (99, 1),
            (100, 2),
            (999, 2),
            (1_000, 3),
            (9_999, 3),
            (10_000, 4),
            (99_999, 4),
            (100_000, 5),
            (u64::MAX, 5),
        ] {
            assert_eq!(which_bucket(us, 0), b, "{us} us");
            assert_eq!(which_bucket(us, 1), b + 6, "{us} us, I/O pending");
            assert_eq!(which_bucket(us, 7), b + 6, "{us} us, 7 waiters");
        }
    }

    fn menu_with(intervals: [u64; INTERVALS]) -> Menu {
        let mut m = Menu::new(4 * MS);
        m.intervals = intervals;
        m
    }

    #[test]
    fn menu_typical_interval_is_the_mean_of_a_tight_set() {
        // get_typical_interval: a variance of at most 400 us^2 (stddev 20
        // us) gives the mean.
        assert_eq!(menu_with([30; 8]).typical_interval(100), 30);
        // 6 x 100 and 2 x 130: mean 107 (rounded down), variance
        // (6 x 49 + 2 x 529) / 8 = 169.
        let m = menu_with([100, 100, 100, 100, 100, 100, 130, 130]);
        assert_eq!(m.typical_interval(1_000), 107);
        // Wider, but the mean beyond 6 stddev with all 8: 4 x 1000 and
        // 4 x 1100, variance 2500, 1050^2 > 36 x 2500.
        let m = menu_with([1_000, 1_000, 1_000, 1_000, 1_100, 1_100, 1_100, 1_100]);
        assert_eq!(m.typical_interval(10_000), 1_050);
        // Not worth computing when even the least is not below the
        // prediction.
        assert_eq!(menu_with([30; 8]).typical_interval(30), u64::MAX);
        assert_eq!(menu_with([30; 8]).typical_interval(31), 30);
    }

    #[test]
    fn menu_typical_interval_drops_the_largest_outliers() {
        // One long period among seven of 100 us: dropped (thresh = max - 1),
        // the rest agree.
        let m = menu_with([100, 100, 1_000, 100, 100, 100, 100, 100]);
        assert_eq!(m.typical_interval(2_000), 100);
        // Doubling periods never agree: with 6 of 8 left (divisor * 4 <=
        // INTERVALS * 3) there is no typical interval.
        let m = menu_with([10, 20, 40, 80, 160, 320, 640, 1_280]);
        assert_eq!(m.typical_interval(5_000), u64::MAX);
    }

    #[test]
    fn menu_update_deducts_the_exit_latency_and_moves_the_correction() {
        // menu_update: `if (measured_us > 2 * exit_latency) measured_us -=
        // exit_latency; else measured_us /= 2;`, at most next_timer_us;
        // `new_factor -= new_factor / DECAY; new_factor += RESOLUTION *
        // measured_us / next_timer_us`.
        let s = Table::Icx.states(); // C1 1/1, C1E 4/4, C6 170/600 us
        let mut m = Menu::new(4 * MS);
        m.select(s, &entry(MS, NO_LIMIT, 0)); // next timer 1000 us
        assert_eq!((m.next_timer_us, m.bucket), (1_000, 3));
        m.reflect(s, 1, 500 * US, false);
        assert_eq!(m.intervals[0], 499);
        assert_eq!(m.correction[3], 8_192 - 1_024 + 1_024 * 499 / 1_000);
        assert_eq!(m.ptr, 1);
        // At most twice the exit latency: half of it.
        m.reflect(s, 2, 8 * US, false);
        assert_eq!(m.intervals[1], 4);
        m.reflect(s, 2, 9 * US, false);
        assert_eq!(m.intervals[2], 5);
        // Skylake-SP's C1E (10 us exit): 15 us is under twice it, so 7 us
        // (not 15 - 10).
        let skx = Table::Skx.states();
        let mut m = Menu::new(4 * MS);
        m.select(skx, &entry(MS, NO_LIMIT, 0));
        m.reflect(skx, 2, 15 * US, false);
        assert_eq!(m.intervals[0], 7);
        // Longer than the timer: the timer (the factor stays at most unity).
        let mut m = Menu::new(4 * MS);
        m.select(s, &entry(MS, NO_LIMIT, 0));
        m.reflect(s, 3, 5 * MS, false);
        assert_eq!(m.intervals[0], 1_000);
        assert_eq!(m.correction[3], 8_192);
        // A POLL cut off by its time limit counts as the whole timer; a
        // state that is not POLL does not.
        let mut m = Menu::new(4 * MS);
        m.select(s, &entry(MS, NO_LIMIT, 0));
        m.reflect(s, 0, 20 * US, true);
        assert_eq!(m.intervals[0], 1_000);
        m.select(s, &entry(MS, NO_LIMIT, 0));
        m.reflect(s, 1, 20 * US, true);
        assert_eq!(m.intervals[1], 19);
    }

    #[test]
    fn menu_update_counts_long_idles_as_perfect_predictions() {
        // `if (next_timer_us > 0 && measured_us < MAX_INTERESTING)` ...
        // `else new_factor += RESOLUTION;`
        let s = Table::Icx.states();
        let mut m = Menu::new(4 * MS);
        m.select(s, &entry(100 * MS, NO_LIMIT, 0)); // bucket 5
        m.reflect(s, 3, 60 * MS, false);
        assert_eq!(m.correction[5], 8_192 - 1_024 + 1_024);
        // Just under MAX_INTERESTING: by the ratio.
        let mut m = Menu::new(4 * MS);
        m.select(s, &entry(100 * MS, NO_LIMIT, 0));
        m.reflect(s, 1, 50 * MS, false); // 49999 us after C1's 1 us
        assert_eq!(m.correction[5], 8_192 - 1_024 + 1_024 * 49_999 / 100_000);
        // At exactly MAX_INTERESTING (50000 us): unity, as beyond it.
        let mut m = Menu::new(4 * MS);
        m.select(s, &entry(100 * MS, NO_LIMIT, 0));
        m.reflect(s, 1, 50_001 * US, false);
        assert_eq!(m.intervals[0], 50_000);
        assert_eq!(m.correction[5], 8_192);
        // No timer known (under 1 us): unity.
        let mut m = Menu::new(4 * MS);
        m.select(s, &entry(500, NO_LIMIT, 0));
        m.reflect(s, 0, 0, false);
        assert_eq!(m.correction[0], 8_192);
        // An I/O waiter moves the I/O group's factor, not the other's.
        let mut m = Menu::new(4 * MS);
        m.select(s, &entry(MS, NO_LIMIT, 2));
        m.reflect(s, 1, 101 * US, false);
        assert_eq!(m.correction[9], 8_192 - 1_024 + 102);
        assert_eq!(m.correction[3], 8_192);
    }

    #[test]
    fn menu_keeps_the_last_eight_periods() {
        let s = Table::Icx.states();
        let mut m = Menu::new(4 * MS);
        for i in 1..=9u64 {
            m.select(s, &entry(MS, NO_LIMIT, 0));
            m.reflect(s, 1, (100 + i) * US, false);
        }
        // The ninth (108 us after 1 us of exit) overwrote the first.
        assert_eq!(m.intervals[0], 108);
        assert_eq!(m.intervals[1], 101);
        assert_eq!(m.ptr, 1);
    }

    #[test]
    fn menu_polls_when_the_first_state_does_not_fit_the_timer() {
        // menu_select's early exit: one state, no latency allowed, a timer
        // sooner than state 1's residency, or state 1 too slow to leave.
        let s = Table::Skx.states(); // C1 2/2 us
        let mut m = Menu::new(4 * MS);
        assert_eq!(m.select(&s[..1], &entry(3 * MS, NO_LIMIT, 0)), 0);
        assert_eq!(m.select(s, &entry(US, NO_LIMIT, 0)), 0);
        assert_eq!(m.select(s, &entry(3 * MS, US, 0)), 0);
    }

    #[test]
    fn teo_counts_a_wake_up_before_the_timer_as_an_intercept() {
        // teo_update: `measured_ns = last_residency; if (measured_ns >=
        // lat_ns) measured_ns -= lat_ns / 2; else measured_ns /= 2;` then
        // the deepest state whose residency fits the measured time gets an
        // intercept unless it is the timer's own (a hit).
        let s = Table::Icx.states();
        let mut t = Teo::new(s.len(), 4 * MS);
        t.select(s, &entry(3 * MS, NO_LIMIT, 0));
        // From C6 (170 us exit) after 20 us: 10 us measured, C1E's bin.
        t.reflect(s, 3, 20 * US);
        assert_eq!((t.bins[2].intercepts, t.bins[2].recent), (PULSE, 1));
        assert_eq!(t.recent_idx[0], Some(2));
        assert_eq!(t.total, PULSE);
        // Woken by the timer: a hit in C6's bin, after every bin decays by
        // 1/8 (DECAY_SHIFT 3).
        t.select(s, &entry(3 * MS, NO_LIMIT, 0));
        t.reflect(s, 3, 3 * MS);
        assert_eq!(t.bins[3].hits, PULSE);
        assert_eq!(t.bins[2].intercepts, PULSE - PULSE / 8);
        assert_eq!(t.total, PULSE - PULSE / 8 + PULSE);
        assert_eq!(t.recent_idx[1], None);
        // From C6 after 200 us: 200 - 85 = 115 us, still C1E's bin (C6
        // needs 600 us).
        t.select(s, &entry(3 * MS, NO_LIMIT, 0));
        t.reflect(s, 3, 200 * US);
        assert_eq!(t.recent_idx[2], Some(2));
        assert_eq!(t.bins[2].recent, 2);
        // Out of C6 (170 us exit) after 3 us, less than its exit latency:
        // half of it, 1.5 us, C1's bin (C1E needs 4 us).
        t.select(s, &entry(3 * MS, NO_LIMIT, 0));
        t.reflect(s, 3, 3 * US);
        assert_eq!(t.recent_idx[3], Some(1));
        // From C6 after 650 us: 650 - 85 = 565 us, short of C6's 600: an
        // intercept, not a hit.
        t.select(s, &entry(3 * MS, NO_LIMIT, 0));
        t.reflect(s, 3, 650 * US);
        assert_eq!(t.recent_idx[4], Some(2));
        // Exactly C1E's 4 us measured (4.5 us after C1, less half its 1
        // us exit): C1E's bin (`target_residency_ns <= measured_ns`).
        t.select(s, &entry(3 * MS, NO_LIMIT, 0));
        t.reflect(s, 1, 4_500);
        assert_eq!(t.recent_idx[5], Some(2));
    }

    #[test]
    fn teo_forgets_recent_intercepts_after_nine_wake_ups() {
        let s = Table::Icx.states();
        let mut t = Teo::new(s.len(), 4 * MS);
        t.select(s, &entry(3 * MS, NO_LIMIT, 0));
        t.reflect(s, 3, 20 * US); // an intercept in C1E's bin
        for _ in 0..8 {
            t.select(s, &entry(3 * MS, NO_LIMIT, 0));
            t.reflect(s, 3, 3 * MS); // hits
        }
        assert_eq!(t.bins[2].recent, 1);
        // The tenth wake-up reuses the first slot (NR_RECENT 9).
        t.select(s, &entry(3 * MS, NO_LIMIT, 0));
        t.reflect(s, 3, 3 * MS);
        assert_eq!(t.bins[2].recent, 0);
        assert_eq!(t.next_recent, 1);
    }

    #[test]
    fn teo_takes_the_deepest_state_the_timer_allows_and_polls_short_of_the_first() {
        let s = Table::Icx.states();
        let mut t = Teo::new(s.len(), 4 * MS);
        // Nothing learnt: by the timer alone. 600 us fits C6 exactly.
        assert_eq!(t.select(s, &entry(600 * US, NO_LIMIT, 0)), 3);
        assert_eq!(t.select(s, &entry(599 * US, NO_LIMIT, 0)), 2);
        // Under C1's 1 us residency: POLL.
        assert_eq!(t.select(s, &entry(999, NO_LIMIT, 0)), 0);
        assert_eq!(t.select(&s[..1], &entry(3 * MS, NO_LIMIT, 0)), 0);
        // The latency limit: the deepest state whose exit fits (C1E's 4 us).
        assert_eq!(t.select(s, &entry(3 * MS, 4 * US, 0)), 2);
        assert_eq!(t.select(s, &entry(3 * MS, 4 * US - 1, 0)), 1);
    }

    #[test]
    fn haltpoll_window_bounds() {
        // adjust_poll_limit: grow when `block_ns > poll_limit_ns && block_ns
        // <= guest_halt_poll_ns`, to at least grow_start and at most
        // guest_halt_poll_ns; shrink when `block_ns > guest_halt_poll_ns &&
        // guest_halt_poll_allow_shrink`.
        let p = HaltpollParams::default();
        let mut h = Haltpoll::new(p);
        h.reflect(1, 200_000, false); // exactly the most: grows
        assert_eq!(h.poll_limit, 50_000);
        h.reflect(1, 50_000, false); // not beyond the window: stays
        assert_eq!(h.poll_limit, 50_000);
        h.reflect(1, 60_000, false);
        h.reflect(1, 120_000, false);
        assert_eq!(h.poll_limit, 200_000);
        h.reflect(1, 199_000, false); // inside the window: stays
        assert_eq!(h.poll_limit, 200_000);
        h.reflect(1, 200_000, false); // not beyond guest_halt_poll_ns
        assert_eq!(h.poll_limit, 200_000);
        // Polling (state 0) changes nothing.
        h.reflect(0, 10 * MS, false);
        assert_eq!(h.poll_limit, 200_000);
        let mut keep = Haltpoll::new(HaltpollParams {
            allow_shrink: false,
            ..p
        });
        keep.reflect(1, 100_000, false);
        keep.reflect(1, MS, false);
        assert_eq!(keep.poll_limit, 50_000);
        let mut zero = Haltpoll::new(HaltpollParams { shrink: 0, ..p });
        zero.reflect(1, 100_000, false);
        zero.reflect(1, MS, false);
        assert_eq!(zero.poll_limit, 0);
        // grow 3 from 50 us: 150 us, then capped at 200 us.
        let mut g = Haltpoll::new(HaltpollParams { grow: 3, ..p });
        g.reflect(1, 100_000, false);
        g.reflect(1, 100_000, false);
        assert_eq!(g.poll_limit, 150_000);
        g.reflect(1, 160_000, false);
        assert_eq!(g.poll_limit, 200_000);
    }

    #[test]
    fn menu_typical_interval_wants_more_than_six_stddev_and_six_samples() {
        // `avg_sq > variance * 36`, strictly: 4 x 105 and 4 x 147 have mean
        // 126 and variance 441, 126^2 = 36 x 441, so the set is not typical;
        // the 147s go and the 105s are.
        let m = menu_with([105, 105, 105, 105, 147, 147, 147, 147]);
        assert_eq!(m.typical_interval(1_000), 105);
        // Three equal outliers go at once, leaving 5 of 8 (mean 1032,
        // variance 536): within 6 stddev, but `divisor * 4 >= INTERVALS * 3`
        // fails and `divisor * 4 <= INTERVALS * 3` gives no prediction.
        let m = menu_with([1_000, 1_010, 1_040, 1_050, 1_060, 5_000, 5_000, 5_000]);
        assert_eq!(m.typical_interval(10_000), u64::MAX);
    }

    /// A menu governor whose history predicts nothing (every interval
    /// longer than any timer here): the prediction is the timer's.
    fn menu_by_the_timer() -> Menu {
        menu_with([100_000; 8])
    }

    #[test]
    fn menu_allows_a_state_whose_exit_latency_equals_the_limit() {
        // menu_select: `if (s->exit_latency_ns > latency_req) break;`
        let s = Table::Skx.states(); // C1 2/2, C1E 10/20, C6 133/600 us
        let mut m = menu_by_the_timer();
        assert_eq!(m.select(s, &entry(3 * MS, 10 * US, 0)), 2);
        assert_eq!(m.select(s, &entry(3 * MS, 10 * US - 1, 0)), 1);
        assert_eq!(m.select(s, &entry(3 * MS, NO_LIMIT, 0)), 3);
    }

    #[test]
    fn menu_takes_state_1_at_exactly_its_residency_and_exit_latency() {
        // menu_select's early exit returns POLL only for a timer sooner
        // than state 1's residency or a limit below its exit latency
        // (`<`): at exactly them, C1 (2/2 us on Skylake-SP).
        let s = Table::Skx.states();
        let mut m = menu_by_the_timer();
        assert_eq!(m.select(s, &entry(2 * US, NO_LIMIT, 0)), 1);
        assert_eq!(m.select(s, &entry(3 * MS, 2 * US, 0)), 1);
        assert_eq!(m.select(s, &entry(2 * US - 1, NO_LIMIT, 0)), 0);
    }

    #[test]
    fn menu_leaves_polling_for_a_state_the_timer_leaves_room_for() {
        // menu_select: "Use a physical idle state, not busy polling, unless
        // a timer is going to trigger soon enough": a prediction under
        // state 1's residency still takes it when its exit latency is
        // allowed and the timer is past its residency. Every shipped table
        // has state 1's exit latency equal to its residency, so a table
        // without C1 shows it: POLL, C1E 10/20 us, C6 133/600 us.
        let skx = Table::Skx.states();
        let s = [skx[0], skx[2], skx[3]];
        let mut m = menu_with([15; 8]); // a typical 15 us
        assert_eq!(m.select(&s, &entry(3 * MS, NO_LIMIT, 0)), 1);
    }

    #[test]
    fn menu_keeps_the_tick_for_a_shallow_state_when_a_deeper_one_is_past_the_prediction() {
        // menu_select, a prediction of a tick or more with the next state
        // deeper than it: "If the state selected so far is shallow, waking
        // up early won't hurt, so retain the tick": the prediction becomes
        // that state's residency (under a tick), and the kept tick steps it
        // down if it would cut it short. The shipped tables have no state
        // deeper than a tick; a hypothetical 5 ms one (300 us exit) after
        // Ice Lake-SP's shows it.
        let icx = Table::Icx.states();
        let deep = cstate("deep", 300, 5_000);
        let s = [icx[0], icx[1], icx[2], icx[3], deep];
        let mut m = menu_by_the_timer();
        let e = |till_tick| Entry {
            sleep_length: 4_500 * US,
            till_tick,
            latency_req: NO_LIMIT,
            iowaiters: 0,
        };
        assert_eq!(m.select(&s, &e(4 * MS)), 3);
        assert_eq!(m.select(&s, &e(500 * US)), 2);
        // A prediction of exactly a tick is not under it: the same.
        assert_eq!(
            m.select(
                &s,
                &Entry {
                    sleep_length: 4 * MS,
                    ..e(500 * US)
                }
            ),
            2
        );
        // The state selected so far itself deeper than a tick (5 ms, then a
        // hypothetical 20 ms): with its residency as the prediction the
        // tick stops, and it stays.
        let deeper = cstate("deeper", 400, 20_000);
        let s2 = [icx[0], icx[1], deep, deeper];
        let tenms = Entry {
            sleep_length: 10 * MS,
            ..e(500 * US)
        };
        assert_eq!(m.select(&s2, &tenms), 2);
        // A prediction past the deep state's residency takes it, tick or
        // not.
        assert_eq!(
            m.select(
                &s,
                &Entry {
                    sleep_length: 6 * MS,
                    ..e(500 * US)
                }
            ),
            4
        );
    }

    #[test]
    fn menu_keeps_the_tick_from_cutting_a_state_short() {
        // menu_select: with the tick kept (a polling state, or a
        // prediction under a tick), a state whose residency is past the
        // next tick (`delta_tick`) gives way to the deepest shallower one
        // that fits (`target_residency_ns <= delta_tick`).
        let s = Table::Icx.states(); // C1 1/1, C1E 4/4, C6 170/600 us
        let mut m = menu_by_the_timer();
        let e = |sleep, till_tick| Entry {
            sleep_length: sleep,
            till_tick,
            latency_req: NO_LIMIT,
            iowaiters: 0,
        };
        assert_eq!(m.select(s, &e(3 * MS, 4 * MS)), 3);
        assert_eq!(m.select(s, &e(3 * MS, 500 * US)), 2);
        assert_eq!(m.select(s, &e(3 * MS, 3 * US)), 1);
        assert_eq!(m.select(s, &e(3 * MS, 0)), 0);
        // A prediction of a tick or more stops the tick: C6 stays.
        assert_eq!(m.select(s, &e(10 * MS, 500 * US)), 3);
        // A prediction of exactly a tick stops it too (`predicted_ns <
        // TICK_NSEC` keeps it).
        assert_eq!(m.select(s, &e(4 * MS, 500 * US)), 3);
        // A residency equal to the time till the tick fits (`>`).
        assert_eq!(m.select(s, &e(3 * MS, 600 * US)), 3);
        // Without POLL the walk ends at the shallowest state, whatever its
        // residency (`for (i = idx - 1; i >= 0; i--)`).
        assert_eq!(m.select(&s[1..], &e(3 * MS, 0)), 0);
    }

    #[test]
    fn menu_rounds_the_corrected_timer_to_the_closest_us() {
        // `predicted_us = DIV_ROUND_CLOSEST_ULL(next_timer_us *
        // correction_factor, RESOLUTION * DECAY)`: 640 x 7678 / 8192 =
        // 599.9, read as 600, C6's residency (a table without POLL, so
        // that no polling fallback picks C6 regardless).
        let s = &Table::Icx.states()[1..]; // C1, C1E, C6
        let mut m = menu_by_the_timer();
        m.correction[2] = 7_678;
        assert_eq!(m.select(s, &entry(640 * US, NO_LIMIT, 0)), 2);
        // 639 x 7678 / 8192 = 598.9: 599, under C6's 600.
        assert_eq!(m.select(s, &entry(639 * US, NO_LIMIT, 0)), 1);
    }

    #[test]
    fn teo_takes_state_1_at_exactly_its_residency() {
        // A state pays from its target residency on: a 1 us timer allows
        // C1 (1 us).
        let s = Table::Icx.states();
        let mut t = Teo::new(s.len(), 4 * MS);
        assert_eq!(t.select(s, &entry(US, NO_LIMIT, 0)), 1);
        // Two states are enough to choose (`drv->state_count < 2` alone
        // forces state 0): this VM's haltpoll table.
        let h = Table::Haltpoll.states();
        let mut t = Teo::new(h.len(), 4 * MS);
        assert_eq!(t.select(h, &entry(3 * MS, NO_LIMIT, 0)), 1);
    }

    #[test]
    fn teo_polls_after_wake_ups_shorter_than_any_state() {
        // Ten wake-ups 0.5 us into POLL: intercepts in POLL's bin, the
        // shallower bins of every candidate (teo_select sums the bins
        // below the candidate).
        let s = Table::Icx.states();
        let mut t = Teo::new(s.len(), 4 * MS);
        for _ in 0..10 {
            let i = t.select(s, &entry(3 * MS, NO_LIMIT, 0));
            t.reflect(s, i, 500);
        }
        assert!(t.bins[0].intercepts > 0 && t.bins[1].intercepts == 0);
        assert_eq!(t.select(s, &entry(3 * MS, NO_LIMIT, 0)), 0);
    }

    #[test]
    fn teo_goes_shallower_only_where_both_majorities_agree() {
        // teo_select, step 2: from the candidate down, the first state
        // where `(!alt_recent || 2 * recent_sum > idx_recent_sum) &&
        // (!alt_intercepts || 2 * intercept_sum > idx_intercept_sum)`.
        let s = Table::Icx.states();
        // Intercepts and recent (early) wake-ups in C1's and C1E's bins;
        // the timer (3 ms) makes C6 the candidate.
        let pick_with = |hits_c1: u64, intercepts: [u64; 2], recent: [u64; 2]| {
            let mut t = Teo::new(s.len(), 4 * MS);
            for b in 0..2 {
                t.bins[b + 1].intercepts = intercepts[b];
                t.bins[b + 1].recent = recent[b];
            }
            t.bins[1].hits = hits_c1;
            t.total = hits_c1 + intercepts[0] + intercepts[1];
            t.select(s, &entry(3 * MS, NO_LIMIT, 0))
        };
        let pick = |intercepts, recent| pick_with(0, intercepts, recent);
        // Intercepts exactly half of all (C6's hits the other half): not
        // more than half, C6 stays.
        let mut t = Teo::new(s.len(), 4 * MS);
        t.bins[2].intercepts = PULSE;
        t.bins[3].hits = PULSE;
        t.total = 2 * PULSE;
        assert_eq!(t.select(s, &entry(3 * MS, NO_LIMIT, 0)), 3);
        // Hits in the shallower bins do not count against their intercepts
        // (`2 * idx_intercept_sum > total - idx_hit_sum`): 1 intercept
        // against 4 hits of C1 and nothing deeper is a majority.
        assert_eq!(pick_with(4 * PULSE, [0, PULSE], [0, 0]), 2);
        // Equal intercepts in C1's and C1E's bins: C1E's alone are half,
        // not more than half; with C1's, more: C1.
        assert_eq!(pick([PULSE, PULSE], [0, 0]), 1);
        // Most recent wake-ups in C1E's bin, most intercepts in C1's: the
        // recent majority is met at C1E, the intercepts' only at C1.
        assert_eq!(pick([2 * PULSE, 100], [0, 5]), 1);
        // Both met at C1E.
        assert_eq!(pick([100, 2 * PULSE], [0, 5]), 2);
        // Recent wake-ups alone decide when intercepts do not dominate:
        // `alt_recent = idx_recent_sum > NR_RECENT / 2`, so 5 of the last
        // 9 go shallower and 4 do not.
        assert_eq!(pick([0, 0], [0, 5]), 2);
        assert_eq!(pick([0, 0], [0, 4]), 3);
        // 3 of 6 is half, not more: on to C1.
        assert_eq!(pick([0, 0], [3, 3]), 1);
        // 3 of 5 recent in C1E's bin are more than half: C1E.
        assert_eq!(pick([0, 0], [2, 3]), 2);
        assert_eq!(pick([0, 0], [3, 2]), 1);
    }

    #[test]
    fn teo_hits_decay_by_an_eighth() {
        let s = Table::Icx.states();
        let mut t = Teo::new(s.len(), 4 * MS);
        for _ in 0..2 {
            t.select(s, &entry(3 * MS, NO_LIMIT, 0));
            t.reflect(s, 3, 3 * MS);
        }
        assert_eq!(t.bins[3].hits, PULSE - PULSE / 8 + PULSE);
        assert_eq!(t.total, t.bins[3].hits);
    }

    #[test]
    fn haltpoll_halts_after_a_poll_ran_out_and_polls_after_a_halt() {
        // haltpoll_select: `if (!drv->state_count || latency_req == 0)
        // return 0;` `if (dev->poll_limit_ns == 0) return 1;` then halt
        // only after a POLL that hit its limit.
        let s = Table::Haltpoll.states();
        let e = entry(3 * MS, NO_LIMIT, 0);
        let mut h = Haltpoll::new(HaltpollParams::default());
        assert_eq!(h.select(s, &entry(3 * MS, 0, 0)), 0);
        assert_eq!(h.select(&s[..1], &e), 0);
        h.reflect(1, 30 * US, false);
        h.reflect(0, 10 * US, true);
        assert_eq!(h.select(s, &e), 1);
        h.reflect(0, 10 * US, false);
        assert_eq!(h.select(s, &e), 0);
    }

    #[test]
    fn qos_device_limit_ends_at_its_timeout() {
        let d = DeviceLimit {
            limit: 10 * US,
            timeout: 3 * MS,
        };
        let q = Qos {
            global: None,
            device: Some(d),
        };
        assert_eq!(q.latency_req(3 * MS - 1, Some(0)), 10 * US);
        assert_eq!(q.latency_req(3 * MS, Some(0)), NO_LIMIT);
        // The device limit alone, and the least of the two.
        let q = Qos {
            global: Some(5 * US),
            device: Some(d),
        };
        assert_eq!(q.latency_req(MS, Some(0)), 5 * US);
        assert_eq!(NO_LIMIT, 2_000 * policy::SEC);
    }

    #[test]
    fn the_governor_dispatches_to_its_kind() {
        let s = Table::Icx.states();
        let e = entry(3 * MS, NO_LIMIT, 0);
        let hp = HaltpollParams::default();
        let mut g = Governor::new(GovernorKind::Teo, s, 4 * MS, hp);
        assert_eq!(g.select(s, &e), 3, "teo by the timer");
        g.reflect(s, 3, 20 * US, false);
        assert!(matches!(&g, Governor::Teo(t) if t.bins[2].intercepts == PULSE));
        let mut g = Governor::new(GovernorKind::Menu, s, 4 * MS, hp);
        assert_eq!(g.select(s, &e), 0, "menu without history polls");
        g.reflect(s, 1, 500 * US, false);
        assert!(matches!(&g, Governor::Menu(m) if m.intervals[0] == 499));
        let h = Table::Haltpoll.states();
        let mut g = Governor::new(GovernorKind::Haltpoll, h, 4 * MS, hp);
        assert_eq!(g.select(h, &e), 1);
        // POLL's window: haltpoll's own once it has one, else the table's.
        assert_eq!(g.poll_window(s, NO_LIMIT, 4 * MS), US);
        g.reflect(h, 1, 30 * US, false);
        assert_eq!(g.poll_window(s, NO_LIMIT, 4 * MS), 50_000);
        let m = Governor::new(GovernorKind::Menu, s, 4 * MS, hp);
        assert_eq!(m.poll_window(s, NO_LIMIT, 4 * MS), US);
    }

    #[test]
    fn poll_time_is_the_first_allowed_states_residency() {
        // cpuidle_poll_time: the first state after POLL whose exit latency
        // is within the limit (`<=`), else a tick.
        let s = Table::Skx.states();
        assert_eq!(poll_time(s, 2 * US, 4 * MS), 2 * US);
        assert_eq!(poll_time(s, 2 * US - 1, 4 * MS), 4 * MS);
        assert_eq!(poll_time(s, 10 * US, 4 * MS), 2 * US);
        assert_eq!(poll_time(Table::Poll.states(), NO_LIMIT, 4 * MS), 4 * MS);
        let s = Table::Skx.states();
        assert_eq!(poll_time(s, NO_LIMIT, 4 * MS), 2 * US);
        assert_eq!(poll_time(s, 0, 4 * MS), 4 * MS);
    }
}

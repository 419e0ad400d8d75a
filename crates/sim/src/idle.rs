//! The cores' idle states (issue 37 item 2): when a core runs out of work
//! its governor ([`host::cpuidle`]) picks an idle state from what the core
//! knows then (its next timer: the threads' sleep timers on it and its
//! tick; its recent idle periods; the PM QoS limit), and the next
//! wake-up, a device or timer interrupt for its handler or a thread woken
//! onto it, pays that state's exit latency before the handler or the
//! thread runs. Off (`idle_states = "off"`, every shipped profile: both
//! papers turned C-states off) nothing here runs and a run is what it was.
//!
//! Where the simulator stands in for the kernel:
//! - the exit latency is charged as CPU time of whatever runs first (the
//!   handler's irq time, or the woken thread's switch-in), and counted
//!   apart ([`report::IdleReport::idle_exit_ns`]);
//! - POLL's spinning is counted as idle time, as the simulator's idle
//!   cores are;
//! - the "next timer" is what the simulator knows: its threads' sleep
//!   timers on the core (io_uring's min-wait timers are not among them)
//!   and the core's tick grid; a core with neither sleeps "forever" (menu
//!   keeps `next_timer_us` in an unsigned int: `u32::MAX` us);
//! - `nr_iowait_cpu` is the threads of the core blocked in a call;
//! - Kristo's per-device limit (a proposal, not merged) holds on the core
//!   whose thread dispatched a request, for `device_latency_timeout` after
//!   its last dispatch.

use host::cpuidle::{
    DeviceLimit, Entry, Governor, GovernorKind, HaltpollParams, Qos, State, Table, NO_LIMIT,
};
use policy::{Nanos, US};

use crate::HostProfile;

/// menu's `next_timer_us` is an `unsigned int`: the longest sleep it can
/// hold, for a core with no timer the simulator knows.
const FOREVER: Nanos = u32::MAX as Nanos * US;

/// The idle-state settings a run may set over its host profile
/// (`reproduce`'s experiments; the profile keys `idle_states`,
/// `idle_governor`, `cpu_latency_limit`, `device_latency_limit`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdleSettings {
    pub states: Table,
    pub governor: GovernorKind,
    /// States turned off by name (`C6`).
    pub disabled: Vec<String>,
    pub cpu_latency_limit: Option<Nanos>,
    pub device_latency_limit: Option<Nanos>,
}

impl HostProfile {
    /// The idle settings `s` over the profile's own.
    pub fn apply_idle(&mut self, s: &IdleSettings) {
        self.idle_states = s.states;
        self.idle_governor = s.governor;
        self.idle_disabled = s.disabled.clone();
        self.cpu_latency_limit = s.cpu_latency_limit;
        self.device_latency_limit = s.device_latency_limit;
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Count {
    entries: u64,
    residency: Nanos,
    exit: Nanos,
}

#[derive(Clone, Copy, Debug)]
struct Entered {
    since: Nanos,
    state: usize,
    /// How long POLL spins before the core falls to state 1.
    poll_window: Nanos,
}

#[derive(Clone, Debug)]
struct CoreIdle {
    gov: Governor,
    entered: Option<Entered>,
    last_io: Option<Nanos>,
    /// Sleep timers set on the core (stale ones pruned as time passes).
    timers: Vec<Nanos>,
}

impl Idle {
    /// A thread on `core` sets a sleep timer for `at`.
    pub(crate) fn timer_set(&mut self, core: u32, at: Nanos) {
        self.cores[core as usize].timers.push(at);
    }

    /// A thread on `core` dispatched a block request at `now`.
    pub(crate) fn io_dispatched(&mut self, core: usize, now: Nanos) {
        self.cores[core].last_io = Some(now);
    }
}

/// Every core's governor and what the window counted.
#[derive(Clone, Debug)]
pub(crate) struct Idle {
    table: Table,
    governor: GovernorKind,
    /// The table's states less the disabled ones (a disabled state is
    /// skipped by every governor; dropping it from the list is the same
    /// choice for the deepest state, the one the experiments disable).
    states: Vec<State>,
    qos: Qos,
    tick: Nanos,
    cores: Vec<CoreIdle>,
    by_state: Vec<Count>,
    exits: u64,
    limit_seen: Option<Nanos>,
}

impl Idle {
    /// `None` with idle states off.
    pub(crate) fn new(host: &HostProfile) -> Option<Idle> {
        let states: Vec<State> = host
            .idle_states
            .states()
            .iter()
            .filter(|s| !host.idle_disabled.iter().any(|d| d == s.name))
            .copied()
            .collect();
        if states.is_empty() {
            return None;
        }
        let haltpoll = HaltpollParams {
            max: host.guest_halt_poll_ns,
            ..HaltpollParams::default()
        };
        let gov = Governor::new(host.idle_governor, &states, host.tick, haltpoll);
        Some(Idle {
            table: host.idle_states,
            governor: host.idle_governor,
            qos: Qos {
                global: host.cpu_latency_limit,
                device: host.device_latency_limit.map(|limit| DeviceLimit {
                    limit,
                    timeout: host.device_latency_timeout,
                }),
            },
            tick: host.tick,
            cores: (0..host.cores)
                .map(|_| CoreIdle {
                    gov: gov.clone(),
                    entered: None,
                    last_io: None,
                    timers: Vec::new(),
                })
                .collect(),
            by_state: vec![Count::default(); states.len()],
            exits: 0,
            limit_seen: None,
            states,
        })
    }

    /// The core goes idle at `now`: its governor picks a state.
    pub(crate) fn enter(
        &mut self,
        core: u32,
        now: Nanos,
        next_tick: Option<Nanos>,
        iowaiters: u32,
    ) {
        let c = &mut self.cores[core as usize];
        if c.entered.is_some() {
            return;
        }
        c.timers.retain(|&t| t > now);
        let timer = c.timers.iter().copied().min();
        let till_tick = next_tick.map_or(FOREVER, |t| t - now);
        let sleep_length = timer.map_or(till_tick, |t| (t - now).min(till_tick));
        let latency_req = self.qos.latency_req(now, c.last_io);
        if latency_req < NO_LIMIT {
            self.limit_seen = Some(self.limit_seen.map_or(latency_req, |l| l.min(latency_req)));
        }
        let e = Entry {
            sleep_length,
            till_tick,
            latency_req,
            iowaiters,
        };
        let state = c.gov.select(&self.states, &e);
        let poll_window = c.gov.poll_window(&self.states, latency_req, self.tick);
        c.entered = Some(Entered {
            since: now,
            state,
            poll_window,
        });
    }

    /// The core wakes at `now`: the exit latency its state costs (0 if it
    /// was not idling). Counted if `measuring`.
    pub(crate) fn exit(&mut self, core: u32, now: Nanos, measuring: bool) -> Nanos {
        let states = &self.states;
        let c = &mut self.cores[core as usize];
        let Some(e) = c.entered.take() else {
            return 0;
        };
        let slept = now - e.since;
        // (state, residency) pairs the period went through.
        let mut spent = [(e.state, slept), (usize::MAX, 0)];
        if states[e.state].polling && slept > e.poll_window && states.len() > 1 {
            // The poll ran out its window; the core fell to state 1.
            c.gov.reflect(states, e.state, e.poll_window, true);
            c.gov.reflect(states, 1, slept - e.poll_window, false);
            spent = [(e.state, e.poll_window), (1, slept - e.poll_window)];
        } else {
            c.gov.reflect(states, e.state, slept, false);
        }
        let last = if spent[1].0 == usize::MAX {
            spent[0].0
        } else {
            spent[1].0
        };
        let exit = states[last].exit_latency;
        if measuring {
            for (s, r) in spent.into_iter().filter(|(s, _)| *s != usize::MAX) {
                self.by_state[s].entries += 1;
                self.by_state[s].residency += r;
            }
            self.by_state[last].exit += exit;
            if exit > 0 {
                self.exits += 1;
            }
        }
        exit
    }

    pub(crate) fn report(&self) -> report::IdleReport {
        report::IdleReport {
            states: self.table.name().to_string(),
            governor: self.governor.name().to_string(),
            latency_limit_ns: self.limit_seen,
            idle_exit_ns: self.by_state.iter().map(|c| c.exit).sum(),
            exits: self.exits,
            by_state: self
                .states
                .iter()
                .zip(&self.by_state)
                .map(|(s, c)| report::IdleStateReport {
                    name: s.name.to_string(),
                    exit_latency_ns: s.exit_latency,
                    target_residency_ns: s.target_residency,
                    entries: c.entries,
                    residency_ns: c.residency,
                    exit_ns: c.exit,
                })
                .collect(),
        }
    }
}

/// The run's note: the states entered and the exit latency paid.
pub(crate) fn note(r: &report::IdleReport) -> String {
    let limit = r.latency_limit_ns.map_or(String::new(), |l| {
        format!(", latency limit {}", policy::format_nanos(l))
    });
    let states: Vec<String> = r
        .by_state
        .iter()
        .map(|s| format!("{} {}", s.name, s.entries))
        .collect();
    format!(
        "idle states {} ({}{limit}): entries {}; exit latency paid {} over {} wake-ups",
        r.states,
        r.governor,
        states.join(", "),
        policy::format_nanos(r.idle_exit_ns),
        r.exits
    )
}

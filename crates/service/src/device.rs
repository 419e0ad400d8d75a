//! The device itself: commands served by `units` internal units in arrival
//! order, each started by a free unit at once, the sustained rate bounded
//! by the IOPS ceiling and the bandwidth ceiling ([`Gate`]), each command's
//! service time drawn at its start ([`Sampler`]), and every Nth command
//! failed when faults are asked for.
//!
//! One model for every front end (issue 26 item 1): the simulator schedules
//! a [`Started`] command's completion as an event at its `due` time; the
//! emulator's modelled backends keep the started ones in a heap and report
//! each once their real clock passes `due`. Times are virtual: a unit frees
//! at the due time of the command it served, whenever the front end
//! notices, so a late look delays the report of a completion but never the
//! device.

use std::collections::VecDeque;

use policy::Nanos;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::draw::{Sampler, ServiceTime};
use crate::gate::{ceil, per_byte, spacing, Gate};
use crate::limits::MAX_SERVICE;
use crate::profile::DeviceProfile;

/// A command handed to the device: the front end's tag for it, its
/// direction and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command<T> {
    pub tag: T,
    pub write: bool,
    pub bytes: u64,
}

/// A command a unit started: when (after the ceilings), when it is due,
/// and whether it fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started<T> {
    pub tag: T,
    /// The start, rounded up to the ns.
    pub start: Nanos,
    /// When its completion is posted.
    pub due: Nanos,
    /// An injected fault: the command completes with an error and moves
    /// nothing ([`Device::failing_every`]).
    pub failed: bool,
}

/// One direction's ceilings and service time.
#[derive(Clone, Debug)]
struct Way {
    /// ns between starts at the IOPS ceiling (0: none).
    spacing: f64,
    /// ns a byte takes at the bandwidth ceiling (none: `None`).
    per_byte: Option<f64>,
    service: Service,
}

#[derive(Clone, Debug)]
enum Service {
    /// Drawn per command from the profile's distribution, at least 1 ns
    /// (a command never completes at the instant it starts).
    Drawn(Sampler),
    /// Exactly this long, as Linux null_blk's `completion_nsec` (0 allowed:
    /// due at its start).
    Constant(Nanos),
}

/// A command waiting for a unit.
#[derive(Clone, Copy, Debug)]
struct Waiting<T> {
    command: Command<T>,
    arrived: Nanos,
    failed: bool,
}

/// The device model. `T` is the front end's tag of a command (the
/// simulator's request number, the emulator's token).
#[derive(Clone, Debug)]
pub struct Device<T> {
    units: u32,
    busy: u32,
    gate: Gate,
    read: Way,
    write: Way,
    rng: Pcg64Mcg,
    error_every: u64,
    submitted: u64,
    /// Latest `now` seen by `submit`, so a caller's clock going backwards
    /// cannot start a command before one taken earlier.
    last_submit: Nanos,
    /// Waiting for a unit, by arrival. Non-empty only while every unit is
    /// busy.
    waiting: VecDeque<Waiting<T>>,
}

impl<T: Copy> Device<T> {
    /// The device a profile describes. Its units are the profile's
    /// `parallelism` and the gate holds one token per unit (issue 13: a
    /// free unit starts at once, only the sustained rate is bounded).
    /// `seed` seeds the service-time draws: the same seed and the same
    /// submissions give the same times.
    pub fn new(p: &DeviceProfile, seed: u64) -> Device<T> {
        let way = |iops: u64, bw: Option<u64>, t: &ServiceTime| Way {
            spacing: spacing(iops),
            per_byte: per_byte(bw),
            service: Service::Drawn(Sampler::new(t)),
        };
        Device::with(
            p.parallelism,
            way(p.max_read_iops, p.max_read_bw, &p.read),
            way(p.max_write_iops, p.max_write_bw, &p.write),
            seed,
        )
    }

    /// A device that moves nothing and takes exactly `latency` per command
    /// on `units` units (at least 1), without ceilings: Linux null_blk with
    /// `completion_nsec` and `hw_queue_depth` (`--backend null:`).
    pub fn null(latency: Nanos, units: u32) -> Device<T> {
        let way = || Way {
            spacing: 0.0,
            per_byte: None,
            service: Service::Constant(latency.min(MAX_SERVICE)),
        };
        Device::with(units, way(), way(), 0)
    }

    fn with(units: u32, read: Way, write: Way, seed: u64) -> Device<T> {
        let units = units.max(1);
        Device {
            units,
            busy: 0,
            gate: Gate::new(units),
            read,
            write,
            rng: Pcg64Mcg::seed_from_u64(seed),
            error_every: 0,
            submitted: 0,
            last_submit: 0,
            waiting: VecDeque::new(),
        }
    }

    /// Every `n`th command submitted (1-based over the device's life) fails
    /// (0: never): fault injection, to test what a program sees when the
    /// device errs.
    pub fn failing_every(mut self, n: u64) -> Device<T> {
        self.error_every = n;
        self
    }

    /// The device's internal units.
    pub fn units(&self) -> u32 {
        self.units
    }

    /// Bytes the waiting queue holds, for a front end's memory accounting.
    pub fn memory(&self) -> usize {
        self.waiting.capacity() * std::mem::size_of::<Waiting<T>>()
    }

    /// Commands in service and waiting.
    pub fn in_flight(&self) -> usize {
        self.busy as usize + self.waiting.len()
    }

    /// The host rang the doorbell for `command` at `now`: started at once
    /// if a unit is free (the ceilings may still hold its start later),
    /// otherwise it waits for [`Device::unit_freed`].
    pub fn submit(&mut self, now: Nanos, command: Command<T>) -> Option<Started<T>> {
        self.submitted += 1;
        let failed = self.error_every != 0 && self.submitted % self.error_every == 0;
        let now = now.max(self.last_submit);
        self.last_submit = now;
        let w = Waiting {
            command,
            arrived: now,
            failed,
        };
        if self.busy < self.units {
            Some(self.start(w, now))
        } else {
            self.waiting.push_back(w);
            None
        }
    }

    /// The command a unit served was due at `at`: the unit starts the next
    /// waiting command, at `at` or when that command arrived if later.
    pub fn unit_freed(&mut self, at: Nanos) -> Option<Started<T>> {
        self.busy -= 1;
        let next = self.waiting.pop_front()?;
        Some(self.start(next, next.arrived.max(at)))
    }

    /// Starts `w` on a unit free at `at`: the gate may hold it later, and
    /// its service time is drawn now, in start order, so that a seed gives
    /// the same times for the same submissions. A start held by the gate is
    /// taken at the gate's time, which changes nothing: in arrival order no
    /// other command could start before it.
    // Inlined: returned through memory, its `Started` was written field by
    // field and read back whole by the caller, a store-forwarding stall
    // (`perf annotate`: a quarter of `World::device_submit`'s samples).
    #[inline(always)]
    fn start(&mut self, w: Waiting<T>, at: Nanos) -> Started<T> {
        self.busy += 1;
        let c = w.command;
        let way = if c.write { &self.write } else { &self.read };
        let start = self
            .gate
            .start_sized(at, way.spacing, c.bytes, way.per_byte);
        let took = match &way.service {
            Service::Drawn(s) => s.sample(&mut self.rng, c.bytes).max(1),
            Service::Constant(t) => *t,
        };
        let start = ceil(start);
        Started {
            tag: c.tag,
            start,
            due: start.saturating_add(took),
            failed: w.failed,
        }
    }
}

impl DeviceProfile {
    /// The longest the device may plausibly hold one of `in_flight`
    /// commands of at most `bytes` each, for a stall watchdog: a draw ten
    /// standard deviations above the mean (never reached in practice),
    /// once per round of the units the commands need, plus the IOPS
    /// ceiling's spacing of all of them and the bandwidth ceiling's (the
    /// slower way's) transfer of all their bytes.
    pub fn hold_bound(&self, in_flight: u64, bytes: u64) -> Nanos {
        let one = |t: &ServiceTime| {
            let extra_kib = (bytes / 1024).saturating_sub(4);
            t.mean
                .saturating_add(t.stddev.saturating_mul(10))
                .saturating_add(extra_kib.saturating_mul(t.per_kib))
                .min(MAX_SERVICE)
        };
        let rounds = in_flight
            .div_ceil(u64::from(self.parallelism.max(1)))
            .max(1);
        let iops = self.max_read_iops.min(self.max_write_iops);
        let gate = ceil(spacing(iops) * in_flight as f64);
        let slower = match (self.max_read_bw, self.max_write_bw) {
            (Some(r), Some(w)) => Some(r.min(w)),
            (r, w) => r.or(w),
        };
        let bytes_gate =
            per_byte(slower).map_or(0, |pb| ceil(pb * in_flight as f64 * bytes as f64));
        one(&self.read)
            .max(one(&self.write))
            .saturating_mul(rounds)
            .saturating_add(gate)
            .saturating_add(bytes_gate)
    }
}

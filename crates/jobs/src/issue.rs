//! fio's I/O loop as one state machine: what a job thread does next.
//!
//! fio's `do_io` loop, per thread: stop when a bound is reached; while the
//! queue drains to `iodepth_low`, wait for completions
//! (`wait_for_completions`, `iodepth_batch_complete_min`/`_max`); stall for
//! `thinktime` every `thinktime_blocks` I/Os; hold the next I/O back until
//! `rate_iops` allows it; else build a batch of `iodepth_batch_submit`
//! requests and submit it. A blocking engine (psync, pvsync2, ...) has depth
//! one and its submitting call waits for its own request.
//!
//! The [`Issuer`] owns these decisions and the counters they read, as Linux's
//! lib/dim owns its: the caller passes the time and what it has in flight,
//! and applies the [`Decision`]. It reads no clock, runs no I/O and starts no
//! thread; the simulator applies it in virtual time, the emulator on real
//! I/O.

use policy::{Marks, Nanos, SEC};
use rand::Rng;

use crate::plan::{Bounds, IoLoop};
use crate::{BlockSizes, IoKind, Job, RateProcess};

/// How an engine's completion call waits: what both front ends model when
/// they apply a [`Decision::Reap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiter {
    /// A blocking system call: the submitting call sleeps until its one
    /// request completes (psync, pvsync2, ...).
    Blocking,
    /// `io_getevents(min, max)`: every completion delivered to the context
    /// wakes the waiter, which re-checks `min` and sleeps again if short
    /// (fs/aio.c read_events).
    Libaio,
    /// `io_uring_enter(GETEVENTS, min)`: the waker checks `min` before
    /// waking, and events already in the CQ ring are reaped from user space
    /// without a system call (fio's io_uring engine).
    IoUring,
}

impl Waiter {
    /// The waiter of `engine`'s completion call.
    pub fn of(engine: crate::Engine) -> Waiter {
        match engine {
            crate::Engine::Libaio => Waiter::Libaio,
            // fio's null engine gets its events with a function call, as
            // io_uring reaps what is already in its CQ ring.
            crate::Engine::IoUring | crate::Engine::Null => Waiter::IoUring,
            _ => Waiter::Blocking,
        }
    }
}

/// What a job thread does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Build and submit a batch; take its requests with [`Issuer::take`].
    Issue(Batch),
    /// Wait in the engine's completion call, as fio's
    /// `wait_for_completions` (for a blocking engine: the submitting call
    /// waits for its own request).
    Reap(Reap),
    /// Sleep until then (`rate_iops`, `thinktime`), then ask again.
    SleepUntil(Nanos),
    /// Nothing is in flight and nothing more will be issued.
    Done,
}

/// How many completions a waiting call takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reap {
    /// It returns once it has at least this many (at least one: the loop
    /// has nothing else to do).
    pub min: u32,
    /// It takes at most this many.
    pub max: u32,
}

/// A batch the issuer decided to submit: `len` requests, taken one at a time
/// with [`Issuer::take`] so that the caller may draw its own random numbers
/// (offsets) between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    len: u32,
    taken: u32,
    /// The first request's direction, drawn before the rate check.
    first_write: bool,
}

impl Batch {
    /// Requests in the batch.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Never true: a batch has at least one request.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One request of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    pub write: bool,
    pub bytes: u64,
    /// The marks the device sees ([`Job::marks`] for its place in the batch).
    pub marks: Marks,
    /// The job's criticality tag ([`Job::critical`], ours, FastResponse's
    /// `REQ_CRITICAL`): false unless the job file says `critical=1`. Front
    /// ends that know nothing of it may ignore it; it changes no mark.
    pub critical: bool,
}

/// A request the rate holds back (fio's `rate_ddir`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RateHold {
    write: bool,
    at: Nanos,
}

enum RateChoice {
    Go(bool),
    Hold(RateHold),
}

/// What the thread has issued so far (fio's `io_issues`, `io_issue_bytes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Issued {
    pub ios: u64,
    pub bytes: u64,
    pub reads: u64,
    pub writes: u64,
    /// Bytes per direction (fio's `rate_io_issue_bytes`), which `rate` and
    /// `rate_iops` pace.
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// One job thread's issuing state machine.
#[derive(Clone, Debug)]
pub struct Issuer {
    job: Job,
    io: IoLoop,
    /// The submitting call waits for its own request (blocking engines).
    blocking: bool,
    read_percent: u32,
    /// Block sizes (read, write).
    sizes: [BlockSizes; 2],
    /// A mixed job's current direction (fio's `rwmix_ddir`, reads first).
    rwmix_write: bool,
    /// Issues in the current direction before a new one is drawn (fio's
    /// `rwmix_issues`).
    rwmix_issues: u64,
    /// The rate holds the next I/O back: its direction and when it is due.
    rate_hold: Option<RateHold>,
    /// `rate_process=poisson`: when the next I/O of each direction (read,
    /// write) is due, in ns from the thread's start (fio's `last_usec`):
    /// the sum of the exponential gaps drawn so far.
    poisson_due: [Nanos; 2],

    /// When the thread starts issuing (`startdelay`).
    start: Nanos,
    /// When its measured part starts (`startdelay + ramp_time`).
    measure_from: Nanos,
    /// When it stops issuing, if time-bounded (`measure_from + runtime`).
    stop_at: Option<Nanos>,
    bytes_limit: Option<u64>,
    ios_limit: Option<u64>,

    issued: Issued,
    /// I/Os since the last think time.
    since_think: u32,
    /// The queue reached `iodepth`: no refill until at most `iodepth_low`
    /// are in flight.
    draining: bool,
    /// A bound was reached or [`Issuer::stop`] was called.
    stopped: bool,
}

impl Issuer {
    /// The issuer of one clone of `job`, bounded by `bounds`
    /// ([`Job::bounds`]); `t0` is the run's start, from which `startdelay`,
    /// `ramp_time` and `runtime` count.
    pub fn new(job: &Job, bounds: Bounds, t0: Nanos) -> Issuer {
        Issuer::released(job, bounds, t0, t0)
    }

    /// The issuer of a job that may start only at `released` (when the jobs
    /// it waits for, `stonewall` or `wait_for`, have finished): it starts at
    /// the later of that and `startdelay` after the run's start `t0` (fio
    /// counts start_delay from the run's genesis, backend.c run_threads),
    /// and its `ramp_time` and `runtime` count from its own start.
    pub fn released(job: &Job, bounds: Bounds, t0: Nanos, released: Nanos) -> Issuer {
        let start = (t0 + job.startdelay).max(released);
        let measure_from = start + job.ramp_time;
        Issuer {
            io: job.io_loop(),
            blocking: job.ioengine.is_sync(),
            read_percent: job.read_percent(),
            sizes: [job.block_sizes(false), job.block_sizes(true)],
            rwmix_write: false,
            rwmix_issues: 0,
            rate_hold: None,
            poisson_due: [0, 0],
            start,
            measure_from,
            stop_at: bounds.runtime.map(|r| measure_from + r),
            bytes_limit: bounds.bytes,
            ios_limit: bounds.ios,
            issued: Issued::default(),
            since_think: 0,
            draining: false,
            stopped: false,
            job: job.clone(),
        }
    }

    /// When the thread starts issuing (`startdelay`).
    pub fn start(&self) -> Nanos {
        self.start
    }

    /// When the measured part starts (`startdelay + ramp_time`).
    pub fn measure_from(&self) -> Nanos {
        self.measure_from
    }

    /// When the thread stops issuing, if time-bounded.
    pub fn stop_at(&self) -> Option<Nanos> {
        self.stop_at
    }

    /// The most requests the thread ever has in flight (`iodepth`, 1 for a
    /// blocking engine): the slots and buffers a front end sets aside.
    pub fn max_in_flight(&self) -> u32 {
        self.io.iodepth
    }

    /// What has been issued so far.
    pub fn issued(&self) -> Issued {
        self.issued
    }

    /// Still issuing: no bound reached and not stopped. Once false, the
    /// decisions only reap what is in flight, then say [`Decision::Done`].
    pub fn issuing(&self) -> bool {
        !self.stopped
    }

    /// Stops issuing (fio's `td->terminate`: the run's end, or another
    /// thread failed); what is in flight is still reaped.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// What `wait_for_completions` waits for with `in_flight` outstanding.
    pub fn wait_for_completions(&self, in_flight: u32) -> Reap {
        if self.blocking {
            return Reap { min: 1, max: 1 };
        }
        Reap {
            min: self.io.complete_min.min(in_flight).max(1),
            max: self.io.complete_max,
        }
    }

    /// The next move at `now` with `in_flight` requests outstanding.
    ///
    /// `rng` draws each request's direction (`rwmixread`): one for the first
    /// request of a batch here, before the rate check (so a throttled
    /// attempt consumes it), and one per further request in [`Issuer::take`].
    pub fn next<R: Rng + ?Sized>(&mut self, now: Nanos, in_flight: u32, rng: &mut R) -> Decision {
        // A blocking call returns only with its request; a stop is noticed
        // when it does.
        if self.blocking && in_flight > 0 {
            return Decision::Reap(self.wait_for_completions(in_flight));
        }
        if self.stopped || self.bound_reached(now) {
            self.stopped = true;
            return if in_flight == 0 {
                Decision::Done
            } else {
                Decision::Reap(self.wait_for_completions(in_flight))
            };
        }
        if in_flight >= self.io.iodepth {
            self.draining = true;
        }
        if self.draining && in_flight > self.io.low_mark {
            return Decision::Reap(self.wait_for_completions(in_flight));
        }
        self.draining = false;

        // fio's thinktime: stall after every `thinktime_blocks` I/Os.
        let think = self.job.thinktime;
        if think > 0 && self.since_think >= self.job.thinktime_blocks.max(1) {
            self.since_think = 0;
            return Decision::SleepUntil(now + think);
        }

        let mut len = self.io.batch_submit.min(self.io.iodepth - in_flight).max(1);
        if let Some(limit) = self.ios_limit {
            let left = (limit - self.issued.ios).max(1);
            len = len.min(u32::try_from(left).unwrap_or(u32::MAX));
        }
        let first_write = match self.rate_hold {
            // Held back by the rate: everything in flight completes, then
            // the thread sleeps, then it issues the direction it chose.
            Some(_) if in_flight > 0 => {
                return Decision::Reap(Reap {
                    min: 1,
                    max: self.io.complete_max,
                });
            }
            Some(hold) if now < hold.at => return Decision::SleepUntil(hold.at),
            Some(hold) => {
                self.rate_hold = None;
                hold.write
            }
            None => {
                let drawn = self.draw_write(rng);
                match self.rate_ddir(drawn, now) {
                    RateChoice::Go(write) => write,
                    RateChoice::Hold(hold) => {
                        self.rate_hold = Some(hold);
                        return if in_flight > 0 {
                            Decision::Reap(Reap {
                                min: 1,
                                max: self.io.complete_max,
                            })
                        } else {
                            Decision::SleepUntil(hold.at)
                        };
                    }
                }
            }
        };
        Decision::Issue(Batch {
            len,
            taken: 0,
            first_write,
        })
    }

    /// The batch's next request, counted as issued; `None` once all are
    /// taken. Draws the direction of every request after the first.
    pub fn take<R: Rng + ?Sized>(&mut self, batch: &mut Batch, rng: &mut R) -> Option<Io> {
        if batch.taken >= batch.len {
            return None;
        }
        let i = batch.taken;
        batch.taken += 1;
        let write = if i == 0 {
            batch.first_write
        } else {
            self.draw_write(rng)
        };
        // The size is drawn after the direction, as fio's get_io_u does
        // (set_rw_ddir, then get_next_buflen); only when sizes vary.
        let (kind, bytes) = if write {
            (IoKind::Write, crate::sizes::next(&self.sizes[1], rng))
        } else {
            (IoKind::Read, crate::sizes::next(&self.sizes[0], rng))
        };
        self.issued.ios += 1;
        self.issued.bytes += bytes;
        self.since_think += 1;
        if write {
            self.issued.writes += 1;
            self.issued.write_bytes += bytes;
        } else {
            self.issued.reads += 1;
            self.issued.read_bytes += bytes;
        }
        // fio draws the next due time of a paced direction after each
        // submit (backend.c do_io: `rate_next_io_time[ddir] =
        // usec_for_io(td, ddir)`); only a Poisson job draws, so every other
        // job's random stream stays as it was.
        if self.job.rate_process == RateProcess::Poisson {
            self.draw_poisson_gap(write, rng);
        }
        Some(Io {
            write,
            bytes,
            marks: self.job.marks(kind, i as usize, batch.len as usize),
            critical: self.job.critical,
        })
    }

    /// The next request's direction. A mixed job keeps fio's direction
    /// until it has issued its share (io_u.c `get_rw_ddir`): a new one is
    /// drawn only once the current direction's issues reach
    /// `rwmix_issues`, and a switch sets that to the old direction's issues
    /// times the new one's percent (`set_rwmix_bytes`). A job that only
    /// reads or writes draws one number per request all the same, as it
    /// always has here (its stream, and so its results, stay as they were).
    fn draw_write<R: Rng + ?Sized>(&mut self, rng: &mut R) -> bool {
        if !self.job.rw.is_mixed() {
            return rng.random_range(0..100) >= self.read_percent;
        }
        let issues = if self.rwmix_write {
            self.issued.writes
        } else {
            self.issued.reads
        };
        if issues >= self.rwmix_issues {
            // get_rand_ddir: v in 1..=100 reads when v <= rwmixread.
            let write = rng.random_range(0..100) >= self.read_percent;
            if write != self.rwmix_write {
                let share = if write {
                    100 - self.read_percent
                } else {
                    self.read_percent
                };
                self.rwmix_issues = issues * u64::from(share) / 100;
            }
            self.rwmix_write = write;
        }
        self.rwmix_write
    }

    fn bound_reached(&self, now: Nanos) -> bool {
        self.stop_at.is_some_and(|t| now >= t)
            || self.bytes_limit.is_some_and(|b| self.issued.bytes >= b)
            || self.ios_limit.is_some_and(|n| self.issued.ios >= n)
    }

    /// fio's `rate_ddir` (io_u.c): go with the drawn direction when it is
    /// due, or with the other direction of a mixed job when that one is.
    /// When neither is due, hold the one due first: fio quiesces
    /// (`io_u_quiesce`: everything in flight completes, with the default
    /// `io_submit_mode=inline`), sleeps until it is due, and issues it.
    /// The chosen direction becomes the mixed job's current one.
    fn rate_ddir(&mut self, write: bool, now: Nanos) -> RateChoice {
        let Some(at) = self.rate_wait(write, now) else {
            return RateChoice::Go(write);
        };
        let other_share = if write {
            self.read_percent
        } else {
            100 - self.read_percent
        };
        if self.job.rw.is_mixed() && other_share > 0 {
            match self.rate_wait(!write, now) {
                None => {
                    self.rwmix_write = !write;
                    return RateChoice::Go(!write);
                }
                Some(other) if other < at => {
                    self.rwmix_write = !write;
                    return RateChoice::Hold(RateHold {
                        write: !write,
                        at: other,
                    });
                }
                Some(_) => {}
            }
        }
        RateChoice::Hold(RateHold { write, at })
    }

    /// The pace of a direction in bytes per second, 0 for none: `rate`, or
    /// `rate_iops * min_bs` (init.c `__setup_rate`).
    fn bps(&self, write: bool) -> u128 {
        let d = usize::from(write);
        let pick = |rw: Option<(u64, u64)>| rw.map_or(0, |(r, w)| if write { w } else { r });
        match pick(self.job.rate) {
            0 => u128::from(pick(self.job.rate_iops)) * u128::from(self.sizes[d].min()),
            b => u128::from(b),
        }
    }

    /// `rate_process=poisson`: the next I/O of a paced direction is due an
    /// exponential time after the last one was (backend.c `usec_for_io`:
    /// `last_usec += (1000000 / iops) * -logf(U)`, iops = bps / min_bs),
    /// from the caller's RNG. The mean is kept in ns, `SEC * min_bs / bps`
    /// (fio rounds 10^6 / iops down to whole microseconds); U is drawn in
    /// (0, 1], so no gap is infinite.
    fn draw_poisson_gap<R: Rng + ?Sized>(&mut self, write: bool, rng: &mut R) {
        let bps = self.bps(write);
        if bps == 0 {
            return;
        }
        let d = usize::from(write);
        let mean = SEC as f64 * self.sizes[d].min() as f64 / bps as f64;
        let u = 1.0 - rng.random::<f64>();
        // `as` saturates: an absurd draw only pushes the due time out.
        let gap = (-u.ln() * mean).round() as Nanos;
        self.poisson_due[d] = self.poisson_due[d].saturating_add(gap);
    }

    /// When `rate` or `rate_iops` allows the next I/O in this direction, if
    /// later than `now`. fio paces bytes: `rate` is bytes per second, and
    /// `rate_iops` becomes `rate_iops * min_bs` (init.c `__setup_rate`); the
    /// next I/O is due once the bytes issued so far would have taken their
    /// time at that rate from the job's start (io_u.c `usec_for_io`). With
    /// `rate_process=poisson` it is due at the sum of the exponential gaps
    /// drawn so far ([`Issuer::draw_poisson_gap`]).
    fn rate_wait(&self, write: bool, now: Nanos) -> Option<Nanos> {
        let bps = self.bps(write);
        if bps == 0 {
            return None;
        }
        if self.job.rate_process == RateProcess::Poisson {
            let at = self
                .start
                .saturating_add(self.poisson_due[usize::from(write)]);
            return (at > now).then_some(at);
        }
        let issued = if write {
            self.issued.write_bytes
        } else {
            self.issued.read_bytes
        };
        let at = self.start + (u128::from(issued) * u128::from(SEC) / bps) as Nanos;
        (at > now).then_some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn job(text: &str) -> Job {
        crate::parse_str(&format!("[a]\n{text}"), "t.fio", &|_| None)
            .unwrap()
            .jobs[0]
            .clone()
    }

    fn issuer(text: &str) -> Issuer {
        let j = job(text);
        let b = j.bounds(None).unwrap();
        Issuer::new(&j, b, 0)
    }

    fn rng() -> StdRng {
        StdRng::seed_from_u64(7)
    }

    /// Takes the whole batch; its requests.
    fn take_all(iss: &mut Issuer, mut b: Batch, rng: &mut StdRng) -> Vec<Io> {
        std::iter::from_fn(|| iss.take(&mut b, rng)).collect()
    }

    /// Expects an Issue and takes it; the batch's length.
    fn issue(iss: &mut Issuer, now: Nanos, in_flight: u32, rng: &mut StdRng) -> u32 {
        match iss.next(now, in_flight, rng) {
            Decision::Issue(b) => take_all(iss, b, rng).len() as u32,
            d => panic!("expected Issue at {now} with {in_flight} in flight, got {d:?}"),
        }
    }

    fn reap(min: u32, max: u32) -> Decision {
        Decision::Reap(Reap { min, max })
    }

    #[test]
    fn blocking_engine_issues_one_and_its_call_waits_for_it() {
        for engine in ["psync", "pvsync2", "sync"] {
            let mut iss = issuer(&format!(
                "ioengine={engine}\niodepth=32\niodepth_batch_submit=8\nnumber_ios=2\n"
            ));
            let mut r = rng();
            assert_eq!(iss.max_in_flight(), 1);
            assert_eq!(issue(&mut iss, 0, 0, &mut r), 1, "{engine}");
            assert_eq!(iss.next(0, 1, &mut r), reap(1, 1));
            assert_eq!(issue(&mut iss, 10, 0, &mut r), 1);
            // The bound is reached, but the call returns with its request
            // first.
            assert_eq!(iss.next(20, 1, &mut r), reap(1, 1));
            assert!(iss.issuing());
            assert_eq!(iss.next(30, 0, &mut r), Decision::Done);
            assert!(!iss.issuing());
        }
    }

    #[test]
    fn libaio_submits_batches_and_reaps_between_complete_min_and_max() {
        let mut iss = issuer(
            "ioengine=libaio\niodepth=8\niodepth_batch_submit=4\niodepth_batch_complete_min=2\niodepth_batch_complete_max=4\nsize=1g\n",
        );
        let mut r = rng();
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 4);
        assert_eq!(issue(&mut iss, 0, 4, &mut r), 4);
        assert_eq!(iss.next(0, 8, &mut r), reap(2, 4));
        // Below iodepth (iodepth_low defaults to it): refill what is free.
        assert_eq!(issue(&mut iss, 0, 6, &mut r), 2);
        // min never exceeds what is in flight.
        assert_eq!(iss.wait_for_completions(1), Reap { min: 1, max: 4 });
    }

    #[test]
    fn io_uring_batch_submit_zero_means_the_whole_depth() {
        let mut iss = issuer(
            "ioengine=io_uring\niodepth=16\niodepth_batch_submit=0\niodepth_batch_complete_min=0\nsize=1g\n",
        );
        let mut r = rng();
        assert_eq!(iss.max_in_flight(), 16);
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 16);
        // complete_min=0 ("do not block") still waits for one.
        assert_eq!(iss.next(0, 16, &mut r), reap(1, 1));
    }

    #[test]
    fn a_full_queue_drains_to_iodepth_low_before_refilling() {
        let mut iss =
            issuer("ioengine=libaio\niodepth=8\niodepth_low=2\niodepth_batch_submit=8\nsize=1g\n");
        let mut r = rng();
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 8);
        for in_flight in (3..=8).rev() {
            assert_eq!(iss.next(0, in_flight, &mut r), reap(1, 1), "{in_flight}");
        }
        assert_eq!(issue(&mut iss, 0, 2, &mut r), 6);
        // Without iodepth_low, one free slot is refilled at once.
        let mut iss = issuer("ioengine=libaio\niodepth=8\niodepth_batch_submit=8\nsize=1g\n");
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 8);
        assert_eq!(iss.next(0, 8, &mut r), reap(1, 1));
        assert_eq!(issue(&mut iss, 0, 7, &mut r), 1);
    }

    #[test]
    fn rate_iops_spaces_ios_evenly_from_the_job_start() {
        // 1000 reads/s from startdelay=1s: the k-th read at 1s + k ms.
        let mut iss = issuer("rw=randread\nrate_iops=1000\nstartdelay=1\nsize=1g\n");
        let mut r = rng();
        let s = 1_000_000_000;
        assert_eq!(iss.start(), s);
        assert_eq!(issue(&mut iss, s, 0, &mut r), 1);
        assert_eq!(
            iss.next(s + 10, 0, &mut r),
            Decision::SleepUntil(s + 1_000_000)
        );
        assert_eq!(issue(&mut iss, s + 1_000_000, 0, &mut r), 1);
        // Late: it catches up on the schedule back-to-back (reads 2 to 5
        // are due by 5 ms), then waits again.
        for _ in 2..=5 {
            assert_eq!(issue(&mut iss, s + 5_000_000, 0, &mut r), 1);
        }
        assert_eq!(
            iss.next(s + 5_000_000, 0, &mut r),
            Decision::SleepUntil(s + 6_000_000)
        );
        // A zero rate in one direction leaves it unthrottled.
        let mut iss = issuer("rw=randwrite\nrate_iops=1000,0\nsize=1g\n");
        for _ in 0..5 {
            assert_eq!(issue(&mut iss, 0, 0, &mut r), 1);
        }
    }

    /// Issue times of a job whose requests complete at once, until `n`.
    fn arrivals(text: &str, n: usize, seed: u64) -> Vec<(Nanos, bool)> {
        let mut iss = issuer(text);
        let mut r = StdRng::seed_from_u64(seed);
        let (mut now, mut out) = (0, Vec::with_capacity(n));
        while out.len() < n {
            match iss.next(now, 0, &mut r) {
                Decision::Issue(b) => {
                    for io in take_all(&mut iss, b, &mut r) {
                        out.push((now, io.write));
                    }
                }
                Decision::SleepUntil(t) => now = t,
                d => panic!("{d:?} at {now}"),
            }
        }
        out
    }

    /// Mean and coefficient of variation of the gaps between `times`.
    fn gap_stats(times: &[Nanos]) -> (f64, f64) {
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_rates_mean() {
        // 2,000 reads/s: a mean gap of 500 us. Over 50,000 draws the
        // sample mean's standard error is 0.45 %; an exponential's standard
        // deviation equals its mean (CV 1), where linear pacing has CV 0.
        let text = "rw=randread\nrate_iops=2000\nrate_process=poisson\nsize=1t\n";
        for seed in [1, 2, 3] {
            let times: Vec<Nanos> = arrivals(text, 50_000, seed).iter().map(|a| a.0).collect();
            let (mean, cv) = gap_stats(&times);
            assert!(
                (mean / 500_000.0 - 1.0).abs() < 0.02,
                "seed {seed}: mean {mean}"
            );
            assert!((cv - 1.0).abs() < 0.03, "seed {seed}: CV {cv}");
            // Memoryless: P(gap > mean) = 1/e.
            let over = times.windows(2).filter(|w| w[1] - w[0] > 500_000).count() as f64
                / (times.len() - 1) as f64;
            assert!((over - (-1f64).exp()).abs() < 0.01, "seed {seed}: {over}");
        }
        // The same seed gives the same arrivals.
        assert_eq!(arrivals(text, 1000, 9), arrivals(text, 1000, 9));
        // `rate` (bytes/s) paces the same way: 8 MiB/s of 4 KiB reads.
        let times: Vec<Nanos> = arrivals(
            "rw=randread\nbs=4k\nrate=8m\nrate_process=poisson\nsize=1t\n",
            50_000,
            4,
        )
        .iter()
        .map(|a| a.0)
        .collect();
        let (mean, _) = gap_stats(&times);
        assert!((mean / 488_281.25 - 1.0).abs() < 0.02, "{mean}");
    }

    #[test]
    fn poisson_paces_each_direction_of_a_mixed_job_at_its_own_rate() {
        // FR Table 1's Terasort: reads every 0.67 ms, writes every 0.29 ms.
        let text = "rw=randrw\nrwmixread=30\nbs=128k\nrate_iops=1493,3448\nrate_process=poisson\nsize=1t\n";
        let arr = arrivals(text, 100_000, 5);
        let secs = arr.last().unwrap().0 as f64 / SEC as f64;
        let reads: Vec<Nanos> = arr.iter().filter(|a| !a.1).map(|a| a.0).collect();
        let writes: Vec<Nanos> = arr.iter().filter(|a| a.1).map(|a| a.0).collect();
        let (r, w) = (reads.len() as f64 / secs, writes.len() as f64 / secs);
        assert!((r / 1493.0 - 1.0).abs() < 0.03, "reads/s {r}");
        assert!((w / 3448.0 - 1.0).abs() < 0.03, "writes/s {w}");
        for (times, mean) in [(&reads, 1e9 / 1493.0), (&writes, 1e9 / 3448.0)] {
            let (m, cv) = gap_stats(times);
            assert!((m / mean - 1.0).abs() < 0.03, "{m} vs {mean}");
            assert!((cv - 1.0).abs() < 0.05, "CV {cv}");
        }
    }

    #[test]
    fn linear_pacing_draws_no_gap() {
        // Only Poisson jobs draw a gap: a linear job's random stream (and so
        // every result recorded before rate_process existed) is unchanged.
        let text = "rw=randread\nrate_iops=1000\nsize=1g\n";
        let mut iss = issuer(text);
        let (mut r, mut expect) = (rng(), rng());
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 1);
        expect.random_range(0..100u32);
        assert_eq!(r.random::<u64>(), expect.random::<u64>());
        let times: Vec<Nanos> = arrivals(text, 100, 1).iter().map(|a| a.0).collect();
        assert!(times.windows(2).all(|w| w[1] - w[0] == 1_000_000));
    }

    #[test]
    fn thinktime_stalls_after_thinktime_blocks_ios() {
        let mut iss = issuer("thinktime=100\nthinktime_blocks=2\nsize=1g\n");
        let mut r = rng();
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 1);
        assert_eq!(iss.next(5, 1, &mut r), reap(1, 1));
        assert_eq!(issue(&mut iss, 10, 0, &mut r), 1);
        assert_eq!(iss.next(15, 1, &mut r), reap(1, 1));
        // thinktime's unit is microseconds.
        assert_eq!(iss.next(20, 0, &mut r), Decision::SleepUntil(100_020));
        assert_eq!(issue(&mut iss, 100_020, 0, &mut r), 1);
    }

    #[test]
    fn runtime_counts_from_startdelay_plus_ramp_time() {
        let mut iss = issuer("startdelay=1\nramp_time=2\nruntime=3\ntime_based\n");
        let mut r = rng();
        let s = 1_000_000_000;
        assert_eq!((iss.measure_from(), iss.stop_at()), (3 * s, Some(6 * s)));
        assert_eq!(issue(&mut iss, 6 * s - 1, 0, &mut r), 1);
        assert_eq!(iss.next(6 * s - 1, 1, &mut r), reap(1, 1));
        assert_eq!(iss.next(6 * s, 0, &mut r), Decision::Done);
    }

    #[test]
    fn a_byte_bound_stops_issuing_and_drains_what_is_in_flight() {
        let mut iss = issuer(
            "ioengine=libaio\niodepth=4\niodepth_batch_submit=4\nbs=4k\nsize=16k\nloops=2\n",
        );
        let mut r = rng();
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 4);
        assert_eq!(iss.next(0, 4, &mut r), reap(1, 1));
        assert_eq!(issue(&mut iss, 0, 3, &mut r), 1);
        assert_eq!(issue(&mut iss, 0, 3, &mut r), 1);
        assert_eq!(issue(&mut iss, 0, 3, &mut r), 1);
        assert_eq!(issue(&mut iss, 0, 3, &mut r), 1);
        assert_eq!(iss.issued().bytes, 32 << 10);
        assert_eq!(iss.next(0, 4, &mut r), reap(1, 1));
        assert!(!iss.issuing());
        assert_eq!(iss.next(0, 3, &mut r), reap(1, 1));
        assert_eq!(iss.next(0, 0, &mut r), Decision::Done);
    }

    #[test]
    fn number_ios_trims_the_last_batch() {
        let mut iss = issuer("ioengine=libaio\niodepth=8\niodepth_batch_submit=8\nnumber_ios=10\n");
        let mut r = rng();
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 8);
        assert_eq!(iss.next(0, 8, &mut r), reap(1, 1));
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 2);
        assert_eq!(iss.next(0, 2, &mut r), reap(1, 1));
        assert_eq!(iss.next(0, 0, &mut r), Decision::Done);
        assert_eq!(iss.issued().ios, 10);
    }

    #[test]
    fn stop_ends_issuing_but_reaps_what_is_in_flight() {
        let mut iss = issuer("ioengine=libaio\niodepth=4\niodepth_batch_submit=2\nsize=1g\n");
        let mut r = rng();
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 2);
        iss.stop();
        assert!(!iss.issuing());
        assert_eq!(iss.next(0, 2, &mut r), reap(1, 1));
        assert_eq!(iss.next(0, 0, &mut r), Decision::Done);
    }

    #[test]
    fn directions_are_drawn_first_before_the_rate_check_then_one_per_request() {
        let mut iss = issuer("rw=randrw\nrwmixread=70\nioengine=libaio\niodepth=4\niodepth_batch_submit=4\nbs=4k,8k\nsize=1g\n");
        let (mut r, mut expect) = (rng(), rng());
        let Decision::Issue(b) = iss.next(0, 0, &mut r) else {
            panic!("expected a batch")
        };
        let ios = take_all(&mut iss, b, &mut r);
        let want: Vec<bool> = (0..4)
            .map(|_| expect.random_range(0..100u32) >= 70)
            .collect();
        assert_eq!(ios.iter().map(|io| io.write).collect::<Vec<_>>(), want);
        for io in &ios {
            assert_eq!(io.bytes, if io.write { 8192 } else { 4096 });
        }
        let is = iss.issued();
        assert_eq!((is.reads + is.writes, is.ios), (4, 4));
        assert_eq!(r.random::<u64>(), expect.random::<u64>());

        // A throttled attempt consumes its draw: two draws for one issued
        // read and one throttled.
        let mut iss = issuer("rw=randread\nrate_iops=1000\nsize=1g\n");
        let (mut r, mut expect) = (rng(), rng());
        assert_eq!(issue(&mut iss, 0, 0, &mut r), 1);
        assert_eq!(iss.next(1, 0, &mut r), Decision::SleepUntil(1_000_000));
        expect.random_range(0..100u32);
        expect.random_range(0..100u32);
        assert_eq!(r.random::<u64>(), expect.random::<u64>());
    }

    #[test]
    fn the_last_request_of_an_aio_batch_is_barrier() {
        let mut iss = issuer("ioengine=libaio\niodepth=4\niodepth_batch_submit=4\nsize=1g\n");
        let mut r = rng();
        let Decision::Issue(b) = iss.next(0, 0, &mut r) else {
            panic!()
        };
        let marks: Vec<Marks> = take_all(&mut iss, b, &mut r)
            .iter()
            .map(|io| io.marks)
            .collect();
        assert_eq!(
            marks,
            [Marks::NONE, Marks::NONE, Marks::NONE, Marks::BARRIER]
        );
        let mut iss = issuer("ioengine=psync\nsize=1g\n");
        let Decision::Issue(b) = iss.next(0, 0, &mut r) else {
            panic!()
        };
        assert_eq!(take_all(&mut iss, b, &mut r)[0].marks, Marks::URGENT);
    }

    proptest! {
        /// Whatever the knobs and however completions arrive, the issuer
        /// never exceeds iodepth or a batch size, never asks a call to wait
        /// for more than is in flight, never passes number_ios, and ends.
        #[test]
        fn the_loop_keeps_its_bounds_and_ends(
            engine in prop::sample::select(vec!["psync", "pvsync2", "libaio", "io_uring"]),
            depth in 1u32..32,
            batch in 0u32..40,
            cmin in 0u32..40,
            cmax in 0u32..40,
            low in prop::option::of(0u32..40),
            ios in 1u64..300,
            think in prop::option::of((1u64..50, 1u32..8)),
            rate in prop::option::of(1u64..100_000),
            seed in any::<u64>(),
        ) {
            // The parser refuses batch sizes beyond the depth.
            let (batch, cmin, cmax) = (batch.min(depth), cmin.min(depth), cmax.min(depth));
            let mut text = format!(
                "ioengine={engine}\niodepth={depth}\niodepth_batch_submit={batch}\niodepth_batch_complete_min={cmin}\niodepth_batch_complete_max={cmax}\nnumber_ios={ios}\nrw=randrw\n"
            );
            if let Some(low) = low {
                text += &format!("iodepth_low={}\n", low.min(depth));
            }
            if let Some((t, b)) = think {
                text += &format!("thinktime={t}\nthinktime_blocks={b}\n");
            }
            if let Some(r) = rate {
                text += &format!("rate_iops={r}\n");
            }
            let j = job(&text);
            let io = j.io_loop();
            let mut iss = Issuer::new(&j, j.bounds(None).unwrap(), 0);
            let mut r = StdRng::seed_from_u64(seed);
            let (mut now, mut in_flight, mut steps) = (0, 0u32, 0u64);
            loop {
                steps += 1;
                prop_assert!(steps < 100_000, "does not end");
                now += r.random_range(0..1000);
                match iss.next(now, in_flight, &mut r) {
                    Decision::Issue(b) => {
                        prop_assert!(iss.issuing());
                        prop_assert!(!b.is_empty() && b.len() <= io.batch_submit);
                        let n = take_all(&mut iss, b, &mut r).len() as u32;
                        prop_assert_eq!(n, b.len());
                        in_flight += n;
                        prop_assert!(in_flight <= iss.max_in_flight());
                        prop_assert!(iss.issued().ios <= ios);
                    }
                    Decision::Reap(Reap { min, max }) => {
                        prop_assert!(1 <= min && min <= in_flight && min <= max);
                        in_flight -= r.random_range(min..=max.min(in_flight));
                    }
                    Decision::SleepUntil(t) => {
                        prop_assert!(t > now);
                        now = t;
                    }
                    Decision::Done => {
                        prop_assert_eq!(in_flight, 0);
                        prop_assert_eq!(iss.issued().ios, ios);
                        break;
                    }
                }
            }
        }
    }
}

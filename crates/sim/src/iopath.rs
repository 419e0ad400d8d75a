//! Where a request's time goes, as FastResponse breaks the read path down
//! (FR 2.2 Fig 5a, 4.4 Fig 15a), and the device's queue depth over time
//! (FR Fig 16). Measurement only: nothing here changes what the run does.
//!
//! - T_Dev: from the request reaching the device (its doorbell; a split
//!   request's first piece) to the device finishing it (its last piece).
//! - T_Sched: from the interrupt handler's end that woke the thread for a
//!   completion (try_to_wake_up done) to the thread running again (its
//!   switch-in done). A request whose thread was not asleep for it (polled,
//!   or the thread already running) adds 0: the figures are the mean
//!   latency's parts.
//! - Device queue depth: commands at the device (submitted, not finished),
//!   as time spent at each depth in the measured window.
//! - Parts (ours, issue 23): each request's time from its submit call to
//!   the call's return split at the doorbell, the device unit's start, its
//!   end and the hand-over to the thread, with the depth it found at the
//!   device and left behind it; means over every request and over the
//!   slowest 1%.

use policy::Nanos;
use report::{IoPath, JobPath, PathParts, QueueDepth};

/// Per request slot: when it reached the device and when the device
/// finished it (a block layer's pieces fold into their request's slot).
#[derive(Clone, Copy, Debug)]
struct Times {
    at_device: Nanos,
    /// A device unit started it (its first piece).
    started: Nanos,
    done: Nanos,
    /// Handed to its thread (reaped by a handler, or found by a poller).
    delivered: Nanos,
    /// Commands at the device when it (its first piece) arrived.
    depth: u64,
    /// Commands left at the device when it (its last piece) finished.
    left: u64,
}

const UNSET: Times = Times {
    at_device: Nanos::MAX,
    started: Nanos::MAX,
    done: 0,
    delivered: 0,
    depth: 0,
    left: 0,
};

/// One measured request's stages, ns: clat, submit, queue, service,
/// deliver, after, and the depth it found.
#[derive(Clone, Copy, Debug)]
struct Rec {
    clat: Nanos,
    submit: Nanos,
    queue: Nanos,
    service: Nanos,
    deliver: Nanos,
    after: Nanos,
    /// Of `after`, T_Sched (woken to switched in).
    sched: Nanos,
    depth: u64,
    left: u64,
}

/// A [`Rec`] in 32 bytes instead of 72: the stages as `u32` ns (each
/// under 4.3 s in any run but a pathological one), clat their sum. A
/// request's record is written for every measured request and kept to the
/// end (the slowest 1% is known only then): at 72 bytes the page faults of
/// that memory were about 8% of `bench sim`'s time.
#[derive(Clone, Copy, Debug)]
struct Packed {
    /// `WIDE` when the record is in [`Recs::wide`], at index `queue`.
    submit: u32,
    queue: u32,
    service: u32,
    deliver: u32,
    after: u32,
    sched: u32,
    depth: u32,
    left: u32,
}

const WIDE: u32 = u32::MAX;

/// The most request records a trace replay keeps over all its threads
/// ([`Tracker::cap`]; our choice: 64 MiB at 32 bytes each, a third of the
/// issue's 200 MiB bound on a streamed replay).
pub(crate) const MAX_KEPT: usize = 1 << 21;

/// Records per chunk of [`Recs`]: 512 KiB.
const CHUNK: usize = 1 << 14;

/// Which of a thread's records are kept. Only the slowest 1% is ever read
/// back (at the report), but which records those are is known only then:
/// keeping every one was 32 bytes a measured request for the whole run,
/// memory that grew with the run's length and about a tenth of `bench
/// sim`'s time (issue 26 item 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Every record (`CINTERRUPTS_IOPATH_RECORDS` writes them all; the
    /// runs that cannot be run twice).
    All,
    /// The records at or above the bucket where the slowest
    /// [`KEEP_PERCENT`]% of the records so far begins, found again every
    /// [`RETUNE`] records (every record of the first [`WARMUP`]). A
    /// guess: the report checks that no record it dropped is one the
    /// slowest 1% needs ([`Tracker::tail_cuts`]), else the run is made
    /// again with [`Keep::From`] (`crate::run`).
    Guess,
    /// The records at or above this bucket: the cut a first run found.
    From(usize),
}

/// Records between two updates of [`Keep::Guess`]'s bucket (our choice: a
/// scan of at most the [`CLAT_BUCKETS`] counts for every 1,024 records).
const RETUNE: u64 = 1_024;

/// Records a thread keeps before [`Keep::Guess`] first guesses (512 KiB):
/// a run's start is its least settled part (queues filling, caches
/// warming), and a guess made on it falls short when the rest is faster.
/// With 4,096, 19 of `reproduce --quick`'s 714 runs were made twice (14
/// of them application runs); with 16,384 none was (our choice).
const WARMUP: u64 = 16_384;

/// The share of the records so far that [`Keep::Guess`] keeps, percent:
/// four times the 1% the report needs, so that a run whose latencies do
/// not drift keeps every record its slowest 1% needs (our choice; a guess
/// that falls short costs the run again, never a figure).
const KEEP_PERCENT: u64 = 4;

/// One thread's records, in the order its requests were taken, in chunks
/// of [`CHUNK`]: a growing `Vec` copied itself to new memory at every
/// doubling, a third of the run's page faults. Which are kept is
/// [`Keep`]'s; every one is counted in its clat bucket.
#[derive(Clone, Debug)]
struct Recs {
    packed: Vec<Vec<Packed>>,
    len: usize,
    /// The records a `Packed` cannot hold exactly.
    wide: Vec<Rec>,
    /// Every record's clat bucket ([`clat_bucket`]), kept or not.
    per_bucket: Vec<u64>,
    /// Records counted, kept or not.
    total: u64,
    keep: Keep,
    /// Records in a lower bucket are counted, not kept.
    keep_from: usize,
    /// The highest bucket of a record not kept.
    dropped: Option<usize>,
    /// The most records kept ([`Tracker::cap`]): past it, the lowest
    /// buckets kept are dropped until at most half remain, and no record
    /// below `floor` is kept again.
    cap: Option<usize>,
    floor: usize,
}

impl Default for Recs {
    fn default() -> Recs {
        Recs {
            packed: Vec::new(),
            len: 0,
            wide: Vec::new(),
            per_bucket: vec![0; CLAT_BUCKETS],
            total: 0,
            keep: Keep::All,
            keep_from: 0,
            cap: None,
            floor: 0,
            dropped: None,
        }
    }
}

/// The highest bucket from which up the counts reach `n` (at least 1, at
/// most their sum): where the slowest `n` records begin.
fn cut(per_bucket: &[u64], n: u64) -> usize {
    let mut slower = 0;
    (0..per_bucket.len())
        .rev()
        .find(|&b| {
            slower += per_bucket[b];
            slower >= n
        })
        .unwrap_or(0)
}

impl Recs {
    fn keeping(keep: Keep) -> Recs {
        Recs {
            keep,
            keep_from: match keep {
                Keep::From(b) => b,
                Keep::All | Keep::Guess => 0,
            },
            ..Recs::default()
        }
    }

    /// Counts `r` and keeps it if [`Keep`] says so.
    fn push(&mut self, r: Rec) {
        let b = clat_bucket(r.clat);
        self.per_bucket[b] += 1;
        self.total += 1;
        if self.keep == Keep::Guess && self.total >= WARMUP && self.total % RETUNE == 0 {
            let n = (self.total * KEEP_PERCENT).div_ceil(100);
            self.keep_from = cut(&self.per_bucket, n).max(self.floor);
        }
        if b < self.keep_from {
            self.dropped = self.dropped.max(Some(b));
            return;
        }
        self.store(r);
        if self.cap.is_some_and(|cap| self.len > cap) {
            self.shrink();
        }
    }

    /// Past the cap: keeps the slowest buckets holding at most half of it.
    #[cold]
    fn shrink(&mut self) {
        let to = self.cap.unwrap_or(usize::MAX) / 2;
        let mut stored = vec![0usize; CLAT_BUCKETS];
        for c in self.clats() {
            stored[clat_bucket(c)] += 1;
        }
        let mut above = self.len;
        let mut from = 0;
        while above > to && from < CLAT_BUCKETS {
            above -= stored[from];
            from += 1;
        }
        let kept: Vec<Rec> = self
            .iter()
            .filter(|r| clat_bucket(r.clat) >= from)
            .collect();
        self.dropped = self.dropped.max(Some(from - 1));
        self.floor = from;
        self.keep_from = self.keep_from.max(from);
        self.packed = Vec::new();
        self.wide = Vec::new();
        self.len = 0;
        for r in kept {
            self.store(r);
        }
    }

    fn store(&mut self, r: Rec) {
        let small = |v: Nanos| u32::try_from(v).ok().filter(|&v| v != WIDE);
        let packed = (|| {
            let p = Packed {
                submit: small(r.submit)?,
                queue: small(r.queue)?,
                service: small(r.service)?,
                deliver: small(r.deliver)?,
                after: small(r.after)?,
                sched: small(r.sched)?,
                depth: small(r.depth)?,
                left: small(r.left)?,
            };
            (Recs::unpack(&p).clat == r.clat).then_some(p)
        })();
        let p = packed.unwrap_or_else(|| {
            self.wide.push(r);
            Packed {
                submit: WIDE,
                queue: (self.wide.len() - 1) as u32,
                service: 0,
                deliver: 0,
                after: 0,
                sched: 0,
                depth: 0,
                left: 0,
            }
        });
        if self.packed.last().map_or(true, |c| c.len() == CHUNK) {
            self.packed.push(Vec::with_capacity(CHUNK));
        }
        self.packed.last_mut().expect("a chunk with room").push(p);
        self.len += 1;
    }

    fn unpack(p: &Packed) -> Rec {
        let n = |v: u32| v as Nanos;
        Rec {
            clat: n(p.submit) + n(p.queue) + n(p.service) + n(p.deliver) + n(p.after),
            submit: n(p.submit),
            queue: n(p.queue),
            service: n(p.service),
            deliver: n(p.deliver),
            after: n(p.after),
            sched: n(p.sched),
            depth: n(p.depth),
            left: n(p.left),
        }
    }

    fn get(&self, i: usize) -> Rec {
        let p = &self.packed[i / CHUNK][i % CHUNK];
        if p.submit == WIDE {
            self.wide[p.queue as usize]
        } else {
            Recs::unpack(p)
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn iter(&self) -> impl Iterator<Item = Rec> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Each record's clat, in order, without unpacking the rest.
    fn clats(&self) -> impl Iterator<Item = Nanos> + '_ {
        self.packed.iter().flatten().map(|p| {
            if p.submit == WIDE {
                self.wide[p.queue as usize].clat
            } else {
                [p.submit, p.queue, p.service, p.deliver, p.after]
                    .iter()
                    .map(|&v| v as Nanos)
                    .sum()
            }
        })
    }
}

/// Buckets of clat for finding the slowest 1% ([`clat_bucket`]).
const CLAT_BUCKETS: usize = 976;

/// A clat's bucket: below 16 ns the clat itself, above it its octave and
/// the 4 bits below its leading one. A larger clat never has a smaller
/// bucket, so every record in a bucket above another's is slower.
fn clat_bucket(clat: Nanos) -> usize {
    if clat < 16 {
        return clat as usize;
    }
    let octave = 63 - clat.leading_zeros() as usize;
    (octave - 3) * 16 + ((clat >> (octave - 4)) & 15) as usize
}

/// The smallest clat in bucket `b`.
fn clat_bucket_floor(b: usize) -> Nanos {
    if b < 16 {
        return b as Nanos;
    }
    let octave = b / 16 + 3;
    (16 + (b % 16) as Nanos) << (octave - 4)
}

#[derive(Clone, Copy, Debug, Default)]
struct PerThread {
    requests: u64,
    t_dev: Nanos,
    t_sched: Nanos,
    /// Woken for a completion at this time and not yet switched in.
    woken_at: Option<Nanos>,
    /// The wait of the last wake-up for a completion, for the next request
    /// the thread takes.
    pending: Nanos,
    /// The handler decided to wake it for a completion.
    io_wake: bool,
}

/// Running sums of measured requests' stages, added in the order the
/// requests are taken: the same f64 additions in the same order as summing
/// the records afterwards, so the means are bit-identical to that, without a
/// pass over every record at the report.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    n: u64,
    clat: f64,
    submit: f64,
    queue: f64,
    service: f64,
    deliver: f64,
    after: f64,
    depth: f64,
    left: f64,
}

#[derive(Debug, Default)]
pub(crate) struct Tracker {
    slots: Vec<Times>,
    threads: Vec<PerThread>,
    /// Per thread, its measured requests that reached the device (for the
    /// slowest 1%, known only at the end, and the CSV records).
    recs: Vec<Recs>,
    /// Per thread, the running sums of `recs` (the report's `parts`).
    sums: Vec<Sums>,
    depth: u64,
    since: Nanos,
    /// ns spent at each depth inside the window.
    at_depth: Vec<Nanos>,
    max: u64,
}

impl Tracker {
    pub(crate) fn new(threads: usize) -> Tracker {
        Tracker {
            threads: vec![PerThread::default(); threads],
            recs: (0..threads).map(|_| Recs::default()).collect(),
            sums: vec![Sums::default(); threads],
            ..Tracker::default()
        }
    }

    /// Keeps each thread's records as `keep` says (before the run): one
    /// [`Keep`] for all, or with `cuts` ([`Tracker::tail_cuts`]) each
    /// thread's own [`Keep::From`].
    pub(crate) fn keep(&mut self, keep: Keep, cuts: Option<&[usize]>) {
        for (i, recs) in self.recs.iter_mut().enumerate() {
            let keep = match cuts {
                Some(cuts) => Keep::From(cuts[i]),
                None => keep,
            };
            *recs = Recs::keeping(keep);
        }
    }

    /// Keeps at most `total` records over all threads (each thread its
    /// share, at least [`WARMUP`]): a trace replay's stream may be as long
    /// as a dataset. A thread past its share keeps only its slowest; if
    /// its slowest 1% needs more, its tail is left out of the report
    /// ([`Tracker::tail_cuts`] says so).
    pub(crate) fn cap(&mut self, total: usize) {
        let per = (total / self.recs.len().max(1)).max(WARMUP as usize);
        for r in &mut self.recs {
            r.cap = Some(per);
        }
    }

    /// Request records measured, and of them kept for the slowest 1%.
    pub(crate) fn records(&self) -> (u64, u64) {
        let measured = self.recs.iter().map(|r| r.total).sum();
        let kept = self.recs.iter().map(|r| r.len as u64).sum();
        (measured, kept)
    }

    /// After the run: `None` when every thread kept what its slowest 1%
    /// needs; else each thread's cut bucket, for running again with
    /// [`Tracker::keep`] (the run is deterministic, so the second finds
    /// the same cuts and keeps every record they need).
    pub(crate) fn tail_cuts(&self) -> Option<Vec<usize>> {
        let cuts: Vec<Result<usize, usize>> = self.recs.iter().map(Rec::slowest_bucket).collect();
        let short = cuts.iter().any(Result::is_err);
        short.then(|| cuts.into_iter().map(|c| c.unwrap_or_else(|b| b)).collect())
    }

    #[inline]
    fn slot(&mut self, req: u32) -> &mut Times {
        let i = req as usize;
        if self.slots.len() <= i {
            self.grow_slots(i);
        }
        &mut self.slots[i]
    }

    /// Out of the way of `slot`: a request's slot exists from its first
    /// use on (requests are recycled), so this runs a few times a run.
    #[cold]
    #[inline(never)]
    fn grow_slots(&mut self, i: usize) {
        self.slots.resize(i + 1, UNSET);
    }

    /// A command (`req`, of the request in slot `owner`) reaches the device.
    pub(crate) fn at_device(&mut self, owner: u32, now: Nanos, window: (Nanos, Nanos)) {
        let depth = self.depth;
        let t = self.slot(owner);
        if now < t.at_device {
            t.at_device = now;
            t.depth = depth;
        }
        self.depth_change(now, window, 1);
    }

    /// A device unit starts a command of the request in slot `owner` at
    /// `at` (its service begins).
    pub(crate) fn started(&mut self, owner: u32, at: Nanos) {
        let t = self.slot(owner);
        t.started = t.started.min(at);
    }

    /// The request in slot `req` is handed to its thread.
    pub(crate) fn delivered(&mut self, req: u32, now: Nanos) {
        self.slot(req).delivered = now;
    }

    /// The device finished a command of the request in slot `owner`.
    pub(crate) fn serviced(&mut self, owner: u32, now: Nanos, window: (Nanos, Nanos)) {
        self.depth_change(now, window, -1);
        let left = self.depth;
        let t = self.slot(owner);
        if now >= t.done {
            t.done = now;
            t.left = left;
        }
    }

    // Inlined into its two callers (twice per command): out of line its
    // call, prologue and epilogue were a third of its instructions.
    #[inline]
    fn depth_change(&mut self, now: Nanos, (from, to): (Nanos, Nanos), by: i64) {
        let a = self.since.max(from);
        let b = now.min(to);
        if b > a {
            let d = self.depth as usize;
            match self.at_depth.get_mut(d) {
                Some(ns) => *ns += b - a,
                None => self.grow_at_depth(d, b - a),
            }
            self.max = self.max.max(self.depth);
        }
        self.since = now;
        self.depth = self.depth.saturating_add_signed(by);
        if now >= from && now < to {
            self.max = self.max.max(self.depth);
        }
    }

    /// A depth first reached in the window: a few times a run.
    #[cold]
    #[inline(never)]
    fn grow_at_depth(&mut self, d: usize, ns: Nanos) {
        self.at_depth.resize(d + 1, 0);
        self.at_depth[d] += ns;
    }

    /// The handler decided to wake `tid` for a completion.
    pub(crate) fn io_wake(&mut self, tid: u32) {
        self.threads[tid as usize].io_wake = true;
    }

    /// `tid` became runnable (the handler ended).
    pub(crate) fn runnable(&mut self, tid: u32, now: Nanos) {
        let t = &mut self.threads[tid as usize];
        if std::mem::take(&mut t.io_wake) {
            t.woken_at = Some(now);
        }
    }

    /// `tid` is switched in; it runs at `running`.
    pub(crate) fn switched_in(&mut self, tid: u32, running: Nanos) {
        let t = &mut self.threads[tid as usize];
        if let Some(at) = t.woken_at.take() {
            t.pending += running.saturating_sub(at);
        }
    }

    /// `tid` took the request in slot `req`, issued (its submit call
    /// began) at `issued`; `measured` if it counts. Now is its clat's end.
    pub(crate) fn taken(&mut self, tid: u32, req: u32, measured: bool, issued: Nanos, now: Nanos) {
        let times = std::mem::replace(self.slot(req), UNSET);
        let t = &mut self.threads[tid as usize];
        let wait = std::mem::take(&mut t.pending);
        if measured {
            t.requests += 1;
            t.t_dev += times.done.saturating_sub(times.at_device.min(times.done));
            t.t_sched += wait;
            if let Some(rec) = Rec::of(&times, issued, now, wait) {
                self.sums[tid as usize].add(&rec);
                self.recs[tid as usize].push(rec);
            }
        }
    }

    /// Every measured request's parts as CSV lines, for a diagnosis
    /// (`CINTERRUPTS_IOPATH_RECORDS`): the thread's index (the report's
    /// job order), then clat, submit, queue, service, deliver, after and
    /// T_Sched in ns, and the depths at arrival and at done.
    pub(crate) fn records_csv(&self) -> String {
        let mut out =
            String::from("job,clat,submit,queue,service,deliver,after,sched,depth,left\n");
        for (i, recs) in self.recs.iter().enumerate() {
            for r in recs.iter() {
                out += &format!(
                    "{i},{},{},{},{},{},{},{},{},{}\n",
                    r.clat,
                    r.submit,
                    r.queue,
                    r.service,
                    r.deliver,
                    r.after,
                    r.sched,
                    r.depth,
                    r.left
                );
            }
        }
        out
    }

    /// The report's part, for the window `[from, to)`.
    pub(crate) fn report(&self, (from, to): (Nanos, Nanos)) -> IoPath {
        let mut at_depth = self.at_depth.clone();
        // The depth held from the last change to the window's end.
        let held = to.saturating_sub(self.since.max(from));
        if held > 0 {
            let d = self.depth as usize;
            if at_depth.len() <= d {
                at_depth.resize(d + 1, 0);
            }
            at_depth[d] += held;
        }
        let deepest = at_depth.iter().rposition(|&ns| ns > 0).unwrap_or(0) as u64;
        let total: Nanos = at_depth.iter().sum();
        let weighted: f64 = at_depth
            .iter()
            .enumerate()
            .map(|(d, &ns)| d as f64 * ns as f64)
            .sum();
        let mut p99 = 0;
        let mut seen = 0;
        for (d, &ns) in at_depth.iter().enumerate() {
            seen += ns;
            if total > 0 && seen as f64 >= 0.99 * total as f64 {
                p99 = d as u64;
                break;
            }
        }
        let mean = |sum: Nanos, n: u64| if n == 0 { 0.0 } else { sum as f64 / n as f64 };
        IoPath {
            jobs: self
                .threads
                .iter()
                .zip(&self.recs)
                .zip(&self.sums)
                .map(|((t, recs), sums)| JobPath {
                    requests: t.requests,
                    t_dev_mean_ns: mean(t.t_dev, t.requests),
                    t_sched_mean_ns: mean(t.t_sched, t.requests),
                    parts: Some(sums.means()),
                    // Exact whenever `tail_cuts` is None, as `crate::run`
                    // makes sure before it reports.
                    tail: Rec::slowest(recs).ok().map(|s| s.means()),
                })
                .collect(),
            device_queue: QueueDepth {
                mean: if total == 0 {
                    0.0
                } else {
                    weighted / total as f64
                },
                p99,
                max: self.max.max(deepest),
            },
        }
    }
}

impl Rec {
    /// The stages of a request that reached the device and was handed to
    /// its thread (a buffered write that never did has none).
    fn of(t: &Times, issued: Nanos, now: Nanos, sched: Nanos) -> Option<Rec> {
        if t.at_device == Nanos::MAX || t.started == Nanos::MAX || t.delivered == 0 {
            return None;
        }
        // Each stage's end no earlier than its start (clamped in order).
        let at = t.at_device.max(issued);
        let started = t.started.max(at);
        let done = t.done.max(started);
        let delivered = t.delivered.max(done);
        let end = now.max(delivered);
        Some(Rec {
            clat: end - issued,
            submit: at - issued,
            queue: started - at,
            service: done - started,
            deliver: delivered - done,
            after: end - delivered,
            sched,
            depth: t.depth,
            left: t.left,
        })
    }

    /// The bucket where the slowest `ceil(n / 100)` of the `n` records
    /// begin (0 without records); `Err` with it when a record there or
    /// above was not kept.
    fn slowest_bucket(recs: &Recs) -> Result<usize, usize> {
        let n = recs.total.div_ceil(100);
        if n == 0 {
            return Ok(0);
        }
        let bucket = cut(&recs.per_bucket, n);
        match recs.dropped {
            Some(d) if d >= bucket => Err(bucket),
            _ => Ok(bucket),
        }
    }

    /// The sums over the requests at or above the 99th percentile of clat
    /// (at least one): the `ceil(n / 100)` first in the order (clat
    /// descending, then taken first), added in that order, as sorting all
    /// of them stably would give. A selection finds them in linear time and
    /// only they are sorted (sorting every record was a tenth of `bench
    /// sim`'s time). The selection runs over the records in the buckets
    /// ([`clat_bucket`]) from the slowest down to the one that reaches
    /// `ceil(n / 100)`, not over all of them: a list of every record's
    /// clat and index was 16 bytes a request of fresh memory, a quarter of
    /// `bench sim`'s page faults.
    ///
    /// The buckets are every record's, kept or not; `Err` holds the cut's
    /// bucket when a record in it or above was not kept ([`Keep::Guess`]
    /// fell short), so the sums cannot be made.
    fn slowest(recs: &Recs) -> Result<Sums, usize> {
        let n = recs.total.div_ceil(100) as usize;
        let mut sums = Sums::default();
        if n == 0 {
            return Ok(sums);
        }
        let cut = clat_bucket_floor(Rec::slowest_bucket(recs)?);
        // (clat descending, index ascending): unique keys, a total order.
        let mut order: Vec<(std::cmp::Reverse<Nanos>, usize)> = recs
            .clats()
            .enumerate()
            .filter(|&(_, c)| c >= cut)
            .map(|(i, c)| (std::cmp::Reverse(c), i))
            .collect();
        if n < order.len() {
            order.select_nth_unstable(n - 1);
            order.truncate(n);
        }
        order.sort_unstable();
        for &(_, i) in &order {
            sums.add(&recs.get(i));
        }
        Ok(sums)
    }
}

impl Sums {
    fn add(&mut self, r: &Rec) {
        self.n += 1;
        self.clat += r.clat as f64;
        self.submit += r.submit as f64;
        self.queue += r.queue as f64;
        self.service += r.service as f64;
        self.deliver += r.deliver as f64;
        self.after += r.after as f64;
        self.depth += r.depth as f64;
        self.left += r.left as f64;
    }

    fn means(&self) -> PathParts {
        let n = self.n as f64;
        let m = |sum: f64| if self.n == 0 { 0.0 } else { sum / n };
        PathParts {
            requests: self.n,
            clat: m(self.clat),
            submit: m(self.submit),
            queue: m(self.queue),
            service: m(self.service),
            deliver: m(self.deliver),
            after: m(self.after),
            depth_at_arrival: m(self.depth),
            depth_at_done: m(self.left),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record whose clat is its stages' sum, `service` of them in the
    /// device.
    fn rec(service: Nanos, submit: Nanos) -> Rec {
        Rec {
            clat: submit + 3 + service + 1 + 7,
            submit,
            queue: 3,
            service,
            deliver: 1,
            after: 7,
            sched: 0,
            depth: submit % 5,
            left: 1,
        }
    }

    fn packed(recs: &[Rec]) -> Recs {
        let mut p = Recs::default();
        recs.iter().for_each(|&r| p.push(r));
        p
    }

    /// A capped guess (a trace replay's) holds at most its cap, and what
    /// it holds are the slowest: its tail is exact while the slowest 1%
    /// fits, and reported short (left out) when every record shares one
    /// bucket and the cap cannot hold them.
    #[test]
    fn a_capped_guess_keeps_its_slowest_within_its_cap() {
        let mut spread = Recs::keeping(Keep::Guess);
        spread.cap = Some(20_000);
        let mut all = Recs::keeping(Keep::All);
        for i in 0..200_000u64 {
            let r = rec(1_000 + (i * 7919) % 100_000, 1);
            spread.push(r);
            all.push(r);
        }
        assert!(spread.len() <= 20_000, "{}", spread.len());
        assert_eq!(
            format!("{:?}", Rec::slowest(&spread)),
            format!("{:?}", Rec::slowest(&all))
        );
        let mut same = Recs::keeping(Keep::Guess);
        same.cap = Some(4_000);
        for _ in 0..200_000u64 {
            same.push(rec(1_000, 1));
        }
        assert!(same.len() <= 4_000, "{}", same.len());
        assert!(Rec::slowest(&same).is_err());
    }

    #[test]
    fn a_record_reads_back_as_written_packed_or_wide() {
        let mut recs = vec![rec(10_000, 700), rec(9_000_000_000, 5)];
        // A wide stage, a wide depth, and a clat that is not the stages' sum.
        let mut r = rec(1_000, 1);
        r.depth = 1 << 40;
        recs.push(r);
        recs.push(Rec {
            clat: 5,
            ..rec(1_000, 2)
        });
        let mut r = rec(1_000, 3);
        r.submit = u32::MAX as Nanos;
        r.clat = r.submit + 3 + 1_000 + 1 + 7;
        recs.push(r);
        let p = packed(&recs);
        assert_eq!(p.wide.len(), 4);
        let back: Vec<String> = p.iter().map(|r| format!("{r:?}")).collect();
        let want: Vec<String> = recs.iter().map(|r| format!("{r:?}")).collect();
        assert_eq!(back, want);
    }

    /// What the report computed before: every record sorted stably by clat
    /// descending, the first `ceil(n / 100)` summed in that order.
    fn sorted_reference(recs: &[Rec]) -> PathParts {
        let mut v = recs.to_vec();
        v.sort_by_key(|r| std::cmp::Reverse(r.clat));
        v.truncate(recs.len().div_ceil(100));
        let mut sums = Sums::default();
        v.iter().for_each(|r| sums.add(r));
        sums.means()
    }

    #[test]
    fn the_slowest_percent_by_selection_is_the_stable_sorts_including_ties() {
        // Many equal clats across the cut: the earlier taken come first.
        for n in [0usize, 1, 99, 100, 101, 250, 1_000, 4_321, CHUNK + 7_000] {
            let recs: Vec<Rec> = (0..n as u64)
                .map(|i| rec(1_000 + (i * 7919) % 13 * 100, i))
                .collect();
            assert_eq!(
                format!("{:?}", Rec::slowest(&packed(&recs)).unwrap().means()),
                format!("{:?}", sorted_reference(&recs)),
                "n = {n}"
            );
        }
    }

    #[test]
    fn the_slowest_percent_over_many_octaves_and_wide_records() {
        // Clats from 1 ns to past 2^32 ns (wide records), the cut falling
        // inside a bucket and between buckets.
        for n in [1usize, 150, 3_000, 20_011] {
            let mut x = 7u64;
            let recs: Vec<Rec> = (0..n as u64)
                .map(|i| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let service = (x >> 11) >> ((x >> 58) as u32 % 53);
                    rec(service, i % 50)
                })
                .collect();
            let recs_packed = packed(&recs);
            assert!(n < 3_000 || !recs_packed.wide.is_empty(), "n = {n}");
            assert_eq!(
                format!("{:?}", Rec::slowest(&recs_packed).unwrap().means()),
                format!("{:?}", sorted_reference(&recs)),
                "n = {n}"
            );
            let clats: Vec<Nanos> = recs_packed.clats().collect();
            assert_eq!(clats, recs.iter().map(|r| r.clat).collect::<Vec<_>>());
        }
    }

    fn kept(keep: Keep, recs: &[Rec]) -> Recs {
        let mut p = Recs::keeping(keep);
        recs.iter().for_each(|&r| p.push(r));
        p
    }

    /// `n` records, `slow_first` of them slow (a phase that ended), each
    /// clat drawn from a small generator.
    fn phases(n: u64, slow_first: u64) -> Vec<Rec> {
        let mut x = 11u64;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                let jitter = (x >> 33) % 5_000;
                let base = if i < slow_first { 20_000 } else { 9_000 };
                rec(base + jitter, i % 7)
            })
            .collect()
    }

    #[test]
    fn a_guess_keeps_a_few_percent_and_the_same_slowest_percent() {
        let recs = phases(400_000, 0);
        let all = kept(Keep::All, &recs);
        let guess = kept(Keep::Guess, &recs);
        assert_eq!(guess.total, 400_000);
        // 4% and what shares the 4% point's bucket (512 ns wide here).
        assert!(guess.len * 5 < 400_000, "kept {}", guess.len);
        assert!(guess.dropped.is_some());
        assert_eq!(
            format!("{:?}", Rec::slowest(&guess)),
            format!("{:?}", Rec::slowest(&all))
        );
    }

    #[test]
    fn a_guess_that_fell_short_says_so_and_its_cut_keeps_what_is_needed() {
        // A slow first tenth, longer than the records kept before the
        // first guess: its slowest 4% was the guess, but the run's slowest
        // 1% is a tenth of that phase.
        let recs = phases(400_000, 40_000);
        let all = kept(Keep::All, &recs);
        let guess = kept(Keep::Guess, &recs);
        let cut = Rec::slowest(&guess).expect_err("the guess fell short");
        assert_eq!(Rec::slowest_bucket(&all), Ok(cut));
        let again = kept(Keep::From(cut), &recs);
        assert!(again.len < all.len / 10, "kept {}", again.len);
        assert_eq!(
            format!("{:?}", Rec::slowest(&again)),
            format!("{:?}", Rec::slowest(&all))
        );
        // A tracker says which threads fell short, and keeps from their cuts.
        let mut t = Tracker::new(2);
        t.keep(Keep::Guess, None);
        for (i, r) in recs.iter().enumerate() {
            t.recs[i % 2].push(*r);
        }
        let cuts = t.tail_cuts().expect("short");
        t.keep(Keep::Guess, Some(&cuts));
        for (i, r) in recs.iter().enumerate() {
            t.recs[i % 2].push(*r);
        }
        assert_eq!(t.tail_cuts(), None);
    }

    #[test]
    fn clat_buckets_keep_the_clats_order_and_start_at_their_floor() {
        let mut last = 0;
        for c in (0..4_096).chain((12..64).flat_map(|o| [(1u64 << o) - 1, 1 << o, (1 << o) + 1])) {
            let b = clat_bucket(c);
            assert!(b >= last && b < CLAT_BUCKETS, "clat {c}");
            last = b;
        }
        assert_eq!(clat_bucket(Nanos::MAX), CLAT_BUCKETS - 1);
        for b in 0..CLAT_BUCKETS {
            let floor = clat_bucket_floor(b);
            assert_eq!(clat_bucket(floor), b, "bucket {b}");
            assert!(b == 0 || clat_bucket(floor - 1) == b - 1, "bucket {b}");
        }
        assert_eq!(clat_bucket(16), 16);
        assert_eq!(clat_bucket(31), 31);
        assert_eq!(clat_bucket(32), 32);
    }

    #[test]
    fn running_sums_are_the_records_means() {
        let recs: Vec<Rec> = (0..500).map(|i| rec(10_000 + i * 37, i)).collect();
        let mut sums = Sums::default();
        recs.iter().for_each(|r| sums.add(r));
        let m = sums.means();
        let n = recs.len() as f64;
        assert_eq!(m.requests, 500);
        assert_eq!(m.clat, recs.iter().map(|r| r.clat as f64).sum::<f64>() / n);
        assert_eq!(
            m.depth_at_arrival,
            recs.iter().map(|r| r.depth as f64).sum::<f64>() / n
        );
        assert_eq!(Sums::default().means().clat, 0.0);
    }
}

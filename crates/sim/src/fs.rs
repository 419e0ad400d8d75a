//! The file system as one mechanism, in a run where a job fsyncs: ext4's
//! fsync path and JBD2 (whose decisions are [`host::fsync`]'s), the page
//! cache's dirty data, the model I/Os at the device, and FastResponse's
//! breakdown of each fsync (FR Fig. 5b). Its state is its own (issue 26
//! item 3); the host hands it writes, fsync calls, wake-ups and reaped
//! requests and gets back the model's steps to apply: the I/Os to issue,
//! the threads to wake, the fsyncs that returned ([`crate::world::journal`] wires
//! it to the threads, the device and the scheduler).

use std::collections::{HashMap, VecDeque};

use hdrhistogram::Histogram;
use host::fsync::{Dirty, Fsync, IoId, IoKind, Step as FsStep, Thread as FsThread};
use policy::{Marks, Nanos};

use crate::limits::CLAT_MAX;
use crate::Journal;

/// Where one fsync's time went (FR Fig. 5b), ns, and what it cost.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Parts {
    pub d1: Nanos,
    pub d2: Nanos,
    pub jd: Nanos,
    pub jc: Nanos,
    pub sched: Nanos,
    pub switches: u64,
    pub ios: u64,
}

impl Parts {
    fn add(&mut self, o: &Parts) {
        self.d1 += o.d1;
        self.d2 += o.d2;
        self.jd += o.jd;
        self.jc += o.jc;
        self.sched += o.sched;
        self.switches += o.switches;
        self.ios += o.ios;
    }

    fn of(&mut self, kind: IoKind) -> &mut Nanos {
        match kind {
            IoKind::D1 => &mut self.d1,
            IoKind::D2 => &mut self.d2,
            IoKind::Jd | IoKind::FjMeta => &mut self.jd,
            IoKind::Jc | IoKind::FjCommit => &mut self.jc,
        }
    }
}

/// A model I/O at the device: its requests not yet delivered.
#[derive(Clone, Copy, Debug)]
struct Pending {
    remaining: u64,
    kind: IoKind,
    by: FsThread,
    issued: Nanos,
}

/// The file system's state in a run where a job fsyncs. Per-thread vectors
/// are indexed by thread id, JBD2's included.
pub(crate) struct FileSystem {
    fs: Fsync,
    /// JBD2's thread id.
    jbd2: u32,
    /// Model I/O of each request slot at the device.
    ios: HashMap<u32, IoId>,
    pending: HashMap<IoId, Pending>,
    /// fsync after every N writes (0: the thread never fsyncs).
    every: Vec<u32>,
    /// Its writes go to the page cache (`direct=0`).
    buffered: Vec<bool>,
    /// Dirty blocks of the thread's own file (threads that fsync).
    dirty: Vec<u32>,
    /// Writes issued since its last fsync.
    due: Vec<u32>,
    /// When its fsync under way began.
    started: Vec<Option<Nanos>>,
    /// When the path last woke it, and the I/O whose completion woke it
    /// (None: a hand-off, JBD2 woken for a commit or the caller woken
    /// after it).
    woken: Vec<Option<(Nanos, Option<IoKind>)>>,
    /// Woken while not asleep: run the path again instead of sleeping.
    rewake: Vec<bool>,
    /// The fsync under way.
    acc: Vec<Parts>,
    /// The fsyncs that returned in the measured window: their parts, how
    /// many, and their latency.
    total: Vec<Parts>,
    count: Vec<u64>,
    lat: Vec<Option<Histogram<u64>>>,
    /// The marks of each thread's model I/Os.
    marks: Vec<Marks>,
    /// The thread's fsyncs never wait for JBD2 (a critical caller under
    /// fjournaling, FR 3.4): JBD2's I/Os and wake-ups are not its time.
    own_commit: Vec<bool>,
    /// Buffered writes (served by the page cache) in all.
    buffered_writes: u64,
    /// Per thread (`fsync_io_polls`): its polled model I/O requests not
    /// yet taken, and those the device posted that it has not taken yet.
    polled_out: Vec<u32>,
    found: Vec<VecDeque<u32>>,
}

impl FileSystem {
    /// `every`, `buffered`, `marks`, `critical` per thread (JBD2's last).
    pub(crate) fn new(
        journal: Journal,
        jbd2: u32,
        every: Vec<u32>,
        buffered: Vec<bool>,
        marks: Vec<Marks>,
        critical: &[bool],
    ) -> FileSystem {
        let own_commit = critical
            .iter()
            .map(|&c| c && journal.config().fjournal)
            .collect();
        let n = every.len();
        let lat = every
            .iter()
            .map(|&e| {
                (e > 0).then(|| Histogram::new_with_bounds(1, CLAT_MAX, 3).expect("valid bounds"))
            })
            .collect();
        FileSystem {
            fs: Fsync::new(journal.config()),
            jbd2,
            ios: HashMap::new(),
            pending: HashMap::new(),
            every,
            buffered,
            dirty: vec![0; n],
            due: vec![0; n],
            started: vec![None; n],
            woken: vec![None; n],
            rewake: vec![false; n],
            acc: vec![Parts::default(); n],
            total: vec![Parts::default(); n],
            count: vec![0; n],
            lat,
            marks,
            own_commit,
            buffered_writes: 0,
            polled_out: vec![0; n],
            found: vec![VecDeque::new(); n],
        }
    }

    /// JBD2's thread id.
    pub(crate) fn jbd2(&self) -> u32 {
        self.jbd2
    }

    /// The path's name of thread `tid`.
    pub(crate) fn who(&self, tid: u32) -> FsThread {
        if tid == self.jbd2 {
            FsThread::Jbd2
        } else {
            FsThread::Task(tid)
        }
    }

    fn tid(&self, t: FsThread) -> u32 {
        match t {
            FsThread::Jbd2 => self.jbd2,
            FsThread::Task(t) => t,
        }
    }

    /// Threads with an fsync under way that may wait for JBD2, and when
    /// it began.
    fn in_fsync(&self) -> impl Iterator<Item = (usize, Nanos)> + '_ {
        self.started
            .iter()
            .enumerate()
            .filter(|&(t, _)| !self.own_commit[t])
            .filter_map(|(t, s)| s.map(|s| (t, s)))
    }

    /// The fsyncs thread `t`'s under way serves, and when each began: its
    /// own, or (JBD2's work) every one that may wait for JBD2.
    fn served(&self, t: FsThread) -> Vec<(usize, Nanos)> {
        match t {
            FsThread::Jbd2 => self.in_fsync().collect(),
            FsThread::Task(t) => self.started[t as usize]
                .map(|s| (t as usize, s))
                .into_iter()
                .collect(),
        }
    }

    /// The model I/O request slot `req` belongs to, if it is one.
    pub(crate) fn io_of(&self, req: u32) -> Option<IoId> {
        self.ios.get(&req).copied()
    }

    /// Whether thread `tid`'s writes go to the page cache.
    pub(crate) fn buffers(&self, tid: usize) -> bool {
        self.buffered[tid]
    }

    /// A write of `blocks` by thread `tid` in its submit call: it counts
    /// towards the thread's next fsync, and a buffered one dirties the
    /// thread's file (or, for a thread that never fsyncs, the running
    /// transaction's ordered data). True if the page cache took it.
    pub(crate) fn write_submitted(&mut self, tid: usize, blocks: u32, now: Nanos) -> bool {
        self.due[tid] = self.due[tid].saturating_add(1);
        if !self.buffered[tid] {
            return false;
        }
        if self.every[tid] > 0 {
            self.dirty[tid] = self.dirty[tid].saturating_add(blocks);
        } else {
            self.fs.dirtied(now, blocks);
        }
        self.buffered_writes += 1;
        true
    }

    /// Whether thread `tid` is due to fsync (fio's `fsync=N`).
    pub(crate) fn fsync_due(&self, tid: usize) -> bool {
        self.every[tid] > 0 && self.due[tid] >= self.every[tid]
    }

    /// Thread `tid` enters the fsync call at `now`.
    pub(crate) fn fsync_begins(&mut self, tid: usize, now: Nanos) {
        self.due[tid] = 0;
        self.started[tid] = Some(now);
        self.acc[tid] = Parts::default();
    }

    /// `ext4_sync_file`: the model's first step of thread `tid`'s fsync.
    pub(crate) fn fsync(&mut self, tid: u32, critical: bool, now: Nanos) -> FsStep {
        let dirty = Dirty {
            file_blocks: std::mem::take(&mut self.dirty[tid as usize]),
            other_blocks: self.fs.running_data_blocks(),
            // Appends extend the last extent, held in the inode itself
            // (ext4's i_data has room for four): no external extent block.
            extent_blocks: 0,
        };
        self.fs.fsync(now, tid, u64::from(tid), critical, dirty)
    }

    /// A thread the model woke has the CPU at `now`: its wait counts for
    /// the fsyncs it serves, as FR 2.2 and 4.4 split it. After a hand-off
    /// (JBD2 woken to commit, the fsync thread woken after the commit) it
    /// is T_Sched: "the waiting time for process scheduling after waking up
    /// JBD2 thread and fsync thread" (FR 2.2, Fig. 5b). After an I/O's
    /// completion it is that I/O's part (T_D1, T_D2, T_JD, T_JC): FR 4.4
    /// has the boost cut those four "because these four I/O operations all
    /// involve process scheduling", SelectISR's polling trim them and leave
    /// T_Sched alone ("the wake-up of the JBD2 and fsync threads does not
    /// involve I/O operation"), and fjournaling remove T_Sched entirely
    /// (FR 3.4: no JBD2 wake-up, no wake-up back). The model's next step.
    pub(crate) fn running(&mut self, tid: u32, now: Nanos) -> FsStep {
        let who = self.who(tid);
        if let Some((w, cause)) = self.woken[tid as usize].take() {
            for (t, s) in self.served(who) {
                let wait = now.saturating_sub(w.max(s));
                match cause {
                    Some(kind) => *self.acc[t].of(kind) += wait,
                    None => self.acc[t].sched += wait,
                }
            }
        }
        self.fs.running(now, who)
    }

    /// Whether `tid` was woken while not asleep (then it runs the path
    /// again instead of sleeping); clears it.
    pub(crate) fn take_rewake(&mut self, tid: u32) -> bool {
        std::mem::take(&mut self.rewake[tid as usize])
    }

    /// `tid` was woken while not asleep.
    pub(crate) fn rewake(&mut self, tid: u32) {
        self.rewake[tid as usize] = true;
    }

    /// Polled model I/Os of `tid` posted and not yet taken, and those
    /// still out.
    pub(crate) fn has_found(&self, tid: usize) -> bool {
        !self.found[tid].is_empty()
    }

    pub(crate) fn polled_out(&self, tid: usize) -> u32 {
        self.polled_out[tid]
    }

    /// A model I/O goes to the device at `now` in `n` requests (polled or
    /// not): returns its thread's id and the marks its requests carry.
    pub(crate) fn issued(
        &mut self,
        io: &host::fsync::Io,
        n: u64,
        polled: bool,
        now: Nanos,
    ) -> Marks {
        let by = self.tid(io.by);
        if polled {
            self.polled_out[by as usize] += u32::try_from(n).unwrap_or(u32::MAX);
        }
        self.pending.insert(
            io.id,
            Pending {
                remaining: n,
                kind: io.kind,
                by: io.by,
                issued: now,
            },
        );
        self.marks[by as usize]
    }

    /// The thread a model thread is.
    pub(crate) fn thread(&self, t: FsThread) -> u32 {
        self.tid(t)
    }

    /// Request slot `slot` carries part of model I/O `id`.
    pub(crate) fn track(&mut self, slot: u32, id: IoId) {
        self.ios.insert(slot, id);
    }

    /// The path wakes `t` at `now`, for the completion of an I/O of kind
    /// `cause` or (None) a hand-off: a switch for the fsyncs it serves.
    /// Returns its thread id.
    pub(crate) fn woken(&mut self, t: FsThread, now: Nanos, cause: Option<IoKind>) -> u32 {
        let tid = self.tid(t);
        match t {
            FsThread::Jbd2 => {
                let served: Vec<usize> = self.in_fsync().map(|(t, _)| t).collect();
                for s in served {
                    self.acc[s].switches += 1;
                }
            }
            FsThread::Task(_) => self.acc[tid as usize].switches += 1,
        }
        self.woken[tid as usize] = Some((now, cause));
        tid
    }

    /// Thread `tid`'s fsync returned at `now`; `measuring`: it counts in
    /// the window's figures.
    pub(crate) fn fsync_returned(&mut self, tid: u32, now: Nanos, measuring: bool) {
        let t = tid as usize;
        let Some(start) = self.started[t].take() else {
            return;
        };
        if measuring {
            let acc = self.acc[t];
            self.total[t].add(&acc);
            self.count[t] += 1;
            if let Some(h) = self.lat[t].as_mut() {
                h.saturating_record((now - start).max(1));
            }
        }
    }

    /// A request of model I/O `io` was reaped at `now` (by the handler, or
    /// by its polling thread): at the I/O's last, its time counts for the
    /// fsyncs it served, and its kind and the model's step for its
    /// completion.
    pub(crate) fn reaped(&mut self, req: u32, io: IoId, now: Nanos) -> Option<(IoKind, FsStep)> {
        self.ios.remove(&req);
        let p = self.pending.get_mut(&io)?;
        p.remaining -= 1;
        if p.remaining > 0 {
            return None;
        }
        let p = self.pending.remove(&io).expect("pending");
        for (t, s) in self.served(p.by) {
            *self.acc[t].of(p.kind) += now.saturating_sub(p.issued.max(s));
            self.acc[t].ios += 1;
        }
        Some((p.kind, self.fs.completed(now, io)))
    }

    /// The device posted a polled model I/O's request for `tid`.
    pub(crate) fn found(&mut self, tid: u32, req: u32) {
        self.found[tid as usize].push_back(req);
    }

    /// What `tid` found posted, taken; each is one polled request fewer
    /// out.
    pub(crate) fn take_found(&mut self, tid: u32) -> VecDeque<u32> {
        let found = std::mem::take(&mut self.found[tid as usize]);
        self.polled_out[tid as usize] -= found.len() as u32;
        found
    }

    /// JBD2's commit timer at `now`.
    pub(crate) fn commit_timer(&mut self, now: Nanos) -> FsStep {
        self.fs.commit_timer(now)
    }

    /// Thread `tid`'s fsyncs that returned in the window: how many, their
    /// summed parts, their latencies (`None` for a thread that never
    /// fsyncs).
    pub(crate) fn fsyncs(&self, tid: usize) -> Option<(u64, &Parts, &Histogram<u64>)> {
        let lat = self.lat[tid].as_ref()?;
        Some((self.count[tid], &self.total[tid], lat))
    }

    pub(crate) fn buffered_writes(&self) -> u64 {
        self.buffered_writes
    }

    /// The last transaction committed.
    pub(crate) fn committed(&self) -> host::fsync::Tid {
        self.fs.committed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thread 0 fsyncs every 2 buffered writes, thread 1 writes buffered
    /// and never fsyncs, thread 2 writes direct; JBD2 is thread 3.
    fn fs() -> FileSystem {
        FileSystem::new(
            Journal::Ordered,
            3,
            vec![2, 0, 0, 0],
            vec![true, true, false, false],
            vec![Marks::default(); 4],
            &[false; 4],
        )
    }

    #[test]
    fn writes_count_towards_the_next_fsync_and_the_page_cache_takes_buffered_ones() {
        let mut f = fs();
        assert!(!f.fsync_due(0));
        assert!(f.write_submitted(0, 2, 0));
        assert!(!f.fsync_due(0));
        assert!(f.write_submitted(0, 2, 0));
        assert!(f.fsync_due(0), "fsync=2");
        assert!(f.write_submitted(1, 3, 0));
        assert!(!f.write_submitted(2, 3, 0), "direct: to the device");
        assert_eq!(f.buffered_writes(), 3);
        // Thread 1's data joins the running transaction (D2), thread 0's
        // its own file (D1, written by its fsync).
        f.fsync_begins(0, 10);
        assert!(!f.fsync_due(0));
        let step = f.fsync(0, false, 10);
        let blocks: Vec<_> = step.issue.iter().map(|io| (io.kind, io.blocks)).collect();
        assert!(blocks.contains(&(IoKind::D1, 4)), "{blocks:?}");
    }

    #[test]
    fn a_model_io_completes_at_its_last_request_and_counts_for_its_fsync() {
        let mut f = fs();
        f.write_submitted(0, 1, 0);
        f.write_submitted(0, 1, 0);
        f.fsync_begins(0, 100);
        let step = f.fsync(0, false, 100);
        let io = *step.issue.first().expect("the fsync writes D1");
        assert_eq!(f.thread(io.by), 0);
        f.issued(&io, 2, false, 200);
        f.track(7, io.id);
        f.track(8, io.id);
        assert_eq!(f.io_of(7), Some(io.id));
        assert!(f.reaped(7, io.id, 900).is_none(), "one request left");
        assert_eq!(f.io_of(7), None);
        let (kind, _) = f.reaped(8, io.id, 1_200).expect("the last request");
        assert_eq!(kind, IoKind::D1);
        f.fsync_returned(0, 1_500, true);
        let (n, parts, lat) = f.fsyncs(0).expect("thread 0 fsyncs");
        assert_eq!(n, 1);
        assert_eq!(parts.ios, 1);
        assert_eq!(*parts.clone().of(io.kind), 1_000, "issue to last reap");
        assert_eq!(lat.len(), 1);
        assert!(f.fsyncs(1).is_none(), "thread 1 never fsyncs");
    }

    #[test]
    fn a_wake_after_an_io_counts_in_its_part_and_a_hand_off_in_t_sched() {
        // FR 2.2 / 4.4: T_Sched is the wait after waking JBD2 and the
        // fsync thread; the wait after an I/O's completion is the I/O's.
        let mut f = fs();
        f.write_submitted(0, 1, 0);
        f.write_submitted(0, 1, 0);
        f.fsync_begins(0, 100);
        let step = f.fsync(0, false, 100);
        let io = *step.issue.first().expect("the fsync writes D1");
        f.issued(&io, 1, false, 100);
        f.track(7, io.id);
        let (kind, step) = f.reaped(7, io.id, 600).expect("D1 completes");
        assert_eq!(
            step.wake,
            [FsThread::Task(0)],
            "D1's completion wakes the caller"
        );
        f.woken(FsThread::Task(0), 600, Some(kind));
        // The caller gets the CPU 40 ns after its wake-up: D1's, not T_Sched.
        let step = f.running(0, 640);
        assert_eq!(step.wake, [FsThread::Jbd2], "the caller wakes JBD2");
        f.woken(FsThread::Jbd2, 700, None);
        // JBD2 gets the CPU 300 ns later: a hand-off, T_Sched.
        f.running(3, 1_000);
        f.fsync_returned(0, 2_000, true);
        let (_, parts, _) = f.fsyncs(0).expect("thread 0 fsyncs");
        assert_eq!(parts.d1, 500 + 40, "issue to reap, then the wake-up's wait");
        assert_eq!(parts.sched, 300, "the hand-off's wait only");
        assert_eq!(parts.switches, 2);
    }

    #[test]
    fn an_fsync_returning_outside_the_window_is_not_counted() {
        let mut f = fs();
        f.fsync_begins(0, 0);
        f.fsync_returned(0, 50, false);
        assert_eq!(f.fsyncs(0).map(|s| s.0), Some(0));
        // Returned once: a second return is nothing.
        f.fsync_returned(0, 60, true);
        assert_eq!(f.fsyncs(0).map(|s| s.0), Some(0));
    }

    #[test]
    fn polled_requests_found_are_taken_once_and_leave_the_count() {
        let mut f = fs();
        let io = host::fsync::Io {
            id: 1,
            kind: IoKind::Jd,
            blocks: 1,
            by: FsThread::Jbd2,
        };
        f.issued(&io, 3, true, 0);
        assert_eq!(f.polled_out(3), 3);
        f.found(3, 10);
        f.found(3, 11);
        assert!(f.has_found(3));
        assert_eq!(Vec::from(f.take_found(3)), [10, 11]);
        assert!(!f.has_found(3));
        assert_eq!(f.polled_out(3), 1);
    }

    #[test]
    fn a_wake_while_awake_is_remembered_once() {
        let mut f = fs();
        assert!(!f.take_rewake(0));
        f.rewake(0);
        assert!(f.take_rewake(0));
        assert!(!f.take_rewake(0));
        assert_eq!(f.who(3), FsThread::Jbd2);
        assert_eq!(f.who(1), FsThread::Task(1));
    }
}

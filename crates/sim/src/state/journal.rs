//! The file system's state in a run where a job fsyncs: what `World` holds
//! of it, with no dependency on `World` (issue 26 item 3).

use std::collections::{HashMap, VecDeque};

use hdrhistogram::Histogram;
use host::fsync::{Fsync, IoId, IoKind, Thread as FsThread};
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
    pub(crate) fn add(&mut self, o: &Parts) {
        self.d1 += o.d1;
        self.d2 += o.d2;
        self.jd += o.jd;
        self.jc += o.jc;
        self.sched += o.sched;
        self.switches += o.switches;
        self.ios += o.ios;
    }

    pub(crate) fn of(&mut self, kind: IoKind) -> &mut Nanos {
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
pub(crate) struct Pending {
    pub(crate) remaining: u64,
    pub(crate) kind: IoKind,
    pub(crate) by: FsThread,
    pub(crate) issued: Nanos,
}

/// The file system's state in a run where a job fsyncs. Per-thread vectors
/// are indexed by thread id, JBD2's included.
pub(crate) struct JournalState {
    pub fs: Fsync,
    /// JBD2's thread id.
    pub jbd2: u32,
    /// Model I/O of each request slot at the device.
    pub(crate) ios: HashMap<u32, IoId>,
    pub(crate) pending: HashMap<IoId, Pending>,
    /// fsync after every N writes (0: the thread never fsyncs).
    pub(crate) every: Vec<u32>,
    /// Its writes go to the page cache (`direct=0`).
    pub(crate) buffered: Vec<bool>,
    /// Dirty blocks of the thread's own file (threads that fsync).
    pub(crate) dirty: Vec<u32>,
    /// Writes issued since its last fsync.
    pub(crate) due: Vec<u32>,
    /// When its fsync under way began.
    pub(crate) started: Vec<Option<Nanos>>,
    /// When the path last woke it.
    pub(crate) woken: Vec<Option<Nanos>>,
    /// Woken while not asleep: run the path again instead of sleeping.
    pub(crate) rewake: Vec<bool>,
    /// The fsync under way.
    pub(crate) acc: Vec<Parts>,
    /// The fsyncs that returned in the measured window: their parts, how
    /// many, and their latency.
    pub total: Vec<Parts>,
    pub count: Vec<u64>,
    pub lat: Vec<Option<Histogram<u64>>>,
    /// The marks of each thread's model I/Os.
    pub(crate) marks: Vec<Marks>,
    /// The thread's fsyncs never wait for JBD2 (a critical caller under
    /// fjournaling, FR 3.4): JBD2's I/Os and wake-ups are not its time.
    pub(crate) own_commit: Vec<bool>,
    /// Buffered writes (served by the page cache) in all.
    pub buffered_writes: u64,
    /// Per thread (`fsync_io_polls`): its polled model I/O requests not
    /// yet taken, and those the device posted that it has not taken yet.
    pub(crate) polled_out: Vec<u32>,
    pub(crate) found: Vec<VecDeque<u32>>,
}

impl JournalState {
    /// `every`, `buffered`, `marks`, `critical` per thread (JBD2's last).
    pub(crate) fn new(
        journal: Journal,
        jbd2: u32,
        every: Vec<u32>,
        buffered: Vec<bool>,
        marks: Vec<Marks>,
        critical: &[bool],
    ) -> JournalState {
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
        JournalState {
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

    pub(crate) fn tid(&self, t: FsThread) -> u32 {
        match t {
            FsThread::Jbd2 => self.jbd2,
            FsThread::Task(t) => t,
        }
    }

    /// Threads with an fsync under way that may wait for JBD2, and when
    /// it began.
    pub(crate) fn in_fsync(&self) -> impl Iterator<Item = (usize, Nanos)> + '_ {
        self.started
            .iter()
            .enumerate()
            .filter(|&(t, _)| !self.own_commit[t])
            .filter_map(|(t, s)| s.map(|s| (t, s)))
    }
}

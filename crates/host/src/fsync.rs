//! `fsync`: the ext4 `data=ordered` fsync path over a device (FR 2.1,
//! Fig. 3) and FastResponse's file-level journaling (FR 3.4, Figs. 10-11),
//! as a cost model: which device I/Os are issued in what order, and which
//! threads must be woken (each a context switch) before the path goes on.
//!
//! Ordered mode (FR 2.1): the fsync caller writes its file's dirty data (D1)
//! and waits; it wakes the JBD2 thread to commit the compound transaction
//! holding the file's metadata; JBD2 writes the dirty data of other files in
//! that transaction (D2), then the journal descriptor and metadata blocks
//! (JD), then the commit block (JC), each after the one before completes;
//! then it wakes the caller. "One fsync leads to four device I/O operations
//! and six context switches" (Fig. 3 caption): one wake-up after each I/O
//! ("four I/O operations that all suffer from costly process scheduling")
//! and "two times of process scheduling after waking up the JBD2 thread and
//! the fsync thread" (FR 4.4).
//!
//! fjournaling (FR 3.4): a critical caller writes D1, then an f-transaction
//! into a separate fjournal area (a header block with the inode entry and
//! block tags, the file's modified external extent blocks, a commit block)
//! itself: no D2, no JBD2 wake-up, no wake-up back. Its metadata stays in the
//! running compound transaction, "committed again by JBD2 later".
//!
//! Driving it: [`Fsync::fsync`] when a task calls fsync, [`Fsync::completed`]
//! when the device completes an I/O it issued, [`Fsync::running`] when a
//! thread it woke gets the CPU (the simulator's scheduler decides when: that
//! delay is FR's T_Sched), [`Fsync::commit_timer`] at JBD2's periodic commit.
//! Each returns a [`Step`]: I/Os to issue now, threads to wake, fsyncs that
//! returned.
//!
//! What we model of JBD2 (Linux 5.3 fs/jbd2, fs/ext4/fsync.c), for fsyncs
//! that meet:
//! - A file's metadata joins the transaction running when its data is
//!   written back (`ext4_writepages` starts its handle there, delayed
//!   allocation), so at the fsync call when it has dirty blocks.
//! - fsync waits for the transaction holding the file's last change
//!   (`jbd2_complete_transaction(journal, ei->i_sync_tid)`): none if it is
//!   committed, the committing one if it is that (no new commit), else it
//!   asks for a commit of the running one.
//! - The running transaction stays open until JBD2 runs and locks it
//!   (`jbd2_journal_commit_transaction`), so an fsync whose data is written
//!   while JBD2 is woken but not yet running joins the same commit (group
//!   commit).
//! - One commit at a time; a commit asked for while one is under way starts
//!   when it ends, without a new wake-up (kjournald2 loops while
//!   `j_commit_sequence != j_commit_request`).
//!
//! Where we follow the paper, not Linux: FR Fig. 3 has JBD2 write D2, then
//! JD after "data blocks are written to the device". Linux 5.3's commit
//! submits the ordered data and the log blocks before waiting for either
//! (`journal_submit_data_buffers`, then the log writes, then
//! `journal_finish_inode_data_buffers`); we keep the paper's four dependent
//! I/Os, which is what its breakdown (Fig. 5b: T_D2, T_JD, T_JC) measures.
//! Not modelled: the fjournal area filling up (the authors' code: 2048
//! blocks, then a full commit), fjournaling falling back for directories and
//! hard links, `blkdev_issue_flush` after the commit, journal checkpointing.

use std::collections::BTreeMap;

use policy::Nanos;

use crate::cfs::TaskId;

/// A file, as the caller numbers them.
pub type FileId = u64;
/// A transaction id (JBD2's `tid_t`); the first transaction is 1.
pub type Tid = u64;
/// An I/O issued by this model, numbered from 0.
pub type IoId = u64;

/// Journal descriptor blocks per commit: one (JBD2 writes a descriptor
/// block, tags then metadata; FR 2.1 "JD": journal blocks).
pub const DESCRIPTOR_BLOCKS: u32 = 1;
/// Shared metadata blocks a compound transaction logs beside the files'
/// extent blocks: the block bitmap, the inode table block and the group
/// descriptor (FR 3.4 names these as the blocks an f-transaction leaves
/// out).
pub const SHARED_METADATA_BLOCKS: u32 = 3;
/// The f-transaction's header block: journal header, F_entries, block tags
/// (FR 3.4, Fig. 11).
pub const FJ_HEADER_BLOCKS: u32 = 1;
/// A commit block, JBD2's (FR 2.1 "JC") or an f-transaction's (FR 3.4).
pub const COMMIT_BLOCKS: u32 = 1;

/// What one I/O writes (FR Fig. 3's labels; fjournaling's in FR 3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoKind {
    /// The fsynced file's dirty data blocks.
    D1,
    /// Other files' dirty data swept into the compound transaction.
    D2,
    /// Journal descriptor and metadata blocks, in the journal area.
    Jd,
    /// JBD2's commit block.
    Jc,
    /// An f-transaction's header and extent blocks, in the fjournal area.
    FjMeta,
    /// An f-transaction's commit block, in the fjournal area.
    FjCommit,
}

/// A thread of the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Thread {
    /// The task that called fsync.
    Task(TaskId),
    /// The JBD2 journal thread (kjournald2).
    Jbd2,
}

/// One device write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    pub id: IoId,
    pub kind: IoKind,
    pub blocks: u32,
    /// The thread that issues it and waits for it (the thread whose
    /// criticality FR's block layer sees, FR 3.2, 4.4).
    pub by: Thread,
}

/// What a step asks of the caller, in order: issue these I/Os now, wake
/// these threads (one context switch each, FR Fig. 3's "CS"), and these
/// tasks' fsyncs have returned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    pub issue: Vec<Io>,
    pub wake: Vec<Thread>,
    pub done: Vec<TaskId>,
}

/// What is dirty when a task calls fsync.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dirty {
    /// The fsynced file's dirty data blocks (D1).
    pub file_blocks: u32,
    /// Other files' dirty data blocks in the running transaction now
    /// (ordered-mode data that a commit must write first: D2). Replaces what
    /// the model held: the caller knows the page cache.
    pub other_blocks: u32,
    /// The file's modified external extent blocks (logged by JBD2 in JD and
    /// by an f-transaction, FR 3.4).
    pub extent_blocks: u32,
}

/// How an f-transaction's commit block is ordered against its header and
/// extent blocks: the paper does not say (digest A.6 item 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FjCommit {
    /// The authors' code (default; `ext4_fj_commit_inode_updates`): the
    /// header, extent blocks and commit block (PREFLUSH|FUA) are submitted
    /// together, then waited for together.
    Together,
    /// As JBD2 commits without `async_commit`: the commit block after the
    /// header and extent blocks complete.
    AfterMetadata,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsyncConfig {
    /// FR's fjournaling for critical callers (BSJ-Opt, FR 4.1); off is
    /// vanilla ext4 for every caller.
    pub fjournal: bool,
    pub fj_commit: FjCommit,
}

impl FsyncConfig {
    /// ext4 `data=ordered` for everyone (FR's Vanilla to BS-Opt).
    pub const ORDERED: FsyncConfig = FsyncConfig {
        fjournal: false,
        fj_commit: FjCommit::Together,
    };
    /// fjournaling for critical callers (FR's BSJ-Opt).
    pub const FJOURNAL: FsyncConfig = FsyncConfig {
        fjournal: true,
        fj_commit: FjCommit::Together,
    };
}

/// Where a task's fsync is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stage {
    /// D1 in flight.
    Data { io: IoId },
    /// D1 done, woken, waiting for the CPU.
    DataDone,
    /// Waiting for JBD2 to commit this transaction.
    Commit { tid: Tid },
    /// The commit is done, woken, waiting for the CPU to return.
    Returning,
    /// f-transaction I/Os in flight; `commit_next` under `AfterMetadata`.
    Fj {
        pending: Vec<IoId>,
        commit_next: bool,
    },
    /// f-transaction I/Os done, woken; `commit_next` as above.
    FjDone { commit_next: bool },
}

#[derive(Clone, Debug)]
struct Call {
    file: FileId,
    critical: bool,
    extent_blocks: u32,
    stage: Stage,
}

/// Where a JBD2 commit is (FR Fig. 3's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    D2,
    Jd,
    Jc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Jbd2 {
    /// Asleep, nothing to commit.
    Idle,
    /// Woken to start a commit, waiting for the CPU.
    Woken,
    /// Waiting for an I/O of the commit.
    Io(IoId),
    /// That I/O completed; woken, waiting for the CPU.
    IoDone,
}

#[derive(Clone, Copy, Debug, Default)]
struct Txn {
    tid: Tid,
    /// Other files' dirty data (D2).
    data_blocks: u32,
    /// Extent blocks of the files in it.
    extent_blocks: u32,
    /// Anything changed in it.
    dirty: bool,
}

#[derive(Clone, Copy, Debug)]
struct Commit {
    txn: Txn,
    phase: Phase,
}

/// One ext4 file system's journal and the fsyncs on it.
#[derive(Clone, Debug)]
pub struct Fsync {
    cfg: FsyncConfig,
    running: Txn,
    committing: Option<Commit>,
    /// `j_commit_sequence`: the last committed transaction.
    committed: Tid,
    /// `j_commit_request`: the highest transaction asked to commit.
    requested: Tid,
    jbd2: Jbd2,
    /// The transaction holding each file's last change (`i_sync_tid`).
    files: BTreeMap<FileId, Tid>,
    calls: BTreeMap<TaskId, Call>,
    next_io: IoId,
    switches: u64,
}

impl Fsync {
    pub fn new(cfg: FsyncConfig) -> Self {
        Fsync {
            cfg,
            running: Txn {
                tid: 1,
                ..Txn::default()
            },
            committing: None,
            committed: 0,
            requested: 0,
            jbd2: Jbd2::Idle,
            files: BTreeMap::new(),
            calls: BTreeMap::new(),
            next_io: 0,
            switches: 0,
        }
    }

    pub fn config(&self) -> &FsyncConfig {
        &self.cfg
    }

    /// Context switches so far: every wake-up the model asked for.
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// The last committed transaction.
    pub fn committed(&self) -> Tid {
        self.committed
    }

    /// The transaction JBD2 is committing, if any.
    pub fn committing(&self) -> Option<Tid> {
        self.committing.map(|c| c.txn.tid)
    }

    /// The open transaction.
    pub fn running_tid(&self) -> Tid {
        self.running.tid
    }

    /// Other files' dirty data blocks in the running transaction: what
    /// its commit writes as D2.
    pub fn running_data_blocks(&self) -> u32 {
        self.running.data_blocks
    }

    /// A buffered write dirtied `blocks` of a file no task is fsyncing: its
    /// data joins the running transaction as ordered data, which the next
    /// commit writes before the journal (D2; FR 2.2 "Root Cause 2").
    pub fn dirtied(&mut self, _now: Nanos, blocks: u32) {
        self.running.data_blocks = self.running.data_blocks.saturating_add(blocks);
        if blocks > 0 {
            self.running.dirty = true;
        }
    }

    fn io(&mut self, step: &mut Step, kind: IoKind, blocks: u32, by: Thread) -> IoId {
        let id = self.next_io;
        self.next_io += 1;
        step.issue.push(Io {
            id,
            kind,
            blocks,
            by,
        });
        id
    }

    fn wake(&mut self, step: &mut Step, thread: Thread) {
        self.switches += 1;
        step.wake.push(thread);
    }

    /// Task `task` calls fsync on `file` (`ext4_sync_file`); `critical` is
    /// FR's attribute of the task (FR 3.2). A task has one fsync at a time.
    pub fn fsync(
        &mut self,
        _now: Nanos,
        task: TaskId,
        file: FileId,
        critical: bool,
        dirty: Dirty,
    ) -> Step {
        let mut step = Step::default();
        assert!(
            !self.calls.contains_key(&task),
            "task {task} is already in fsync"
        );
        self.running.data_blocks = dirty.other_blocks;
        if dirty.other_blocks > 0 {
            self.running.dirty = true;
        }
        let mut call = Call {
            file,
            critical,
            extent_blocks: dirty.extent_blocks,
            stage: Stage::DataDone,
        };
        if dirty.file_blocks > 0 || dirty.extent_blocks > 0 {
            // Writeback's handle joins the running transaction.
            self.files.insert(file, self.running.tid);
            self.running.extent_blocks += dirty.extent_blocks;
            self.running.dirty = true;
        }
        if dirty.file_blocks > 0 {
            // FR 2.1: "the application thread writes dirty blocks of the
            // target file ('D1') and waits for the I/O completion".
            let io = self.io(&mut step, IoKind::D1, dirty.file_blocks, Thread::Task(task));
            call.stage = Stage::Data { io };
            self.calls.insert(task, call);
            return step;
        }
        self.calls.insert(task, call);
        self.after_data(task, &mut step);
        step
    }

    /// The task has its data on the device and the CPU: commit.
    fn after_data(&mut self, task: TaskId, step: &mut Step) {
        let call = &self.calls[&task];
        let (file, critical, extents) = (call.file, call.critical, call.extent_blocks);
        let Some(&tid) = self.files.get(&file) else {
            self.finish(task, step); // nothing of the file is uncommitted
            return;
        };
        if critical && self.cfg.fjournal && tid > self.committed {
            // FR 3.4: the caller commits its own f-transaction.
            let by = Thread::Task(task);
            let meta = self.io(step, IoKind::FjMeta, FJ_HEADER_BLOCKS + extents, by);
            let mut pending = vec![meta];
            let commit_next = self.cfg.fj_commit == FjCommit::AfterMetadata;
            if !commit_next {
                pending.push(self.io(step, IoKind::FjCommit, COMMIT_BLOCKS, by));
            }
            self.set_stage(
                task,
                Stage::Fj {
                    pending,
                    commit_next,
                },
            );
            return;
        }
        if tid <= self.committed {
            self.finish(task, step);
            return;
        }
        // jbd2_complete_transaction: wait for tid, asking for its commit if
        // it is still the running transaction.
        self.set_stage(task, Stage::Commit { tid });
        if tid == self.running.tid && self.requested < tid {
            self.requested = tid;
            if self.jbd2 == Jbd2::Idle {
                // FR 2.1: "the kernel wakes up the JBD2 thread".
                self.jbd2 = Jbd2::Woken;
                self.wake(step, Thread::Jbd2);
            }
        }
    }

    fn set_stage(&mut self, task: TaskId, stage: Stage) {
        if let Some(call) = self.calls.get_mut(&task) {
            call.stage = stage;
        }
    }

    fn finish(&mut self, task: TaskId, step: &mut Step) {
        self.calls.remove(&task);
        step.done.push(task);
    }

    /// The device completed I/O `io`. Unknown ids are ignored.
    pub fn completed(&mut self, _now: Nanos, io: IoId) -> Step {
        let mut step = Step::default();
        if self.jbd2 == Jbd2::Io(io) {
            self.jbd2 = Jbd2::IoDone;
            self.wake(&mut step, Thread::Jbd2);
            return step;
        }
        let mut woken = None;
        for (&task, call) in self.calls.iter_mut() {
            match &mut call.stage {
                Stage::Data { io: d } if *d == io => {
                    call.stage = Stage::DataDone;
                    woken = Some(task);
                }
                Stage::Fj {
                    pending,
                    commit_next,
                } if pending.contains(&io) => {
                    pending.retain(|&p| p != io);
                    if pending.is_empty() {
                        call.stage = Stage::FjDone {
                            commit_next: *commit_next,
                        };
                        woken = Some(task);
                    }
                }
                _ => continue,
            }
            break;
        }
        if let Some(task) = woken {
            self.wake(&mut step, Thread::Task(task));
        }
        step
    }

    /// A thread this model woke has the CPU.
    pub fn running(&mut self, _now: Nanos, thread: Thread) -> Step {
        let mut step = Step::default();
        match thread {
            Thread::Jbd2 => self.jbd2_runs(&mut step),
            Thread::Task(task) => {
                let Some(call) = self.calls.get(&task) else {
                    return step;
                };
                match call.stage {
                    Stage::DataDone => self.after_data(task, &mut step),
                    Stage::Returning | Stage::FjDone { commit_next: false } => {
                        self.finish(task, &mut step)
                    }
                    Stage::FjDone { commit_next: true } => {
                        let io = self.io(&mut step, IoKind::FjCommit, COMMIT_BLOCKS, thread);
                        self.set_stage(
                            task,
                            Stage::Fj {
                                pending: vec![io],
                                commit_next: false,
                            },
                        );
                    }
                    Stage::Data { .. } | Stage::Commit { .. } | Stage::Fj { .. } => {}
                }
            }
        }
        step
    }

    /// JBD2's periodic commit (`commit_timer_fn`, every `j_commit_interval`,
    /// 5 s by default): commits the running transaction if it holds
    /// anything. The caller keeps the timer.
    pub fn commit_timer(&mut self, _now: Nanos) -> Step {
        let mut step = Step::default();
        if self.running.dirty && self.requested < self.running.tid {
            self.requested = self.running.tid;
            if self.jbd2 == Jbd2::Idle {
                self.jbd2 = Jbd2::Woken;
                self.wake(&mut step, Thread::Jbd2);
            }
        }
        step
    }

    fn jbd2_runs(&mut self, step: &mut Step) {
        match self.jbd2 {
            Jbd2::Woken => self.start_commit(step),
            Jbd2::IoDone => {
                let Some(commit) = self.committing.as_mut() else {
                    return;
                };
                match commit.phase {
                    Phase::D2 => {
                        // FR 2.1: "after data blocks are written to the
                        // device, the JBD2 thread writes back metadata
                        // blocks ('JD')".
                        commit.phase = Phase::Jd;
                        let blocks =
                            DESCRIPTOR_BLOCKS + SHARED_METADATA_BLOCKS + commit.txn.extent_blocks;
                        let io = self.io(step, IoKind::Jd, blocks, Thread::Jbd2);
                        self.jbd2 = Jbd2::Io(io);
                    }
                    Phase::Jd => {
                        // "Finally, it writes a commit block ('JC')".
                        commit.phase = Phase::Jc;
                        let io = self.io(step, IoKind::Jc, COMMIT_BLOCKS, Thread::Jbd2);
                        self.jbd2 = Jbd2::Io(io);
                    }
                    Phase::Jc => self.end_commit(step),
                }
            }
            Jbd2::Idle | Jbd2::Io(_) => {}
        }
    }

    /// `jbd2_journal_commit_transaction`: lock the running transaction,
    /// open a new one, write its ordered data first.
    fn start_commit(&mut self, step: &mut Step) {
        let txn = self.running;
        self.running = Txn {
            tid: txn.tid + 1,
            ..Txn::default()
        };
        let (phase, kind, blocks) = if txn.data_blocks > 0 {
            (Phase::D2, IoKind::D2, txn.data_blocks)
        } else {
            // No other file's data: JD at once (D2 "appears" only when
            // other files are dirty).
            (
                Phase::Jd,
                IoKind::Jd,
                DESCRIPTOR_BLOCKS + SHARED_METADATA_BLOCKS + txn.extent_blocks,
            )
        };
        self.committing = Some(Commit { txn, phase });
        let io = self.io(step, kind, blocks, Thread::Jbd2);
        self.jbd2 = Jbd2::Io(io);
    }

    fn end_commit(&mut self, step: &mut Step) {
        let Some(commit) = self.committing.take() else {
            return;
        };
        self.committed = commit.txn.tid;
        let waiting: Vec<TaskId> = self
            .calls
            .iter()
            .filter(|(_, c)| matches!(c.stage, Stage::Commit { tid } if tid <= self.committed))
            .map(|(&t, _)| t)
            .collect();
        for task in waiting {
            // FR 4.4: "waking up ... the fsync thread".
            self.set_stage(task, Stage::Returning);
            self.wake(step, Thread::Task(task));
        }
        if self.requested > self.committed {
            // kjournald2 loops: the next commit without sleeping.
            self.start_commit(step);
        } else {
            self.jbd2 = Jbd2::Idle;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// What a driver saw, in order.
    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Ev {
        Issue(IoKind, u32, Thread),
        Wake(Thread),
        Done(TaskId),
    }
    use Ev::*;

    /// A driver: the device completes I/Os one at a time in issue order, a
    /// woken thread runs at once (before the next completion).
    #[derive(Default)]
    struct Driver {
        trace: Vec<Ev>,
        inflight: VecDeque<IoId>,
        woken: VecDeque<Thread>,
    }

    impl Driver {
        fn take(&mut self, step: Step) {
            for io in step.issue {
                self.trace.push(Issue(io.kind, io.blocks, io.by));
                self.inflight.push_back(io.id);
            }
            for t in step.wake {
                self.trace.push(Wake(t));
                self.woken.push_back(t);
            }
            for t in step.done {
                self.trace.push(Done(t));
            }
        }

        /// Runs woken threads, then one completion; false when idle.
        fn step(&mut self, fs: &mut Fsync) -> bool {
            if let Some(t) = self.woken.pop_front() {
                let s = fs.running(0, t);
                self.take(s);
                return true;
            }
            if let Some(io) = self.inflight.pop_front() {
                let s = fs.completed(0, io);
                self.take(s);
                return true;
            }
            false
        }

        fn run(&mut self, fs: &mut Fsync) {
            while self.step(fs) {}
        }
    }

    fn dirty(file_blocks: u32, other_blocks: u32) -> Dirty {
        Dirty {
            file_blocks,
            other_blocks,
            extent_blocks: 0,
        }
    }

    fn ios(trace: &[Ev]) -> Vec<IoKind> {
        trace
            .iter()
            .filter_map(|e| match e {
                Issue(k, _, _) => Some(*k),
                _ => None,
            })
            .collect()
    }

    const T1: Thread = Thread::Task(1);
    const J: Thread = Thread::Jbd2;

    #[test]
    fn ordered_mode_issues_four_dependent_ios_and_six_switches() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, false, dirty(2, 8)));
        d.run(&mut fs);
        let meta = DESCRIPTOR_BLOCKS + SHARED_METADATA_BLOCKS;
        assert_eq!(
            d.trace,
            vec![
                Issue(IoKind::D1, 2, T1),
                Wake(T1), // CS after D1
                Wake(J),  // the caller wakes JBD2
                Issue(IoKind::D2, 8, J),
                Wake(J), // after D2
                Issue(IoKind::Jd, meta, J),
                Wake(J), // after JD
                Issue(IoKind::Jc, 1, J),
                Wake(J),  // after JC
                Wake(T1), // JBD2 wakes the fsync thread
                Done(1),
            ]
        );
        assert_eq!(fs.switches(), 6);
        assert_eq!(fs.committed(), 1);
    }

    #[test]
    fn each_io_waits_for_the_one_before() {
        // Nothing is issued while an I/O of the path is in flight.
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, false, dirty(2, 8)));
        while d.step(&mut fs) {
            assert!(d.inflight.len() <= 1);
        }
    }

    #[test]
    fn d2_appears_only_when_other_files_are_dirty() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, false, dirty(2, 0)));
        d.run(&mut fs);
        assert_eq!(ios(&d.trace), vec![IoKind::D1, IoKind::Jd, IoKind::Jc]);
        assert_eq!(fs.switches(), 5);
    }

    #[test]
    fn extent_blocks_are_logged_in_jd() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        let dirty = Dirty {
            extent_blocks: 2,
            ..dirty(2, 0)
        };
        d.take(fs.fsync(0, 1, 7, false, dirty));
        d.run(&mut fs);
        assert!(d.trace.contains(&Issue(IoKind::Jd, 1 + 3 + 2, J)));
    }

    #[test]
    fn fjournaling_issues_no_d2_and_wakes_no_jbd2() {
        let mut fs = Fsync::new(FsyncConfig::FJOURNAL);
        let mut d = Driver::default();
        let dirty = Dirty {
            extent_blocks: 1,
            ..dirty(2, 8)
        };
        d.take(fs.fsync(0, 1, 7, true, dirty));
        d.run(&mut fs);
        assert_eq!(
            d.trace,
            vec![
                Issue(IoKind::D1, 2, T1),
                Wake(T1),
                // The authors' code: header + extents and commit together.
                Issue(IoKind::FjMeta, 1 + 1, T1),
                Issue(IoKind::FjCommit, 1, T1),
                Wake(T1),
                Done(1),
            ]
        );
        assert_eq!(fs.switches(), 2);
        // The compound transaction is left for JBD2 (FR 3.4): not committed.
        assert_eq!(fs.committed(), 0);
        assert_eq!(fs.committing(), None);
    }

    #[test]
    fn fjournaling_can_order_the_commit_after_the_metadata() {
        let cfg = FsyncConfig {
            fj_commit: FjCommit::AfterMetadata,
            ..FsyncConfig::FJOURNAL
        };
        let mut fs = Fsync::new(cfg);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, true, dirty(2, 8)));
        d.run(&mut fs);
        assert_eq!(
            ios(&d.trace),
            vec![IoKind::D1, IoKind::FjMeta, IoKind::FjCommit]
        );
        assert_eq!(fs.switches(), 3);
        assert!(!d.trace.contains(&Wake(J)));
    }

    #[test]
    fn a_non_critical_caller_takes_the_ordered_path_under_fjournaling() {
        let mut fs = Fsync::new(FsyncConfig::FJOURNAL);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, false, dirty(2, 8)));
        d.run(&mut fs);
        assert_eq!(
            ios(&d.trace),
            vec![IoKind::D1, IoKind::D2, IoKind::Jd, IoKind::Jc]
        );
        assert_eq!(fs.switches(), 6);
    }

    #[test]
    fn the_fjournaled_metadata_is_committed_again_by_jbd2() {
        let mut fs = Fsync::new(FsyncConfig::FJOURNAL);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, true, dirty(2, 8)));
        d.run(&mut fs);
        d.trace.clear();
        d.take(fs.commit_timer(5_000_000_000));
        d.run(&mut fs);
        assert_eq!(ios(&d.trace), vec![IoKind::D2, IoKind::Jd, IoKind::Jc]);
        assert_eq!(fs.committed(), 1);
        // Nothing left: the next timer does nothing.
        assert_eq!(fs.commit_timer(10_000_000_000), Step::default());
    }

    #[test]
    fn buffered_writes_of_other_files_are_the_next_commits_d2() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        fs.dirtied(0, 5);
        fs.dirtied(0, 3);
        assert_eq!(fs.running_data_blocks(), 8);
        let mut d = Driver::default();
        let other = fs.running_data_blocks();
        d.take(fs.fsync(0, 1, 7, false, dirty(1, other)));
        d.run(&mut fs);
        assert!(d.trace.contains(&Issue(IoKind::D2, 8, J)));
        // The commit took them: the new transaction holds none.
        assert_eq!(fs.running_data_blocks(), 0);
    }

    #[test]
    fn a_clean_file_returns_at_once() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let step = fs.fsync(0, 1, 7, false, dirty(0, 8));
        assert_eq!(step.done, vec![1]);
        assert!(step.issue.is_empty() && step.wake.is_empty());
    }

    #[test]
    fn an_fsync_of_a_committing_file_waits_for_that_commit_only() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, false, dirty(2, 8)));
        // Run until JBD2 has locked transaction 1.
        while fs.committing().is_none() {
            assert!(d.step(&mut fs));
        }
        // Task 2 fsyncs the same file, nothing new: it waits for commit 1,
        // asks for no new one and issues nothing.
        let step = fs.fsync(0, 2, 7, false, dirty(0, 0));
        assert_eq!(step, Step::default());
        d.run(&mut fs);
        assert_eq!(fs.committed(), 1);
        assert_eq!(fs.running_tid(), 2);
        let tail: Vec<Ev> = d.trace.iter().rev().take(4).rev().cloned().collect();
        assert_eq!(
            tail,
            vec![Wake(T1), Wake(Thread::Task(2)), Done(1), Done(2)]
        );
    }

    #[test]
    fn an_fsync_with_new_data_during_a_commit_waits_for_the_next_commit() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, false, dirty(2, 8)));
        while fs.committing().is_none() {
            assert!(d.step(&mut fs));
        }
        // Task 2 writes file 9 while transaction 1 commits: its data goes
        // out at once, its metadata joins transaction 2.
        let step = fs.fsync(0, 2, 9, false, dirty(3, 0));
        assert_eq!(step.issue.len(), 1);
        assert_eq!(step.issue[0].kind, IoKind::D1);
        d.take(step);
        d.trace.clear();
        d.run(&mut fs);
        assert_eq!(fs.committed(), 2);
        let t2 = Thread::Task(2);
        let jd = DESCRIPTOR_BLOCKS + SHARED_METADATA_BLOCKS;
        assert_eq!(
            d.trace,
            vec![
                Wake(J), // D2 of commit 1 done
                Issue(IoKind::Jd, jd, J),
                Wake(t2), // task 2's D1 done; it asks for commit 2, no wake
                Wake(J),  // JD of commit 1 done
                Issue(IoKind::Jc, 1, J),
                Wake(J), // JC done: commit 1 ends, commit 2 starts at once
                Issue(IoKind::Jd, jd, J),
                Wake(T1),
                Done(1),
                Wake(J),
                Issue(IoKind::Jc, 1, J),
                Wake(J),
                Wake(t2),
                Done(2),
            ]
        );
    }

    #[test]
    fn fsyncs_before_jbd2_runs_share_one_commit() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let (t2, d1a, d1b) = (Thread::Task(2), 0, 1);
        assert_eq!(fs.fsync(0, 1, 7, false, dirty(1, 0)).issue.len(), 1);
        assert_eq!(fs.fsync(0, 2, 9, false, dirty(1, 0)).issue.len(), 1);
        assert_eq!(fs.completed(0, d1a).wake, vec![T1]);
        // Task 1 asks for commit 1 and wakes JBD2.
        assert_eq!(fs.running(0, T1).wake, vec![J]);
        // Task 2's data lands before JBD2 gets the CPU: transaction 1 is
        // still open, and task 2 waits for the same commit, waking nobody.
        assert_eq!(fs.completed(0, d1b).wake, vec![t2]);
        assert_eq!(fs.running(0, t2), Step::default());
        let mut d = Driver::default();
        d.take(fs.running(0, J));
        d.run(&mut fs);
        assert_eq!(ios(&d.trace), vec![IoKind::Jd, IoKind::Jc]);
        assert_eq!(fs.committed(), 1);
        assert_eq!(
            &d.trace[d.trace.len() - 4..],
            &[Wake(T1), Wake(t2), Done(1), Done(2)]
        );
        // One commit for two fsyncs: 5 for the first (no D2), and 2 more
        // (task 2's wake-ups after its D1 and at the commit's end), not 10.
        assert_eq!(fs.switches(), 7);
    }
    #[test]
    fn a_buffered_write_gives_the_commit_timer_something_to_commit() {
        // commit_timer_fn commits the running transaction when it holds
        // anything (fs/jbd2/journal.c); ordered data from a buffered write
        // is something (FR 2.2 "Root Cause 2").
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        fs.dirtied(0, 4);
        let mut d = Driver::default();
        d.take(fs.commit_timer(5_000_000_000));
        assert_eq!(d.trace, vec![Wake(J)]);
        d.run(&mut fs);
        assert_eq!(ios(&d.trace), vec![IoKind::D2, IoKind::Jd, IoKind::Jc]);
        assert_eq!(fs.committed(), 1);
    }

    #[test]
    fn a_buffered_write_of_no_blocks_leaves_the_commit_timer_nothing() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        fs.dirtied(0, 0);
        assert_eq!(fs.commit_timer(5_000_000_000), Step::default());
        assert_eq!(fs.committing(), None);
    }

    #[test]
    fn the_commit_timer_on_a_clean_journal_wakes_nobody() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        assert_eq!(fs.commit_timer(5_000_000_000), Step::default());
        assert_eq!(fs.switches(), 0);
    }

    #[test]
    fn other_files_dirty_at_an_fsync_of_a_clean_file_are_left_for_the_timer() {
        // The clean file's fsync returns at once, but the other files' data
        // it reported is in the running transaction: the timer commits it.
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        assert_eq!(fs.fsync(0, 1, 7, false, dirty(0, 8)).done, vec![1]);
        let mut d = Driver::default();
        d.take(fs.commit_timer(5_000_000_000));
        d.run(&mut fs);
        assert_eq!(ios(&d.trace), vec![IoKind::D2, IoKind::Jd, IoKind::Jc]);
        assert!(d.trace.contains(&Issue(IoKind::D2, 8, J)));
    }

    #[test]
    fn an_fsync_of_a_clean_file_with_nothing_else_dirty_leaves_no_commit() {
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        assert_eq!(fs.fsync(0, 1, 7, false, dirty(0, 0)).done, vec![1]);
        assert_eq!(fs.commit_timer(5_000_000_000), Step::default());
    }

    #[test]
    fn an_fsync_of_changed_metadata_without_data_waits_for_the_commit() {
        // ext4_sync_file commits the inode's transaction whether or not
        // it has dirty data (an extent change alone: fallocate, truncate).
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        let dirty = Dirty {
            extent_blocks: 2,
            ..dirty(0, 0)
        };
        let step = fs.fsync(0, 1, 7, false, dirty);
        assert!(step.done.is_empty());
        d.take(step);
        d.run(&mut fs);
        assert_eq!(ios(&d.trace), vec![IoKind::Jd, IoKind::Jc]);
        assert!(d.trace.contains(&Issue(IoKind::Jd, 1 + 3 + 2, J)));
        assert_eq!(d.trace.last(), Some(&Done(1)));
        assert_eq!(fs.committed(), 1);
    }

    #[test]
    fn fsync_of_a_file_whose_transaction_has_committed_returns_at_once() {
        // jbd2_complete_transaction: nothing to wait for once
        // j_commit_sequence has reached the file's i_sync_tid.
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, false, dirty(2, 0)));
        d.run(&mut fs);
        assert_eq!(fs.committed(), 1);
        let step = fs.fsync(0, 2, 7, false, dirty(0, 0));
        assert_eq!(step.done, vec![2]);
        assert!(step.issue.is_empty() && step.wake.is_empty());
    }

    #[test]
    fn a_critical_fsync_of_a_committed_file_writes_no_f_transaction() {
        // FR 3.4: the f-transaction commits what JBD2 has not; a file whose
        // transaction is committed has nothing left to log.
        let mut fs = Fsync::new(FsyncConfig::FJOURNAL);
        let mut d = Driver::default();
        d.take(fs.fsync(0, 1, 7, false, dirty(2, 0)));
        d.run(&mut fs);
        assert_eq!(fs.committed(), 1);
        let step = fs.fsync(0, 2, 7, true, dirty(0, 0));
        assert_eq!(step.done, vec![2]);
        assert!(step.issue.is_empty() && step.wake.is_empty());
    }
    #[test]
    fn extent_blocks_are_logged_in_jd_after_d2_too() {
        // FR 2.1: JD holds the descriptor, the shared metadata and the
        // files' extent blocks whether or not D2 went first.
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let mut d = Driver::default();
        let dirty = Dirty {
            extent_blocks: 2,
            ..dirty(2, 8)
        };
        d.take(fs.fsync(0, 1, 7, false, dirty));
        d.run(&mut fs);
        assert_eq!(
            ios(&d.trace),
            vec![IoKind::D1, IoKind::D2, IoKind::Jd, IoKind::Jc]
        );
        assert!(d.trace.contains(&Issue(IoKind::Jd, 1 + 3 + 2, J)));
    }

    #[test]
    fn a_completion_wakes_the_task_whose_data_it_was() {
        // Each fsync caller waits on its own D1 (FR 2.1): the device
        // finishing task 2's write wakes task 2, not task 1.
        let mut fs = Fsync::new(FsyncConfig::ORDERED);
        let d1a = fs.fsync(0, 1, 7, false, dirty(1, 0)).issue[0].id;
        let d1b = fs.fsync(0, 2, 9, false, dirty(1, 0)).issue[0].id;
        assert_eq!(fs.completed(0, d1b).wake, vec![Thread::Task(2)]);
        assert_eq!(fs.completed(0, d1a).wake, vec![T1]);
        assert_eq!(fs.switches(), 2);
    }

    #[test]
    fn an_f_transaction_in_flight_does_not_swallow_another_tasks_completion() {
        // FR 3.4: the critical caller waits on its own f-transaction; a
        // second caller's D1 completing meanwhile wakes that caller.
        let mut fs = Fsync::new(FsyncConfig::FJOURNAL);
        let d1a = fs.fsync(0, 1, 7, true, dirty(1, 0)).issue[0].id;
        let d1b = fs.fsync(0, 2, 9, false, dirty(1, 0)).issue[0].id;
        assert_eq!(fs.completed(0, d1a).wake, vec![T1]);
        let fj = fs.running(0, T1);
        assert_eq!(
            fj.issue.iter().map(|io| io.kind).collect::<Vec<_>>(),
            vec![IoKind::FjMeta, IoKind::FjCommit]
        );
        assert_eq!(fs.completed(0, d1b).wake, vec![Thread::Task(2)]);
        // Task 1 is still waiting for both of its f-transaction's I/Os.
        assert_eq!(fs.completed(0, fj.issue[0].id), Step::default());
        assert_eq!(fs.completed(0, fj.issue[1].id).wake, vec![T1]);
    }
}

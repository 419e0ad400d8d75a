//! A job's marks: its settings handed to the one marking engine (the
//! `marks` crate: TOS 4.1.1 Table 1 or the authors' basis kernel, fio's
//! job-level flags, and the job's `mark=` rules).

use marks::{Facts, IoKind, JobMarks, Marks, RwfFlags, Sqe, Submission};

use crate::job::{Engine, Job};

/// The facts a rule can ask of a fio job's request: fio's process and
/// threads are named `fio` (fio sets no thread name; its command name is
/// its binary's), its file is the job's `filename`. fio rewrites no
/// process title and a job file names no volume: a rule on either is
/// refused when the job is read (`marks::Needs::check`).
pub const KNOWN: marks::Needs = marks::Needs {
    thread: true,
    file: true,
    title: false,
    comm: true,
    volume: false,
};

impl Job {
    /// What this job's marks depend on, for the marking engine.
    pub fn marking(&self) -> JobMarks {
        let submission = match self.ioengine {
            // cpuio issues nothing; its "I/Os" never reach a device.
            Engine::Sync | Engine::Psync | Engine::Vsync | Engine::Pvsync | Engine::Cpuio => {
                Submission::Blocking { nowait: false }
            }
            Engine::Pvsync2 => Submission::Blocking {
                nowait: self.nowait,
            },
            Engine::IoUring => Submission::Ring {
                hipri: self.hipri,
                sqpoll: self.uring.sqthread_poll,
            },
            Engine::Libaio | Engine::Null => Submission::Batch,
        };
        JobMarks {
            cint_flags: self.cint_flags,
            barrier: self.barrier,
            submission,
            defaults: self.default_marks,
        }
    }

    /// The flags this job's application passes with a request, if any
    /// ([`JobMarks::rwf_flags`]).
    pub fn rwf_flags(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> RwfFlags {
        self.marking().rwf_flags(kind, index_in_batch, batch_len)
    }

    /// The kernel's default marks for a request of this job
    /// ([`JobMarks::default_marks`]).
    pub fn default_marks(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> Marks {
        self.marking()
            .default_marks(kind, index_in_batch, batch_len)
    }

    /// The marks the device sees on request `index_in_batch` (0-based) of a
    /// submission of `batch_len` requests (1 for blocking engines), in the
    /// engine's one order (`marks::resolve`): the application's flags if it
    /// passes any, else the job's first `mark=` rule that matches, else the
    /// kernel defaults.
    ///
    /// `cint_flags` overrides everything the application controls; `none`
    /// leaves every request unmarked, fsync included (TOS 4.1.2). An index
    /// at or past the end of the batch, or an empty batch, counts as last.
    pub fn marks(&self, kind: IoKind, index_in_batch: usize, batch_len: usize) -> Marks {
        let m = self.marking();
        marks::resolve(
            m.rwf_flags(kind, index_in_batch, batch_len),
            || {
                if self.mark.is_empty() {
                    return None;
                }
                let facts = Facts {
                    thread: Some("fio"),
                    comm: Some("fio"),
                    file: self.filename.as_deref(),
                    ..Facts::op(kind.op())
                };
                marks::first(&self.mark, &facts).map(|r| r.mark)
            },
            || m.default_marks(kind, index_in_batch, batch_len),
        )
    }

    /// How fio 3.33's io_uring engine hands SQE `index_in_batch` of a
    /// batch of `batch_len` to the kernel ([`JobMarks::sqe`]).
    pub fn sqe(&self, index_in_batch: usize, batch_len: usize) -> Sqe {
        self.marking().sqe(index_in_batch, batch_len)
    }
}

/// The default marks the jobs of a run use, for its report: `table1`,
/// `basis`, or both in job order (`table1, basis`) when they differ.
pub fn default_marks_of<'a>(jobs: impl IntoIterator<Item = &'a Job>) -> String {
    let mut seen: Vec<marks::DefaultMarks> = Vec::new();
    for j in jobs {
        if !seen.contains(&j.default_marks) {
            seen.push(j.default_marks);
        }
    }
    let names: Vec<&str> = seen.iter().map(|m| m.name()).collect();
    names.join(", ")
}

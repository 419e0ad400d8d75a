//! A job's options normalized for fio's I/O loop: the queue depth, batch
//! sizes and when the job stops. [`crate::Issuer`] makes the loop's
//! decisions from them, for the simulator and the emulator alike.

use policy::Nanos;

use crate::Job;

/// The normalized knobs of fio's `do_io` / `wait_for_completions` loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoLoop {
    /// In flight at most (1 for blocking engines, whose call waits).
    pub iodepth: u32,
    /// Requests per submit call (fio: `iodepth_batch_submit=0` means iodepth).
    pub batch_submit: u32,
    /// Completions a reap waits for (fio: 0 means "do not block"; both
    /// front ends wait for at least one, as the loop has nothing else to do).
    pub complete_min: u32,
    /// Completions a reap takes at most.
    pub complete_max: u32,
    /// Refill only once at most this many are in flight (`iodepth_low`).
    pub low_mark: u32,
}

/// When a job stops issuing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Issue for this long after `startdelay + ramp_time`.
    pub runtime: Option<Nanos>,
    /// Stop after this many bytes (`io_size`, or `size` times `loops`),
    /// unless time-based.
    pub bytes: Option<u64>,
    /// Stop after this many I/Os (`number_ios`).
    pub ios: Option<u64>,
}

/// Which jobs each job waits for before it starts (indices into `jobs`,
/// the parsed order): fio's `stonewall` (HOWTO: "Wait for preceding jobs in
/// the job file to exit, before starting this one"; every job of the
/// sections before the wall) and `wait_for=NAME` (HOWTO: "won't be started
/// until all workers of the specified waitee job are done"; the waitee must
/// come first). Jobs after a wall wait for it too, as fio's run_threads
/// stops starting jobs at a stonewall until everything before has exited.
/// An error (job index, message) names a waitee that is unknown, the job
/// itself, or defined later (init.c `wait_for_ok`).
pub fn serial_order(jobs: &[Job]) -> Result<Vec<Vec<usize>>, (usize, String)> {
    // The first job of the latest wall so far: everything before it must
    // have finished.
    let mut wall = 0usize;
    let mut out = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        let first_of_section =
            i == 0 || jobs[i - 1].section_line != job.section_line || job.clone_index == 0;
        if job.stonewall && first_of_section {
            wall = i;
        }
        let mut after: Vec<usize> = (0..wall).collect();
        if let Some(name) = &job.wait_for {
            if *name == job.name {
                return Err((
                    i,
                    format!("option 'wait_for': a job cannot wait for itself ('{name}')"),
                ));
            }
            let waitees: Vec<usize> = (0..i).filter(|&k| jobs[k].name == *name).collect();
            if waitees.is_empty() {
                return Err((
                    i,
                    format!(
                        "option 'wait_for': waitee job '{name}' unknown (it must be defined before)"
                    ),
                ));
            }
            after.extend(waitees);
            after.sort_unstable();
            after.dedup();
        }
        out.push(after);
    }
    Ok(out)
}

impl Job {
    /// fio's loop knobs for this job.
    pub fn io_loop(&self) -> IoLoop {
        let iodepth = if self.ioengine.is_sync() {
            1
        } else {
            self.iodepth.max(1)
        };
        let batch_submit = match self.iodepth_batch_submit {
            0 => iodepth,
            n => n.min(iodepth),
        };
        let complete_min = self.iodepth_batch_complete_min.min(iodepth);
        let complete_max = self
            .iodepth_batch_complete_max
            .max(complete_min)
            .clamp(1, iodepth);
        IoLoop {
            iodepth,
            batch_submit: batch_submit.max(1),
            complete_min,
            complete_max,
            low_mark: self.iodepth_low.map_or(iodepth - 1, |l| l.min(iodepth - 1)),
        }
    }

    /// When the job's measured part starts, from the run's start
    /// (`startdelay + ramp_time`).
    pub fn measure_from(&self) -> Nanos {
        self.startdelay + self.ramp_time
    }

    /// When the job stops issuing. `runtime` (the CLI's `--runtime`)
    /// replaces the job's `runtime=` and nothing else, as fio's command-line
    /// `--runtime` is its `runtime` option (fio HOWTO, "Command line
    /// options": every job option may be given as `--name=value`).
    ///
    /// fio's rules (HOWTO, "Time related parameters" and `size`):
    /// - `runtime`: "The test will run until it completes the configured I/O
    ///   workload or until it has run for this specified amount of time,
    ///   whichever occurs first": it caps a size-bounded job.
    /// - `time_based`: "fio will run for the duration of the runtime
    ///   specified even if the file(s) are completely read or written. It
    ///   will simply loop over the same workload": the size stops bounding.
    /// - `size`: "Fio will run until this many bytes has been transferred,
    ///   unless runtime is altered by other means such as (1) runtime,
    ///   (2) io_size (3) number_ios".
    ///
    /// An error when nothing bounds the job, or when `time_based` has no
    /// runtime.
    pub fn bounds(&self, runtime: Option<Nanos>) -> Result<Bounds, String> {
        let time_based = self.time_based;
        let runtime = runtime.or(self.runtime);
        let size = self.size.map(|s| s.saturating_sub(self.offset));
        let amount = self
            .io_size
            .or_else(|| size.map(|s| s.saturating_mul(self.loops.max(1) as u64)));
        let bytes = if time_based { None } else { amount };
        let ios = self.number_ios.filter(|&n| n > 0);
        if time_based && runtime.is_none() {
            return Err("time_based needs runtime=".into());
        }
        if runtime.is_none() && bytes.is_none() && ios.is_none() {
            return Err(
                "needs runtime= (with time_based), size=, io_size= or number_ios=; or pass --runtime"
                    .into(),
            );
        }
        Ok(Bounds {
            runtime,
            bytes,
            ios,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{Engine, Job};

    fn job(text: &str) -> Job {
        crate::parse_str(text, "t.fio", &|_| None).unwrap().jobs[0].clone()
    }

    #[test]
    fn blocking_engines_have_depth_one_and_batches_clamp_to_depth() {
        let j = job("[a]\nioengine=psync\niodepth=32\nsize=1m\n");
        assert_eq!(j.ioengine, Engine::Psync);
        let l = j.io_loop();
        assert_eq!((l.iodepth, l.batch_submit, l.complete_max), (1, 1, 1));
        let j = job("[a]\nioengine=libaio\niodepth=16\niodepth_batch_submit=0\niodepth_batch_complete_min=8\niodepth_batch_complete_max=16\nsize=1m\n");
        let l = j.io_loop();
        assert_eq!(l.batch_submit, 16, "0 means the whole depth");
        assert_eq!((l.complete_min, l.complete_max, l.low_mark), (8, 16, 15));
    }

    #[test]
    fn the_command_line_runtime_caps_a_size_bounded_job_and_does_not_make_it_time_based() {
        // fio: runtime caps, size still bounds (HOWTO `runtime`, `size`).
        let j = job("[a]\nsize=16m\nruntime=10\n");
        let b = j.bounds(Some(7)).unwrap();
        assert_eq!((b.runtime, b.bytes), (Some(7), Some(16 << 20)));
        // time_based still loops over the size until the (overridden) runtime.
        let j = job("[a]\nsize=16m\nruntime=10\ntime_based\n");
        let b = j.bounds(Some(7)).unwrap();
        assert_eq!((b.runtime, b.bytes), (Some(7), None));
    }

    #[test]
    fn bounds_need_something_to_stop_on() {
        let j = job("[a]\nrw=read\n");
        assert!(j.bounds(None).unwrap_err().contains("needs runtime="));
        assert_eq!(j.bounds(Some(5)).unwrap().runtime, Some(5));
        assert_eq!(j.bounds(Some(5)).unwrap().bytes, None);
        let j = job("[a]\nsize=1m\nloops=2\n");
        assert_eq!(j.bounds(None).unwrap().bytes, Some(2 << 20));
        let j = job("[a]\nsize=1m\ntime_based\nruntime=1\n");
        let b = j.bounds(None).unwrap();
        assert_eq!((b.bytes, b.runtime), (None, Some(1_000_000_000)));
        let j = Job {
            time_based: true,
            ..Job::default()
        };
        assert!(j
            .bounds(None)
            .unwrap_err()
            .contains("time_based needs runtime="));
    }
}

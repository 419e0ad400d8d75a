//! A job as `cinterrupts jobs` shows it: its shape on one line, then the
//! marks its requests carry, so a reader can check a job file against TOS
//! Table 1 before running it.

use std::fmt::Write as _;

use policy::time::readable;

use crate::{BlockSizes, Distribution, IoKind, Job};

/// The marks of one batch of `kind` (a lone request for blocking engines);
/// long batches shortened to their first three and the last.
fn marks_pattern(job: &Job, kind: IoKind) -> String {
    let batch = if job.ioengine.is_async() {
        job.iodepth_batch_submit.max(1) as usize
    } else {
        1
    };
    let marks: Vec<String> = (0..batch)
        .map(|i| job.marks(kind, i, batch).to_string())
        .collect();
    if batch <= 8 {
        marks.join(" ")
    } else {
        format!(
            "{} ... {} (batch of {batch})",
            marks[..3].join(" "),
            marks[batch - 1]
        )
    }
}

/// `0-3,8` for [0, 1, 2, 3, 8], as fio's `cpus_allowed` is written: a
/// 0-8191 set stays one short word, not 8,192 numbers on each clone's line.
fn cpu_ranges(cpus: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        let _ = if j > i {
            write!(out, "{}-{}", cpus[i], cpus[j])
        } else {
            write!(out, "{}", cpus[i])
        };
        i = j + 1;
    }
    out
}

impl Job {
    /// The job on one line, then the marks its reads, writes and fsyncs
    /// carry (TOS Table 1), as `cinterrupts jobs` shows it.
    pub fn describe(&self) -> String {
        let job = self;
        let mut s = job.name.clone();
        if job.numjobs > 1 {
            let _ = write!(s, "#{}", job.clone_index);
        }
        if job.ioengine.is_noio() {
            // fio's cpuio: no I/O, so no sizes, depths or marks.
            let _ = write!(
                s,
                ": ioengine={} cpuload={}% cpuchunks={} thinktime={}",
                job.ioengine,
                job.cpuload.unwrap_or(0),
                readable(job.cpuchunks * policy::US),
                readable(job.thinktime)
            );
            if let Some(cpus) = job.cpus() {
                let _ = write!(s, " cpus={}", cpu_ranges(&cpus));
            }
            if let Some(rt) = job.runtime {
                let _ = write!(s, " runtime={}", readable(rt));
            }
            if job.exit_on_io_done {
                s.push_str(" exit_on_io_done");
            }
            return s;
        }
        let _ = write!(
            s,
            ": ioengine={} rw={} bs={}/{} iodepth={} batch_submit={} batch_complete={}..{}",
            job.ioengine,
            job.rw,
            job.bs_read,
            job.bs_write,
            job.iodepth,
            job.iodepth_batch_submit,
            job.iodepth_batch_complete_min,
            job.iodepth_batch_complete_max
        );
        if let Some(cpus) = job.cpus() {
            let _ = write!(s, " cpus={}", cpu_ranges(&cpus));
        }
        if let Some(rt) = job.runtime {
            let _ = write!(s, " runtime={}", readable(rt));
        }
        // What changes what is measured beyond the defaults.
        for (dir, write) in [("read", false), ("write", true)] {
            let used = if write {
                job.rw.writes()
            } else {
                job.rw.reads()
            };
            match job.block_sizes(write) {
                BlockSizes::Fixed(_) => {}
                _ if !used => {}
                BlockSizes::Range { min, max } => {
                    let _ = write!(s, " {dir}_bs={min}-{max}");
                }
                BlockSizes::Split(split) => {
                    let parts: Vec<String> = split
                        .iter()
                        .map(|e| format!("{}/{}", e.bs, e.perc))
                        .collect();
                    let _ = write!(s, " {dir}_bssplit={}", parts.join(":"));
                }
            }
        }
        if job.rw_seq_nr > 1 {
            let _ = write!(s, " random_every={}", job.rw_seq_nr);
        }
        if job.rw_seq_add != 0 {
            let _ = write!(s, " seq_step={:+}", job.rw_seq_add);
        }
        match &job.distribution {
            Distribution::Random => {}
            Distribution::Zipf { theta, .. } => {
                let _ = write!(s, " random_distribution=zipf:{theta}");
            }
            Distribution::Pareto { h, .. } => {
                let _ = write!(s, " random_distribution=pareto:{h}");
            }
            Distribution::Normal { dev, .. } => {
                let _ = write!(s, " random_distribution=normal:{dev}");
            }
            Distribution::Zoned(_) => s.push_str(" random_distribution=zoned"),
            Distribution::Sequence(_) => s.push_str(" random_distribution=sequence"),
        }
        if job.nrfiles > 1 {
            let _ = write!(s, " nrfiles={}", job.nrfiles);
        }
        if let Some((r, w)) = job.rate {
            let _ = write!(s, " rate={r},{w}B/s");
        }
        if let Some((r, w)) = job.rate_iops {
            let _ = write!(s, " rate_iops={r},{w}");
        }
        if job.rate_process != crate::RateProcess::Linear
            && (job.rate.is_some() || job.rate_iops.is_some())
        {
            let _ = write!(s, " rate_process={}", job.rate_process);
        }
        if job.thinktime > 0 {
            let _ = write!(
                s,
                " thinktime={}/{}",
                readable(job.thinktime),
                job.thinktime_blocks
            );
        }
        if job.stonewall {
            s.push_str(" stonewall");
        }
        if let Some(w) = &job.wait_for {
            let _ = write!(s, " wait_for={}", crate::error::quoted(w));
        }
        // Ours (FastResponse's tag): every request of the job is critical.
        if job.critical {
            s.push_str(" critical");
        }
        if job.hipri {
            s.push_str(" hipri");
        }
        // fio 3.33's io_uring engine options that are set (crate::Uring).
        let u = &job.uring;
        if u.sqthread_poll {
            s.push_str(" sqthread_poll");
            if let Some(cpu) = u.sqthread_poll_cpu {
                let _ = write!(s, " sqthread_poll_cpu={cpu}");
            }
        }
        if u.registerfiles {
            s.push_str(" registerfiles");
        }
        if u.fixedbufs {
            s.push_str(" fixedbufs");
        }
        if let Some(nv) = u.nonvectored {
            let _ = write!(s, " nonvectored={}", u8::from(nv));
        }
        // Which kernel's defaults the marks below follow (DefaultMarks).
        let _ = write!(s, " default_marks={}", job.default_marks);
        if job.rw.reads() {
            let _ = write!(s, "\n    read marks:  {}", marks_pattern(job, IoKind::Read));
        }
        if job.rw.writes() {
            let _ = write!(
                s,
                "\n    write marks: {}",
                marks_pattern(job, IoKind::Write)
            );
        }
        if job.fsync > 0 || job.fdatasync > 0 {
            let _ = write!(s, "\n    fsync marks: {}", job.marks(IoKind::Fsync, 0, 1));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use crate::parse_str;

    #[test]
    fn cpu_sets_print_as_fio_writes_them() {
        assert_eq!(super::cpu_ranges(&[0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(super::cpu_ranges(&[5]), "5");
        assert_eq!(super::cpu_ranges(&[]), "");
        let all: Vec<usize> = (0..8192).collect();
        assert_eq!(super::cpu_ranges(&all), "0-8191");
    }

    #[test]
    fn blocking_reads_are_urgent_and_a_batch_ends_in_a_barrier() {
        let text = "[sync]\nrw=randread\nioengine=psync\nruntime=2\n\n\
                    [async]\nrw=randread\nioengine=libaio\niodepth=16\niodepth_batch_submit=16\n";
        let file = parse_str(text, "t.fio", &|_| None).unwrap();
        let sync = file.jobs[0].describe();
        assert!(
            sync.starts_with("sync: ioengine=psync rw=randread"),
            "{sync}"
        );
        assert!(sync.contains(" runtime=2.000s"), "{sync}");
        assert!(sync.contains("\n    read marks:  U"), "{sync}");
        let batch = file.jobs[1].describe();
        assert!(
            batch.contains("read marks:  - - - ... B (batch of 16)"),
            "{batch}"
        );
    }

    #[test]
    fn io_uring_options_show_and_sqpoll_leaves_the_batch_unmarked() {
        let text = "[r]\nioengine=io_uring\niodepth=4\niodepth_batch_submit=4\nsqthread_poll\nregisterfiles\nfixedbufs\n";
        let d = parse_str(text, "t.fio", &|_| None).unwrap().jobs[0].describe();
        assert!(d.contains(" sqthread_poll registerfiles fixedbufs"), "{d}");
        // Our io_uring row: the SQ thread takes the SQEs, none is marked.
        assert!(d.ends_with("read marks:  - - - -"), "{d}");
        let plain = "[r]\nioengine=io_uring\niodepth=4\niodepth_batch_submit=4\n";
        let d = parse_str(plain, "t.fio", &|_| None).unwrap().jobs[0].describe();
        assert!(d.ends_with("read marks:  - - - B"), "{d}");
    }
}

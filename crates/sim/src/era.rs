//! The kernel a run models (`sim --kernel`, or the host profile's own):
//! a job that asks for what that kernel does not do is refused before the
//! run (issue 37 item 1), and the report names the kernel.

use host::era::{Kernel, SYNC_HIPRI};
use jobs::{Engine, Job, Refused};
use report::RunReport;

/// A pvsync2 job with `hipri` polls in the simulator (`host::mechanism`'s
/// completion row); on a kernel that ignores RWF_HIPRI for synchronous
/// I/O (5.19 on, `host::era::SYNC_HIPRI`) it would not, so the first such
/// job is refused.
pub fn sync_hipri_polls(jobs: &[Job], k: Kernel) -> Result<(), Refused> {
    let Some(job) = jobs
        .iter()
        .find(|j| j.hipri && j.ioengine == Engine::Pvsync2)
    else {
        return Ok(());
    };
    SYNC_HIPRI.admits(k).map_err(|why| {
        Refused::new(
            job,
            format!("ioengine=pvsync2 hipri: {why}; kernel {k} is outside it"),
        )
    })
}

/// The report's host names the kernel the run modelled, when one was
/// given or pinned: `xeon-e5-2660v4 (Linux 5.0)`.
pub fn name_the_kernel(report: &mut RunReport, kernel: Option<Kernel>) {
    if let Some(k) = kernel {
        report.host = format!("{} (Linux {k})", report.host);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_polled_sync_job_is_refused_on_a_kernel_that_ignores_hipri() {
        let text = "[a]\nsize=1m\n[p]\nioengine=pvsync2\nhipri=1\nsize=1m\n";
        let file = jobs::parse_str(text, "t.fio", &|_| None).unwrap();
        let old = Kernel::new(5, 0);
        let new = Kernel::new(6, 1);
        assert_eq!(sync_hipri_polls(&file.jobs, old), Ok(()));
        let e = sync_hipri_polls(&file.jobs, new).unwrap_err();
        assert_eq!((e.job.as_str(), e.line), ("p", 3));
        assert!(e.reason.starts_with("ioengine=pvsync2 hipri: "), "{e}");
        assert!(e.reason.ends_with("; kernel 6.1 is outside it"), "{e}");
        let mut r = RunReport {
            host: "h".into(),
            ..RunReport::default()
        };
        name_the_kernel(&mut r, None);
        assert_eq!(r.host, "h");
        name_the_kernel(&mut r, Some(old));
        assert_eq!(r.host, "h (Linux 5.0)");
    }
}

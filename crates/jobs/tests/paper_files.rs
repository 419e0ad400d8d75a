//! Job files written the way the paper's authors wrote theirs.

use std::path::{Path, PathBuf};

use jobs::units::{SEC, US};
use jobs::{parse_file, parse_str, CintFlags, Engine, Job, JobFile, RwMode, Verify};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn parse_data(name: &str) -> JobFile {
    parse_file(&data(name)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn mixed_psync_beside_libaio() {
    let f = parse_data("mixed.fio");
    assert_eq!(f.jobs.len(), 2);
    let (sync, aio) = (&f.jobs[0], &f.jobs[1]);
    for j in [sync, aio] {
        assert_eq!(j.filename.as_deref(), Some("/dev/nvme0n1"));
        assert!(j.direct);
        assert_eq!(j.rw, RwMode::RandRead);
        assert_eq!(j.cpus_allowed.as_deref(), Some(&[1][..]));
        assert_eq!((j.bs_read, j.bs_write), (4096, 4096));
        assert_eq!(j.runtime, Some(60 * SEC));
        assert!(j.time_based);
        assert_eq!(j.numjobs, 1);
    }
    assert_eq!(sync.name, "sync-reader");
    assert_eq!(sync.section_line, 16);
    assert_eq!(sync.ioengine, Engine::Psync);
    // the commented-out ';iodepth=32' in [global] must not apply
    assert_eq!(sync.iodepth, 1);

    assert_eq!(aio.name, "async-reader");
    assert_eq!(aio.ioengine, Engine::Libaio);
    assert_eq!(aio.iodepth, 16);
    assert_eq!(aio.iodepth_batch_submit, 16);
    assert_eq!(aio.iodepth_batch_complete_min, 1);
    assert_eq!(aio.iodepth_batch_complete_max, 1);
    assert_eq!(aio.iodepth_low, None);

    // gtod_reduce and group_reporting are noted once each, where they appear
    let ignored: Vec<(usize, &str)> = f
        .ignored
        .iter()
        .map(|i| (i.line, i.option.as_str()))
        .collect();
    assert_eq!(ignored, vec![(11, "gtod_reduce"), (14, "group_reporting")]);
    let file = data("mixed.fio").display().to_string();
    assert_eq!(
        f.ignored[0].to_string(),
        format!("{file}:11: option 'gtod_reduce' ignored (does not change what is measured)")
    );
    assert!(f.notes.is_empty());
}

#[test]
fn barrier_job_with_two_clones() {
    let f = parse_data("barrier.fio");
    assert_eq!(f.jobs.len(), 2);
    for (i, j) in f.jobs.iter().enumerate() {
        assert_eq!(j.name, "barrier");
        assert_eq!(j.clone_index, i);
        assert_eq!(j.numjobs, 2);
        assert_eq!(j.section_line, 12);
        assert_eq!(j.ioengine, Engine::Libaio);
        assert_eq!(j.iodepth, 4);
        assert_eq!(j.iodepth_batch_submit, 4);
        assert_eq!(j.iodepth_batch_complete_min, 4);
        assert_eq!(j.iodepth_batch_complete_max, 4);
        assert!(j.barrier);
        assert_eq!(j.cint_flags, CintFlags::Default);
        assert_eq!(j.cpus_allowed.as_deref(), Some(&[1][..]));
    }
    assert_eq!(f.ignored.len(), 2);
}

#[test]
fn overrides_with_variables_and_units() {
    let text = std::fs::read_to_string(data("overrides.fio")).unwrap();
    let env = |k: &str| (k == "DEV").then(|| "/dev/nvme1n1".to_string());
    let f = parse_str(&text, "overrides.fio", &env).unwrap();
    assert_eq!(f.jobs.len(), 2);
    let flush: &Job = &f.jobs[0];
    assert_eq!(flush.filename.as_deref(), Some("/dev/nvme1n1"));
    assert_eq!(flush.size, Some(1 << 30));
    assert_eq!(flush.runtime, Some(10 * SEC));
    assert_eq!(flush.thinktime, 10 * US);
    assert_eq!(flush.ioengine, Engine::Pvsync2);
    assert_eq!(flush.rw, RwMode::RandWrite);
    assert!(flush.nowait);
    assert_eq!(flush.cint_flags, CintFlags::None);
    assert_eq!(flush.fsync, 32);

    let bulk = &f.jobs[1];
    assert_eq!(bulk.ioengine, Engine::IoUring);
    assert_eq!(bulk.rw, RwMode::RandRw);
    assert_eq!(bulk.rwmixread, 70);
    assert_eq!(bulk.read_percent(), 70);
    assert_eq!((bulk.bs_read, bulk.bs_write), (4096, 65536));
    assert_eq!(bulk.iodepth, 32);
    // iodepth_batch_submit=0 means iodepth (fio HOWTO)
    assert_eq!(bulk.iodepth_batch_submit, 32);
    assert_eq!(bulk.iodepth_batch_complete_min, 8);
    assert_eq!(bulk.iodepth_batch_complete_max, 16);
    // fio's integer options take k as 1024 (parse.c check_str_bytes).
    assert_eq!(bulk.rate_iops, Some((102_400, 20_480)));
    assert_eq!(bulk.verify, Some(Verify::Crc32c));
    assert!(bulk.do_verify);
    assert_eq!(bulk.cint_flags, CintFlags::Urgent);
}

#[test]
fn parse_file_reports_a_missing_file_on_one_line() {
    let e = parse_file(Path::new("/nonexistent/x.fio")).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("/nonexistent/x.fio: cannot read job file"),
        "{msg}"
    );
    assert!(!msg.contains('\n'));
}

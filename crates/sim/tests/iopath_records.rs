//! `CINTERRUPTS_IOPATH_RECORDS`: every measured request's parts as CSV,
//! one line each, agreeing with the report's means. Its own test binary:
//! the variable is the process's.

use policy::{PolicySpec, MS};
use sim::{DeviceProfile, HostProfile, SimConfig, RECORDS_ENV};

#[test]
fn the_records_file_holds_every_request_and_matches_the_means() {
    let dir = std::env::temp_dir().join(format!("iopath-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("r.csv");
    std::env::set_var(RECORDS_ENV, &file);
    let text = "[a]\nioengine=libaio\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
                iodepth=8\ntime_based\nruntime=1\n\
                [s]\nioengine=psync\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
                time_based\nruntime=1\n";
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let cfg = SimConfig {
        device: DeviceProfile::constant_service("10us", 2, 10_000_000).unwrap(),
        host: HostProfile::load("xeon-e5-2660v4").unwrap(),
        policy: PolicySpec::named("default"),
        seed: 1,
        runtime: Some(10 * MS),
    };
    let r = sim::simulate(&jobs, &cfg, &mut |_, _| {}).unwrap();
    std::env::remove_var(RECORDS_ENV);
    let csv = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("job,clat,submit,queue,service,deliver,after,sched,depth,left")
    );
    let rows: Vec<Vec<u64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    let path = r.io_path.unwrap();
    for (job, p) in path.jobs.iter().enumerate() {
        let mine: Vec<&Vec<u64>> = rows.iter().filter(|r| r[0] == job as u64).collect();
        let parts = p.parts.unwrap();
        assert_eq!(mine.len() as u64, parts.requests);
        assert!(parts.requests > 0);
        let mean = |i: usize| mine.iter().map(|r| r[i] as f64).sum::<f64>() / mine.len() as f64;
        assert!((mean(1) - parts.clat).abs() < 1e-6);
        assert!((mean(3) - parts.queue).abs() < 1e-6);
        assert!((mean(7) - p.t_sched_mean_ns).abs() < 1e-6);
        for r in &mine {
            // clat = submit + queue + service + deliver + after; sched <= after.
            assert_eq!(r[1], r[2] + r[3] + r[4] + r[5] + r[6], "{r:?}");
            assert!(r[7] <= r[6], "{r:?}");
        }
    }
}

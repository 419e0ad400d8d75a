//! Every example job file in `examples/` parses with the jobs crate and has
//! the engines, depths and clone counts of the TOS figure it names.

use std::path::PathBuf;

use jobs::Engine;

fn examples() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
}

/// (engine, iodepth, batch_submit, batch_complete_min, barrier) per job clone.
type Shape = (Engine, u32, u32, u32, bool);

fn shape(file: &str) -> Vec<Shape> {
    let parsed = jobs::parse_file(&examples().join(file)).unwrap();
    parsed
        .jobs
        .iter()
        .map(|j| {
            // The paper's setup: O_DIRECT random 4 KiB reads on one core.
            assert!(j.direct, "{file}: direct");
            assert_eq!(j.bs_read, 4096, "{file}: bs");
            assert_eq!(j.rw, jobs::RwMode::RandRead, "{file}: rw");
            assert_eq!(
                j.cpus_allowed.as_deref(),
                Some(&[1][..]),
                "{file}: cpus_allowed"
            );
            assert!(j.time_based, "{file}: time_based");
            assert_eq!(j.runtime, Some(10_000_000_000), "{file}: runtime");
            assert_eq!(j.filename.as_deref(), Some("/dev/nvme0n1"), "{file}");
            (
                j.ioengine,
                j.iodepth,
                j.iodepth_batch_submit,
                j.iodepth_batch_complete_min,
                j.barrier,
            )
        })
        .collect()
}

const SYNC: Shape = (Engine::Psync, 1, 1, 1, false);

#[test]
fn every_example_parses() {
    let mut n = 0;
    for entry in std::fs::read_dir(examples()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "fio") {
            let file = jobs::parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(!file.jobs.is_empty(), "{}", path.display());
            n += 1;
        }
    }
    assert!(n >= 8, "found {n} example job files");
}

#[test]
fn sync_read_is_one_blocking_reader() {
    assert_eq!(shape("sync-read.fio"), vec![SYNC]);
}

#[test]
fn async_256_batches_by_16() {
    assert_eq!(
        shape("async-256.fio"),
        vec![(Engine::Libaio, 256, 16, 16, false)]
    );
}

/// TOS Fig 18's two workloads, on which tune reads delta: libaio at
/// iodepth 256, unbatched and in batches of 16.
#[test]
fn tune_workloads_are_libaio_256_unbatched_and_batched() {
    assert_eq!(
        shape("tune-libaio.fio"),
        vec![(Engine::Libaio, 256, 1, 1, false)]
    );
    assert_eq!(
        shape("tune-libaio-batch.fio"),
        vec![(Engine::Libaio, 256, 16, 16, false)]
    );
}

#[test]
fn mixed_is_a_sync_reader_beside_an_async_one() {
    for depth in [16, 256] {
        assert_eq!(
            shape(&format!("mixed-{depth}.fio")),
            vec![SYNC, (Engine::Libaio, depth, 16, 16, false)]
        );
    }
}

#[test]
fn barrier_runs_1_2_4_clones_of_batches_of_4() {
    for n in [1u32, 2, 4] {
        let file = format!("barrier-{n}.fio");
        let got = shape(&file);
        assert_eq!(
            got,
            vec![(Engine::Libaio, 4, 4, 4, true); n as usize],
            "{file}"
        );
        let parsed = jobs::parse_file(&examples().join(&file)).unwrap();
        assert!(parsed.jobs.iter().all(|j| j.numjobs == n));
        // The last request of each batch of 4 is Barrier (TOS Fig 12).
        let j = &parsed.jobs[0];
        assert_eq!(j.marks(jobs::IoKind::Read, 3, 4), jobs::Marks::BARRIER);
        assert_eq!(j.marks(jobs::IoKind::Read, 0, 4), jobs::Marks::NONE);
    }
}

#[test]
fn storm_is_four_blocking_readers() {
    assert_eq!(shape("storm.fio"), vec![SYNC; 4]);
    let parsed = jobs::parse_file(&examples().join("storm.fio")).unwrap();
    // Every blocking read is Urgent (TOS Table 1), hence the storm.
    assert!(parsed
        .jobs
        .iter()
        .all(|j| j.marks(jobs::IoKind::Read, 0, 1) == jobs::Marks::URGENT));
}

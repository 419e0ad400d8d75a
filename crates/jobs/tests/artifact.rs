//! The authors' own job files (their options, transcribed in crates/repro/artifact/ from amytai/cinterrupts-osdi)
//! with the fio command lines their scripts pass: fio's precedence, a
//! command line's defaults under the file's [global] and the job's section.

use std::path::{Path, PathBuf};

use jobs::units::SEC;
use jobs::{parse_file_with, CommandLine, Engine, Job, JobError, JobFile};

fn artifact(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../repro/artifact")
        .join(name)
}

fn cmd(args: &str) -> CommandLine {
    let mut c = CommandLine::default();
    for a in args.split_whitespace() {
        c.push_arg(a.strip_prefix("--").expect("--NAME"));
    }
    c
}

fn parse(name: &str, args: &str) -> JobFile {
    parse_file_with(&artifact(name), &cmd(args)).unwrap_or_else(|e| panic!("{e}"))
}

fn batches(j: &Job) -> (u32, u32, u32, u32) {
    (
        j.iodepth,
        j.iodepth_batch_submit,
        j.iodepth_batch_complete_min,
        j.iodepth_batch_complete_max,
    )
}

/// fig5/test.sh, k > 0.
const FIG5: &str = "--blocksize=4K --runtime=60 --iodepth=16 --iodepth_batch_submit=1 \
                    --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=16";

#[test]
fn fig5_takes_its_scripts_depth_and_batches_and_psync_keeps_depth_1() {
    let f = parse("fig5/rand_mix.fio", FIG5);
    assert_eq!(f.jobs.len(), 2);
    let (aio, sync) = (&f.jobs[0], &f.jobs[1]);
    // `name=raw=random-read-libaio`: the value holds an '='.
    assert_eq!(aio.name, "raw=random-read-libaio");
    assert_eq!(aio.ioengine, Engine::Libaio);
    assert_eq!(batches(aio), (16, 1, 1, 16));
    assert_eq!((aio.bs_read, aio.runtime), (4096, Some(60 * SEC)));
    assert!(aio.time_based);
    // The psync section's own iodepth=1 wins over --iodepth=16, and the
    // batch maximum is capped at the depth, as fio does.
    assert_eq!(sync.name, "raw=random-read-psync");
    assert_eq!(batches(sync), (1, 1, 1, 1));
    assert_eq!(sync.bs_read, 4096);
    assert!(f.notes.iter().any(|n| n
        .message
        .contains("iodepth_batch_complete_max 16 above iodepth 1")));
    // disk_util=0 is accepted and ignored.
    assert!(f.ignored.iter().any(|i| i.option == "disk_util"));
}

#[test]
fn fig5_k0_runs_only_the_psync_section() {
    let f = parse(
        "fig5/rand_mix.fio",
        "--section=psync --blocksize=4K --runtime=60",
    );
    assert_eq!(f.jobs.len(), 1);
    assert_eq!(f.jobs[0].name, "raw=random-read-psync");
    assert_eq!(f.jobs[0].ioengine, Engine::Psync);
}

#[test]
fn fig6_takes_depth_512_with_batches_of_512() {
    let f = parse(
        "fig6/rand_mix.fio",
        "--blocksize=4K --runtime=60 --iodepth=512 --iodepth_batch_submit=512 \
         --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=512",
    );
    assert_eq!(batches(&f.jobs[0]), (512, 512, 1, 512));
    assert_eq!(batches(&f.jobs[1]), (1, 1, 1, 1));
}

#[test]
fn fig7_numjobs_on_the_command_line_clones_the_job() {
    let f = parse(
        "fig7/rand_read_libaio.fio",
        "--blocksize=4K --runtime=60 --numjobs=4 --iodepth=4 --iodepth_batch_submit=4 \
         --iodepth_batch_complete=4",
    );
    assert_eq!(f.jobs.len(), 4);
    for (i, j) in f.jobs.iter().enumerate() {
        assert_eq!(j.clone_index, i);
        assert_eq!(batches(j), (4, 4, 4, 4));
        assert!(j.barrier, "the section's barrier=1");
    }
}

#[test]
fn fig10_job2_keeps_its_own_blocksize_over_the_command_line() {
    let f = parse("fig10/rand_mix_batched.fio", "--blocksize=4K --runtime=60");
    let (aio, sync) = (&f.jobs[0], &f.jobs[1]);
    assert_eq!(aio.bs_read, 4096);
    assert_eq!(batches(aio), (256, 16, 16, 16));
    assert_eq!(sync.bs_read, 512);
    assert_eq!(sync.name, "raw=random-read-psync");
}

#[test]
fn fig14_globals_win_over_the_command_line() {
    // fio: the file's [global] is parsed into the same def_thread the
    // command line filled, after it (init.c), so iodepth=256 there wins.
    let f = parse(
        "fig14/rand_read_libaio.fio",
        "--blocksize=4K --runtime=60 --iodepth=8",
    );
    assert_eq!(batches(&f.jobs[0]), (256, 16, 16, 16));
    let f = parse("fig14/rand_read_psync.fio", "--blocksize=4K --runtime=60");
    assert_eq!((f.jobs[0].iodepth, f.jobs[0].bs_read), (1, 4096));
}

#[test]
fn command_line_errors_name_the_option_as_given() {
    let err = |args: &str| {
        parse_file_with(&artifact("fig5/rand_mix.fio"), &cmd(args))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(err("--iodepth=x"), "--iodepth=x: invalid number 'x'");
    assert!(err("--bogus=1").starts_with("--bogus=1: unknown option"));
    assert_eq!(err("--bs"), "--bs: needs a value");
    assert!(err("--section=job9").starts_with("--section=job9: "));
    assert!(err("--section=job9").contains("(it has: libaio, psync)"));
    assert!(err("--section=global").starts_with("--section=global: "));
    assert!(err("--name=x").contains("not supported"));
    assert!(matches!(
        parse_file_with(&artifact("fig5/rand_mix.fio"), &cmd("--iodepth=x")),
        Err(JobError::CommandLine { .. })
    ));
}

#[test]
fn sections_may_be_repeated() {
    let f = parse("fig5/rand_mix.fio", "--section=psync --section=libaio");
    assert_eq!(f.jobs.len(), 2);
}

#[test]
fn the_command_lines_runtime_satisfies_time_based() {
    let f = parse("fig14/rand_read_psync.fio", "");
    assert!(f.jobs[0].bounds(None).is_err(), "time_based, no runtime");
    let f = parse("fig14/rand_read_psync.fio", "--runtime=60");
    assert_eq!(f.jobs[0].bounds(None).unwrap().runtime, Some(60 * SEC));
}

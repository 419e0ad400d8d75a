//! fio's job-file syntax and semantics.

use jobs::units::{MS, SEC, US};
use jobs::{parse_str, CpusAllowedPolicy, Engine, JobFile, RwMode};

fn parse(text: &str) -> JobFile {
    parse_str(text, "t.fio", &|_| None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn defaults_are_fios() {
    let j = &parse("[j]\n").jobs[0];
    assert_eq!(j.name, "j");
    assert_eq!(j.rw, RwMode::Read);
    assert_eq!(j.ioengine, Engine::Psync);
    assert_eq!((j.bs_read, j.bs_write), (4096, 4096));
    assert_eq!(j.iodepth, 1);
    assert_eq!(j.iodepth_batch_submit, 1);
    assert_eq!(j.iodepth_batch_complete_min, 1);
    assert_eq!(j.iodepth_batch_complete_max, 1);
    assert_eq!(j.rwmixread, 50);
    assert_eq!(j.loops, 1);
    assert_eq!(j.thinktime_blocks, 1);
    assert!(!j.direct && !j.time_based && !j.barrier && j.do_verify);
    assert_eq!(j.runtime, None);
}

#[test]
fn numjobs_expands_into_clones() {
    let f = parse("[global]\nnumjobs=2\n[a]\n[b]\nnumjobs=4\n");
    let got: Vec<(&str, usize)> = f
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.clone_index))
        .collect();
    assert_eq!(
        got,
        vec![("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2), ("b", 3)]
    );
}

#[test]
fn each_global_applies_to_the_jobs_after_it() {
    let f = parse(
        "[global]\nbs=8k\niodepth=4\nioengine=libaio\n[first]\n[global]\nbs=16k\n[second]\niodepth=2\n",
    );
    let (a, b) = (&f.jobs[0], &f.jobs[1]);
    assert_eq!((a.bs_read, a.iodepth), (8192, 4));
    // the second [global] adds to the first rather than replacing it
    assert_eq!(
        (b.bs_read, b.iodepth, b.ioengine),
        (16384, 2, Engine::Libaio)
    );
    assert_eq!(b.section_line, 8);
}

#[test]
fn job_options_do_not_leak_into_later_jobs() {
    let f = parse("[a]\nbs=64k\n[b]\n");
    assert_eq!(f.jobs[1].bs_read, 4096);
}

#[test]
fn name_splits_at_the_first_equals_only() {
    let f = parse("[j]\nname=raw=random-read\n");
    assert_eq!(f.jobs[0].name, "raw=random-read");
}

#[test]
fn section_name_wins_over_a_global_name() {
    let f = parse("[global]\nname=g\n[j]\n");
    assert_eq!(f.jobs[0].name, "j");
}

#[test]
fn options_without_a_value_are_true() {
    let j = &parse("[j]\ndirect\ntime_based\nruntime=1\nend_fsync\n").jobs[0];
    assert!(j.direct && j.time_based && j.end_fsync);
    let j = &parse("[j]\ndirect=1\nbuffered\n").jobs[0];
    assert!(!j.direct, "buffered is the inverse of direct");
    let j = &parse("[j]\ndirect = 0\n").jobs[0];
    assert!(!j.direct);
}

#[test]
fn spaces_around_equals_and_comments() {
    let f = parse(
        "  [ j ]  \n  bs = 4k  ; trailing\n# whole line\n   ; indented\n\niodepth = 8 # why\nioengine=libaio\n",
    );
    let j = &f.jobs[0];
    assert_eq!(j.name, "j");
    assert_eq!(j.iodepth, 8);
    assert_eq!(j.ioengine, Engine::Libaio);
}

#[test]
fn variables_are_substituted_from_the_environment() {
    let env = |k: &str| match k {
        "DEV" => Some("/dev/nvme0n1".to_string()),
        "DEPTH" => Some("16".to_string()),
        _ => None,
    };
    let f = parse_str(
        "[j]\nfilename=${DEV}\nioengine=libaio\niodepth=${DEPTH}\n",
        "t.fio",
        &env,
    )
    .unwrap();
    assert_eq!(f.jobs[0].filename.as_deref(), Some("/dev/nvme0n1"));
    assert_eq!(f.jobs[0].iodepth, 16);
}

#[test]
fn size_suffixes() {
    let j = &parse("[j]\nbs=4KiB\nsize=2G\noffset=1m\nio_limit=10M\nnumber_ios=1000\n").jobs[0];
    assert_eq!(j.bs_read, 4096);
    assert_eq!(j.size, Some(2 << 30));
    assert_eq!(j.offset, 1 << 20);
    assert_eq!(j.io_size, Some(10 << 20));
    assert_eq!(j.number_ios, Some(1000));
    let j = &parse("[j]\nblocksize=512\nfilesize=4t\n").jobs[0];
    assert_eq!(j.bs_write, 512);
    assert_eq!(j.size, Some(4 << 40));
}

#[test]
fn time_units_and_default_units() {
    let j = &parse("[j]\nruntime=60\nramp_time=2\nstartdelay=500ms\nthinktime=10\n").jobs[0];
    assert_eq!(j.runtime, Some(60 * SEC));
    assert_eq!(j.ramp_time, 2 * SEC);
    assert_eq!(j.startdelay, 500 * MS);
    assert_eq!(j.thinktime, 10 * US, "thinktime's default unit is us");
    let j = &parse("[j]\nruntime=2m\nthinktime=1.5ms\nthinktime_blocks=4\n").jobs[0];
    assert_eq!(j.runtime, Some(120 * SEC));
    assert_eq!(j.thinktime, 1_500_000);
    assert_eq!(j.thinktime_blocks, 4);
    assert_eq!(parse("[j]\ntimeout=6us\n").jobs[0].runtime, Some(6 * US));
}

#[test]
fn rw_modes_and_mix() {
    for (v, m) in [
        ("read", RwMode::Read),
        ("write", RwMode::Write),
        ("randread", RwMode::RandRead),
        ("randwrite", RwMode::RandWrite),
        ("rw", RwMode::ReadWrite),
        ("readwrite", RwMode::ReadWrite),
        ("randrw", RwMode::RandRw),
    ] {
        assert_eq!(parse(&format!("[j]\nrw={v}\n")).jobs[0].rw, m, "{v}");
    }
    let j = &parse("[j]\nreadwrite=randrw\nrwmixwrite=30\n").jobs[0];
    assert_eq!(j.rwmixread, 70);
    assert_eq!(parse("[j]\nrw=write\n").jobs[0].read_percent(), 0);
}

#[test]
fn rate_iops_one_or_two_values() {
    assert_eq!(
        parse("[j]\nrate_iops=1000\n").jobs[0].rate_iops,
        Some((1000, 1000))
    );
    assert_eq!(
        parse("[j]\nrate_iops=1000,500\n").jobs[0].rate_iops,
        Some((1000, 500))
    );
    assert_eq!(
        parse("[j]\nrate_iops=,500\n").jobs[0].rate_iops,
        Some((0, 500))
    );
    assert_eq!(
        parse("[j]\nrate_iops=1.5m\n").jobs[0].rate_iops,
        Some((1_572_864, 1_572_864)),
        "fio reads rate_iops through check_str_bytes: m is 1024 * 1024"
    );
    assert_eq!(parse("[j]\nrate_iops=0\n").jobs[0].rate_iops, None);
}

#[test]
fn cpus_allowed_and_split_policy() {
    let f = parse("[j]\ncpus_allowed=0,2,4-5\ncpus_allowed_policy=split\nnumjobs=5\n");
    assert_eq!(f.jobs[0].cpus_allowed.as_deref(), Some(&[0, 2, 4, 5][..]));
    assert_eq!(f.jobs[0].cpus_allowed_policy, CpusAllowedPolicy::Split);
    let each: Vec<_> = f.jobs.iter().map(|j| j.cpus().unwrap()).collect();
    assert_eq!(each, vec![vec![0], vec![2], vec![4], vec![5], vec![0]]);
    let shared = parse("[j]\ncpus_allowed=0-1\n");
    assert_eq!(shared.jobs[0].cpus(), Some(vec![0, 1]));
}

#[test]
fn batch_options_follow_fio() {
    let j = &parse("[j]\nioengine=libaio\niodepth=8\niodepth_batch=0\niodepth_batch_complete=2\n")
        .jobs[0];
    assert_eq!(j.iodepth_batch_submit, 8, "0 means iodepth");
    assert_eq!(j.iodepth_batch_complete_min, 2);
    assert_eq!(j.iodepth_batch_complete_max, 2, "max defaults to min");
    let j = &parse("[j]\nioengine=libaio\niodepth=8\niodepth_batch_complete_min=4\niodepth_batch_complete_max=2\niodepth_low=4\n").jobs[0];
    assert_eq!(j.iodepth_batch_complete_max, 4, "max is raised to min");
    assert_eq!(j.iodepth_low, Some(4));
}

#[test]
fn sync_engines_cap_iodepth_with_a_note() {
    let f = parse("[global]\niodepth=16\niodepth_batch_submit=16\n[s]\nioengine=psync\n[a]\nioengine=libaio\n");
    assert_eq!(f.jobs[0].iodepth, 1);
    assert_eq!(f.jobs[0].iodepth_batch_submit, 1);
    assert_eq!(f.jobs[1].iodepth, 16);
    assert_eq!(f.notes.len(), 1);
    assert_eq!(
        f.notes[0].to_string(),
        "t.fio:4: job 's': ioengine psync is synchronous: iodepth 16 capped at 1"
    );
    for e in ["sync", "vsync", "pvsync", "pvsync2"] {
        let f = parse(&format!("[j]\nioengine={e}\niodepth=4\n"));
        assert_eq!((f.jobs[0].iodepth, f.notes.len()), (1, 1), "{e}");
    }
}

#[test]
fn ignored_options_are_recorded_per_occurrence() {
    let f = parse("[global]\ngtod_reduce=1\nnorandommap\n[a]\ndisable_bw=1\nkb_base=1024\n[b]\n");
    let names: Vec<_> = f.ignored.iter().map(|i| i.option.as_str()).collect();
    assert_eq!(
        names,
        ["gtod_reduce", "norandommap", "disable_bw", "kb_base"]
    );
    assert_eq!(f.ignored[2].line, 5);
    assert_eq!(f.jobs.len(), 2);
}

#[test]
fn verify_null_or_zero_means_none() {
    assert_eq!(parse("[j]\nverify=null\n").jobs[0].verify, None);
    assert_eq!(parse("[j]\nverify=crc32c\nverify=0\n").jobs[0].verify, None);
    assert!(!parse("[j]\ndo_verify=0\n").jobs[0].do_verify);
}

#[test]
fn a_file_with_only_globals_has_no_jobs() {
    // fio: "No job(s) defined", and so an error here too (issue 12).
    let e = parse_str("; nothing\n[global]\nbs=4k\n", "t.fio", &|_| None).unwrap_err();
    assert!(e.to_string().starts_with("t.fio: no jobs to run"), "{e}");
}

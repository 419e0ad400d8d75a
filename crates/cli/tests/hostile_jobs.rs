//! Hostile job files end to end (issue 12, items 3, 9 and 14): every command
//! that reads a job file (`jobs`, `sim`, `run`, `tune`) goes through the same
//! front door, so each input here fails fast, in one line, within the time
//! and memory bound. Each test is named after what broke.

mod common;

use std::time::Duration;

use common::*;

/// The one-line error, bounded: at most 10 s and 200 MiB.
fn refused(args: &[&str], want: &str) -> Bounded {
    let b = hostile(args, b"", 10);
    assert_one_line_error(&b.output, want);
    b
}

#[test]
fn jobs_on_dev_zero_fails_fast_instead_of_growing_to_gigabytes() {
    let b = refused(
        &["jobs", "/dev/zero"],
        "/dev/zero: cannot read job file: a character device",
    );
    assert!(b.elapsed < Duration::from_secs(2), "{:?}", b.elapsed);
}

#[test]
fn sim_on_dev_urandom_fails_fast_instead_of_never_ending() {
    let b = refused(
        &["sim", "/dev/urandom"],
        "/dev/urandom: cannot read job file: a character device",
    );
    assert!(b.elapsed < Duration::from_secs(2), "{:?}", b.elapsed);
}

#[test]
fn run_and_tune_on_a_character_device_fail_before_anything_else() {
    // The job file is read first: no backend is opened, nothing laid out.
    refused(
        &["run", "/dev/zero", "--backend", "null:10us"],
        "a character device",
    );
    refused(&["tune", "/dev/zero"], "a character device");
}

#[test]
fn a_job_file_on_an_endless_fifo_is_cut_at_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("endless.fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let path = fifo.clone();
    // Writes until the reader goes away (EPIPE) or 256 MiB; left to finish
    // on its own if the command never opens the FIFO.
    std::thread::spawn(move || {
        use std::io::Write;
        let Ok(mut w) = std::fs::OpenOptions::new().write(true).open(&path) else {
            return;
        };
        let chunk = vec![b';'; 64 << 10];
        for _ in 0..4096 {
            if w.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    refused(
        &["jobs", fifo.to_str().unwrap()],
        "larger than 1024 KiB with its includes",
    );
}

#[test]
fn a_job_file_on_a_fifo_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("job.fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let path = fifo.clone();
    std::thread::spawn(move || {
        let _ = std::fs::write(&path, "[reader]\nrw=randread\nsize=1m\n");
    });
    let b = hostile(&["jobs", fifo.to_str().unwrap()], b"", 10);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    assert!(stdout(&b.output).starts_with("reader: ioengine=psync rw=randread"));
}

#[test]
fn jobs_exits_non_zero_on_a_file_with_no_job() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("empty.fio", ""),
        ("global.fio", "[global]\nbs=4k\n"),
        ("comments.fio", "; nothing\n# here\n"),
    ] {
        let f = write(dir.path(), name, text);
        refused(
            &["jobs", &f],
            &format!(
                "{name}: no jobs to run: no job section in the file (fio: \"No job(s) defined\")"
            ),
        );
    }
}

#[test]
fn five_thousand_sections_name_the_job_count_not_numjobs() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..5000).map(|i| format!("[j{i}]\nsize=1m\n")).collect();
    let f = write(dir.path(), "many.fio", &text);
    let b = refused(
        &["jobs", &f],
        "many.fio:8193: job 'j4096': this section brings the file past fio's limit of 4096 jobs (REAL_MAX_JOBS); it defines 5000",
    );
    assert!(!stderr(&b.output).contains("numjobs"));
}

#[test]
fn four_thousand_clones_of_a_full_cpu_list_stay_in_bounds() {
    // 4096 clones x 8192 CPUs took 270 MB when each clone held its own list.
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "cpus.fio",
        "[a]\ncpus_allowed=0-8191\nnumjobs=4096\nsize=1m\n",
    );
    let b = hostile(&["jobs", &f], b"", 10);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    assert!(stdout(&b.output).contains(" cpus=0-8191"));
}

#[test]
fn bs_larger_than_size_is_refused_by_sim_and_run_alike() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "big-bs.fio", "[a]\nbs=8k\nsize=4k\n");
    let want = "big-bs.fio:1: job 'a': option 'bs': block size 8192 is larger than size=4096: not one I/O fits";
    refused(&["sim", &f, "--runtime", "100ms"], want);
    refused(
        &["run", &f, "--backend", "null:10us", "--runtime", "100ms"],
        want,
    );
}

#[test]
fn an_unaligned_direct_block_size_is_refused_by_sim_and_run_alike() {
    let dir = tempfile::tempdir().unwrap();
    for bs in ["1", "4097"] {
        let f = write(
            dir.path(),
            "direct.fio",
            &format!("[a]\ndirect=1\nbs={bs}\nsize=1m\n"),
        );
        let want = format!("direct.fio:1: job 'a': option 'bs': block size {bs} is not a multiple of 512, which direct=1 (O_DIRECT) needs");
        refused(&["sim", &f, "--runtime", "100ms"], &want);
        refused(
            &["run", &f, "--backend", "null:10us", "--runtime", "100ms"],
            &want,
        );
    }
}

#[test]
fn bs_1t_says_the_real_cause_not_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "huge-bs.fio",
        "[a]\nbs=1t\nruntime=100ms\ntime_based\n",
    );
    let want = "huge-bs.fio:1: job 'a': option 'bs': block size 1099511627776 is above 2147479552, the most Linux transfers in one read or write (MAX_RW_COUNT)";
    refused(&["sim", &f], want);
    refused(&["run", &f, "--backend", "null:10us"], want);
}

#[test]
fn size_0_is_the_whole_device_as_in_fio() {
    let dir = tempfile::tempdir().unwrap();
    // A time-bounded job runs through the whole (simulated) device.
    let f = write(
        dir.path(),
        "whole.fio",
        "[a]\nsize=0\nruntime=100ms\ntime_based\n",
    );
    let b = hostile(&["sim", &f], b"", 10);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    // With nothing else to stop it, the simulator says it has no size.
    let f = write(dir.path(), "unbounded.fio", "[a]\nsize=0\n");
    refused(
        &["sim", &f],
        "a simulated device has no size to run through",
    );
}

#[test]
fn a_megabyte_value_is_not_echoed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "mb.fio",
        &format!("[a]\nbs={}\n", "A".repeat(1_000_000)),
    );
    let b = refused(&["jobs", &f], "mb.fio:2: option 'bs': invalid size 'AAAA");
    let err = stderr(&b.output);
    assert!(err.len() < 300, "{} bytes", err.len());
    assert!(err.contains("\u{2026} (1000000 bytes)'"), "{err}");
}

#[test]
fn nul_bytes_in_a_job_file_are_escaped_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "nul.fio", "[a]\nbs=4\0k\n");
    let b = refused(
        &["jobs", &f],
        "nul.fio:2: option 'bs': invalid size '4\\0k'",
    );
    assert!(!b.output.stderr.contains(&0), "a raw NUL on stderr");
}

#[test]
fn invalid_utf8_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("latin1.fio");
    std::fs::write(&p, b"[a]\nsize=1m\ndescription=caf\xe9\n").unwrap();
    refused(
        &["jobs", p.to_str().unwrap()],
        "latin1.fio:3: not UTF-8 text (byte 0xe9 at byte 16 of the line)",
    );
}

#[test]
fn a_utf8_bom_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "bom.fio", "\u{feff}[a]\nsize=1m\n");
    let b = hostile(&["jobs", &f], b"", 10);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
}

#[test]
fn fio_include_is_recognised_and_a_cycle_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "common.inc", "ioengine=libaio\niodepth=8\n");
    let f = write(dir.path(), "main.fio", "[a]\nsize=1m\ninclude common.inc\n");
    let b = hostile(&["jobs", &f], b"", 10);
    assert!(b.output.status.success(), "{}", stderr(&b.output));
    assert!(
        stdout(&b.output).contains("ioengine=libaio"),
        "{}",
        stdout(&b.output)
    );
    let f = write(dir.path(), "loop.fio", "[a]\nsize=1m\ninclude loop.fio\n");
    refused(
        &["jobs", &f],
        "loop.fio:3: option 'include': 'loop.fio' includes itself (an include cycle)",
    );
}

#[test]
fn several_files_in_filename_are_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "two.fio",
        "[a]\nsize=1m\nfilename=/tmp/a:/tmp/b\n",
    );
    let want = "two.fio:3: option 'filename': '/tmp/a:/tmp/b' names several files";
    refused(&["jobs", &f], want);
    refused(&["run", &f, "--backend", "null:10us"], want);
}

#[test]
fn a_megabyte_of_ignored_options_is_noted_within_the_bound() {
    // 262,000 notes took 8 s written one unbuffered line at a time.
    let dir = tempfile::tempdir().unwrap();
    let text = format!("[a]\nsize=1m\n{}", "mem\n".repeat(262_000));
    let f = write(dir.path(), "noisy.fio", &text);
    let b = hostile(&["jobs", &f], b"", 10);
    assert!(b.output.status.success());
    assert_eq!(stderr(&b.output).lines().count(), 262_000);
    assert!(b.elapsed < Duration::from_secs(5), "{:?}", b.elapsed);
}

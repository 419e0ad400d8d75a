//! Hostile job files (issue 12): each test is named after what broke, and
//! checks the parser's own answer (the end-to-end runs are in the binary's
//! `hostile_jobs.rs`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jobs::{parse_file, parse_str, JobError, MAX_INCLUDE_DEPTH, MAX_JOBS, MAX_JOB_FILE_BYTES};

fn err(text: &str) -> String {
    match parse_str(text, "h.fio", &|_| None) {
        Ok(f) => panic!("accepted: {:?}", f.jobs),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "multi-line: {s}");
            s
        }
    }
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn file_err(path: &Path) -> String {
    match parse_file(path) {
        Ok(f) => panic!("accepted: {:?}", f.jobs),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "multi-line: {s}");
            s
        }
    }
}

// --- item 3: what is read

#[test]
fn dev_zero_as_a_job_file_is_refused_before_reading_it() {
    let t = Instant::now();
    let e = file_err(Path::new("/dev/zero"));
    assert_eq!(
        e,
        "/dev/zero: cannot read job file: a character device, not a job file (a regular file or a FIFO)"
    );
    assert!(t.elapsed() < Duration::from_secs(1));
    assert!(file_err(Path::new("/dev/urandom")).contains("a character device"));
}

#[test]
fn a_directory_as_a_job_file_says_so() {
    let dir = tempfile::tempdir().unwrap();
    assert!(
        file_err(dir.path()).ends_with("a directory, not a job file (a regular file or a FIFO)")
    );
}

#[test]
fn a_job_file_above_the_size_bound_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("[a]\nsize=1m\n");
    while (text.len() as u64) <= MAX_JOB_FILE_BYTES {
        text.push_str("; padding padding padding padding padding padding\n");
    }
    let p = write(dir.path(), "big.fio", &text);
    let e = file_err(&p);
    assert!(e.contains("larger than 1024 KiB with its includes"), "{e}");
}

/// A FIFO (a shell's `<(...)`) still works, and an endless one is cut at
/// the bound instead of growing until memory runs out.
#[test]
fn a_fifo_job_file_is_read_and_an_endless_fifo_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("jobs.fifo");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(ok.success());
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        std::fs::write(&path, "[a]\nsize=1m\n").unwrap();
    });
    let f = parse_file(&fifo).unwrap();
    writer.join().unwrap();
    assert_eq!(f.jobs.len(), 1);

    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let chunk = vec![b';'; 64 << 10];
        // Until the reader stops reading (EPIPE) or 64 MiB.
        for _ in 0..1024 {
            if w.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let e = file_err(&fifo);
    writer.join().unwrap();
    assert!(e.contains("larger than 1024 KiB"), "{e}");
}

#[test]
fn five_thousand_sections_name_the_job_count_not_numjobs() {
    let mut text = String::new();
    for i in 0..5000 {
        text.push_str(&format!("[j{i}]\nsize=1m\n"));
    }
    let e = err(&text);
    let line = 2 * MAX_JOBS as usize + 1;
    assert_eq!(
        e,
        format!("h.fio:{line}: job 'j4096': this section brings the file past fio's limit of 4096 jobs (REAL_MAX_JOBS); it defines 5000")
    );
    assert!(!e.contains("numjobs"), "{e}");
}

#[test]
fn an_invalid_option_in_one_of_five_thousand_sections_is_named() {
    let mut text = String::new();
    for i in 0..5000 {
        text.push_str(&format!("[j{i}]\nsize=1m\n"));
        if i == 4500 {
            text.push_str("bs=abc\n");
        }
    }
    assert_eq!(err(&text), "h.fio:9003: option 'bs': invalid size 'abc'");
}

#[test]
fn numjobs_past_the_bound_names_numjobs() {
    let e = err("[a]\nsize=1m\n[b]\nsize=1m\nnumjobs=4096\n");
    assert_eq!(e, "h.fio:3: job 'b': option 'numjobs': its 4096 clones bring the file past fio's limit of 4096 jobs (REAL_MAX_JOBS); it defines 4097");
}

// --- item 9: one block-size check for both front ends

#[test]
fn a_block_size_larger_than_size_is_refused() {
    assert_eq!(
        err("[a]\nbs=8k\nsize=4k\n"),
        "h.fio:1: job 'a': option 'bs': block size 8192 is larger than size=4096: not one I/O fits"
    );
    // Only the directions in use count (fio's td_min_bs).
    assert!(parse_str("[a]\nrw=read\nbs=4k,64k\nsize=8k\n", "h.fio", &|_| None).is_ok());
}

#[test]
fn direct_io_with_an_unaligned_block_size_is_refused() {
    for bs in ["1", "4097"] {
        assert_eq!(
            err(&format!("[a]\ndirect=1\nbs={bs}\nsize=1m\n")),
            format!("h.fio:1: job 'a': option 'bs': block size {bs} is not a multiple of 512, which direct=1 (O_DIRECT) needs")
        );
    }
    // Buffered I/O takes any size, as in fio.
    assert!(parse_str("[a]\nbs=4097\nsize=1m\n", "h.fio", &|_| None).is_ok());
    assert!(err("[a]\nrw=randrw\ndirect=1\nbs=4k,1000\nsize=1m\n")
        .contains("1000-byte write block size is not a multiple of 512"));
}

#[test]
fn bs_1t_says_it_is_above_what_linux_transfers_at_once() {
    assert_eq!(
        err("[a]\nbs=1t\nsize=2t\n"),
        "h.fio:1: job 'a': option 'bs': block size 1099511627776 is above 2147479552, the most Linux transfers in one read or write (MAX_RW_COUNT)"
    );
}

// --- item 14: messages

#[test]
fn size_0_means_the_whole_file_as_in_fio() {
    let f = parse_str("[a]\nsize=0\nio_size=0\nruntime=1\n", "h.fio", &|_| None).unwrap();
    assert_eq!((f.jobs[0].size, f.jobs[0].io_size), (None, None));
    let f = parse_str(
        "[global]\nsize=1g\n[a]\nsize=0\nruntime=1\n",
        "h.fio",
        &|_| None,
    )
    .unwrap();
    assert_eq!(f.jobs[0].size, None, "size=0 undoes an inherited size");
}

/// Found by the fuzzer (crates/fuzz): a value that starts as a number went
/// through the unit parsers, whose messages quoted it whole (1 MB of `9`).
#[test]
fn a_megabyte_number_in_a_size_or_time_is_not_echoed_whole() {
    let digits = "9".repeat(1_000_000);
    for option in [
        "bs",
        "blocksize",
        "runtime",
        "rate_iops",
        "iodepth",
        "cpus_allowed",
        "direct",
        "number_ios",
    ] {
        let e = err(&format!("[a]\n{option}={digits}x\n"));
        assert!(
            e.len() < 200,
            "{option}: {} bytes: {}",
            e.len(),
            &e[..200.min(e.len())]
        );
        assert!(e.contains("\u{2026} (1000001 bytes)"), "{option}: {e}");
    }
    // The fuzzer's minimised input: the value ends in a `;` comment, so the
    // number the unit parser quoted was not the value as written.
    let e = err(&format!(
        "[a]\nblocksize={digits}; Mixed workload (TOS 5.4,\n"
    ));
    assert!(e.len() < 200, "{} bytes", e.len());
    let e = err("[a]\nbs=1\r55\n");
    assert!(!e.contains('\r'), "{e:?}");
}

#[test]
fn a_megabyte_value_is_not_echoed_whole() {
    let value = "A".repeat(1_000_000);
    let e = err(&format!("[a]\nbs={value}\n"));
    assert!(e.len() < 200, "{} bytes", e.len());
    assert_eq!(
        e,
        format!(
            "h.fio:2: option 'bs': invalid size '{}\u{2026} (1000000 bytes)'",
            "A".repeat(60)
        )
    );
    let e = err(&format!("[a]\n{value}=1\n"));
    assert!(
        e.len() < 200 && e.starts_with("h.fio:2: unknown option 'AAA"),
        "{e}"
    );
    let e = err(&format!("[{value}]\nbs=8k\nsize=4k\n"));
    assert!(
        e.len() < 300 && e.contains("\u{2026} (1000000 bytes)"),
        "{e}"
    );
}

#[test]
fn nul_and_control_bytes_in_a_value_are_escaped() {
    assert_eq!(
        err("[a]\nbs=4\0k\x1b[2J\n"),
        "h.fio:2: option 'bs': invalid size '4\\0k\\u{1b}[2J'"
    );
    assert_eq!(err("[a]\nfo\0o=1\n"), "h.fio:2: unknown option 'fo\\0o'");
    assert_eq!(
        err("[a]\nfilename=/tmp/x\0y\n"),
        "h.fio:2: option 'filename': '/tmp/x\\0y' holds a NUL byte, which no file name can"
    );
    let e = err("[a\0\n");
    assert!(e.contains("'[a\\0'"), "{e}");
}

#[test]
fn invalid_utf8_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "bad.fio", b"[a]\nsize=1m\nbs=4\xffk\n");
    let e = file_err(&p);
    assert_eq!(
        e,
        format!(
            "{}:3: not UTF-8 text (byte 0xff at byte 5 of the line)",
            p.display()
        )
    );
}

#[test]
fn a_utf8_bom_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "bom.fio", "\u{feff}[a]\nsize=1m\n");
    assert_eq!(parse_file(&p).unwrap().jobs[0].name, "a");
}

#[test]
fn an_empty_globals_only_or_comment_only_file_has_no_jobs() {
    for text in ["", "[global]\nbs=4k\n", "; only\n# comments\n", "\u{feff}"] {
        assert_eq!(
            err(text),
            "h.fio: no jobs to run: no job section in the file (fio: \"No job(s) defined\")",
            "{text:?}"
        );
    }
}

#[test]
fn several_files_in_filename_are_refused_with_the_line() {
    assert_eq!(
        err("[a]\nsize=1m\nfilename=/tmp/a:/tmp/b\n"),
        "h.fio:3: option 'filename': '/tmp/a:/tmp/b' names several files (fio separates them with ':'; write '\\:' for a colon in a name): one file per job is modelled"
    );
    let f = parse_str("[a]\nsize=1m\nfilename=/tmp/x\\:y\n", "h.fio", &|_| None).unwrap();
    assert_eq!(f.jobs[0].filename.as_deref(), Some("/tmp/x:y"));
}

// --- fio's include

#[test]
fn include_pulls_options_into_its_section_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "glob-include.fio", "thread=1\nbs=8k\n");
    write(
        dir.path(),
        "test-include.fio",
        "ioengine=libaio\niodepth=4\ninclude deeper.fio\n",
    );
    write(dir.path(), "deeper.fio", "rw=randread\n");
    // fio's HOWTO example, names relative to the including file.
    let main = write(
        dir.path(),
        "including.fio",
        "[global]\nfilesize=1m\ninclude glob-include.fio\n\n[test]\nbs=4k\ntime_based=1\nruntime=10\ninclude test-include.fio\n",
    );
    let f = parse_file(&main).unwrap();
    let j = &f.jobs[0];
    assert_eq!((j.bs_read, j.iodepth), (4096, 4), "in file order");
    assert_eq!(j.rw, jobs::RwMode::RandRead);
    assert_eq!(j.size, Some(1 << 20));
    // `thread` came from the include too (modelled: the clones are threads
    // of one process).
    assert!(j.thread);
}

#[test]
fn an_error_in_an_included_file_names_that_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let inc = write(dir.path(), "inc.fio", "; one\nbs=abc\n");
    let main = write(dir.path(), "main.fio", "[a]\nsize=1m\ninclude inc.fio\n");
    assert_eq!(
        file_err(&main),
        format!("{}:2: option 'bs': invalid size 'abc'", inc.display())
    );
}

#[test]
fn an_include_cycle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.inc", "bs=4k\ninclude b.inc\n");
    write(dir.path(), "b.inc", "include a.inc\n");
    let main = write(dir.path(), "main.fio", "[a]\nsize=1m\ninclude a.inc\n");
    let e = file_err(&main);
    assert!(
        e.ends_with("b.inc:1: option 'include': 'a.inc' includes itself (an include cycle)"),
        "{e}"
    );
    let main = write(dir.path(), "self.fio", "[a]\nsize=1m\ninclude self.fio\n");
    assert!(file_err(&main).contains("includes itself"));
}

#[test]
fn includes_nested_too_deep_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..=MAX_INCLUDE_DEPTH + 1 {
        write(
            dir.path(),
            &format!("{i}.inc"),
            format!("include {}.inc\n", i + 1),
        );
    }
    let main = write(dir.path(), "main.fio", "[a]\nsize=1m\ninclude 0.inc\n");
    let e = file_err(&main);
    assert!(e.contains("includes nested deeper than 16"), "{e}");
}

#[test]
fn included_copies_share_the_size_bound() {
    // Each level includes the next twice: 2^12 copies of 4 KB (16 MB) if
    // nothing bounded them together.
    let dir = tempfile::tempdir().unwrap();
    let pad = "; ".repeat(2000);
    for i in 0..12 {
        write(
            dir.path(),
            &format!("{i}.inc"),
            format!("{pad}\ninclude {n}.inc\ninclude {n}.inc\n", n = i + 1),
        );
    }
    write(dir.path(), "12.inc", "bs=4k\n");
    let main = write(dir.path(), "main.fio", "[a]\nsize=1m\ninclude 0.inc\n");
    let t = Instant::now();
    let e = file_err(&main);
    assert!(e.contains("larger than 1024 KiB with its includes"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn an_included_file_may_not_open_a_section() {
    let dir = tempfile::tempdir().unwrap();
    let inc = write(dir.path(), "inc.fio", "bs=4k\n[b]\n");
    let main = write(dir.path(), "main.fio", "[a]\nsize=1m\ninclude inc.fio\n");
    assert_eq!(
        file_err(&main),
        format!(
            "{}:2: no new sections in included files (fio's rule)",
            inc.display()
        )
    );
}

#[test]
fn a_missing_include_names_the_directive() {
    let dir = tempfile::tempdir().unwrap();
    let main = write(dir.path(), "main.fio", "[a]\nsize=1m\ninclude nope.fio\n");
    let e = file_err(&main);
    assert!(
        e.starts_with(&format!(
            "{}:3: option 'include': cannot read '",
            main.display()
        )),
        "{e}"
    );
    assert!(err("include x.fio\n[a]\n")
        .starts_with("h.fio:1: option 'include' appears before any [section]"));
    assert_eq!(
        err("[a]\ninclude\n"),
        "h.fio:2: option 'include' needs a value"
    );
}

#[test]
fn parse_str_reads_no_include() {
    let e = parse_str("[a]\ninclude /etc/passwd\n", "h.fio", &|_| None).unwrap_err();
    assert!(matches!(e, JobError::Unsupported { line: 2, .. }), "{e}");
}

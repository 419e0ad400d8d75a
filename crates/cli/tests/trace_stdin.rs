//! A trace on standard input (issue 41 item 0): `coalesce --trace -` and
//! `--trace /dev/stdin` with a pipe on stdin read the trace once, detect
//! its format from the first bytes (decompressed first when it is a zstd
//! stream) and print what the same trace read from its file prints.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{bin, stderr, stdout};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/traces")
        .join(name)
}

/// `coalesce --policy all --trace TRACE` with `input` piped to its stdin.
fn coalesce(trace: &str, input: Vec<u8>) -> std::process::Output {
    let mut child = bin()
        .args(["coalesce", "--policy", "all", "--trace", trace])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Written from a thread: a pipe holds 64 KiB, the binary may answer first.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// The report with the trace's name taken out (its first line names the
/// input as given).
fn table(out: &str, name: &str) -> String {
    out.replace(&format!("{name}:"), "TRACE:")
}

#[test]
fn a_piped_trace_reads_as_its_file_does() {
    for (name, compress) in [
        // MSR: the false "line 1: expected 7 columns" on /dev/stdin.
        ("sample.msr.csv", false),
        ("sample.thesios.csv", false),
        ("sample.alibaba.csv", true),
        ("sample.vscsi", true),
    ] {
        let path = example(name);
        let file = bin()
            .args(["coalesce", "--policy", "all", "--trace"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(file.status.success(), "{name}: {}", stderr(&file));
        let want = table(&stdout(&file), &path.display().to_string());
        let plain = std::fs::read(&path).unwrap();
        let input = if compress {
            zstd::stream::encode_all(&plain[..], 3).unwrap()
        } else {
            plain
        };
        for arg in ["-", "/dev/stdin"] {
            let o = coalesce(arg, input.clone());
            assert!(o.status.success(), "{name} on {arg}: {}", stderr(&o));
            assert_eq!(table(&stdout(&o), arg), want, "{name} on {arg}");
        }
    }
}

#[test]
fn bad_input_on_stdin_is_one_line_naming_it() {
    let o = coalesce("-", b"0,R,1,4096,3\n0,X,1,4096,4\n".to_vec());
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("<stdin>:2: opcode: 'X' is not R or W"),
        "{err}"
    );
}

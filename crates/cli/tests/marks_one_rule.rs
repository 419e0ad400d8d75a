//! One marking engine (issue 39 item 1): one rule, written once, marks a
//! fio job's requests in `sim` (a job file's `mark=`), a real program's
//! under `exec` (`--mark`) and a block trace's in `coalesce --trace`
//! (`--mark`), the same way. Without it every read is Urgent in all three
//! (TOS Table 1: a blocking pread; a block trace's read); with it, Barrier.

mod common;

use std::path::Path;

use common::{bin, stderr, stdout, turn};
use serde_json::Value;

/// The rule, in the one syntax (crates/marks/README.md).
const RULE: &str = "read => barrier";

/// A psync random-read job (one blocking pread a request: Table 1 Urgent).
const JOB: &str = "[r]\nrw=randread\nioengine=psync\nbs=4k\ndirect=1\nsize=1m\n";

/// `sim JOB --output-format json`'s completions by mark (urgent, barrier,
/// unmarked).
fn sim(dir: &Path, job: &str) -> (u64, u64, u64) {
    let file = common::write(dir, "r.fio", job);
    let o = bin()
        .args(["sim", &file, "--policy", "cint", "--runtime", "2ms"])
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let m = &v["cinterrupts"]["completions_by_mark"];
    let n = |k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k}: {v}"));
    (n("urgent"), n("barrier"), n("unmarked"))
}

/// Four O_DIRECT preads of a file, then one pwrite (not a read: no rule).
const PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    int fd = open(argv[1], O_RDWR | O_DIRECT);
    void *buf;
    if (fd < 0 || posix_memalign(&buf, 4096, 4096) != 0) { perror("open"); return 3; }
    memset(buf, 'x', 4096);
    for (int i = 0; i < 4; i++)
        if (pread(fd, buf, 4096, i * 4096) != 4096) { perror("pread"); return 4; }
    if (pwrite(fd, buf, 4096, 0) != 4096) { perror("pwrite"); return 5; }
    return 0;
}
"#;

/// The program under `exec ARGS`: (urgent, barrier, unmarked) of its reads
/// and of its writes.
fn exec(dir: &Path, exe: &Path, args: &[&str]) -> [(u64, u64, u64); 2] {
    let data = dir.join("data");
    std::fs::write(&data, vec![b'a'; 16384]).unwrap();
    let json = dir.join("exec.json");
    let o = bin()
        .arg("exec")
        .args(args)
        .args(["--output-format", "json", "-o"])
        .arg(&json)
        .arg("--")
        .arg(exe)
        .arg(&data)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let by = |kind: &str| {
        let k = &v["cinterrupts"]["exec"]["requests"][kind];
        let n = |m: &str| k[m].as_u64().unwrap_or_else(|| panic!("{kind}.{m}: {v}"));
        (n("urgent"), n("barrier"), n("unmarked"))
    };
    [by("reads"), by("writes")]
}

/// `coalesce --trace` on the shared blkparse sample: its requests and how
/// many are marked Urgent (the table's first line).
fn coalesce(args: &[&str]) -> (u64, u64) {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces/sample.blkparse");
    let o = bin()
        .args(["coalesce", "--policy", "cint", "--trace"])
        .arg(&trace)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let first: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    // "FILE: N requests, U marked Urgent; ..."
    (first[1].parse().unwrap(), first[3].parse().unwrap())
}

#[test]
fn one_rule_marks_a_fio_job_a_program_under_exec_and_a_trace_alike() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();

    // A fio job in sim: the job file's `mark=`.
    let (u, b, n) = sim(dir.path(), JOB);
    assert!(u > 0 && b == 0 && n == 0, "Table 1: ({u}, {b}, {n})");
    let (u2, b2, n2) = sim(dir.path(), &format!("{JOB}mark={RULE}\n"));
    assert_eq!((u2, n2), (0, 0), "every read Barrier: ({u2}, {b2}, {n2})");
    assert_eq!(b2, u, "the same requests, now Barrier");

    // A real program under exec: `--mark`.
    let exe = common::compile_c(dir.path(), "one_rule_program", PROGRAM, &["-O1"]);
    let [reads, writes] = exec(dir.path(), &exe, &[]);
    assert_eq!((reads, writes), ((4, 0, 0), (1, 0, 0)), "Table 1");
    let [reads, writes] = exec(dir.path(), &exe, &["--mark", RULE]);
    assert_eq!(reads, (0, 4, 0), "the rule's reads");
    assert_eq!(writes, (1, 0, 0), "no rule for a write: Table 1");

    // A block trace: `coalesce --trace --mark`. Every read of the sample
    // leaves Urgent (it becomes Barrier), every write keeps its default.
    let reads = traces::open(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces/sample.blkparse"),
        None,
    )
    .unwrap()
    .filter(|r| {
        let r = r.as_ref().unwrap();
        !r.write && !r.flush
    })
    .count() as u64;
    assert!(reads > 0);
    let (total, urgent) = coalesce(&[]);
    let (total2, urgent2) = coalesce(&["--mark", RULE]);
    assert_eq!(total, total2);
    assert_eq!(urgent - urgent2, reads, "({total}, {urgent}) -> {urgent2}");
}

//! `exec`'s marking rules on a real program (issue 24 item 6): a small C
//! program whose two threads have their own names, which rewrites its
//! title over argv as PostgreSQL does, and does O_DIRECT reads, writes and
//! a flush on a file it unlinked after opening it and on one it kept. The
//! report's counts by kind and mark are exactly the rules' (and the
//! kernel's defaults for the rest).

mod common;

use std::path::Path;

use common::{bin, stderr, turn};
use serde_json::Value;

/// Threads "t_reader" and "t_writer" (pthread_setname_np); each does its
/// I/O in turn (the reader first), then main fsyncs `keep`. Every call must
/// move all its bytes.
const PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int victim, keep;
static void *buf;

static void must(long r, const char *what) {
    if (r != 4096 && r != 0) { perror(what); exit(10); }
}

static void *reader(void *x) {
    (void)x;
    pthread_setname_np(pthread_self(), "t_reader");
    for (int i = 0; i < 3; i++) must(pread(victim, buf, 4096, i * 4096), "pread victim");
    for (int i = 0; i < 2; i++) must(pread(keep, buf, 4096, i * 4096), "pread keep");
    return 0;
}

static void *writer(void *x) {
    (void)x;
    pthread_setname_np(pthread_self(), "t_writer");
    for (int i = 0; i < 4; i++) must(pwrite(victim, buf, 4096, i * 4096), "pwrite victim");
    must(pwrite(keep, buf, 4096, 0), "pwrite keep");
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    char *paths[2] = {strdup(argv[1]), strdup(argv[2])};
    /* The title over the whole argv area, NUL-padded, as PostgreSQL's
       ps_status.c does on Linux (PS_USE_CLOBBER_ARGV, PS_PADDING '\0'). */
    size_t room = argv[2] + strlen(argv[2]) - argv[0];
    const char *title = "marks: custom";
    if (room < strlen(title)) return 3;
    memset(argv[0], 0, room);
    memcpy(argv[0], title, strlen(title));
    victim = open(paths[0], O_RDWR | O_DIRECT);
    keep = open(paths[1], O_RDWR | O_DIRECT);
    if (victim < 0 || keep < 0) { perror("open"); return 4; }
    if (unlink(paths[0]) != 0) { perror("unlink"); return 5; }
    if (posix_memalign(&buf, 4096, 4096) != 0) return 6;
    memset(buf, 'x', 4096);
    pthread_t t;
    if (pthread_create(&t, 0, reader, 0) || pthread_join(t, 0)) return 7;
    if (pthread_create(&t, 0, writer, 0) || pthread_join(t, 0)) return 8;
    if (fsync(keep) != 0) { perror("fsync"); return 9; }
    return 0;
}
"#;

/// The program built in `dir` (its path is long enough for the title).
fn build(dir: &Path) -> String {
    let exe = common::compile_c(dir, "marks_child_program", PROGRAM, &["-O1", "-pthread"]);
    exe.to_str().unwrap().to_string()
}

/// The program under `exec ARGS` on two fresh 16 KiB files; our report.
fn run(dir: &Path, exe: &str, args: &[&str]) -> Value {
    let (victim, keep) = (dir.join("victim"), dir.join("keep"));
    for f in [&victim, &keep] {
        std::fs::write(f, vec![b'a'; 16384]).unwrap();
    }
    let json = dir.join("exec.json");
    let o = bin()
        .arg("exec")
        .args(args)
        .args(["--output-format", "json", "-o"])
        .arg(&json)
        .arg("--")
        .arg(exe)
        .arg(&victim)
        .arg(&keep)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
    assert!(!victim.exists(), "the program unlinked it");
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

/// (urgent, barrier, unmarked) of one kind.
fn marks(v: &Value, kind: &str) -> (u64, u64, u64) {
    let k = &v["cinterrupts"]["exec"]["requests"][kind];
    let n = |m: &str| k[m].as_u64().unwrap_or_else(|| panic!("{kind}.{m}: {v}"));
    (n("urgent"), n("barrier"), n("unmarked"))
}

#[test]
fn rules_by_operation_thread_file_and_title_give_exactly_their_marks() {
    let _one = turn();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path());

    // No rule: Table 1, every blocking call and the fsync Urgent.
    let v = run(dir.path(), &exe, &[]);
    assert_eq!(marks(&v, "reads"), (5, 0, 0), "{v}");
    assert_eq!(marks(&v, "writes"), (5, 0, 0), "{v}");
    assert_eq!(marks(&v, "flushes"), (1, 0, 0), "{v}");

    let rules = dir.path().join("t.rules");
    std::fs::write(
        &rules,
        "# a rules file: the thread's writes on keep, then all its other writes\n\
         write thread=t_writer file=*/keep => barrier\n\
         write thread=t_writer => none\n",
    )
    .unwrap();
    let v = run(
        dir.path(),
        &exe,
        &[
            // A title that is not the program's: never matches.
            "--mark",
            "title=*postgres* => barrier",
            // The unlinked file by the path it had.
            "--mark",
            "read file=*/victim => barrier",
            // The title the program wrote over its argv, with a file.
            "--mark",
            "read title='marks: custom' file=*/keep => none",
            "--rules",
            rules.to_str().unwrap(),
        ],
    );
    assert_eq!(marks(&v, "reads"), (0, 3, 2), "{v}");
    assert_eq!(marks(&v, "writes"), (0, 1, 4), "{v}");
    // No rule for a flush: the kernel's default.
    assert_eq!(marks(&v, "flushes"), (1, 0, 0), "{v}");
    let by_title = &v["cinterrupts"]["exec"]["requests_by_title"]["marks: custom"];
    assert_eq!(by_title["writes"]["unmarked"], 4, "{v}");
    let lines: Vec<&str> = v["cinterrupts"]["exec"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "title=*postgres* => barrier",
            "read file=*/victim => barrier",
            "read file=*/keep title=\"marks: custom\" => none",
            "write thread=t_writer file=*/keep => barrier",
            "write thread=t_writer => none",
        ]
    );

    // By operation alone, and `default` stopping the search.
    let v = run(
        dir.path(),
        &exe,
        &[
            "--mark",
            "flush => none",
            "--mark",
            "thread=t_reader => default",
            "--mark",
            "read => barrier",
        ],
    );
    assert_eq!(marks(&v, "reads"), (5, 0, 0), "{v}");
    assert_eq!(marks(&v, "flushes"), (0, 0, 1), "{v}");
}

#[test]
fn a_bad_rule_is_one_line_naming_it_and_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            vec!["--mark", "write file=*.ibd => soon"],
            "rule 'write file=*.ibd => soon': invalid mark 'soon'",
        ),
        (vec!["--mark", "wrote => none"], "unknown word 'wrote'"),
        (
            vec!["--marks-for", "oracle"],
            "no preset 'oracle' (mariadb, postgres, rocksdb)",
        ),
    ] {
        let o = bin()
            .arg("exec")
            .args(&args)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        common::assert_one_line_error(&o, want);
    }
    let f = dir.path().join("bad.rules");
    std::fs::write(&f, "# fine\nread => urgent\n\nwrite title=\"x => none\n").unwrap();
    let o = bin()
        .args(["exec", "--rules", f.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    common::assert_one_line_error(
        &o,
        &format!("{}:4: rule 'write title=\"x => none'", f.display()),
    );
    assert!(stderr(&o).contains("quote is not closed"), "{}", stderr(&o));
    let o = bin()
        .args(["exec", "--rules", "/nonexistent/x.rules", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    common::assert_one_line_error(&o, "/nonexistent/x.rules: No such file");
}

#[test]
fn print_rules_shows_the_presets_with_their_sources() {
    for db in ["mariadb", "postgres", "rocksdb"] {
        let o = bin()
            .args(["exec", "--marks-for", db, "--print-rules"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = common::stdout(&o);
        assert!(text.starts_with(&format!("# --marks-for {db}\n")), "{text}");
        assert!(text.contains("https://"), "{text}");
        // What it prints is a rules file exec reads back.
        let dir = tempfile::tempdir().unwrap();
        let f = common::write(dir.path(), "p.rules", &text);
        let o = bin()
            .args(["exec", "--rules", &f, "--print-rules"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = bin()
        .args(["exec", "--marks-for", "postgres", "--print-rules"])
        .output()
        .unwrap();
    assert!(common::stdout(&o).contains("title=\"postgres: *checkpointer*\" => none"));
}

//! `cinterrupts jobs --check`: one line per file, the count, and exit 1 when
//! any is refused (how fio's examples/ are measured, issue 13 item 1).

mod common;

use common::*;

#[test]
fn check_says_for_each_file_whether_it_parses_and_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(
        dir.path(),
        "good.fio",
        "[a]\nioengine=null\nrw=randread\nsize=1m\n",
    );
    let walls = write(
        dir.path(),
        "walls.fio",
        "[a]\nsize=1m\n[b]\nstonewall\nbssplit=4k/50:64k/50\nsize=1m\n",
    );
    let bad = write(dir.path(), "bad.fio", "[a]\nzonemode=zbd\nsize=1m\n");
    let engine = write(
        dir.path(),
        "engine.fio",
        "[a]\nhttp_host=${NOWHERE}\nioengine=http\n",
    );
    let waiter = write(dir.path(), "waiter.fio", "[a]\nwait_for=zzz\nsize=1m\n");
    let o = run(&["jobs", "--check", &good, &walls, &bad, &engine, &waiter]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert!(
        lines[0].starts_with("ok ") && lines[0].ends_with("good.fio: 1 job"),
        "{out}"
    );
    assert!(lines[1].ends_with("walls.fio: 2 jobs"), "{out}");
    assert!(
        lines[2].starts_with("refused ") && lines[2].contains("bad.fio:2: option 'zonemode'"),
        "{out}"
    );
    // The engine is the reason, not its own options (fio parses the engine
    // first).
    assert!(
        lines[3].contains("engine.fio:3: option 'ioengine': ioengine 'http'"),
        "{out}"
    );
    assert!(
        lines[4].contains("waiter.fio:1: job 'a': option 'wait_for'"),
        "{out}"
    );
    assert_eq!(lines[5], "2 of 5 files parse");
    // All good: exit 0.
    let o = run(&["jobs", "--check", &good, &walls]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).ends_with("2 of 2 files parse\n"));
}

//! Default marks per TOS Table 1, the barrier option, cint_flags overrides.

use jobs::{parse_str, IoKind, Job, Marks, RwfFlags};

fn job(opts: &str) -> Job {
    let text = format!("[j]\n{}\n", opts.replace(' ', "\n"));
    let f = parse_str(&text, "m.fio", &|_| None).unwrap_or_else(|e| panic!("{e}"));
    f.jobs[0].clone()
}

/// The marks of each request of a batch of `n`.
fn batch(j: &Job, kind: IoKind, n: usize) -> Vec<Marks> {
    (0..n).map(|i| j.marks(kind, i, n)).collect()
}

const DATA: [IoKind; 2] = [IoKind::Read, IoKind::Write];
const SYNCS: [IoKind; 2] = [IoKind::Fsync, IoKind::Fdatasync];
const ALL: [IoKind; 4] = [
    IoKind::Read,
    IoKind::Write,
    IoKind::Fsync,
    IoKind::Fdatasync,
];

#[test]
fn blocking_engines_mark_everything_urgent() {
    for e in ["sync", "psync", "vsync", "pvsync", "pvsync2"] {
        for direct in ["direct=0", "direct=1"] {
            let j = job(&format!("ioengine={e} {direct}"));
            for k in ALL {
                assert_eq!(j.marks(k, 0, 1), Marks::URGENT, "{e} {direct} {k:?}");
            }
        }
    }
}

#[test]
fn pvsync2_nowait_is_unmarked_but_its_fsync_stays_urgent() {
    let j = job("ioengine=pvsync2 nowait");
    for k in DATA {
        assert_eq!(j.marks(k, 0, 1), Marks::NONE);
    }
    for k in SYNCS {
        assert_eq!(j.marks(k, 0, 1), Marks::URGENT);
    }
}

#[test]
fn async_engines_mark_the_last_of_each_submit_batch_barrier() {
    for e in ["libaio", "io_uring"] {
        let j = job(&format!("ioengine={e} iodepth=16"));
        for k in DATA {
            let mut want = vec![Marks::NONE; 4];
            want[3] = Marks::BARRIER;
            assert_eq!(batch(&j, k, 4), want, "{e} {k:?}");
            assert_eq!(
                j.marks(k, 0, 1),
                Marks::BARRIER,
                "a lone request is its batch's last"
            );
        }
        for k in SYNCS {
            assert_eq!(batch(&j, k, 3), vec![Marks::URGENT; 3], "{e} {k:?}");
        }
        // nowait does not change io_submit's default
        let j = job(&format!("ioengine={e} nowait"));
        assert_eq!(
            batch(&j, IoKind::Read, 2),
            vec![Marks::NONE, Marks::BARRIER]
        );
    }
}

#[test]
fn barrier_option_matches_the_default_but_is_passed_explicitly() {
    let plain = job("ioengine=libaio iodepth=4 iodepth_batch_submit=4");
    let patched = job("ioengine=libaio iodepth=4 iodepth_batch_submit=4 barrier=1");
    for k in DATA {
        assert_eq!(batch(&plain, k, 4), batch(&patched, k, 4));
        // the patched fio passes flags; the plain one relies on the kernel
        assert_eq!(patched.rwf_flags(k, 3, 4), RwfFlags::BARRIER);
        assert_eq!(patched.rwf_flags(k, 0, 4), RwfFlags::UNMARKED);
        assert_eq!(plain.rwf_flags(k, 3, 4), RwfFlags::NONE);
    }
    assert_eq!(patched.marks(IoKind::Fsync, 0, 4), Marks::URGENT);
}

#[test]
fn cint_flags_override_every_engine_and_kind() {
    for e in ["psync", "pvsync2", "libaio", "io_uring"] {
        for (flags, want) in [
            ("urgent", Marks::URGENT),
            ("barrier", Marks::BARRIER),
            ("none", Marks::NONE),
        ] {
            let j = job(&format!("ioengine={e} cint_flags={flags}"));
            for k in ALL {
                assert_eq!(batch(&j, k, 3), vec![want; 3], "{e} {flags} {k:?}");
            }
        }
    }
    // and they win over the barrier option
    let j = job("ioengine=libaio iodepth=4 barrier=1 cint_flags=urgent");
    assert_eq!(batch(&j, IoKind::Read, 4), vec![Marks::URGENT; 4]);
    let j = job("ioengine=libaio cint_flags=default");
    assert_eq!(
        batch(&j, IoKind::Read, 2),
        vec![Marks::NONE, Marks::BARRIER]
    );
}

#[test]
fn explicitly_unmarked_differs_from_a_merge_of_both_bits() {
    // an application passing both flags says "not urgent" (TOS 4.1.1) ...
    assert_eq!(RwfFlags::UNMARKED.to_marks(), Some(Marks::NONE));
    // ... whereas a merged request holding both bits is Urgent (TOS 4.1.1)
    assert_eq!(Marks::URGENT.merge(Marks::BARRIER), Marks::URGENT);
    assert_eq!(RwfFlags::URGENT.to_marks(), Some(Marks::URGENT));
    assert_eq!(RwfFlags::BARRIER.to_marks(), Some(Marks::BARRIER));
    assert_eq!(RwfFlags::NONE.to_marks(), None);
}

#[test]
fn splits_inherit_and_merges_take_the_union() {
    for m in [Marks::NONE, Marks::URGENT, Marks::BARRIER] {
        assert_eq!(m.split(), m);
    }
    assert_eq!(Marks::NONE.merge(Marks::NONE), Marks::NONE);
    assert_eq!(Marks::NONE.merge(Marks::BARRIER), Marks::BARRIER);
    assert_eq!(Marks::URGENT.merge(Marks::NONE), Marks::URGENT);
    assert_eq!(Marks::BARRIER.merge(Marks::URGENT), Marks::URGENT);
    // a Barrier request split then merged back stays Barrier
    let b = job("ioengine=libaio").marks(IoKind::Write, 0, 1);
    assert_eq!(b.split().merge(b.split()), Marks::BARRIER);
}

/// `mark=` (ours): the marking engine's rules in a job file, after the
/// application's flags and before the kernel's defaults, [global]'s first.
#[test]
fn mark_rules_come_after_the_flags_and_before_the_defaults() {
    let text = "[global]\nmark=write => barrier\n[a]\nioengine=psync\nfilename=/d/x.dat\nmark=read file=*.dat => none\nmark=read => barrier\n";
    let f = parse_str(text, "m.fio", &|_| None).unwrap();
    let j = &f.jobs[0];
    assert_eq!(j.mark.len(), 3);
    // Table 1 would make both Urgent (a blocking pread/pwrite).
    assert_eq!(j.marks(IoKind::Read, 0, 1), Marks::NONE);
    assert_eq!(j.marks(IoKind::Write, 0, 1), Marks::BARRIER);
    assert_eq!(
        j.marks(IoKind::Fsync, 0, 1),
        Marks::URGENT,
        "no rule: Table 1"
    );
    // The application's flags win over every rule.
    let urgent = parse_str(&format!("{text}cint_flags=urgent\n"), "m.fio", &|_| None).unwrap();
    assert_eq!(urgent.jobs[0].marks(IoKind::Read, 0, 1), Marks::URGENT);
    // `=> default` stops the search at the kernel's defaults.
    let d = parse_str(
        "[a]\nmark=read => default\nmark=read => none\n",
        "m.fio",
        &|_| None,
    )
    .unwrap();
    assert_eq!(d.jobs[0].marks(IoKind::Read, 0, 1), Marks::URGENT);
    for (bad, want) in [
        ("mark=read => soon", "invalid mark 'soon'"),
        ("mark=title=*pg* => none", "a fio job has no 'title='"),
        ("mark=volume=sda => none", "a fio job has no 'volume='"),
    ] {
        let e = parse_str(&format!("[a]\n{bad}\n"), "m.fio", &|_| None).unwrap_err();
        let e = e.to_string();
        assert!(
            e.starts_with("m.fio:2: option 'mark'") && e.contains(want),
            "{e}"
        );
    }
}

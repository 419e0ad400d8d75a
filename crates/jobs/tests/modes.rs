//! fio's `rw` modes and I/O engines: what each one issues, and their names
//! as fio spells them.

use jobs::{Engine, RwMode};

const MODES: [RwMode; 6] = [
    RwMode::Read,
    RwMode::Write,
    RwMode::RandRead,
    RwMode::RandWrite,
    RwMode::ReadWrite,
    RwMode::RandRw,
];

#[test]
fn each_rw_mode_reads_writes_mixes_and_seeks_as_fio_does() {
    // (mode, reads, writes, mixed, random)
    let expected = [
        (RwMode::Read, true, false, false, false),
        (RwMode::Write, false, true, false, false),
        (RwMode::RandRead, true, false, false, true),
        (RwMode::RandWrite, false, true, false, true),
        (RwMode::ReadWrite, true, true, true, false),
        (RwMode::RandRw, true, true, true, true),
    ];
    for (mode, reads, writes, mixed, random) in expected {
        assert_eq!(mode.reads(), reads, "{mode} reads");
        assert_eq!(mode.writes(), writes, "{mode} writes");
        assert_eq!(mode.is_mixed(), mixed, "{mode} mixes");
        assert_eq!(mode.is_random(), random, "{mode} is random");
    }
}

#[test]
fn rw_modes_print_as_fio_spells_them_and_parse_back() {
    let names: Vec<String> = MODES.iter().map(|m| m.to_string()).collect();
    assert_eq!(
        names,
        ["read", "write", "randread", "randwrite", "rw", "randrw"]
    );
    for m in MODES {
        assert_eq!(RwMode::parse(&m.to_string()), Some(m));
    }
    assert_eq!(RwMode::parse("readwrite"), Some(RwMode::ReadWrite));
    assert_eq!(RwMode::parse("trim"), None, "no trims are modelled");
}

#[test]
fn engines_print_as_fio_spells_them_and_parse_back() {
    for name in Engine::NAMES.split(", ") {
        let e = Engine::parse(name).unwrap();
        assert_eq!(e.to_string(), name);
    }
}

#[test]
fn only_libaio_io_uring_and_null_are_asynchronous() {
    for name in Engine::NAMES.split(", ") {
        let e = Engine::parse(name).unwrap();
        let is_async = matches!(e, Engine::Libaio | Engine::IoUring | Engine::Null);
        assert_eq!(e.is_async(), is_async, "{name}");
        assert_eq!(e.is_sync(), !is_async, "{name}");
    }
}

#[test]
fn rwf_flags_pass_through_pvsync2_libaio_and_io_uring() {
    for name in Engine::NAMES.split(", ") {
        let e = Engine::parse(name).unwrap();
        let takes = matches!(name, "pvsync2" | "libaio" | "io_uring");
        assert_eq!(e.takes_rwf_flags(), takes, "{name}");
    }
}

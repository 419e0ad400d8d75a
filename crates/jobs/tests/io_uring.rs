//! fio 3.33's io_uring engine options (axboe/fio `fio-3.33`,
//! engines/io_uring.c `options[]`; `fio --enghelp=io_uring` on Debian's fio
//! 3.33 lists hipri, cmdprio_percentage, cmdprio_class, cmdprio,
//! cmdprio_bssplit, fixedbufs, registerfiles, sqthread_poll,
//! sqthread_poll_cpu, nonvectored, uncached, nowait, force_async, cmd_type).

use jobs::{lookup, parse_str, Disposition, Job, Uring};

fn parse(text: &str) -> Result<Vec<Job>, String> {
    parse_str(text, "u.fio", &|_| None)
        .map(|p| p.jobs)
        .map_err(|e| e.to_string())
}

#[test]
fn every_option_fio_lists_is_known() {
    for name in [
        "hipri",
        "cmdprio_percentage",
        "cmdprio_class",
        "cmdprio",
        "cmdprio_bssplit",
        "fixedbufs",
        "registerfiles",
        "sqthread_poll",
        "sqthread_poll_cpu",
        "nonvectored",
        "uncached",
        "nowait",
        "force_async",
        "cmd_type",
    ] {
        assert!(lookup(name).is_some(), "{name}");
    }
}

#[test]
fn defaults_are_fio_3_33s() {
    let j = parse("[j]\nioengine=io_uring\n").unwrap();
    // FIO_OPT_STR_SET options default off; nonvectored's .def is "-1".
    assert_eq!(j[0].uring, Uring::default());
    assert_eq!(j[0].uring.nonvectored, None);
    assert!(!j[0].hipri && !j[0].nowait);
}

#[test]
fn engine_options_become_job_fields() {
    let j = parse(
        "[j]\nioengine=io_uring\nsqthread_poll\nsqthread_poll_cpu=3\nregisterfiles=1\nfixedbufs\nnonvectored=0\n",
    )
    .unwrap();
    let u = j[0].uring;
    assert!(u.sqthread_poll && u.registerfiles && u.fixedbufs);
    assert_eq!(u.sqthread_poll_cpu, Some(3));
    assert_eq!(u.nonvectored, Some(false));
    let j = parse("[j]\nioengine=io_uring\nnonvectored=1\n").unwrap();
    assert_eq!(j[0].uring.nonvectored, Some(true));
    for name in ["sqthread_poll", "registerfiles", "fixedbufs", "nonvectored"] {
        assert_eq!(
            lookup(name).unwrap().disposition(),
            Disposition::Modelled,
            "{name}"
        );
    }
}

#[test]
fn other_engines_refuse_them_naming_the_line_and_option() {
    let e = parse("[global]\nbs=4k\n[j]\nioengine=libaio\nfixedbufs\n").unwrap_err();
    assert_eq!(
        e,
        "u.fio:3: job 'j': option 'fixedbufs': needs ioengine io_uring, not libaio"
    );
    let e = parse("[j]\nsqthread_poll=1\n").unwrap_err();
    assert_eq!(
        e,
        "u.fio:1: job 'j': option 'sqthread_poll': needs ioengine io_uring, not psync"
    );
}

#[test]
fn what_no_front_end_models_is_refused_with_its_line() {
    for (line, why) in [
        ("cmdprio_percentage=10", "I/O priorities are not modelled"),
        ("cmdprio_class=1", "I/O priorities are not modelled"),
        ("cmdprio=0", "I/O priorities are not modelled"),
        ("cmdprio_bssplit=64k/100", "I/O priorities are not modelled"),
        ("force_async=4", "IOSQE_ASYNC"),
        ("uncached=1", "uncached"),
    ] {
        let e = parse(&format!("[j]\nioengine=io_uring\n{line}\n")).unwrap_err();
        let name = line.split('=').next().unwrap();
        assert!(
            e.starts_with(&format!("u.fio:3: option '{name}'")) && e.contains(why),
            "{e}"
        );
    }
}

#[test]
fn cmd_type_takes_fios_one_value() {
    assert!(parse("[j]\nioengine=io_uring\ncmd_type=nvme\n").is_ok());
    assert!(parse("[j]\nioengine=io_uring\ncmd_type=scsi\n").is_err());
}

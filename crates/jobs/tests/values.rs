//! The edges of option values: `read,write[,trim]` lists take up to three
//! parts, percentages run 0..=100.

use jobs::{lookup, parse_str, Disposition, JobFile};

fn parse(text: &str) -> Result<JobFile, String> {
    parse_str(text, "t.fio", &|_| None).map_err(|e| e.to_string())
}

#[test]
fn block_sizes_take_read_write_and_a_checked_trim_part() {
    let f = parse("[j]\nbs=4k,8k,16k\n").unwrap();
    assert_eq!((f.jobs[0].bs_read, f.jobs[0].bs_write), (4096, 8192));
    let e = parse("[j]\nbs=4k,8k,16k,32k\n").unwrap_err();
    assert!(e.contains("too many values"), "{e}");
    let e = parse("[j]\nbs=4k,8k,xyz\n").unwrap_err();
    assert!(e.contains("xyz"), "the trim part is still checked: {e}");
}

#[test]
fn a_mix_percentage_runs_from_0_to_100() {
    for (text, read) in [
        ("rwmixread=100", 100),
        ("rwmixread=0", 0),
        ("rwmixwrite=100", 0),
        ("rwmixwrite=0", 100),
    ] {
        let f = parse(&format!("[j]\nrw=randrw\n{text}\n")).unwrap();
        assert_eq!(f.jobs[0].rwmixread, read, "{text}");
        assert_eq!(f.jobs[0].read_percent(), read, "{text}");
    }
    for text in ["rwmixread=101", "rwmixwrite=101"] {
        let e = parse(&format!("[j]\n{text}\n")).unwrap_err();
        assert!(e.contains("not a percentage"), "{e}");
    }
}

#[test]
fn an_option_prints_its_name_aliases_and_disposition_for_debugging() {
    let text = format!("{:?}", lookup("bs").unwrap());
    for part in ["\"bs\"", "\"blocksize\"", "Modelled"] {
        assert!(text.contains(part), "{text}");
    }
    let text = format!("{:?}", lookup("group_reporting").unwrap());
    assert!(
        text.contains(&format!("{:?}", Disposition::Ignored)),
        "{text}"
    );
}

#[test]
fn number_ios_of_zero_means_no_limit() {
    let ios = |v: &str| parse(&format!("[j]\nnumber_ios={v}\n")).unwrap().jobs[0].number_ios;
    assert_eq!(ios("0"), None);
    assert_eq!(ios("1"), Some(1));
    assert_eq!(ios("1k"), Some(1024));
}

#[test]
fn iodepth_low_of_zero_or_iodepth_or_more_means_iodepth() {
    let low = |v: &str| {
        parse(&format!(
            "[j]\nioengine=libaio\niodepth=8\niodepth_low={v}\n"
        ))
        .unwrap()
        .jobs[0]
            .iodepth_low
    };
    assert_eq!(low("0"), None);
    assert_eq!(low("1"), Some(1));
    assert_eq!(low("7"), Some(7));
    assert_eq!(low("8"), None, "iodepth itself is the default");
    assert_eq!(low("9"), None, "above iodepth means iodepth");
}

#[test]
fn sync_takes_fios_words_as_well_as_a_boolean() {
    let sync = |v: &str| parse(&format!("[j]\nsync={v}\n")).unwrap().jobs[0].sync;
    for (v, on) in [
        ("sync", true),
        ("dsync", true),
        ("none", false),
        ("1", true),
        ("0", false),
    ] {
        assert_eq!(sync(v), on, "sync={v}");
    }
    let e = parse("[j]\nsync=maybe\n").unwrap_err();
    assert!(e.contains("none, sync, dsync"), "{e}");
}

#[test]
fn a_file_holds_at_most_max_jobs_clones_in_all() {
    let max = jobs::MAX_JOBS;
    let f = parse(&format!("[a]\nnumjobs={}\n[b]\n", max - 1)).unwrap();
    assert_eq!(f.jobs.len(), max as usize, "exactly the limit");
    let e = parse(&format!("[a]\n[b]\nnumjobs={max}\n")).unwrap_err();
    assert!(
        e.contains(&format!("past fio's limit of {max} jobs")),
        "{e}"
    );
}

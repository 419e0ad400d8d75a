//! Default marks per kernel (issue 13 item 2): TOS Table 1 beside the
//! authors' microbenchmark kernel (cinterrupts-01-basis.patch).

use jobs::{parse_str, CommandLine, DefaultMarks, IoKind, Job, Marks};

fn job(text: &str) -> Job {
    parse_str(text, "k.fio", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs
        .remove(0)
}

/// The job under each kernel: `default_marks=` appended to its section.
fn under(text: &str, kernel: &str) -> Job {
    job(&format!("{text}default_marks={kernel}\n"))
}

/// Marks of a batch of `n` reads.
fn batch(j: &Job, n: usize) -> Vec<Marks> {
    (0..n).map(|i| j.marks(IoKind::Read, i, n)).collect()
}

const N: Marks = Marks::NONE;
const U: Marks = Marks::URGENT;
const B: Marks = Marks::BARRIER;

#[test]
fn table1_is_the_default() {
    let j = job("[a]\nrw=randread\n");
    assert_eq!(j.default_marks, DefaultMarks::Table1);
    assert_eq!(DefaultMarks::default(), DefaultMarks::Table1);
}

#[test]
fn psync_is_urgent_under_both_kernels() {
    for k in ["table1", "basis"] {
        let j = under("[a]\nrw=randread\nioengine=psync\n", k);
        assert_eq!(batch(&j, 1), [U], "{k}");
        assert_eq!(j.marks(IoKind::Write, 0, 1), U, "{k}");
    }
}

#[test]
fn pvsync2_with_nowait_is_unmarked_under_table1_and_urgent_under_basis() {
    // Table 1: Urgent unless RWF_NOWAIT. basis: do_iter_readv_writev sets
    // IOCB_URGENT after kiocb_set_rw_flags, whatever the flags.
    let text = "[a]\nrw=randread\nioengine=pvsync2\nnowait\n";
    assert_eq!(batch(&under(text, "table1"), 1), [N]);
    assert_eq!(batch(&under(text, "basis"), 1), [U]);
    let text = "[a]\nrw=randread\nioengine=pvsync2\n";
    assert_eq!(batch(&under(text, "table1"), 1), [U]);
    assert_eq!(batch(&under(text, "basis"), 1), [U]);
}

#[test]
fn libaio_batches_end_in_a_barrier_only_under_table1() {
    let text = "[a]\nrw=randread\nioengine=libaio\niodepth=4\niodepth_batch_submit=4\n";
    assert_eq!(batch(&under(text, "table1"), 4), [N, N, N, B]);
    assert_eq!(batch(&under(text, "basis"), 4), [N, N, N, N]);
    // One request per io_submit (Fig 10's async thread): Barrier on each
    // under Table 1, nothing under basis.
    assert_eq!(batch(&under(text, "table1"), 1), [B]);
    assert_eq!(batch(&under(text, "basis"), 1), [N]);
}

#[test]
fn fios_barrier_option_marks_the_last_iocb_under_both_kernels() {
    // Their fio-3.12-barrier.patch: IOCB_FLAG_BARRIER on iocbs[nr-1].
    let text = "[a]\nrw=randread\nioengine=libaio\niodepth=4\niodepth_batch_submit=4\nbarrier=1\n";
    for k in ["table1", "basis"] {
        assert_eq!(batch(&under(text, k), 4), [N, N, N, B], "{k}");
    }
}

#[test]
fn fsync_is_urgent_under_table1_and_unmarked_under_basis() {
    let text = "[a]\nrw=randwrite\nioengine=psync\nfsync=1\n";
    assert_eq!(under(text, "table1").marks(IoKind::Fsync, 0, 1), U);
    assert_eq!(under(text, "basis").marks(IoKind::Fsync, 0, 1), N);
    assert_eq!(under(text, "basis").marks(IoKind::Fdatasync, 0, 1), N);
}

#[test]
fn cint_flags_still_override_either_kernel() {
    let text =
        "[a]\nrw=randread\nioengine=libaio\niodepth=2\niodepth_batch_submit=2\ncint_flags=urgent\n";
    assert_eq!(batch(&under(text, "basis"), 2), [U, U]);
}

#[test]
fn a_bad_kernel_name_is_one_line_naming_the_option() {
    let e = parse_str("[a]\ndefault_marks=linux\n", "k.fio", &|_| None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "k.fio:2: option 'default_marks': invalid default_marks 'linux' (table1, basis)"
    );
}

#[test]
fn the_command_line_sets_it_and_the_file_wins_as_fio() {
    let mut cmd = CommandLine::default();
    cmd.push_arg("default_marks=basis");
    let text = "[a]\nrw=randread\n[b]\nrw=randread\ndefault_marks=table1\n";
    let f = jobs::parse_str_with(text, "k.fio", &|_| None, &cmd).unwrap();
    assert_eq!(f.jobs[0].default_marks, DefaultMarks::Basis);
    assert_eq!(f.jobs[1].default_marks, DefaultMarks::Table1);
    assert_eq!(jobs::default_marks_of(&f.jobs), "basis, table1");
    assert_eq!(jobs::default_marks_of(&f.jobs[..1]), "basis");
    assert_eq!(jobs::default_marks_of(&[]), "");
}

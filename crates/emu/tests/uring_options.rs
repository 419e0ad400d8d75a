//! fio's io_uring engine options under `run` (issue 25): what the
//! emulator cannot honour is refused in one line naming the job and the
//! option, before any device thread starts.

use emu::backend::BackendSpec;
use emu::EmuConfig;
use policy::{PolicySpec, MS};

#[test]
fn sqthread_poll_is_refused_naming_the_job_and_option() {
    let text = "[ring]\nrw=randread\nbs=4k\nsize=1m\nioengine=io_uring\nsqthread_poll\n";
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let cfg = EmuConfig {
        backend: Some(BackendSpec::parse("null:10us").unwrap()),
        policy: PolicySpec::named("default"),
        runtime: Some(10 * MS),
        ..EmuConfig::default()
    };
    let e = emu::run_audited(&jobs, &cfg).unwrap_err().to_string();
    assert!(
        e.contains("'ring'") && e.contains("option 'sqthread_poll'") && !e.contains('\n'),
        "{e}"
    );
}

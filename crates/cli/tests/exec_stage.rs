//! `cinterrupts exec --stage DIR` (issue 24, staging): the program's data
//! directory on a zram device with ext4 for the run, copied back after it,
//! and nothing left behind (no zram device, no mount) on any exit path:
//! a normal exit, a failing program, SIGTERM to exec, a refused start.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{assert_one_line_error, bin, output_within, stderr, turn, wait_within};
use serde_json::Value;

/// A DIR to stage with one file the program reads, owned by another user
/// with a mode and an xattr that must survive the round trip, one the
/// program removes and a sparse one.
fn data_dir(root: &Path) -> PathBuf {
    let dir = root.join("data");
    std::fs::create_dir(&dir).unwrap();
    let keep = dir.join("keep");
    std::fs::write(&keep, vec![0x11; 8192]).unwrap();
    std::os::unix::fs::chown(&keep, Some(1234), Some(4321)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&keep, std::fs::Permissions::from_mode(0o640)).unwrap();
    let path = std::ffi::CString::new(keep.to_str().unwrap()).unwrap();
    // SAFETY: NUL-terminated name and a 1-byte value.
    let r = unsafe {
        libc::setxattr(
            path.as_ptr(),
            c"user.cinterrupts".as_ptr(),
            b"1".as_ptr().cast(),
            1,
            0,
        )
    };
    assert_eq!(r, 0, "setxattr: {}", std::io::Error::last_os_error());
    std::fs::write(dir.join("gone"), b"removed by the program").unwrap();
    // A database's preallocated file: 1 GiB with no block allocated, which
    // must not fill the staging device or come back allocated.
    std::fs::File::create(dir.join("sparse"))
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    dir
}

/// `/dev/zramN` and its mount, as the start line names them.
fn staged_device(err: &str) -> (String, String) {
    let line = err
        .lines()
        .find(|l| l.starts_with("cinterrupts: exec: staging "))
        .unwrap_or_else(|| panic!("no staging line in: {err}"));
    let dev = line
        .split_whitespace()
        .find(|w| w.starts_with("/dev/zram"))
        .unwrap()
        .to_string();
    let mount = line
        .split_whitespace()
        .find(|w| w.starts_with("/run/cinterrupts/stage-zram"))
        .unwrap()
        .to_string();
    (dev, mount)
}

/// No zram device `dev`, nothing mounted at `mount` or over `dir`.
fn assert_cleaned_up(dev: &str, mount: &str, dir: &Path) {
    let name = dev.trim_start_matches("/dev/");
    assert!(
        !Path::new("/sys/block").join(name).exists(),
        "{dev} is still there"
    );
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let dir = dir.to_str().unwrap();
    for l in mounts.lines() {
        let target = l.split_whitespace().nth(4).unwrap();
        assert!(target != mount && target != dir, "still mounted: {l}");
        assert!(!l.contains(dev), "still mounted: {l}");
    }
    assert!(!Path::new(mount).exists(), "{mount} left");
}

/// Owner, mode and xattr of the file nobody touched, as before.
fn assert_kept(dir: &Path) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(dir.join("keep")).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (1234, 4321, 0o640));
    assert_eq!(std::fs::read(dir.join("keep")).unwrap(), vec![0x11; 8192]);
    let path = std::ffi::CString::new(dir.join("keep").to_str().unwrap()).unwrap();
    let mut v = [0u8; 8];
    // SAFETY: NUL-terminated name, a buffer of its length.
    let n = unsafe {
        libc::getxattr(
            path.as_ptr(),
            c"user.cinterrupts".as_ptr(),
            v.as_mut_ptr().cast(),
            v.len(),
        )
    };
    assert_eq!(n, 1, "xattr lost: {}", std::io::Error::last_os_error());
    let m = std::fs::metadata(dir.join("sparse")).unwrap();
    assert_eq!(m.len(), 1 << 30);
    assert!(
        m.blocks() * 512 < 1 << 20,
        "holes filled: {} blocks",
        m.blocks()
    );
}

/// `exec --stage DIR EXTRA --output-format json -o REPORT -- sh -c
/// SCRIPT sh DIR`.
fn staged(dir: &Path, report: &Path, extra: &[&str], script: &str) -> std::process::Command {
    common::require("rsync", "rsync");
    common::require("mkfs.ext4", "e2fsprogs");
    let mut c = bin();
    c.arg("exec")
        .arg("--stage")
        .arg(dir)
        .args(extra)
        .args(["--output-format", "json", "-o"])
        .arg(report)
        .args(["--", "sh", "-c", script, "sh"])
        .arg(dir);
    c
}

/// The program reads DIR's file with O_DIRECT, writes a new one with
/// O_DIRECT, appends to another and removes a third; after exec, DIR has
/// exactly that, what nobody touched keeps its owner, mode and xattr, and
/// the report says where the data lived and what a read cost there.
#[test]
fn a_staged_programs_writes_are_in_dir_after_and_nothing_is_left() {
    let _one = turn();
    let root = tempfile::tempdir().unwrap();
    let dir = data_dir(root.path());
    let report = root.path().join("r.json");
    let script = r#"set -e
        # the staged fs is mounted over DIR during the run
        grep -q "^[0-9]* [0-9]* [^ ]* [^ ]* $1 .* - ext4 /dev/zram" /proc/self/mountinfo
        dd if="$1/keep" of=/dev/null bs=4096 iflag=direct status=none
        dd if=/dev/zero of="$1/new" bs=4096 count=16 oflag=direct status=none
        echo appended >> "$1/keep.log"
        rm "$1/gone"
        mkdir "$1/sub" && echo deep > "$1/sub/f""#;
    let o = output_within(
        &mut staged(&dir, &report, &[], script),
        Duration::from_secs(60),
    );
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let (dev, mount) = staged_device(&err);
    assert_cleaned_up(&dev, &mount, &dir);
    assert_eq!(std::fs::read(dir.join("new")).unwrap(), vec![0; 16 * 4096]);
    assert_eq!(std::fs::read(dir.join("keep.log")).unwrap(), b"appended\n");
    assert_eq!(std::fs::read(dir.join("sub/f")).unwrap(), b"deep\n");
    assert!(!dir.join("gone").exists(), "the program removed it");
    assert!(!dir.join("lost+found").exists());
    assert_kept(&dir);
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let s = &v["cinterrupts"]["exec"]["staging"];
    assert_eq!(s["device"], dev.as_str(), "{s}");
    assert_eq!(s["mount"], mount.as_str(), "{s}");
    assert_eq!(s["fs"], "ext4", "{s}");
    assert_eq!(s["restored"], true, "{s}");
    assert!(s.get("error").is_none(), "{s}");
    // Our rule: twice the data plus 256 MiB.
    let data = s["data_bytes"].as_u64().unwrap();
    assert_eq!(
        s["size_bytes"].as_u64().unwrap(),
        (2 * data + (256 << 20)).next_multiple_of(4096)
    );
    // A 4 KiB O_DIRECT read on zram costs a few us here (2.0 us p50
    // measured 2026-11-27); this VM's disk 170 us. The bound holds with two
    // spinning processes beside the test: the median, and far from both.
    let p50 = s["read_4k_ns_p50"].as_u64().unwrap();
    assert!(p50 > 0 && p50 < 50_000, "{s}");
}

/// `--stage .` from inside DIR: the program starts on the staged copy, not
/// in the directory the bind hides, so its relative writes come back.
#[test]
fn staging_the_working_directory_keeps_relative_writes() {
    let _one = turn();
    let root = tempfile::tempdir().unwrap();
    let dir = data_dir(root.path());
    let report = root.path().join("r.json");
    let mut cmd = staged(Path::new("."), &report, &[], r#"echo here > rel"#);
    cmd.current_dir(dir.join("."));
    let o = output_within(&mut cmd, Duration::from_secs(60));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let (dev, mount) = staged_device(&err);
    assert_cleaned_up(&dev, &mount, &dir);
    assert_eq!(std::fs::read(dir.join("rel")).unwrap(), b"here\n");
    assert_kept(&dir);
}

/// A misaligned O_DIRECT write in the staged DIR is refused with EINVAL,
/// as on a disk (tmpfs would take it).
#[test]
fn a_misaligned_direct_write_in_the_staged_dir_is_einval() {
    let _one = turn();
    let root = tempfile::tempdir().unwrap();
    let dir = data_dir(root.path());
    let report = root.path().join("r.json");
    // 100 bytes with O_DIRECT: dd reports the kernel's EINVAL.
    let script = r#"dd if=/dev/zero of="$1/odd" bs=100 count=1 oflag=direct status=none"#;
    let o = output_within(
        &mut staged(&dir, &report, &[], script),
        Duration::from_secs(60),
    );
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("Invalid argument"), "{err}");
    let (dev, mount) = staged_device(&err);
    assert_cleaned_up(&dev, &mount, &dir);
    assert_kept(&dir);
}

/// A program that fails: its writes are still copied back, its exit
/// status passes through, nothing is left.
#[test]
fn a_failing_program_is_copied_back_and_cleaned_up() {
    let _one = turn();
    let root = tempfile::tempdir().unwrap();
    let dir = data_dir(root.path());
    let report = root.path().join("r.json");
    let script = r#"echo partial > "$1/half"; exit 3"#;
    let o = output_within(
        &mut staged(&dir, &report, &[], script),
        Duration::from_secs(60),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let (dev, mount) = staged_device(&err);
    assert_cleaned_up(&dev, &mount, &dir);
    assert_eq!(std::fs::read(dir.join("half")).unwrap(), b"partial\n");
    assert_kept(&dir);
}

/// A process still running in DIR when the program ends (not the
/// program's: exec waits for those, issue 38; here another process the
/// test starts in DIR while the program runs): DIR cannot be unmounted,
/// so nothing is copied or deleted; one error line names where the data
/// is and the commands that finish the job, exec fails, and those
/// commands do finish it.
#[test]
fn a_busy_dir_keeps_the_staged_copy_and_says_how_to_finish() {
    let _one = turn();
    let root = tempfile::tempdir().unwrap();
    let dir = data_dir(root.path());
    let report = root.path().join("r.json");
    let (ready, go) = (root.path().join("ready"), root.path().join("go"));
    let script = format!(
        r#"echo late > "$1/late"; touch {}; while [ ! -e {} ]; do sleep 0.02; done"#,
        ready.display(),
        go.display()
    );
    let mut cmd = staged(&dir, &report, &["--stage-size", "64m"], &script);
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut exec = cmd.spawn().unwrap();
    let start = std::time::Instant::now();
    while !ready.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "not staged");
        std::thread::sleep(Duration::from_millis(20));
    }
    // DIR (the staged copy, bound over it) held by a process of the test's.
    let mut holder = std::process::Command::new("sleep")
        .arg("60")
        .current_dir(&dir)
        .spawn()
        .unwrap();
    std::fs::write(&go, "").unwrap();
    let status = common::wait_within(&mut exec, Duration::from_secs(60), "exec");
    let _ = holder.kill();
    let _ = holder.wait();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut exec.stderr.take().unwrap(), &mut err).unwrap();
    let (dev, mount) = staged_device(&err);
    assert_eq!(status.code(), Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("cinterrupts: exec: error: staging: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&format!("kept on {dev} mounted at {mount}")),
        "{line}"
    );
    // Still there, untouched: the program's write is on the staged copy.
    assert_eq!(
        std::fs::read(Path::new(&mount).join("late")).unwrap(),
        b"late\n"
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let s = &v["cinterrupts"]["exec"]["staging"];
    assert_eq!(s["restored"], false, "{s}");
    assert_eq!(s["size_bytes"], 64 << 20, "{s}");
    // The line's own commands finish the job.
    std::thread::sleep(Duration::from_millis(200));
    let commands = line.split("run: ").nth(1).unwrap();
    let o = output_within(
        std::process::Command::new("sh").args(["-c", commands]),
        Duration::from_secs(30),
    );
    assert!(o.status.success(), "{commands}: {}", stderr(&o));
    assert_cleaned_up(&dev, &mount, &dir);
    assert_eq!(std::fs::read(dir.join("late")).unwrap(), b"late\n");
    assert_kept(&dir);
}

/// SIGTERM to exec: passed on to the program, which dies; exec copies the
/// data back and removes the device before it exits.
#[test]
fn sigterm_to_exec_copies_back_and_cleans_up() {
    let _one = turn();
    let root = tempfile::tempdir().unwrap();
    let dir = data_dir(root.path());
    let report = root.path().join("r.json");
    let script = r#"echo before > "$1/mark"; exec sleep 60"#;
    let mut cmd = staged(&dir, &report, &[], script);
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    // The whole line, not the file: the shell creates the file before
    // echo writes it, and a signal between the two leaves it empty (a
    // fresh-clone CI run saw `mark` read back as empty).
    while std::fs::read(dir.join("mark")).map_or(true, |b| b != b"before\n") {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the program never wrote"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: our child, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = wait_within(&mut child, Duration::from_secs(30), "exec after SIGTERM");
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM),
        "{err}"
    );
    let (dev, mount) = staged_device(&err);
    assert_cleaned_up(&dev, &mount, &dir);
    assert_eq!(std::fs::read(dir.join("mark")).unwrap(), b"before\n");
    assert_kept(&dir);
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["cinterrupts"]["exec"]["partial"], true);
    assert_eq!(v["cinterrupts"]["exec"]["staging"]["restored"], true);
}

/// SIGKILL to exec leaves the device and the mounts; the start line's own
/// commands recover the data and remove them.
#[test]
fn after_sigkill_the_start_lines_commands_recover() {
    let _one = turn();
    let root = tempfile::tempdir().unwrap();
    let dir = data_dir(root.path());
    let report = root.path().join("r.json");
    let pid = root.path().join("pid");
    let script = format!(
        r#"echo $$ > {}; echo before > "$1/mark"; exec sleep 60"#,
        pid.display()
    );
    let mut child = staged(&dir, &report, &[], &script)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    // The whole line, not the file: the shell creates the file before
    // echo writes it, and a signal between the two leaves it empty (a
    // fresh-clone CI run saw `mark` read back as empty).
    while std::fs::read(dir.join("mark")).map_or(true, |b| b != b"before\n") {
        assert!(start.elapsed() < Duration::from_secs(30), "never wrote");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    wait_within(&mut child, Duration::from_secs(10), "exec after SIGKILL");
    let sleeper: i32 = std::fs::read_to_string(&pid)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: the program exec left running; it writes nothing more.
    unsafe { libc::kill(sleeper, libc::SIGKILL) };
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let (dev, mount) = staged_device(&err);
    // Left as they were: the program's write is on the staged copy only.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(mounts.contains(&format!(" {mount} ")), "{mounts}");
    assert_eq!(
        std::fs::read(Path::new(&mount).join("mark")).unwrap(),
        b"before\n"
    );
    let line = err.lines().find(|l| l.contains("recover with: ")).unwrap();
    let commands = line.split("recover with: ").nth(1).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let o = output_within(
        std::process::Command::new("sh").args(["-c", commands]),
        Duration::from_secs(30),
    );
    assert!(o.status.success(), "{commands}: {}", stderr(&o));
    assert_cleaned_up(&dev, &mount, &dir);
    assert_eq!(std::fs::read(dir.join("mark")).unwrap(), b"before\n");
    assert_kept(&dir);
}

/// Refused before anything is made: not root (one line), not a directory
/// (one line, no zram device added).
#[test]
fn stage_refusals_are_one_line_and_leave_nothing() {
    let _one = turn();
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let zrams = || {
        std::fs::read_dir("/sys/block")
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("zram"))
            .count()
    };
    let before = zrams();
    let o = output_within(
        bin()
            .arg("exec")
            .arg("--stage")
            .arg(&file)
            .args(["--", "true"]),
        Duration::from_secs(30),
    );
    assert_one_line_error(&o, "not a directory");
    assert_eq!(zrams(), before);
    // Not root: nobody, running a copy it can reach (the build may sit
    // under a directory closed to it).
    use std::os::unix::process::CommandExt;
    let open = tempfile::Builder::new()
        .prefix("cinterrupts-stage.")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(
        open.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let o = output_within(
        std::process::Command::new(common::reachable_cinterrupts(open.path()))
            .arg("exec")
            .args(["--stage", "/tmp", "--", "true"])
            .uid(65534)
            .gid(65534),
        Duration::from_secs(30),
    );
    assert_one_line_error(&o, "--stage needs root");
    // --stage-size without --stage is a usage error.
    let o = output_within(
        bin().args(["exec", "--stage-size", "1g", "--", "true"]),
        Duration::from_secs(30),
    );
    assert!(!o.status.success());
}

//! The backends through their public entry point, `BackendSpec::open`: the
//! file backend on real files in a temporary folder, the null backend's
//! timing against a model.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::path::Path;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use emu::backend::{Backend, BackendSpec, Done, Io, ModelBackend, Opened};
use proptest::prelude::*;

const BLOCK: usize = 4096;

/// A block-aligned buffer, as O_DIRECT wants.
struct Buf {
    ptr: NonNull<u8>,
    len: usize,
}

impl Buf {
    fn new(len: usize) -> Buf {
        let layout = Layout::from_size_align(len, BLOCK).unwrap();
        // SAFETY: `len` is non-zero in every test.
        let ptr = unsafe { alloc_zeroed(layout) };
        Buf {
            ptr: NonNull::new(ptr).expect("out of memory"),
            len,
        }
    }

    fn filled(len: usize, seed: u8) -> Buf {
        let mut b = Buf::new(len);
        for (i, x) in b.bytes_mut().iter_mut().enumerate() {
            *x = seed.wrapping_add(i as u8) | 1;
        }
        b
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: allocated for `len` bytes, and no command is in flight on
        // it when a test looks (tests wait for its Done first).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` excludes other views.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    fn io(&self, token: u32, write: bool, offset: u64) -> Io {
        // SAFETY: aligned to 4096, valid for `len` bytes, and every test
        // waits for the command's Done before touching or freeing it.
        unsafe { Io::new(token, write, offset, self.ptr, self.len as u32) }
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, BLOCK).unwrap();
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr.as_ptr(), layout) }
    }
}

/// Polls until `n` commands are done; fails the test after 2 s.
fn wait(b: &mut dyn Backend, n: usize) -> Vec<Done> {
    let start = Instant::now();
    let mut out = Vec::new();
    while out.len() < n {
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{} of {n} done after 2 s",
            out.len()
        );
        b.poll(0, &mut out);
    }
    out
}

fn open(spec: &str, need: Option<u64>) -> Opened {
    BackendSpec::parse(spec)
        .unwrap()
        .open(need, 32)
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn file_spec(path: &Path, options: &str) -> String {
    format!("file:{}{options}", path.display())
}

/// Does every 4 KiB block hold some non-zero byte (written data, not a hole)?
fn every_block_written(bytes: &[u8]) -> bool {
    bytes.chunks(BLOCK).all(|b| b.iter().any(|&x| x != 0))
}

#[test]
fn layout_creates_the_file_with_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.img");
    let need = 3 * (1 << 20) + 8192;
    let opened = open(&file_spec(&path, ""), Some(need));
    assert_eq!(opened.size, need);
    let data = std::fs::read(&path).unwrap();
    assert_eq!(data.len() as u64, need);
    assert!(every_block_written(&data));
    // Each chunk is fresh data, not the first one repeated.
    assert_ne!(data[..BLOCK], data[1 << 20..(1 << 20) + BLOCK]);
    assert_eq!(
        opened.backend.describe(),
        format!("file:{} (io_uring, O_DIRECT, 3.0MiB)", path.display())
    );
}

#[test]
fn a_short_file_is_extended_and_keeps_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.img");
    std::fs::write(&path, vec![0xab; 8192]).unwrap();
    let opened = open(&file_spec(&path, ""), Some(65536));
    assert_eq!(opened.size, 65536);
    let data = std::fs::read(&path).unwrap();
    assert_eq!(data.len(), 65536);
    assert!(data[..8192].iter().all(|&x| x == 0xab));
    assert!(every_block_written(&data[8192..]));
}

#[test]
fn a_longer_file_is_used_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.img");
    std::fs::write(&path, vec![0xcd; 65536]).unwrap();
    assert_eq!(open(&file_spec(&path, ""), Some(4096)).size, 65536);
    assert_eq!(open(&file_spec(&path, ""), None).size, 65536);
    assert!(std::fs::read(&path).unwrap().iter().all(|&x| x == 0xcd));
}

#[test]
fn a_write_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rw.img");
    let mut opened = open(&file_spec(&path, ""), Some(1 << 20));
    let b = opened.backend.as_mut();
    let out = Buf::filled(BLOCK, 7);
    b.submit(0, out.io(1, true, 65536));
    assert_eq!(b.in_flight(), 1);
    assert_eq!(
        wait(b, 1),
        [Done {
            token: 1,
            result: 4096
        }]
    );
    let back = Buf::new(BLOCK);
    b.submit(0, back.io(2, false, 65536));
    assert_eq!(
        wait(b, 1),
        [Done {
            token: 2,
            result: 4096
        }]
    );
    assert_eq!(back.bytes(), out.bytes());
    assert_eq!(b.in_flight(), 0);
    let disk = std::fs::read(&path).unwrap();
    assert_eq!(&disk[65536..65536 + BLOCK], out.bytes());
}

#[test]
fn more_commands_than_the_ring_holds_all_complete_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.img");
    let spec = BackendSpec::parse(&file_spec(&path, "")).unwrap();
    let mut opened = spec.open(Some(1 << 20), 4).unwrap();
    let b = opened.backend.as_mut();
    let bufs: Vec<Buf> = (0..100).map(|_| Buf::new(BLOCK)).collect();
    for (t, buf) in bufs.iter().enumerate() {
        b.submit(0, buf.io(t as u32, false, (t % 256 * BLOCK) as u64));
    }
    assert_eq!(b.in_flight(), 100);
    let mut done = wait(b, 100);
    assert_eq!(b.in_flight(), 0);
    assert!(done.iter().all(|d| d.result == 4096), "{done:?}");
    done.sort_by_key(|d| d.token);
    assert!(done.iter().map(|d| d.token).eq(0..100));
}

#[test]
fn every_nth_command_fails_with_eio_without_reaching_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("err.img");
    let mut opened = open(&file_spec(&path, ",error_every=3"), Some(1 << 20));
    let b = opened.backend.as_mut();
    let bufs: Vec<Buf> = (0..9).map(|i| Buf::filled(BLOCK, i)).collect();
    for (i, buf) in bufs.iter().enumerate() {
        b.submit(0, buf.io(i as u32 + 1, true, (i * BLOCK) as u64));
    }
    let mut done = wait(b, 9);
    done.sort_by_key(|d| d.token);
    let results: Vec<i32> = done.iter().map(|d| d.result).collect();
    let eio = -libc::EIO;
    assert_eq!(results, [4096, 4096, eio, 4096, 4096, eio, 4096, 4096, eio]);
    let disk = std::fs::read(&path).unwrap();
    assert_eq!(&disk[..BLOCK], bufs[0].bytes());
    assert_ne!(&disk[2 * BLOCK..3 * BLOCK], bufs[2].bytes());
}

#[test]
fn every_nth_read_comes_back_with_a_flipped_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corrupt.img");
    let mut opened = open(&file_spec(&path, ",corrupt_every=2"), Some(1 << 20));
    let b = opened.backend.as_mut();
    let data = Buf::filled(BLOCK, 3);
    b.submit(0, data.io(0, true, 0));
    wait(b, 1);
    for n in 1..=4u32 {
        let back = Buf::new(BLOCK);
        b.submit(0, back.io(n, false, 0));
        assert_eq!(
            wait(b, 1),
            [Done {
                token: n,
                result: 4096
            }]
        );
        let diff: Vec<usize> = (0..BLOCK)
            .filter(|&i| back.bytes()[i] != data.bytes()[i])
            .collect();
        if n % 2 == 0 {
            assert_eq!(diff, [100], "read {n}");
            assert_eq!(back.bytes()[100], data.bytes()[100] ^ 0xff);
        } else {
            assert_eq!(diff, Vec::<usize>::new(), "read {n}");
        }
    }
    // Only what the host got is corrupted, not the file.
    assert_eq!(&std::fs::read(&path).unwrap()[..BLOCK], data.bytes());
}

#[test]
fn dropping_with_commands_in_flight_waits_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("drop.img");
    let mut opened = open(&file_spec(&path, ""), Some(1 << 20));
    let bufs: Vec<Buf> = (0..64).map(|_| Buf::new(BLOCK)).collect();
    for (t, buf) in bufs.iter().enumerate() {
        opened
            .backend
            .submit(0, buf.io(t as u32, false, (t * BLOCK) as u64));
    }
    let mut out = Vec::new();
    opened.backend.poll(0, &mut out);
    let start = Instant::now();
    drop(opened);
    assert!(start.elapsed() < Duration::from_secs(2));
    // The reads that made it to the kernel finished before the drop
    // returned; the buffers are freed only now.
    drop(bufs);
}

#[test]
fn file_errors_are_one_line_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.img");
    let empty = dir.path().join("empty.img");
    std::fs::write(&empty, b"").unwrap();
    let no_dir = dir.path().join("no/such/dir.img");
    for (path, need, cause) in [
        (&missing, None, "the file is missing and no job gives size="),
        (
            &missing,
            Some(0),
            "the file is missing and no job gives size=",
        ),
        (&empty, None, "the file is empty and no job gives size="),
        (&dir.path().to_path_buf(), Some(4096), "not a regular file"),
        (&no_dir, Some(4096), "No such file or directory"),
    ] {
        let spec = BackendSpec::parse(&file_spec(path, "")).unwrap();
        let e = spec.open(need, 8).err().expect("opened");
        assert!(e.starts_with(&format!("file:{}: ", path.display())), "{e}");
        assert!(e.contains(cause), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    assert!(!missing.exists());
}

#[test]
fn a_null_device_is_as_large_as_the_jobs_need() {
    assert_eq!(open("null:10us", Some(12345)).size, 12345);
    let opened = open("null:10us,depth=4", None);
    assert_eq!(opened.size, 1 << 40);
    assert_eq!(opened.backend.describe(), "null:10us,depth=4");
}

/// One step of a null-device run: submit a command or poll, `dt` after the
/// previous step.
#[derive(Clone, Debug)]
enum Step {
    Submit(u64),
    Poll(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..30u64).prop_map(Step::Submit),
        (0..60u64).prop_map(Step::Poll),
    ]
}

proptest! {
    /// Against the closed form of FIFO service with `depth` units: command
    /// i starts at max(its arrival, the finish of command i - depth).
    #[test]
    fn null_returns_each_command_once_exactly_when_due(
        latency in 0..50u64,
        depth in 1..5u32,
        steps in prop::collection::vec(step(), 0..200),
    ) {
        let mut b = ModelBackend::null(latency, depth, Default::default());
        let buf = Buf::new(BLOCK);
        let mut due: Vec<u64> = Vec::new();
        let mut returned: Vec<bool> = Vec::new();
        let mut now = 0;
        let mut out = Vec::new();
        let mut check = |b: &mut ModelBackend, now: u64, due: &[u64], returned: &mut Vec<bool>| {
            out.clear();
            b.poll(now, &mut out);
            let got: Vec<usize> = out.iter().map(|d| d.token as usize).collect();
            let want: Vec<usize> = (0..due.len())
                .filter(|&i| !returned[i] && due[i] <= now)
                .collect();
            for &t in &got {
                returned[t] = true;
            }
            (got, want)
        };
        for s in steps {
            match s {
                Step::Submit(dt) => {
                    now += dt;
                    let i = due.len();
                    let start = if i < depth as usize {
                        now
                    } else {
                        now.max(due[i - depth as usize])
                    };
                    due.push(start + latency);
                    returned.push(false);
                    b.submit(now, buf.io(i as u32, false, 0));
                }
                Step::Poll(dt) => {
                    now += dt;
                    let (got, want) = check(&mut b, now, &due, &mut returned);
                    prop_assert_eq!(got, want, "poll at {}", now);
                }
            }
            prop_assert_eq!(b.in_flight(), returned.iter().filter(|&&r| !r).count());
        }
        let (got, want) = check(&mut b, u64::MAX, &due, &mut returned);
        prop_assert_eq!(got, want);
        prop_assert!(returned.iter().all(|&r| r));
        prop_assert_eq!(b.in_flight(), 0);
    }
}

/// The CPUs this thread may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, and the kernel
    // writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Runs this thread on `cpus` only.
fn pin(cpus: &[usize]) {
    // SAFETY: as in `allowed_cpus`; the set only names CPUs below its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
            0
        );
    }
}

/// With COOP_TASKRUN a completion is not pushed to the polling thread: if
/// `poll` missed the TASKRUN flag, a thread on another CPU than the device
/// interrupt would see it at its next kernel entry only, a timer tick (4 ms
/// at HZ=250) against ~50 us for the read on the interrupt's CPU. Compared
/// across CPUs, so that a slow disk does not fail the test.
#[test]
fn completions_do_not_wait_for_a_timer_tick() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tick.img");
    let mut opened = open(&file_spec(&path, ""), Some(1 << 20));
    let b = opened.backend.as_mut();
    let buf = Buf::new(BLOCK);
    let cpus = allowed_cpus();
    let medians: Vec<Duration> = cpus
        .iter()
        .take(4)
        .map(|&cpu| {
            pin(&[cpu]);
            let mut took: Vec<Duration> = (0..15)
                .map(|t| {
                    let start = Instant::now();
                    b.submit(0, buf.io(t, false, 0));
                    wait(b, 1);
                    start.elapsed()
                })
                .collect();
            took.sort();
            took[7]
        })
        .collect();
    pin(&cpus);
    let best = *medians.iter().min().unwrap();
    let worst = *medians.iter().max().unwrap();
    assert!(
        worst <= best * 10 + Duration::from_micros(500),
        "median QD1 read per CPU: {medians:?}"
    );
}

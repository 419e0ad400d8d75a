//! Inline io_uring system calls, routed: liburing 2.3 makes its system
//! calls with its own `syscall` instructions (its nolibc stubs), and fio
//! 3.33 makes `io_uring_enter` so too (`__do_syscall6`), so neither passes
//! through glibc's `syscall()` where the library sees the others. A
//! seccomp filter the library installs at load turns those calls into
//! SIGSYS (SECCOMP_RET_TRAP, man 2 seccomp) and the library's handler
//! answers them in place: it reads the call from the saved registers,
//! answers it as `syscall()` would, and writes the result into the saved
//! RAX, so execution resumes after the `syscall` instruction with it.
//!
//! The filter traps only calls made from the code of this image's own
//! objects (the program if position-independent, and its libraries other
//! than glibc, the dynamic linker and this library), found with
//! `dl_iterate_phdr`. The filter outlives an `execve`: a later image
//! without the library whose io_uring call happened to sit at one of
//! these addresses would be killed by the SIGSYS. Position-independent
//! images load at random addresses, so that needs an io_uring call inside
//! one of a few megabytes out of a 47-bit space; a program not
//! position-independent (fixed addresses, the same in every image) is not
//! trapped, and its inline io_uring calls stay named, not routed.
//!
//! `close` is trapped from liburing's code and the program's own image
//! only (`io_uring_queue_exit` closes the ring inline, and liburing may
//! be linked statically), so that the library sees its rings close.

use std::ffi::{c_int, c_long, c_void, CStr};

use crate::route;

/// The filter's SECCOMP_RET_DATA: our traps (si_errno says it).
const DATA: u32 = 0xc1;
const SYS_SECCOMP: c_int = 1;
/// `struct seccomp_data` offsets: nr, arch, instruction_pointer.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const DATA_IP_LO: u32 = 8;
const DATA_IP_HI: u32 = 12;
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;

/// An executable range [start, end) of one object.
#[derive(Clone, Copy, Debug)]
struct Range {
    start: u64,
    end: u64,
    liburing: bool,
}

/// The objects whose code never makes io_uring calls of the program's.
fn skipped(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    base.starts_with("ld-linux")
        || base.starts_with("libc.so")
        || base.starts_with("libcinterrupts_preload")
        || base.starts_with("linux-vdso")
}

/// What `dl_iterate_phdr`'s walk collects.
struct Walk {
    /// The next object is the first, the program itself.
    first: bool,
    out: Vec<Range>,
}

unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
    // SAFETY: the loader's record of one object, valid during the call;
    // `data` is our Walk.
    let (info, w) = unsafe { (&*info, &mut *(data as *mut Walk)) };
    let main = std::mem::replace(&mut w.first, false);
    let name = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated name.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    if main && info.dlpi_addr == 0 {
        // Not position-independent: see the module's comment.
        return 0;
    }
    if !main && (name.is_empty() || skipped(&name)) {
        return 0;
    }
    // A program linked with liburing statically (liburing's own test
    // programs link test/../src/liburing.a) has
    // liburing's inline `close` of the ring in its own image: its closes
    // are watched too, or the library never sees the ring close (its
    // teardown then never came: liburing 2.3 test/ring-leak.c hung).
    let liburing = main || name.contains("liburing");
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: dlpi_phnum headers at dlpi_phdr.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_X != 0 {
            let start = info.dlpi_addr + ph.p_vaddr;
            w.out.push(Range {
                start,
                end: start + ph.p_memsz,
                liburing,
            });
        }
    }
    0
}

fn ranges() -> Vec<Range> {
    let mut w = Walk {
        first: true,
        out: Vec::new(),
    };
    // SAFETY: a callback that only reads the records.
    unsafe { libc::dl_iterate_phdr(Some(each), &mut w as *mut Walk as *mut c_void) };
    let v = w.out;
    // Split where a range crosses a 4 GiB line (BPF compares 32 bits).
    let mut out = Vec::new();
    for r in v {
        let mut s = r.start;
        while s < r.end {
            let line = (s | 0xffff_ffff) + 1;
            let e = r.end.min(line);
            out.push(Range {
                start: s,
                end: e,
                liburing: r.liburing,
            });
            s = e;
        }
    }
    out
}

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | code | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

/// The checks that trap a call made from one of `ranges`, then ALLOW.
fn range_checks(ranges: &[Range]) -> Vec<libc::sock_filter> {
    let ld = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let ret = libc::BPF_RET | libc::BPF_K;
    let mut p = Vec::new();
    for r in ranges {
        let last = r.end - 1;
        p.extend([
            stmt(ld, DATA_IP_HI),
            jump(libc::BPF_JEQ, (r.start >> 32) as u32, 0, 4),
            stmt(ld, DATA_IP_LO),
            jump(libc::BPF_JGE, r.start as u32, 0, 2),
            jump(libc::BPF_JGT, last as u32, 1, 0),
            stmt(ret, libc::SECCOMP_RET_TRAP | DATA),
        ]);
    }
    p.push(stmt(ret, libc::SECCOMP_RET_ALLOW));
    p
}

/// The filter: io_uring_setup, _enter and _register from any of `ranges`,
/// and close from liburing's, trap; everything else is allowed.
fn program(ranges: &[Range]) -> Vec<libc::sock_filter> {
    let ld = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let ret = libc::BPF_RET | libc::BPF_K;
    let lib: Vec<Range> = ranges.iter().copied().filter(|r| r.liburing).collect();
    let lib_checks = range_checks(&lib);
    let all_checks = range_checks(ranges);
    let to_all = lib_checks.len() as u8;
    let mut p = vec![
        stmt(ld, DATA_ARCH),
        jump(libc::BPF_JEQ, AUDIT_ARCH_X86_64, 1, 0),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
        stmt(ld, DATA_NR),
        // close: to liburing's checks (just past the ALLOW below).
        jump(libc::BPF_JEQ, libc::SYS_close as u32, 4, 0),
        jump(
            libc::BPF_JEQ,
            libc::SYS_io_uring_setup as u32,
            3 + to_all,
            0,
        ),
        jump(
            libc::BPF_JEQ,
            libc::SYS_io_uring_enter as u32,
            2 + to_all,
            0,
        ),
        jump(
            libc::BPF_JEQ,
            libc::SYS_io_uring_register as u32,
            1 + to_all,
            0,
        ),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
    ];
    p.extend(lib_checks);
    p.extend(all_checks);
    p
}

/// Answers one trapped call: `syscall()`'s answer (a negative errno).
fn answer(nr: c_long, a: [u64; 6]) -> i64 {
    if nr == libc::SYS_close {
        super::closing(a[0] as c_int);
        crate::fd::closing(a[0] as c_int);
    } else if let Some(r) = super::dispatch(nr, a) {
        return r;
    }
    // Not a routed ring's: the kernel's own call, from the library's code.
    // SAFETY: the program's call, passed on as it made it.
    let r = unsafe { libc::syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) };
    if r < 0 {
        -i64::from(route::errno())
    } else {
        r
    }
}

extern "C" fn on_sigsys(_: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel's siginfo for SIGSYS: si_errno at 4, si_code at
    // 8, and `_sigsys { _call_addr, _syscall, _arch }` from 16.
    let (errno_field, code, nr) = unsafe {
        let b = info as *const u8;
        (
            *(b.add(4) as *const c_int),
            *(b.add(8) as *const c_int),
            *(b.add(24) as *const c_int),
        )
    };
    // SAFETY: the interrupted context the kernel saved, ours to change.
    let g = unsafe { &mut (*(ctx as *mut libc::ucontext_t)).uc_mcontext.gregs };
    if code != SYS_SECCOMP || errno_field != DATA as c_int {
        g[libc::REG_RAX as usize] = -i64::from(libc::ENOSYS);
        return;
    }
    let saved = route::errno();
    let a = [
        g[libc::REG_RDI as usize] as u64,
        g[libc::REG_RSI as usize] as u64,
        g[libc::REG_RDX as usize] as u64,
        g[libc::REG_R10 as usize] as u64,
        g[libc::REG_R8 as usize] as u64,
        g[libc::REG_R9 as usize] as u64,
    ];
    g[libc::REG_RAX as usize] = answer(c_long::from(nr), a);
    route::set_errno(saved);
}

/// Installs the handler and the filter (once, at load); why not, if not.
pub(crate) fn install() -> Result<(), String> {
    let ranges = ranges();
    if ranges.is_empty() {
        return Ok(());
    }
    let prog = program(&ranges);
    if prog.len() > 4096 {
        return Err(format!(
            "{} ranges of code are too many to watch",
            ranges.len()
        ));
    }
    // SAFETY: a handler of ours for SIGSYS, with its siginfo.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction =
            on_sigsys as extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(libc::SIGSYS, &sa, std::ptr::null_mut()) != 0 {
            return Err("cannot install the SIGSYS handler".into());
        }
    }
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    const SECCOMP_SET_MODE_FILTER: c_long = 1;
    const SECCOMP_FILTER_FLAG_TSYNC: c_long = 1;
    // SAFETY: a filter program that lives through the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_TSYNC,
            &fprog as *const libc::sock_fprog,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!(
            "seccomp: {e} (no_new_privs unset and no CAP_SYS_ADMIN)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the filter on one call, as the kernel's BPF interpreter would
    /// for the instructions used here.
    fn verdict(p: &[libc::sock_filter], nr: u32, ip: u64) -> u32 {
        let data = |k: u32| match k {
            DATA_NR => nr,
            DATA_ARCH => AUDIT_ARCH_X86_64,
            DATA_IP_LO => ip as u32,
            DATA_IP_HI => (ip >> 32) as u32,
            _ => unreachable!(),
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = p[pc];
            let code = u32::from(i.code);
            if code == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS {
                acc = data(i.k);
                pc += 1;
            } else if code == libc::BPF_RET | libc::BPF_K {
                return i.k;
            } else {
                let taken = match code & 0xf0 {
                    x if x == libc::BPF_JEQ => acc == i.k,
                    x if x == libc::BPF_JGE => acc >= i.k,
                    x if x == libc::BPF_JGT => acc > i.k,
                    _ => unreachable!(),
                };
                pc += 1 + usize::from(if taken { i.jt } else { i.jf });
            }
        }
    }

    #[test]
    fn traps_io_uring_calls_from_the_ranges_only_and_close_from_liburing_only() {
        let ranges = [
            Range {
                start: 0x5555_0000_1000,
                end: 0x5555_0000_9000,
                liburing: false,
            },
            Range {
                start: 0x7f00_1000_0000,
                end: 0x7f00_1000_4000,
                liburing: true,
            },
        ];
        let p = program(&ranges);
        let trap = libc::SECCOMP_RET_TRAP | DATA;
        let allow = libc::SECCOMP_RET_ALLOW;
        let enter = libc::SYS_io_uring_enter as u32;
        let close = libc::SYS_close as u32;
        for (nr, ip, want) in [
            (enter, 0x5555_0000_1000, trap),
            (enter, 0x5555_0000_8fff, trap),
            (enter, 0x5555_0000_9000, allow),
            (enter, 0x5555_0000_0fff, allow),
            (enter, 0x5556_0000_2000, allow),
            (enter, 0x7f00_1000_2000, trap),
            (libc::SYS_io_uring_setup as u32, 0x7f00_1000_0000, trap),
            (libc::SYS_io_uring_register as u32, 0x5555_0000_2000, trap),
            (close, 0x7f00_1000_2000, trap),
            (close, 0x5555_0000_2000, allow),
            (libc::SYS_read as u32, 0x7f00_1000_2000, allow),
        ] {
            assert_eq!(verdict(&p, nr, ip), want, "nr {nr} ip {ip:#x}");
        }
    }

    #[test]
    fn this_process_has_code_to_watch() {
        // The test binary is position-independent: its own text is found.
        assert!(!ranges().is_empty());
    }
}

//! Starting the program: found on the PATH as `execvp` finds it, checked
//! for a dynamic linker (a statically linked program never loads the
//! preload library: said before it runs), and executed by our own
//! `execve` in the forked child, after the child has installed the seccomp
//! filter (`watch`) and made the region's and the counts directory's
//! descriptors inheritable (issue 24 items 2 and 3).
//!
//! Our own `execve`, not std's `execvp`: with a `pre_exec` hook std forks
//! and calls glibc's `execvp`, which runs a file that is not a program
//! through /bin/sh instead of refusing it (ENOEXEC).

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `program` as `execvp` finds it: a name with a slash as it is, else the
/// first executable regular file of that name in `$PATH` (glibc's default
/// "/bin:/usr/bin" without one). NotFound as the shell's 127;
/// PermissionDenied (a file found, none executable) as its 126.
pub fn resolve(program: &OsStr) -> io::Result<PathBuf> {
    if program.is_empty() {
        return Err(io::ErrorKind::NotFound.into());
    }
    if program.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/bin:/usr/bin"));
    let mut denied = false;
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let cand = dir.join(program);
        let Ok(meta) = std::fs::metadata(&cand) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let c =
            CString::new(cand.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: a NUL-terminated path.
        if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            return Ok(cand);
        }
        denied = true;
    }
    Err(if denied {
        io::ErrorKind::PermissionDenied.into()
    } else {
        io::ErrorKind::NotFound.into()
    })
}

/// An ELF file without a PT_INTERP program header: no dynamic linker runs,
/// so LD_PRELOAD is never read (a script, or a file we cannot read: not).
pub fn statically_linked(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    const PT_INTERP: u32 = 3;
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut h = [0u8; 64];
    if f.read_exact(&mut h).is_err() || &h[..4] != b"\x7fELF" || h[4] != 2 || h[5] != 1 {
        return false;
    }
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let phoff = u64::from_le_bytes(h[32..40].try_into().expect("8 bytes"));
    let phentsize = usize::from(u16_at(&h, 54));
    let phnum = usize::from(u16_at(&h, 56));
    if phentsize < 4 || phnum == 0 || phnum > 4096 {
        return false;
    }
    let mut ph = vec![0u8; phentsize * phnum];
    if f.seek(SeekFrom::Start(phoff)).is_err() || f.read_exact(&mut ph).is_err() {
        return false;
    }
    !ph.chunks(phentsize)
        .any(|e| u32::from_le_bytes(e[..4].try_into().expect("4 bytes")) == PT_INTERP)
}

/// What the child does between fork and execve, prepared before the fork
/// (nothing is allocated there).
pub struct Child {
    pub path: PathBuf,
    pub argv: Vec<OsString>,
    pub envp: Vec<(OsString, OsString)>,
    /// Descriptors of ours (close-on-exec here) the program inherits.
    pub inherit: Vec<RawFd>,
    /// The seccomp filter and where its listener goes.
    pub filter: Option<crate::watch::Install>,
}

struct Ready {
    path: CString,
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    inherit: Vec<RawFd>,
    filter: Option<crate::watch::Install>,
}

// SAFETY: the pointers point into `_strings`, owned alongside and never
// changed; the hook runs in the forked child only.
unsafe impl Send for Ready {}
unsafe impl Sync for Ready {}

fn cstr(b: Vec<u8>) -> io::Result<CString> {
    CString::new(b).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte"))
}

impl Child {
    /// Sets `cmd` to run as prepared (its own program, arguments and
    /// environment are replaced by ours at the execve).
    pub fn hook(self, cmd: &mut Command) -> io::Result<()> {
        let path = cstr(self.path.into_os_string().into_vec())?;
        let mut strings = Vec::new();
        for a in self.argv {
            strings.push(cstr(a.into_vec())?);
        }
        let nargs = strings.len();
        for (k, v) in self.envp {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend(v.into_vec());
            strings.push(cstr(kv)?);
        }
        let mut argv: Vec<_> = strings[..nargs].iter().map(|s| s.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut envp: Vec<_> = strings[nargs..].iter().map(|s| s.as_ptr()).collect();
        envp.push(std::ptr::null());
        let ready = Ready {
            path,
            _strings: strings,
            argv,
            envp,
            inherit: self.inherit,
            filter: self.filter,
        };
        // SAFETY: the hook makes only async-signal-safe calls (fcntl,
        // prctl, seccomp, sendmsg, close, execve) on memory prepared above.
        unsafe {
            cmd.pre_exec(move || {
                // The whole of it (Send, Sync), not its fields.
                let ready = &ready;
                for &fd in &ready.inherit {
                    libc::fcntl(fd, libc::F_SETFD, 0);
                }
                if let Some(f) = &ready.filter {
                    let fprog = libc::sock_fprog {
                        len: f.prog.len() as u16,
                        filter: f.prog.as_ptr() as *mut libc::sock_filter,
                    };
                    crate::watch::install_in_child(&fprog, f.sock, f.no_new_privs, f.helper);
                }
                libc::execve(
                    ready.path.as_ptr(),
                    ready.argv.as_ptr(),
                    ready.envp.as_ptr(),
                );
                Err(io::Error::last_os_error())
            })
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_programs_as_execvp_does_and_tells_static_ones() {
        let sh = resolve(OsStr::new("sh")).unwrap();
        assert!(sh.is_absolute(), "{sh:?}");
        assert!(!statically_linked(&sh), "{sh:?}");
        assert_eq!(
            resolve(OsStr::new("no-such-program-here"))
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
        assert!(!statically_linked(Path::new("/etc/passwd")));
    }
}

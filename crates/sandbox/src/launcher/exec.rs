//! The launcher's own exec of node, and the values that let seccomp allow exactly that exec.
//!
//! seccomp denies `execve` outright and allows `execveat` only when every one of these holds:
//! - the directory fd is `fd`: node opened `O_PATH|O_CLOEXEC` at a number the child can never
//!   hold (it is at least the child's `RLIMIT_NOFILE`, which the child cannot raise, and it is
//!   closed by the exec);
//! - the flags are exactly `AT_EMPTY_PATH`;
//! - the pathname and argv pointers are the addresses of two pages mapped at random addresses
//!   (about 46 + 43 bits of entropy) that the filter compares with. An absolute pathname makes
//!   the kernel ignore the directory fd, so the fd rule alone would let native code in the child
//!   run `execveat(fd, "/lib64/ld-linux-x86-64.so.2", …)`; the pointers close that. The child
//!   cannot read the filter (no ptrace, no `CAP_SYS_ADMIN`) and every wrong guess costs a
//!   syscall, so guessing both is out of reach of its CPU-time limit.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

use super::args::LauncherArgs;
use super::os_err;
use super::seccomp::ExecAllowance;

const PAGE: usize = 4096;

/// Everything the final `execveat` needs, built before seccomp (nothing allocates afterwards).
pub struct ExecGate {
    /// Node's `O_PATH` fd (number = the child's `RLIMIT_NOFILE`).
    pub fd: i32,
    /// An empty C string at a random address.
    pub pathname: *const libc::c_char,
    /// The NUL-terminated argv array, at a random address.
    pub argv: *const *const libc::c_char,
    envp: [*const libc::c_char; 1],
    _strings: Vec<CString>,
}

impl ExecGate {
    /// Opens node at fd number `args.nofile`. Must run before `RLIMIT_NOFILE` is lowered (the
    /// number is out of the child's reach only because it is not below that limit).
    pub fn open(args: &LauncherArgs) -> Result<Self, String> {
        let target = i32::try_from(args.nofile).map_err(|_| "--nofile too large")?;
        ensure_fd_fits(target)?;
        let path =
            CString::new(args.node.as_os_str().as_bytes()).map_err(|_| "node path contains NUL")?;
        // SAFETY: valid C string; the fds are ours and checked.
        let fd = unsafe {
            let opened = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if opened < 0 {
                return Err(os_err("open node"));
            }
            let moved = libc::dup3(opened, target, libc::O_CLOEXEC);
            libc::close(opened);
            if moved != target {
                return Err(os_err("dup3 node fd"));
            }
            moved
        };

        let mut strings = vec![path];
        for arg in &args.node_args {
            strings.push(CString::new(arg.as_bytes()).map_err(|_| "node argument contains NUL")?);
        }
        let pointer_bytes = (strings.len() + 1) * std::mem::size_of::<*const libc::c_char>();
        // Pathname: any byte of a fresh (zeroed) page is an empty string.
        let pathname_page = map_at_random_address(PAGE)?;
        let pathname = pathname_page
            .wrapping_add(random_u64()? as usize % PAGE)
            .cast::<libc::c_char>();
        // argv: at a random 8-byte slot of its first page.
        let argv_page = map_at_random_address(PAGE + pointer_bytes)?;
        let slot = (random_u64()? as usize % (PAGE / 8)) * 8;
        let argv = argv_page.wrapping_add(slot).cast::<*const libc::c_char>();
        for (i, s) in strings.iter().enumerate() {
            // SAFETY: `argv` has room for strings.len() + 1 pointers (mapped above).
            unsafe { argv.add(i).write(s.as_ptr()) };
        }
        // SAFETY: as above; the mapping is zeroed, this just states the terminator.
        unsafe { argv.add(strings.len()).write(std::ptr::null()) };
        Ok(ExecGate {
            fd,
            pathname,
            argv: argv.cast_const(),
            envp: [std::ptr::null()],
            _strings: strings,
        })
    }

    /// The one `execveat` seccomp lets through.
    pub fn allowance(&self) -> ExecAllowance {
        ExecAllowance {
            fd: self.fd,
            pathname: self.pathname as u64,
            argv: self.argv as u64,
        }
    }

    /// `execveat(fd, "", argv, {}, AT_EMPTY_PATH)`: returns only on failure.
    pub fn exec(&self) -> String {
        // SAFETY: valid fd, empty C string, NUL-terminated argv and envp that outlive the call.
        unsafe {
            libc::syscall(
                libc::SYS_execveat,
                self.fd,
                self.pathname,
                self.argv,
                self.envp.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        os_err("execveat node")
    }
}

/// `dup3` to `fd` needs a soft `RLIMIT_NOFILE` above it; raise the soft limit (up to the hard
/// one) if the gateway runs with a very low one. `set_rlimits` lowers both right after.
fn ensure_fd_fits(fd: i32) -> Result<(), String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid pointer to a local.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(os_err("getrlimit(NOFILE)"));
    }
    let needed = fd as libc::rlim_t + 1;
    if limit.rlim_cur >= needed {
        return Ok(());
    }
    if limit.rlim_max < needed {
        return Err(format!(
            "RLIMIT_NOFILE hard limit {} is below --nofile + 1",
            limit.rlim_max
        ));
    }
    limit.rlim_cur = needed;
    // SAFETY: valid pointer to a local.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(os_err("setrlimit(NOFILE)"));
    }
    Ok(())
}

fn random_u64() -> Result<u64, String> {
    let mut bytes = [0u8; 8];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: valid buffer and length.
        let n = unsafe {
            libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0)
        };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(os_err("getrandom"));
        }
        filled += n as usize;
    }
    Ok(u64::from_ne_bytes(bytes))
}

/// Maps `len` zeroed bytes at a page-aligned random address in [4 GiB, 64 TiB) and leaks the
/// mapping (the exec discards it). Retries when the address is taken.
fn map_at_random_address(len: usize) -> Result<*mut u8, String> {
    const LOW: u64 = 1 << 32;
    const HIGH: u64 = 1 << 46;
    for _ in 0..32 {
        let address = (LOW + random_u64()? % (HIGH - LOW)) & !(PAGE as u64 - 1);
        // SAFETY: an anonymous private mapping at a hint address; MAP_FIXED_NOREPLACE never
        // replaces an existing mapping (kernels without it treat the address as a hint, which
        // the check below catches).
        let mapped = unsafe {
            libc::mmap(
                address as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if mapped == libc::MAP_FAILED {
            continue;
        }
        if mapped as u64 == address {
            return Ok(mapped.cast());
        }
        // SAFETY: unmapping what we just mapped.
        unsafe { libc::munmap(mapped, len) };
    }
    Err("could not map the exec arguments at a random address".into())
}

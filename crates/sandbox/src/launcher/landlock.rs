//! Landlock (raw syscalls, no extra crate): the child may execute only node and its ELF
//! interpreter, may read only what node itself opens ([`read_grants`]: its binary, the loader
//! and the shared-library directory, the loader cache, the time zone, OpenSSL's config, its own
//! /proc directory, /proc/meminfo, /dev/null and /dev/urandom), may list no directory but its own
//! /proc one, may create/remove/rename/truncate/write-open nothing anywhere, may not bind or
//! connect TCP (ABI 4+),
//! and may not signal processes or reach abstract unix sockets outside its domain (ABI 6+).
//! Already-open fds (the bridge, /dev/null) are unaffected.

use std::ffi::CString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: i32 = 1;

const EXECUTE: u64 = 1 << 0;
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
const REMOVE_DIR: u64 = 1 << 4;
const REMOVE_FILE: u64 = 1 << 5;
const MAKE_CHAR: u64 = 1 << 6;
const MAKE_DIR: u64 = 1 << 7;
const MAKE_REG: u64 = 1 << 8;
const MAKE_SOCK: u64 = 1 << 9;
const MAKE_FIFO: u64 = 1 << 10;
const MAKE_BLOCK: u64 = 1 << 11;
const MAKE_SYM: u64 = 1 << 12;
const REFER: u64 = 1 << 13; // ABI 2
const TRUNCATE: u64 = 1 << 14; // ABI 3
const NET_BIND_TCP: u64 = 1 << 0; // ABI 4
const NET_CONNECT_TCP: u64 = 1 << 1;
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0; // ABI 6
const SCOPE_SIGNAL: u64 = 1 << 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The kernel's Landlock ABI version, or why it is unavailable.
pub fn abi_version() -> Result<i64, String> {
    // SAFETY: the documented version query (NULL attr, size 0).
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if abi < 1 {
        return Err(format!("landlock: {}", std::io::Error::last_os_error()));
    }
    Ok(abi)
}

/// What [`restrict`] applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub abi: i64,
    /// Read grants actually added (grants for paths missing on this host are skipped).
    pub read_rules: usize,
    /// Parts of the policy this kernel's ABI cannot express.
    pub unavailable: Vec<&'static str>,
}

/// One path-beneath grant; `required` ones fail the ruleset when they cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub path: PathBuf,
    pub access: u64,
    pub required: bool,
}

/// Everything node needs to read (found with `strace -f -e trace=%file` of Node 22, 24 and 26
/// running cells): nothing else of the file system is readable, world-readable or not.
pub fn read_grants(node: &Path) -> Vec<Grant> {
    let grant = |path: &str, access: u64| Grant {
        path: PathBuf::from(path),
        access,
        required: false,
    };
    let mut grants = vec![Grant {
        path: node.to_path_buf(),
        access: EXECUTE | READ_FILE,
        required: true,
    }];
    let mut library_dirs: Vec<PathBuf> = Vec::new();
    if let Some(interpreter) = elf_interpreter(node) {
        // The shared libraries sit next to the loader (glibc installs them together).
        if let Some(dir) = std::fs::canonicalize(&interpreter)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
        {
            library_dirs.push(dir);
        }
        if interpreter.to_string_lossy().contains("ld-musl") {
            // musl's default search path (Alpine: libstdc++ lives in /usr/lib).
            library_dirs.extend(["/lib", "/usr/local/lib", "/usr/lib"].map(PathBuf::from));
        }
        grants.push(Grant {
            path: interpreter,
            access: EXECUTE | READ_FILE,
            required: true,
        });
    }
    // glibc's default directories (Debian multiarch; Fedora and others lib64).
    let multiarch = format!("{}-linux-gnu", std::env::consts::ARCH);
    library_dirs.extend(
        [
            format!("/lib/{multiarch}"),
            format!("/usr/lib/{multiarch}"),
            "/lib64".into(),
            "/usr/lib64".into(),
        ]
        .map(PathBuf::from),
    );
    for dir in library_dirs {
        grants.push(Grant {
            path: dir,
            access: READ_FILE,
            required: false,
        });
    }
    grants.extend([
        grant("/etc/ld.so.cache", READ_FILE),
        grant("/etc/ld.so.preload", READ_FILE),
        grant("/etc/localtime", READ_FILE),
        // Official Node builds load OpenSSL's config at startup and abort when it is unreadable
        // (a missing one is fine).
        grant("/etc/ssl/openssl.cnf", READ_FILE),
        // Resolves to /proc/<pid>, which stays the child's across the exec (threads included).
        grant("/proc/self", READ_FILE | READ_DIR),
        grant("/proc/meminfo", READ_FILE),
        grant("/dev/null", READ_FILE),
        grant("/dev/urandom", READ_FILE),
    ]);
    grants
}

/// Restricts the calling thread (and what it execs). `no_new_privs` must already be set.
pub fn restrict(node: &Path) -> Result<Applied, String> {
    let abi = abi_version()?;
    let mut unavailable = Vec::new();
    let mut fs = EXECUTE
        | WRITE_FILE
        | READ_FILE
        | READ_DIR
        | REMOVE_DIR
        | REMOVE_FILE
        | MAKE_CHAR
        | MAKE_DIR
        | MAKE_REG
        | MAKE_SOCK
        | MAKE_FIFO
        | MAKE_BLOCK
        | MAKE_SYM;
    if abi >= 2 {
        fs |= REFER;
    } else {
        unavailable.push("refer (abi < 2)");
    }
    if abi >= 3 {
        fs |= TRUNCATE;
    } else {
        unavailable.push("truncate (abi < 3)");
    }
    if abi < 4 {
        unavailable.push("tcp (abi < 4)");
    }
    if abi < 6 {
        unavailable.push("signal and abstract-socket scoping (abi < 6)");
    }
    let attr = RulesetAttr {
        handled_access_fs: fs,
        handled_access_net: if abi >= 4 {
            NET_BIND_TCP | NET_CONNECT_TCP
        } else {
            0
        },
        scoped: if abi >= 6 {
            SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        } else {
            0
        },
    };
    // SAFETY: valid attr pointer and size; returns a new O_CLOEXEC fd.
    let ruleset = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if ruleset < 0 {
        return Err(format!(
            "landlock_create_ruleset: {}",
            std::io::Error::last_os_error()
        ));
    }
    let ruleset = ruleset as i32;
    let result = (|| {
        let mut read_rules = 0;
        for grant in read_grants(node) {
            if add_rule(ruleset, &grant)? {
                read_rules += 1;
            }
        }
        // SAFETY: plain syscall on our ruleset fd.
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) } != 0 {
            return Err(format!(
                "landlock_restrict_self: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Applied {
            abi,
            read_rules,
            unavailable,
        })
    })();
    // SAFETY: closing our own fd.
    unsafe { libc::close(ruleset) };
    result
}

/// Adds one grant; `Ok(false)` when an optional path does not exist here.
fn add_rule(ruleset: i32, grant: &Grant) -> Result<bool, String> {
    let file = &grant.path;
    let path = CString::new(file.as_os_str().as_bytes()).map_err(|_| "path contains NUL")?;
    // SAFETY: valid C string; O_PATH fd closed below. Follows symlinks: the rule is on the target.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        if !grant.required && err.raw_os_error() == Some(libc::ENOENT) {
            return Ok(false);
        }
        return Err(format!("landlock: open {}: {err}", file.display()));
    }
    // Directory-only rights on a file are rejected (EINVAL).
    // SAFETY: `stat` is plain C data; all-zero is a valid value.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid fd and out pointer.
    let is_dir = unsafe { libc::fstat(fd, &mut stat) } == 0
        && (stat.st_mode & libc::S_IFMT) == libc::S_IFDIR;
    let access = if is_dir {
        grant.access
    } else {
        grant.access & !READ_DIR
    };
    let rule = PathBeneathAttr {
        allowed_access: access,
        parent_fd: fd,
    };
    // SAFETY: valid rule pointer for RULE_PATH_BENEATH.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            RULE_PATH_BENEATH,
            &rule as *const PathBeneathAttr,
            0u32,
        )
    };
    let err = std::io::Error::last_os_error();
    // SAFETY: closing our own fd.
    unsafe { libc::close(fd) };
    if rc != 0 {
        return Err(format!("landlock_add_rule {}: {err}", file.display()));
    }
    Ok(true)
}

/// PT_INTERP of a 64-bit little-endian ELF (the dynamic loader the kernel opens for exec).
pub fn elf_interpreter(binary: &Path) -> Option<PathBuf> {
    let mut header = Vec::new();
    std::fs::File::open(binary)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut header)
        .ok()?;
    if header.len() < 64 || &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return None;
    }
    let u16_at = |o: usize| {
        header
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u64_at = |o: usize| {
        header
            .get(o..o + 8)
            .and_then(|b| b.try_into().ok())
            .map(|b| u64::from_le_bytes(b) as usize)
    };
    let phoff = u64_at(0x20)?;
    let phentsize = u16_at(0x36)?;
    let phnum = u16_at(0x38)?;
    for i in 0..phnum.min(64) {
        let ph = phoff.checked_add(i.checked_mul(phentsize)?)?;
        let p_type = header
            .get(ph..ph + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))?;
        if p_type == 3 {
            let offset = u64_at(ph + 8)?;
            let size = u64_at(ph + 32)?.min(4096);
            let bytes = header.get(offset..offset.checked_add(size)?)?;
            let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
            return Some(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes[..end])));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_interpreter_of_a_dynamic_binary() {
        // The test binary itself is a dynamic ELF on glibc hosts.
        let exe = std::env::current_exe().unwrap();
        if let Some(interp) = elf_interpreter(&exe) {
            assert!(interp.is_absolute());
        }
        assert_eq!(elf_interpreter(Path::new("/nonexistent")), None);
    }

    #[test]
    fn read_grants_are_limited_and_only_node_and_its_loader_execute() {
        let exe = std::env::current_exe().unwrap();
        let interpreter = elf_interpreter(&exe);
        let grants = read_grants(&exe);
        assert_eq!(
            grants[0],
            Grant {
                path: exe.clone(),
                access: EXECUTE | READ_FILE,
                required: true
            }
        );
        for grant in &grants {
            let path = grant.path.to_str().unwrap();
            assert!(
                !["/", "/etc", "/usr", "/proc", "/dev", "/home", "/root", "/tmp", "/var"]
                    .contains(&path),
                "{grant:?}"
            );
            if grant.access & EXECUTE != 0 {
                assert!(
                    grant.path == exe || Some(&grant.path) == interpreter.as_ref(),
                    "{grant:?}"
                );
            }
            if grant.access & READ_DIR != 0 {
                assert_eq!(
                    path, "/proc/self",
                    "only the child's own /proc directory is listable"
                );
            }
        }
    }
}

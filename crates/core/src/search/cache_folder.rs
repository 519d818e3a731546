//! The user's private cache folder, shared by the vector cache
//! ([`super::semantic`]) and the stored search index ([`super::stored`]).
//! A file there is trusted no more than the folder: the folder must belong to
//! this process's user and be writable by no one else; files are opened
//! relative to it, never through a symbolic link, without waiting (a FIFO),
//! and used only if they are regular files of this user. Both caches check
//! what they read with the installation's key (32 random bytes kept in the
//! folder, mode 0600), so a file written without it is not read.

use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The installation's key file.
const KEY_FILE: &str = "vectors.key";

/// `dir` (created, mode 0700, if missing), opened, if it is this user's and
/// not writable by group or others. Err: why not, ending with `off`.
pub(crate) fn open_private(dir: &Path, what: &str, off: &str) -> Result<File, String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("{what} folder {}: {e}", dir.display()))?;
    let folder = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(dir)
        .map_err(|e| format!("{what} folder {}: {e}", dir.display()))?;
    let meta = folder
        .metadata()
        .map_err(|e| format!("{what} folder {}: {e}", dir.display()))?;
    let uid = effective_uid();
    if meta.uid() != uid {
        return Err(format!(
            "{what} folder {} is owned by uid {}, not this process's uid {uid}: {off}",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{what} folder {} is writable by group or others (mode {:o}): {off}; make it 0700",
            dir.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(folder)
}

pub(crate) fn effective_uid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::geteuid() }
}

/// `openat(dir, name, flags, mode)` as a `File`.
pub(crate) fn open_at(
    dir: &File,
    name: &CString,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> std::io::Result<File> {
    // SAFETY: `name` is NUL-terminated and the folder fd is open; the returned
    // fd is owned by the File.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags,
            libc::c_uint::from(mode),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened (checked non-negative) and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// `name` in the folder, opened with `flags` (and `O_NOFOLLOW | O_NONBLOCK |
/// O_CLOEXEC`, mode 0600 when created) if it is a regular file of this user.
/// `Ok(None)`: it does not exist (and `flags` do not create it). Err: why it
/// is not used, naming it as `shown`.
pub(crate) fn open_regular(
    dir: &File,
    name: &CString,
    flags: libc::c_int,
    shown: &str,
) -> Result<Option<File>, String> {
    let flags = flags | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let file = match open_at(dir, name, flags, 0o600) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && flags & libc::O_CREAT == 0 => {
            return Ok(None)
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(format!("{shown} is a symbolic link: not used"))
        }
        // Opening a FIFO without a reader for writing, without waiting.
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            return Err(format!(
                "{shown} is a FIFO or a device, not a regular file: not used"
            ))
        }
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    let meta = file.metadata().map_err(|e| format!("{shown}: {e}"))?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "{shown} is {}, not a regular file: not used",
            tool_search_embed::file_kind(&meta.file_type())
        ));
    }
    if meta.uid() != effective_uid() {
        return Err(format!("{shown} is owned by uid {}: not used", meta.uid()));
    }
    Ok(Some(file))
}

/// A file's bytes, if it has at most `max` of them (read no further than that either).
pub(crate) fn read_bounded(file: &File, max: u64) -> Result<Vec<u8>, String> {
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if len > max {
        return Err(format!("{len} bytes, more than {max}"));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// `renameat` within the folder.
pub(crate) fn rename_at(dir: &File, from: &CString, to: &CString) -> std::io::Result<()> {
    // SAFETY: both names are NUL-terminated; the folder fd is open.
    let r = unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `unlinkat` within the folder (a missing file is not an error).
pub(crate) fn unlink_at(dir: &File, name: &CString) {
    // SAFETY: NUL-terminated name, open folder fd.
    unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
}

/// A name for a temporary file beside `name`, unique to this process and moment.
pub(crate) fn temp_name(name: &str) -> CString {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    CString::new(format!("{name}.{}.{nanos}.tmp", std::process::id())).unwrap_or_default()
}

/// The installation's key in `folder` (created once: 32 random bytes, mode
/// 0600, published with a link so a concurrent process never reads half of it).
/// Err: why not (`what` names the cache, ending with `off`).
pub(crate) fn installation_key(
    folder: &File,
    dir: &Path,
    what: &str,
    off: &str,
) -> Result<[u8; 32], String> {
    let name = CString::new(KEY_FILE).unwrap_or_default();
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let reason = |why: String| format!("{what} {}: {why}: {off}", dir.join(KEY_FILE).display());
    let file = match open_at(folder, &name, flags, 0) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            create_key(folder, &name).map_err(|e| reason(e.to_string()))?;
            open_at(folder, &name, flags, 0).map_err(|e| reason(e.to_string()))?
        }
        Err(e) => return Err(reason(e.to_string())),
    };
    let meta = file.metadata().map_err(|e| reason(e.to_string()))?;
    if !meta.file_type().is_file()
        || meta.uid() != effective_uid()
        || meta.mode() & 0o077 != 0
        || meta.len() != 32
    {
        return Err(reason(format!(
            "must be a regular 32-byte file of uid {} with mode 0600 (it is {}, uid {}, mode {:o}, {} bytes)",
            effective_uid(),
            tool_search_embed::file_kind(&meta.file_type()),
            meta.uid(),
            meta.mode() & 0o7777,
            meta.len()
        )));
    }
    let mut key = [0u8; 32];
    (&file)
        .read_exact(&mut key)
        .map_err(|e| reason(e.to_string()))?;
    Ok(key)
}

fn create_key(folder: &File, name: &CString) -> std::io::Result<()> {
    let mut key = [0u8; 32];
    let mut filled = 0;
    while filled < key.len() {
        // SAFETY: writes at most the remaining bytes of `key`.
        let n =
            unsafe { libc::getrandom(key[filled..].as_mut_ptr().cast(), key.len() - filled, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        filled += n as usize;
    }
    let temp = temp_name(KEY_FILE);
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let written = open_at(folder, &temp, flags, 0o600)
        .and_then(|mut file| file.write_all(&key).and_then(|_| file.sync_all()));
    // SAFETY: NUL-terminated names, open folder fd.
    let linked = written.and_then(|_| {
        let r = unsafe {
            libc::linkat(
                folder.as_raw_fd(),
                temp.as_ptr(),
                folder.as_raw_fd(),
                name.as_ptr(),
                0,
            )
        };
        let e = std::io::Error::last_os_error();
        // Another process published its key first: that one is used.
        if r == 0 || e.kind() == std::io::ErrorKind::AlreadyExists {
            Ok(())
        } else {
            Err(e)
        }
    });
    unlink_at(folder, &temp);
    linked
}

//! The on-disk vector cache: one append-only file per model and token limit,
//! fixed-size records `magic (8) | key (32) | scale (4) | values (DIM) | check (16)`.
//! A gateway restarting with the same tools reads its vectors back instead of
//! recomputing them. Several processes may share the file: each batch is
//! appended with one `O_APPEND` write, and a reader skips a damaged record (a
//! torn write) by looking for the next record's magic.
//!
//! The file is trusted no more than the folder it is in:
//! - the folder must be owned by this process's user and not writable by
//!   group or others (else the cache is off: memory only, with the reason);
//! - files are opened relative to the folder, never through a symbolic link,
//!   without waiting (a FIFO would block the embedding thread), and used only
//!   if they are regular files of this user;
//! - each record carries a keyed check (BLAKE3 keyed with `vectors.key`, 32
//!   random bytes kept beside the cache, mode 0600): a record appended by a
//!   writer without the key, or by another installation, is not read; a
//!   vector must have unit length, so no record can weigh more than a real one;
//! - a file damaged in more than [`MAX_DAMAGED`] places is moved aside in one
//!   pass (`.corrupt`) and the vectors are recomputed.

use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use tool_search_embed::DIM;

use super::qvec::{QVec, TOOL_TOKENS};

/// Starts every record: a reader finds the next record after damage by it.
const MAGIC: [u8; 8] = *b"OTSvec2\n";
const KEY: usize = 32;
const CHECK: usize = 16;
const BODY: usize = KEY + 4 + DIM;
const RECORD: usize = MAGIC.len() + BODY + CHECK;
/// The file stops growing here (~600k vectors); reads stop here too.
const MAX_FILE_BYTES: u64 = 256 << 20;
/// Damaged places (a record whose magic or check is wrong, then a search for
/// the next magic) tolerated in one file before it is moved aside.
pub const MAX_DAMAGED: usize = 64;
/// The per-installation key of the records' checks.
const KEY_FILE: &str = "vectors.key";
/// Squared length a stored vector may have (unit vectors, quantized).
const NORM_SQUARED: std::ops::RangeInclusive<f32> = 0.81..=1.21;

pub struct DiskCache {
    /// The folder, opened once: files are opened relative to it.
    dir: File,
    path: PathBuf,
    name: CString,
    key: [u8; 32],
}

/// What a read found, and why part or all of the file was not used.
pub struct ReadOutcome {
    pub found: HashMap<[u8; 32], QVec>,
    pub warning: Option<String>,
}

impl DiskCache {
    /// The cache file for `model_digest` in `dir` (created, mode 0700, if
    /// missing). Err: why the cache cannot be used (the caller ranks from
    /// vectors in memory only).
    pub fn open(dir: &Path, model_digest: &str) -> Result<DiskCache, String> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("vector cache folder {}: {e}", dir.display()))?;
        let folder = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(dir)
            .map_err(|e| format!("vector cache folder {}: {e}", dir.display()))?;
        let meta = folder
            .metadata()
            .map_err(|e| format!("vector cache folder {}: {e}", dir.display()))?;
        let uid = effective_uid();
        if meta.uid() != uid {
            return Err(format!(
                "vector cache folder {} is owned by uid {}, not this process's uid {uid}: the cache is off (vectors kept in memory only)",
                dir.display(),
                meta.uid()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "vector cache folder {} is writable by group or others (mode {:o}): the cache is off (vectors kept in memory only); make it 0700",
                dir.display(),
                meta.mode() & 0o7777
            ));
        }
        let name = format!(
            "minilm-{}-t{TOOL_TOKENS}.v2.vectors",
            &model_digest[..model_digest.len().min(16)]
        );
        let key = installation_key(&folder, dir)?;
        Ok(DiskCache {
            path: dir.join(&name),
            name: CString::new(name).map_err(|_| "vector cache file name".to_string())?,
            dir: folder,
            key,
        })
    }

    /// The cached vectors among `wanted` (a missing or unusable file: none).
    #[cfg(test)]
    pub fn read(&self, wanted: &HashSet<[u8; 32]>) -> HashMap<[u8; 32], QVec> {
        self.read_checked(wanted).found
    }

    /// [`DiskCache::read`], with the reason when the file was not (fully) used.
    pub fn read_checked(&self, wanted: &HashSet<[u8; 32]>) -> ReadOutcome {
        let mut found = HashMap::new();
        let file = match self.open_file(false) {
            Ok(Some(file)) => file,
            Ok(None) => {
                return ReadOutcome {
                    found,
                    warning: None,
                }
            }
            Err(e) => {
                return ReadOutcome {
                    found,
                    warning: Some(e),
                }
            }
        };
        let mut bytes = Vec::new();
        if let Err(e) = file.take(MAX_FILE_BYTES).read_to_end(&mut bytes) {
            return ReadOutcome {
                found,
                warning: Some(format!("vector cache {}: {e}", self.path.display())),
            };
        }
        // One pass: a damaged place costs one check and a scan to the next
        // magic; a file with many of them, or mostly garbage, is given up.
        let mut at = 0;
        let mut damaged = 0;
        let mut skipped = 0;
        while at + RECORD <= bytes.len() {
            if let Some((key, row)) = self.parse(&bytes[at..at + RECORD]) {
                if wanted.contains(&key) {
                    found.insert(key, row);
                }
                at += RECORD;
                continue;
            }
            damaged += 1;
            let next = find(&bytes[at + 1..], &MAGIC).map_or(bytes.len(), |next| at + 1 + next);
            skipped += next - at;
            if damaged > MAX_DAMAGED || skipped > MAX_DAMAGED * RECORD {
                found.clear();
                return ReadOutcome {
                    found,
                    warning: Some(self.move_aside()),
                };
            }
            at = next;
        }
        ReadOutcome {
            found,
            warning: None,
        }
    }

    /// A record's key and vector, if its magic, keyed check and length are right.
    fn parse(&self, record: &[u8]) -> Option<([u8; 32], QVec)> {
        let (magic, rest) = record.split_at(MAGIC.len());
        let (body, check) = rest.split_at(BODY);
        #[cfg(test)]
        CHECKS.with(|n| n.set(n.get() + 1));
        if magic != MAGIC || check_of(&self.key, body) != check {
            return None;
        }
        let mut key = [0u8; KEY];
        key.copy_from_slice(&body[..KEY]);
        let scale = f32::from_le_bytes(body[KEY..KEY + 4].try_into().ok()?);
        let mut values = [0i8; DIM];
        for (out, &b) in values.iter_mut().zip(&body[KEY + 4..]) {
            *out = b as i8;
        }
        let norm_squared = scale
            * scale
            * values
                .iter()
                .map(|&v| f32::from(v) * f32::from(v))
                .sum::<f32>();
        (scale.is_finite() && scale > 0.0 && NORM_SQUARED.contains(&norm_squared))
            .then_some((key, QVec { scale, values }))
    }

    /// Appends `rows` in one write. A full file is left as it is.
    pub fn append(&self, rows: &[([u8; 32], QVec)]) -> Result<(), String> {
        if rows.is_empty() {
            return Ok(());
        }
        let mut file = self
            .open_file(true)?
            .ok_or_else(|| format!("vector cache {}: not created", self.path.display()))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        if size + (rows.len() * RECORD) as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "vector cache {} is full ({MAX_FILE_BYTES} bytes)",
                self.path.display()
            ));
        }
        let mut buffer = Vec::with_capacity(rows.len() * RECORD);
        for (key, row) in rows {
            buffer.extend_from_slice(&MAGIC);
            let start = buffer.len();
            buffer.extend_from_slice(key);
            buffer.extend_from_slice(&row.scale.to_le_bytes());
            buffer.extend(row.values.iter().map(|&v| v as u8));
            let check = check_of(&self.key, &buffer[start..]);
            buffer.extend_from_slice(&check);
        }
        file.write_all(&buffer)
            .map_err(|e| format!("vector cache {}: {e}", self.path.display()))
    }

    /// The cache file, opened relative to the folder without following a
    /// link and without waiting, if it is a regular file of this user.
    /// `Ok(None)`: it does not exist (and `create` is false).
    fn open_file(&self, create: bool) -> Result<Option<File>, String> {
        let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
        let flags = if create {
            flags | libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT
        } else {
            flags | libc::O_RDONLY
        };
        let file = match open_at(&self.dir, &self.name, flags, 0o600) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(format!(
                    "vector cache {} is a symbolic link: not used",
                    self.path.display()
                ))
            }
            // Opening a FIFO without a reader for writing, without waiting.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                return Err(format!(
                    "vector cache {} is a FIFO or a device, not a regular file: not used",
                    self.path.display()
                ))
            }
            Err(e) => return Err(format!("vector cache {}: {e}", self.path.display())),
        };
        let meta = file
            .metadata()
            .map_err(|e| format!("vector cache {}: {e}", self.path.display()))?;
        if !meta.file_type().is_file() {
            return Err(format!(
                "vector cache {} is {}, not a regular file: not used",
                self.path.display(),
                tool_search_embed::file_kind(&meta.file_type())
            ));
        }
        if meta.uid() != effective_uid() {
            return Err(format!(
                "vector cache {} is owned by uid {}: not used",
                self.path.display(),
                meta.uid()
            ));
        }
        Ok(Some(file))
    }

    /// Moves a damaged file aside (later appends start a new one); the reason.
    fn move_aside(&self) -> String {
        let aside = CString::new([self.name.as_bytes(), b".corrupt"].concat()).unwrap_or_default();
        // SAFETY: both names are NUL-terminated; the folder fd is open.
        let moved = unsafe {
            libc::renameat(
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
                self.dir.as_raw_fd(),
                aside.as_ptr(),
            )
        } == 0;
        format!(
            "vector cache {} is damaged in more than {MAX_DAMAGED} places (or was written with another key): {}; its vectors are recomputed",
            self.path.display(),
            if moved { "moved aside to .corrupt" } else { "not used" }
        )
    }
}

#[cfg(test)]
thread_local! {
    /// Records checked by `parse`: the work of a read, counted instead of timed.
    pub(super) static CHECKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn effective_uid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::geteuid() }
}

/// `openat(dir, name, flags, mode)` as a `File`.
fn open_at(
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

/// The installation's key in `folder` (created once: 32 random bytes, mode
/// 0600, published with a link so a concurrent process never reads half of it).
fn installation_key(folder: &File, dir: &Path) -> Result<[u8; 32], String> {
    let name = CString::new(KEY_FILE).unwrap_or_default();
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let reason = |why: String| {
        format!(
            "vector cache key {}: {why}: the cache is off (vectors kept in memory only)",
            dir.join(KEY_FILE).display()
        )
    };
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
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let temp =
        CString::new(format!("{KEY_FILE}.{}.{nanos}", std::process::id())).unwrap_or_default();
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
    unsafe { libc::unlinkat(folder.as_raw_fd(), temp.as_ptr(), 0) };
    linked
}

fn check_of(key: &[u8; 32], body: &[u8]) -> [u8; CHECK] {
    let hash = blake3::keyed_hash(key, body);
    let mut check = [0u8; CHECK];
    check.copy_from_slice(&hash.as_bytes()[..CHECK]);
    check
}

/// The first position of `needle` in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let first = needle[0];
    let mut from = 0;
    while let Some(offset) = haystack[from..].iter().position(|&b| b == first) {
        let at = from + offset;
        if haystack.len() - at < needle.len() {
            return None;
        }
        if haystack[at..at + needle.len()] == *needle {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

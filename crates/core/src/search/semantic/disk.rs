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
use std::path::{Path, PathBuf};

use tool_search_embed::DIM;

use super::super::cache_folder;
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
        let folder = cache_folder::open_private(
            dir,
            "vector cache",
            "the cache is off (vectors kept in memory only)",
        )?;
        let name = format!(
            "minilm-{}-t{TOOL_TOKENS}.v2.vectors",
            &model_digest[..model_digest.len().min(16)]
        );
        let key = cache_folder::installation_key(
            &folder,
            dir,
            "vector cache key",
            "the cache is off (vectors kept in memory only)",
        )?;
        Ok(DiskCache {
            path: dir.join(&name),
            name: CString::new(name).map_err(|_| "vector cache file name".to_string())?,
            dir: folder,
            key,
        })
    }

    /// The cached vectors among `wanted`, with the reason when the file was not (fully) used.
    pub fn read_checked(&self, wanted: &HashSet<[u8; 32]>) -> ReadOutcome {
        let found = HashMap::new();
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
        match scan(&bytes, wanted, |record| self.parse(record)) {
            Some(found) => ReadOutcome {
                found,
                warning: None,
            },
            None => ReadOutcome {
                found,
                warning: Some(self.move_aside()),
            },
        }
    }

    /// A record's key and vector, if its magic, keyed check and length are right.
    pub(super) fn parse(&self, record: &[u8]) -> Option<([u8; 32], QVec)> {
        let (magic, rest) = record.split_at(MAGIC.len());
        let (body, check) = rest.split_at(BODY);
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
        let flags = if create {
            libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT
        } else {
            libc::O_RDONLY
        };
        let shown = format!("vector cache {}", self.path.display());
        cache_folder::open_regular(&self.dir, &self.name, flags, &shown)
    }

    /// Moves a damaged file aside (later appends start a new one); the reason.
    fn move_aside(&self) -> String {
        let aside = CString::new([self.name.as_bytes(), b".corrupt"].concat()).unwrap_or_default();
        let moved = cache_folder::rename_at(&self.dir, &self.name, &aside).is_ok();
        format!(
            "vector cache {} is damaged in more than {MAX_DAMAGED} places (or was written with another key): {}; its vectors are recomputed",
            self.path.display(),
            if moved { "moved aside to .corrupt" } else { "not used" }
        )
    }
}

/// The records of a cache file's `bytes` whose key is `wanted`, each checked by `parse`, in one
/// pass: a damaged place costs one check and a scan to the next magic. `None`: the file is
/// given up (damaged in more than [`MAX_DAMAGED`] places, or mostly garbage).
pub(super) fn scan(
    bytes: &[u8],
    wanted: &HashSet<[u8; 32]>,
    mut parse: impl FnMut(&[u8]) -> Option<([u8; 32], QVec)>,
) -> Option<HashMap<[u8; 32], QVec>> {
    let mut found = HashMap::new();
    let mut at = 0;
    let mut damaged = 0;
    let mut skipped = 0;
    while at + RECORD <= bytes.len() {
        if let Some((key, row)) = parse(&bytes[at..at + RECORD]) {
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
            return None;
        }
        at = next;
    }
    Some(found)
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

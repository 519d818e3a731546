//! A learned prior's file in the cache folder: `learned-<scope hash>.prior`.
//!
//! `magic (8) | scope (u32 length + UTF-8) | learned (u64) | ignored (u64) |
//! tools (u32) | per tool: digest (16) events (f32) updated (u64) words (u16)
//! (hash u32, count f32) × words | check (32)`, little-endian; the check is a
//! BLAKE3 hash keyed with the installation's key (as the other caches, see
//! [`super::super::cache_folder`]). Written to a temporary name and renamed
//! into place. A file that fails its check or any bound is removed, with the
//! reason, and learning starts empty.
//!
//! The words are hashes of the analyzer's terms: a release whose analyzer
//! changes what a word becomes must change [`MAGIC`], so old files are set
//! aside rather than misread.

use std::collections::HashMap;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::super::cache_folder;
use super::{LearningStatus, Memory, ToolMemory, MAX_SCOPE_CHARS, MAX_TOOLS, MAX_TOOL_TERMS};

const MAGIC: [u8; 8] = *b"OTSlrn1\n";
const PREFIX: &str = "learned-";
const SUFFIX: &str = ".prior";
const CHECK: usize = 32;
/// Larger than any file the bounds allow (10k tools × 40 words ≈ 3.6 MB).
const MAX_FILE_BYTES: u64 = 16 << 20;
const OFF: &str = "learning stays in memory";

/// The file name of `scope`'s prior.
pub(super) fn name(scope: &str) -> String {
    let hash = blake3::hash(scope.as_bytes());
    format!("{PREFIX}{}{SUFFIX}", &hash.to_hex()[..16])
}

struct Folder {
    dir: std::fs::File,
    key: [u8; 32],
}

fn open(dir: &Path) -> Result<Folder, String> {
    let folder = cache_folder::open_private(dir, "learning", OFF)?;
    let key = cache_folder::installation_key(&folder, dir, "learning key", OFF)?;
    Ok(Folder { dir: folder, key })
}

/// `scope`'s prior kept in `dir`: `Ok(None)` when none is; Err: one was
/// refused (and removed), or the folder is not usable.
pub(super) fn load(dir: &Path, scope: &str) -> Result<Option<Memory>, String> {
    let file_name = name(scope);
    // Nothing kept yet: nothing to open (and no folder or key is made until something is written).
    if let Err(e) = std::fs::symlink_metadata(dir.join(&file_name)) {
        if e.kind() == std::io::ErrorKind::NotFound {
            return Ok(None);
        }
    }
    let folder = open(dir)?;
    let shown = dir.join(&file_name);
    let c_name = CString::new(file_name).unwrap_or_default();
    let refuse = |why: &str| {
        cache_folder::unlink_at(&folder.dir, &c_name);
        format!(
            "learned prior {} refused ({why}): learning starts again",
            shown.display()
        )
    };
    let file = match cache_folder::open_regular(&folder.dir, &c_name, libc::O_RDONLY, "the file") {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(None),
        Err(why) => return Err(refuse(&why)),
    };
    let bytes = cache_folder::read_bounded(&file, MAX_FILE_BYTES).map_err(|why| refuse(&why))?;
    let body = verified(&folder.key, &bytes)
        .ok_or_else(|| refuse("damaged, or written with another installation's key"))?;
    let (found_scope, memory) = decode(body).map_err(|why| refuse(&why))?;
    if found_scope != scope {
        return Err(refuse("it is another scope's"));
    }
    Ok(Some(memory))
}

fn verified<'a>(key: &[u8; 32], bytes: &'a [u8]) -> Option<&'a [u8]> {
    let at = bytes.len().checked_sub(CHECK)?;
    let (body, check) = bytes.split_at(at);
    (blake3::keyed_hash(key, body) == blake3::Hash::from_bytes(check.try_into().ok()?))
        .then_some(body)
}

/// Writes `memory` as `scope`'s prior (aside, then renamed into place).
pub(super) fn save(dir: &Path, scope: &str, memory: &Memory) -> Result<(), String> {
    let folder = open(dir)?;
    let file_name = name(scope);
    let shown = dir.join(&file_name);
    let fail = |e: &dyn std::fmt::Display| format!("learned prior {}: {e}: {OFF}", shown.display());
    let mut bytes = encode(scope, memory);
    let check = blake3::keyed_hash(&folder.key, &bytes);
    bytes.extend_from_slice(check.as_bytes());
    let temp = cache_folder::temp_name(&file_name);
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let c_name = CString::new(file_name).unwrap_or_default();
    let written = cache_folder::open_at(&folder.dir, &temp, flags, 0o600)
        .and_then(|mut file| file.write_all(&bytes))
        .and_then(|()| cache_folder::rename_at(&folder.dir, &temp, &c_name));
    if let Err(e) = written {
        cache_folder::unlink_at(&folder.dir, &temp);
        return Err(fail(&e));
    }
    Ok(())
}

/// Removes `scope`'s file.
pub(super) fn remove(dir: &Path, scope: &str) -> Result<(), String> {
    let folder = cache_folder::open_private(dir, "learning", "not reset")?;
    cache_folder::unlink_at(&folder, &CString::new(name(scope)).unwrap_or_default());
    Ok(())
}

/// The names of the prior files in `dir` (this user's regular files).
fn prior_files(dir: &Path) -> Result<Vec<String>, String> {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("learning folder {}: {e}", dir.display())),
    };
    let mut names = Vec::new();
    for item in listing.flatten() {
        let Ok(name) = item.file_name().into_string() else {
            continue;
        };
        if !name.starts_with(PREFIX) || !name.ends_with(SUFFIX) {
            continue;
        }
        let Ok(meta) = item.metadata() else { continue };
        if meta.file_type().is_file() && meta.uid() == cache_folder::effective_uid() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Removes every prior file in `dir`; how many.
pub(super) fn remove_all(dir: &Path) -> Result<usize, String> {
    let names = prior_files(dir)?;
    if names.is_empty() {
        return Ok(0);
    }
    let folder = cache_folder::open_private(dir, "learning", "not reset")?;
    for name in &names {
        cache_folder::unlink_at(&folder, &CString::new(name.as_str()).unwrap_or_default());
    }
    Ok(names.len())
}

/// What the prior files in `dir` hold (a file that does not verify is
/// listed with its warning, and left in place).
pub(super) fn list(dir: &Path) -> Result<Vec<LearningStatus>, String> {
    let names = prior_files(dir)?;
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let folder = open(dir)?;
    let mut out = Vec::new();
    for name in names {
        let shown = dir.join(&name).display().to_string();
        let c_name = CString::new(name.as_str()).unwrap_or_default();
        let read = cache_folder::open_regular(&folder.dir, &c_name, libc::O_RDONLY, "the file")
            .and_then(|file| file.ok_or_else(|| "removed meanwhile".to_string()))
            .and_then(|file| cache_folder::read_bounded(&file, MAX_FILE_BYTES))
            .and_then(|bytes| {
                let body = verified(&folder.key, &bytes).ok_or_else(|| {
                    "damaged, or written with another installation's key".to_string()
                })?;
                decode(body)
            });
        out.push(match read {
            Ok((scope, memory)) => LearningStatus {
                scope,
                file: Some(shown),
                learned: memory.learned,
                ignored: memory.ignored,
                tools: memory.tools.len(),
                bytes: memory.bytes(),
                warning: None,
            },
            Err(why) => LearningStatus {
                scope: String::new(),
                file: Some(shown),
                learned: 0,
                ignored: 0,
                tools: 0,
                bytes: 0,
                warning: Some(why),
            },
        });
    }
    Ok(out)
}

pub(super) fn encode(scope: &str, memory: &Memory) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + memory.tools.len() * (32 + MAX_TOOL_TERMS * 8));
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&(scope.len() as u32).to_le_bytes());
    out.extend_from_slice(scope.as_bytes());
    out.extend_from_slice(&memory.learned.to_le_bytes());
    out.extend_from_slice(&memory.ignored.to_le_bytes());
    out.extend_from_slice(&(memory.tools.len() as u32).to_le_bytes());
    for tool in &memory.tools {
        out.extend_from_slice(&tool.digest);
        out.extend_from_slice(&tool.events.to_le_bytes());
        out.extend_from_slice(&tool.updated.to_le_bytes());
        out.extend_from_slice(&(tool.terms.len() as u16).to_le_bytes());
        for (hash, count) in &tool.terms {
            out.extend_from_slice(&hash.to_le_bytes());
            out.extend_from_slice(&count.to_le_bytes());
        }
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("truncated")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().map_err(|_| "truncated")?,
        ))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| "truncated")?,
        ))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| "truncated")?,
        ))
    }
    fn f32(&mut self) -> Result<f32, String> {
        let value = f32::from_le_bytes(self.take(4)?.try_into().map_err(|_| "truncated")?);
        if value.is_finite() && value >= 0.0 {
            Ok(value)
        } else {
            Err("a count is negative or not a number".into())
        }
    }
}

pub(super) fn decode(body: &[u8]) -> Result<(String, Memory), String> {
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(8)? != MAGIC {
        return Err("not a learned prior of this format".into());
    }
    let scope_len = r.u32()? as usize;
    if scope_len > MAX_SCOPE_CHARS * 4 {
        return Err("scope too long".into());
    }
    let scope = std::str::from_utf8(r.take(scope_len)?)
        .map_err(|_| "scope not UTF-8")?
        .to_string();
    let mut memory = Memory {
        learned: r.u64()?,
        ignored: r.u64()?,
        ..Memory::default()
    };
    let count = r.u32()? as usize;
    if count > MAX_TOOLS {
        return Err(format!("{count} tools, more than {MAX_TOOLS}"));
    }
    let mut by_digest = HashMap::with_capacity(count);
    for slot in 0..count {
        let digest: [u8; 16] = r.take(16)?.try_into().map_err(|_| "truncated")?;
        let events = r.f32()?;
        let updated = r.u64()?;
        let words = r.u16()? as usize;
        if words > MAX_TOOL_TERMS {
            return Err(format!(
                "a tool with {words} words, more than {MAX_TOOL_TERMS}"
            ));
        }
        let mut terms: Vec<(u32, f32)> = Vec::with_capacity(words);
        for _ in 0..words {
            let hash = r.u32()?;
            let count = r.f32()?;
            // Written in word order, each word once.
            if terms.last().is_some_and(|&(last, _)| last >= hash) {
                return Err("a tool's words out of order or repeated".into());
            }
            terms.push((hash, count));
        }
        if by_digest.insert(digest, slot as u32).is_some() {
            return Err("a tool twice".into());
        }
        for &(hash, _) in &terms {
            memory.postings.entry(hash).or_default().push(slot as u32);
        }
        let mut tool = ToolMemory {
            digest,
            events,
            updated,
            terms,
            norm: 0.0,
        };
        tool.refresh_norm();
        memory.tools.push(tool);
    }
    if r.at != body.len() {
        return Err("bytes after the last tool".into());
    }
    memory.by_digest = by_digest;
    Ok((scope, memory))
}

//! The search index kept between processes: a large catalog's index is
//! written once to the user's cache folder, and a later process with the
//! same tools loads it instead of analyzing and indexing every tool again
//! (most of a first build).
//!
//! One file per indexed tool set, `catalog-<key>.index`, where the key hashes
//! the format, the indexing code ([`INDEX_CODE`], from the build) and every
//! entry's content digest in order: a changed tool, a new engine or a new
//! analyzer is a new key, never a stale index. The file:
//! `magic (8) | key (32) | docs (u32) | field lengths | signatures | segments
//! (term keys) | tantivy files | check (32)`, little-endian, the check a BLAKE3
//! hash keyed with the installation's key over everything before it.
//!
//! Trust (see [`super::cache_folder`]): a file that is not this user's
//! regular file, is too large, fails its check or does not parse is removed
//! and the index is rebuilt (and stored again). Files are published with a
//! rename (a reader never sees half of one); at most [`MAX_FILES`] of them
//! and [`MAX_TOTAL_BYTES`] are kept, the least recently used removed first.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tantivy::directory::{Directory, RamDirectory};
use tantivy::Index;

use super::cache_folder;
use super::fields::RankingParams;
use super::fields::FIELD_COUNT;
use super::index::{
    build, build_part, exact_keys, open_segments, schema, whole, IndexData, Part, PartKind,
};
use super::signature::{Signature, SIGNATURE_WORDS};
use crate::entry::ToolEntry;

/// Catalogs with fewer tools are not stored: they build in a few milliseconds.
/// (Larger ones take 5 ms and up; loading takes a fraction of that.)
pub const STORED_MIN_ENTRIES: usize = 256;
/// Format of the file (the key hashes it too).
const FORMAT: u32 = 1;
const MAGIC: [u8; 8] = *b"OTSidx1\n";
const CHECK: usize = 32;
/// A larger file is not written, and not read.
const MAX_FILE_BYTES: u64 = 256 << 20;
/// Stored indexes kept in the folder, and their total size.
const MAX_FILES: usize = 8;
const MAX_TOTAL_BYTES: u64 = 512 << 20;
const SUFFIX: &str = ".index";
const PREFIX: &str = "catalog-";
/// The indexing code's hash, written by build.rs.
const INDEX_CODE: &str = env!("TOOL_SEARCH_INDEX_CODE");
/// A temporary file this old is a crashed writer's: removed.
const STALE_TEMP_SECS: i64 = 3600;
/// Tantivy files per index, and a file name's length.
const MAX_TANTIVY_FILES: usize = 64;
const MAX_NAME_BYTES: usize = 128;

/// How a catalog's search index came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum IndexCacheState {
    /// Built, not stored: a small catalog, or no cache folder.
    Off,
    /// Loaded from the cache folder (a process built it before).
    Loaded,
    /// Built and stored for the next process.
    Saved,
    /// Built; storing it failed (the warning says why).
    Built,
    /// Derived from the previous version of a live catalog.
    Derived,
}

/// [`IndexCacheState`] and, when the cache could not be used as intended, why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexCacheOutcome {
    pub state: IndexCacheState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl IndexCacheOutcome {
    pub fn of(state: IndexCacheState) -> IndexCacheOutcome {
        IndexCacheOutcome {
            state,
            warning: None,
        }
    }
}

/// The cache folder's stored indexes.
struct IndexStore {
    dir: File,
    path: PathBuf,
    key: [u8; 32],
}

impl std::fmt::Debug for IndexStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexStore")
            .field("path", &self.path)
            .finish()
    }
}

/// [`super::index::build`], for a catalog large enough to be worth it
/// loaded from the cache folder `dir` when a process built the same entries
/// before (else built and stored there). A stored index that fails its
/// checks is removed and rebuilt; the outcome says which happened, and why.
pub fn build_stored(
    entries: &[ToolEntry],
    params: &RankingParams,
    dir: Option<&Path>,
) -> crate::error::Result<(IndexData, IndexCacheOutcome)> {
    let store = dir
        .filter(|_| entries.len() >= STORED_MIN_ENTRIES)
        .map(IndexStore::open);
    let store = match store {
        Some(Ok(store)) => store,
        unusable => {
            let outcome = IndexCacheOutcome {
                state: IndexCacheState::Off,
                warning: unusable.and_then(|s| s.err()),
            };
            return Ok((build(entries, params)?, outcome));
        }
    };
    let key = key_of(entries);
    let refused = match store.load(&key, entries) {
        Ok(Some(part)) => {
            let outcome = IndexCacheOutcome::of(IndexCacheState::Loaded);
            return Ok((whole(part, entries.len(), params), outcome));
        }
        Ok(None) => None,
        Err(reason) => Some(reason),
    };
    let part = build_part(&entries.iter().collect::<Vec<_>>(), PartKind::Segment)?;
    let outcome = match store.save(&key, &part) {
        Ok(()) => IndexCacheOutcome {
            state: IndexCacheState::Saved,
            warning: refused,
        },
        Err(e) => IndexCacheOutcome {
            state: IndexCacheState::Built,
            warning: Some(refused.map_or(e.clone(), |r| format!("{r}; {e}"))),
        },
    };
    Ok((whole(part, entries.len(), params), outcome))
}

/// The key of `entries`' index: format, indexing code and content digests.
pub(super) fn key_of(entries: &[ToolEntry]) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&MAGIC);
    hasher.update(&FORMAT.to_le_bytes());
    hasher.update(INDEX_CODE.as_bytes());
    hasher.update(&(entries.len() as u64).to_le_bytes());
    for entry in entries {
        hasher.update(&entry.digest());
    }
    *hasher.finalize().as_bytes()
}

fn file_name(key: &[u8; 32]) -> String {
    let hex: String = key[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("{PREFIX}{hex}{SUFFIX}")
}

const OFF: &str = "the index is built in each process, not stored";

impl IndexStore {
    /// The stored indexes in `dir` (created, mode 0700, if missing). Err: why
    /// the folder cannot be used.
    fn open(dir: &Path) -> Result<IndexStore, String> {
        let folder = cache_folder::open_private(dir, "index cache", OFF)?;
        let key = cache_folder::installation_key(&folder, dir, "index cache key", OFF)?;
        Ok(IndexStore {
            dir: folder,
            path: dir.to_path_buf(),
            key,
        })
    }

    /// The index stored under `key` for `entries`. `Ok(None)`: none stored;
    /// Err: one was, and was refused (and removed) for the reason given.
    pub(super) fn load(
        &self,
        key: &[u8; 32],
        entries: &[ToolEntry],
    ) -> Result<Option<Part>, String> {
        let name = file_name(key);
        let c_name = CString::new(name.as_str()).unwrap_or_default();
        let shown = self.path.join(&name);
        let file = match cache_folder::open_regular(&self.dir, &c_name, libc::O_RDONLY, "the file")
        {
            Ok(Some(file)) => file,
            Ok(None) => return Ok(None),
            Err(why) => return Err(self.refuse(&c_name, &shown, &why)),
        };
        let bytes = match cache_folder::read_bounded(&file, MAX_FILE_BYTES) {
            Ok(bytes) => bytes,
            Err(why) => return Err(self.refuse(&c_name, &shown, &why)),
        };
        let body = match self.verified(&bytes) {
            Some(body) => body,
            None => {
                return Err(self.refuse(
                    &c_name,
                    &shown,
                    "damaged, or written with another installation's key",
                ))
            }
        };
        match decode(body, key, entries) {
            Ok(part) => {
                // Recently used: evicted last.
                // SAFETY: an open fd; a null times pointer means "now".
                unsafe { libc::futimens(file.as_raw_fd(), std::ptr::null()) };
                Ok(Some(part))
            }
            Err(why) => Err(self.refuse(&c_name, &shown, &why)),
        }
    }

    /// Removes a refused file; the reason to report.
    fn refuse(&self, name: &CString, shown: &Path, why: &str) -> String {
        cache_folder::unlink_at(&self.dir, name);
        format!("stored index {} refused ({why}): rebuilt", shown.display())
    }

    /// The body of a file whose keyed check is right.
    fn verified<'a>(&self, bytes: &'a [u8]) -> Option<&'a [u8]> {
        let at = bytes.len().checked_sub(CHECK)?;
        let (body, check) = bytes.split_at(at);
        // blake3::Hash compares in constant time.
        (blake3::keyed_hash(&self.key, body) == blake3::Hash::from_bytes(check.try_into().ok()?))
            .then_some(body)
    }

    /// Stores `part` under `key` (written aside, then renamed into place),
    /// then removes the least recently used files beyond the folder's bounds.
    pub(super) fn save(&self, key: &[u8; 32], part: &Part) -> Result<(), String> {
        let name = file_name(key);
        let shown = self.path.join(&name);
        let fail = |e: &dyn std::fmt::Display| format!("index cache {}: {e}", shown.display());
        let mut bytes = encode(key, part).map_err(|e| fail(&e))?;
        let check = blake3::keyed_hash(&self.key, &bytes);
        bytes.extend_from_slice(check.as_bytes());
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(fail(&format!(
                "{} bytes, more than the {MAX_FILE_BYTES} a stored index may have: not stored",
                bytes.len()
            )));
        }
        let temp = cache_folder::temp_name(&name);
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let written = cache_folder::open_at(&self.dir, &temp, flags, 0o600)
            .and_then(|mut file| file.write_all(&bytes));
        let c_name = CString::new(name.as_str()).unwrap_or_default();
        let published = written.and_then(|()| cache_folder::rename_at(&self.dir, &temp, &c_name));
        if let Err(e) = published {
            cache_folder::unlink_at(&self.dir, &temp);
            return Err(fail(&e));
        }
        self.evict(&name);
        Ok(())
    }

    /// Keeps at most [`MAX_FILES`] stored indexes and [`MAX_TOTAL_BYTES`]
    /// (never `kept`, the one just written), least recently used removed
    /// first, and removes crashed writers' temporary files.
    fn evict(&self, kept: &str) {
        let Ok(listing) = std::fs::read_dir(&self.path) else {
            return;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let mut stored: Vec<((i64, i64), u64, String)> = Vec::new();
        for item in listing.flatten() {
            let Ok(name) = item.file_name().into_string() else {
                continue;
            };
            if !name.starts_with(PREFIX) {
                continue;
            }
            let Ok(meta) = item.metadata() else { continue };
            if !meta.file_type().is_file() || meta.uid() != cache_folder::effective_uid() {
                continue;
            }
            if name.ends_with(".tmp") {
                if now - meta.mtime() > STALE_TEMP_SECS {
                    cache_folder::unlink_at(&self.dir, &CString::new(name).unwrap_or_default());
                }
            } else if name.ends_with(SUFFIX) && name != kept {
                stored.push(((meta.mtime(), meta.mtime_nsec()), meta.len(), name));
            }
        }
        let kept_bytes = std::fs::symlink_metadata(self.path.join(kept)).map_or(0, |m| m.len());
        stored.sort();
        let mut total: u64 = kept_bytes + stored.iter().map(|s| s.1).sum::<u64>();
        let mut count = stored.len() + 1;
        for (_, len, name) in stored {
            if count <= MAX_FILES && total <= MAX_TOTAL_BYTES {
                break;
            }
            cache_folder::unlink_at(&self.dir, &CString::new(name).unwrap_or_default());
            count -= 1;
            total -= len;
        }
    }
}

/// The whole file, if it is no larger than a stored index may be.
/// The file's body (without its check).
fn encode(key: &[u8; 32], part: &Part) -> Result<Vec<u8>, String> {
    let (Some(searcher), Some(directory)) = (&part.searcher, &part.files) else {
        return Err("a part held in memory is not stored".into());
    };
    let mut names: Vec<PathBuf> = searcher
        .index()
        .directory()
        .list_managed_files()
        .into_iter()
        .filter(|name| name != Path::new("meta.json"))
        .collect();
    names.sort();
    let mut files = Vec::with_capacity(names.len() + 1);
    let meta = directory
        .atomic_read(Path::new("meta.json"))
        .map_err(|e| e.to_string())?;
    files.push(("meta.json".to_string(), meta));
    for name in names {
        if !directory.exists(&name).map_err(|e| e.to_string())? {
            continue;
        }
        let bytes = directory
            .open_read(&name)
            .map_err(|e| e.to_string())
            .and_then(|slice| slice.read_bytes().map_err(|e| e.to_string()))
            .map_err(|e| format!("{}: {e}", name.display()))?;
        let name = name.to_str().ok_or("a file name is not UTF-8")?.to_string();
        files.push((name, bytes.as_slice().to_vec()));
    }
    let docs = part.field_len.len();
    let file_bytes: usize = files.iter().map(|(n, b)| n.len() + b.len() + 12).sum();
    let mut out =
        Vec::with_capacity(64 + docs * (FIELD_COUNT * 2 + SIGNATURE_WORDS * 8) + file_bytes);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(key);
    put_u32(&mut out, docs)?;
    for lens in &part.field_len {
        for len in lens {
            out.extend_from_slice(&len.to_le_bytes());
        }
    }
    for signature in &part.signatures {
        for word in signature.words() {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    put_u32(&mut out, part.segments.len())?;
    for (_, _, terms) in &part.segments {
        put_u32(&mut out, terms.len())?;
        let mut sorted: Vec<u64> = terms.iter().copied().collect();
        sorted.sort_unstable();
        for term in sorted {
            out.extend_from_slice(&term.to_le_bytes());
        }
    }
    put_u32(&mut out, files.len())?;
    for (name, bytes) in files {
        put_u32(&mut out, name.len())?;
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

fn put_u32(out: &mut Vec<u8>, n: usize) -> Result<(), String> {
    let n = u32::try_from(n).map_err(|_| "a count beyond u32")?;
    out.extend_from_slice(&n.to_le_bytes());
    Ok(())
}

/// Reads a checked body; every length is bounded by what is left.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.rest.len() {
            return Err("truncated".into());
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<usize, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().map_err(|_| "truncated")?) as usize)
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| "truncated")?,
        ))
    }

    /// `count` items of `size` bytes each, bounded by what is left.
    fn items(&mut self, count: usize, size: usize) -> Result<&'a [u8], String> {
        self.take(count.checked_mul(size).ok_or("truncated")?)
    }
}

/// The part a body holds, if it is `entries`' index under `key`.
fn decode(body: &[u8], key: &[u8; 32], entries: &[ToolEntry]) -> Result<Part, String> {
    let mut reader = Reader { rest: body };
    if reader.take(MAGIC.len())? != MAGIC {
        return Err("not a stored index of this format".into());
    }
    if reader.take(32)? != key {
        return Err("stored for other tools".into());
    }
    let docs = reader.u32()?;
    if docs != entries.len() {
        return Err(format!("{docs} tools stored, {} given", entries.len()));
    }
    let field_len = reader
        .items(docs, FIELD_COUNT * 2)?
        .chunks_exact(FIELD_COUNT * 2)
        .map(|row| {
            let mut lens = [0u16; FIELD_COUNT];
            for (len, pair) in lens.iter_mut().zip(row.chunks_exact(2)) {
                *len = u16::from_le_bytes([pair[0], pair[1]]);
            }
            lens
        })
        .collect();
    let signatures = reader
        .items(docs, SIGNATURE_WORDS * 8)?
        .chunks_exact(SIGNATURE_WORDS * 8)
        .map(|row| {
            let mut words = [0u64; SIGNATURE_WORDS];
            for (word, bytes) in words.iter_mut().zip(row.chunks_exact(8)) {
                *word = u64::from_le_bytes(bytes.try_into().unwrap_or_default());
            }
            Signature::from_words(words)
        })
        .collect();
    let segment_count = reader.u32()?;
    let mut terms = Vec::new();
    for _ in 0..segment_count {
        let count = reader.u32()?;
        let keys = reader.items(count, 8)?;
        let mut set = foldhash::HashSet::default();
        set.reserve(count);
        set.extend(
            keys.chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default())),
        );
        terms.push(set);
    }
    let file_count = reader.u32()?;
    if file_count > MAX_TANTIVY_FILES {
        return Err(format!("{file_count} index files"));
    }
    let directory = RamDirectory::create();
    for _ in 0..file_count {
        let len = reader.u32()?;
        if len > MAX_NAME_BYTES {
            return Err("a file name too long".into());
        }
        let name = std::str::from_utf8(reader.take(len)?).map_err(|_| "a file name")?;
        // Plain names only: nothing outside the directory.
        if name.is_empty() || name.contains('/') || name.starts_with("..") {
            return Err(format!("file name {name:?}"));
        }
        let size = usize::try_from(reader.u64()?).map_err(|_| "truncated")?;
        let bytes = reader.take(size)?;
        directory
            .atomic_write(Path::new(name), bytes)
            .map_err(|e| e.to_string())?;
    }
    if !reader.rest.is_empty() {
        return Err("trailing bytes".into());
    }
    let index = Index::open(directory.clone()).map_err(|e| e.to_string())?;
    let (expected, fields, _) = schema();
    if index.schema() != expected {
        return Err("another index schema".into());
    }
    let (searcher, segments) =
        open_segments(&index, fields, Some(terms)).map_err(|e| e.to_string())?;
    let mut seen = vec![false; docs];
    for (_, positions, _) in &segments {
        for &p in positions {
            match seen.get_mut(p as usize) {
                Some(slot) if !*slot => *slot = true,
                _ => return Err("a doc's position is out of range or repeated".into()),
            }
        }
    }
    if seen.contains(&false) {
        return Err("a tool missing from the segments".into());
    }
    let refs: Vec<&ToolEntry> = entries.iter().collect();
    Ok(Part {
        searcher,
        files: Some(directory),
        segments,
        field_len,
        signatures,
        exact_folded: exact_keys(&refs),
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::super::SearchIndex;
    use super::*;
    use crate::entry::{EntryFields, Source};
    use serde_json::json;

    const WORDS: [&str; 12] = [
        "weather",
        "invoice",
        "calendar",
        "email",
        "repository",
        "ticket",
        "payment",
        "forecast",
        "contact",
        "report",
        "deploy",
        "translate",
    ];

    /// `count` tools of 7 servers, in id order, with `variant` in one description.
    fn tools(count: usize, variant: &str) -> Vec<ToolEntry> {
        let mut entries: Vec<ToolEntry> = (0..count)
            .map(|i| {
                let owner = format!("server{}", i % 7);
                let name = format!("{}_{i:04}", WORDS[i % WORDS.len()]);
                ToolEntry::from(EntryFields {
                    id: format!("mcp:{owner}:{name}"),
                    source: Source::Mcp,
                    owner,
                    label: (i % 3 == 0).then(|| format!("Tool {i}")),
                    description: format!(
                        "Finds the {} {} for an account{}",
                        WORDS[(i * 5) % WORDS.len()],
                        WORDS[(i * 7 + 1) % WORDS.len()],
                        if i == 0 { variant } else { "" }
                    ),
                    input_schema: Some(std::sync::Arc::new(json!({
                        "type": "object",
                        "properties": { format!("field{}", i % 11): { "type": "string", "description": "a value" } }
                    }))),
                    output_schema: None,
                    mcp: None,
                    name,
                })
            })
            .collect();
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        entries
    }

    fn scratch(name: &str) -> PathBuf {
        crate::search::tests::scratch_dir(&format!("stored-{name}"))
    }

    fn stored(entries: &[ToolEntry], dir: &Path) -> (SearchIndex, IndexCacheOutcome) {
        SearchIndex::build_stored(entries, Some(dir)).unwrap()
    }

    fn build(entries: &[ToolEntry]) -> SearchIndex {
        SearchIndex::build(entries).unwrap()
    }

    fn path_of(dir: &Path, entries: &[ToolEntry]) -> PathBuf {
        dir.join(file_name(&key_of(entries)))
    }

    /// Everything ranking reads, per ordinal, and the results of a few searches.
    fn same_index(a: &SearchIndex, b: &SearchIndex, entries: &[ToolEntry]) {
        assert_eq!(a.data.field_len, b.data.field_len);
        assert_eq!(a.data.signatures, b.data.signatures);
        assert_eq!(a.data.avg_len, b.data.avg_len);
        assert_eq!(a.data.doc_count, b.data.doc_count);
        for entry in entries.iter().step_by(17) {
            let name = entry.name.to_lowercase();
            assert_eq!(
                a.data.exact(&name, &entry.name),
                b.data.exact(&name, &entry.name)
            );
        }
        let all = |_: usize| true;
        for query in [
            "weather forecast",
            "send an invoice payment",
            "deploy repository",
            "calendar_0002",
            "nothing here",
        ] {
            let ranked = |index: &SearchIndex| {
                index
                    .search(query, 20, &all)
                    .into_iter()
                    .map(|h| (h.ordinal, h.score.to_bits()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(ranked(a), ranked(b), "{query}");
        }
    }

    #[test]
    fn a_stored_index_is_loaded_by_the_next_build_and_ranks_as_a_built_one() {
        let dir = scratch("roundtrip");
        let entries = tools(400, "");
        let built = build(&entries);
        let (first, outcome) = stored(&entries, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Saved));
        let path = path_of(&dir, &entries);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let (loaded, outcome) = stored(&entries, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Loaded));
        same_index(&built, &first, &entries);
        same_index(&built, &loaded, &entries);
        // A changed tool is other content: its own index, built and stored.
        let changed = tools(400, " and more");
        let (_, outcome) = stored(&changed, &dir);
        assert_eq!(outcome.state, IndexCacheState::Saved);
        assert!(path_of(&dir, &changed) != path);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_small_catalog_is_not_stored() {
        let dir = scratch("small");
        let entries = tools(STORED_MIN_ENTRIES - 1, "");
        let (_, outcome) = stored(&entries, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Off));
        assert!(!path_of(&dir, &entries).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Damage anywhere (a flipped byte, a cut, another installation's key, a
    /// link in its place) is refused with the reason, removed, rebuilt and stored again.
    #[test]
    fn a_damaged_or_foreign_stored_index_is_refused_and_rebuilt() {
        let dir = scratch("damaged");
        let entries = tools(300, "");
        let built = build(&entries);
        stored(&entries, &dir);
        let path = path_of(&dir, &entries);
        let good = std::fs::read(&path).unwrap();
        type Damage<'a> = Box<dyn Fn() + 'a>;
        let damage: Vec<(&str, Damage)> = vec![
            (
                "a flipped byte",
                Box::new(|| {
                    let mut bytes = good.clone();
                    let middle = bytes.len() / 2;
                    bytes[middle] ^= 0x40;
                    std::fs::write(&path, bytes).unwrap();
                }),
            ),
            (
                "cut short",
                Box::new(|| std::fs::write(&path, &good[..good.len() / 3]).unwrap()),
            ),
            ("empty", Box::new(|| std::fs::write(&path, b"").unwrap())),
            (
                "another installation's key",
                Box::new(|| {
                    std::fs::write(&path, &good).unwrap();
                    std::fs::write(dir.join("vectors.key"), [7u8; 32]).unwrap();
                }),
            ),
            (
                "a symbolic link",
                Box::new(|| {
                    let target = dir.join("elsewhere");
                    std::fs::write(&target, &good).unwrap();
                    let _ = std::fs::remove_file(&path);
                    std::os::unix::fs::symlink(&target, &path).unwrap();
                }),
            ),
        ];
        for (what, damage) in damage {
            damage();
            let (rebuilt, outcome) = stored(&entries, &dir);
            assert_eq!(outcome.state, IndexCacheState::Saved, "{what}: {outcome:?}");
            let warning = outcome.warning.unwrap_or_default();
            assert!(
                warning.contains("refused") && warning.contains("rebuilt"),
                "{what}: {warning}"
            );
            same_index(&built, &rebuilt, &entries);
            let (_, outcome) = stored(&entries, &dir);
            assert_eq!(
                outcome,
                IndexCacheOutcome::of(IndexCacheState::Loaded),
                "{what}: stored again"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A body whose check is right but whose content is not this index's
    /// (written with the installation's key by other code) is refused too.
    #[test]
    fn a_checked_body_that_does_not_parse_is_refused() {
        let dir = scratch("parse");
        let entries = tools(300, "");
        let store = IndexStore::open(&dir).unwrap();
        let key = key_of(&entries);
        let bodies: Vec<(&str, Vec<u8>)> = vec![
            ("no magic", b"garbage".to_vec()),
            (
                "another key",
                [&MAGIC[..], &[0u8; 32], &300u32.to_le_bytes()].concat(),
            ),
            (
                "too few tools",
                [&MAGIC[..], &key[..], &299u32.to_le_bytes()].concat(),
            ),
            (
                "truncated tables",
                [&MAGIC[..], &key[..], &300u32.to_le_bytes(), &[1, 2, 3]].concat(),
            ),
        ];
        for (what, mut body) in bodies {
            let check = blake3::keyed_hash(&store.key, &body);
            body.extend_from_slice(check.as_bytes());
            std::fs::write(path_of(&dir, &entries), &body).unwrap();
            let err = store.load(&key, &entries).err().unwrap_or_default();
            assert!(err.contains("refused"), "{what}: {err}");
            assert!(!path_of(&dir, &entries).exists(), "{what}: removed");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_folder_keeps_the_most_recently_used_indexes_only() {
        let dir = scratch("evict");
        let first = tools(260, "");
        stored(&first, &dir);
        for i in 0..MAX_FILES + 2 {
            // The first one, used again, is the most recent: kept.
            let (_, outcome) = stored(&first, &dir);
            assert_eq!(outcome.state, IndexCacheState::Loaded, "{i}");
            // Apart in time on file systems with coarse timestamps.
            std::thread::sleep(std::time::Duration::from_millis(20));
            stored(&tools(260, &format!(" v{i}")), &dir);
        }
        let indexes = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|f| f.file_name().to_string_lossy().ends_with(SUFFIX))
            .count();
        assert_eq!(indexes, MAX_FILES);
        assert!(path_of(&dir, &first).exists());
        assert!(
            !path_of(&dir, &tools(260, " v0")).exists(),
            "the least recently used left"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_folder_others_may_write_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("open");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = IndexStore::open(&dir).unwrap_err();
        assert!(err.contains("writable by group or others"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

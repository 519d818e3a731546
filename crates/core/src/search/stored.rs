//! The search index kept between processes, in parts per owner: a large
//! catalog's index is written to the user's cache folder, and a later process
//! loads the parts that hold its unchanged owners' (servers', plugins') tools
//! and indexes only the rest, instead of analyzing and indexing every tool
//! again (most of a first build). One server that changed its tools since
//! the index was stored costs indexing that server's tools.
//!
//! A part file, `part-<hash of its header>.index`, holds the index of some
//! owners' tools. Each owner is named by a digest of the format, the indexing
//! code ([`INDEX_CODE`], from the build) and its entries' content digests in
//! catalog order, with the positions of those entries in the part: an owner
//! whose tools changed has another digest, so it is never served from a
//! stale part. The file:
//! `magic (8) | header length (u32) | header | header check (32) | field
//! lengths | signatures | segments (term keys) | tantivy files | check (32)`,
//! little-endian; the header is `code key (32) | docs (u32) | owners (u32) |
//! per owner: digest (32), count (u32), positions (u32 each)`. Both checks are
//! BLAKE3 hashes keyed with the installation's key, over everything before
//! them: a header is trusted before its body is read, a body only whole.
//!
//! A process reads the headers, picks the parts that cover most of its
//! tools (the largest first), and loads them when they serve the catalog as
//! a live catalog's derived versions are served: the largest part at most a
//! quarter dead, the rest at most a quarter of it, at most
//! [`MAX_DELTA_PARTS`] beside it. The owners no part holds are indexed into
//! a new part and stored. Otherwise everything is built into one part and
//! stored. Ranking is the same as a full build's in every case (statistics
//! are over live docs, see [`super::index`]).
//!
//! Trust (see [`super::cache_folder`]): a file that is not this user's
//! regular file, is too large, fails a check or does not parse is removed
//! and its tools are indexed again (and stored). Files are published with a
//! rename (a reader never sees half of one); at most [`MAX_FILES`] of them
//! and [`MAX_TOTAL_BYTES`] are kept, the least recently used removed first.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use foldhash::{HashMap, HashMapExt};
use serde::Serialize;
use tantivy::directory::{Directory, RamDirectory};
use tantivy::Index;

use super::cache_folder;
use super::fields::RankingParams;
use super::fields::FIELD_COUNT;
use super::index::{
    build_part, exact_keys_at, from_parts, open_segments, schema, whole, IndexData, Part, PartKind,
    MAX_DELTA_PARTS,
};
use super::signature::{Signature, SIGNATURE_WORDS};
use crate::entry::{Source, ToolEntry, GONE};

/// Catalogs with fewer tools are not stored: they build in a few milliseconds.
/// (Larger ones take 5 ms and up; loading takes a fraction of that.)
pub const STORED_MIN_ENTRIES: usize = 256;
/// Format of the files (the code key hashes it too).
const FORMAT: u32 = 2;
const MAGIC: [u8; 8] = *b"OTSpart\n";
const CHECK: usize = 32;
/// A larger file is not written, and not read.
const MAX_FILE_BYTES: u64 = 256 << 20;
/// Part files kept in the folder, and their total size.
const MAX_FILES: usize = 16;
const MAX_TOTAL_BYTES: u64 = 512 << 20;
const SUFFIX: &str = ".index";
const PREFIX: &str = "part-";
/// The whole-catalog files of the format before parts: never read, removed.
const OLD_PREFIX: &str = "catalog-";
/// The indexing code's hash, written by build.rs.
const INDEX_CODE: &str = env!("TOOL_SEARCH_INDEX_CODE");
/// A temporary file this old is a crashed writer's: removed.
const STALE_TEMP_SECS: i64 = 3600;
/// Tantivy files per part, and a file name's length.
const MAX_TANTIVY_FILES: usize = 64;
const MAX_NAME_BYTES: usize = 128;
/// The fixed bytes before a header's owners: code key, docs, owner count.
const HEADER_FIXED: usize = 32 + 4 + 4;

/// How a catalog's search index came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum IndexCacheState {
    /// Built, not stored: a small catalog, or no cache folder.
    Off,
    /// Loaded from the cache folder (processes stored every owner's part before).
    Loaded,
    /// The unchanged owners' parts loaded from the cache folder; the other
    /// owners' tools indexed, and stored as a new part.
    LoadedInPart,
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

    fn with(state: IndexCacheState, warnings: Vec<String>) -> IndexCacheOutcome {
        IndexCacheOutcome {
            state,
            warning: (!warnings.is_empty()).then(|| warnings.join("; ")),
        }
    }
}

/// One owner's tools in a catalog: their ordinals (ascending) and the digest
/// a stored part must name to serve them.
pub(super) struct Owner {
    digest: [u8; 32],
    ordinals: Vec<u32>,
}

/// The owners of `entries` (source and owner name), in order of first appearance.
pub(super) fn owners_of(entries: &[ToolEntry]) -> Vec<Owner> {
    let mut at: HashMap<(Source, &str), usize> = HashMap::new();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for (ordinal, entry) in entries.iter().enumerate() {
        let slot = *at
            .entry((entry.source, entry.owner.as_str()))
            .or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
        groups[slot].push(ordinal as u32);
    }
    let code = code_key();
    groups
        .into_iter()
        .map(|ordinals| {
            let mut hasher = blake3::Hasher::new();
            hasher.update(&code);
            hasher.update(&(ordinals.len() as u64).to_le_bytes());
            for &ordinal in &ordinals {
                hasher.update(&entries[ordinal as usize].digest());
            }
            Owner {
                digest: *hasher.finalize().as_bytes(),
                ordinals,
            }
        })
        .collect()
}

/// What parts of this format and indexing code name in their header.
fn code_key() -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&MAGIC);
    hasher.update(&FORMAT.to_le_bytes());
    hasher.update(INDEX_CODE.as_bytes());
    *hasher.finalize().as_bytes()
}

/// A part's header: how many docs it holds, and each owner's digest with the
/// positions of its entries (in the owner's catalog order).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Header {
    docs: usize,
    owners: Vec<([u8; 32], Vec<u32>)>,
}

impl Header {
    /// The header of a part built from `positions`' ordinals, in that order.
    fn of(owners: &[&Owner], positions: &[u32]) -> Header {
        let mut position_of: HashMap<u32, u32> = HashMap::with_capacity(positions.len());
        for (position, &ordinal) in positions.iter().enumerate() {
            position_of.insert(ordinal, position as u32);
        }
        Header {
            docs: positions.len(),
            owners: owners
                .iter()
                .map(|owner| {
                    let at = owner.ordinals.iter().map(|o| position_of[o]).collect();
                    (owner.digest, at)
                })
                .collect(),
        }
    }

    fn encode(&self) -> Result<Vec<u8>, String> {
        let positions: usize = self.owners.iter().map(|(_, p)| p.len()).sum();
        let mut out = Vec::with_capacity(HEADER_FIXED + self.owners.len() * 36 + positions * 4);
        out.extend_from_slice(&code_key());
        put_u32(&mut out, self.docs)?;
        put_u32(&mut out, self.owners.len())?;
        for (digest, at) in &self.owners {
            out.extend_from_slice(digest);
            put_u32(&mut out, at.len())?;
            for &position in at {
                out.extend_from_slice(&position.to_le_bytes());
            }
        }
        Ok(out)
    }

    /// A checked header. `Ok(None)`: written by another format or indexing
    /// code (another version of the engine sharing the folder): not used, kept.
    fn decode(bytes: &[u8]) -> Result<Option<Header>, String> {
        let mut reader = Reader { rest: bytes };
        if reader.take(32)? != code_key() {
            return Ok(None);
        }
        let docs = reader.u32()?;
        if docs > crate::limits::MAX_CATALOG_TOOLS {
            return Err(format!("{docs} tools in a part"));
        }
        let count = reader.u32()?;
        let mut seen = vec![false; docs];
        let mut owners = Vec::with_capacity(count.min(bytes.len() / 36));
        for _ in 0..count {
            let digest: [u8; 32] = reader.take(32)?.try_into().map_err(|_| "truncated")?;
            let n = reader.u32()?;
            let mut at = Vec::with_capacity(n.min(reader.rest.len() / 4));
            for bytes in reader.items(n, 4)?.chunks_exact(4) {
                let position = u32::from_le_bytes(bytes.try_into().map_err(|_| "truncated")?);
                match seen.get_mut(position as usize) {
                    Some(slot) if !*slot => *slot = true,
                    _ => return Err("an owner's position is out of range or repeated".into()),
                }
                at.push(position);
            }
            owners.push((digest, at));
        }
        if !reader.rest.is_empty() {
            return Err("trailing bytes in the header".into());
        }
        Ok(Some(Header { docs, owners }))
    }
}

/// A stored part's file as listed: its header, read and checked.
struct Listed {
    file: File,
    name: String,
    header_bytes: Vec<u8>,
    header: Header,
}

/// The cache folder's stored parts.
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
/// loaded from the cache folder `dir` where processes stored its owners'
/// parts before (the other owners indexed and stored). A stored part that
/// fails its checks is removed and its tools indexed again; the outcome says
/// what happened, and why.
pub fn build_stored(
    entries: &[ToolEntry],
    params: &RankingParams,
    dir: Option<&Path>,
) -> crate::error::Result<(IndexData, IndexCacheOutcome)> {
    if entries.len() > u32::MAX as usize {
        return Err(crate::error::Error::invalid_catalog(
            "catalog too large to index",
        ));
    }
    let store = dir
        .filter(|_| entries.len() >= STORED_MIN_ENTRIES)
        .map(IndexStore::open);
    let store = match store {
        Some(Ok(store)) => store,
        unusable => {
            let warnings = unusable.and_then(|s| s.err()).into_iter().collect();
            let part = build_part(&entries.iter().collect::<Vec<_>>(), PartKind::Segment)?;
            let outcome = IndexCacheOutcome::with(IndexCacheState::Off, warnings);
            return Ok((whole(part, entries.len(), params), outcome));
        }
    };
    let owners = owners_of(entries);
    let mut warnings = Vec::new();
    if let Some(loaded) = store.load_parts(&owners, entries, &mut warnings) {
        let (mut parts, missing) = loaded;
        if missing.is_empty() {
            let outcome = IndexCacheOutcome::with(IndexCacheState::Loaded, warnings);
            return Ok((from_parts(parts, entries.len(), params), outcome));
        }
        // The owners no stored part holds: indexed into a part of their own, stored.
        let mut positions: Vec<u32> = missing
            .iter()
            .flat_map(|owner| owner.ordinals.iter().copied())
            .collect();
        positions.sort_unstable();
        let refs: Vec<&ToolEntry> = positions.iter().map(|&o| &entries[o as usize]).collect();
        let part = build_part(&refs, PartKind::Segment)?;
        if let Err(e) = store.save(&Header::of(&missing, &positions), &part) {
            warnings.push(e);
        }
        parts.push((part, positions));
        let outcome = IndexCacheOutcome::with(IndexCacheState::LoadedInPart, warnings);
        return Ok((from_parts(parts, entries.len(), params), outcome));
    }
    let part = build_part(&entries.iter().collect::<Vec<_>>(), PartKind::Segment)?;
    let all: Vec<&Owner> = owners.iter().collect();
    let positions: Vec<u32> = (0..entries.len() as u32).collect();
    let state = match store.save(&Header::of(&all, &positions), &part) {
        Ok(()) => IndexCacheState::Saved,
        Err(e) => {
            warnings.push(e);
            IndexCacheState::Built
        }
    };
    let outcome = IndexCacheOutcome::with(state, warnings);
    Ok((whole(part, entries.len(), params), outcome))
}

/// Stored parts chosen for a catalog: each listed file with the owner of
/// each of its header's owners it serves (`None`: not this catalog's).
type Chosen<'o> = Vec<(Listed, Vec<Option<&'o Owner>>)>;

/// Parts that serve `owners` as a derived version is served (see the
/// module's head), largest first, and the owners none holds. `None`: too
/// little is stored; everything is built.
fn choose<'o>(
    listed: Vec<Listed>,
    owners: &'o [Owner],
    entries: usize,
) -> Option<(Chosen<'o>, Vec<&'o Owner>)> {
    let mut wanted: HashMap<[u8; 32], usize> = HashMap::with_capacity(owners.len());
    for (i, owner) in owners.iter().enumerate() {
        wanted.insert(owner.digest, i);
    }
    let mut covered = vec![false; owners.len()];
    let mut candidates = listed;
    let mut chosen: Chosen<'o> = Vec::new();
    // Greedy: the part that serves the most tools not yet served, until none adds any.
    while chosen.len() <= MAX_DELTA_PARTS {
        let serves = |listed: &Listed, covered: &[bool]| -> usize {
            listed
                .header
                .owners
                .iter()
                .filter_map(|(digest, at)| {
                    let &i = wanted.get(digest)?;
                    (!covered[i] && at.len() == owners[i].ordinals.len()).then_some(at.len())
                })
                .sum()
        };
        let best = candidates
            .iter()
            .enumerate()
            .map(|(i, listed)| (serves(listed, &covered), i))
            .max_by_key(|&(n, i)| (n, std::cmp::Reverse(i)));
        let Some(best) = best.filter(|&(n, _)| n > 0) else {
            break;
        };
        let listed = candidates.swap_remove(best.1);
        let serving = listed
            .header
            .owners
            .iter()
            .map(|(digest, at)| {
                let &i = wanted.get(digest)?;
                let owner = &owners[i];
                (!covered[i] && at.len() == owner.ordinals.len()).then(|| {
                    covered[i] = true;
                    owner
                })
            })
            .collect();
        chosen.push((listed, serving));
    }
    let (base, rest) = chosen.split_first()?;
    let live = |(_, serving): &(Listed, Vec<Option<&Owner>>)| -> usize {
        serving.iter().flatten().map(|o| o.ordinals.len()).sum()
    };
    let base_docs = base.0.header.docs;
    let missing: Vec<&Owner> = owners
        .iter()
        .zip(&covered)
        .filter(|(_, &c)| !c)
        .map(|(o, _)| o)
        .collect();
    let missing_docs: usize = missing.iter().map(|o| o.ordinals.len()).sum();
    let delta_docs = rest.iter().map(live).sum::<usize>() + missing_docs;
    let parts = chosen.len() + usize::from(!missing.is_empty());
    // As a live catalog's derivation: the base at most a quarter dead, the
    // rest at most a quarter of it, at most MAX_DELTA_PARTS beside it.
    let serves_well = live(base) * 4 >= base_docs * 3
        && delta_docs * 4 <= base_docs
        && parts <= 1 + MAX_DELTA_PARTS
        && delta_docs < entries;
    serves_well.then_some((chosen, missing))
}

/// Loaded parts, each with the ordinal of each of its positions, and the
/// owners none of them holds.
type LoadedParts<'o> = (Vec<(Part, Vec<u32>)>, Vec<&'o Owner>);

const OFF: &str = "the index is built in each process, not stored";

impl IndexStore {
    /// The stored parts in `dir` (created, mode 0700, if missing). Err: why
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

    /// The stored parts that serve `owners`, each with the ordinal of each of
    /// its positions (the largest first), and the owners none holds. `None`:
    /// too little is stored, or a chosen part was refused (`warnings` says why).
    fn load_parts<'o>(
        &self,
        owners: &'o [Owner],
        entries: &[ToolEntry],
        warnings: &mut Vec<String>,
    ) -> Option<LoadedParts<'o>> {
        let listed = self.list(warnings);
        let (chosen, missing) = choose(listed, owners, entries.len())?;
        let mut parts = Vec::with_capacity(chosen.len() + 1);
        for (listed, serving) in chosen {
            let mut ordinal_of_position = vec![GONE; listed.header.docs];
            for ((_, at), owner) in listed.header.owners.iter().zip(&serving) {
                if let Some(owner) = owner {
                    for (&position, &ordinal) in at.iter().zip(&owner.ordinals) {
                        ordinal_of_position[position as usize] = ordinal;
                    }
                }
            }
            match self.load(&listed, &ordinal_of_position, entries) {
                Ok(part) => parts.push((part, ordinal_of_position)),
                Err(why) => {
                    warnings.push(why);
                    return None;
                }
            }
        }
        Some((parts, missing))
    }

    /// The part files in the folder (the most recently used first, at most
    /// [`MAX_FILES`]) whose header passes its check; the others are removed,
    /// with the reason in `warnings`.
    fn list(&self, warnings: &mut Vec<String>) -> Vec<Listed> {
        let Ok(listing) = std::fs::read_dir(&self.path) else {
            return Vec::new();
        };
        let mut names: Vec<((i64, i64), String)> = listing
            .flatten()
            .filter_map(|item| {
                let name = item.file_name().into_string().ok()?;
                let meta = item.metadata().ok()?;
                // Anything but a folder: a link or a FIFO in a part's place is refused below.
                (name.starts_with(PREFIX) && name.ends_with(SUFFIX) && !meta.is_dir())
                    .then(|| ((meta.mtime(), meta.mtime_nsec()), name))
            })
            .collect();
        names.sort_unstable_by(|a, b| b.cmp(a));
        names.truncate(MAX_FILES);
        let mut out = Vec::with_capacity(names.len());
        for (_, name) in names {
            let c_name = CString::new(name.as_str()).unwrap_or_default();
            let shown = self.path.join(&name);
            let read = cache_folder::open_regular(&self.dir, &c_name, libc::O_RDONLY, "the file")
                .and_then(|file| match file {
                    Some(file) => self.header(&file).map(|h| h.map(|h| (file, h))),
                    None => Ok(None),
                });
            match read {
                Ok(Some((file, (header_bytes, header)))) => out.push(Listed {
                    file,
                    name,
                    header_bytes,
                    header,
                }),
                Ok(None) => {}
                Err(why) => warnings.push(self.refuse(&c_name, &shown, &why)),
            }
        }
        out
    }

    /// A part file's header bytes and header, when its check is right.
    /// `Ok(None)`: another format's or engine version's (kept for it).
    fn header(&self, file: &File) -> Result<Option<(Vec<u8>, Header)>, String> {
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        if len > MAX_FILE_BYTES {
            return Err(format!("{len} bytes, more than {MAX_FILE_BYTES}"));
        }
        let mut head = [0u8; 12];
        file.read_exact_at(&mut head, 0)
            .map_err(|_| "truncated".to_string())?;
        if head[..8] != MAGIC {
            return Err("not a stored index part of this format".into());
        }
        let header_len = u32::from_le_bytes(head[8..].try_into().unwrap_or_default()) as u64;
        if header_len < HEADER_FIXED as u64 || 12 + header_len + 2 * CHECK as u64 > len {
            return Err("truncated".into());
        }
        let mut bytes = vec![0u8; 12 + header_len as usize + CHECK];
        file.read_exact_at(&mut bytes, 0)
            .map_err(|_| "truncated".to_string())?;
        let (signed, check) = bytes.split_at(12 + header_len as usize);
        if !self.checks(signed, check) {
            return Err("damaged, or written with another installation's key".into());
        }
        let header_bytes = signed[12..].to_vec();
        Ok(Header::decode(&header_bytes)?.map(|header| (header_bytes, header)))
    }

    /// Whether `check` is the keyed hash of `bytes`.
    fn checks(&self, bytes: &[u8], check: &[u8]) -> bool {
        let Ok(check) = <[u8; CHECK]>::try_from(check) else {
            return false;
        };
        // blake3::Hash compares in constant time.
        blake3::keyed_hash(&self.key, bytes) == blake3::Hash::from_bytes(check)
    }

    /// The part `listed` holds, read whole and checked, its positions mapped
    /// to `ordinal_of_position`. Err: refused (and removed) for the reason given.
    fn load(
        &self,
        listed: &Listed,
        ordinal_of_position: &[u32],
        entries: &[ToolEntry],
    ) -> Result<Part, String> {
        let c_name = CString::new(listed.name.as_str()).unwrap_or_default();
        let shown = self.path.join(&listed.name);
        let refuse = |why: &str| self.refuse(&c_name, &shown, why);
        let bytes =
            cache_folder::read_bounded(&listed.file, MAX_FILE_BYTES).map_err(|e| refuse(&e))?;
        let Some(at) = bytes.len().checked_sub(CHECK) else {
            return Err(refuse("truncated"));
        };
        let (signed, check) = bytes.split_at(at);
        if !self.checks(signed, check) {
            return Err(refuse(
                "damaged, or written with another installation's key",
            ));
        }
        let body_at = 12 + listed.header_bytes.len() + CHECK;
        if signed.get(12..12 + listed.header_bytes.len()) != Some(&listed.header_bytes[..])
            || signed.len() < body_at
        {
            return Err(refuse("changed while it was read"));
        }
        match decode(
            &signed[body_at..],
            listed.header.docs,
            ordinal_of_position,
            entries,
        ) {
            Ok(part) => {
                // Recently used: evicted last.
                // SAFETY: an open fd; a null times pointer means "now".
                unsafe { libc::futimens(listed.file.as_raw_fd(), std::ptr::null()) };
                Ok(part)
            }
            Err(why) => Err(refuse(&why)),
        }
    }

    /// Removes a refused file; the reason to report.
    fn refuse(&self, name: &CString, shown: &Path, why: &str) -> String {
        cache_folder::unlink_at(&self.dir, name);
        format!(
            "stored index part {} refused ({why}): its tools are indexed again",
            shown.display()
        )
    }

    /// Stores `part` with `header` (written aside, then renamed into place),
    /// then removes the least recently used files beyond the folder's bounds.
    fn save(&self, header: &Header, part: &Part) -> Result<(), String> {
        let header_bytes = header.encode()?;
        let name = file_name(&header_bytes);
        let shown = self.path.join(&name);
        let fail = |e: &dyn std::fmt::Display| format!("index cache {}: {e}", shown.display());
        let temp = cache_folder::temp_name(&name);
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let file = cache_folder::open_at(&self.dir, &temp, flags, 0o600).map_err(|e| fail(&e))?;
        // Written as it is hashed, without a copy of the part in memory.
        let mut sink = Sink::new(file, &self.key);
        let written = (|| -> Result<(), String> {
            let mut head = MAGIC.to_vec();
            put_u32(&mut head, header_bytes.len())?;
            head.extend_from_slice(&header_bytes);
            let check = blake3::keyed_hash(&self.key, &head);
            sink.put(&head)?;
            sink.put(check.as_bytes())?;
            write_body(part, &mut sink)?;
            sink.finish()
        })();
        let c_name = CString::new(name.as_str()).unwrap_or_default();
        let published = written.and_then(|()| {
            cache_folder::rename_at(&self.dir, &temp, &c_name).map_err(|e| e.to_string())
        });
        if let Err(e) = published {
            cache_folder::unlink_at(&self.dir, &temp);
            return Err(fail(&e));
        }
        self.evict(&name);
        Ok(())
    }

    /// Keeps at most [`MAX_FILES`] parts and [`MAX_TOTAL_BYTES`] (never
    /// `kept`, the one just written), least recently used removed first, and
    /// removes crashed writers' temporary files and the old format's files.
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
            let old = name.starts_with(OLD_PREFIX);
            if !name.starts_with(PREFIX) && !old {
                continue;
            }
            let Ok(meta) = item.metadata() else { continue };
            if !meta.file_type().is_file() || meta.uid() != cache_folder::effective_uid() {
                continue;
            }
            let remove = || {
                cache_folder::unlink_at(&self.dir, &CString::new(name.clone()).unwrap_or_default())
            };
            if name.ends_with(".tmp") {
                if now - meta.mtime() > STALE_TEMP_SECS {
                    remove();
                }
            } else if old && name.ends_with(SUFFIX) {
                remove();
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

/// A part's file name: named by its header (the owners and positions it holds).
fn file_name(header_bytes: &[u8]) -> String {
    let hash = blake3::hash(header_bytes);
    let hex: String = hash.as_bytes()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{PREFIX}{hex}{SUFFIX}")
}

/// A part file being written: its bytes go to the file and into its keyed
/// check, small pieces through a buffer, a tantivy file's bytes straight.
struct Sink {
    file: File,
    check: blake3::Hasher,
    buffer: Vec<u8>,
    len: u64,
}

impl Sink {
    const BUFFER: usize = 256 << 10;

    fn new(file: File, key: &[u8; 32]) -> Sink {
        Sink {
            file,
            check: blake3::Hasher::new_keyed(key),
            buffer: Vec::with_capacity(Sink::BUFFER),
            len: 0,
        }
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.len += bytes.len() as u64;
        if self.len + CHECK as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "more than the {MAX_FILE_BYTES} bytes a stored index part may have: not stored"
            ));
        }
        if bytes.len() >= Sink::BUFFER {
            self.flush()?;
            self.check.update(bytes);
            return self.file.write_all(bytes).map_err(|e| e.to_string());
        }
        if self.buffer.len() + bytes.len() > Sink::BUFFER {
            self.flush()?;
        }
        self.buffer.extend_from_slice(bytes);
        Ok(())
    }

    fn put_u32(&mut self, n: usize) -> Result<(), String> {
        let n = u32::try_from(n).map_err(|_| "a count beyond u32")?;
        self.put(&n.to_le_bytes())
    }

    fn flush(&mut self) -> Result<(), String> {
        self.check.update(&self.buffer);
        self.file
            .write_all(&self.buffer)
            .map_err(|e| e.to_string())?;
        self.buffer.clear();
        Ok(())
    }

    /// Writes what is buffered, then the check over everything written.
    fn finish(mut self) -> Result<(), String> {
        self.flush()?;
        let check = self.check.finalize();
        self.file
            .write_all(check.as_bytes())
            .map_err(|e| e.to_string())
    }
}

/// A part's body: field lengths, signatures, term keys and tantivy files.
fn write_body(part: &Part, sink: &mut Sink) -> Result<(), String> {
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
    for lens in &part.field_len {
        for len in lens {
            sink.put(&len.to_le_bytes())?;
        }
    }
    for signature in &part.signatures {
        for word in signature.words() {
            sink.put(&word.to_le_bytes())?;
        }
    }
    sink.put_u32(part.segments.len())?;
    for (_, _, terms) in &part.segments {
        sink.put_u32(terms.len())?;
        let mut sorted: Vec<u64> = terms.iter().copied().collect();
        sorted.sort_unstable();
        for term in sorted {
            sink.put(&term.to_le_bytes())?;
        }
    }
    let meta = directory
        .atomic_read(Path::new("meta.json"))
        .map_err(|e| e.to_string())?;
    let mut files = vec![(
        "meta.json".to_string(),
        tantivy::directory::OwnedBytes::new(meta),
    )];
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
        files.push((name, bytes));
    }
    sink.put_u32(files.len())?;
    for (name, bytes) in files {
        sink.put_u32(name.len())?;
        sink.put(name.as_bytes())?;
        sink.put(&(bytes.len() as u64).to_le_bytes())?;
        sink.put(bytes.as_slice())?;
    }
    Ok(())
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

/// The part a checked body of `docs` docs holds, its live positions' exact
/// keys from `entries` (`ordinal_of_position`).
fn decode(
    body: &[u8],
    docs: usize,
    ordinal_of_position: &[u32],
    entries: &[ToolEntry],
) -> Result<Part, String> {
    let mut reader = Reader { rest: body };
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
    let live = ordinal_of_position
        .iter()
        .enumerate()
        .filter(|(_, &o)| o != GONE)
        .map(|(p, &o)| (p as u32, &entries[o as usize]));
    Ok(Part {
        searcher,
        files: Some(directory),
        segments,
        field_len,
        signatures,
        exact_folded: exact_keys_at(live),
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

    /// `count` tools of 7 servers, in id order; `changes` put a variant in
    /// the description of the first tool of a server (by number).
    fn changed(count: usize, changes: &[(usize, &str)]) -> Vec<ToolEntry> {
        of_servers(count, 7, changes)
    }

    /// [`changed`] with tools of `servers` servers.
    fn of_servers(count: usize, servers: usize, changes: &[(usize, &str)]) -> Vec<ToolEntry> {
        let mut entries: Vec<ToolEntry> = (0..count)
            .map(|i| {
                let owner = format!("server{}", i % servers);
                let name = format!("{}_{i:04}", WORDS[i % WORDS.len()]);
                let variant = changes
                    .iter()
                    .find(|(server, _)| *server == i)
                    .map_or("", |c| c.1);
                ToolEntry::from(EntryFields {
                    id: format!("mcp:{owner}:{name}"),
                    source: Source::Mcp,
                    owner,
                    label: (i % 3 == 0).then(|| format!("Tool {i}")),
                    description: format!(
                        "Finds the {} {} for an account{variant}",
                        WORDS[(i * 5) % WORDS.len()],
                        WORDS[(i * 7 + 1) % WORDS.len()],
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

    /// `count` tools of 7 servers; `variant` in the first tool of server0.
    fn tools(count: usize, variant: &str) -> Vec<ToolEntry> {
        changed(count, &[(0, variant)])
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

    /// The part files in `dir`, oldest first.
    fn parts_in(dir: &Path) -> Vec<PathBuf> {
        let mut parts: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|f| {
                let name = f.file_name().to_string_lossy().into_owned();
                name.starts_with(PREFIX) && name.ends_with(SUFFIX)
            })
            .map(|f| (f.metadata().unwrap().modified().unwrap(), f.path()))
            .collect();
        parts.sort();
        parts.into_iter().map(|(_, p)| p).collect()
    }

    /// Everything ranking reads, per ordinal, and the results of a few searches.
    fn same_index(a: &SearchIndex, b: &SearchIndex, entries: &[ToolEntry]) {
        assert_eq!(a.data.field_len, b.data.field_len);
        assert_eq!(a.data.signatures, b.data.signatures);
        assert_eq!(a.data.avg_len, b.data.avg_len);
        assert_eq!(a.data.field_factor, b.data.field_factor);
        assert_eq!(a.data.doc_count, b.data.doc_count);
        for entry in entries.iter().step_by(7) {
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
            "account more",
            "finds the report",
            "nothing here",
        ] {
            let ranked = |index: &SearchIndex| {
                index
                    .search(query, 40, &all)
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
        let [path] = &parts_in(&dir)[..] else {
            panic!("one part")
        };
        let meta = std::fs::metadata(path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let (loaded, outcome) = stored(&entries, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Loaded));
        assert_eq!(loaded.part_count(), 1);
        same_index(&built, &first, &entries);
        same_index(&built, &loaded, &entries);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// One server changed since the index was stored: the other servers'
    /// tools are loaded, the changed server's indexed and stored as a part of
    /// its own, and the next process loads both. Ranking equals a full build's.
    #[test]
    fn a_changed_server_is_indexed_alone_and_stored_as_a_part() {
        let dir = scratch("changed");
        let entries = tools(700, "");
        stored(&entries, &dir);
        let changed = changed(700, &[(3, " and more")]);
        let (partly, outcome) = stored(&changed, &dir);
        assert_eq!(
            outcome,
            IndexCacheOutcome::of(IndexCacheState::LoadedInPart)
        );
        assert_eq!(partly.part_count(), 2);
        assert_eq!(parts_in(&dir).len(), 2);
        let built = build(&changed);
        same_index(&built, &partly, &changed);
        let (loaded, outcome) = stored(&changed, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Loaded));
        assert_eq!(loaded.part_count(), 2);
        same_index(&built, &loaded, &changed);
        // The catalog as it was is served by the first part alone.
        let (again, outcome) = stored(&entries, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Loaded));
        assert_eq!(again.part_count(), 1);
        same_index(&build(&entries), &again, &entries);
        // A server added, one removed: the rest loaded, the new one indexed.
        let mut grown = entries.clone();
        grown.retain(|e| e.owner != "server5");
        grown.extend(entries.iter().filter(|e| e.owner == "server5").map(|e| {
            ToolEntry::from(EntryFields {
                id: e.id.replace("server5", "server9"),
                owner: "server9".into(),
                ..EntryFields::clone(e)
            })
        }));
        grown.sort_by(|a, b| a.id.cmp(&b.id));
        let (partly, outcome) = stored(&grown, &dir);
        assert_eq!(outcome.state, IndexCacheState::LoadedInPart);
        same_index(&build(&grown), &partly, &grown);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Parts stored by processes with different catalogs serve a catalog that
    /// mixes their servers, with nothing indexed; one of them cut short is
    /// refused and its tools indexed again.
    #[test]
    fn parts_of_two_versions_mixed_serve_a_third_and_a_cut_one_is_refused() {
        let dir = scratch("mixed");
        stored(&of_servers(1200, 12, &[]), &dir);
        let before = parts_in(&dir);
        let (_, one) = stored(&of_servers(1200, 12, &[(1, " first")]), &dir);
        let [cut] = &parts_in(&dir)
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect::<Vec<_>>()[..]
        else {
            panic!("server1's part")
        };
        let cut = cut.clone();
        let (_, two) = stored(&of_servers(1200, 12, &[(2, " second")]), &dir);
        assert_eq!(
            (one.state, two.state),
            (IndexCacheState::LoadedInPart, IndexCacheState::LoadedInPart)
        );
        let both = of_servers(1200, 12, &[(1, " first"), (2, " second")]);
        let built = build(&both);
        let (mixed, outcome) = stored(&both, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Loaded));
        assert_eq!(mixed.part_count(), 3);
        same_index(&built, &mixed, &both);
        // Cut the part of server1's change short: refused, removed, everything indexed again.
        let bytes = std::fs::read(&cut).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let (rebuilt, outcome) = stored(&both, &dir);
        let warning = outcome.warning.clone().unwrap_or_default();
        assert!(
            warning.contains("refused") && warning.contains("indexed again"),
            "{outcome:?}"
        );
        assert!(!cut.exists(), "the cut part is removed");
        same_index(&built, &rebuilt, &both);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Parts of another catalog (other servers) serve nothing: the catalog is
    /// built whole; when more than a quarter of the stored part changed, too.
    #[test]
    fn parts_that_serve_too_little_are_not_used() {
        let dir = scratch("other");
        stored(&tools(700, ""), &dir);
        let other: Vec<ToolEntry> = tools(700, "")
            .iter()
            .map(|e| {
                ToolEntry::from(EntryFields {
                    id: e.id.replace("server", "host"),
                    owner: e.owner.replace("server", "host"),
                    ..EntryFields::clone(e)
                })
            })
            .collect();
        let (index, outcome) = stored(&other, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Saved));
        same_index(&build(&other), &index, &other);
        let most = changed(700, &[(0, " a"), (1, " b"), (2, " c")]);
        let (index, outcome) = stored(&most, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Saved));
        assert_eq!(index.part_count(), 1);
        same_index(&build(&most), &index, &most);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_small_catalog_is_not_stored() {
        let dir = scratch("small");
        let entries = tools(STORED_MIN_ENTRIES - 1, "");
        let (_, outcome) = stored(&entries, &dir);
        assert_eq!(outcome, IndexCacheOutcome::of(IndexCacheState::Off));
        assert!(!dir.exists() || parts_in(&dir).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Damage anywhere (a flipped byte in the header or the body, a cut,
    /// another installation's key, a link in its place) is refused with the
    /// reason, removed, rebuilt and stored again.
    #[test]
    fn a_damaged_or_foreign_stored_index_is_refused_and_rebuilt() {
        let dir = scratch("damaged");
        let entries = tools(300, "");
        let built = build(&entries);
        stored(&entries, &dir);
        let path = parts_in(&dir)[0].clone();
        let good = std::fs::read(&path).unwrap();
        type Damage<'a> = Box<dyn Fn() + 'a>;
        let flip = |at: usize| {
            let mut bytes = good.clone();
            bytes[at] ^= 0x40;
            std::fs::write(&path, bytes).unwrap();
        };
        let damage: Vec<(&str, Damage)> = vec![
            ("a flipped byte in the header", Box::new(|| flip(60))),
            (
                "a flipped byte in the body",
                Box::new(|| flip(good.len() / 2)),
            ),
            (
                "cut short",
                Box::new(|| std::fs::write(&path, &good[..good.len() / 3]).unwrap()),
            ),
            (
                "cut in the header",
                Box::new(|| std::fs::write(&path, &good[..20]).unwrap()),
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
            for part in parts_in(&dir) {
                std::fs::remove_file(part).unwrap();
            }
            damage();
            let (rebuilt, outcome) = stored(&entries, &dir);
            assert_eq!(outcome.state, IndexCacheState::Saved, "{what}: {outcome:?}");
            let warning = outcome.warning.unwrap_or_default();
            assert!(
                warning.contains("refused") && warning.contains("indexed again"),
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

    /// A file whose checks are right but whose content is not a part (written
    /// with the installation's key by other code) is refused too.
    #[test]
    fn a_checked_file_that_does_not_parse_is_refused() {
        let dir = scratch("parse");
        let entries = tools(300, "");
        let store = IndexStore::open(&dir).unwrap();
        let owners = owners_of(&entries);
        let all: Vec<&Owner> = owners.iter().collect();
        let positions: Vec<u32> = (0..300).collect();
        let good = Header::of(&all, &positions).encode().unwrap();
        let mut out_of_range = good.clone();
        let last = out_of_range.len() - 4;
        out_of_range[last..].copy_from_slice(&300u32.to_le_bytes());
        let files: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
            ("a header too short", good[..30].to_vec(), vec![]),
            ("a position out of range", out_of_range, vec![]),
            ("trailing header bytes", [&good[..], &[0]].concat(), vec![]),
            (
                "more tools than a catalog may have",
                [&good[..32], &u32::MAX.to_le_bytes(), &good[36..]].concat(),
                vec![],
            ),
            ("no body", good.clone(), vec![]),
            ("a truncated body", good.clone(), vec![1, 2, 3]),
        ];
        for (what, header, body) in files {
            let mut bytes = MAGIC.to_vec();
            bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&header);
            let check = blake3::keyed_hash(&store.key, &bytes);
            bytes.extend_from_slice(check.as_bytes());
            bytes.extend_from_slice(&body);
            let check = blake3::keyed_hash(&store.key, &bytes);
            bytes.extend_from_slice(check.as_bytes());
            let path = dir.join(file_name(&header));
            std::fs::write(&path, &bytes).unwrap();
            let (_, outcome) = stored(&entries, &dir);
            let warning = outcome.warning.unwrap_or_default();
            assert!(warning.contains("refused"), "{what}: {warning}");
            // Removed (the rebuilt catalog's own part may take its name).
            assert!(std::fs::read(&path).ok() != Some(bytes), "{what}: removed");
            for part in parts_in(&dir) {
                std::fs::remove_file(part).unwrap();
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_folder_keeps_the_most_recently_used_parts_only() {
        let dir = scratch("evict");
        let first = tools(260, "");
        stored(&first, &dir);
        // A file of the format before parts is removed at the next store.
        let old = dir.join("catalog-00112233445566778899aabbccddeeff.index");
        std::fs::write(&old, b"old").unwrap();
        for i in 0..MAX_FILES + 2 {
            // The first one, used again, is the most recent: kept.
            let (_, outcome) = stored(&first, &dir);
            assert_eq!(outcome.state, IndexCacheState::Loaded, "{i}");
            // Apart in time on file systems with coarse timestamps.
            std::thread::sleep(std::time::Duration::from_millis(20));
            // Other tools everywhere: a whole part each.
            let other = changed(260, &(0..7).map(|s| (s, "v")).collect::<Vec<_>>());
            let other: Vec<ToolEntry> = other
                .iter()
                .map(|e| {
                    ToolEntry::from(EntryFields {
                        description: format!("{} v{i}", e.description),
                        ..EntryFields::clone(e)
                    })
                })
                .collect();
            stored(&other, &dir);
        }
        assert_eq!(parts_in(&dir).len(), MAX_FILES);
        assert!(!old.exists(), "the old format's file is removed");
        let (_, outcome) = stored(&first, &dir);
        assert_eq!(
            outcome.state,
            IndexCacheState::Loaded,
            "the most recent kept"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_folder_others_may_write_is_not_used() {
        let dir = scratch("open");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = IndexStore::open(&dir).unwrap_err();
        assert!(err.contains("writable by group or others"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

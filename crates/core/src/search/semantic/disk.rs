//! The on-disk vector cache: one append-only file per model and token limit,
//! fixed-size records `key (32) | scale (4) | values (DIM) | check (4)`.
//! A gateway restarting with the same tools reads its vectors back instead of
//! recomputing them. Several processes may share the file: each batch is
//! appended with one `O_APPEND` write, and a reader skips any record whose
//! check does not match (a torn write) by resynchronizing byte by byte.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use tool_search_embed::DIM;

use super::vectors::{QVec, TOOL_TOKENS};

const KEY: usize = 32;
const RECORD: usize = KEY + 4 + DIM + 4;
/// The file stops growing here (~630k vectors); reads stop here too.
const MAX_FILE_BYTES: u64 = 256 << 20;

pub struct DiskCache {
    path: PathBuf,
}

impl DiskCache {
    /// The cache file for `model_digest` in `dir` (created, mode 0700, if missing).
    pub fn open(dir: &Path, model_digest: &str) -> Result<DiskCache, String> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("vector cache folder {}: {e}", dir.display()))?;
        let name = format!("minilm-{}-t{TOOL_TOKENS}.vectors", &model_digest[..model_digest.len().min(16)]);
        Ok(DiskCache { path: dir.join(name) })
    }

    /// The cached vectors among `wanted` (a missing or unreadable file: none).
    pub fn read(&self, wanted: &HashSet<[u8; 32]>) -> HashMap<[u8; 32], QVec> {
        let mut found = HashMap::new();
        let Ok(file) = File::open(&self.path) else { return found };
        let mut bytes = Vec::new();
        if file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).is_err() {
            return found;
        }
        let mut at = 0;
        while at + RECORD <= bytes.len() {
            let record = &bytes[at..at + RECORD];
            if !check_ok(record) {
                at += 1;
                continue;
            }
            let mut key = [0u8; KEY];
            key.copy_from_slice(&record[..KEY]);
            if wanted.contains(&key) {
                let scale = f32::from_le_bytes(record[KEY..KEY + 4].try_into().unwrap_or_default());
                let mut values = [0i8; DIM];
                for (out, &b) in values.iter_mut().zip(&record[KEY + 4..KEY + 4 + DIM]) {
                    *out = b as i8;
                }
                if scale.is_finite() && scale > 0.0 {
                    found.insert(key, QVec { scale, values });
                }
            }
            at += RECORD;
        }
        found
    }

    /// Appends `rows` in one write. A full file is left as it is.
    pub fn append(&self, rows: &[([u8; 32], QVec)]) -> Result<(), String> {
        if rows.is_empty() {
            return Ok(());
        }
        let size = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        if size + (rows.len() * RECORD) as u64 > MAX_FILE_BYTES {
            return Err(format!("vector cache {} is full ({MAX_FILE_BYTES} bytes)", self.path.display()));
        }
        let mut buffer = Vec::with_capacity(rows.len() * RECORD);
        for (key, row) in rows {
            let start = buffer.len();
            buffer.extend_from_slice(key);
            buffer.extend_from_slice(&row.scale.to_le_bytes());
            buffer.extend(row.values.iter().map(|&v| v as u8));
            let check = check_of(&buffer[start..]);
            buffer.extend_from_slice(&check);
        }
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&self.path)
            .map_err(|e| format!("vector cache {}: {e}", self.path.display()))?;
        file.write_all(&buffer).map_err(|e| format!("vector cache {}: {e}", self.path.display()))
    }
}

fn check_of(body: &[u8]) -> [u8; 4] {
    let hash = blake3::hash(body);
    let mut check = [0u8; 4];
    check.copy_from_slice(&hash.as_bytes()[..4]);
    check
}

fn check_ok(record: &[u8]) -> bool {
    check_of(&record[..RECORD - 4]) == record[RECORD - 4..]
}

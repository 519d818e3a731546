//! Ranking that learns from its own gateway: which tools the agents called,
//! successfully, after searching for what.
//!
//! A [`LearnedPrior`] keeps, per tool (by content digest, so a changed tool
//! starts cold), a small bag of the query words that led to a successful call
//! of it, with counts that halve every half-life. A search asks the prior for
//! tools whose bag is like its query (cosine between the query's words,
//! weighted by their rarity in the catalog, and the bag), and [`blend`] adds
//! a bounded bonus to those tools: `base + weight · confidence · similarity`,
//! where `base` is the hit's score over the top score (in [0, 1]), so:
//! - exact id / name matches stay first, untouched;
//! - a tool can gain at most `weight` (default [`DEFAULT_WEIGHT`]) of the top
//!   score, however often it is called: a tool without learning is passed only
//!   by tools that already scored at least `1 − weight` of it;
//! - a tool called for everything (a flooding server) has a bag spread over
//!   many words, so its similarity to any one query stays small, and below
//!   [`MIN_SIMILARITY`] it gains nothing;
//! - nothing learned matches the query: the ranking is exactly the unlearned one.
//!
//! Absence of a call is not evidence: a tool shown and passed over loses
//! nothing (it simply gains nothing). A failed or refused call teaches nothing.
//!
//! Priors are shared per (folder, scope) in a process ([`LearnedPrior::open`]),
//! kept in the cache folder ([`file`]), written in the background a moment
//! after a change.

mod file;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Duration;

use serde::Serialize;

use super::ScoredHit;
use crate::entry::EntryDigest;

/// Default bound of the learned bonus, as a share of the query's top score (chosen on the
/// replay bench, `bench/learning.mjs`: 0.5 / 0.75 / 1.0 gave +3.2 / +8.7 / +8.8 nDCG@10 in the
/// last half of the clean stream).
pub const DEFAULT_WEIGHT: f32 = 1.0;
/// Default half-life of what was learned.
pub const DEFAULT_HALF_LIFE_DAYS: f32 = 30.0;
/// Largest weight a caller may set (a bonus as large as the top score).
pub const MAX_WEIGHT: f32 = 1.0;
/// Below this cosine a learned tool gains nothing for the query.
pub const MIN_SIMILARITY: f32 = 0.3;
/// Tools a prior remembers; the least used are forgotten beyond it.
pub const MAX_TOOLS: usize = 10_000;
/// Words a tool's bag keeps; the least counted are dropped beyond it.
pub const MAX_TOOL_TERMS: usize = 32;
/// Distinct words, and (tool, word) pairs, a prior keeps: beyond either the
/// least used tools are forgotten (bounds memory whatever the words are).
pub const MAX_WORDS: usize = 60_000;
pub const MAX_PAIRS: usize = 200_000;
/// Words of a query a prior reads (the first distinct ones).
pub const MAX_QUERY_TERMS: usize = 24;
/// How deep a learned search looks in the unlearned ranking.
pub const LEARNED_DEPTH: usize = 100;
/// Decayed events at which a tool's confidence is one half.
const CONFIDENCE_HALF: f32 = 0.5;
/// A word whose count decays below this leaves the bag.
const MIN_COUNT: f32 = 0.02;
/// Changes are written this long after the first unwritten one.
const WRITE_DELAY: Duration = Duration::from_millis(500);

/// How a catalog's searches use a prior.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearningParams {
    /// Bound of the bonus as a share of the top score, in [0, MAX_WEIGHT].
    pub weight: f32,
    pub half_life_secs: f64,
}

impl Default for LearningParams {
    fn default() -> LearningParams {
        LearningParams {
            weight: DEFAULT_WEIGHT,
            half_life_secs: f64::from(DEFAULT_HALF_LIFE_DAYS) * 86_400.0,
        }
    }
}

/// A query as the prior reads it: its distinct words (hashed analyzed
/// terms) with weights, L2-normalized.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LearnedQuery {
    pub terms: Vec<(u32, f32)>,
}

impl LearnedQuery {
    /// `terms` (hash, weight) deduplicated (first wins), bounded, normalized.
    pub fn new(terms: impl IntoIterator<Item = (u32, f32)>) -> LearnedQuery {
        let mut out: Vec<(u32, f32)> = Vec::new();
        for (hash, weight) in terms {
            if out.len() >= MAX_QUERY_TERMS {
                break;
            }
            if weight.is_finite() && weight > 0.0 && !out.iter().any(|(h, _)| *h == hash) {
                out.push((hash, weight));
            }
        }
        let norm = out.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
        if norm > 0.0 {
            for (_, w) in out.iter_mut() {
                *w /= norm;
            }
        }
        LearnedQuery { terms: out }
    }

    /// `words`, equally weighted.
    pub fn uniform(words: &[String]) -> LearnedQuery {
        LearnedQuery::new(words.iter().map(|w| (term_hash(w), 1.0)))
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// The hash a prior keys an analyzed word by (FNV-1a, stable across
/// processes and builds).
pub fn term_hash(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.as_bytes() {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// One tool's learned part for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearnedScore {
    pub digest: EntryDigest,
    /// confidence · similarity, in [0, 1]: the bonus is `weight` times this.
    pub strength: f32,
    /// Cosine between the query and the tool's bag.
    pub similarity: f32,
    /// Successful calls learned, decayed to now.
    pub events: f32,
}

#[derive(Debug, Clone)]
struct ToolMemory {
    digest: EntryDigest,
    /// Decayed successful calls, as of `updated`.
    events: f32,
    /// Seconds since the Unix epoch of the last change.
    updated: u64,
    /// (word hash, decayed count as of `updated`).
    terms: Vec<(u32, f32)>,
    norm: f32,
}

impl ToolMemory {
    fn decay_to(&mut self, now: u64, half_life_secs: f64) {
        let factor = decay(now.saturating_sub(self.updated), half_life_secs);
        if factor < 1.0 {
            self.events *= factor;
            for (_, count) in self.terms.iter_mut() {
                *count *= factor;
            }
        }
        self.updated = self.updated.max(now);
    }

    fn refresh_norm(&mut self) {
        self.norm = self.terms.iter().map(|(_, c)| c * c).sum::<f32>().sqrt();
    }
}

fn decay(age_secs: u64, half_life_secs: f64) -> f32 {
    if half_life_secs <= 0.0 || !half_life_secs.is_finite() {
        return 1.0;
    }
    (0.5f64).powf(age_secs as f64 / half_life_secs) as f32
}

/// What a prior holds.
#[derive(Debug, Default, Clone)]
struct Memory {
    tools: Vec<ToolMemory>,
    by_digest: HashMap<EntryDigest, u32>,
    /// word hash → the tools whose bag holds it.
    postings: HashMap<u32, Vec<u32>>,
    /// Successful calls learned since the last reset.
    learned: u64,
    /// Outcomes that taught nothing (failed or refused calls).
    ignored: u64,
}

impl Memory {
    fn slot_of(&mut self, digest: EntryDigest, now: u64) -> usize {
        if let Some(&slot) = self.by_digest.get(&digest) {
            return slot as usize;
        }
        if self.tools.len() >= MAX_TOOLS {
            self.forget_least_used(now);
        }
        let slot = self.tools.len();
        self.tools.push(ToolMemory {
            digest,
            events: 0.0,
            updated: now,
            terms: Vec::new(),
            norm: 0.0,
        });
        self.by_digest.insert(digest, slot as u32);
        slot
    }

    /// Removes the tool with the fewest decayed events (the last slot moves
    /// into its place).
    fn forget_least_used(&mut self, now: u64) {
        if let Some(slot) = self.least_used(now, None) {
            self.remove(slot);
        }
    }

    /// The slot of the tool with the fewest decayed events, other than `except`.
    fn least_used(&self, now: u64, except: Option<EntryDigest>) -> Option<usize> {
        self.tools
            .iter()
            .enumerate()
            .filter(|(_, t)| Some(t.digest) != except)
            .map(|(i, t)| {
                let age = now.saturating_sub(t.updated);
                // Ordering by events · 2^(−age/τ) with one τ for all is ordering by
                // log2(events) − age/τ: no half-life needed to compare.
                (
                    i,
                    t.events.max(f32::MIN_POSITIVE).log2() as f64 - age as f64 / 86_400.0,
                )
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    fn remove(&mut self, slot: usize) {
        let terms = std::mem::take(&mut self.tools[slot].terms);
        for (hash, _) in terms {
            self.unpost(hash, slot as u32);
        }
        self.by_digest.remove(&self.tools[slot].digest);
        let last = self.tools.len() - 1;
        if slot != last {
            // The last tool takes the removed one's slot: rename it in its postings.
            let moved = self.tools[last].digest;
            for &(hash, _) in &self.tools[last].terms {
                if let Some(list) = self.postings.get_mut(&hash) {
                    for s in list.iter_mut() {
                        if *s == last as u32 {
                            *s = slot as u32;
                        }
                    }
                }
            }
            self.by_digest.insert(moved, slot as u32);
        }
        self.tools.swap_remove(slot);
    }

    fn unpost(&mut self, hash: u32, slot: u32) {
        if let Some(list) = self.postings.get_mut(&hash) {
            list.retain(|&s| s != slot);
            if list.is_empty() {
                self.postings.remove(&hash);
            }
        }
    }

    fn record(&mut self, digest: EntryDigest, query: &LearnedQuery, now: u64, half_life: f64) {
        let slot = self.slot_of(digest, now);
        let tool = &mut self.tools[slot];
        tool.decay_to(now, half_life);
        tool.events += 1.0;
        let mut added = Vec::new();
        for &(hash, _) in &query.terms {
            match tool.terms.iter_mut().find(|(h, _)| *h == hash) {
                Some((_, count)) => *count += 1.0,
                None => {
                    tool.terms.push((hash, 1.0));
                    added.push(hash);
                }
            }
        }
        // Words decayed to nothing leave; beyond the cap the least counted do
        // (among equal counts, the newer word).
        let mut dropped = Vec::new();
        tool.terms.retain(|&(hash, count)| {
            let keep = count >= MIN_COUNT;
            if !keep {
                dropped.push(hash);
            }
            keep
        });
        if tool.terms.len() > MAX_TOOL_TERMS {
            tool.terms.sort_by(|a, b| b.1.total_cmp(&a.1));
            for (hash, _) in tool.terms.drain(MAX_TOOL_TERMS..) {
                dropped.push(hash);
            }
        }
        // Sorted by word: a search finds a word's count by binary search.
        tool.terms.sort_unstable_by_key(|t| t.0);
        tool.refresh_norm();
        for hash in added {
            if !dropped.contains(&hash) {
                self.postings.entry(hash).or_default().push(slot as u32);
            }
        }
        for hash in dropped {
            // A word that was posted before this call (not one just added and dropped).
            self.unpost(hash, slot as u32);
        }
        self.learned += 1;
        self.keep_bounds(digest, now);
    }

    /// Forgets the least used tools (never `kept`) while over [`MAX_WORDS`] or [`MAX_PAIRS`].
    fn keep_bounds(&mut self, kept: EntryDigest, now: u64) {
        loop {
            let pairs: usize = self.tools.iter().map(|t| t.terms.len()).sum();
            if (self.postings.len() <= MAX_WORDS && pairs <= MAX_PAIRS) || self.tools.len() <= 1 {
                return;
            }
            let Some(slot) = self.least_used(now, Some(kept)) else {
                return;
            };
            self.remove(slot);
        }
    }

    fn score(&self, query: &LearnedQuery, now: u64, half_life: f64) -> Vec<LearnedScore> {
        // Dot products accumulated over the query words' postings (bags are sorted by word).
        let mut dot = vec![0f32; self.tools.len()];
        let mut touched: Vec<u32> = Vec::new();
        for &(hash, weight) in &query.terms {
            let Some(list) = self.postings.get(&hash) else {
                continue;
            };
            for &slot in list {
                let tool = &self.tools[slot as usize];
                if let Ok(at) = tool.terms.binary_search_by_key(&hash, |t| t.0) {
                    if dot[slot as usize] == 0.0 {
                        touched.push(slot);
                    }
                    dot[slot as usize] += weight * tool.terms[at].1;
                }
            }
        }
        let mut out = Vec::new();
        for slot in touched {
            let tool = &self.tools[slot as usize];
            if tool.norm <= 0.0 {
                continue;
            }
            let similarity = (dot[slot as usize] / tool.norm).clamp(0.0, 1.0);
            if similarity < MIN_SIMILARITY {
                continue;
            }
            let events = tool.events * decay(now.saturating_sub(tool.updated), half_life);
            let confidence = events / (events + CONFIDENCE_HALF);
            let strength = (confidence * similarity).clamp(0.0, 1.0);
            if strength > 0.0 {
                out.push(LearnedScore {
                    digest: tool.digest,
                    strength,
                    similarity,
                    events,
                });
            }
        }
        out
    }

    /// Estimated heap bytes: hash table buckets (key, value, control byte) at
    /// their capacity, vectors at theirs (at least 16 bytes an allocation).
    fn bytes(&self) -> usize {
        let alloc = |bytes: usize| if bytes == 0 { 0 } else { bytes.max(16) };
        let tools: usize = self
            .tools
            .iter()
            .map(|t| std::mem::size_of::<ToolMemory>() + alloc(t.terms.capacity() * 8))
            .sum();
        let tools =
            tools + (self.tools.capacity() - self.tools.len()) * std::mem::size_of::<ToolMemory>();
        let postings: usize = self
            .postings
            .values()
            .map(|l| alloc(l.capacity() * 4))
            .sum();
        tools
            + self.by_digest.capacity() * (16 + 4 + 1)
            + self.postings.capacity() * (4 + 24 + 1)
            + postings
    }
}

/// A prior's numbers, for `learningStatus()` and the CLI.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LearningStatus {
    pub scope: String,
    /// The file it is kept in; absent when it lives in memory only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Successful calls learned since the last reset (all time, not decayed).
    pub learned: u64,
    /// Outcomes that taught nothing: failed calls, calls the policy did not allow.
    pub ignored: u64,
    /// Tools with something learned.
    pub tools: usize,
    /// Estimated memory, bytes.
    pub bytes: usize,
    /// Why the file could not be read or written (the prior then lives in memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The learned prior of one scope (an agent, or the whole gateway), shared
/// by every catalog of the process that names the same folder and scope.
pub struct LearnedPrior {
    scope: String,
    dir: Option<PathBuf>,
    memory: RwLock<Memory>,
    /// Unwritten changes since the last write.
    dirty: Mutex<bool>,
    warning: Mutex<Option<String>>,
    me: Weak<LearnedPrior>,
}

type Registry = Mutex<HashMap<(Option<PathBuf>, String), Weak<LearnedPrior>>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Longest scope name.
pub const MAX_SCOPE_CHARS: usize = 200;

impl LearnedPrior {
    /// The process's prior of `scope` kept in `dir` (read from its file the
    /// first time; `None`: memory only). A file that cannot be read is set
    /// aside with a warning and learning starts empty.
    pub fn open(dir: Option<&Path>, scope: &str) -> Arc<LearnedPrior> {
        let key = (dir.map(Path::to_path_buf), scope.to_string());
        let mut priors = registry().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(prior) = priors.get(&key).and_then(Weak::upgrade) {
            return prior;
        }
        priors.retain(|_, weak| weak.strong_count() > 0);
        let (memory, warning) = match dir {
            Some(dir) => match file::load(dir, scope) {
                Ok(memory) => (memory.unwrap_or_default(), None),
                Err(why) => (Memory::default(), Some(why)),
            },
            None => (Memory::default(), None),
        };
        let prior = Arc::new_cyclic(|me| LearnedPrior {
            scope: scope.to_string(),
            dir: key.0.clone(),
            memory: RwLock::new(memory),
            dirty: Mutex::new(false),
            warning: Mutex::new(warning),
            me: me.clone(),
        });
        priors.insert(key, Arc::downgrade(&prior));
        prior
    }

    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The folder its file is kept in; `None`: memory only.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Learns that `digest`'s tool served `query` (a successful call after a
    /// search for it), at `now` (seconds since the Unix epoch).
    pub fn record(
        &self,
        digest: EntryDigest,
        query: &LearnedQuery,
        now: u64,
        params: &LearningParams,
    ) {
        if query.is_empty() {
            self.ignore();
            return;
        }
        self.memory
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .record(digest, query, now, params.half_life_secs);
        self.changed();
    }

    /// Counts an outcome that taught nothing.
    pub fn ignore(&self) {
        self.memory
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .ignored += 1;
        self.changed();
    }

    /// The learned tools like `query`, strongest first (unordered ties by digest).
    pub fn score(
        &self,
        query: &LearnedQuery,
        now: u64,
        params: &LearningParams,
    ) -> Vec<LearnedScore> {
        if query.is_empty() {
            return Vec::new();
        }
        let memory = self.memory.read().unwrap_or_else(|e| e.into_inner());
        let mut out = memory.score(query, now, params.half_life_secs);
        out.sort_by(|a, b| {
            b.strength
                .total_cmp(&a.strength)
                .then(a.digest.cmp(&b.digest))
        });
        out
    }

    /// Whether anything was learned for a word of `query` (cheap).
    pub fn knows_any(&self, query: &LearnedQuery) -> bool {
        let memory = self.memory.read().unwrap_or_else(|e| e.into_inner());
        !memory.postings.is_empty()
            && query
                .terms
                .iter()
                .any(|(h, _)| memory.postings.contains_key(h))
    }

    /// Forgets everything learned in this scope (and removes its file).
    pub fn reset(&self) -> Result<(), String> {
        *self.memory.write().unwrap_or_else(|e| e.into_inner()) = Memory::default();
        *self.dirty.lock().unwrap_or_else(|e| e.into_inner()) = false;
        match &self.dir {
            Some(dir) => file::remove(dir, &self.scope),
            None => Ok(()),
        }
    }

    pub fn status(&self) -> LearningStatus {
        let memory = self.memory.read().unwrap_or_else(|e| e.into_inner());
        LearningStatus {
            scope: self.scope.clone(),
            file: self
                .dir
                .as_ref()
                .map(|dir| dir.join(file::name(&self.scope)).display().to_string()),
            learned: memory.learned,
            ignored: memory.ignored,
            tools: memory.tools.len(),
            bytes: memory.bytes(),
            warning: self
                .warning
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    /// Writes unwritten changes now (on the calling thread: it may block).
    pub fn flush(&self) -> Result<(), String> {
        let Some(dir) = &self.dir else { return Ok(()) };
        {
            let mut dirty = self.dirty.lock().unwrap_or_else(|e| e.into_inner());
            if !*dirty {
                return Ok(());
            }
            *dirty = false;
        }
        let snapshot = self
            .memory
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let written = file::save(dir, &self.scope, &snapshot);
        *self.warning.lock().unwrap_or_else(|e| e.into_inner()) = written.as_ref().err().cloned();
        written
    }

    /// Marks a change and, with a folder, has the writer thread write it soon.
    fn changed(&self) {
        if self.dir.is_none() {
            return;
        }
        let mut dirty = self.dirty.lock().unwrap_or_else(|e| e.into_inner());
        if *dirty {
            return;
        }
        *dirty = true;
        drop(dirty);
        writer().schedule(self.me.clone());
    }
}

impl Drop for LearnedPrior {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Forgets every prior kept in `dir` (all scopes), in this process and on disk.
/// Returns how many files were removed.
pub fn reset_folder(dir: &Path) -> Result<usize, String> {
    for prior in open_in(dir) {
        prior.reset()?;
    }
    file::remove_all(dir)
}

/// The status of every prior kept in `dir`: read from the files, and for a
/// prior this process has open, as it is now (its latest changes may not be
/// written yet: the writer thread writes them a moment later).
pub fn folder_status(dir: &Path) -> Result<Vec<LearningStatus>, String> {
    let mut statuses = file::list(dir)?;
    let mut unwritten = Vec::new();
    for live in open_in(dir).iter().map(|prior| prior.status()) {
        match statuses.iter_mut().find(|s| s.scope == live.scope) {
            Some(status) => *status = live,
            None => unwritten.push(live),
        }
    }
    unwritten.sort_by(|a, b| a.scope.cmp(&b.scope));
    statuses.extend(unwritten);
    Ok(statuses)
}

/// The priors this process has open that are kept in `dir`.
fn open_in(dir: &Path) -> Vec<Arc<LearnedPrior>> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|((d, _), _)| d.as_deref() == Some(dir))
        .filter_map(|(_, weak)| weak.upgrade())
        .collect()
}

/// One thread per process writes priors a moment after their first unwritten change.
struct Writer {
    queue: Mutex<Vec<Weak<LearnedPrior>>>,
    wake: std::sync::Condvar,
}

fn writer() -> &'static Arc<Writer> {
    static WRITER: OnceLock<Arc<Writer>> = OnceLock::new();
    WRITER.get_or_init(|| {
        let writer = Arc::new(Writer {
            queue: Mutex::new(Vec::new()),
            wake: std::sync::Condvar::new(),
        });
        let thread = Arc::clone(&writer);
        let spawned = std::thread::Builder::new()
            .name("openclaw-learned".into())
            .spawn(move || thread.run());
        if spawned.is_err() {
            // No thread: priors are written when flushed or dropped.
        }
        writer
    })
}

impl Writer {
    fn schedule(&self, prior: Weak<LearnedPrior>) {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(prior);
        self.wake.notify_one();
    }

    fn run(&self) {
        loop {
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            while queue.is_empty() {
                queue = self.wake.wait(queue).unwrap_or_else(|e| e.into_inner());
            }
            drop(queue);
            std::thread::sleep(WRITE_DELAY);
            let due = std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()));
            for prior in due.iter().filter_map(Weak::upgrade) {
                let _ = prior.flush();
            }
        }
    }
}

/// `ranked` (the unlearned order; its first `exact` hits are exact id / name
/// matches) with the learned bonus added: each hit's `base` is its score over
/// the top non-exact score (clamped to [0, 1]), a learned tool gains
/// `weight · strength`, a learned tool not in `ranked` enters with base 0.
/// `learned`: (ordinal, strength) of searchable tools. The exact hits stay
/// first and in their order; the rest is ordered by base + bonus (ties keep
/// the unlearned order). Scores are rescaled to the top score's scale.
pub fn blend(
    ranked: Vec<ScoredHit>,
    exact: usize,
    learned: &[(usize, f32)],
    weight: f32,
) -> Vec<ScoredHit> {
    let weight = weight.clamp(0.0, MAX_WEIGHT);
    if learned.is_empty() || weight == 0.0 {
        return ranked;
    }
    let exact = exact.min(ranked.len());
    let mut out: Vec<ScoredHit> = ranked[..exact].to_vec();
    let rest = &ranked[exact..];
    let top = rest.first().map_or(1.0, |h| h.score);
    let top = if top.is_finite() && top > 0.0 {
        top
    } else {
        1.0
    };
    let mut scored: Vec<(f32, usize, ScoredHit)> = rest
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let base = if h.score.is_finite() {
                (h.score / top).clamp(0.0, 1.0)
            } else {
                0.0
            };
            (base, i, *h)
        })
        .collect();
    let position: std::collections::HashMap<usize, usize> = scored
        .iter()
        .enumerate()
        .map(|(i, (_, _, h))| (h.ordinal, i))
        .collect();
    for &(ordinal, strength) in learned {
        if out.iter().any(|h| h.ordinal == ordinal) {
            continue;
        }
        let bonus = weight * strength.clamp(0.0, 1.0);
        match position.get(&ordinal).map(|&i| &mut scored[i]) {
            Some((score, _, hit)) => {
                *score += bonus;
                if strength >= 0.5 {
                    hit.weak = false;
                }
            }
            None => {
                let position = scored.len();
                scored.push((
                    bonus,
                    position,
                    ScoredHit {
                        ordinal,
                        score: 0.0,
                        strength: 0.0,
                        weak: strength < 0.5,
                        needed_by: None,
                    },
                ));
            }
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    out.extend(scored.into_iter().map(|(score, _, mut hit)| {
        hit.score = score * top;
        hit
    }));
    out
}

#[cfg(test)]
mod tests;

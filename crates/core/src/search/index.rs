//! Building the in-RAM tantivy index and the side tables ranking needs.
//!
//! Text is analyzed by our own [`Analyzer`] and handed to tantivy as
//! space-joined terms (tantivy's whitespace tokenizer only splits them), so
//! index and query terms come from the same code. Postings
//! keep term frequencies (no positions); field lengths are kept here exactly
//! (tantivy's fieldnorms are quantized) for BM25F length normalization.

use foldhash::{HashMap, HashMapExt};
use std::sync::Arc;

use tantivy::directory::RamDirectory;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED,
};
use tantivy::{DocId, Index, ReloadPolicy, Searcher, SingleSegmentIndexWriter, TantivyDocument};

use super::analyze::Analyzer;
use super::fields::{FieldKind, RankingParams, FIELD_COUNT};
use super::params::param_text;
use super::postings::{MemoryPostings, SegmentPostings};
use super::signature::{signature, Signature};
use crate::entry::{ToolEntry, GONE};
use crate::error::{Error, Result};

/// Indexing memory budget per entry, and its bounds: tantivy sizes its term
/// table by the budget, and clearing a large one costs more than indexing a
/// changed server's few tools.
const WRITER_MEMORY_BYTES_PER_ENTRY: usize = 4 * 1024;
const WRITER_MEMORY_BYTES_MIN: usize = 1024 * 1024;
const WRITER_MEMORY_BYTES_MAX: usize = 64 * 1024 * 1024;
pub(super) const ORDINAL_FIELD: &str = "ordinal";

/// One segment's postings and its doc → ordinal map in this version.
pub struct SegmentTables {
    pub postings: SegmentPostings,
    pub ordinal_of_doc: Vec<u32>,
    /// How many of its docs are `GONE`.
    pub dead: u32,
    /// [`term_key`] of every term of the segment (any field).
    terms: Arc<foldhash::HashSet<u64>>,
}

/// One segment's postings, doc → position in the part, and the keys of its terms.
pub(super) type SegmentLookup = (SegmentPostings, Vec<u32>, Arc<foldhash::HashSet<u64>>);
/// A part's searcher (tantivy parts) and segments.
pub(super) type Segments = (Option<Searcher>, Vec<SegmentLookup>);

/// A term's key in a segment's term set.
pub fn term_key(text: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0).hash_one(text)
}

impl SegmentTables {
    /// False when no field of this segment has the term of `key`: a live
    /// catalog's small parts skip most query terms without a dictionary lookup.
    pub fn may_have(&self, key: u64) -> bool {
        self.terms.contains(&key)
    }

    /// This segment's doc → ordinal map when some of its docs are gone (a
    /// full build of this version would not count them); `None`: all live.
    pub fn live(&self) -> Option<&[u32]> {
        (self.dead > 0).then_some(self.ordinal_of_doc.as_slice())
    }
}

/// Entries indexed together: one tantivy index and the per-doc tables ranking
/// needs, by position in the part. Immutable; shared by every version of a
/// live catalog that still has entries in it, so a changed server costs
/// indexing its own tools only.
pub(super) struct Part {
    /// Keeps the segment readers valid (tantivy parts).
    pub(super) searcher: Option<Searcher>,
    /// A tantivy part's files, as written (what the stored index keeps).
    pub(super) files: Option<RamDirectory>,
    /// Per tantivy segment: readers per field, doc → position in the part,
    /// and the keys of its terms.
    pub(super) segments: Vec<SegmentLookup>,
    pub(super) field_len: Vec<[u16; FIELD_COUNT]>,
    pub(super) signatures: Vec<Signature>,
    /// Lowercased id or name → positions (ascending), each with the hash of
    /// the key as that tool spells it ([`spelled_hash`]).
    pub(super) exact_folded: HashMap<String, Vec<(u32, u64)>>,
}

impl Part {
    pub(super) fn len(&self) -> usize {
        self.field_len.len()
    }
}

/// How exactly a tool's id or name equals the trimmed query. Ordered: a tool
/// spelled as typed leads its case twins (`listUrl` before `listURL` for "listUrl").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Exact {
    #[default]
    No,
    /// Equal ignoring case.
    Folded,
    /// Equal as typed.
    Spelled,
}

impl Exact {
    pub fn is_exact(self) -> bool {
        self != Exact::No
    }
}

/// Lowercased id and name → positions of `entries` (ascending), with the
/// hash of each key as spelled. Made from the entries on every build and
/// load (never stored), so this hash need not be stable across versions.
pub(super) fn exact_keys(entries: &[&ToolEntry]) -> HashMap<String, Vec<(u32, u64)>> {
    exact_keys_at(entries.iter().enumerate().map(|(p, e)| (p as u32, *e)))
}

/// [`exact_keys`] of the entries at the positions given (ascending).
pub(super) fn exact_keys_at<'a>(
    entries: impl IntoIterator<Item = (u32, &'a ToolEntry)>,
) -> HashMap<String, Vec<(u32, u64)>> {
    let mut exact_folded: HashMap<String, Vec<(u32, u64)>> = HashMap::new();
    for (position, entry) in entries {
        for key in [&entry.id, &entry.name] {
            let keyed = (position, spelled_hash(key));
            let list = exact_folded.entry(key.to_lowercase()).or_default();
            if list.last() != Some(&keyed) {
                list.push(keyed);
            }
        }
    }
    exact_folded
}

/// The hash that tells a key spelled as typed from its case twins.
fn spelled_hash(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

/// A part as one version sees it: the ordinal of each of its positions, or `GONE`.
struct PartView {
    part: Arc<Part>,
    ordinal_of_position: Vec<u32>,
    live: usize,
}

/// A version's index: shared parts, remapped to this version's ordinals.
/// Everything a full build of the same entries would give (statistics over
/// live docs only), so ranking is identical. Immutable (Send + Sync).
pub struct IndexData {
    pub fields: [Field; FIELD_COUNT],
    parts: Vec<PartView>,
    /// (part, position) of each ordinal.
    location: Vec<(u32, u32)>,
    pub segments: Vec<SegmentTables>,
    /// Analyzed term count per ordinal and field (saturating).
    pub field_len: Vec<[u16; FIELD_COUNT]>,
    pub avg_len: [f32; FIELD_COUNT],
    /// `weight / (1 - b + b * len / avg)` per ordinal and field, for `params`.
    pub field_factor: Vec<[f32; FIELD_COUNT]>,
    /// The parameters `field_factor` was computed with.
    pub params: RankingParams,
    /// Name, label and description terms per ordinal, for redundancy checks.
    pub signatures: Vec<Signature>,
    pub doc_count: usize,
}

/// Delta parts (beyond the first, largest part) kept before they are merged into one.
pub(super) const MAX_DELTA_PARTS: usize = 4;

pub(super) fn schema() -> (Schema, [Field; FIELD_COUNT], Field) {
    let mut builder = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer("whitespace")
        .set_index_option(IndexRecordOption::WithFreqs)
        .set_fieldnorms(false);
    let options = TextOptions::default().set_indexing_options(indexing);
    let fields =
        FieldKind::ALL.map(|kind| builder.add_text_field(kind.tantivy_name(), options.clone()));
    let ordinal = builder.add_u64_field(ORDINAL_FIELD, INDEXED | FAST);
    (builder.build(), fields, ordinal)
}

/// The analyzed, space-joined text of one entry per field, and term counts.
fn analyze_entry(
    analyzer: &mut Analyzer,
    entry: &ToolEntry,
    out: &mut [String; FIELD_COUNT],
) -> [u16; FIELD_COUNT] {
    let params = param_text(entry.input_schema.as_deref());
    let mut lens = [0u16; FIELD_COUNT];
    for kind in FieldKind::ALL {
        let text: &str = match kind {
            FieldKind::Name => &entry.name,
            FieldKind::Label => entry.label.as_deref().unwrap_or(""),
            FieldKind::Description => &entry.description,
            FieldKind::ParamNames => &params.names,
            FieldKind::ParamDescriptions => &params.descriptions,
            FieldKind::Owner => &entry.owner,
        };
        let buffer = &mut out[kind as usize];
        buffer.clear();
        let count = analyzer.append_joined(text, buffer);
        lens[kind as usize] = count.min(u16::MAX as usize) as u16;
    }
    lens
}

/// BM25F per-field factors of one entry: weight over length normalization.
pub fn field_factors(
    lens: &[u16; FIELD_COUNT],
    avg_len: &[f32; FIELD_COUNT],
    params: &RankingParams,
) -> [f32; FIELD_COUNT] {
    let mut out = [0f32; FIELD_COUNT];
    for f in 0..FIELD_COUNT {
        let b = params.b[f];
        let norm = 1.0 - b + b * lens[f] as f32 / avg_len[f].max(1e-3);
        out[f] = params.weight[f] / norm.max(1e-3);
    }
    out
}

pub(super) fn internal(context: &str, err: impl std::fmt::Display) -> Error {
    Error::internal(format!("search index {context}: {err}"))
}

pub fn build(entries: &[ToolEntry], params: &RankingParams) -> Result<IndexData> {
    if entries.len() > u32::MAX as usize {
        return Err(Error::invalid_catalog("catalog too large to index"));
    }
    let part = build_part(&entries.iter().collect::<Vec<_>>(), PartKind::Segment)?;
    Ok(whole(part, entries.len(), params))
}

/// The index of a part holding all `doc_count` entries in ordinal order.
pub(super) fn whole(part: Part, doc_count: usize, params: &RankingParams) -> IndexData {
    let view = PartView {
        part: Arc::new(part),
        ordinal_of_position: (0..doc_count as u32).collect(),
        live: doc_count,
    };
    assemble(vec![view], doc_count, params)
}

/// The index of `doc_count` entries held by `parts`, each with the ordinal of
/// each of its positions (`GONE`: not in this catalog); the first part is the
/// large one (see [`derive`]).
pub(super) fn from_parts(
    parts: Vec<(Part, Vec<u32>)>,
    doc_count: usize,
    params: &RankingParams,
) -> IndexData {
    let views = parts
        .into_iter()
        .map(|(part, ordinal_of_position)| PartView {
            live: ordinal_of_position.iter().filter(|&&o| o != GONE).count(),
            part: Arc::new(part),
            ordinal_of_position,
        })
        .collect();
    assemble(views, doc_count, params)
}

/// The index of `entries` (a new version of `old`'s catalog), reusing `old`'s
/// parts: `reused[ordinal]` names the ordinal in `old` of an entry whose
/// indexed text is unchanged. Only the other entries are analyzed and
/// indexed (one new part). When replaced docs or parts pile up, the delta
/// parts are merged, or everything is rebuilt, so search cost stays flat.
pub fn derive(
    old: &IndexData,
    entries: &[ToolEntry],
    reused: &[Option<u32>],
    params: &RankingParams,
) -> Result<IndexData> {
    if entries.len() > u32::MAX as usize || reused.len() != entries.len() || old.parts.is_empty() {
        return build(entries, params);
    }
    let mut views: Vec<PartView> = old
        .parts
        .iter()
        .map(|v| PartView {
            part: Arc::clone(&v.part),
            ordinal_of_position: vec![GONE; v.part.len()],
            live: 0,
        })
        .collect();
    let mut fresh: Vec<u32> = Vec::new();
    for (ordinal, was) in reused.iter().enumerate() {
        match was.and_then(|o| old.location.get(o as usize)) {
            Some(&(part, position)) => {
                let view = &mut views[part as usize];
                view.ordinal_of_position[position as usize] = ordinal as u32;
                view.live += 1;
            }
            None => fresh.push(ordinal as u32),
        }
    }
    // The first part is the large one; rebuild once a quarter of it is gone
    // or the deltas have grown to a quarter of it.
    let base_len = views[0].part.len();
    let delta_live: usize = views[1..].iter().map(|v| v.live).sum::<usize>() + fresh.len();
    if views[0].live * 4 < base_len * 3 || delta_live * 4 > base_len {
        return build(entries, params);
    }
    let mut kept: Vec<PartView> = Vec::with_capacity(views.len() + 1);
    let mut deltas = views.into_iter();
    kept.extend(deltas.next());
    let mut deltas: Vec<PartView> = deltas.filter(|v| v.live > 0).collect();
    if deltas.len() + usize::from(!fresh.is_empty()) > MAX_DELTA_PARTS {
        for view in deltas.drain(..) {
            fresh.extend(
                view.ordinal_of_position
                    .iter()
                    .copied()
                    .filter(|&o| o != GONE),
            );
        }
        fresh.sort_unstable();
    }
    kept.extend(deltas);
    if !fresh.is_empty() {
        let part = build_part(
            &fresh
                .iter()
                .map(|&o| &entries[o as usize])
                .collect::<Vec<_>>(),
            PartKind::Memory,
        )?;
        let live = fresh.len();
        kept.push(PartView {
            part: Arc::new(part),
            ordinal_of_position: fresh,
            live,
        });
    }
    Ok(assemble(kept, entries.len(), params))
}

/// One entry's analyzed field texts, their term counts and its signature.
struct Analyzed {
    texts: [String; FIELD_COUNT],
    lens: [u16; FIELD_COUNT],
    signature: Signature,
}

fn analyzed(analyzer: &mut Analyzer, entry: &ToolEntry) -> Analyzed {
    let mut texts: [String; FIELD_COUNT] = Default::default();
    let lens = analyze_entry(analyzer, entry, &mut texts);
    let signature = signature(
        [FieldKind::Name, FieldKind::Label, FieldKind::Description]
            .map(|kind| texts[kind as usize].as_str()),
    );
    Analyzed {
        texts,
        lens,
        signature,
    }
}

/// Parts at least this large are analyzed on a second thread while this one
/// writes the index, when the caller allows it ([`with_second_thread`]):
/// analysis and tantivy's indexing each take about a third of a large first
/// build, and overlapping them shortens it by about that much. Smaller parts
/// (a server's update) stay on one thread: the spawn would cost more than it
/// saves.
const PIPELINE_MIN_ENTRIES: usize = 2048;

thread_local! {
    static SECOND_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `build` allowing large builds to use a second thread. For a caller
/// that is blocked on the build anyway (a synchronous constructor on the
/// gateway's event loop): the stall gets shorter. A build on a worker stays on
/// one thread, so the gateway's loop keeps the other core.
pub fn with_second_thread<T>(build: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SECOND_THREAD.set(self.0);
        }
    }
    let _restore = Restore(SECOND_THREAD.replace(true));
    build()
}

/// Whether the build on this thread may use a second thread.
pub fn second_thread_allowed() -> bool {
    SECOND_THREAD.get()
}

/// `items` mapped by `f`, in order: the second half on a second thread when
/// the build may use one ([`with_second_thread`]) and there are at least
/// [`PIPELINE_MIN_ENTRIES`] (parsing and checking a large catalog's records,
/// each on its own). With no thread to be had, all on this one.
pub fn map_in_halves<T: Send, U: Send>(mut items: Vec<T>, f: impl Fn(T) -> U + Sync) -> Vec<U> {
    if items.len() < PIPELINE_MIN_ENTRIES || !second_thread_allowed() {
        return items.into_iter().map(f).collect();
    }
    let back = std::sync::Mutex::new(Some(items.split_off(items.len() / 2)));
    let take = || back.lock().unwrap_or_else(|e| e.into_inner()).take();
    let f = &f;
    std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            .name("openclaw-records".into())
            .spawn_scoped(scope, || {
                take().map(|b| b.into_iter().map(f).collect::<Vec<U>>())
            });
        let mut out: Vec<U> = items.into_iter().map(f).collect();
        let rest = match other {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        };
        // The thread did not start: its half here.
        let rest = rest.or_else(|| take().map(|b| b.into_iter().map(f).collect()));
        out.extend(rest.unwrap_or_default());
        out
    })
}
/// Entries per hand-off between the two threads, and hand-offs in flight.
const PIPELINE_BATCH: usize = 128;
const PIPELINE_DEPTH: usize = 4;

/// What a part's postings are written to: a tantivy segment (a full build),
/// or memory (the parts a live catalog's updates add: see [`super::postings`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartKind {
    Segment,
    Memory,
}

/// Analyze and index `entries` (positions in order) into a new part.
pub(super) fn build_part(entries: &[&ToolEntry], kind: PartKind) -> Result<Part> {
    build_part_with(
        entries,
        entries.len() >= PIPELINE_MIN_ENTRIES && second_thread_allowed(),
        kind,
    )
}

/// The postings of a part being built.
enum PartWriter {
    // Both boxed: each is a few hundred bytes, moved around while the part is built.
    Segment {
        writer: Box<SingleSegmentIndexWriter>,
        files: RamDirectory,
        fields: [Field; FIELD_COUNT],
        ordinal: Field,
    },
    Memory(Box<MemoryPostings>),
}

impl PartWriter {
    fn new(kind: PartKind, entries: usize) -> Result<PartWriter> {
        if kind == PartKind::Memory {
            return Ok(PartWriter::Memory(Box::default()));
        }
        let (schema, fields, ordinal) = schema();
        // One segment written on this thread: deterministic doc ids and no writer
        // threads to start (a few milliseconds).
        let budget = (entries * WRITER_MEMORY_BYTES_PER_ENTRY)
            .clamp(WRITER_MEMORY_BYTES_MIN, WRITER_MEMORY_BYTES_MAX);
        let files = RamDirectory::create();
        let writer = Index::builder()
            .schema(schema)
            .single_segment_index_writer(files.clone(), budget)
            .map_err(|e| internal("writer", e))?;
        Ok(PartWriter::Segment {
            writer: Box::new(writer),
            files,
            fields,
            ordinal,
        })
    }

    /// Adds the doc at `position` (positions come in order).
    fn add(
        &mut self,
        position: u32,
        texts: &[String; FIELD_COUNT],
        lens: &[u16; FIELD_COUNT],
    ) -> Result<()> {
        match self {
            PartWriter::Segment {
                writer,
                fields,
                ordinal,
                ..
            } => {
                let mut doc = TantivyDocument::default();
                for f in 0..FIELD_COUNT {
                    if lens[f] > 0 {
                        doc.add_text(fields[f], &texts[f]);
                    }
                }
                doc.add_u64(*ordinal, u64::from(position));
                writer.add_document(doc).map_err(|e| internal("add", e))
            }
            PartWriter::Memory(memory) => {
                for f in 0..FIELD_COUNT {
                    if lens[f] > 0 {
                        memory.add(position, f, &texts[f]);
                    }
                }
                Ok(())
            }
        }
    }

    /// The part's segments, the searcher that keeps a tantivy one readable
    /// and its files.
    fn finish(self, docs: usize) -> Result<(Segments, Option<RamDirectory>)> {
        let (writer, fields, files) = match self {
            PartWriter::Segment {
                writer,
                fields,
                files,
                ..
            } => (writer, fields, files),
            PartWriter::Memory(mut memory) => {
                memory.shrink();
                let terms = memory.terms().map(term_key).collect();
                let positions = (0..docs as u32).collect();
                let postings = SegmentPostings::Memory(Arc::from(memory));
                return Ok(((None, vec![(postings, positions, Arc::new(terms))]), None));
            }
        };
        let index = writer.finalize().map_err(|e| internal("commit", e))?;
        Ok((open_segments(&index, fields, None)?, Some(files)))
    }
}

/// A finished tantivy index's searcher and its segments: readers per field,
/// doc → position (the ordinal column), and term keys (`terms`, per segment,
/// when known: the stored index keeps them; else read from the dictionaries).
pub(super) fn open_segments(
    index: &Index,
    fields: [Field; FIELD_COUNT],
    terms: Option<Vec<foldhash::HashSet<u64>>>,
) -> Result<Segments> {
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(|e| internal("reader", e))?;
    let searcher = reader.searcher();
    if terms
        .as_ref()
        .is_some_and(|t| t.len() != searcher.segment_readers().len())
    {
        return Err(internal(
            "segments",
            "count differs from the stored term sets",
        ));
    }
    let mut known = terms.map(Vec::into_iter);
    let mut segments = Vec::new();
    for segment in searcher.segment_readers() {
        let mut readers = Vec::with_capacity(FIELD_COUNT);
        for field in fields {
            readers.push(
                segment
                    .inverted_index(field)
                    .map_err(|e| internal("postings", e))?,
            );
        }
        let column = segment
            .fast_fields()
            .u64(ORDINAL_FIELD)
            .map_err(|e| internal("ordinals", e))?;
        let mut position_of_doc = Vec::with_capacity(segment.max_doc() as usize);
        for doc in 0..segment.max_doc() {
            let position = column
                .first(doc as DocId)
                .ok_or_else(|| internal("ordinals", "missing"))?;
            position_of_doc.push(position as u32);
        }
        let terms = match known.as_mut().and_then(Iterator::next) {
            Some(terms) => terms,
            None => {
                let mut terms = foldhash::HashSet::default();
                for reader in &readers {
                    let mut stream = reader.terms().stream().map_err(|e| internal("terms", e))?;
                    while stream.advance() {
                        if let Ok(text) = std::str::from_utf8(stream.key()) {
                            terms.insert(term_key(text));
                        }
                    }
                }
                terms
            }
        };
        let postings = SegmentPostings::Tantivy(readers);
        segments.push((postings, position_of_doc, Arc::new(terms)));
    }
    Ok((Some(searcher), segments))
}

fn build_part_with(entries: &[&ToolEntry], pipeline: bool, kind: PartKind) -> Result<Part> {
    let mut writer = PartWriter::new(kind, entries.len())?;
    let mut field_len = Vec::with_capacity(entries.len());
    let mut signatures = Vec::with_capacity(entries.len());
    let mut add = |analyzed: Analyzed| -> Result<()> {
        let position = field_len.len() as u32;
        let Analyzed {
            texts,
            lens,
            signature,
        } = analyzed;
        writer.add(position, &texts, &lens)?;
        field_len.push(lens);
        signatures.push(signature);
        Ok(())
    };

    let pipelined = pipeline
        && std::thread::scope(|scope| -> Option<Result<()>> {
            let (sender, receiver) = std::sync::mpsc::sync_channel::<Vec<Analyzed>>(PIPELINE_DEPTH);
            let analysis = std::thread::Builder::new()
                .name("openclaw-index".into())
                .spawn_scoped(scope, move || {
                    let mut analyzer = Analyzer::new();
                    for batch in entries.chunks(PIPELINE_BATCH) {
                        let batch = batch.iter().map(|e| analyzed(&mut analyzer, e)).collect();
                        // The writer stopped (an error): nothing more to do.
                        if sender.send(batch).is_err() {
                            return;
                        }
                    }
                });
            // No thread to be had (a process limit): one thread does both.
            analysis.ok()?;
            // Ends when the analysis thread is done (or has panicked: the scope
            // re-raises that, and the count check below never runs).
            for batch in receiver {
                for one in batch {
                    if let Err(e) = add(one) {
                        return Some(Err(e));
                    }
                }
            }
            Some(Ok(()))
        })
        .transpose()?
        .is_some();
    if !pipelined {
        // Nothing was added yet: too small to pipeline, or no second thread.
        let mut analyzer = Analyzer::new();
        for entry in entries {
            add(analyzed(&mut analyzer, entry))?;
        }
    }
    debug_assert_eq!(field_len.len(), entries.len());
    let ((searcher, segments), files) = writer.finish(entries.len())?;
    Ok(Part {
        searcher,
        files,
        segments,
        field_len,
        signatures,
        exact_folded: exact_keys(entries),
    })
}

/// One version from its part views: per-ordinal tables gathered from the
/// parts, statistics over live docs (integer length sums, so the average does
/// not depend on how docs are split into parts).
fn assemble(views: Vec<PartView>, doc_count: usize, params: &RankingParams) -> IndexData {
    let (_, fields, _) = schema();
    let mut location = vec![(0u32, 0u32); doc_count];
    let mut field_len = vec![[0u16; FIELD_COUNT]; doc_count];
    let mut signatures = vec![signature(std::iter::empty::<&str>()); doc_count];
    let mut len_sum = [0u64; FIELD_COUNT];
    let mut segments = Vec::new();
    for (p, view) in views.iter().enumerate() {
        for (position, &ordinal) in view.ordinal_of_position.iter().enumerate() {
            if ordinal == GONE {
                continue;
            }
            let o = ordinal as usize;
            location[o] = (p as u32, position as u32);
            let lens = view.part.field_len[position];
            for f in 0..FIELD_COUNT {
                len_sum[f] += u64::from(lens[f]);
            }
            field_len[o] = lens;
            signatures[o] = view.part.signatures[position].clone();
        }
        for (readers, position_of_doc, terms) in &view.part.segments {
            let ordinal_of_doc: Vec<u32> = position_of_doc
                .iter()
                .map(|&p| {
                    view.ordinal_of_position
                        .get(p as usize)
                        .copied()
                        .unwrap_or(GONE)
                })
                .collect();
            let dead = ordinal_of_doc.iter().filter(|&&o| o == GONE).count() as u32;
            segments.push(SegmentTables {
                postings: readers.clone(),
                ordinal_of_doc,
                dead,
                terms: Arc::clone(terms),
            });
        }
    }
    let mut avg_len = [1f32; FIELD_COUNT];
    for i in 0..FIELD_COUNT {
        if doc_count > 0 && len_sum[i] > 0 {
            avg_len[i] = (len_sum[i] as f64 / doc_count as f64) as f32;
        }
    }
    let field_factor = field_len
        .iter()
        .map(|lens| field_factors(lens, &avg_len, params))
        .collect();
    IndexData {
        fields,
        parts: views,
        location,
        segments,
        field_len,
        avg_len,
        field_factor,
        params: params.clone(),
        signatures,
        doc_count,
    }
}

impl IndexData {
    /// Ordinals (ascending) whose lowercased id or name is `folded`, each
    /// [`Exact::Spelled`] when its id or name is `spelled` as written, else
    /// [`Exact::Folded`].
    pub fn exact(&self, folded: &str, spelled: &str) -> Vec<(u32, Exact)> {
        let wanted = spelled_hash(spelled);
        let mut out: Vec<(u32, Exact)> = Vec::new();
        for view in &self.parts {
            if let Some(positions) = view.part.exact_folded.get(folded) {
                out.extend(positions.iter().filter_map(|&(p, hash)| {
                    let ordinal = view.ordinal_of_position[p as usize];
                    let how = if hash == wanted {
                        Exact::Spelled
                    } else {
                        Exact::Folded
                    };
                    (ordinal != GONE).then_some((ordinal, how))
                }));
            }
        }
        // Per ordinal its best match (an id and a name can both match), ascending.
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        out.dedup_by_key(|(ordinal, _)| *ordinal);
        out
    }

    /// How many parts this version reads (1 after a full build).
    pub fn part_count(&self) -> usize {
        self.parts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{EntryFields, Source};
    use serde_json::json;

    #[test]
    fn the_second_thread_is_allowed_only_inside_with_second_thread() {
        assert!(!second_thread_allowed());
        assert!(with_second_thread(second_thread_allowed));
        let nested =
            with_second_thread(|| with_second_thread(|| 1) + second_thread_allowed() as i32);
        let items: Vec<usize> = (0..5000).collect();
        let doubled: Vec<usize> = items.iter().map(|i| i * 2).collect();
        assert_eq!(map_in_halves(items.clone(), |i| i * 2), doubled);
        assert_eq!(
            with_second_thread(|| map_in_halves(items.clone(), |i| i * 2)),
            doubled,
            "in order, on two threads"
        );
        assert_eq!(nested, 2, "still allowed after a nested call returns");
        let panicked = std::panic::catch_unwind(|| with_second_thread(|| panic!("build failed")));
        assert!(panicked.is_err());
        assert!(!second_thread_allowed(), "restored after a panic");
    }

    /// A part whose postings are held in memory has, term by term and field by
    /// field, the docs and frequencies of the tantivy segment of the same entries.
    #[test]
    fn a_memory_part_holds_the_postings_of_a_segment() {
        let mut entries = crate::search::tests::sample();
        // Words repeated within a field: frequencies above one.
        entries.push(crate::search::tests::entry(
            Source::Mcp,
            "weather",
            "weather_weather",
            "Weather, weather and more weather: the weather report.",
        ));
        let refs: Vec<&ToolEntry> = entries.iter().collect();
        let segment = build_part_with(&refs, false, PartKind::Segment).unwrap();
        let memory = build_part_with(&refs, false, PartKind::Memory).unwrap();
        assert_eq!(segment.field_len, memory.field_len);
        assert_eq!(segment.signatures, memory.signatures);
        let fields = schema().1;
        let [(tantivy, positions, tantivy_terms)] = &segment.segments[..] else {
            panic!("one segment");
        };
        let [(held, held_positions, held_terms)] = &memory.segments[..] else {
            panic!("one segment");
        };
        assert_eq!(positions, held_positions);
        assert_eq!(tantivy_terms, held_terms);
        let SegmentPostings::Memory(map) = held else {
            panic!("a memory part");
        };
        let texts: Vec<&str> = map.terms().collect();
        assert!(texts.len() > 30, "{}", texts.len());
        for text in texts {
            for (f, &field) in fields.iter().enumerate() {
                let term = tantivy::schema::Term::from_field_text(field, text);
                let postings = |p: &SegmentPostings| p.postings(f, &term, text).collect::<Vec<_>>();
                assert_eq!(postings(tantivy), postings(held), "{text} in field {f}");
                assert_eq!(
                    tantivy.live_count(f, &term, text, None, u32::MAX),
                    held.live_count(f, &term, text, None, u32::MAX)
                );
            }
        }
    }

    /// The part two threads build equals the one one thread builds: the same
    /// docs in the same order, lengths, signatures, exact keys and terms.
    #[test]
    fn a_pipelined_part_equals_a_one_thread_part() {
        let entries: Vec<ToolEntry> = (0..700)
            .map(|i| {
                ToolEntry::from(EntryFields {
                    id: format!("mcp:server{}:tool_{i}", i % 7),
                    source: Source::Mcp,
                    owner: format!("server{}", i % 7),
                    name: format!("tool_{i}"),
                    label: (i % 3 == 0).then(|| format!("Tool {i}")),
                    description: format!("Fetches the {} report for item {i}", ["daily", "weekly", "sales"][i % 3]),
                    input_schema: Some(Arc::new(json!({
                        "type": "object",
                        "properties": { format!("field{}", i % 11): { "type": "string", "description": "a value" } }
                    }))),
                    output_schema: None,
                    mcp: None,
                })
            })
            .collect();
        let refs: Vec<&ToolEntry> = entries.iter().collect();
        let one = build_part_with(&refs, false, PartKind::Segment).unwrap();
        let two = build_part_with(&refs, true, PartKind::Segment).unwrap();
        assert_eq!(one.field_len, two.field_len);
        assert_eq!(one.signatures, two.signatures);
        let keys = |part: &Part| {
            let mut keys: Vec<_> = part
                .exact_folded
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            keys.sort();
            keys
        };
        assert_eq!(keys(&one), keys(&two));
        assert_eq!(one.segments.len(), two.segments.len());
        for (a, b) in one.segments.iter().zip(&two.segments) {
            assert_eq!(a.1, b.1, "doc -> position");
            let mut ta: Vec<_> = a.2.iter().collect();
            let mut tb: Vec<_> = b.2.iter().collect();
            ta.sort();
            tb.sort();
            assert_eq!(ta, tb, "terms");
        }
    }
}

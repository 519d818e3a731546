//! Building the in-RAM tantivy index and the side tables ranking needs.
//!
//! Text is analyzed by our own [`Analyzer`] and handed to tantivy as
//! space-joined terms (tantivy's whitespace tokenizer only splits them), so
//! index and query terms come from the same code. Postings
//! keep term frequencies (no positions); field lengths are kept here exactly
//! (tantivy's fieldnorms are quantized) for BM25F length normalization.

use foldhash::{HashMap, HashMapExt};
use std::sync::Arc;

use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED};
use tantivy::{DocId, Index, IndexWriter, Searcher, TantivyDocument};

use super::analyze::Analyzer;
use super::diversify::{signature, Signature};
use super::fields::{FieldKind, RankingParams, FIELD_COUNT};
use super::params::param_text;
use crate::catalog::ToolEntry;
use crate::error::{Error, Result};

/// Indexing memory budget for the single writer thread (tantivy's minimum is 15 MB).
const WRITER_MEMORY_BYTES: usize = 64 * 1024 * 1024;
const ORDINAL_FIELD: &str = "ordinal";

/// One segment's postings readers, one per field, and its doc → ordinal map.
pub struct SegmentTables {
    pub fields: Vec<Arc<tantivy::InvertedIndexReader>>,
    pub ordinal_of_doc: Vec<u32>,
}

/// Everything built once per catalog. Immutable afterwards (Send + Sync).
pub struct IndexData {
    /// Kept alive so the segment readers stay valid.
    _searcher: Searcher,
    pub fields: [Field; FIELD_COUNT],
    pub segments: Vec<SegmentTables>,
    /// Analyzed term count per ordinal and field (saturating).
    pub field_len: Vec<[u16; FIELD_COUNT]>,
    pub avg_len: [f32; FIELD_COUNT],
    /// `weight / (1 - b + b * len / avg)` per ordinal and field, for `params`.
    pub field_factor: Vec<[f32; FIELD_COUNT]>,
    /// The parameters `field_factor` was computed with.
    pub params: RankingParams,
    /// Lowercased id or name → ordinals (ascending).
    pub exact_folded: HashMap<String, Vec<u32>>,
    /// Name, label and description terms per ordinal, for redundancy checks.
    pub signatures: Vec<Signature>,
    pub doc_count: usize,
}

fn schema() -> (Schema, [Field; FIELD_COUNT], Field) {
    let mut builder = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer("whitespace")
        .set_index_option(IndexRecordOption::WithFreqs)
        .set_fieldnorms(false);
    let options = TextOptions::default().set_indexing_options(indexing);
    let fields = FieldKind::ALL.map(|kind| builder.add_text_field(kind.tantivy_name(), options.clone()));
    let ordinal = builder.add_u64_field(ORDINAL_FIELD, INDEXED | FAST);
    (builder.build(), fields, ordinal)
}

/// The analyzed, space-joined text of one entry per field, and term counts.
fn analyze_entry(analyzer: &mut Analyzer, entry: &ToolEntry, out: &mut [String; FIELD_COUNT]) -> [u16; FIELD_COUNT] {
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
pub fn field_factors(lens: &[u16; FIELD_COUNT], avg_len: &[f32; FIELD_COUNT], params: &RankingParams) -> [f32; FIELD_COUNT] {
    let mut out = [0f32; FIELD_COUNT];
    for f in 0..FIELD_COUNT {
        let b = params.b[f];
        let norm = 1.0 - b + b * lens[f] as f32 / avg_len[f].max(1e-3);
        out[f] = params.weight[f] / norm.max(1e-3);
    }
    out
}

fn internal(context: &str, err: impl std::fmt::Display) -> Error {
    Error::internal(format!("search index {context}: {err}"))
}

pub fn build(entries: &[ToolEntry], params: &RankingParams) -> Result<IndexData> {
    if entries.len() > u32::MAX as usize {
        return Err(Error::invalid_catalog("catalog too large to index"));
    }
    let (schema, fields, ordinal_field) = schema();
    let index = Index::create_in_ram(schema);
    // One thread: deterministic doc ids, and the gateway's other threads keep their cores.
    let mut writer: IndexWriter =
        index.writer_with_num_threads(1, WRITER_MEMORY_BYTES).map_err(|e| internal("writer", e))?;

    let mut analyzer = Analyzer::new();
    let mut texts: [String; FIELD_COUNT] = Default::default();
    let mut field_len = Vec::with_capacity(entries.len());
    let mut len_sum = [0f64; FIELD_COUNT];
    let mut exact_folded: HashMap<String, Vec<u32>> = HashMap::new();
    let mut signatures = Vec::with_capacity(entries.len());

    for (ordinal, entry) in entries.iter().enumerate() {
        let ordinal32 = ordinal as u32;
        let lens = analyze_entry(&mut analyzer, entry, &mut texts);
        let mut doc = TantivyDocument::default();
        for kind in FieldKind::ALL {
            let f = kind as usize;
            len_sum[f] += lens[f] as f64;
            if lens[f] > 0 {
                doc.add_text(fields[f], &texts[f]);
            }
        }
        doc.add_u64(ordinal_field, ordinal as u64);
        writer.add_document(doc).map_err(|e| internal("add", e))?;
        field_len.push(lens);
        signatures.push(signature(
            [FieldKind::Name, FieldKind::Label, FieldKind::Description].map(|kind| texts[kind as usize].as_str()),
        ));

        for key in [&entry.id, &entry.name] {
            push_unique(exact_folded.entry(key.to_lowercase()).or_default(), ordinal32);
        }
    }
    writer.commit().map_err(|e| internal("commit", e))?;
    drop(writer);


    let reader = index.reader().map_err(|e| internal("reader", e))?;
    let searcher = reader.searcher();
    let mut segments = Vec::new();
    for segment in searcher.segment_readers() {
        let mut readers = Vec::with_capacity(FIELD_COUNT);
        for field in fields {
            readers.push(segment.inverted_index(field).map_err(|e| internal("postings", e))?);
        }
        let column = segment.fast_fields().u64(ORDINAL_FIELD).map_err(|e| internal("ordinals", e))?;
        let mut ordinal_of_doc = Vec::with_capacity(segment.max_doc() as usize);
        for doc in 0..segment.max_doc() {
            let ordinal = column.first(doc as DocId).ok_or_else(|| internal("ordinals", "missing"))?;
            ordinal_of_doc.push(ordinal as u32);
        }
        segments.push(SegmentTables { fields: readers, ordinal_of_doc });
    }

    let doc_count = entries.len();
    let mut avg_len = [1f32; FIELD_COUNT];
    for i in 0..FIELD_COUNT {
        if doc_count > 0 && len_sum[i] > 0.0 {
            avg_len[i] = (len_sum[i] / doc_count as f64) as f32;
        }
    }
    let field_factor = field_len.iter().map(|lens| field_factors(lens, &avg_len, params)).collect();
    Ok(IndexData {
        _searcher: searcher,
        fields,
        segments,
        field_len,
        avg_len,
        field_factor,
        params: params.clone(),
        exact_folded,
        signatures,
        doc_count,
    })
}

fn push_unique(list: &mut Vec<u32>, ordinal: u32) {
    if list.last() != Some(&ordinal) {
        list.push(ordinal);
    }
}

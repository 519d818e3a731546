//! Building the in-RAM tantivy index and the side tables ranking needs.
//!
//! Text is analyzed by our own [`Analyzer`] and handed to tantivy
//! pre-tokenized, so index and query terms come from the same code. Postings
//! keep term frequencies (no positions); field lengths are kept here exactly
//! (tantivy's fieldnorms are quantized) for BM25F length normalization.

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED};
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{DocId, Index, IndexWriter, Searcher, TantivyDocument};

use super::analyze::{AnalyzedTerm, Analyzer};
use super::fields::{FieldKind, FIELD_COUNT};
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
    /// Exact id or name → ordinals (ascending).
    pub exact: HashMap<String, Vec<u32>>,
    /// Lowercased id or name → ordinals (ascending).
    pub exact_folded: HashMap<String, Vec<u32>>,
    pub doc_count: usize,
}

fn schema() -> (Schema, [Field; FIELD_COUNT], Field) {
    let mut builder = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_index_option(IndexRecordOption::WithFreqs)
        .set_fieldnorms(false);
    let options = TextOptions::default().set_indexing_options(indexing);
    let fields = FieldKind::ALL.map(|kind| builder.add_text_field(kind.tantivy_name(), options.clone()));
    let ordinal = builder.add_u64_field(ORDINAL_FIELD, INDEXED | FAST);
    (builder.build(), fields, ordinal)
}

fn pre_tokenized(terms: &[AnalyzedTerm]) -> PreTokenizedString {
    let tokens = terms
        .iter()
        .enumerate()
        .map(|(position, term)| Token {
            offset_from: 0,
            offset_to: 0,
            position,
            text: term.text.clone(),
            position_length: 1,
        })
        .collect();
    PreTokenizedString { text: String::new(), tokens }
}

/// The analyzed text of one entry, per field.
fn analyze_entry(analyzer: &mut Analyzer, entry: &ToolEntry) -> [Vec<AnalyzedTerm>; FIELD_COUNT] {
    let mut out: [Vec<AnalyzedTerm>; FIELD_COUNT] = Default::default();
    let params = param_text(entry.input_schema.as_deref());
    for kind in FieldKind::ALL {
        let text: &str = match kind {
            FieldKind::Name => &entry.name,
            FieldKind::Label => entry.label.as_deref().unwrap_or(""),
            FieldKind::Description => &entry.description,
            FieldKind::ParamNames => &params.names,
            FieldKind::ParamDescriptions => &params.descriptions,
            FieldKind::Owner => &entry.owner,
        };
        analyzer.terms(text, &mut out[kind as usize]);
    }
    out
}

fn internal(context: &str, err: impl std::fmt::Display) -> Error {
    Error::internal(format!("search index {context}: {err}"))
}

pub fn build(entries: &[ToolEntry]) -> Result<IndexData> {
    if entries.len() > u32::MAX as usize {
        return Err(Error::invalid_catalog("catalog too large to index"));
    }
    let (schema, fields, ordinal_field) = schema();
    let index = Index::create_in_ram(schema);
    // One thread: deterministic doc ids, and the gateway's other threads keep their cores.
    let mut writer: IndexWriter =
        index.writer_with_num_threads(1, WRITER_MEMORY_BYTES).map_err(|e| internal("writer", e))?;

    let mut analyzer = Analyzer::with_cache();
    let mut field_len = Vec::with_capacity(entries.len());
    let mut len_sum = [0f64; FIELD_COUNT];
    let mut exact: HashMap<String, Vec<u32>> = HashMap::new();
    let mut exact_folded: HashMap<String, Vec<u32>> = HashMap::new();

    for (ordinal, entry) in entries.iter().enumerate() {
        let ordinal32 = ordinal as u32;
        let analyzed = analyze_entry(&mut analyzer, entry);
        let mut lens = [0u16; FIELD_COUNT];
        let mut doc = TantivyDocument::default();
        for kind in FieldKind::ALL {
            let terms = &analyzed[kind as usize];
            lens[kind as usize] = terms.len().min(u16::MAX as usize) as u16;
            len_sum[kind as usize] += terms.len() as f64;
            if !terms.is_empty() {
                doc.add_pre_tokenized_text(fields[kind as usize], pre_tokenized(terms));
            }
        }
        doc.add_u64(ordinal_field, ordinal as u64);
        writer.add_document(doc).map_err(|e| internal("add", e))?;
        field_len.push(lens);

        for key in [&entry.id, &entry.name] {
            push_unique(exact.entry(key.clone()).or_default(), ordinal32);
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
    Ok(IndexData { _searcher: searcher, fields, segments, field_len, avg_len, exact, exact_folded, doc_count })
}

fn push_unique(list: &mut Vec<u32>, ordinal: u32) {
    if list.last() != Some(&ordinal) {
        list.push(ordinal);
    }
}

//! Where a segment's postings live: a tantivy segment (a full build), or a
//! plain map held in memory (the small parts a live catalog's updates add).
//!
//! Writing a tantivy segment costs about 8 MB of zeroed arenas whatever its
//! size (the columnar writer's six hash maps and the indexing context's two,
//! 1 MB pages each): a 30-tool server update spent most of its time faulting
//! that memory in. An update's part is small (the index is rebuilt once the
//! parts added since grow to a quarter of the catalog), so a map of term →
//! (doc, frequency) serves it, at the same scores; the full build keeps
//! tantivy's compact segment and term dictionary.

use std::sync::Arc;

use foldhash::HashMap;
use tantivy::postings::{Postings, TermInfo};
use tantivy::schema::{IndexRecordOption, Term};
use tantivy::{DocId, DocSet, TERMINATED};
use tantivy_fst::Automaton;

use super::fields::FIELD_COUNT;
use crate::entry::GONE;

/// Longest term tantivy indexes (longer ones it drops); the same rule here,
/// so both kinds of part hold the same terms.
const MAX_TERM_BYTES: usize = tantivy::tokenizer::MAX_TOKEN_LEN;

/// One segment's postings, per field.
#[derive(Clone)]
pub enum SegmentPostings {
    Tantivy(Vec<Arc<tantivy::InvertedIndexReader>>),
    Memory(Arc<MemoryPostings>),
}

/// One field's postings: term → (doc, term frequency), docs ascending.
type FieldPostings = HashMap<Box<str>, Vec<(DocId, u32)>>;

/// Postings per field of docs added in order.
#[derive(Default)]
pub struct MemoryPostings {
    fields: [FieldPostings; FIELD_COUNT],
}

impl MemoryPostings {
    /// Adds the space-joined analyzed text of one field of `doc` (docs are
    /// added in ascending order), split as tantivy's whitespace tokenizer does.
    pub fn add(&mut self, doc: DocId, field: usize, text: &str) {
        let map = &mut self.fields[field];
        for term in text
            .split(|c: char| c.is_ascii_whitespace())
            .filter(|t| !t.is_empty() && t.len() <= MAX_TERM_BYTES)
        {
            let list = match map.get_mut(term) {
                Some(list) => list,
                None => map.entry(Box::from(term)).or_default(),
            };
            match list.last_mut() {
                Some((last, freq)) if *last == doc => *freq += 1,
                _ => list.push((doc, 1)),
            }
        }
    }

    /// Every distinct term of any field.
    pub fn terms(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().flat_map(|map| map.keys().map(|t| &**t))
    }

    /// Drops the spare capacity the build left.
    pub fn shrink(&mut self) {
        for map in &mut self.fields {
            map.values_mut().for_each(Vec::shrink_to_fit);
            map.shrink_to_fit();
        }
    }
}

impl SegmentPostings {
    /// The postings of `text` (`term`: the same text as field `field`'s
    /// tantivy term) as (doc, term frequency), docs ascending. An iterator,
    /// not a callback: ranking's innermost loop keeps its body in one place
    /// (a callback called from both arms was not inlined, +5% per search).
    pub fn postings(&self, field: usize, term: &Term, text: &str) -> PostingsIter<'_> {
        match self {
            SegmentPostings::Tantivy(readers) => {
                match readers[field].read_postings(term, IndexRecordOption::WithFreqs) {
                    Ok(Some(postings)) => PostingsIter::Tantivy(postings),
                    _ => PostingsIter::Memory([].iter()),
                }
            }
            SegmentPostings::Memory(memory) => PostingsIter::Memory(
                memory.fields[field]
                    .get(text)
                    .map_or(&[][..], |list| list.as_slice())
                    .iter(),
            ),
        }
    }

    /// How many docs having `text` in field `field` are live, counted up to
    /// `limit`. `live`: doc → ordinal ([`GONE`]: a replaced tool); `None`: all live.
    pub fn live_count(
        &self,
        field: usize,
        term: &Term,
        text: &str,
        live: Option<&[u32]>,
        limit: u32,
    ) -> u32 {
        match self {
            SegmentPostings::Tantivy(readers) => match readers[field].get_term_info(term) {
                Ok(Some(info)) => tantivy_live_count(&readers[field], &info, live, limit),
                _ => 0,
            },
            SegmentPostings::Memory(memory) => memory.fields[field]
                .get(text)
                .map_or(0, |list| memory_live_count(list, live, limit)),
        }
    }

    /// The terms of field `field` that `automaton` accepts, with their live
    /// doc counts (see [`Self::live_count`]): `each(term, count)`.
    pub fn for_each_match<A: Automaton>(
        &self,
        field: usize,
        automaton: &A,
        live: Option<&[u32]>,
        mut each: impl FnMut(&str, u32),
    ) where
        A::State: Clone,
    {
        match self {
            SegmentPostings::Tantivy(readers) => {
                let reader = &readers[field];
                let Ok(mut stream) = reader.terms().search(automaton).into_stream() else {
                    return;
                };
                while stream.advance() {
                    let Ok(term) = std::str::from_utf8(stream.key()) else {
                        continue;
                    };
                    each(
                        term,
                        tantivy_live_count(reader, stream.value(), live, u32::MAX),
                    );
                }
            }
            SegmentPostings::Memory(memory) => {
                for (term, list) in &memory.fields[field] {
                    if accepts(automaton, term.as_bytes()) {
                        each(term, memory_live_count(list, live, u32::MAX));
                    }
                }
            }
        }
    }
}

/// One term's postings in either kind of part: (doc, term frequency).
// Lives on the stack for one term's walk; boxing tantivy's decoder would
// allocate per lookup.
#[allow(clippy::large_enum_variant)]
pub enum PostingsIter<'a> {
    Tantivy(tantivy::postings::SegmentPostings),
    Memory(std::slice::Iter<'a, (DocId, u32)>),
}

impl Iterator for PostingsIter<'_> {
    type Item = (DocId, u32);

    #[inline]
    fn next(&mut self) -> Option<(DocId, u32)> {
        match self {
            PostingsIter::Tantivy(postings) => {
                let doc = postings.doc();
                if doc == TERMINATED {
                    return None;
                }
                let freq = postings.term_freq();
                postings.advance();
                Some((doc, freq))
            }
            PostingsIter::Memory(list) => list.next().copied(),
        }
    }
}

fn is_live(live: Option<&[u32]>, doc: DocId) -> bool {
    live.is_none_or(|ordinals| ordinals.get(doc as usize).is_some_and(|&o| o != GONE))
}

fn tantivy_live_count(
    reader: &tantivy::InvertedIndexReader,
    info: &TermInfo,
    live: Option<&[u32]>,
    limit: u32,
) -> u32 {
    if live.is_none() {
        return info.doc_freq.min(limit);
    }
    let Ok(mut postings) = reader.read_postings_from_terminfo(info, IndexRecordOption::Basic)
    else {
        return 0;
    };
    let mut count = 0;
    let mut doc = postings.doc();
    while doc != TERMINATED && count < limit {
        count += u32::from(is_live(live, doc));
        doc = postings.advance();
    }
    count
}

fn memory_live_count(list: &[(DocId, u32)], live: Option<&[u32]>, limit: u32) -> u32 {
    let live = list.iter().filter(|&&(doc, _)| is_live(live, doc));
    live.take(limit as usize).count() as u32
}

/// Whether `automaton` accepts `bytes` (what a term dictionary's search yields).
fn accepts(automaton: &impl Automaton, bytes: &[u8]) -> bool {
    let mut state = automaton.start();
    for &byte in bytes {
        if !automaton.can_match(&state) {
            return false;
        }
        state = automaton.accept(&state, byte);
    }
    automaton.is_match(&state)
}

//! Typo tolerance for tool names: a query word that no field of any tool
//! contains ("wether", "forcast") is joined by the words of tool names and
//! owners one edit away from it (insertion, deletion, substitution or
//! transposition). Words are compared as stems. A correction counts as a
//! typed word (literal tier): it is the best reading of what was typed.
//! Candidates come from the whole catalog, not only the policy-allowed part.
//!
//! Only unknown words of at least `MIN_TYPO_CHARS` are corrected, and the
//! first letter must be right (typos rarely hit it, and it confines the walk
//! of the term dictionaries to one subtree: a few microseconds a word instead
//! of tens).

use tantivy::query::{DfaWrapper, FuzzyTermQuery};
use tantivy::schema::Term;
use tantivy_fst::Automaton;

use super::fields::{FieldKind, RankingParams, FIELD_COUNT};
use super::index::IndexData;
use super::query::{QueryPlan, QueryTerm};

/// Shorter words are too ambiguous at one edit ("get" → "set", "net", ...).
pub const MIN_TYPO_CHARS: usize = 5;
/// Most unknown words corrected per query.
const MAX_CORRECTED_WORDS: usize = 2;
/// Fields whose words a typo is corrected to.
const NAME_FIELDS: [FieldKind; 2] = [FieldKind::Name, FieldKind::Owner];
/// Most words added for one unknown word.
const MAX_CANDIDATES: usize = 3;

/// Add name-word corrections for the plan's unknown literal words.
pub fn correct(data: &IndexData, plan: &mut QueryPlan, params: &RankingParams) {
    if params.typo_weight <= 0.0 {
        return;
    }
    let mut corrected = 0usize;
    for i in 0..plan.terms.len() {
        let term = &plan.terms[i];
        if corrected == MAX_CORRECTED_WORDS {
            break;
        }
        if !term.literal || term.text.chars().count() < MIN_TYPO_CHARS || is_known(data, &term.text)
        {
            continue;
        }
        corrected += 1;
        let clauses = term.clauses;
        for word in words_one_edit_away(data, &term.text) {
            match plan.terms.iter_mut().find(|t| t.text == word) {
                Some(existing) => existing.clauses |= clauses,
                None => plan.terms.push(QueryTerm {
                    text: word,
                    weight: params.typo_weight,
                    literal: true,
                    clauses,
                }),
            }
        }
    }
}

/// Whether any field of any (live) tool contains `text`.
fn is_known(data: &IndexData, text: &str) -> bool {
    data.segments.iter().any(|segment| {
        (0..FIELD_COUNT).any(|f| {
            let term = Term::from_field_text(data.fields[f], text);
            segment
                .postings
                .live_count(f, &term, text, segment.live(), 1)
                > 0
        })
    })
}

/// Name, label and owner words within one edit of `text`, in most tools
/// first (ties by word), at most `MAX_CANDIDATES`.
fn words_one_edit_away(data: &IndexData, text: &str) -> Vec<String> {
    // The automaton depends on the text only: build it once for every field.
    let probe = Term::from_field_text(data.fields[FieldKind::Name as usize], text);
    let Ok(dfa) = FuzzyTermQuery::new(probe, 1, true).automaton() else {
        return Vec::new();
    };
    let Some(&first) = text.as_bytes().first() else {
        return Vec::new();
    };
    let automaton = SameFirstByte { dfa: &dfa, first };
    let mut found: Vec<(String, u32)> = Vec::new();
    for kind in NAME_FIELDS {
        for segment in &data.segments {
            // Docs of replaced tools do not count (a full build would not have them).
            let live = segment.live();
            segment
                .postings
                .for_each_match(kind as usize, &automaton, live, |word, df| {
                    if df == 0 {
                        return;
                    }
                    match found.iter_mut().find(|(w, _)| w == word) {
                        Some((_, total)) => *total += df,
                        None => found.push((word.to_string(), df)),
                    }
                });
        }
    }
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    found
        .into_iter()
        .take(MAX_CANDIDATES)
        .map(|(word, _)| word)
        .collect()
}

/// The edit-distance automaton, restricted to words that start with `first`.
struct SameFirstByte<'a> {
    dfa: &'a DfaWrapper,
    first: u8,
}

impl Automaton for SameFirstByte<'_> {
    /// The DFA's state and whether a byte was read; None once the first byte differed.
    type State = Option<(u32, bool)>;

    fn start(&self) -> Self::State {
        Some((self.dfa.start(), false))
    }

    fn is_match(&self, state: &Self::State) -> bool {
        state.is_some_and(|(s, _)| self.dfa.is_match(&s))
    }

    fn can_match(&self, state: &Self::State) -> bool {
        state.is_some_and(|(s, _)| self.dfa.can_match(&s))
    }

    fn accept(&self, state: &Self::State, byte: u8) -> Self::State {
        let (s, started) = (*state)?;
        if !started && byte != self.first {
            return None;
        }
        Some((self.dfa.accept(&s, byte), true))
    }
}

//! Text analysis shared by indexing and querying, so both sides agree on terms.
//!
//! Pipeline: split into words (Unicode alphanumerics; `_`, `-`, `.`, `/` and
//! `:` glue identifier parts) -> split identifiers (camelCase, acronyms,
//! snake_case, kebab-case, letter/digit boundaries) -> lowercase -> drop
//! stopwords -> Snowball English stem (tantivy's `stemmer` feature).
//! An identifier with several parts also yields its joined form
//! (`create_issue` -> `createissue`), so a query that spells the identifier
//! matches it more strongly than one that merely shares its parts.
//! CJK runs (no spaces between words) become overlapping bigrams.
//! Latin diacritics and full-width forms are folded (`météo` -> `meteo`, see
//! `fold`): the folded word is the term; a word whose spelling folding
//! changed also yields its exact spelling as a second term
//! ([`TermKind::ExactSpelling`]), which ranks a request's own spelling first
//! without making a request typed without accents miss.
//! Terms never contain whitespace, so the index stores them space-joined.

use foldhash::{HashMap, HashMapExt};

use tantivy::tokenizer::{Language, RawTokenizer, Stemmer, TextAnalyzer, TokenStream};

use super::fold::Folder;
use super::stopwords::is_stopword;

/// Longest token kept (bytes); longer runs are noise (hashes, base64).
const MAX_TOKEN_BYTES: usize = 40;
/// Joined identifier forms are only emitted for identifiers of at most this many parts.
const MAX_COMPOUND_PARTS: usize = 6;
/// Memoized stems per analyzer (bounds memory on hostile vocabularies).
const MAX_CACHED_STEMS: usize = 100_000;

/// What an analyzed term stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TermKind {
    /// A word (folded, stemmed) or a CJK bigram.
    Word,
    /// The joined form of a multi-part identifier (`createissu`).
    Joined,
    /// The exact (unfolded) spelling of the word just before it, when folding
    /// changed it: matched as a bonus, never counted as a word of its own.
    ExactSpelling,
}

/// The terms of one lowercased identifier part.
struct PartTerms {
    /// The folded word's stem.
    term: String,
    /// The unfolded word's stem, when folding changed the stem.
    exact: Option<String>,
}

/// Stateful analyzer (the stemmer needs `&mut`) with a stem cache and
/// reusable buffers: create one per build or per thread, not per word.
pub struct Analyzer {
    stemmer: TextAnalyzer,
    folder: Folder,
    /// Lowercased word → its terms, or None for a word that is dropped
    /// (stopword, single letter): one lookup decides both.
    cache: HashMap<String, Option<PartTerms>>,
    parts: Vec<(usize, usize)>,
    lower: String,
    joined: String,
    folded: String,
}

impl Analyzer {
    pub fn new() -> Analyzer {
        Analyzer {
            stemmer: TextAnalyzer::builder(RawTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
            folder: Folder::new(),
            cache: HashMap::new(),
            parts: Vec::new(),
            lower: String::new(),
            joined: String::new(),
            folded: String::new(),
        }
    }

    /// Stem one lowercased word (not memoized; for tables built once).
    pub fn stem(&mut self, word: &str) -> String {
        let mut stream = self.stemmer.token_stream(word);
        if stream.advance() {
            stream.token().text.clone()
        } else {
            word.to_string()
        }
    }

    /// The terms of one lowercased identifier part: None if it is dropped.
    fn part_terms(&mut self, word: &str) -> Option<&PartTerms> {
        if !self.cache.contains_key(word) {
            let mut folded = std::mem::take(&mut self.folded);
            let changed = self.folder.fold_into(word, &mut folded);
            let base = if changed { folded.as_str() } else { word };
            let terms = if keep_part(base) {
                let term = self.stem(base);
                let exact = if changed { Some(self.stem(word)) } else { None };
                Some(PartTerms {
                    exact: exact.filter(|exact| *exact != term),
                    term,
                })
            } else {
                None
            };
            self.folded = folded;
            if self.cache.len() >= MAX_CACHED_STEMS {
                self.cache.clear();
            }
            self.cache.insert(word.to_string(), terms);
        }
        self.cache.get(word).and_then(|t| t.as_ref())
    }

    /// The stem of a joined identifier, folded (never dropped as a stopword).
    fn joined_term(&mut self, word: &str) -> String {
        match self.part_terms(word) {
            Some(terms) => terms.term.clone(),
            None => {
                let folded = self.folder.fold(word);
                self.stem(&folded)
            }
        }
    }

    /// Analyze `text`, calling `sink(term, kind)` for each term in order.
    pub fn analyze(&mut self, text: &str, sink: &mut dyn FnMut(&str, TermKind)) {
        let mut ident_start: Option<usize> = None;
        let mut cjk_start: Option<usize> = None;
        for (i, c) in text.char_indices() {
            if is_cjk(c) {
                if let Some(start) = ident_start.take() {
                    self.identifier(&text[start..i], sink);
                }
                cjk_start.get_or_insert(i);
                continue;
            }
            if let Some(start) = cjk_start.take() {
                cjk_bigrams(&text[start..i], sink);
            }
            if c.is_alphanumeric() {
                ident_start.get_or_insert(i);
            } else if is_glue(c) && ident_start.is_some() {
                // glue continues an identifier
            } else if let Some(start) = ident_start.take() {
                self.identifier(&text[start..i], sink);
            }
        }
        if let Some(start) = ident_start {
            self.identifier(&text[start..], sink);
        }
        if let Some(start) = cjk_start {
            cjk_bigrams(&text[start..], sink);
        }
    }

    /// Append the analyzed terms of `text` to `out`, space-separated; returns the
    /// count of words (exact spellings are indexed but do not lengthen a field,
    /// so folding leaves BM25's length normalization as it was).
    pub fn append_joined(&mut self, text: &str, out: &mut String) -> usize {
        let mut count = 0usize;
        self.analyze(text, &mut |term, kind| {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(term);
            count += usize::from(kind != TermKind::ExactSpelling);
        });
        count
    }

    fn identifier(&mut self, run: &str, sink: &mut dyn FnMut(&str, TermKind)) {
        let mut parts = std::mem::take(&mut self.parts);
        parts.clear();
        split_identifier_into(run, &mut parts);
        let mut kept = 0usize;
        for &(start, end) in &parts {
            let part = &run[start..end];
            if part.len() > MAX_TOKEN_BYTES {
                continue;
            }
            let mut lower = std::mem::take(&mut self.lower);
            lowercase_into(part, &mut lower);
            if let Some(terms) = self.part_terms(&lower) {
                sink(&terms.term, TermKind::Word);
                if let Some(exact) = &terms.exact {
                    sink(exact, TermKind::ExactSpelling);
                }
                kept += 1;
            }
            self.lower = lower;
        }
        if parts.len() > 1 && parts.len() <= MAX_COMPOUND_PARTS && kept > 0 {
            let mut joined = std::mem::take(&mut self.joined);
            joined.clear();
            for &(start, end) in &parts {
                lowercase_append(&run[start..end], &mut joined);
            }
            if joined.len() <= MAX_TOKEN_BYTES {
                let term = self.joined_term(&joined);
                sink(&term, TermKind::Joined);
            }
            self.joined = joined;
        }
        self.parts = parts;
    }
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer::new()
    }
}

fn lowercase_into(part: &str, out: &mut String) {
    out.clear();
    lowercase_append(part, out);
}

fn lowercase_append(part: &str, out: &mut String) {
    if part.is_ascii() {
        let start = out.len();
        out.push_str(part);
        out[start..].make_ascii_lowercase();
    } else {
        out.extend(part.chars().flat_map(char::to_lowercase));
    }
}

/// Single letters and stopwords carry no meaning on their own.
fn keep_part(part: &str) -> bool {
    let mut chars = part.chars();
    let first = chars.next();
    let single = first.is_some() && chars.next().is_none();
    if single && !first.is_some_and(|c| c.is_ascii_digit()) {
        return false;
    }
    !is_stopword(part)
}

pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F) // Extensions B.. and compatibility supplement
}

fn is_glue(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | '/' | ':' | '\'')
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii_digit() || c.is_numeric() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_lowercase() {
        Class::Lower
    } else {
        Class::Other
    }
}

/// Byte ranges of the parts of one identifier-ish run:
/// `getHTTPResponse_v2` -> `get`, `HTTP`, `Response`, `v`, `2`.
fn split_identifier_into(run: &str, parts: &mut Vec<(usize, usize)>) {
    let mut chunk_start: Option<usize> = None;
    // (byte index, class) of the previous two chars inside the current chunk
    let mut prev: Option<(usize, Class)> = None;
    let mut part_start = 0usize;
    let mut iter = run.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        if is_glue(c) {
            if chunk_start.take().is_some() {
                parts.push((part_start, i));
            }
            prev = None;
            continue;
        }
        let cur = class(c);
        if chunk_start.is_none() {
            chunk_start = Some(i);
            part_start = i;
            prev = Some((i, cur));
            continue;
        }
        if let Some((_, p)) = prev {
            let next = iter.peek().map(|&(_, n)| class(n));
            let boundary = match (p, cur) {
                (Class::Lower, Class::Upper) => true,
                // Acronym followed by a word: `HTTPServer` splits before `S`;
                // a plural acronym (`getURLs`, `IDsList`) keeps its `s`.
                (Class::Upper, Class::Upper) => {
                    next == Some(Class::Lower) && !plural_s(&run[i + c.len_utf8()..])
                }
                (Class::Digit, Class::Lower | Class::Upper) => true,
                (Class::Lower | Class::Upper, Class::Digit) => true,
                _ => false,
            };
            if boundary {
                parts.push((part_start, i));
                part_start = i;
            }
        }
        prev = Some((i, cur));
    }
    if chunk_start.is_some() {
        parts.push((part_start, run.len()));
    }
}

/// Whether `rest` (what follows an upper-case letter) is a lone plural `s`:
/// `s` then the end of the identifier or a non-lowercase char.
fn plural_s(rest: &str) -> bool {
    let mut chars = rest.chars();
    chars.next() == Some('s') && !chars.next().is_some_and(char::is_lowercase)
}

/// CJK runs: overlapping bigrams; a lone character stays a unigram.
fn cjk_bigrams(run: &str, sink: &mut dyn FnMut(&str, TermKind)) {
    let mut indices = run.char_indices().map(|(i, _)| i).collect::<Vec<_>>();
    indices.push(run.len());
    if indices.len() == 2 {
        if !is_stopword(run) {
            sink(run, TermKind::Word);
        }
        return;
    }
    for w in indices.windows(3) {
        sink(&run[w[0]..w[2]], TermKind::Word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Analyzed terms as owned strings (kinds dropped).
    fn terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Analyzer::new().analyze(text, &mut |term, _| out.push(term.to_string()));
        out
    }

    fn parts(run: &str) -> Vec<String> {
        let mut ranges = Vec::new();
        split_identifier_into(run, &mut ranges);
        ranges
            .into_iter()
            .map(|(s, e)| run[s..e].to_lowercase())
            .collect()
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(
            parts("getHTTPResponse_v2"),
            vec!["get", "http", "response", "v", "2"]
        );
        assert_eq!(parts("create-issue"), vec!["create", "issue"]);
        assert_eq!(parts("FinanceTool"), vec!["finance", "tool"]);
        assert_eq!(parts("airqualityforeast"), vec!["airqualityforeast"]);
        assert_eq!(parts("a__b"), vec!["a", "b"]);
        assert_eq!(parts("getURLs"), vec!["get", "urls"]);
        assert_eq!(parts("listIDsForUser"), vec!["list", "ids", "for", "user"]);
        assert_eq!(parts("URLSearch"), vec!["url", "search"]);
        assert_eq!(parts("HTTPServer"), vec!["http", "server"]);
    }

    #[test]
    fn stems_and_drops_stopwords() {
        assert_eq!(terms("Searching the issues"), vec!["search", "issu"]);
        assert!(terms("the and of").is_empty());
        assert_eq!(terms("don't"), vec!["don", "dont"]);
    }

    #[test]
    fn joined_identifier_form() {
        assert_eq!(terms("create_issue"), vec!["creat", "issu", "createissu"]);
        assert_eq!(terms("getWeather"), vec!["get", "weather", "getweath"]);
    }

    #[test]
    fn cjk_bigrams_and_mixed_text() {
        assert_eq!(terms("天气预报"), vec!["天气", "气预", "预报"]);
        assert_eq!(terms("云"), vec!["云"]);
        assert!(terms("的").is_empty());
        assert_eq!(terms("查询weather"), vec!["查询", "weather"]);
        // Full-width letters fold (their own spelling is kept as a bonus term).
        assert_eq!(
            terms("天気ｗｅａｔｈｅｒ"),
            vec!["天気", "weather", "ｗｅａｔｈｅｒ"]
        );
    }

    #[test]
    fn folds_accents_and_keeps_the_exact_spelling_after_the_word() {
        let mut analyzer = Analyzer::new();
        let mut kinds = Vec::new();
        analyzer.analyze("Prévisions météo, Straße", &mut |term, kind| {
            kinds.push((term.to_string(), kind))
        });
        let expected = [
            ("previs", TermKind::Word),
            ("prévision", TermKind::ExactSpelling),
            ("meteo", TermKind::Word),
            ("météo", TermKind::ExactSpelling),
            ("strass", TermKind::Word),
            ("straße", TermKind::ExactSpelling),
        ];
        let expected: Vec<(String, TermKind)> =
            expected.iter().map(|(t, k)| (t.to_string(), *k)).collect();
        assert_eq!(kinds, expected);
        // Typed without accents: the folded words only.
        assert_eq!(
            terms("previsions meteo strasse"),
            vec!["previs", "meteo", "strass"]
        );
        // Joined identifier forms fold too.
        assert_eq!(terms("créerÉvénement").last().unwrap(), "creereven");
        // A word the fold leaves as it is, or ASCII: no second term.
        assert_eq!(terms("Ünïcödé"), vec!["unicod", "ünïcödé"]);
        assert_eq!(terms("погода"), vec!["погода"]);
    }

    #[test]
    fn exact_spellings_do_not_lengthen_a_field() {
        let mut out = String::new();
        let mut analyzer = Analyzer::new();
        assert_eq!(analyzer.append_joined("météo Lyon", &mut out), 2);
        assert_eq!(out, "meteo météo lyon");
    }

    #[test]
    fn joined_output_counts_terms() {
        let mut out = String::new();
        let mut analyzer = Analyzer::new();
        assert_eq!(analyzer.append_joined("Send messages", &mut out), 2);
        assert_eq!(out, "send messag");
    }

    #[test]
    fn long_garbage_is_dropped() {
        let long = "a".repeat(500);
        assert!(terms(&long).is_empty());
    }
}

//! BERT uncased WordPiece tokenizer, matching the Hugging Face `tokenizers`
//! pipeline of all-MiniLM-L6-v2's tokenizer.json: added special tokens matched
//! in the raw text, BertNormalizer (clean text, pad CJK ideographs, strip
//! accents, lowercase), BertPreTokenizer (whitespace and punctuation), WordPiece
//! (greedy longest match, `##` continuation, words over 100 chars are [UNK]),
//! then `[CLS] … [SEP]` with truncation of the pieces.
//!
//! Hand-written instead of the `tokenizers` crate: this model needs only this
//! fixed pipeline, and the crate's default build pulls regex engines and many
//! dependencies. Parity with the reference ids is tested in tests/parity.rs.

use std::collections::HashMap;

use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::char::decompose_canonical;

use crate::EmbedError;

/// Words longer than this (in chars) become [UNK], as in the reference.
const MAX_WORD_CHARS: usize = 100;
/// The reference tokenizer's added tokens, matched in the raw text.
const SPECIAL_TOKENS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
/// vocab.txt bounds: it comes from disk.
const MAX_VOCAB_BYTES: usize = 8 << 20;
const MAX_VOCAB_ENTRIES: usize = 1 << 20;

pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    /// Ids of SPECIAL_TOKENS in the same order (None when absent from the vocab).
    special_ids: [Option<u32>; 5],
}

impl WordPiece {
    /// Parses a BERT vocab.txt (one token per line, id = line number).
    pub fn from_vocab_text(text: &str) -> Result<WordPiece, EmbedError> {
        if text.len() > MAX_VOCAB_BYTES {
            return Err(EmbedError::Invalid(format!(
                "vocab.txt is larger than {MAX_VOCAB_BYTES} bytes"
            )));
        }
        let mut vocab = HashMap::new();
        for (id, line) in text.lines().enumerate() {
            if id >= MAX_VOCAB_ENTRIES {
                return Err(EmbedError::Invalid("vocab.txt has too many entries".into()));
            }
            let token = line.strip_suffix('\r').unwrap_or(line);
            // A token's id is its line: a repeated line would shift every later
            // id, and the vectors would be silently wrong.
            if let Some(first) = vocab.insert(token.to_owned(), id as u32) {
                return Err(EmbedError::Invalid(format!(
                    "vocab.txt lists {:?} twice (lines {} and {}); every token must be on one line only",
                    token.chars().take(40).collect::<String>(),
                    first + 1,
                    id + 1
                )));
            }
        }
        let id_of = |t: &str| vocab.get(t).copied();
        let required = |t: &str| {
            id_of(t).ok_or_else(|| EmbedError::Invalid(format!("vocab.txt has no {t} token")))
        };
        let unk = required("[UNK]")?;
        let cls = required("[CLS]")?;
        let sep = required("[SEP]")?;
        let special_ids = SPECIAL_TOKENS.map(id_of);
        Ok(WordPiece {
            vocab,
            unk,
            cls,
            sep,
            special_ids,
        })
    }

    pub fn vocab_len(&self) -> usize {
        self.vocab.len()
    }

    /// Token ids of `text`: `[CLS]`, at most `max_len - 2` pieces, `[SEP]`.
    /// Stops reading the text once the pieces are full, so long texts cost
    /// only what is kept.
    pub fn encode(&self, text: &str, max_len: usize) -> Vec<u32> {
        let budget = max_len.saturating_sub(2);
        let mut ids = Vec::with_capacity(budget.min(64) + 2);
        ids.push(self.cls);
        let mut rest = text;
        while ids.len() - 1 < budget && !rest.is_empty() {
            match self.next_special(rest) {
                Some((start, index, len)) => {
                    self.encode_plain(&rest[..start], budget, &mut ids);
                    if ids.len() - 1 < budget {
                        // Present: next_special only finds tokens in the vocab.
                        ids.extend(self.special_ids[index]);
                    }
                    rest = &rest[start + len..];
                }
                None => {
                    self.encode_plain(rest, budget, &mut ids);
                    rest = "";
                }
            }
        }
        ids.push(self.sep);
        ids
    }

    /// Leftmost special token in `text`: (byte offset, index, byte length).
    fn next_special(&self, text: &str) -> Option<(usize, usize, usize)> {
        let mut search = 0;
        while let Some(pos) = text[search..].find('[') {
            let at = search + pos;
            for (index, token) in SPECIAL_TOKENS.iter().enumerate() {
                if self.special_ids[index].is_some() && text[at..].starts_with(token) {
                    return Some((at, index, token.len()));
                }
            }
            search = at + 1;
        }
        None
    }

    /// Normalizes, splits and word-pieces `text` (no special tokens in it).
    fn encode_plain(&self, text: &str, budget: usize, ids: &mut Vec<u32>) {
        let mut word = String::new();
        for raw in text.chars() {
            if ids.len() > budget {
                return;
            }
            // BertNormalizer clean_text: drop NUL, U+FFFD and control
            // characters; whitespace becomes a separator.
            if raw == '\0' || raw == '\u{fffd}' || is_control(raw) {
                continue;
            }
            if is_whitespace(raw) {
                self.flush_word(&mut word, budget, ids);
                continue;
            }
            // handle_chinese_chars pads ideographs with spaces: each is a word.
            if is_chinese_char(raw) {
                self.flush_word(&mut word, budget, ids);
                self.push_normalized_word(raw, &mut word);
                self.flush_word(&mut word, budget, ids);
                continue;
            }
            // strip_accents (NFD, drop Mn) then lowercase, per char as the
            // reference does; punctuation is checked on the normalized chars.
            decompose_canonical(raw, |c| {
                if get_general_category(c) == GeneralCategory::NonspacingMark {
                    return;
                }
                for lower in c.to_lowercase() {
                    if is_punctuation(lower) {
                        self.flush_word(&mut word, budget, ids);
                        word.push(lower);
                        self.flush_word(&mut word, budget, ids);
                    } else {
                        word.push(lower);
                    }
                }
            });
        }
        self.flush_word(&mut word, budget, ids);
    }

    fn push_normalized_word(&self, c: char, word: &mut String) {
        decompose_canonical(c, |d| {
            if get_general_category(d) != GeneralCategory::NonspacingMark {
                word.extend(d.to_lowercase());
            }
        });
    }

    fn flush_word(&self, word: &mut String, budget: usize, ids: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        self.word_pieces(word, budget, ids);
        word.clear();
    }

    /// Greedy longest-match-first WordPiece; a word with an unmatchable rest
    /// (or over MAX_WORD_CHARS) is a single [UNK].
    fn word_pieces(&self, word: &str, budget: usize, ids: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            if ids.len() - 1 < budget {
                ids.push(self.unk);
            }
            return;
        }
        let mark = ids.len();
        let mut start = 0;
        let mut candidate = String::with_capacity(word.len() + 2);
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(candidate.as_str()) {
                    found = Some(id);
                    break;
                }
                // Step back one char (end stays on a char boundary).
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(mark);
                    ids.push(self.unk);
                    break;
                }
            }
        }
        // Truncation keeps only the first pieces of the last word.
        ids.truncate(budget + 1);
    }
}

/// Tab, newline and carriage return are whitespace, not control.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Unassigned
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
    )
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::OpenPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::OtherPunctuation
        )
}

/// The CJK Unified Ideograph blocks BERT pads with spaces.
fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let vocab = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", ",", "world", "!", "un",
            "##aff", "##able", "cafe", "a", "##a", "東", "京", "naive", "get", "##user",
        ];
        WordPiece::from_vocab_text(&vocab.join("\n")).unwrap()
    }

    #[test]
    fn splits_lowercases_and_wordpieces() {
        let t = tiny();
        assert_eq!(t.encode("Hello, WORLD!", 256), vec![2, 5, 6, 7, 8, 3]);
        assert_eq!(t.encode("unaffable", 256), vec![2, 9, 10, 11, 3]);
        // No full match for the rest of the word: the whole word is [UNK].
        assert_eq!(t.encode("unaffablex hello", 256), vec![2, 1, 5, 3]);
        assert_eq!(t.encode("getuser", 256), vec![2, 18, 19, 3]);
    }

    #[test]
    fn strips_accents_and_control_and_pads_cjk() {
        let t = tiny();
        assert_eq!(t.encode("Café NAÏVE", 256), vec![2, 12, 17, 3]);
        assert_eq!(t.encode("ca\u{200b}fe\u{0007}", 256), vec![2, 12, 3]);
        assert_eq!(t.encode("東京hello", 256), vec![2, 15, 16, 5, 3]);
    }

    #[test]
    fn empty_and_whitespace_only_text() {
        let t = tiny();
        assert_eq!(t.encode("", 256), vec![2, 3]);
        assert_eq!(t.encode(" \t\n ", 256), vec![2, 3]);
    }

    #[test]
    fn special_tokens_in_text_and_long_words() {
        let t = tiny();
        assert_eq!(
            t.encode("hello [SEP] world[MASK]", 256),
            vec![2, 5, 3, 7, 4, 3]
        );
        assert_eq!(t.encode(&"a".repeat(100), 256).len(), 2 + 100);
        assert_eq!(t.encode(&"a".repeat(101), 256), vec![2, 1, 3]);
    }

    #[test]
    fn truncates_to_max_len() {
        let t = tiny();
        let ids = t.encode(&"hello ".repeat(1000), 8);
        assert_eq!(ids, vec![2, 5, 5, 5, 5, 5, 5, 3]);
        // Truncation inside a word keeps its first pieces.
        assert_eq!(t.encode("hello unaffable", 5), vec![2, 5, 9, 10, 3]);
        assert_eq!(t.encode("hello", 2), vec![2, 3]);
        assert_eq!(t.encode("hello", 0), vec![2, 3]);
    }

    #[test]
    fn rejects_vocab_without_special_tokens() {
        assert!(WordPiece::from_vocab_text("hello\nworld").is_err());
    }
}

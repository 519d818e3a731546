//! Stopwords: English function words plus the filler of requests a model or
//! a user writes ("can you please help me ..."), and a few CJK particles.
//! They are removed on both sides before stemming, so they never match.

/// Sorted for binary search (checked by a test).
const STOPWORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
    "can", "could", "did", "do", "does", "doing", "during", "each", "either", "else", "etc", "ever", "every",
    "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
    "him", "himself", "his", "how", "however", "i", "i'd", "i'm", "if", "in", "into", "is", "it", "its",
    "itself", "just", "let", "lets", "me", "might", "mine", "more", "most", "must", "my", "myself",
    "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours",
    "ourselves", "out", "over", "own", "please", "same", "shall", "she", "should", "so", "some", "such",
    "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
    "this", "those", "through", "to", "too", "under", "until", "up", "upon", "us", "very", "via",
    "was", "we", "were", "what", "whatever", "when", "where", "whether", "which", "while", "who", "whom",
    "whose", "why", "will", "with", "within", "would", "yet", "you", "your", "yours", "yourself",
    "yourselves", "了", "和", "是", "的",
];

pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_sorted_and_unique() {
        for pair in STOPWORDS.windows(2) {
            assert!(pair[0] < pair[1], "{} !< {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn recognizes_words() {
        assert!(is_stopword("the"));
        assert!(is_stopword("的"));
        assert!(!is_stopword("weather"));
    }
}

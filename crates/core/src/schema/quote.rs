//! Quoting names and values in validation messages, cut to a few chars. Its
//! own file because both the validator and the cost bound (an unresolvable
//! `$ref`) quote.

/// Chars of a bad value quoted in a message.
pub(super) const MAX_QUOTED_CHARS: usize = 60;

/// `text` as a JSON string, at most [`MAX_QUOTED_CHARS`] chars.
pub(super) fn quote_str(text: &str) -> String {
    clip(&serde_json::to_string(text).unwrap_or_default())
}

/// `text` in at most [`MAX_QUOTED_CHARS`] chars (the shared clip rule).
pub(super) fn clip(text: &str) -> String {
    tool_search_base::text::clip(text, MAX_QUOTED_CHARS)
}

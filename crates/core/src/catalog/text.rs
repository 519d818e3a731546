//! Text checks shared by the catalog's files (build, records): kept apart so
//! they do not import the build for them. Cuts use `tool_search_base::text`.

/// Characters that change how a name reads without being seen: bidirectional
/// controls (U+061C, U+200E/F, U+202A–E, U+2066–9), zero-width and other
/// format characters (Unicode category Cf: U+00AD, U+200B–D, U+2060–4,
/// U+FEFF, tags…), the combining grapheme joiner, Hangul fillers and
/// variation selectors.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x0600..=0x0605 | 0x06DD | 0x070F | 0x08E2 | 0x115F | 0x1160
        | 0x17B4 | 0x17B5 | 0x180B..=0x180F | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F
        | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD
        | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}

/// The part of [`is_invisible`] that hides or reorders the text around it
/// (zero-width characters, bidirectional controls and isolates, the soft
/// hyphen, the byte order mark): dropped from the descriptions a directory
/// shows. The rest of [`is_invisible`] belongs in prose (an emoji's variation
/// selector, Arabic number signs) and stays there; a name may hold none of it.
pub(crate) fn is_hiding_format(c: char) -> bool {
    matches!(c as u32, 0x00AD | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0xFEFF)
}

/// `text` as a log line may carry it: each control character, line or
/// paragraph separator and [`is_invisible`] character written `\u{…}`
/// (upper-case hex), so a tool's name cannot forge or hide a line.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write;
    let escaped =
        |c: char| c.is_control() || is_invisible(c) || matches!(c, '\u{2028}' | '\u{2029}');
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            let _ = write!(out, "\\u{{{:X}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_writes_what_would_forge_or_hide_a_line_as_escapes() {
        assert_eq!(printable("send_email"), "send_email");
        assert_eq!(
            printable("a\nb\u{200B}c\u{202E}d\u{2028}"),
            "a\\u{A}b\\u{200B}c\\u{202E}d\\u{2028}"
        );
        assert_eq!(printable("caf\u{E9} \u{1F600}"), "caf\u{E9} \u{1F600}");
    }

    #[test]
    fn what_hides_text_is_invisible_and_prose_keeps_the_rest() {
        let hiding: Vec<char> = (0..=0x10FFFF)
            .filter_map(char::from_u32)
            .filter(|&c| is_hiding_format(c))
            .collect();
        assert_eq!(hiding.len(), 1 + 5 + 5 + 16 + 1);
        assert!(hiding.iter().all(|&c| is_invisible(c)));
        // An emoji's presentation selector is invisible in a name, kept in a description.
        assert!(is_invisible('\u{FE0F}') && !is_hiding_format('\u{FE0F}'));
    }
}

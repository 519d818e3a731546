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

//! The prompt directory of directory mode: one line per trusted deferred tool,
//! bounded by a character budget and byte-identical for the same catalog
//! snapshot and options (so the provider's prompt cache keeps hitting).
//!
//! Rules (contract section 4): heading, rows `- name (owner): description`
//! sorted by name then id; only trusted tools; names and owners must match
//! `^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`; names held by more than one tool are
//! left out (calling them by name would be ambiguous); whitespace collapsed;
//! descriptions shrink 180 -> 64 -> 0 characters before rows are dropped; a
//! footer counts what is not listed and says how to reach it; the MCP/client
//! notice; the empty form.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use crate::catalog::text::is_hiding_format;
pub use crate::entry::directory_order;
use crate::entry::ToolEntry;

pub const DIRECTORY_HEADING: &str = "Available deferred-schema tools:";
pub const DIRECTORY_EMPTY: &str = "Available deferred-schema tools: none.";
pub const UNTRUSTED_NOTICE: &str =
    "Policy-approved MCP and client tools may also be discoverable through search.";
pub const MAX_BUDGET_CHARS: usize = 18_000;
pub const MIN_BUDGET_CHARS: usize = 768;
/// Description lengths tried in order before rows are dropped.
pub const DESCRIPTION_LEVELS: [usize; 3] = [180, 64, 0];

/// `min(18000, max(768, contextTokens / 10))`; 18,000 without a context size
/// (or with 0, which a gateway passes when it does not know it), as OpenClaw.
pub fn directory_budget(context_tokens: Option<u64>) -> usize {
    match context_tokens {
        None | Some(0) => MAX_BUDGET_CHARS,
        Some(tokens) => {
            let tenth = usize::try_from(tokens / 10).unwrap_or(usize::MAX);
            tenth.clamp(MIN_BUDGET_CHARS, MAX_BUDGET_CHARS)
        }
    }
}

/// How the footer tells the model to reach deferred tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DirectoryGuidance {
    /// `tool_search` / `tool_describe` / `tool_call`, and direct calls by exact name.
    Structured,
    /// `tool_search_code` with `openclaw.tools.*`.
    Code,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DirectoryOptions {
    pub budget_chars: usize,
    pub guidance: DirectoryGuidance,
    /// Names shown to the model as full tool definitions this run (direct
    /// tools): not deferred, so not listed.
    pub visible_names: BTreeSet<String>,
}

impl DirectoryOptions {
    pub fn new(budget_chars: usize, guidance: DirectoryGuidance) -> Self {
        DirectoryOptions {
            budget_chars,
            guidance,
            visible_names: BTreeSet::new(),
        }
    }
}

/// `^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`
pub fn is_listable_identifier(text: &str) -> bool {
    let bytes = text.as_bytes();
    match bytes.first() {
        Some(first) if first.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    bytes.len() <= 128
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// Collapse every whitespace run to one space, drop control and invisible
/// formatting characters (bidi overrides, zero-width), trim.
pub fn collapse_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if c.is_control() || is_hiding_format(c) {
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    out
}

/// [`collapse_text`] without a copy when the text is already clean (plain
/// ASCII, single spaces, no controls): the common case.
fn collapse_cow(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let clean = bytes.first() != Some(&b' ')
        && bytes.last() != Some(&b' ')
        && bytes.iter().all(|&b| (0x20..0x7f).contains(&b))
        && !bytes.windows(2).any(|w| w == b"  ");
    if clean {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(collapse_text(text))
    }
}

struct Row<'a> {
    name: &'a str,
    owner: &'a str,
    raw_description: &'a str,
    /// Collapsed on first use: only rows the budget reaches are ever cleaned.
    description: OnceCell<Cow<'a, str>>,
}

impl<'a> Row<'a> {
    fn new(name: &'a str, owner: &'a str, raw_description: &'a str) -> Self {
        Row {
            name,
            owner,
            raw_description,
            description: OnceCell::new(),
        }
    }

    fn description(&self) -> &str {
        self.description
            .get_or_init(|| collapse_cow(self.raw_description))
    }

    fn description_at(&self, level: usize) -> (&str, bool) {
        if level == 0 {
            return ("", false);
        }
        let description = self.description();
        // The shared clip rule; `write` appends the marker after a cut.
        let short = tool_search_base::text::clipped_head(description, level).unwrap_or(description);
        (short, short.len() < description.len())
    }

    /// Characters of `- name (owner): description\n` at a description level.
    fn chars_at(&self, level: usize) -> usize {
        let (desc, cut) = self.description_at(level);
        let base = 2 + self.name.len() + 2 + self.owner.len() + 1 + 1;
        if desc.is_empty() {
            base
        } else {
            base + 2 + desc.chars().count() + usize::from(cut)
        }
    }

    fn write(&self, level: usize, out: &mut String) {
        out.push_str("- ");
        out.push_str(self.name);
        out.push_str(" (");
        out.push_str(self.owner);
        out.push(')');
        let (desc, cut) = self.description_at(level);
        if !desc.is_empty() {
            out.push_str(": ");
            out.push_str(desc);
            if cut {
                out.push('…');
            }
        }
        out.push('\n');
    }
}

fn footer(guidance: DirectoryGuidance, listed: usize, omitted: usize) -> String {
    let mut text = String::new();
    if listed > 0 {
        text.push_str(match guidance {
            DirectoryGuidance::Structured => {
                "Their schemas are not loaded: call a listed tool by its exact name with its arguments, or use \
                 tool_describe with its name for the schema and tool_call to run it.\n"
            }
            DirectoryGuidance::Code => {
                "Their schemas are not loaded: in tool_search_code, use openclaw.tools.describe(name) for the schema \
                 and openclaw.tools.call(name, args) to run one.\n"
            }
        });
    }
    if omitted > 0 {
        let noun = if omitted == 1 { "tool is" } else { "tools are" };
        text.push_str(&match guidance {
            DirectoryGuidance::Structured => {
                format!("{omitted} more deferred {noun} not listed: find them with tool_search.\n")
            }
            DirectoryGuidance::Code => {
                format!("{omitted} more deferred {noun} not listed: find them with openclaw.tools.search(query) in tool_search_code.\n")
            }
        });
    }
    text
}

/// Render the directory for `entries` (the catalog's allowed entries, any order).
pub fn render_directory<'a>(
    entries: impl Iterator<Item = &'a ToolEntry>,
    options: &DirectoryOptions,
) -> String {
    let mut sorted: Vec<&ToolEntry> = entries.collect();
    sorted.sort_unstable_by(|a, b| directory_order(a, b));
    render_directory_sorted(sorted.into_iter(), options)
}

/// As [`render_directory`], for entries already in [`directory_order`] order (the
/// catalog keeps that order from its build): one pass, no sort, and a name's
/// uniqueness read off its neighbours instead of a lookup.
pub fn render_directory_sorted<'a>(
    entries: impl Iterator<Item = &'a ToolEntry>,
    options: &DirectoryOptions,
) -> String {
    let mut total = 0usize;
    let mut untrusted = 0usize;
    let mut rows: Vec<Row> = Vec::new();
    let mut entries = entries.peekable();
    let mut previous_name: Option<&str> = None;
    while let Some(entry) = entries.next() {
        // Entries sharing a name are adjacent: a shared name is never listed
        // (calling it by name would be ambiguous), but each entry still counts.
        let unique = previous_name != Some(entry.name.as_str())
            && entries.peek().is_none_or(|next| next.name != entry.name);
        previous_name = Some(entry.name.as_str());
        if options.visible_names.contains(&entry.name) {
            continue;
        }
        if !entry.is_trusted() {
            untrusted += 1;
            continue;
        }
        total += 1;
        if unique && is_listable_identifier(&entry.name) && is_listable_identifier(&entry.owner) {
            rows.push(Row::new(&entry.name, &entry.owner, &entry.description));
        }
    }

    if total == 0 {
        return if untrusted > 0 {
            format!("{DIRECTORY_EMPTY}\n{UNTRUSTED_NOTICE}")
        } else {
            DIRECTORY_EMPTY.to_string()
        };
    }

    let frame_chars = |listed: usize| -> usize {
        let heading = if listed == 0 {
            DIRECTORY_EMPTY
        } else {
            DIRECTORY_HEADING
        };
        heading.len()
            + 1
            + footer(options.guidance, listed, total - listed)
                .chars()
                .count()
            + UNTRUSTED_NOTICE.len()
    };

    let budget = options.budget_chars;
    let mut chosen: Option<(usize, usize)> = None; // (level, rows listed)
    for level in DESCRIPTION_LEVELS {
        // Stop summing once over budget: a large catalog overflows after a few
        // hundred rows, so a level costs what fits, not the whole catalog.
        let mut used = frame_chars(rows.len());
        let fits = rows.iter().all(|r| {
            used += r.chars_at(level);
            used <= budget
        });
        if fits {
            chosen = Some((level, rows.len()));
            break;
        }
    }
    let (level, listed) = chosen.unwrap_or_else(|| {
        // Even names alone do not fit: keep the longest prefix that does.
        let mut best = 0;
        let mut used = 0;
        for (i, row) in rows.iter().enumerate() {
            used += row.chars_at(0);
            if used > budget {
                break;
            }
            if frame_chars(i + 1) + used <= budget {
                best = i + 1;
            }
        }
        (0, best)
    });

    let mut out = String::with_capacity(budget.min(64 * 1024));
    out.push_str(if listed == 0 {
        DIRECTORY_EMPTY
    } else {
        DIRECTORY_HEADING
    });
    out.push('\n');
    for row in &rows[..listed] {
        row.write(level, &mut out);
    }
    out.push_str(&footer(options.guidance, listed, total - listed));
    out.push_str(UNTRUSTED_NOTICE);
    out
}

/// Memo of rendered directories, keyed by catalog fingerprint and options, so
/// repeated turns over an unchanged catalog reuse the exact same text.
/// Small and bounded: a gateway has few live catalogs at a time.
const MEMO_CAPACITY: usize = 32;

type MemoKey = (String, DirectoryOptions);

static MEMO: Mutex<Vec<(MemoKey, Arc<str>)>> = Mutex::new(Vec::new());

/// The directory text for a catalog snapshot, rendered once per
/// `(fingerprint, options)`. `fingerprint` must identify the exact entry set
/// (a restricted view must have its own); `entries` yields it in [`directory_order`] order.
pub fn directory_text<'a, I>(
    fingerprint: &str,
    entries: impl FnOnce() -> I,
    options: &DirectoryOptions,
) -> Arc<str>
where
    I: Iterator<Item = &'a ToolEntry>,
{
    let key: MemoKey = (fingerprint.to_string(), options.clone());
    if let Ok(mut memo) = MEMO.lock() {
        if let Some(pos) = memo.iter().position(|(k, _)| *k == key) {
            let hit = memo.remove(pos);
            let text = hit.1.clone();
            memo.push(hit);
            return text;
        }
    }
    let text: Arc<str> = Arc::from(render_directory_sorted(entries(), options));
    if let Ok(mut memo) = MEMO.lock() {
        // Rendered concurrently by another caller: keep one copy.
        if let Some((_, existing)) = memo.iter().find(|(k, _)| *k == key) {
            return existing.clone();
        }
        if memo.len() >= MEMO_CAPACITY {
            memo.remove(0);
        }
        memo.push((key, text.clone()));
    }
    text
}

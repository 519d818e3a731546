//! The `repair` catalog option: a record the catalog would refuse is indexed
//! in a safe form in the same build, chosen by the refusal's code and field
//! (never its wording), and reported in [`Catalog::repaired`]. The record's
//! text stays as given (derived versions read it again and repair it the same
//! way); only the entry made from it differs.
//!
//! A repair edits the record's top-level fields (split without parsing their
//! values, so a value too deep or malformed is still one span) and reads the
//! edited text again with the ordinary reader and checks, at most
//! [`MAX_ROUNDS`] times, each kind of repair once.

use std::borrow::Cow;
use std::sync::Arc;

use tool_search_base::text::prefix;

use super::records::{split_top_level, UNREADABLE_FIELDS};
use super::refusal::{ExclusionCode, Refusal};
use super::store::StoredRecord;
use super::text::is_invisible;
use super::Catalog;
use crate::entry::{Source, CONTROL_TOOL_NAMES};
use crate::limits::{MAX_NAME_CHARS, MAX_OWNER_CHARS};

/// A record indexed in a repaired form: its refusal, what changed and the id
/// it is indexed under. A record repaired twice (its name and its schema) is
/// listed once per repair, in the order they were made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RepairedTool {
    /// The record's position in the input.
    pub index: usize,
    pub code: ExclusionCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<&'static str>,
    pub reason: String,
    /// What changed, in a few stable words ("indexed without its input schema",
    /// "renamed to <id>").
    pub change: String,
    pub id: String,
    /// The tool keeps the source, owner and name its record gives (so its
    /// id and its place among its owner's tools): a derived version may keep
    /// it. A renamed or re-owned tool's id depends on every other id.
    #[serde(skip)]
    pub(crate) local: bool,
}

/// Reads of one record a repair tries, at most.
const MAX_ROUNDS: usize = 8;
/// Suffixes (`_2` … `_100`) tried to make a renamed tool's id unique.
const MAX_SUFFIX: usize = 100;
/// Unique-name candidates a build may try: a base, and a few per record.
const RENAME_TRIES_BASE: usize = 1_024;
const RENAME_TRIES_PER_RECORD: usize = 16;

/// What reading an edited record gave: an entry and its id, another refusal,
/// or something that is not a catalog entry (a direct-only tool).
pub(super) enum Read<E> {
    Indexed(E, String),
    Refused(Refusal),
    Other,
}

/// The texts of the records a build validates (record `index` is
/// `records[index - first]`), and the ids taken outside them (a derived
/// version's kept tools), listed only when a rename first needs them.
pub(super) struct RepairInput<'a> {
    records: &'a [Arc<StoredRecord>],
    first: usize,
    outside: Option<&'a dyn Fn() -> Vec<String>>,
}

impl<'a> RepairInput<'a> {
    pub(super) fn new(records: &'a [Arc<StoredRecord>], first: usize) -> RepairInput<'a> {
        RepairInput {
            records,
            first,
            outside: None,
        }
    }

    pub(super) fn with_outside(mut self, outside: &'a dyn Fn() -> Vec<String>) -> Self {
        self.outside = Some(outside);
        self
    }

    pub(super) fn text(&self, index: usize) -> Option<&'a str> {
        let at = index.checked_sub(self.first)?;
        self.records.get(at).map(|r| &*r.text)
    }

    pub(super) fn outside_ids(&self) -> Vec<String> {
        self.outside.map(|f| f()).unwrap_or_default()
    }

    /// The records of the whole list (a derived version's kept ones too): a
    /// derived version may try as many renames as a full build of its list.
    pub(super) fn len(&self) -> usize {
        self.first.saturating_add(self.records.len())
    }
}

/// One build's repairs: the ids taken (every record's own id, then each
/// rename), filled when the first rename needs them.
pub(super) struct Repairs<'a> {
    seed: Option<Box<dyn FnOnce() -> Vec<String> + 'a>>,
    taken: foldhash::HashSet<String>,
    /// Per candidate family (the id with the unsuffixed base), the next
    /// suffix to try: every lower one is taken (ids are only ever added).
    next: foldhash::HashMap<String, usize>,
    tries_left: usize,
}

impl<'a> Repairs<'a> {
    /// `seed` lists the ids taken before any rename; `records` bounds the work.
    pub(super) fn new(records: usize, seed: impl FnOnce() -> Vec<String> + 'a) -> Repairs<'a> {
        Repairs {
            seed: Some(Box::new(seed)),
            taken: foldhash::HashSet::default(),
            next: foldhash::HashMap::default(),
            tries_left: RENAME_TRIES_BASE
                .saturating_add(records.saturating_mul(RENAME_TRIES_PER_RECORD)),
        }
    }

    /// Record `index` (its `text`, refused with `refusal`) repaired: the entry
    /// `read` made of the edited text and the repairs made, or `None` when
    /// some refusal has no repair (the record stays excluded).
    pub(super) fn repair<E>(
        &mut self,
        index: usize,
        text: &str,
        refusal: Refusal,
        mut read: impl FnMut(&str) -> Read<E>,
    ) -> Option<(E, Vec<RepairedTool>)> {
        let mut fields = Fields::of(text)?;
        let mut refusal = refusal;
        let mut made: Vec<(Refusal, Fix)> = Vec::new();
        for _ in 0..MAX_ROUNDS {
            let fix = Fix::of(refusal.code, refusal.field)?;
            // The same repair again would not help.
            if made.iter().any(|(_, f)| *f == fix) {
                return None;
            }
            self.apply(fix, &mut fields, text)?;
            made.push((refusal, fix));
            match read(&fields.text()) {
                Read::Indexed(entry, id) => {
                    let repaired = made
                        .into_iter()
                        .map(|(refusal, fix)| RepairedTool {
                            index,
                            code: refusal.code,
                            field: refusal.field,
                            reason: refusal.reason,
                            change: fix.change(&id),
                            id: id.clone(),
                            local: fix.is_local(),
                        })
                        .collect();
                    return Some((entry, repaired));
                }
                Read::Refused(next) => refusal = next,
                Read::Other => return None,
            }
        }
        None
    }

    fn apply(&mut self, fix: Fix, fields: &mut Fields<'_>, text: &str) -> Option<()> {
        match fix {
            Fix::WithoutInputSchema => {
                fields.remove(&["inputSchema", "parameters", "input_schema"])
            }
            Fix::ReadableOnly => {
                // Only a named tool is worth indexing by these fields.
                fields.string("name")?;
                let description = fields.string("description");
                let mut kept = Fields(Vec::new());
                for key in UNREADABLE_FIELDS {
                    match (key, fields.raw(key)) {
                        ("description", _) => {}
                        (_, Some(value)) => kept.0.push((key.into(), Cow::Owned(value.into()))),
                        (_, None) => {}
                    }
                }
                if let Some(description) = description {
                    kept.set(
                        "description",
                        serde_json::Value::from(description).to_string(),
                    );
                }
                *fields = kept;
            }
            Fix::Rename(key) => {
                let renamed = self.rename(key, fields, text)?;
                fields.set(key, serde_json::Value::from(renamed).to_string());
                // It named the old id.
                fields.remove(&["id"]);
            }
            Fix::WithoutMcp => fields.remove(&["mcp"]),
            Fix::WithoutLabel => fields.remove(&["label", "title"]),
            Fix::WithoutDescription => fields.set("description", "\"\"".into()),
            Fix::ClientSource => {
                fields.set("source", "\"client\"".into());
                fields.remove(&["id"]);
            }
        }
        Some(())
    }

    /// A safe, unique value for the record's `name` or `owner`: its text
    /// without invisible characters, ':' as '_', trimmed and cut to the limit
    /// (a stand-in from its hash when nothing is left), then `_2`, `_3`… until
    /// the tool's id is no other record's. Never a control tool's name.
    fn rename(&mut self, key: &'static str, fields: &Fields<'_>, text: &str) -> Option<String> {
        let is_name = key == "name";
        let max = if is_name {
            MAX_NAME_CHARS
        } else {
            MAX_OWNER_CHARS
        };
        let raw = fields.raw(key);
        let base = fields
            .string(key)
            .map(|given| safe_identifier(&given, max))
            .filter(|safe| !safe.is_empty())
            .unwrap_or_else(|| stand_in(raw.unwrap_or(text)));
        // The id the tool will have: an unknown source is repaired to `client`.
        let source = match fields.raw("source") {
            None | Some("null") => Source::Openclaw,
            Some(_) => fields
                .string("source")
                .and_then(|s| Source::parse(&s))
                .unwrap_or(Source::Client),
        };
        let owner = fields
            .string("owner")
            .unwrap_or_else(|| source.default_owner().to_string());
        let name = fields.string("name").unwrap_or_default();
        let id_of = |candidate: &str| {
            if is_name {
                format!("{}:{owner}:{candidate}", source.as_str())
            } else {
                format!("{}:{candidate}:{name}", source.as_str())
            }
        };
        self.unique(&base, max, is_name, id_of)
    }

    fn unique(
        &mut self,
        base: &str,
        max: usize,
        is_name: bool,
        id_of: impl Fn(&str) -> String,
    ) -> Option<String> {
        if let Some(seed) = self.seed.take() {
            self.taken.extend(seed());
        }
        let family = id_of(base);
        let start = self.next.get(&family).copied().unwrap_or(1);
        for n in start..=MAX_SUFFIX {
            self.tries_left = self.tries_left.checked_sub(1)?;
            let candidate = suffixed(base, n, max);
            if is_name && CONTROL_TOOL_NAMES.contains(&candidate.as_str()) {
                continue;
            }
            if self.taken.insert(id_of(&candidate)) {
                self.next.insert(family, n + 1);
                return Some(candidate);
            }
        }
        self.next.insert(family, MAX_SUFFIX + 1);
        None
    }
}

/// The repair a refusal has, by its code and field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fix {
    WithoutInputSchema,
    /// A record that cannot be read: its source, owner, name and description alone.
    ReadableOnly,
    /// `name` or `owner` made safe and unique.
    Rename(&'static str),
    WithoutMcp,
    WithoutLabel,
    WithoutDescription,
    ClientSource,
}

impl Fix {
    fn of(code: ExclusionCode, field: Option<&str>) -> Option<Fix> {
        Some(match (code, field) {
            (ExclusionCode::InvalidSchema, Some("inputSchema")) => Fix::WithoutInputSchema,
            (ExclusionCode::UnreadableRecord, _) => Fix::ReadableOnly,
            (ExclusionCode::ControlTool, _) => Fix::Rename("name"),
            (ExclusionCode::InvalidField, Some("name")) => Fix::Rename("name"),
            (ExclusionCode::InvalidField, Some("owner")) => Fix::Rename("owner"),
            (ExclusionCode::InvalidField, Some("mcp")) => Fix::WithoutMcp,
            (ExclusionCode::InvalidField, Some("label" | "title")) => Fix::WithoutLabel,
            (ExclusionCode::InvalidField, Some("description")) => Fix::WithoutDescription,
            (ExclusionCode::InvalidField, Some("source")) => Fix::ClientSource,
            _ => return None,
        })
    }

    fn is_local(self) -> bool {
        !matches!(self, Fix::Rename(_) | Fix::ReadableOnly | Fix::ClientSource)
    }

    fn change(self, id: &str) -> String {
        match self {
            Fix::WithoutInputSchema => "indexed without its input schema".into(),
            Fix::ReadableOnly => "indexed by its source, owner, name and description only".into(),
            Fix::Rename(_) => format!("renamed to {id}"),
            Fix::WithoutMcp => "indexed without its MCP routing data".into(),
            Fix::WithoutLabel => "indexed without its label".into(),
            Fix::WithoutDescription => "indexed without its description".into(),
            Fix::ClientSource => "indexed as a client tool".into(),
        }
    }
}

/// `text` as a name or owner the catalog takes: without control and
/// invisible characters (`text::is_invisible`), ':' as '_', trimmed, at most
/// `max_chars`. Empty when nothing is left.
fn safe_identifier(text: &str, max_chars: usize) -> String {
    let kept: String = text
        .chars()
        .filter(|&c| !c.is_control() && !is_invisible(c))
        .map(|c| if c == ':' { '_' } else { c })
        .collect();
    prefix(kept.trim(), max_chars).trim().to_string()
}

/// A plain ASCII name standing for a value with nothing safe in it.
fn stand_in(original: &str) -> String {
    format!("tool_{}", &blake3::hash(original.as_bytes()).to_hex()[..12])
}

/// The `n`th candidate of `base` (`base`, `base_2`, …), within `max_chars`.
fn suffixed(base: &str, n: usize, max_chars: usize) -> String {
    if n <= 1 {
        return base.to_string();
    }
    let suffix = format!("_{n}");
    let head = prefix(base, max_chars.saturating_sub(suffix.len())).trim_end();
    format!("{head}{suffix}")
}

/// The id a record's text names (`<source>:<owner>:<name>`, defaults
/// applied), when its source is known and its owner and name are strings.
pub(super) fn natural_id(text: &str) -> Option<String> {
    let fields = Fields::of(text)?;
    let plain = |key: &str| match fields.raw(key) {
        None | Some("null") => Some(None),
        Some(_) => fields.string(key).map(Some),
    };
    let source = match plain("source")? {
        None => Source::Openclaw,
        Some(s) => Source::parse(&s)?,
    };
    let owner = plain("owner")?.unwrap_or_else(|| source.default_owner().to_string());
    let name = fields.string("name")?;
    Some(source.tool_id(&owner, &name))
}

/// A record's top-level fields, in order: each key (decoded) and its value's
/// text, not parsed.
struct Fields<'a>(Vec<(String, Cow<'a, str>)>);

impl<'a> Fields<'a> {
    /// The fields of a JSON object's text, or `None` when it is not an object
    /// whose members can be told apart (brackets and strings balanced).
    fn of(text: &'a str) -> Option<Fields<'a>> {
        let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?;
        let mut fields = Vec::new();
        if inner.trim().is_empty() {
            return Some(Fields(fields));
        }
        for member in split_top_level(inner, b',', usize::MAX)? {
            let mut parts = split_top_level(member, b':', 1)?.into_iter();
            let (key, value) = (parts.next()?.trim(), parts.next()?.trim());
            if !key.starts_with('"') || value.is_empty() {
                return None;
            }
            let key: String = serde_json::from_str(key).ok()?;
            fields.push((key, Cow::Borrowed(value)));
        }
        Some(Fields(fields))
    }

    /// The value text of `key` (the last one, as a reader takes it).
    fn raw(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// The value of `key` when it is a JSON string.
    fn string(&self, key: &str) -> Option<String> {
        serde_json::from_str(self.raw(key)?).ok()
    }

    fn remove(&mut self, keys: &[&str]) {
        self.0.retain(|(k, _)| !keys.contains(&k.as_str()));
    }

    fn set(&mut self, key: &str, value: String) {
        self.remove(&[key]);
        self.0.push((key.to_string(), Cow::Owned(value)));
    }

    fn text(&self) -> String {
        let mut out = String::from("{");
        for (i, (key, value)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::Value::from(key.as_str()).to_string());
            out.push(':');
            out.push_str(value);
        }
        out.push('}');
        out
    }
}

/// Whether every repair keeps its tool's source, owner and name (see
/// [`RepairedTool`]): only then may a derived version keep them.
pub(super) fn all_local(repaired: &[RepairedTool]) -> bool {
    repaired.iter().all(|r| r.local)
}

/// Whether each repaired record sits at the same position in `built` (a
/// derived version's records) as in `given` (the list a caller passed): only
/// then are the reported positions a full build's.
pub(super) fn same_positions(
    repaired: &[RepairedTool],
    built: &[Arc<StoredRecord>],
    given: &[Arc<StoredRecord>],
) -> bool {
    repaired.iter().all(|r| {
        let digest = |records: &[Arc<StoredRecord>]| records.get(r.index).map(|x| x.digest);
        digest(built).is_some_and(|d| Some(d) == digest(given))
    })
}

/// A catalog cache key for a build with `repair` on: never the key of a
/// build without it (the same records make other data).
pub(super) fn keyed(key: String, repair: bool) -> String {
    if repair {
        format!("repair:{key}")
    } else {
        key
    }
}

impl Catalog {
    /// Records indexed in a repaired form (`repair` option), in input order;
    /// empty without the option.
    pub fn repaired(&self) -> &[RepairedTool] {
        &self.data().repaired
    }
}

#[cfg(test)]
mod tests;

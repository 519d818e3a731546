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

use super::records::UNREADABLE_FIELDS;
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

/// `text` split at `separator` where it stands outside strings and brackets,
/// at most `max_splits` times; `None` when the brackets or strings do not
/// balance or a part is empty.
fn split_top_level(text: &str, separator: u8, max_splits: usize) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0usize, false, false, 0);
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.checked_sub(1)?,
            _ if b == separator && depth == 0 && parts.len() < max_splits => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if in_string || depth != 0 {
        return None;
    }
    parts.push(&text[start..]);
    parts.iter().all(|p| !p.trim().is_empty()).then_some(parts)
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
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::catalog::{unreadable_record, CatalogOptions, SearchOptions, SourceSelector};

    fn options(repair: bool) -> CatalogOptions {
        serde_json::from_value(json!({ "repair": repair, "cache": false })).unwrap()
    }

    fn build(tools: &[Value], repair: bool) -> Catalog {
        Catalog::from_json_text(&Value::from(tools.to_vec()).to_string(), &options(repair)).unwrap()
    }

    fn ids(catalog: &Catalog) -> Vec<String> {
        catalog.entries().map(|e| e.id.clone()).collect()
    }

    fn as_json<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
        items
            .iter()
            .map(|x| serde_json::to_value(x).unwrap())
            .collect()
    }

    /// The record of a tool JSON could not express, with its readable fields.
    fn unreadable(name: &str) -> String {
        let readable = json!({ "name": name, "description": "lists invoices" }).to_string();
        unreadable_record("JSON.stringify threw TypeError: BigInt", Some(&readable))
    }

    /// One tool of each repair, and ones without a repair.
    fn odd_tools() -> Vec<Value> {
        let unreadable: Value = serde_json::from_str(&unreadable("list_invoices")).unwrap();
        vec![
            json!({ "name": "read_file", "description": "reads a file" }),
            json!({ "name": "tool_search", "description": "searches the web" }),
            json!({ "name": "send\u{200B}mail", "description": "sends an email" }),
            json!({ "name": "git:status", "description": "shows the git status" }),
            json!({ "name": "make_chart", "description": "draws a chart", "inputSchema": 5 }),
            unreadable,
            json!({ "name": "bad_mcp", "mcp": { "serverName": "s", "toolName": "t" } }),
            json!({ "name": "bad_label", "label": 5, "description": "labelled" }),
            json!({ "name": "bad_title", "title": [], "description": "titled" }),
            json!({ "name": "bad_description", "description": { "text": "x" } }),
            json!({ "name": "other_source", "source": "plugin", "owner": "p" }),
            json!({ "name": "owned", "owner": "team:a" }),
            json!({ "description": "a tool without a name" }),
            json!({ "name": "read_file", "description": "reads a file again" }),
            json!({ "name": "mismatched", "id": "openclaw:core:other" }),
            json!({ "name": "odd_mode", "catalogMode": "sometimes" }),
            json!("not a tool"),
        ]
    }

    #[test]
    fn each_refusal_with_a_repair_is_indexed_in_the_same_build() {
        let catalog = build(&odd_tools(), true);
        let made: Vec<(usize, &str, Option<&str>, &str)> = catalog
            .repaired()
            .iter()
            .map(|r| (r.index, r.code.as_str(), r.field, r.id.as_str()))
            .collect();
        let missing_name = format!(
            "openclaw:core:{}",
            stand_in(r#"{"description":"a tool without a name"}"#)
        );
        assert_eq!(
            made,
            [
                (
                    1,
                    "CONTROL_TOOL",
                    Some("name"),
                    "openclaw:core:tool_search_2"
                ),
                (2, "INVALID_FIELD", Some("name"), "openclaw:core:sendmail"),
                (3, "INVALID_FIELD", Some("name"), "openclaw:core:git_status"),
                (
                    4,
                    "INVALID_SCHEMA",
                    Some("inputSchema"),
                    "openclaw:core:make_chart"
                ),
                (5, "UNREADABLE_RECORD", None, "openclaw:core:list_invoices"),
                (6, "INVALID_FIELD", Some("mcp"), "openclaw:core:bad_mcp"),
                (7, "INVALID_FIELD", Some("label"), "openclaw:core:bad_label"),
                (8, "INVALID_FIELD", Some("title"), "openclaw:core:bad_title"),
                (
                    9,
                    "INVALID_FIELD",
                    Some("description"),
                    "openclaw:core:bad_description"
                ),
                (10, "INVALID_FIELD", Some("source"), "client:p:other_source"),
                (11, "INVALID_FIELD", Some("owner"), "openclaw:team_a:owned"),
                (12, "INVALID_FIELD", Some("name"), missing_name.as_str()),
            ]
        );
        let changes: Vec<&str> = catalog
            .repaired()
            .iter()
            .map(|r| r.change.as_str())
            .collect();
        assert_eq!(changes[0], "renamed to openclaw:core:tool_search_2");
        assert_eq!(changes[3], "indexed without its input schema");
        assert_eq!(
            changes[4],
            "indexed by its source, owner, name and description only"
        );
        assert_eq!(changes[9], "indexed as a client tool");
        // The refusal is the one a build without repairs reports.
        let plain = build(&odd_tools(), false);
        for r in catalog.repaired() {
            let x = plain
                .excluded()
                .iter()
                .find(|x| x.index == r.index)
                .unwrap();
            assert_eq!(
                (x.code, x.field, x.reason.as_str()),
                (r.code, r.field, r.reason.as_str())
            );
        }
        // What stays excluded: the replaced duplicate and the refusals without a repair.
        let excluded: Vec<(usize, &str)> = catalog
            .excluded()
            .iter()
            .map(|x| (x.index, x.code.as_str()))
            .collect();
        assert_eq!(
            excluded,
            [
                (0, "DUPLICATE_ID"),
                (14, "INVALID_FIELD"),
                (15, "INVALID_FIELD"),
                (16, "UNREADABLE_RECORD")
            ]
        );
        assert!(
            catalog.control_named().is_empty(),
            "a renamed control tool is cataloged"
        );
        // Each repaired tool is found under its id, in its repaired form.
        for r in catalog.repaired() {
            let entry = catalog
                .resolve(&r.id, crate::catalog::LookupStyle::Structured)
                .unwrap();
            assert_eq!(entry.id, r.id);
        }
        let chart = catalog
            .resolve("openclaw:core:make_chart", Default::default())
            .unwrap();
        assert!(chart.input_schema.is_none());
        let invoices = catalog
            .resolve("openclaw:core:list_invoices", Default::default())
            .unwrap();
        assert_eq!(invoices.description, "lists invoices");
        let hits = catalog
            .search("send an email", &SearchOptions::hits(Some(3.0)))
            .unwrap();
        assert_eq!(hits[0].id, "openclaw:core:sendmail");
        let hits = catalog
            .search("searches the web", &SearchOptions::hits(Some(3.0)))
            .unwrap();
        assert_eq!(hits[0].id, "openclaw:core:tool_search_2");
    }

    #[test]
    fn without_the_option_nothing_is_repaired() {
        let plain = build(&odd_tools(), false);
        assert!(plain.repaired().is_empty());
        assert_eq!(plain.excluded().len(), 16);
        assert_eq!(plain.control_named().len(), 1);
        // A catalog with nothing to repair is the same with the option.
        let fine = [json!({ "name": "a" }), json!({ "name": "b", "owner": "x" })];
        let (with, without) = (build(&fine, true), build(&fine, false));
        assert_eq!(with.fingerprint(), without.fingerprint());
        assert!(with.repaired().is_empty());
    }

    #[test]
    fn a_record_with_several_refusals_is_repaired_for_each() {
        let catalog = build(
            &[
                json!({ "name": "tool_search\u{202E}", "owner": " me ", "parameters": [], "label": 1 }),
            ],
            true,
        );
        let made: Vec<(&str, Option<&str>, &str)> = catalog
            .repaired()
            .iter()
            .map(|r| (r.code.as_str(), r.field, r.id.as_str()))
            .collect();
        assert_eq!(
            made,
            [
                ("INVALID_FIELD", Some("label"), "openclaw:me:tool_search_2"),
                ("INVALID_FIELD", Some("name"), "openclaw:me:tool_search_2"),
                ("INVALID_FIELD", Some("owner"), "openclaw:me:tool_search_2"),
                (
                    "INVALID_SCHEMA",
                    Some("inputSchema"),
                    "openclaw:me:tool_search_2"
                ),
            ]
        );
        assert_eq!(ids(&catalog), ["openclaw:me:tool_search_2"]);
    }

    #[test]
    fn renamed_tools_take_no_other_tools_id() {
        let long = "x".repeat(MAX_NAME_CHARS + 20);
        let catalog = build(
            &[
                json!({ "name": "a:b" }),
                json!({ "name": "a_b" }),
                json!({ "name": "a\u{200D}_b" }),
                json!({ "name": long }),
                json!({ "name": format!("{long}y") }),
                json!({ "name": "a_b_2" }),
            ],
            true,
        );
        let long_cut = "x".repeat(MAX_NAME_CHARS);
        let long_second = format!("{}_2", "x".repeat(MAX_NAME_CHARS - 2));
        let mut want = vec![
            "openclaw:core:a_b".to_string(),
            "openclaw:core:a_b_2".to_string(),
            "openclaw:core:a_b_3".to_string(),
            "openclaw:core:a_b_4".to_string(),
            format!("openclaw:core:{long_cut}"),
            format!("openclaw:core:{long_second}"),
        ];
        want.sort();
        assert_eq!(ids(&catalog), want);
        assert!(catalog.excluded().is_empty());
        let renamed: Vec<(usize, &str)> = catalog
            .repaired()
            .iter()
            .map(|r| (r.index, r.id.as_str()))
            .collect();
        assert_eq!(renamed[0], (0, "openclaw:core:a_b_3"));
        assert_eq!(renamed[1], (2, "openclaw:core:a_b_4"));
    }

    #[test]
    fn renames_are_bounded() {
        // More tools with one unsafe name than there are suffixes: the rest stay excluded.
        let tools: Vec<Value> = (0..MAX_SUFFIX + 20)
            .map(|i| json!({ "name": "a:b", "description": format!("tool {i}") }))
            .collect();
        let catalog = build(&tools, true);
        assert_eq!(catalog.size(), MAX_SUFFIX);
        assert_eq!(catalog.repaired().len(), MAX_SUFFIX);
        assert_eq!(catalog.excluded().len(), 20);
        assert!(catalog
            .excluded()
            .iter()
            .all(|x| x.code == ExclusionCode::InvalidField && x.field == Some("name")));
        // The build's total is bounded too, whatever the names.
        let mut repairs = Repairs::new(0, Vec::new);
        let id_of = |c: &str| format!("openclaw:core:{c}");
        let mut made = 0;
        for i in 0..RENAME_TRIES_BASE + 10 {
            if repairs.unique(&format!("n{i}"), 64, true, id_of).is_some() {
                made += 1;
            }
        }
        assert_eq!(made, RENAME_TRIES_BASE);
    }

    #[test]
    fn duplicates_of_a_repaired_tool_stay_excluded() {
        let catalog = build(
            &[
                json!({ "name": "chart", "inputSchema": 5 }),
                json!({ "name": "chart", "description": "the later one" }),
                json!({ "name": "plot", "description": "first" }),
                json!({ "name": "plot", "inputSchema": 5 }),
            ],
            true,
        );
        let repaired: Vec<usize> = catalog.repaired().iter().map(|r| r.index).collect();
        assert_eq!(
            repaired,
            [3],
            "the replaced record is not reported as repaired"
        );
        let excluded: Vec<(usize, &str)> = catalog
            .excluded()
            .iter()
            .map(|x| (x.index, x.code.as_str()))
            .collect();
        assert_eq!(excluded, [(0, "DUPLICATE_ID"), (2, "DUPLICATE_ID")]);
    }

    #[test]
    fn strict_builds_repair_and_refuse_the_rest() {
        let strict: CatalogOptions =
            serde_json::from_value(json!({ "repair": true, "strict": true })).unwrap();
        let text = json!([{ "name": "a:b" }, { "name": "c", "inputSchema": 5 }]).to_string();
        let catalog = Catalog::from_json_text(&text, &strict).unwrap();
        assert_eq!(catalog.repaired().len(), 2);
        let text = json!([{ "name": "a:b" }, { "name": "c", "catalogMode": "x" }]).to_string();
        let err = Catalog::from_json_text(&text, &strict).unwrap_err();
        assert!(
            err.message.starts_with("tool #1: unknown catalogMode"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_repaired_catalog_shares_no_data_with_an_unrepaired_one() {
        let cached = |repair: bool| -> CatalogOptions {
            serde_json::from_value(json!({ "repair": repair })).unwrap()
        };
        let odd = json!([{ "name": "repair_cache_probe", "inputSchema": 5 }]).to_string();
        let plain = Catalog::from_json_text(&odd, &cached(false)).unwrap();
        let repaired = Catalog::from_json_text(&odd, &cached(true)).unwrap();
        assert_eq!((plain.size(), repaired.size()), (0, 1));
        assert_eq!(repaired.repaired().len(), 1);
        assert!(!Arc::ptr_eq(&plain.data, &repaired.data));
        // The same tool given without the schema: the same entry, but not the same catalog.
        let clean = json!([{ "name": "repair_cache_probe" }]).to_string();
        let clean = Catalog::from_json_text(&clean, &cached(true)).unwrap();
        assert_eq!(ids(&clean), ids(&repaired));
        assert_ne!(clean.fingerprint(), repaired.fingerprint());
        assert!(clean.repaired().is_empty());
    }

    /// A derived version and a full repaired build of its records agree on
    /// everything a caller reads.
    fn assert_full_build(derived: &Catalog, records: &[Arc<StoredRecord>]) {
        let full = Catalog::from_stored(records.to_vec(), &options(true)).unwrap();
        assert_eq!(ids(derived), ids(&full));
        assert_eq!(as_json(derived.excluded()), as_json(full.excluded()));
        assert_eq!(as_json(derived.repaired()), as_json(full.repaired()));
        assert_eq!(derived.fingerprint(), full.fingerprint());
        for query in ["chart", "send an email", "reads a file", "status"] {
            let found = |c: &Catalog| -> Vec<String> {
                c.search(query, &SearchOptions::hits(Some(10.0)))
                    .unwrap()
                    .into_iter()
                    .map(|h| h.id)
                    .collect()
            };
            assert_eq!(found(derived), found(&full), "{query}");
        }
    }

    fn server(owner: &str, tools: &[Value]) -> String {
        Value::from(
            tools
                .iter()
                .map(|t| {
                    let mut t = t.clone();
                    t["source"] = Value::from("mcp");
                    t["owner"] = Value::from(owner);
                    t
                })
                .collect::<Vec<_>>(),
        )
        .to_string()
    }

    #[test]
    fn derived_versions_repair_as_a_full_build() {
        let base_tools = [
            json!({ "name": "read_file", "description": "reads a file" }),
            json!({ "name": "chart", "description": "draws a chart", "inputSchema": 5 }),
        ];
        let base = build(&base_tools, true);
        let selector = |owner: &str| -> SourceSelector {
            serde_json::from_value(json!({ "source": "mcp", "owner": owner })).unwrap()
        };
        // Local repairs (a schema, a label): derived, not rebuilt.
        let mail = base
            .with_source(
                &selector("mail"),
                &server(
                    "mail",
                    &[
                        json!({ "name": "send", "description": "send an email", "label": 3 }),
                        json!({ "name": "status", "inputSchema": "any" }),
                    ],
                ),
            )
            .unwrap();
        assert_eq!(mail.repaired().len(), 3);
        assert_eq!(
            mail.data.index_cache.state,
            crate::search::IndexCacheState::Derived
        );
        assert_full_build(&mail, &mail.data.records);
        // Renames among the added tools: unique among the kept ones too.
        let git = mail
            .with_source(
                &selector("git"),
                &server(
                    "git",
                    &[
                        json!({ "name": "git:status", "description": "git status" }),
                        json!({ "name": "git_status", "description": "plain" }),
                        json!({ "name": "tool_call" }),
                    ],
                ),
            )
            .unwrap();
        let git_repairs: Vec<&str> = git
            .repaired()
            .iter()
            .filter(|r| r.id.starts_with("mcp:git:"))
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(git_repairs, ["mcp:git:git_status_2", "mcp:git:tool_call_2"]);
        assert!(git
            .repaired()
            .iter()
            .any(|r| r.id == "mcp:git:git_status_2"));
        assert_full_build(&git, &git.data.records);
        // A version of a catalog holding a renamed tool: built in full, equal to a full build.
        let replaced = git
            .with_source(
                &selector("mail"),
                &server("mail", &[json!({ "name": "send:now" })]),
            )
            .unwrap();
        assert_ne!(
            replaced.data.index_cache.state,
            crate::search::IndexCacheState::Derived
        );
        assert_full_build(&replaced, &replaced.data.records);
        let appended = git
            .append(
                &json!([{ "name": "git_status_2", "source": "mcp", "owner": "git" }]).to_string(),
            )
            .unwrap();
        assert_full_build(&appended, &appended.data.records);
        assert!(appended
            .repaired()
            .iter()
            .any(|r| r.id == "mcp:git:git_status_3"));
        // Removing the owner of repaired tools removes their repairs.
        let gone = git.with_source(&selector("git"), "[]").unwrap();
        assert!(gone
            .repaired()
            .iter()
            .all(|r| !r.id.starts_with("mcp:git:")));
        assert_full_build(&gone, &gone.data.records);
        // A duplicate replacing a repaired tool drops its repair.
        let again = mail
            .append(&server(
                "mail",
                &[json!({ "name": "status", "description": "fine now" })],
            ))
            .unwrap();
        assert!(again.repaired().iter().all(|r| r.id != "mcp:mail:status"));
        assert_full_build(&again, &again.data.records);
    }

    #[test]
    fn updates_of_a_repaired_catalog_equal_a_full_build() {
        use crate::search::IndexCacheState::Derived;
        // Eight servers of five tools, each server's tools together; one schema to repair.
        let mut tools: Vec<Value> = (0..40)
            .map(|i| json!({ "source": "mcp", "owner": format!("s{}", i / 5), "name": format!("op{i}"), "description": format!("operation {i} exports reports") }))
            .collect();
        tools[1]["inputSchema"] = Value::from(5);
        let base = build(&tools, true);
        assert_eq!(base.repaired().len(), 1);
        let check = |from: &Catalog, next: &[Value], derived: bool| {
            let updated = from
                .update(&Value::from(next.to_vec()).to_string())
                .unwrap();
            let full = build(next, true);
            assert_eq!(ids(&updated), ids(&full));
            assert_eq!(as_json(updated.repaired()), as_json(full.repaired()));
            assert_eq!(as_json(updated.excluded()), as_json(full.excluded()));
            assert_eq!(updated.fingerprint(), full.fingerprint());
            assert_eq!(updated.data.index_cache.state == Derived, derived);
            updated
        };
        // The last server changed: the repaired record keeps its position, derived.
        let mut next = tools.clone();
        next[37]["description"] = Value::from("changed");
        check(&base, &next, true);
        // The first server changed: its records move behind the others in a derived
        // version, so the repair's position would too: a full build.
        let mut next = tools.clone();
        next[0]["description"] = Value::from("changed");
        check(&base, &next, false);
        // A newly odd tool in the last server: renamed in the derived version.
        let mut odd = tools.clone();
        odd[38]["name"] = Value::from("op:38");
        let renamed = check(&base, &odd, true);
        assert_eq!(renamed.repaired()[1].id, "mcp:s7:op_38");
        // A catalog holding a renamed tool: its next version is one full build.
        let mut next = odd.clone();
        next[32]["description"] = Value::from("changed");
        check(&renamed, &next, false);
    }

    #[test]
    fn fields_are_split_without_reading_their_values() {
        let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
        let text =
            format!(r#" {{ "name" : "a,b:{{", "x":{deep}, "n\"k":{{"q":[1,{{}}]}}, "z": nul }} "#);
        let fields = Fields::of(&text).unwrap();
        let keys: Vec<&str> = fields.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["name", "x", "n\"k", "z"]);
        assert_eq!(fields.string("name").as_deref(), Some("a,b:{"));
        assert_eq!(fields.raw("z"), Some("nul"));
        assert_eq!(Fields::of("{}").map(|f| f.0.len()), Some(0));
        for bad in [
            "[]",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":[1}",
            "{\"a\":\"x}",
            "{a:1}",
            "\"s\"",
        ] {
            assert!(Fields::of(bad).is_none(), "{bad}");
        }
        // A deep value in an unknown field: the record is read by its plain fields.
        let text = format!(r#"[{{"name":"deep_extra","description":"d","x":{deep}}}]"#);
        let catalog = Catalog::from_json_text(&text, &options(true)).unwrap();
        assert_eq!(ids(&catalog), ["openclaw:core:deep_extra"]);
        assert_eq!(catalog.repaired()[0].code, ExclusionCode::UnreadableRecord);
        let plain = Catalog::from_json_text(&text, &options(false)).unwrap();
        assert_eq!(plain.size(), 0);
    }

    #[test]
    fn natural_ids_are_the_ids_records_name() {
        assert_eq!(
            natural_id(r#"{"name":"a"}"#).as_deref(),
            Some("openclaw:core:a")
        );
        assert_eq!(
            natural_id(r#"{"name":"a","source":"client","owner":null}"#).as_deref(),
            Some("client:client:a")
        );
        assert_eq!(natural_id(r#"{"name":"a","source":"x"}"#), None);
        assert_eq!(natural_id(r#"{"name":5}"#), None);
        assert_eq!(natural_id("[1]"), None);
    }

    #[test]
    fn unreadable_records_carry_their_readable_fields() {
        let bare = unreadable_record("why", None);
        assert_eq!(
            bare,
            Value::from(format!("{}why", crate::catalog::UNREADABLE)).to_string()
        );
        assert_eq!(unreadable_record("why", Some("{}")), bare);
        assert_eq!(unreadable_record("why", Some("not json")), bare);
        let text = unreadable_record("why", Some(r#"{"name":"n","other":1,"owner":"o"}"#));
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value,
            json!({ crate::catalog::UNREADABLE: "why", "name": "n", "owner": "o" })
        );
        // Either form is excluded alike without repairs, with its reason.
        for text in [bare, text] {
            let catalog = Catalog::from_json_text(&format!("[{text}]"), &options(false)).unwrap();
            let x = &catalog.excluded()[0];
            assert_eq!(
                (x.code, x.reason.as_str()),
                (ExclusionCode::UnreadableRecord, "why")
            );
        }
        // Only a named one is repaired.
        let nameless = unreadable_record("why", Some(r#"{"owner":"o"}"#));
        let catalog = Catalog::from_json_text(&format!("[{nameless}]"), &options(true)).unwrap();
        assert_eq!(catalog.size(), 0);
    }

    #[test]
    fn safe_identifiers_follow_the_catalogs_rules() {
        assert_eq!(safe_identifier(" a:\u{200B}b\u{7}\u{FE0F} ", 10), "a_b");
        assert_eq!(safe_identifier("\u{202E}\u{200B}", 10), "");
        assert_eq!(safe_identifier("abc def", 4), "abc");
        assert_eq!(suffixed("abcdef", 12, 6), "abc_12");
        assert_eq!(suffixed("ab", 1, 6), "ab");
        assert!(stand_in("x").starts_with("tool_") && stand_in("x").is_ascii());
    }
}

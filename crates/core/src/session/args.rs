//! Reading control-tool arguments from models: JSON-string arguments, aliases
//! (`toolId`/`tool_id`/`name` for `id`; `input`/`arguments` for `args`),
//! repair of flattened arguments, and refusal of ambiguous selectors (better
//! an error the model can fix than a call to the wrong tool).

use serde_json::{Map, Value};
use tool_search_base::text::clip;

use crate::catalog::{BatchQuery, BatchRequest, Catalog, LookupStyle};
use crate::error::{Error, ErrorCode, Result};
use crate::limits::{MAX_ARGS_BYTES, MAX_BATCH_QUERIES, MAX_JSON_DEPTH, MAX_QUERY_CHARS};
use crate::schema::check_bounds;

const ID_KEYS: [&str; 3] = ["id", "toolId", "tool_id"];
const NAME_KEY: &str = "name";
const ARGS_KEYS: [&str; 3] = ["args", "input", "arguments"];

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidRequest, message)
}

/// Bounded argument value as an object. A JSON string holding an object (as
/// providers deliver arguments) is parsed; `null` is `{}`.
pub fn object_args(raw: &Value, what: &str) -> Result<Map<String, Value>> {
    check_bounds(raw, MAX_JSON_DEPTH, MAX_ARGS_BYTES)
        .map_err(|e| invalid(format!("{what}: {e}")))?;
    match raw {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(map.clone()),
        Value::String(text) if text.trim_start().starts_with('{') => {
            if text.len() > MAX_ARGS_BYTES {
                return Err(invalid(format!(
                    "{what} are larger than {MAX_ARGS_BYTES} bytes."
                )));
            }
            let parsed: Value = serde_json::from_str(text)
                .map_err(|e| invalid(format!("{what} are not valid JSON: {e}")))?;
            check_bounds(&parsed, MAX_JSON_DEPTH, MAX_ARGS_BYTES)
                .map_err(|e| invalid(format!("{what}: {e}")))?;
            match parsed {
                Value::Object(map) => Ok(map),
                _ => Err(invalid(format!("{what} must be a JSON object."))),
            }
        }
        _ => Err(invalid(format!("{what} must be a JSON object."))),
    }
}

fn limit_of(value: Option<&Value>) -> Result<Option<f64>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(Error::new(
            ErrorCode::InvalidLimit,
            "limit must be a positive integer.",
        )),
    }
}

/// A `tool_search` request: one query, or a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchRequest {
    /// `query` is at most [`MAX_QUERY_CHARS`] characters: a longer one is cut
    /// to a prefix (`cut_from` holds its full length in characters).
    Single {
        query: String,
        limit: Option<f64>,
        cut_from: Option<usize>,
    },
    Batch(BatchRequestOwned),
}

/// A scalar query within [`MAX_QUERY_CHARS`] characters: longer ones (a
/// pasted page, a long multi-step request) are answered on their prefix,
/// cut at the last whitespace of its final 64 characters when there is one.
/// A refusal would read to the model as "search is broken".
pub fn bounded_query(query: String) -> (String, Option<usize>) {
    let Some((cut, _)) = query.char_indices().nth(MAX_QUERY_CHARS) else {
        return (query, None);
    };
    let total = MAX_QUERY_CHARS + query[cut..].chars().count();
    let prefix = &query[..cut];
    let tail_start = prefix.char_indices().rev().nth(63).map_or(0, |(i, _)| i);
    let end = prefix[tail_start..]
        .rfind(char::is_whitespace)
        .map_or(cut, |i| tail_start + i);
    (prefix[..end].trim_end().to_string(), Some(total))
}

/// [`BatchRequest`] without the `Default`/`Deserialize` indirection.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchRequestOwned {
    pub query: Option<String>,
    pub limit: Option<f64>,
    pub queries: Vec<(String, Option<f64>)>,
}

impl BatchRequestOwned {
    pub fn to_request(&self) -> BatchRequest {
        BatchRequest {
            query: self.query.clone(),
            limit: self.limit.map(Value::from),
            queries: Some(
                self.queries
                    .iter()
                    .map(|(q, l)| BatchQuery {
                        query: q.clone(),
                        limit: l.map(Value::from),
                    })
                    .collect(),
            ),
        }
    }

    /// All queries in run order (a non-empty scalar query first), trimmed as searched.
    pub fn all_queries(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .query
            .iter()
            .map(|q| q.trim())
            .filter(|q| !q.is_empty())
            .map(str::to_string)
            .collect();
        out.extend(self.queries.iter().map(|(q, _)| q.trim().to_string()));
        out
    }
}

pub fn parse_search(raw: &Value) -> Result<SearchRequest> {
    // A bare string is the query itself (some small models do this).
    if let Value::String(text) = raw {
        if !text.trim_start().starts_with('{') {
            let (query, cut_from) = bounded_query(text.clone());
            return Ok(SearchRequest::Single {
                query,
                limit: None,
                cut_from,
            });
        }
    }
    let map = object_args(raw, "tool_search arguments")?;
    let query = match map.get("query") {
        None | Some(Value::Null) => None,
        Some(Value::String(q)) => Some(q.clone()),
        Some(_) => {
            return Err(Error::new(
                ErrorCode::InvalidQuery,
                "query must be a string.",
            ))
        }
    };
    let limit = limit_of(map.get("limit"))?;
    match map.get("queries") {
        None | Some(Value::Null) => match query {
            Some(query) => {
                let (query, cut_from) = bounded_query(query);
                Ok(SearchRequest::Single { query, limit, cut_from })
            }
            None => Err(Error::new(
                ErrorCode::InvalidQuery,
                "tool_search needs { \"query\": string } or { \"queries\": [{ \"query\": string }, ...] }.",
            )),
        },
        Some(Value::Array(items)) => {
            if items.len() > MAX_BATCH_QUERIES {
                return Err(Error::new(
                    ErrorCode::InvalidQuery,
                    format!("At most {MAX_BATCH_QUERIES} queries per call; got {}.", items.len()),
                ));
            }
            let mut queries = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    // `queries: ["a", "b"]` is repaired to `[{ query: "a" }, ...]`.
                    Value::String(q) => queries.push((q.clone(), None)),
                    Value::Object(obj) => match obj.get("query") {
                        Some(Value::String(q)) => queries.push((q.clone(), limit_of(obj.get("limit"))?)),
                        _ => {
                            return Err(Error::new(ErrorCode::InvalidQuery, "Each entry of queries needs \"query\": string."))
                        }
                    },
                    _ => return Err(Error::new(ErrorCode::InvalidQuery, "queries must be a list of { query, limit? }.")),
                }
            }
            Ok(SearchRequest::Batch(BatchRequestOwned { query, limit, queries }))
        }
        Some(_) => Err(Error::new(ErrorCode::InvalidQuery, "queries must be a list of { query, limit? }.")),
    }
}

/// The `id` a `tool_describe` call names.
pub fn parse_describe(
    catalog: &Catalog,
    raw: &Value,
    style: LookupStyle,
) -> Result<(String, usize)> {
    if let Value::String(text) = raw {
        if !text.trim_start().starts_with('{') {
            let ordinal = catalog.resolve_ordinal(text, style)?;
            return Ok((text.clone(), ordinal));
        }
    }
    let map = hoist_wrapped(object_args(raw, "tool_describe arguments")?);
    let mut selectors = string_selectors(&map, &ID_KEYS)?;
    if selectors.is_empty() {
        if let Some(Value::String(name)) = map.get(NAME_KEY) {
            selectors.push((NAME_KEY, name.clone()));
        }
    }
    let (requested, ordinal) = resolve_selectors(catalog, &selectors, style)?.ok_or_else(|| {
        invalid("tool_describe needs { \"id\": string }: the exact tool id from tool_search.")
    })?;
    // A `name` next to `id` must not point at another tool.
    if let Some(Value::String(name)) = map.get(NAME_KEY) {
        check_name_agrees(catalog, &requested, ordinal, name, style)?;
    }
    Ok((requested, ordinal))
}

/// A resolved `tool_call`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSpec {
    pub requested: String,
    pub ordinal: usize,
    pub args: Value,
    /// What was repaired, for the event log (`None`: taken as given).
    pub repaired: Option<String>,
}

/// Selector keys in the order they identify the tool: the dedicated keys
/// first, then `id` (the documented one), then `name` (also a common
/// argument name).
const SELECTOR_PRIORITY: [&str; 4] = ["toolId", "tool_id", "id", NAME_KEY];

/// Most segments of a dotted argument key (`args.a.b.c`).
const MAX_DOTTED_SEGMENTS: usize = 16;

/// What a selector value names.
enum Named {
    Tool(usize),
    /// Names tools, but not exactly one (shared name).
    Ambiguous(Error),
    /// Names no tool: may be an argument of the tool another selector names.
    Nothing(Error),
}

fn name_of(catalog: &Catalog, value: &str, style: LookupStyle) -> Named {
    match catalog.resolve_ordinal(value, style) {
        Ok(o) => Named::Tool(o),
        Err(e) if e.code == ErrorCode::AmbiguousTool => Named::Ambiguous(e),
        Err(e) => Named::Nothing(e),
    }
}

pub fn parse_call(catalog: &Catalog, raw: &Value, style: LookupStyle) -> Result<CallSpec> {
    let map = object_args(raw, "tool_call arguments")?;
    let mut repaired: Vec<String> = Vec::new();
    let wrapped = !has_selector(&map);
    let map = hoist_wrapped(map);
    if wrapped && has_selector(&map) {
        repaired.push("double-wrapped call unwrapped".into());
    }

    // Arguments: `args`, or its aliases; several different non-empty ones
    // are ambiguous. `null` and empty wrappers carry nothing.
    let mut explicit: Option<(&str, Map<String, Value>)> = None;
    for key in ARGS_KEYS {
        let Some(value) = map.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        let args = object_args(value, "tool_call \"args\"")?;
        if args.is_empty() {
            continue;
        }
        if let Some((first, prev)) = &explicit {
            if *prev != args {
                return Err(invalid(format!(
                    "tool_call got both \"{first}\" and \"{key}\" with different values; pass the arguments once, in \"args\"."
                )));
            }
            continue;
        }
        if key != "args" {
            repaired.push(format!("\"{key}\" read as \"args\""));
        }
        if value.is_string() {
            repaired.push("JSON-string args parsed".into());
        }
        explicit = Some((key, args));
    }
    let explicit_args = explicit.map(|(_, args)| args);

    // Selectors, in priority order; the first that names a tool identifies it.
    string_selectors(&map, &ID_KEYS)?;
    let selectors: Vec<(&'static str, &Value)> = SELECTOR_PRIORITY
        .iter()
        .filter_map(|&k| map.get(k).filter(|v| !v.is_null()).map(|v| (k, v)))
        .collect();
    let named: Vec<(&'static str, &Value, Option<Named>)> = selectors
        .iter()
        .map(|&(k, v)| (k, v, v.as_str().map(|text| name_of(catalog, text, style))))
        .collect();
    let identifier = named.iter().enumerate().find_map(|(i, (_, _, n))| match n {
        Some(Named::Tool(o)) => Some((i, *o)),
        _ => None,
    });
    let Some((identifier, ordinal)) = identifier else {
        // Nothing names exactly one tool: report the strongest selector's error.
        for (_, _, n) in &named {
            if let Some(Named::Ambiguous(e)) = n {
                return Err(e.clone());
            }
        }
        return match named.into_iter().find_map(|(_, _, n)| n) {
            Some(Named::Nothing(e)) | Some(Named::Ambiguous(e)) => Err(e),
            _ => Err(invalid("tool_call needs { \"id\": string, \"args\"?: object }: the exact tool id from tool_search.")),
        };
    };
    let (id_key, id_value, _) = &named[identifier];
    let requested = id_value.as_str().unwrap_or_default().to_string();
    if *id_key == NAME_KEY {
        repaired.push("\"name\" read as \"id\"".into());
    }

    // The other selectors: agreeing ones are dropped, ones naming no tool are
    // arguments, ones naming another tool are refused unless explicit args
    // say what to run.
    let mut flattened: Map<String, Value> = Map::new();
    for (i, (key, value, n)) in named.iter().enumerate() {
        if i == identifier {
            continue;
        }
        let agrees = match n {
            Some(Named::Tool(o)) => *o == ordinal,
            _ => value
                .as_str()
                .is_some_and(|text| names_entry(catalog, ordinal, text)),
        };
        if agrees {
            continue;
        }
        match n {
            Some(Named::Tool(_)) | Some(Named::Ambiguous(_)) => {
                if explicit_args.is_some() {
                    repaired.push(format!(
                        "\"{key}\" naming another tool ignored: explicit args go to \"{}\"",
                        clip(&requested, 120)
                    ));
                    continue;
                }
                let shown = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string);
                return Err(Error::new(
                    ErrorCode::AmbiguousTool,
                    format!(
                        "tool_call got \"{id_key}\": \"{}\" and \"{key}\": \"{}\", which name different tools; pass only the exact id, with the tool's arguments inside \"args\".",
                        clip(&requested, 120),
                        clip(&shown, 120)
                    ),
                ));
            }
            _ => {
                repaired.push(format!("\"{key}\" read as an argument of the tool"));
                flattened.insert((*key).to_string(), (*value).clone());
            }
        }
    }

    // Ordinary flattened keys and dotted ones (`"args.path": "x"`).
    let mut dotted: Map<String, Value> = Map::new();
    for (key, value) in &map {
        if SELECTOR_PRIORITY.contains(&key.as_str()) || ARGS_KEYS.contains(&key.as_str()) {
            continue;
        }
        match dotted_path(key) {
            Some(path) => insert_path(&mut dotted, &path, value.clone())?,
            None => {
                flattened.insert(key.clone(), value.clone());
            }
        }
    }
    if !dotted.is_empty() {
        let keys: Vec<String> = dotted.keys().take(8).map(|k| clip(k, 40)).collect();
        repaired.push(format!("dotted argument keys nested ({})", keys.join(", ")));
    }

    let args = match explicit_args {
        Some(mut args) => {
            if !flattened.is_empty() {
                let keys: Vec<String> = flattened.keys().take(8).map(|k| clip(k, 40)).collect();
                return Err(invalid(format!(
                    "tool_call got arguments both inside \"args\" and next to \"id\" ({}); put all of the tool's arguments inside \"args\".",
                    keys.join(", ")
                )));
            }
            merge_missing(&mut args, dotted);
            args
        }
        None => {
            if !flattened.is_empty() {
                let keys: Vec<String> = flattened.keys().take(8).map(|k| clip(k, 40)).collect();
                repaired.push(format!(
                    "flattened arguments moved into \"args\" ({})",
                    keys.join(", ")
                ));
            }
            merge_missing(&mut flattened, dotted);
            flattened
        }
    };
    let repaired = (!repaired.is_empty()).then(|| repaired.join("; "));
    Ok(CallSpec {
        requested,
        ordinal,
        args: Value::Object(args),
        repaired,
    })
}

/// Whether `text` is the name or id of the tool at `ordinal`.
fn names_entry(catalog: &Catalog, ordinal: usize, text: &str) -> bool {
    catalog
        .entry(ordinal)
        .is_some_and(|e| e.name == text || e.id == text)
}

fn has_selector(map: &Map<String, Value>) -> bool {
    SELECTOR_PRIORITY
        .iter()
        .any(|k| map.get(*k).is_some_and(|v| !v.is_null()))
}

/// `{ args: { id, args } }` (or `input`/`arguments`) with no selector of its
/// own: the model wrapped the whole call once more; use the inner object.
/// One level only, and only when the wrapper is the sole key.
fn hoist_wrapped(map: Map<String, Value>) -> Map<String, Value> {
    if has_selector(&map) {
        return map;
    }
    let mut present = map.iter().filter(|(_, v)| !v.is_null());
    let (Some((key, inner)), None) = (present.next(), present.next()) else {
        return map;
    };
    if !ARGS_KEYS.contains(&key.as_str()) {
        return map;
    }
    let Ok(inner) = object_args(inner, "tool_call arguments") else {
        return map;
    };
    if SELECTOR_PRIORITY
        .iter()
        .any(|k| inner.get(*k).is_some_and(Value::is_string))
    {
        inner
    } else {
        map
    }
}

/// The argument path of a dotted key: `args.a.b` is `["a", "b"]`. Keys
/// without an argument prefix, or with an empty segment, are not dotted.
fn dotted_path(key: &str) -> Option<Vec<&str>> {
    let (prefix, rest) = key.split_once('.')?;
    if !ARGS_KEYS.contains(&prefix) {
        return None;
    }
    let path: Vec<&str> = rest.split('.').collect();
    (path.iter().all(|s| !s.is_empty())).then_some(path)
}

fn insert_path(target: &mut Map<String, Value>, path: &[&str], value: Value) -> Result<()> {
    if path.len() > MAX_DOTTED_SEGMENTS {
        return Err(invalid(format!(
            "a dotted argument key has more than {MAX_DOTTED_SEGMENTS} segments."
        )));
    }
    let conflict = || {
        invalid(format!(
            "dotted argument key \"args.{}\" conflicts with another one.",
            clip(&path.join("."), 80)
        ))
    };
    let (last, parents) = path.split_last().ok_or_else(conflict)?;
    let mut node = target;
    for segment in parents {
        let slot = node
            .entry((*segment).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        node = slot.as_object_mut().ok_or_else(conflict)?;
    }
    if node.contains_key(*last) {
        return Err(conflict());
    }
    node.insert((*last).to_string(), value);
    Ok(())
}

/// Add `extra`'s entries that `base` lacks; where both hold objects, merge
/// into them the same way (`base` wins every conflict). Depth is bounded by
/// the dotted keys `extra` was built from.
fn merge_missing(base: &mut Map<String, Value>, extra: Map<String, Value>) {
    for (key, value) in extra {
        match (base.get_mut(&key), value) {
            (None, value) => {
                base.insert(key, value);
            }
            (Some(Value::Object(into)), Value::Object(more)) => merge_missing(into, more),
            (Some(_), _) => {}
        }
    }
}

/// `(key, value)` for each present selector key; non-strings are errors.
fn string_selectors(
    map: &Map<String, Value>,
    keys: &[&'static str],
) -> Result<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for &key in keys {
        match map.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out.push((key, s.clone())),
            Some(_) => {
                return Err(invalid(format!(
                    "\"{key}\" must be a string: the exact tool id from tool_search."
                )))
            }
        }
    }
    Ok(out)
}

/// Resolve every selector; they must all name the same tool.
fn resolve_selectors(
    catalog: &Catalog,
    selectors: &[(&'static str, String)],
    style: LookupStyle,
) -> Result<Option<(String, usize)>> {
    let mut chosen: Option<(&'static str, String, usize)> = None;
    for (key, value) in selectors {
        let ordinal = catalog.resolve_ordinal(value, style)?;
        match &chosen {
            Some((first_key, first, o)) if *o != ordinal => {
                return Err(Error::new(
                    ErrorCode::AmbiguousTool,
                    format!(
                        "\"{first_key}\": \"{}\" and \"{key}\": \"{}\" name different tools; pass one exact tool id.",
                        clip(first, 120),
                        clip(value, 120)
                    ),
                ))
            }
            Some(_) => {}
            None => chosen = Some((key, value.clone(), ordinal)),
        }
    }
    Ok(chosen.map(|(_, value, ordinal)| (value, ordinal)))
}

fn check_name_agrees(
    catalog: &Catalog,
    requested: &str,
    ordinal: usize,
    name: &str,
    style: LookupStyle,
) -> Result<()> {
    let Some(entry) = catalog.entry(ordinal) else {
        return Err(invalid("tool is not in this catalog"));
    };
    if name == entry.name || name == entry.id {
        return Ok(());
    }
    match catalog.resolve_ordinal(name, style) {
        Ok(o) if o == ordinal => Ok(()),
        _ => Err(Error::new(
            ErrorCode::AmbiguousTool,
            format!(
                "\"id\": \"{}\" and \"name\": \"{}\" do not name the same tool; pass only the exact id.",
                clip(requested, 120),
                clip(name, 120)
            ),
        )),
    }
}

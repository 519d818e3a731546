//! Reading control-tool arguments from models: JSON-string arguments, aliases
//! (`toolId`/`tool_id`/`name` for `id`; `input`/`arguments` for `args`),
//! repair of flattened arguments, and refusal of ambiguous selectors (better
//! an error the model can fix than a call to the wrong tool).

use serde_json::{Map, Value};

use crate::catalog::{BatchQuery, BatchRequest, Catalog, LookupStyle};
use crate::error::{Error, ErrorCode, Result};
use crate::limits::{MAX_BATCH_QUERIES, MAX_JSON_DEPTH};
use crate::schema::check_bounds;

/// Largest argument object accepted from a model (serialized, approximate).
pub const MAX_ARGS_BYTES: usize = 1024 * 1024;

const ID_KEYS: [&str; 3] = ["id", "toolId", "tool_id"];
const NAME_KEY: &str = "name";
const ARGS_KEYS: [&str; 3] = ["args", "input", "arguments"];

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidRequest, message)
}

/// Clip untrusted text for an error message.
pub fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Bounded argument value as an object. A JSON string holding an object (as
/// providers deliver arguments) is parsed; `null` is `{}`.
pub fn object_args(raw: &Value, what: &str) -> Result<Map<String, Value>> {
    check_bounds(raw, MAX_JSON_DEPTH, MAX_ARGS_BYTES).map_err(|e| invalid(format!("{what}: {e}")))?;
    match raw {
        Value::Null => Ok(Map::new()),
        Value::Object(map) => Ok(map.clone()),
        Value::String(text) if text.trim_start().starts_with('{') => {
            if text.len() > MAX_ARGS_BYTES {
                return Err(invalid(format!("{what} are larger than {MAX_ARGS_BYTES} bytes.")));
            }
            let parsed: Value =
                serde_json::from_str(text).map_err(|e| invalid(format!("{what} are not valid JSON: {e}")))?;
            check_bounds(&parsed, MAX_JSON_DEPTH, MAX_ARGS_BYTES).map_err(|e| invalid(format!("{what}: {e}")))?;
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
        Some(_) => Err(Error::new(ErrorCode::InvalidLimit, "limit must be a positive integer.")),
    }
}

/// A `tool_search` request: one query, or a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchRequest {
    Single { query: String, limit: Option<f64> },
    Batch(BatchRequestOwned),
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
            queries: Some(self.queries.iter().map(|(q, l)| BatchQuery { query: q.clone(), limit: l.map(Value::from) }).collect()),
        }
    }

    /// All queries in run order (a non-empty scalar query first).
    pub fn all_queries(&self) -> Vec<String> {
        let mut out: Vec<String> = self.query.iter().filter(|q| !q.trim().is_empty()).cloned().collect();
        out.extend(self.queries.iter().map(|(q, _)| q.clone()));
        out
    }
}

pub fn parse_search(raw: &Value) -> Result<SearchRequest> {
    // A bare string is the query itself (some small models do this).
    if let Value::String(text) = raw {
        if !text.trim_start().starts_with('{') {
            return Ok(SearchRequest::Single { query: text.clone(), limit: None });
        }
    }
    let map = object_args(raw, "tool_search arguments")?;
    let query = match map.get("query") {
        None | Some(Value::Null) => None,
        Some(Value::String(q)) => Some(q.clone()),
        Some(_) => return Err(Error::new(ErrorCode::InvalidQuery, "query must be a string.")),
    };
    let limit = limit_of(map.get("limit"))?;
    match map.get("queries") {
        None | Some(Value::Null) => match query {
            Some(query) => Ok(SearchRequest::Single { query, limit }),
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
pub fn parse_describe(catalog: &Catalog, raw: &Value, style: LookupStyle) -> Result<(String, usize)> {
    if let Value::String(text) = raw {
        if !text.trim_start().starts_with('{') {
            let ordinal = catalog.resolve_ordinal(text, style)?;
            return Ok((text.clone(), ordinal));
        }
    }
    let map = object_args(raw, "tool_describe arguments")?;
    let mut selectors = string_selectors(&map, &ID_KEYS)?;
    if selectors.is_empty() {
        if let Some(Value::String(name)) = map.get(NAME_KEY) {
            selectors.push((NAME_KEY, name.clone()));
        }
    }
    let (requested, ordinal) = resolve_selectors(catalog, &selectors, style)?
        .ok_or_else(|| invalid("tool_describe needs { \"id\": string }: the exact tool id from tool_search."))?;
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

pub fn parse_call(catalog: &Catalog, raw: &Value, style: LookupStyle) -> Result<CallSpec> {
    let map = object_args(raw, "tool_call arguments")?;
    let mut repaired: Vec<String> = Vec::new();

    // Arguments: `args`, or its aliases; several different ones are ambiguous.
    let mut explicit: Option<(&str, &Value)> = None;
    for key in ARGS_KEYS {
        let Some(value) = map.get(key).filter(|v| !v.is_null()) else { continue };
        match explicit {
            Some((first, prev)) if prev != value => {
                return Err(invalid(format!(
                    "tool_call got both \"{first}\" and \"{key}\" with different values; pass the arguments once, in \"args\"."
                )))
            }
            Some(_) => {}
            None => explicit = Some((key, value)),
        }
    }
    let explicit_args = match explicit {
        None => None,
        Some((key, value)) => {
            if key != "args" {
                repaired.push(format!("\"{key}\" read as \"args\""));
            }
            let was_string = value.is_string();
            let args = object_args(value, "tool_call \"args\"")?;
            if was_string {
                repaired.push("JSON-string args parsed".into());
            }
            Some(args)
        }
    };

    let selectors = string_selectors(&map, &ID_KEYS)?;
    let mut flattened: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !ID_KEYS.contains(&k.as_str()) && !ARGS_KEYS.contains(&k.as_str()) && k.as_str() != NAME_KEY)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let name = map.get(NAME_KEY);

    let (requested, ordinal) = match resolve_selectors(catalog, &selectors, style)? {
        Some((requested, ordinal)) => {
            if let Some(name) = name {
                let agrees = match name {
                    Value::String(n) => check_name_agrees(catalog, &requested, ordinal, n, style).is_ok(),
                    _ => false,
                };
                if !agrees {
                    // `name` may be a flattened argument of a tool that takes one.
                    if explicit_args.is_none() && schema_has_property(catalog, ordinal, NAME_KEY) {
                        flattened.insert(NAME_KEY.to_string(), name.clone());
                    } else {
                        let shown = name.as_str().map_or_else(|| name.to_string(), str::to_string);
                        return Err(Error::new(
                            ErrorCode::AmbiguousTool,
                            format!(
                                "tool_call got \"id\": \"{}\" and \"name\": \"{}\", which do not name the same tool; pass only the exact id, with the tool's arguments inside \"args\".",
                                clip(&requested, 120),
                                clip(&shown, 120)
                            ),
                        ));
                    }
                }
            }
            (requested, ordinal)
        }
        None => match name {
            Some(Value::String(n)) => {
                repaired.push("\"name\" read as \"id\"".into());
                (n.clone(), catalog.resolve_ordinal(n, style)?)
            }
            _ => return Err(invalid("tool_call needs { \"id\": string, \"args\"?: object }: the exact tool id from tool_search.")),
        },
    };

    let args = match explicit_args {
        Some(args) => {
            if !flattened.is_empty() {
                let keys: Vec<String> = flattened.keys().take(8).map(|k| clip(k, 40)).collect();
                return Err(invalid(format!(
                    "tool_call got arguments both inside \"args\" and next to \"id\" ({}); put all of the tool's arguments inside \"args\".",
                    keys.join(", ")
                )));
            }
            args
        }
        None => {
            if !flattened.is_empty() {
                let keys: Vec<String> = flattened.keys().take(8).map(|k| clip(k, 40)).collect();
                repaired.push(format!("flattened arguments moved into \"args\" ({})", keys.join(", ")));
            }
            flattened
        }
    };
    let repaired = (!repaired.is_empty()).then(|| repaired.join("; "));
    Ok(CallSpec { requested, ordinal, args: Value::Object(args), repaired })
}

/// `(key, value)` for each present selector key; non-strings are errors.
fn string_selectors(map: &Map<String, Value>, keys: &[&'static str]) -> Result<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    for &key in keys {
        match map.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out.push((key, s.clone())),
            Some(_) => return Err(invalid(format!("\"{key}\" must be a string: the exact tool id from tool_search."))),
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

fn check_name_agrees(catalog: &Catalog, requested: &str, ordinal: usize, name: &str, style: LookupStyle) -> Result<()> {
    let Some(entry) = catalog.entry(ordinal) else { return Err(invalid("tool is not in this catalog")) };
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

fn schema_has_property(catalog: &Catalog, ordinal: usize, property: &str) -> bool {
    catalog
        .entry(ordinal)
        .and_then(|e| e.input_schema.as_deref())
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(property))
}

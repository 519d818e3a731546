//! Splitting untrusted catalog text (a JSON array or JSONL) into per-tool
//! records without recursion, so one hostile record (too deep, bad UTF-8,
//! bad JSON) is rejected alone instead of failing or overflowing the whole.

use std::cell::Cell;

use serde::de::DeserializeSeed;
use serde_json::Value;

use super::refusal::Refusal;
use crate::entry::{safe_server_name, McpInfo, ToolRecord};
use crate::error::{Error, Result};
use crate::limits::{MAX_CATALOG_TOOLS, MAX_JSON_DEPTH, MAX_NAME_CHARS};

/// One element of the input: its position and either the parsed record (with
/// the raw value of a direct-only or control tool) or why it could not be read.
pub struct RawRecord {
    pub index: usize,
    pub parsed: std::result::Result<(ToolRecord, Option<Value>), Refusal>,
}

/// Parse a JSON array of tool objects, or JSON Lines (one object a line).
pub fn parse_catalog_text(text: &str) -> Result<Vec<RawRecord>> {
    Ok(parse_spans(record_spans(text)?))
}

/// Parse record texts one by one (a bad one is rejected alone), indexed in order.
pub fn parse_spans<'a>(spans: impl IntoIterator<Item = &'a str>) -> Vec<RawRecord> {
    let spans: Vec<(usize, &str)> = spans.into_iter().enumerate().collect();
    crate::search::map_in_halves(spans, |(index, span)| RawRecord {
        index,
        parsed: parse_record(span),
    })
}

/// The text of each record (array elements or non-empty lines), unparsed, count-capped.
pub fn record_spans(text: &str) -> Result<Vec<&str>> {
    let trimmed = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    let spans = if trimmed.starts_with('[') {
        split_array(trimmed)?
    } else {
        trimmed.lines().filter(|l| !l.trim().is_empty()).collect()
    };
    if spans.len() > MAX_CATALOG_TOOLS {
        return Err(Error::invalid_catalog(format!(
            "catalog has {} tools; at most {MAX_CATALOG_TOOLS} are accepted",
            spans.len()
        )));
    }
    Ok(spans)
}

fn parse_record(span: &str) -> std::result::Result<(ToolRecord, Option<Value>), Refusal> {
    // The top-level field being read, so that an error inside its value names it.
    let reading = Cell::new(None);
    let mut reader = serde_json::Deserializer::from_str(span);
    let top = TopLevelSeed { reading: &reading }
        .deserialize(&mut reader)
        .and_then(|top| reader.end().map(|()| top))
        .map_err(|e| read_error(&e, reading.get()))?;
    let fields = match top {
        TopLevel::Object(fields) => fields,
        // The package's stand-in for an object JSON cannot express, with why.
        TopLevel::Unreadable(reason) => {
            return Err(Refusal::unreadable(tool_search_base::text::clip(
                &reason, 240,
            )));
        }
        TopLevel::Other(kind) => {
            return Err(Refusal::unreadable(format!(
                "a tool must be a JSON object, not {kind}"
            )))
        }
    };
    let record = fields.into_record()?;
    // Direct-only and control tools are handed back as given: only they keep
    // the whole object (parsed again; they are few).
    let raw = if record.is_control() || record.is_direct_only() {
        Some(
            serde_json::from_str(span)
                .map_err(|e| Refusal::unreadable(format!("not valid JSON: {e}")))?,
        )
    } else {
        None
    };
    Ok((record, raw))
}

/// A record the reader could not read. serde_json's recursion limit (128)
/// turns deep nesting into an error: inside a schema field it is that schema's
/// refusal, worded as the schema bound's (64 levels, which it also exceeds).
fn read_error(e: &serde_json::Error, field: Option<&'static str>) -> Refusal {
    let deep = e.to_string().contains("recursion limit");
    match field {
        Some(field) if deep && INPUT_SCHEMA_FIELDS.contains(&field) => Refusal::schema(
            "inputSchema",
            format!("inputSchema: {}", crate::schema::too_deep(MAX_JSON_DEPTH)),
        ),
        Some("outputSchema") if deep => Refusal::schema(
            "outputSchema",
            format!("outputSchema: {}", crate::schema::too_deep(MAX_JSON_DEPTH)),
        ),
        Some(field) if deep => Refusal::field(
            field,
            format!("\"{field}\": {}", crate::schema::too_deep(MAX_JSON_DEPTH)),
        ),
        _ if deep => Refusal::unreadable("nested too deeply (JSON depth is limited to 128 levels)"),
        _ => Refusal::unreadable(format!("not valid JSON: {e}")),
    }
}

/// One record's top-level JSON value, read without building a map of it.
enum TopLevel {
    Object(Box<RecordFields>),
    /// The [`UNREADABLE`] stand-in: the reason that follows it.
    Unreadable(String),
    /// What else it was ("null", "an array", …).
    Other(&'static str),
}

/// The known fields of one tool object as read (the last of repeated keys
/// wins, as in a parsed JSON object), values not yet checked.
#[derive(Default)]
struct RecordFields {
    known: [Option<Value>; KNOWN_FIELDS.len()],
    /// Other top-level names, first appearance first (at most a few).
    unknown: Vec<String>,
}

impl RecordFields {
    fn get(&self, key: &str) -> Option<&Value> {
        let at = KNOWN_FIELDS.iter().position(|k| *k == key)?;
        self.known[at].as_ref()
    }

    fn take(&mut self, key: &str) -> Option<Value> {
        let at = KNOWN_FIELDS.iter().position(|k| *k == key)?;
        self.known[at].take()
    }

    /// The record: wrong types are errors, unknown fields are listed (not read).
    fn into_record(mut self) -> std::result::Result<ToolRecord, Refusal> {
        let mut input_schema: Option<&'static str> = None;
        for key in INPUT_SCHEMA_FIELDS {
            let Some(schema) = self.get(key).filter(|v| !v.is_null()) else {
                continue;
            };
            match input_schema.and_then(|first| self.get(first)) {
                Some(first) if first != schema => {
                    return Err(Refusal::schema("inputSchema", "\"inputSchema\", \"parameters\" and \"input_schema\" name the same schema; they differ here, give one"))
                }
                Some(_) => {}
                None => input_schema = Some(key),
            }
        }
        let unknown_fields = self
            .unknown
            .iter()
            .map(|name| tool_search_base::text::clip(name, 40))
            .collect();
        let mut text = |key: &'static str| -> std::result::Result<Option<String>, Refusal> {
            match self.take(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(Refusal::field(key, format!("\"{key}\" must be a string"))),
            }
        };
        let id = text("id")?;
        let source = text("source")?;
        let owner = text("owner")?;
        let name = text("name")?;
        let label = match text("label")? {
            Some(label) => Some(label),
            None => text("title")?,
        };
        let description = text("description")?;
        let catalog_mode = text("catalogMode")?;
        let input_schema = input_schema.and_then(|key| self.take(key));
        let output_schema = self.take("outputSchema").filter(|v| !v.is_null());
        let mcp = self
            .get("mcp")
            .filter(|v| !v.is_null())
            .map(|mcp| mcp_info(mcp).map_err(|reason| Refusal::field("mcp", reason)))
            .transpose()?;
        Ok(ToolRecord {
            id,
            source,
            owner,
            name,
            label,
            description,
            input_schema,
            output_schema,
            catalog_mode,
            mcp,
            unknown_fields,
        })
    }
}

/// Reads a [`TopLevel`], noting in `reading` the known field whose value it is reading.
struct TopLevelSeed<'a> {
    reading: &'a Cell<Option<&'static str>>,
}

impl<'de> DeserializeSeed<'de> for TopLevelSeed<'_> {
    type Value = TopLevel;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<TopLevel, D::Error> {
        deserializer.deserialize_any(TopLevelVisitor {
            reading: self.reading,
        })
    }
}

struct TopLevelVisitor<'a> {
    reading: &'a Cell<Option<&'static str>>,
}

impl<'de> serde::de::Visitor<'de> for TopLevelVisitor<'_> {
    type Value = TopLevel;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a tool object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<TopLevel, A::Error> {
        let mut fields = Box::<RecordFields>::default();
        let mut unreadable: Option<String> = None;
        while let Some(key) = map.next_key::<FieldName>()? {
            self.reading.set(match &key {
                FieldName::Known(at) => Some(KNOWN_FIELDS[*at]),
                FieldName::Other(_) | FieldName::Unreadable => None,
            });
            // Every value is read in full (as a parsed object would be), so
            // the depth limit and JSON errors apply to unknown fields too.
            let value: Value = map.next_value()?;
            self.reading.set(None);
            match key {
                FieldName::Known(at) => fields.known[at] = Some(value),
                FieldName::Unreadable => {
                    unreadable = Some(value.as_str().unwrap_or_default().to_string())
                }
                FieldName::Other(name) => {
                    if fields.unknown.len() < MAX_UNKNOWN_FIELDS_REPORTED
                        && !fields.unknown.contains(&name)
                    {
                        fields.unknown.push(name);
                    }
                }
            }
        }
        // The object form of the stand-in: the fields beside it are for repairs only.
        Ok(match unreadable {
            Some(reason) => TopLevel::Unreadable(reason),
            None => TopLevel::Object(fields),
        })
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> std::result::Result<TopLevel, E> {
        Ok(match s.strip_prefix(UNREADABLE) {
            Some(reason) => TopLevel::Unreadable(reason.to_string()),
            None => TopLevel::Other("a string"),
        })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<TopLevel, A::Error> {
        while seq.next_element::<Value>()?.is_some() {}
        Ok(TopLevel::Other("an array"))
    }

    fn visit_unit<E>(self) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other("null"))
    }

    fn visit_bool<E>(self, _: bool) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> std::result::Result<TopLevel, E> {
        Ok(TopLevel::Other("a number"))
    }
}

/// A top-level key: a known field's position in [`KNOWN_FIELDS`], the
/// [`UNREADABLE`] stand-in's key, or another name.
enum FieldName {
    Known(usize),
    Unreadable,
    Other(String),
}

impl<'de> serde::Deserialize<'de> for FieldName {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = FieldName;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, key: &str) -> std::result::Result<FieldName, E> {
                Ok(match KNOWN_FIELDS.iter().position(|k| *k == key) {
                    Some(at) => FieldName::Known(at),
                    None if key == UNREADABLE => FieldName::Unreadable,
                    None => FieldName::Other(key.to_string()),
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Starts the JSON string that stands for a tool the gateway's JSON cannot
/// express (a BigInt, a cycle, a throwing getter or Proxy trap): the rest is
/// the reason, reported in `excluded`. Or, as the key of an object (its value
/// the reason), beside the tool's [`UNREADABLE_FIELDS`] that could be read:
/// excluded the same way, and what a `repair` build indexes the tool by
/// ([`unreadable_record`] writes either form).
pub const UNREADABLE: &str = "\u{0}openclaw-tool-search:unreadable:";

/// The fields a tool JSON cannot express is indexed by in a `repair` build,
/// when they can be read on their own.
pub const UNREADABLE_FIELDS: [&str; 4] = ["source", "owner", "name", "description"];

/// The record text standing for a tool JSON cannot express, with `reason`:
/// the [`UNREADABLE`] string or, when `readable` (the JSON text of the tool's
/// [`UNREADABLE_FIELDS`] alone, e.g. `JSON.stringify(tool, UNREADABLE_FIELDS)`)
/// is an object holding any of them, an object of those fields and the
/// [`UNREADABLE`] key.
pub fn unreadable_record(reason: &str, readable: Option<&str>) -> String {
    let fields = readable
        .and_then(|text| serde_json::from_str::<serde_json::Map<String, Value>>(text).ok())
        .map(|mut fields| {
            UNREADABLE_FIELDS
                .iter()
                .filter_map(|key| Some((key.to_string(), fields.remove(*key)?)))
                .collect::<serde_json::Map<String, Value>>()
        })
        .filter(|fields| !fields.is_empty());
    match fields {
        None => Value::from(format!("{UNREADABLE}{reason}")).to_string(),
        Some(fields) => {
            let mut record = serde_json::Map::with_capacity(fields.len() + 1);
            record.insert(UNREADABLE.to_string(), Value::from(reason));
            record.extend(fields);
            Value::Object(record).to_string()
        }
    }
}

/// Every top-level field a tool record may have. Others are ignored (gateways
/// attach their own metadata), except in `strict` builds, where they are errors.
pub const KNOWN_FIELDS: &[&str] = &[
    "id",
    "source",
    "owner",
    "name",
    "label",
    "description",
    "inputSchema",
    "parameters",
    "input_schema",
    "outputSchema",
    "catalogMode",
    "mcp",
    // MCP `tools/list` fields: `title` is the display name (a `label` alias),
    // `annotations` are hints the catalog does not read.
    "title",
    "annotations",
];

/// The names of the input schema, one meaning.
const INPUT_SCHEMA_FIELDS: [&str; 3] = ["inputSchema", "parameters", "input_schema"];

/// Unknown field names reported per record.
const MAX_UNKNOWN_FIELDS_REPORTED: usize = 5;

/// `mcp: { serverName, toolName, safeServerName?, operation? }` as the gateway
/// routes the tool: kept as given (bounded), the optional parts derived as
/// OpenClaw does when absent.
fn mcp_info(value: &Value) -> std::result::Result<McpInfo, String> {
    let obj = value
        .as_object()
        .ok_or("\"mcp\" must be an object { serverName, toolName }")?;
    let part = |key: &str, required: bool| -> std::result::Result<Option<String>, String> {
        match obj.get(key) {
            None | Some(Value::Null) if !required => Ok(None),
            Some(Value::String(s)) => {
                if s.is_empty()
                    || s.chars().count() > MAX_NAME_CHARS
                    || s.chars()
                        .any(|c| c.is_control() || super::text::is_invisible(c))
                {
                    return Err(format!(
                        "\"mcp.{key}\" must be 1 to {MAX_NAME_CHARS} characters without control, invisible or bidirectional formatting characters"
                    ));
                }
                Ok(Some(s.clone()))
            }
            _ => Err(format!("\"mcp.{key}\" must be a string")),
        }
    };
    let server_name = part("serverName", true)?.unwrap_or_default();
    let tool_name = part("toolName", true)?.unwrap_or_default();
    let safe_server_name =
        part("safeServerName", false)?.unwrap_or_else(|| safe_server_name(&server_name));
    let operation =
        part("operation", false)?.unwrap_or_else(|| format!("{safe_server_name}__{tool_name}"));
    Ok(McpInfo {
        server_name,
        safe_server_name,
        tool_name,
        operation,
    })
}

/// Split a top-level JSON array into element spans by scanning bytes with a
/// depth counter (strings and escapes respected). Validates only the
/// structure needed to split; each element is parsed on its own afterwards.
fn split_array(text: &str) -> Result<Vec<&str>> {
    debug_assert_eq!(text.as_bytes().first(), Some(&b'['));
    let mut spans = Vec::new();
    let mut depth: usize = 0;
    let mut start = 1;
    let mut end_of_array = None;
    for (i, b) in OutsideStrings::new(text).skip(1) {
        match b {
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth > 0 => depth -= 1,
            b']' => {
                push_span(&mut spans, &text[start..i], false)?;
                end_of_array = Some(i);
                break;
            }
            b',' if depth == 0 => {
                push_span(&mut spans, &text[start..i], true)?;
                start = i + 1;
            }
            b'}' => {
                return Err(Error::invalid_catalog(
                    "catalog JSON is malformed (unbalanced '}')",
                ))
            }
            _ => {}
        }
    }
    let Some(end) = end_of_array else {
        return Err(Error::invalid_catalog("catalog JSON array is not closed"));
    };
    if !text[end + 1..].trim().is_empty() {
        return Err(Error::invalid_catalog(
            "unexpected text after the catalog JSON array",
        ));
    }
    Ok(spans)
}

/// `text` split at `separator` where it stands outside strings and brackets,
/// at most `max_splits` times; `None` when the brackets or strings do not
/// balance or a part is empty.
pub(super) fn split_top_level(text: &str, separator: u8, max_splits: usize) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    let mut scan = OutsideStrings::new(text);
    for (i, b) in scan.by_ref() {
        match b {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.checked_sub(1)?,
            _ if b == separator && depth == 0 && parts.len() < max_splits => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if scan.in_string || depth != 0 {
        return None;
    }
    parts.push(&text[start..]);
    parts.iter().all(|p| !p.trim().is_empty()).then_some(parts)
}

/// The bytes of JSON text outside its strings (their quotes neither), with
/// their positions: what splits records and fields without parsing them.
struct OutsideStrings<'a> {
    bytes: std::iter::Enumerate<std::slice::Iter<'a, u8>>,
    /// The text read so far ends inside a string.
    in_string: bool,
    escaped: bool,
}

impl<'a> OutsideStrings<'a> {
    fn new(text: &'a str) -> Self {
        OutsideStrings {
            bytes: text.as_bytes().iter().enumerate(),
            in_string: false,
            escaped: false,
        }
    }
}

impl Iterator for OutsideStrings<'_> {
    type Item = (usize, u8);

    fn next(&mut self) -> Option<(usize, u8)> {
        for (i, &b) in self.bytes.by_ref() {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
            } else if b == b'"' {
                self.in_string = true;
            } else {
                return Some((i, b));
            }
        }
        None
    }
}

fn push_span<'a>(spans: &mut Vec<&'a str>, span: &'a str, more_follow: bool) -> Result<()> {
    let span = span.trim();
    if span.is_empty() {
        // `[]` is fine; `[,` or `[1,]` is not.
        if more_follow || !spans.is_empty() {
            return Err(Error::invalid_catalog(
                "catalog JSON array has an empty element",
            ));
        }
        return Ok(());
    }
    spans.push(span);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ExclusionCode;

    #[test]
    fn splits_arrays_and_lines() {
        let recs =
            parse_catalog_text(r#"[{"name":"a","description":"x, [y] {z}"}, {"name":"b\"]"}]"#)
                .unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(
            recs[1].parsed.as_ref().unwrap().0.name.as_deref(),
            Some("b\"]")
        );
        let recs = parse_catalog_text("{\"name\":\"a\"}\n\n{\"name\":\"b\"}\n").unwrap();
        assert_eq!(recs.len(), 2);
        assert!(parse_catalog_text("[]").unwrap().is_empty());
        assert!(parse_catalog_text("").unwrap().is_empty());
    }

    #[test]
    fn malformed_arrays_are_errors() {
        assert!(parse_catalog_text("[{\"name\":\"a\"}").is_err());
        assert!(parse_catalog_text("[{\"name\":\"a\"},]").is_err());
        assert!(parse_catalog_text("[{\"name\":\"a\"}] trailing").is_err());
    }

    #[test]
    fn deep_record_is_rejected_alone() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let text = format!(r#"[{{"name":"ok"}}, {{"name":"deep","inputSchema":{deep}}}]"#);
        let recs = parse_catalog_text(&text).unwrap();
        assert!(recs[0].parsed.is_ok());
        // The same refusal as a schema within the reader's limit but over the schema bound.
        assert_eq!(
            recs[1].parsed.as_ref().unwrap_err(),
            &Refusal::schema(
                "inputSchema",
                "inputSchema: JSON is nested deeper than 64 levels."
            )
        );
        for alias in ["parameters", "input_schema"] {
            let text = format!(r#"{{"name":"deep","{alias}":{deep}}}"#);
            let refusal = parse_catalog_text(&text).unwrap()[0]
                .parsed
                .clone()
                .unwrap_err();
            assert_eq!(refusal.field, Some("inputSchema"), "{alias}");
        }
        let text = format!(r#"{{"name":"deep","outputSchema":{deep}}}"#);
        let refusal = parse_catalog_text(&text).unwrap()[0]
            .parsed
            .clone()
            .unwrap_err();
        assert_eq!(
            (refusal.code, refusal.field),
            (ExclusionCode::InvalidSchema, Some("outputSchema"))
        );
    }

    #[test]
    fn parameters_alias_and_type_errors() {
        let recs =
            parse_catalog_text(r#"[{"name":"a","parameters":{"type":"object"}}, {"name":5}]"#)
                .unwrap();
        assert!(recs[0].parsed.as_ref().unwrap().0.input_schema.is_some());
        assert!(recs[1].parsed.is_err());
    }

    #[test]
    fn input_schema_aliases_and_unknown_fields() {
        let recs = parse_catalog_text(
            r#"[{"name":"a","input_schema":{"type":"object"}},
                {"name":"b","input_schema":{"type":"object"},"parameters":{"type":"string"}},
                {"name":"c","inputSchema":{"type":"object"},"input_schema":{"type":"object"},"x-extra":1,"execute":null}]"#,
        )
        .unwrap();
        assert_eq!(
            recs[0].parsed.as_ref().unwrap().0.input_schema,
            Some(serde_json::json!({"type":"object"}))
        );
        assert!(recs[1]
            .parsed
            .as_ref()
            .unwrap_err()
            .reason
            .contains("differ"));
        let c = &recs[2].parsed.as_ref().unwrap().0;
        assert!(c.input_schema.is_some());
        assert_eq!(c.unknown_fields, ["x-extra", "execute"]);
        assert!(recs[0].parsed.as_ref().unwrap().0.unknown_fields.is_empty());
    }

    #[test]
    fn mcp_metadata_is_read_and_bounded() {
        let recs = parse_catalog_text(
            r#"[{"name":"docs_fetch","source":"mcp","owner":"docs","mcp":{"serverName":"docs.io","toolName":"fetch"}},
                {"name":"x","mcp":{"serverName":"s"}},
                {"name":"y","mcp":"s"}]"#,
        )
        .unwrap();
        let mcp = recs[0].parsed.as_ref().unwrap().0.mcp.clone().unwrap();
        assert_eq!(
            (mcp.server_name.as_str(), mcp.tool_name.as_str()),
            ("docs.io", "fetch")
        );
        assert_eq!(
            (mcp.safe_server_name.as_str(), mcp.operation.as_str()),
            ("docs_io", "docs_io__fetch")
        );
        let refusal = recs[1].parsed.as_ref().unwrap_err();
        assert!(refusal.reason.contains("mcp.toolName"));
        assert_eq!(refusal.field, Some("mcp"));
        assert!(recs[2].parsed.is_err());
    }

    /// The reader reads a record as its parsed JSON object would be read:
    /// repeated keys (the last wins), escaped key names, the label/title
    /// alias, the unknown-field list (first appearances, capped, clipped),
    /// depth and syntax errors inside fields it does not read, and what a
    /// non-object is called. Only direct-only and control tools keep the raw object.
    #[test]
    fn the_reader_reads_a_record_as_its_parsed_object() {
        let long = "x".repeat(60);
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let text = format!(
            r#"[{{"name":"first","na\u006de":"second","title":"T","description":null,"u1":1,"u2":[1],"u1":2,"{long}":0,"u3":0,"u4":0,"u5":0,"u6":0}},
                {{"name":"a","label":"L","title":"T","catalogMode":"direct-only","extra":{{"k":[1,2]}}}},
                {{"name":"tool_search"}},
                {{"name":"a","annotations":{deep}}},
                {{"name":"a","x":[1,]}},
                {{"name":"a","x-deep":{deep}}},
                null, 5, true, "s", [1, {{"name":"a"}}], {{}}]"#,
        );
        let recs = parse_catalog_text(&text).map_err(|e| e.message).unwrap();
        let (first, raw) = recs[0].parsed.as_ref().unwrap();
        assert_eq!(first.name.as_deref(), Some("second"));
        assert_eq!(first.label.as_deref(), Some("T"));
        assert_eq!(first.description, None);
        let clipped = tool_search_base::text::clip(&long, 40);
        assert_eq!(
            first.unknown_fields,
            ["u1", "u2", clipped.as_str(), "u3", "u4"]
        );
        assert!(raw.is_none(), "an ordinary tool keeps no raw object");
        let (direct, raw) = recs[1].parsed.as_ref().unwrap();
        assert_eq!(direct.label.as_deref(), Some("L"));
        assert_eq!(
            raw.as_ref().unwrap(),
            &serde_json::json!({"name":"a","label":"L","title":"T","catalogMode":"direct-only","extra":{"k":[1,2]}})
        );
        assert!(
            recs[2].parsed.as_ref().unwrap().1.is_some(),
            "a control tool keeps it"
        );
        let errors: Vec<&str> = recs[3..]
            .iter()
            .map(|r| {
                r.parsed
                    .as_ref()
                    .map(|_| "ok")
                    .unwrap_or_else(|e| e.reason.as_str())
            })
            .collect();
        // Too deep inside a known field names the field; inside another, the record.
        let annotations = recs[3].parsed.as_ref().unwrap_err();
        assert_eq!(
            (annotations.code, annotations.field),
            (ExclusionCode::InvalidField, Some("annotations"))
        );
        assert_eq!(
            errors[0],
            "\"annotations\": JSON is nested deeper than 64 levels."
        );
        assert!(errors[1].starts_with("not valid JSON"), "{}", errors[1]);
        assert_eq!(
            recs[5].parsed.as_ref().unwrap_err(),
            &Refusal::unreadable("nested too deeply (JSON depth is limited to 128 levels)")
        );
        let kinds = ["null", "a number", "a boolean", "a string", "an array"];
        for (error, kind) in errors[3..8].iter().zip(kinds) {
            assert_eq!(*error, format!("a tool must be a JSON object, not {kind}"));
        }
        assert!(recs[6..11]
            .iter()
            .all(|r| r.parsed.as_ref().unwrap_err().code == ExclusionCode::UnreadableRecord));
        assert_eq!(
            errors[8], "ok",
            "an empty object is read (and fails validation later)"
        );
    }
}

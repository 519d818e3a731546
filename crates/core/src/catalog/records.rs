//! Splitting untrusted catalog text (a JSON array or JSONL) into per-tool
//! records without recursion, so one hostile record (too deep, bad UTF-8,
//! bad JSON) is rejected alone instead of failing or overflowing the whole.

use serde_json::Value;

use crate::entry::{safe_server_name, McpInfo, ToolRecord};
use crate::error::{Error, Result};
use crate::limits::{MAX_CATALOG_TOOLS, MAX_NAME_CHARS};

/// One element of the input: its position and either the parsed record (with
/// the raw value, kept for direct-only tools) or why it could not be read.
pub struct RawRecord {
    pub index: usize,
    pub parsed: std::result::Result<(ToolRecord, Value), String>,
}

/// Parse a JSON array of tool objects, or JSON Lines (one object a line).
pub fn parse_catalog_text(text: &str) -> Result<Vec<RawRecord>> {
    Ok(parse_spans(record_spans(text)?))
}

/// Parse record texts one by one (a bad one is rejected alone), indexed in order.
pub fn parse_spans<'a>(spans: impl IntoIterator<Item = &'a str>) -> Vec<RawRecord> {
    spans
        .into_iter()
        .enumerate()
        .map(|(index, span)| RawRecord {
            index,
            parsed: parse_record(span),
        })
        .collect()
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

fn parse_record(span: &str) -> std::result::Result<(ToolRecord, Value), String> {
    // serde_json's recursion limit (128) turns deep nesting into an error.
    let value: Value = serde_json::from_str(span).map_err(|e| {
        if e.to_string().contains("recursion limit") {
            "nested too deeply (JSON depth is limited to 128 levels)".to_string()
        } else {
            format!("not valid JSON: {e}")
        }
    })?;
    if !value.is_object() {
        return Err(match &value {
            // The package's stand-in for an object JSON cannot express, with why.
            Value::String(s) if s.starts_with(UNREADABLE) => {
                tool_search_base::text::clip(&s[UNREADABLE.len()..], 240)
            }
            other => format!("a tool must be a JSON object, not {}", json_kind(other)),
        });
    }
    let record = ToolRecord::deserialize_lenient(&value)?;
    Ok((record, value))
}

/// Starts the JSON string that stands for a tool the gateway's JSON cannot
/// express (a BigInt, a cycle, a throwing getter or Proxy trap): the rest is
/// the reason, reported in `excluded`.
pub const UNREADABLE: &str = "\u{0}openclaw-tool-search:unreadable:";

/// "null", "a string", … for reasons.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
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

impl ToolRecord {
    /// Read the known fields of a tool object; wrong types are errors, unknown
    /// fields are collected (not read).
    pub fn deserialize_lenient(value: &Value) -> std::result::Result<ToolRecord, String> {
        let obj = value.as_object().ok_or("a tool must be a JSON object")?;
        let text = |key: &str| -> std::result::Result<Option<String>, String> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("\"{key}\" must be a string")),
            }
        };
        let mut input_schema: Option<&Value> = None;
        for key in INPUT_SCHEMA_FIELDS {
            let Some(schema) = obj.get(key).filter(|v| !v.is_null()) else {
                continue;
            };
            match input_schema {
                Some(first) if first != schema => {
                    return Err("\"inputSchema\", \"parameters\" and \"input_schema\" name the same schema; they differ here, give one".into())
                }
                _ => input_schema = Some(schema),
            }
        }
        let unknown_fields = obj
            .keys()
            .filter(|k| !KNOWN_FIELDS.contains(&k.as_str()))
            .take(MAX_UNKNOWN_FIELDS_REPORTED)
            .map(|k| tool_search_base::text::clip(k, 40))
            .collect();
        Ok(ToolRecord {
            id: text("id")?,
            source: text("source")?,
            owner: text("owner")?,
            name: text("name")?,
            label: match text("label")? {
                Some(label) => Some(label),
                None => text("title")?,
            },
            description: text("description")?,
            input_schema: input_schema.cloned(),
            output_schema: obj.get("outputSchema").filter(|v| !v.is_null()).cloned(),
            catalog_mode: text("catalogMode")?,
            mcp: obj
                .get("mcp")
                .filter(|v| !v.is_null())
                .map(mcp_info)
                .transpose()?,
            unknown_fields,
        })
    }
}

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
    let bytes = text.as_bytes();
    debug_assert_eq!(bytes.first(), Some(&b'['));
    let mut spans = Vec::new();
    let mut depth: usize = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = 1;
    let mut end_of_array = None;
    for (i, &b) in bytes.iter().enumerate().skip(1) {
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
        assert!(recs[1]
            .parsed
            .as_ref()
            .unwrap_err()
            .contains("nested too deeply"));
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
        assert!(recs[1].parsed.as_ref().unwrap_err().contains("differ"));
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
        assert!(recs[1]
            .parsed
            .as_ref()
            .unwrap_err()
            .contains("mcp.toolName"));
        assert!(recs[2].parsed.is_err());
    }
}

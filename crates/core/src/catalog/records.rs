//! Splitting untrusted catalog text (a JSON array or JSONL) into per-tool
//! records without recursion, so one hostile record (too deep, bad UTF-8,
//! bad JSON) is rejected alone instead of failing or overflowing the whole.

use serde_json::Value;

use super::entry::ToolRecord;
use crate::error::{Error, Result};
use crate::limits::MAX_CATALOG_TOOLS;

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
    spans.into_iter().enumerate().map(|(index, span)| RawRecord { index, parsed: parse_record(span) }).collect()
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
        return Err("a tool must be a JSON object".into());
    }
    let record = ToolRecord::deserialize_lenient(&value)?;
    Ok((record, value))
}

impl ToolRecord {
    /// Read the known fields of a tool object; wrong types are errors, unknown
    /// fields are ignored (gateways attach their own metadata).
    pub fn deserialize_lenient(value: &Value) -> std::result::Result<ToolRecord, String> {
        let obj = value.as_object().ok_or("a tool must be a JSON object")?;
        let text = |key: &str| -> std::result::Result<Option<String>, String> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("\"{key}\" must be a string")),
            }
        };
        let input_schema = match (obj.get("inputSchema"), obj.get("parameters")) {
            (Some(a), Some(b)) if !a.is_null() && !b.is_null() && a != b => {
                return Err("\"inputSchema\" and \"parameters\" differ; give one".into())
            }
            (Some(v), _) if !v.is_null() => Some(v.clone()),
            (_, Some(v)) if !v.is_null() => Some(v.clone()),
            _ => None,
        };
        Ok(ToolRecord {
            id: text("id")?,
            source: text("source")?,
            owner: text("owner")?,
            name: text("name")?,
            label: text("label")?,
            description: text("description")?,
            input_schema,
            output_schema: obj.get("outputSchema").filter(|v| !v.is_null()).cloned(),
            catalog_mode: text("catalogMode")?,
        })
    }
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
            b'}' => return Err(Error::invalid_catalog("catalog JSON is malformed (unbalanced '}')")),
            _ => {}
        }
    }
    let Some(end) = end_of_array else {
        return Err(Error::invalid_catalog("catalog JSON array is not closed"));
    };
    if !text[end + 1..].trim().is_empty() {
        return Err(Error::invalid_catalog("unexpected text after the catalog JSON array"));
    }
    Ok(spans)
}

fn push_span<'a>(spans: &mut Vec<&'a str>, span: &'a str, more_follow: bool) -> Result<()> {
    let span = span.trim();
    if span.is_empty() {
        // `[]` is fine; `[,` or `[1,]` is not.
        if more_follow || !spans.is_empty() {
            return Err(Error::invalid_catalog("catalog JSON array has an empty element"));
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
        let recs = parse_catalog_text(r#"[{"name":"a","description":"x, [y] {z}"}, {"name":"b\"]"}]"#).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].parsed.as_ref().unwrap().0.name.as_deref(), Some("b\"]"));
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
        assert!(recs[1].parsed.as_ref().unwrap_err().contains("nested too deeply"));
    }

    #[test]
    fn parameters_alias_and_type_errors() {
        let recs = parse_catalog_text(r#"[{"name":"a","parameters":{"type":"object"}}, {"name":5}]"#).unwrap();
        assert!(recs[0].parsed.as_ref().unwrap().0.input_schema.is_some());
        assert!(recs[1].parsed.is_err());
    }
}

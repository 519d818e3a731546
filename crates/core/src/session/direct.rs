//! Tool definitions the gateway keeps directly visible (direct-only and
//! policy-required tools), read from gateway-supplied JSON.

use serde_json::Value;

use crate::catalog::DirectOnlyTool;
use crate::error::{Error, ErrorCode, Result};
use crate::limits::{MAX_DESCRIPTION_CHARS, MAX_JSON_DEPTH, MAX_NAME_CHARS, MAX_SCHEMA_BYTES};
use crate::schema::check_bounds;
use crate::surfaces::format::object_schema;
use crate::surfaces::ToolDefinition;

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidRequest, message)
}

/// Read `{ name, description?, parameters? | inputSchema? | input_schema?, strict? }`.
/// Provider-shaped Chat Completions tools (`{ type, function: {...} }`) are
/// accepted too.
pub fn definition_from_value(value: &Value) -> Result<ToolDefinition> {
    let obj = value
        .as_object()
        .ok_or_else(|| invalid("a direct tool must be an object"))?;
    if let Some(function) = obj.get("function").filter(|f| f.is_object()) {
        return definition_from_value(function);
    }
    let name = match obj.get("name") {
        Some(Value::String(n)) if !n.is_empty() => n.clone(),
        _ => return Err(invalid("a direct tool needs a non-empty string \"name\"")),
    };
    if name.chars().count() > MAX_NAME_CHARS
        || name.chars().any(char::is_control)
        || name.trim() != name
    {
        return Err(invalid(format!(
            "direct tool name \"{}\" is too long or has control or surrounding whitespace characters",
            tool_search_base::text::clip(&name, 60)
        )));
    }
    let description = match obj.get("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(d)) => {
            tool_search_base::text::prefix(d, MAX_DESCRIPTION_CHARS).to_string()
        }
        Some(_) => {
            return Err(invalid(format!(
                "direct tool \"{name}\": \"description\" must be a string"
            )))
        }
    };
    let schema = ["parameters", "inputSchema", "input_schema"]
        .iter()
        .find_map(|k| obj.get(*k).filter(|v| !v.is_null()));
    if let Some(schema) = schema {
        check_bounds(schema, MAX_JSON_DEPTH, MAX_SCHEMA_BYTES)
            .map_err(|e| invalid(format!("direct tool \"{name}\": {e}")))?;
    }
    let strict = obj.get("strict").and_then(Value::as_bool);
    Ok(ToolDefinition {
        name,
        description,
        parameters: object_schema(schema),
        strict,
    })
}

pub fn definition_from_direct_only(tool: &DirectOnlyTool) -> Result<ToolDefinition> {
    definition_from_value(&tool.raw)
}

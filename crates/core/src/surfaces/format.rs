//! Provider shapes for tool definitions and their serialized sizes.

use std::io;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::entry::ToolEntry;
use crate::error::{Error, ErrorCode, Result};

/// The wire format a surface is rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SurfaceFormat {
    /// `{ name, description, parameters }` (OpenClaw's own tool definition shape).
    Neutral,
    /// OpenAI Responses API: `{ type: "function", name, description, parameters, strict }`.
    OpenaiResponses,
    /// OpenAI Chat Completions: `{ type: "function", function: { name, description, parameters } }`.
    OpenaiChat,
    /// Anthropic Messages: `{ name, description, input_schema }`.
    Anthropic,
}

impl SurfaceFormat {
    pub const ALL: [SurfaceFormat; 4] = [
        SurfaceFormat::Neutral,
        SurfaceFormat::OpenaiResponses,
        SurfaceFormat::OpenaiChat,
        SurfaceFormat::Anthropic,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SurfaceFormat::Neutral => "neutral",
            SurfaceFormat::OpenaiResponses => "openai-responses",
            SurfaceFormat::OpenaiChat => "openai-chat",
            SurfaceFormat::Anthropic => "anthropic",
        }
    }

    pub fn parse(text: &str) -> Result<SurfaceFormat> {
        SurfaceFormat::ALL.into_iter().find(|f| f.as_str() == text).ok_or_else(|| {
            let shown = tool_search_base::text::clip(text, 40);
            Error::new(
                ErrorCode::InvalidRequest,
                format!("Unknown surface format \"{shown}\"; use neutral, openai-responses, openai-chat or anthropic."),
            )
        })
    }

    /// Position in [`SurfaceFormat::ALL`], for per-format memo slots.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A tool definition in neutral form. `parameters` is always a JSON Schema
/// object: a tool without one gets `{ "type": "object", "properties": {} }`,
/// which every provider accepts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    /// OpenAI strict-mode flag, only when the tool asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl ToolDefinition {
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Option<&Value>,
    ) -> Self {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            parameters: object_schema(parameters),
            strict: None,
        }
    }
}

/// Providers require an object schema for function parameters; anything else
/// (absent, `true`, a non-object) becomes the empty object schema.
pub fn object_schema(schema: Option<&Value>) -> Value {
    match schema {
        Some(Value::Object(map)) => Value::Object(map.clone()),
        _ => json!({ "type": "object", "properties": {} }),
    }
}

/// Shape neutral definitions for one provider, in order.
pub fn render_tools(format: SurfaceFormat, definitions: &[ToolDefinition]) -> Vec<Value> {
    definitions.iter().map(|d| render_tool(format, d)).collect()
}

fn render_tool(format: SurfaceFormat, d: &ToolDefinition) -> Value {
    let mut out = Map::new();
    match format {
        SurfaceFormat::Neutral => {
            out.insert("name".into(), d.name.clone().into());
            out.insert("description".into(), d.description.clone().into());
            out.insert("parameters".into(), d.parameters.clone());
            if let Some(strict) = d.strict {
                out.insert("strict".into(), strict.into());
            }
        }
        SurfaceFormat::OpenaiResponses => {
            out.insert("type".into(), "function".into());
            out.insert("name".into(), d.name.clone().into());
            out.insert("description".into(), d.description.clone().into());
            out.insert("parameters".into(), d.parameters.clone());
            // The Responses API defaults `strict` to true, which rejects any
            // schema with optional properties: say false unless asked.
            out.insert("strict".into(), d.strict.unwrap_or(false).into());
        }
        SurfaceFormat::OpenaiChat => {
            let mut function = Map::new();
            function.insert("name".into(), d.name.clone().into());
            function.insert("description".into(), d.description.clone().into());
            function.insert("parameters".into(), d.parameters.clone());
            if d.strict == Some(true) {
                function.insert("strict".into(), true.into());
            }
            out.insert("type".into(), "function".into());
            out.insert("function".into(), Value::Object(function));
        }
        SurfaceFormat::Anthropic => {
            out.insert("name".into(), d.name.clone().into());
            out.insert("description".into(), d.description.clone().into());
            out.insert("input_schema".into(), d.parameters.clone());
        }
    }
    Value::Object(out)
}

/// Compact JSON length in bytes (what `JSON.stringify(value).length` gives for
/// ASCII, and `Buffer.byteLength(JSON.stringify(value))` in general), without
/// building the string.
pub fn serialized_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Counter(usize);
    impl io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Serializing a `Value` or plain structs into a writer cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// A catalog entry as the tool definition `name` (its own name, or the one it
/// has in direct mode): shared by the surface and hydration.
pub fn entry_definition(e: &ToolEntry, name: String) -> ToolDefinition {
    ToolDefinition::new(name, e.description.clone(), e.input_schema.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> ToolDefinition {
        ToolDefinition::new(
            "get_weather",
            "Weather for a city.",
            Some(&json!({"type":"object","properties":{"city":{"type":"string"}}})),
        )
    }

    #[test]
    fn provider_shapes() {
        let d = def();
        let responses = render_tools(SurfaceFormat::OpenaiResponses, std::slice::from_ref(&d));
        assert_eq!(responses[0]["type"], "function");
        assert_eq!(responses[0]["name"], "get_weather");
        assert_eq!(responses[0]["strict"], false);
        assert!(responses[0]["parameters"]["properties"]["city"].is_object());
        let chat = render_tools(SurfaceFormat::OpenaiChat, std::slice::from_ref(&d));
        assert_eq!(chat[0]["function"]["name"], "get_weather");
        assert!(chat[0]["function"].get("strict").is_none());
        let anthropic = render_tools(SurfaceFormat::Anthropic, std::slice::from_ref(&d));
        assert_eq!(anthropic[0]["input_schema"]["type"], "object");
        assert!(anthropic[0].get("parameters").is_none());
        let neutral = render_tools(SurfaceFormat::Neutral, std::slice::from_ref(&d));
        assert_eq!(
            neutral[0].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["name", "description", "parameters"]
        );
    }

    #[test]
    fn missing_or_boolean_schema_becomes_empty_object_schema() {
        assert_eq!(
            object_schema(None),
            json!({"type":"object","properties":{}})
        );
        assert_eq!(
            object_schema(Some(&json!(true))),
            json!({"type":"object","properties":{}})
        );
    }

    #[test]
    fn serialized_len_matches_to_string() {
        let v = json!({"a": "é\n\"", "b": [1, 2.5, null]});
        assert_eq!(serialized_len(&v), serde_json::to_string(&v).unwrap().len());
    }

    #[test]
    fn format_parse_round_trip_and_errors() {
        for f in SurfaceFormat::ALL {
            assert_eq!(SurfaceFormat::parse(f.as_str()).unwrap(), f);
        }
        let err = SurfaceFormat::parse("gemini").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
    }
}

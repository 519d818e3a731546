//! Parameter text for indexing: property names and their descriptions, walked
//! with hard bounds on depth, visited nodes and collected characters, so a
//! hostile (MCP or client) schema cannot stall a catalog build.
//! Names and descriptions are kept apart: they are weighted separately.

use serde_json::Value;

use crate::limits::{MAX_PARAM_INDEX_DEPTH, MAX_PARAM_TEXT_CHARS};

/// Most schema nodes visited per tool, whatever their shape.
const MAX_NODES: usize = 512;
/// Enum values indexed per property (they often name the capability: "celsius").
const MAX_ENUM_VALUES: usize = 8;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ParamText {
    /// Property names, space-separated (identifier splitting happens later).
    pub names: String,
    /// Property descriptions, titles and short enum values.
    pub descriptions: String,
}

struct Walk {
    out: ParamText,
    nodes: usize,
    chars: usize,
}

impl Walk {
    fn budget_left(&self) -> bool {
        self.nodes < MAX_NODES && self.chars < MAX_PARAM_TEXT_CHARS
    }

    fn push(&mut self, into_names: bool, text: &str) {
        let room = MAX_PARAM_TEXT_CHARS.saturating_sub(self.chars);
        if room == 0 {
            return;
        }
        let target = if into_names { &mut self.out.names } else { &mut self.out.descriptions };
        let mut taken = 0usize;
        if !target.is_empty() {
            target.push(' ');
        }
        for c in text.chars().take(room) {
            target.push(c);
            taken += 1;
        }
        self.chars += taken + 1;
    }

    fn schema(&mut self, node: &Value, depth: usize) {
        if depth > MAX_PARAM_INDEX_DEPTH || !self.budget_left() {
            return;
        }
        self.nodes += 1;
        let Value::Object(map) = node else { return };
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, prop) in props {
                if !self.budget_left() {
                    return;
                }
                self.push(true, name);
                self.describe(prop);
                self.schema(prop, depth + 1);
            }
        }
        if let Some(items) = map.get("items") {
            self.schema(items, depth + 1);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(variants)) = map.get(key) {
                for variant in variants.iter().take(8) {
                    self.schema(variant, depth + 1);
                }
            }
        }
    }

    /// Description, title and short string enum values of one property.
    fn describe(&mut self, prop: &Value) {
        let Value::Object(map) = prop else { return };
        for key in ["description", "title"] {
            if let Some(Value::String(text)) = map.get(key) {
                self.push(false, text);
            }
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            for value in values.iter().take(MAX_ENUM_VALUES) {
                if let Value::String(text) = value {
                    if text.chars().count() <= 32 {
                        self.push(false, text);
                    }
                }
            }
        }
    }
}

/// Bounded parameter text of an input schema (`None` → empty).
pub fn param_text(schema: Option<&Value>) -> ParamText {
    let mut walk = Walk { out: ParamText::default(), nodes: 0, chars: 0 };
    if let Some(schema) = schema {
        walk.schema(schema, 0);
    }
    walk.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn collects_names_and_descriptions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": { "type": "string", "description": "City name" },
                "unit": { "enum": ["celsius", "fahrenheit"] },
                "filter": { "type": "object", "properties": { "maxAge": { "type": "integer" } } }
            }
        });
        let text = param_text(Some(&schema));
        assert_eq!(text.names, "city unit filter maxAge");
        assert_eq!(text.descriptions, "City name celsius fahrenheit");
    }

    #[test]
    fn deep_schema_is_bounded() {
        let mut schema = json!({ "type": "string" });
        for i in 0..1_000 {
            schema = json!({ "properties": { format!("p{i}"): schema } });
        }
        let text = param_text(Some(&schema));
        assert!(text.names.split(' ').count() <= MAX_PARAM_INDEX_DEPTH + 1);
    }

    #[test]
    fn wide_schema_is_bounded() {
        let mut props = serde_json::Map::new();
        for i in 0..50_000 {
            props.insert(format!("property_{i}"), json!({ "description": "x".repeat(100) }));
        }
        let text = param_text(Some(&Value::Object(props.into_iter().collect())));
        assert!(text.names.chars().count() + text.descriptions.chars().count() <= MAX_PARAM_TEXT_CHARS + 2);
    }
}

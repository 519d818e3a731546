//! Parameter text for indexing: property names and the text of every schema
//! node walked (the root's description, each property's, and those inside
//! `items` and `anyOf` / `oneOf` / `allOf` branches), with hard bounds on
//! depth, visited nodes and collected characters, so a hostile (MCP or
//! client) schema cannot stall a catalog build.
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
        let target = if into_names {
            &mut self.out.names
        } else {
            &mut self.out.descriptions
        };
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
        if !self.budget_left() {
            return;
        }
        self.nodes += 1;
        let Value::Object(map) = node else { return };
        // A node's own text counts even at the depth limit: it is the text of
        // the property (or branch) that led here.
        self.describe(map, depth == 0);
        if depth > MAX_PARAM_INDEX_DEPTH {
            return;
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, prop) in props {
                if !self.budget_left() {
                    return;
                }
                self.push(true, name);
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

    /// Description, title and short string enum / const values of one node.
    /// The root's title is skipped: generators fill it with the type name
    /// (`fetchArguments`), which is not a capability.
    fn describe(&mut self, map: &serde_json::Map<String, Value>, root: bool) {
        let keys: &[&str] = if root {
            &["description"]
        } else {
            &["description", "title"]
        };
        for key in keys {
            if let Some(Value::String(text)) = map.get(*key) {
                self.push(false, text);
            }
        }
        let short = |value: &Value| match value {
            Value::String(text) if text.chars().count() <= 32 => Some(text.clone()),
            _ => None,
        };
        if let Some(Value::Array(values)) = map.get("enum") {
            for text in values.iter().take(MAX_ENUM_VALUES).filter_map(short) {
                self.push(false, &text);
            }
        }
        if let Some(text) = map.get("const").and_then(short) {
            self.push(false, &text);
        }
    }
}

/// Bounded parameter text of an input schema (`None` → empty).
pub fn param_text(schema: Option<&Value>) -> ParamText {
    let mut walk = Walk {
        out: ParamText::default(),
        nodes: 0,
        chars: 0,
    };
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
    fn root_items_and_branch_text_is_collected() {
        let schema = json!({
            "title": "convertArguments",
            "description": "Convert between currencies",
            "type": "object",
            "properties": {
                "amount": {
                    "anyOf": [
                        { "type": "number", "description": "Plain amount" },
                        { "type": "string", "description": "Amount with a symbol" }
                    ]
                },
                "rates": { "type": "array", "items": { "type": "object", "description": "Historical rate row", "properties": { "day": { "type": "string" } } } },
                "mode": { "oneOf": [{ "const": "spot", "title": "Spot rate" }] },
                "source": { "allOf": [{ "description": "Central bank feed" }] }
            }
        });
        let text = param_text(Some(&schema));
        assert_eq!(text.names, "amount rates day mode source");
        assert_eq!(
            text.descriptions,
            "Convert between currencies Plain amount Amount with a symbol Historical rate row Spot rate spot Central bank feed"
        );
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
            props.insert(
                format!("property_{i}"),
                json!({ "description": "x".repeat(100) }),
            );
        }
        let text = param_text(Some(&Value::Object(props.into_iter().collect())));
        assert!(
            text.names.chars().count() + text.descriptions.chars().count()
                <= MAX_PARAM_TEXT_CHARS + 2
        );
    }
}

//! TypeScript-style signatures of JSON schemas, e.g.
//! `{ id: string; mode?: "drip" | "flood" }`, bounded in size, depth,
//! property count and union width, as OpenClaw renders them in search hits.
//!
//! The renderer passes a byte budget down the tree, so the work is bounded by
//! the caps, not by the schema: a 10,000-property object costs no more than a
//! 17-property one. Recursion depth is bounded by `max_depth` plus a fixed
//! number of `$ref` hops. Output is deterministic (property order is the
//! schema's document order).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::refs::resolve_local;
use crate::limits::{
    INPUT_HINT_MAX_CHARS, INPUT_HINT_MAX_DEPTH, INPUT_HINT_MAX_ENUM, INPUT_HINT_MAX_PROPERTIES,
    OUTPUT_HINT_MAX_CHARS,
};

/// Longest literal (`"drip"`, `42`) printed verbatim; longer ones print as their type.
const MAX_LITERAL_CHARS: usize = 40;
/// Longest property name printed; a longer one ends the object with a cut.
const MAX_KEY_CHARS: usize = 64;
/// `$ref` resolutions per hint: bounds ref-only cycles like `{"$ref": "#"}`.
const MAX_REF_HOPS: usize = 32;
/// Closing text of a cut object / union (reserved up front so it always fits).
const OBJECT_CUT_TAIL: &str = "; ... }";
const UNION_CUT_TAIL: &str = " | ...";

#[derive(Debug, Clone, Copy)]
struct Caps {
    max_chars: usize,
    max_depth: usize,
    max_props: usize,
    max_union: usize,
}

const INPUT_CAPS: Caps = Caps {
    max_chars: INPUT_HINT_MAX_CHARS,
    max_depth: INPUT_HINT_MAX_DEPTH,
    max_props: INPUT_HINT_MAX_PROPERTIES,
    max_union: INPUT_HINT_MAX_ENUM,
};

/// Same shape caps as inputs, larger text budget; any cut makes it `None`.
const OUTPUT_CAPS: Caps = Caps { max_chars: OUTPUT_HINT_MAX_CHARS, ..INPUT_CAPS };

/// Signature of a tool's input schema.
///
/// - `None`, `null`, `{}` and an object schema without properties → `{}`.
/// - Required properties print as `name: T`, optional ones as `name?: T`.
/// - `integer` → `number`; `enum`/`const` → literal unions; `anyOf`/`oneOf` →
///   unions; `allOf` → intersections; `nullable: true` and `type: [.., "null"]`
///   → `T | null`; arrays → `T[]` (tuples `[A, B]`); maps → `Record<string, T>`.
/// - Local `$ref`s (`#/...`) are followed; remote or unresolvable ones, and
///   anything else that is not a schema (`true` at a property, a number...),
///   print as `unknown` (`false` prints as `never`).
/// - Cuts: over 16 properties or the 300-char budget → `; ... }`; over 8 union
///   members → ` | ...`; nesting past depth 4 → `object` / `unknown[]`.
pub fn input_hint(schema: Option<&Value>) -> String {
    let schema = match schema {
        None | Some(Value::Null) => return "{}".to_string(),
        Some(Value::Object(map)) if map.is_empty() => return "{}".to_string(),
        Some(schema) => schema,
    };
    let mut renderer = Renderer::new(schema, INPUT_CAPS);
    renderer
        .render(schema, 0, INPUT_CAPS.max_chars)
        .unwrap_or_else(|| "unknown".to_string())
}

/// Hint of a trusted output schema, only when it can be shown COMPLETE.
///
/// Returns None when the schema is not an object schema with at least one
/// property (`type` absent or `"object"`), or when rendering it would need any
/// cut (850-char budget, 16 properties, 8 union members, depth 4), or when a
/// part cannot be expressed (unresolvable `$ref`, over-long literal, unknown
/// `type`). A partial output hint would mislead the model more than none.
pub fn output_hint(schema: &Value) -> Option<String> {
    let map = schema.as_object()?;
    match map.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(_) => return None,
    }
    let has_properties = map
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|props| !props.is_empty());
    if !has_properties {
        return None;
    }
    let mut renderer = Renderer::new(schema, OUTPUT_CAPS);
    let hint = renderer.render(schema, 0, OUTPUT_CAPS.max_chars)?;
    (!renderer.incomplete).then_some(hint)
}

/// Signature of one subschema of `root` (local refs resolve against `root`),
/// within `max_chars`, under the input caps. For messages about a value that
/// matched none of a union's forms.
pub(super) fn fragment_hint(root: &Value, schema: &Value, max_chars: usize) -> String {
    let mut renderer = Renderer::new(root, Caps { max_chars, ..INPUT_CAPS });
    renderer.render(schema, 0, max_chars).unwrap_or_else(|| "unknown".to_string())
}

struct Renderer<'a> {
    root: &'a Value,
    caps: Caps,
    ref_hops: usize,
    /// Set whenever something was cut or could not be expressed.
    incomplete: bool,
}

impl<'a> Renderer<'a> {
    fn new(root: &'a Value, caps: Caps) -> Self {
        Renderer { root, caps, ref_hops: 0, incomplete: false }
    }

    /// Renders `schema` in at most `budget` bytes, or None if it cannot fit.
    fn render(&mut self, schema: &'a Value, depth: usize, budget: usize) -> Option<String> {
        let text = match schema {
            Value::Bool(true) => "unknown".to_string(),
            Value::Bool(false) => "never".to_string(),
            Value::Object(map) => return self.render_schema(map, depth, budget),
            _ => self.unknown(),
        };
        fit(text, budget)
    }

    fn unknown(&mut self) -> String {
        self.incomplete = true;
        "unknown".to_string()
    }

    fn render_schema(
        &mut self,
        map: &'a Map<String, Value>,
        depth: usize,
        budget: usize,
    ) -> Option<String> {
        if let Some(reference) = map.get("$ref") {
            return self.render_ref(reference, depth, budget);
        }
        let nullable = map.get("nullable") == Some(&Value::Bool(true));
        let inner_budget = if nullable { budget.saturating_sub(" | null".len()) } else { budget };
        let base = self.render_base(map, depth, inner_budget)?;
        if nullable && base != "null" && !base.ends_with(" | null") {
            return fit(format!("{base} | null"), budget);
        }
        fit(base, budget)
    }

    fn render_ref(&mut self, reference: &Value, depth: usize, budget: usize) -> Option<String> {
        self.ref_hops += 1;
        let target = match reference.as_str() {
            Some(r) if self.ref_hops <= MAX_REF_HOPS => resolve_local(self.root, r),
            _ => None,
        };
        match target {
            Some(target) => self.render(target, depth, budget),
            None => {
                let text = self.unknown();
                fit(text, budget)
            }
        }
    }

    fn render_base(
        &mut self,
        map: &'a Map<String, Value>,
        depth: usize,
        budget: usize,
    ) -> Option<String> {
        if let Some(value) = map.get("const") {
            let text = self.literal(value);
            return fit(text, budget);
        }
        if let Some(values) = map.get("enum") {
            return match values.as_array() {
                Some(values) => self.render_enum(values, budget),
                None => {
                    let text = self.unknown();
                    fit(text, budget)
                }
            };
        }
        let has_own_type = map.contains_key("type") || map.contains_key("properties");
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = map.get(keyword) {
                if !has_own_type || members.iter().any(is_shape) {
                    return self.render_union(members, depth, budget);
                }
            }
        }
        if let Some(Value::Array(members)) = map.get("allOf") {
            if !has_own_type {
                return self.render_intersection(members, depth, budget);
            }
        }
        match map.get("type") {
            Some(Value::String(t)) => self.render_type(t, map, depth, budget),
            Some(Value::Array(types)) => {
                let types: Vec<&'a Value> = types.iter().collect();
                self.render_union_with(&types, budget, |this, member, member_budget| {
                    match member.as_str() {
                        Some(t) => this.render_type(t, map, depth, member_budget),
                        None => {
                            let text = this.unknown();
                            fit(text, member_budget)
                        }
                    }
                })
            }
            Some(_) => {
                let text = self.unknown();
                fit(text, budget)
            }
            None if map.contains_key("properties") || map.contains_key("additionalProperties") => {
                self.render_object(map, depth, budget)
            }
            None if map.contains_key("items") || map.contains_key("prefixItems") => {
                self.render_array(map, depth, budget)
            }
            None => fit("unknown".to_string(), budget),
        }
    }

    fn render_type(
        &mut self,
        type_name: &str,
        map: &'a Map<String, Value>,
        depth: usize,
        budget: usize,
    ) -> Option<String> {
        let text = match type_name {
            "string" => "string",
            "number" | "integer" => "number",
            "boolean" => "boolean",
            "null" => "null",
            "array" => return self.render_array(map, depth, budget),
            "object" => return self.render_object(map, depth, budget),
            _ => {
                let text = self.unknown();
                return fit(text, budget);
            }
        };
        fit(text.to_string(), budget)
    }

    fn render_array(
        &mut self,
        map: &'a Map<String, Value>,
        depth: usize,
        budget: usize,
    ) -> Option<String> {
        if depth >= self.caps.max_depth {
            self.incomplete = true;
            return fit("unknown[]".to_string(), budget);
        }
        let tuple = match (map.get("prefixItems"), map.get("items")) {
            (Some(Value::Array(items)), _) | (None, Some(Value::Array(items))) => Some(items),
            _ => None,
        };
        if let Some(items) = tuple {
            return self.render_tuple(items, depth, budget);
        }
        let Some(items) = map.get("items") else {
            return fit("unknown[]".to_string(), budget);
        };
        // Reserve room for `(` `)` `[]`.
        let inner = self.render(items, depth + 1, budget.checked_sub(4)?)?;
        let text = if needs_parens(&inner) { format!("({inner})[]") } else { format!("{inner}[]") };
        fit(text, budget)
    }

    fn render_tuple(&mut self, items: &'a [Value], depth: usize, budget: usize) -> Option<String> {
        let mut out = String::from("[");
        let reserve = ", ...]".len();
        for (index, item) in items.iter().enumerate() {
            if index >= self.caps.max_union {
                self.incomplete = true;
                out.push_str(if index > 0 { ", ..." } else { "..." });
                out.push(']');
                return fit(out, budget);
            }
            let sep = if index > 0 { ", " } else { "" };
            let avail = budget.checked_sub(out.len() + sep.len() + reserve)?;
            match self.render(item, depth + 1, avail) {
                Some(text) => {
                    out.push_str(sep);
                    out.push_str(&text);
                }
                None => {
                    self.incomplete = true;
                    out.push_str(if index > 0 { ", ..." } else { "..." });
                    out.push(']');
                    return fit(out, budget);
                }
            }
        }
        out.push(']');
        fit(out, budget)
    }

    fn render_object(
        &mut self,
        map: &'a Map<String, Value>,
        depth: usize,
        budget: usize,
    ) -> Option<String> {
        let properties = map.get("properties").and_then(Value::as_object);
        let properties = match properties {
            Some(props) if !props.is_empty() => props,
            _ => return self.render_record(map, depth, budget),
        };
        if depth >= self.caps.max_depth {
            self.incomplete = true;
            return fit("object".to_string(), budget);
        }
        let required: HashSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = String::from("{ ");
        let mut count = 0;
        let mut cut = false;
        for (name, prop) in properties {
            if count >= self.caps.max_props {
                cut = true;
                break;
            }
            let Some(key) = render_key(name) else {
                cut = true;
                break;
            };
            let optional = if required.contains(name.as_str()) { "" } else { "?" };
            let sep = if count > 0 { "; " } else { "" };
            let prefix = format!("{sep}{key}{optional}: ");
            let Some(avail) = budget.checked_sub(out.len() + prefix.len() + OBJECT_CUT_TAIL.len())
            else {
                cut = true;
                break;
            };
            let Some(value) = self.render(prop, depth + 1, avail) else {
                cut = true;
                break;
            };
            out.push_str(&prefix);
            out.push_str(&value);
            count += 1;
        }
        if cut {
            self.incomplete = true;
            out.push_str(if count > 0 { "; ..." } else { "..." });
        }
        out.push_str(" }");
        fit(out, budget)
    }

    /// An object without properties: `Record<string, T>` when it declares a
    /// value schema, else `{}`.
    fn render_record(
        &mut self,
        map: &'a Map<String, Value>,
        depth: usize,
        budget: usize,
    ) -> Option<String> {
        let value_schema = match map.get("additionalProperties") {
            Some(schema @ Value::Object(m)) if !m.is_empty() => schema,
            _ => return fit("{}".to_string(), budget),
        };
        if depth >= self.caps.max_depth {
            self.incomplete = true;
            return fit("object".to_string(), budget);
        }
        let wrapper = "Record<string, >".len();
        let inner = self.render(value_schema, depth + 1, budget.checked_sub(wrapper)?)?;
        fit(format!("Record<string, {inner}>"), budget)
    }

    fn render_enum(&mut self, values: &'a [Value], budget: usize) -> Option<String> {
        if values.is_empty() {
            return fit("never".to_string(), budget);
        }
        let values: Vec<&'a Value> = values.iter().collect();
        self.render_union_with(&values, budget, |this, value, member_budget| {
            let text = this.literal(value);
            fit(text, member_budget)
        })
    }

    fn render_union(&mut self, members: &'a [Value], depth: usize, budget: usize) -> Option<String> {
        if members.is_empty() {
            return fit("never".to_string(), budget);
        }
        let members: Vec<&'a Value> = members.iter().collect();
        self.render_union_with(&members, budget, |this, member, member_budget| {
            this.render(member, depth + 1, member_budget)
        })
    }

    /// Joins rendered members with ` | `, dropping duplicates, keeping at most
    /// `max_union` members and the budget; a cut ends with ` | ...`.
    fn render_union_with<F>(
        &mut self,
        members: &[&'a Value],
        budget: usize,
        mut render_member: F,
    ) -> Option<String>
    where
        F: FnMut(&mut Self, &'a Value, usize) -> Option<String>,
    {
        let mut parts: Vec<String> = Vec::new();
        let mut used = 0usize;
        let mut cut = false;
        'members: for (index, member) in members.iter().enumerate() {
            if index >= self.caps.max_union {
                cut = true;
                break;
            }
            let sep = if parts.is_empty() { 0 } else { " | ".len() };
            let Some(avail) = budget.checked_sub(used + sep + UNION_CUT_TAIL.len()) else {
                cut = true;
                break;
            };
            let Some(text) = render_member(self, member, avail) else {
                cut = true;
                break;
            };
            // `A | B` members of a union need no parentheses; split to dedupe them.
            // Nested unions flatten into this one, under the same member cap.
            for piece in split_top_level(&text, " | ") {
                if piece == "..." {
                    cut = true; // re-marked once at the end of this union
                    continue;
                }
                if parts.len() >= self.caps.max_union {
                    cut = true;
                    break 'members;
                }
                if !parts.iter().any(|p| p == piece) {
                    used += if parts.is_empty() { 0 } else { " | ".len() } + piece.len();
                    parts.push(piece.to_string());
                }
            }
        }
        let mut out = parts.join(" | ");
        if cut {
            self.incomplete = true;
            if out.is_empty() {
                out.push_str("unknown");
            } else {
                out.push_str(UNION_CUT_TAIL);
            }
        }
        fit(out, budget)
    }

    fn render_intersection(
        &mut self,
        members: &'a [Value],
        depth: usize,
        budget: usize,
    ) -> Option<String> {
        if members.len() == 1 {
            return self.render(&members[0], depth, budget);
        }
        let mut out = String::new();
        for (index, member) in members.iter().enumerate() {
            if index >= self.caps.max_union {
                self.incomplete = true;
                break;
            }
            let sep = if index > 0 { " & " } else { "" };
            // Reserve 2 bytes for parentheses.
            let avail = budget.checked_sub(out.len() + sep.len() + 2)?;
            let text = self.render(member, depth + 1, avail)?;
            out.push_str(sep);
            if needs_parens(&text) {
                out.push('(');
                out.push_str(&text);
                out.push(')');
            } else {
                out.push_str(&text);
            }
        }
        if out.is_empty() {
            out.push_str("unknown");
        }
        fit(out, budget)
    }

    /// A JSON literal; long ones or containers print as their type instead.
    fn literal(&mut self, value: &Value) -> String {
        let type_name = match value {
            Value::Null => return "null".to_string(),
            Value::Bool(b) => return b.to_string(),
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "unknown[]",
            Value::Object(_) => "object",
        };
        if matches!(value, Value::Number(_) | Value::String(_)) {
            if let Ok(text) = serde_json::to_string(value) {
                if text.chars().count() <= MAX_LITERAL_CHARS {
                    return text;
                }
            }
        }
        self.incomplete = true;
        type_name.to_string()
    }
}

/// Whether a member schema describes a shape (as opposed to a bare
/// constraint like `{"required": ["a"]}` next to a typed object).
fn is_shape(member: &Value) -> bool {
    match member {
        Value::Object(map) => [
            "type", "properties", "items", "$ref", "const", "enum", "anyOf", "oneOf", "allOf",
        ]
        .iter()
        .any(|k| map.contains_key(*k)),
        _ => false,
    }
}

fn fit(text: String, budget: usize) -> Option<String> {
    (text.len() <= budget).then_some(text)
}

/// A property name as a TypeScript key: bare when it is an identifier, else quoted.
fn render_key(name: &str) -> Option<String> {
    if name.chars().count() > MAX_KEY_CHARS {
        return None;
    }
    let mut chars = name.chars();
    let is_identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if is_identifier {
        Some(name.to_string())
    } else {
        serde_json::to_string(name).ok()
    }
}

/// Whether `text` has a top-level ` | ` or ` & ` (outside brackets and quotes),
/// so it must be parenthesized before `[]` or `&`.
fn needs_parens(text: &str) -> bool {
    split_top_level(text, " | ").len() > 1 || split_top_level(text, " & ").len() > 1
}

/// Splits on `separator` only outside `{}`, `[]`, `()`, `<>` and string literals.
fn split_top_level<'t>(text: &'t str, separator: &str) -> Vec<&'t str> {
    let bytes = text.as_bytes();
    let sep = separator.as_bytes();
    let mut parts = Vec::new();
    let mut depth: i32 = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' | b'(' | b'<' => depth += 1,
            b'}' | b']' | b')' | b'>' => depth -= 1,
            _ => {}
        }
        if depth == 0 && bytes[i..].starts_with(sep) {
            parts.push(&text[start..i]);
            i += sep.len();
            start = i;
            continue;
        }
        i += 1;
    }
    parts.push(&text[start..]);
    parts
}

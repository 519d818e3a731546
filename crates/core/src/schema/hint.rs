//! TypeScript-style signatures of JSON schemas, e.g.
//! `{ id: string; mode?: "drip" | "flood" }`, bounded in size, depth,
//! property count and union width, as OpenClaw renders them in search hits.
//!
//! The renderer passes a byte budget down the tree, so the work is bounded by
//! the caps, not by the schema: a 10,000-property object costs no more than a
//! 17-property one. Recursion depth is bounded by `max_depth` plus a fixed
//! number of `$ref` hops. Output is deterministic and independent of the
//! schema's key order: required properties first, then by name.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::refs::{ref_of, resolve_local};
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
/// The schema `true` (anything): the value of a required key nothing declares.
static ANY_SCHEMA: Value = Value::Bool(true);
/// Longest numeric bound printed (`>= 0`); longer numbers are left out.
const MAX_BOUND_CHARS: usize = 24;
/// Structural variants (`anyOf`/`oneOf` members, `type` lists) an output hint
/// shows; more and the output has no hint (literal unions keep 8).
const OUTPUT_MAX_VARIANTS: usize = 5;
/// Keywords that constrain a value without giving it a type: an untyped leaf
/// carrying one is not "anything", so an output hint cannot say `unknown`.
const CONSTRAINT_KEYWORDS: [&str; 22] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "not",
    "if",
    "required",
    "contentMediaType",
];

#[derive(Debug, Clone, Copy)]
struct Caps {
    max_chars: usize,
    max_depth: usize,
    max_props: usize,
    /// Literal values (`enum`, `const` members) per union.
    max_union: usize,
    /// Structural members (`anyOf`/`oneOf`, `type` lists) per union.
    max_variants: usize,
    /// Input hints: `number /* integer, >= 0 */`. Output hints describe what
    /// comes back, where a bound tells the model nothing it must do.
    numeric_constraints: bool,
    /// Output hints: only shapes the schema pins down completely (closed
    /// objects, typed leaves, no `allOf`), else no hint at all.
    exact: bool,
}

const INPUT_CAPS: Caps = Caps {
    max_chars: INPUT_HINT_MAX_CHARS,
    max_depth: INPUT_HINT_MAX_DEPTH,
    max_props: INPUT_HINT_MAX_PROPERTIES,
    max_union: INPUT_HINT_MAX_ENUM,
    max_variants: INPUT_HINT_MAX_ENUM,
    numeric_constraints: true,
    exact: false,
};

/// Same shape caps as inputs, larger text budget, five structural variants,
/// no numeric constraints; any cut or inexact part makes it `None`.
const OUTPUT_CAPS: Caps = Caps {
    max_chars: OUTPUT_HINT_MAX_CHARS,
    max_variants: OUTPUT_MAX_VARIANTS,
    numeric_constraints: false,
    exact: true,
    ..INPUT_CAPS
};

/// Signature of a tool's input schema.
///
/// - `None`, `null`, `{}` and an object schema without properties → `{}`;
///   one that only lists `required` names prints them as `name: unknown`.
/// - Required properties print first, as `name: T`, then optional ones as
///   `name?: T`; each group sorted by name.
/// - Numeric constraints follow the type as a comment:
///   `number /* integer, >= 0, <= 100 */` (`>`/`<` for exclusive bounds),
///   charged to the same budget as the rest (a property that no longer fits
///   is cut).
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

/// Most object variants of a root union an output hint shows.
const OUTPUT_MAX_OBJECT_VARIANTS: usize = 5;

/// Hint of a trusted output schema, only when it can be shown COMPLETE.
///
/// Shown for these roots: an object with at least one property; an array
/// (`Array<T>`); an enum or const; a nullable scalar (`string | null`); a
/// union (`anyOf` / `oneOf`) of one to five object variants (and `null`).
/// None for anything else, e.g. a plain scalar, or an object that also has
/// `anyOf` / `oneOf` (its real shape is the combination, which a single
/// signature would misstate). Every object inside must be closed
/// (`additionalProperties: false`; a value-typed map prints as
/// `Record<string, T>`), every leaf typed (an untyped leaf with constraints
/// such as `pattern` cannot be said), every union at most 8 literals or 5
/// structural variants; no `allOf`. Numbers print as `number` (bounds are
/// for inputs). Also None when rendering would need any cut (850-char
/// budget, 16 properties, depth 4), or when a part cannot be expressed
/// (unresolvable `$ref`, over-long literal, unknown `type`). A partial output
/// hint would mislead the model more than none.
pub fn output_hint(schema: &Value) -> Option<String> {
    let mut renderer = Renderer::new(schema, OUTPUT_CAPS);
    let hint = match output_root(schema)? {
        OutputRoot::Array(items) => {
            let wrapper = "Array<>".len();
            let inner = renderer.render(items, 1, OUTPUT_CAPS.max_chars.checked_sub(wrapper)?)?;
            format!("Array<{inner}>")
        }
        OutputRoot::Whole => renderer.render(schema, 0, OUTPUT_CAPS.max_chars)?,
    };
    (!renderer.incomplete).then_some(hint)
}

enum OutputRoot<'a> {
    /// An array root: its `items` schema.
    Array(&'a Value),
    /// Rendered as a whole.
    Whole,
}

/// Which output roots get a hint (see [`output_hint`]).
fn output_root(schema: &Value) -> Option<OutputRoot<'_>> {
    let map = schema.as_object()?;
    let union = ["anyOf", "oneOf"].iter().find_map(|k| map.get(*k));
    if map.contains_key("enum") || map.contains_key("const") {
        return Some(OutputRoot::Whole);
    }
    let nullable = map.get("nullable") == Some(&Value::Bool(true));
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => object_root(map, union),
        Some(Value::String(t)) if t == "array" => map
            .get("items")
            .filter(|i| i.is_object())
            .map(OutputRoot::Array),
        Some(Value::String(t)) if nullable && is_scalar_type(t) => Some(OutputRoot::Whole),
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            let nullable_scalar = names.len() == types.len()
                && names.contains(&"null")
                && names.iter().any(|t| is_scalar_type(t))
                && names.iter().all(|t| *t == "null" || is_scalar_type(t));
            nullable_scalar.then_some(OutputRoot::Whole)
        }
        Some(_) => None,
        None if map.contains_key("properties") => object_root(map, union),
        None => match union {
            Some(Value::Array(members)) => union_root(schema, members),
            _ => None,
        },
    }
}

fn object_root<'a>(map: &'a Map<String, Value>, union: Option<&Value>) -> Option<OutputRoot<'a>> {
    let has_properties = map
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    (has_properties && union.is_none()).then_some(OutputRoot::Whole)
}

/// A root union: one to five object variants (plus `null`), or a nullable scalar.
fn union_root<'a>(root: &'a Value, members: &'a [Value]) -> Option<OutputRoot<'a>> {
    let (mut objects, mut scalars, mut nulls) = (0usize, 0usize, 0usize);
    for member in members {
        let member = match ref_of(member) {
            Some(reference) => resolve_local(root, reference)?,
            None => member,
        };
        let map = member.as_object()?;
        match map.get("type").and_then(Value::as_str) {
            Some("null") => nulls += 1,
            Some("object") => objects += 1,
            None if map.contains_key("properties") => objects += 1,
            Some(t) if is_scalar_type(t) => scalars += 1,
            _ => return None,
        }
    }
    let object_union = (1..=OUTPUT_MAX_OBJECT_VARIANTS).contains(&objects) && scalars == 0;
    let nullable_scalar = scalars >= 1 && nulls >= 1 && objects == 0;
    (object_union || nullable_scalar).then_some(OutputRoot::Whole)
}

fn is_scalar_type(name: &str) -> bool {
    matches!(name, "string" | "number" | "integer" | "boolean")
}

/// Signature of one subschema of `root` (local refs resolve against `root`),
/// within `max_chars`, under the input caps. For messages about a value that
/// matched none of a union's forms.
pub(super) fn fragment_hint(root: &Value, schema: &Value, max_chars: usize) -> String {
    let mut renderer = Renderer::new(
        root,
        Caps {
            max_chars,
            ..INPUT_CAPS
        },
    );
    renderer
        .render(schema, 0, max_chars)
        .unwrap_or_else(|| "unknown".to_string())
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
        Renderer {
            root,
            caps,
            ref_hops: 0,
            incomplete: false,
        }
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
        let inner_budget = if nullable {
            budget.saturating_sub(" | null".len())
        } else {
            budget
        };
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
        if self.caps.exact
            && (map.contains_key("allOf")
                || (has_own_type && (map.contains_key("anyOf") || map.contains_key("oneOf"))))
        {
            // A typed shape narrowed by a union, or an intersection: the real
            // shape is a combination one signature would misstate.
            let text = self.unknown();
            return fit(text, budget);
        }
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
                let cap = self.caps.max_variants;
                self.render_union_with(&types, cap, budget, |this, member, member_budget| {
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
            // Constrained but untyped: not "anything", and not sayable.
            None if self.caps.exact && CONSTRAINT_KEYWORDS.iter().any(|k| map.contains_key(*k)) => {
                let text = self.unknown();
                fit(text, budget)
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
            "number" | "integer" if self.caps.numeric_constraints => {
                // Charged like any other text: when it does not fit, the caller cuts.
                let text = match numeric_constraints(type_name == "integer", map) {
                    Some(constraints) => format!("number /* {constraints} */"),
                    None => "number".to_string(),
                };
                return fit(text, budget);
            }
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
        let text = if needs_parens(&inner) {
            format!("({inner})[]")
        } else {
            format!("{inner}[]")
        };
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
        let required: HashSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = map
            .get("properties")
            .and_then(Value::as_object)
            .filter(|p| !p.is_empty());
        if properties.is_none() && required.is_empty() {
            return self.render_record(map, depth, budget);
        }
        if depth >= self.caps.max_depth {
            self.incomplete = true;
            return fit("object".to_string(), budget);
        }
        let undeclared_required =
            properties.is_some_and(|p| required.iter().any(|name| !p.contains_key(*name)));
        if self.caps.exact
            && (map.get("additionalProperties") != Some(&Value::Bool(false)) || undeclared_required)
        {
            // Open, or requiring a field it does not declare: there is more
            // to the object than the hint could name.
            self.incomplete = true;
        }
        // Required keys without a declared schema: their value is anything
        // the map allows (`additionalProperties`), else unknown.
        let value_schema = match map.get("additionalProperties") {
            Some(schema @ Value::Object(m)) if !m.is_empty() => schema,
            _ => &ANY_SCHEMA,
        };
        let entries: Vec<(&str, &Value)> = match properties {
            Some(props) => props.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            None => required.iter().map(|name| (*name, value_schema)).collect(),
        };
        let entries = ordered_properties(entries, &required, self.caps.max_props + 1);
        let mut out = String::from("{ ");
        let mut count = 0;
        let mut cut = false;
        for (name, prop) in entries {
            if count >= self.caps.max_props {
                cut = true;
                break;
            }
            let Some(key) = render_key(name) else {
                cut = true;
                break;
            };
            let optional = if required.contains(name) { "" } else { "?" };
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
            Some(Value::Bool(false)) => return fit("{}".to_string(), budget),
            _ => {
                // An open map of anything: `{}` would say "empty".
                if self.caps.exact {
                    self.incomplete = true;
                }
                return fit("{}".to_string(), budget);
            }
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
        let cap = self.caps.max_union;
        self.render_union_with(&values, cap, budget, |this, value, member_budget| {
            let text = this.literal(value);
            fit(text, member_budget)
        })
    }

    fn render_union(
        &mut self,
        members: &'a [Value],
        depth: usize,
        budget: usize,
    ) -> Option<String> {
        if members.is_empty() {
            return fit("never".to_string(), budget);
        }
        let members: Vec<&'a Value> = members.iter().collect();
        // A union of `const` members is a literal union, under the literal cap.
        let literals = members.iter().all(|m| {
            m.as_object()
                .is_some_and(|o| o.contains_key("const") || o.contains_key("enum"))
        });
        let cap = if literals {
            self.caps.max_union
        } else {
            self.caps.max_variants
        };
        self.render_union_with(&members, cap, budget, |this, member, member_budget| {
            this.render(member, depth + 1, member_budget)
        })
    }

    /// Joins rendered members with ` | `, dropping duplicates, keeping at most
    /// `max_members` members (and `max_union` pieces once flattened) and the
    /// budget; a cut ends with ` | ...`.
    fn render_union_with<F>(
        &mut self,
        members: &[&'a Value],
        max_members: usize,
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
            if index >= max_members {
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
            "type",
            "properties",
            "items",
            "$ref",
            "const",
            "enum",
            "anyOf",
            "oneOf",
            "allOf",
        ]
        .iter()
        .any(|k| map.contains_key(*k)),
        _ => false,
    }
}

/// At most `keep` properties in hint order: required first, then by name.
/// Selects before sorting, so a 10,000-property object is not fully sorted.
fn ordered_properties<'v>(
    mut entries: Vec<(&'v str, &'v Value)>,
    required: &HashSet<&str>,
    keep: usize,
) -> Vec<(&'v str, &'v Value)> {
    let key = |(name, _): &(&'v str, &'v Value)| (!required.contains(name), *name);
    if keep > 0 && entries.len() > keep {
        entries.select_nth_unstable_by(keep - 1, |a, b| key(a).cmp(&key(b)));
        entries.truncate(keep);
    }
    entries.sort_by(|a, b| key(a).cmp(&key(b)));
    entries
}

/// `integer, >= 0, <= 100` from a number schema (draft 4 boolean and draft
/// 6+ numeric exclusive bounds), or None for a plain `number`.
fn numeric_constraints(integer: bool, map: &Map<String, Value>) -> Option<String> {
    let number = |key: &str| {
        map.get(key)
            .filter(|v| v.is_number())
            .map(Value::to_string)
            .filter(|t| t.len() <= MAX_BOUND_CHARS)
    };
    let flag = |key: &str| map.get(key) == Some(&Value::Bool(true));
    let lower = match number("exclusiveMinimum") {
        Some(n) => Some(format!("> {n}")),
        None => number("minimum").map(|n| {
            if flag("exclusiveMinimum") {
                format!("> {n}")
            } else {
                format!(">= {n}")
            }
        }),
    };
    let upper = match number("exclusiveMaximum") {
        Some(n) => Some(format!("< {n}")),
        None => number("maximum").map(|n| {
            if flag("exclusiveMaximum") {
                format!("< {n}")
            } else {
                format!("<= {n}")
            }
        }),
    };
    let parts: Vec<String> = integer
        .then(|| "integer".to_string())
        .into_iter()
        .chain(lower)
        .chain(upper)
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
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
/// or ends with a constraints comment (`number /* integer */`), so it must be
/// parenthesized before `[]` or `&`.
fn needs_parens(text: &str) -> bool {
    split_top_level(text, " | ").len() > 1
        || split_top_level(text, " & ").len() > 1
        || text.ends_with("*/")
}

/// Splits on `separator` only outside `{}`, `[]`, `()`, `<>`, string literals
/// and `/* */` comments (whose `>= 0` is no bracket).
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
        if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |end| i + 2 + end + 2);
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

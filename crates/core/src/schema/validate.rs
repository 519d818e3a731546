//! Argument validation with the `jsonschema` crate, turned into issues a small
//! model can act on (path, plain message, near-miss property suggestion).
//!
//! Decisions:
//! - Formats are not asserted (`format` is an annotation here): tool schemas
//!   use formats loosely and a false rejection blocks a valid call.
//! - No network, ever: the retriever is offline, so a remote `$ref`
//!   (`http://...`) fails compilation and the schema is INVALID_SCHEMA. Local
//!   `#/...` refs work; `{"$ref": "#"}` compiles and validates without hanging.
//! - The schema is bounds-checked (depth `MAX_JSON_DEPTH`, size
//!   `MAX_SCHEMA_BYTES`) before compiling, since compilation recurses.
//! - Lenient with schemas in the wild: a top-level `$schema` the validator
//!   does not know is ignored (default draft, 2020-12), and a schema that only
//!   compiles as draft 4 (`"exclusiveMinimum": true`) is compiled as draft 4.
//! - At most [`MAX_ISSUES`] issues are returned, in the validator's order.
//! - Validation work is bounded: a schema whose checks per value exceed
//!   `MAX_SCHEMA_CHECKS_PER_VALUE` (cost.rs) is INVALID_SCHEMA before it is
//!   compiled, and arguments with more values than the schema's share of
//!   `MAX_VALIDATION_CHECKS` are refused unvalidated. Valid arguments cost one
//!   yes / no pass; every issue is described only within
//!   `MAX_REPORTED_CHECKS`, beyond it the first one. Patterns run on
//!   fancy-regex (ECMA-style look-around and back-references are common in
//!   tool schemas), which hands plain patterns to the linear-time `regex`
//!   engine; a pattern that backtracks more than [`REGEX_BACKTRACK_LIMIT`]
//!   steps fails the value instead of running on.

use std::sync::Arc;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use jsonschema::{Draft, JsonType, PatternOptions, ValidationError, Validator};
use serde_json::Value;

use super::bounds::{check_bounds, measure};
use super::cost::{schema_cost, SchemaCost};
use super::hint::fragment_hint;
use super::quote::{clip, quote_str};
use super::suggest::closest_name;
use super::ArgumentIssue;
use crate::error::{Error, ErrorCode, Result};
use crate::limits::{MAX_JSON_DEPTH, MAX_REPORTED_CHECKS, MAX_SCHEMA_BYTES};

/// Issues returned per validation; the first ones are enough to fix a call.
pub const MAX_ISSUES: usize = 20;
/// Enum options listed in a message.
const MAX_LISTED_OPTIONS: usize = 8;
/// Longest rendering of the allowed forms of an `anyOf` / `oneOf`.
const MAX_FORMS_HINT_CHARS: usize = 160;
/// Longest message (chars); compiler errors and odd kinds are cut to this.
const MAX_MESSAGE_CHARS: usize = 300;
/// Backtracking steps one `pattern` match may take (fancy-regex's default is
/// a million, tens of milliseconds per string).
const REGEX_BACKTRACK_LIMIT: usize = 20_000;
/// Compiled size of one `pattern` (bytes), for the program and the lazy DFA
/// cache (the `regex` defaults are 10 MiB and 2 MiB; a 256 KiB schema can hold
/// thousands of patterns).
const REGEX_SIZE_LIMIT: usize = 2 << 20;
const REGEX_DFA_SIZE_LIMIT: usize = 1 << 20;

/// A schema compiled once and used for many validations (the catalog caches
/// one per tool). Cheap to share: `Send + Sync`, cloning is an `Arc` bump.
#[derive(Clone)]
pub struct CompiledSchema {
    validator: Arc<Validator>,
    /// Kept to look up the allowed property names for suggestions.
    schema: Arc<Value>,
    cost: SchemaCost,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema").finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Compiles `schema`, or fails with INVALID_SCHEMA (too deep / too big,
    /// too expensive to validate, not a schema, bad regex, remote or
    /// unresolvable `$ref`...).
    pub fn compile(schema: &Value) -> Result<Self> {
        let cost = check_schema(schema)?;
        let validator = build(schema, None).or_else(|first| compile_leniently(schema, first))?;
        Ok(CompiledSchema {
            validator: Arc::new(validator),
            schema: Arc::new(schema.clone()),
            cost,
        })
    }

    /// The schema this was compiled from.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Checks `args`; an empty list means valid. At most [`MAX_ISSUES`] issues.
    pub fn validate(&self, args: &Value) -> Vec<ArgumentIssue> {
        let values = match measure(args, MAX_JSON_DEPTH, usize::MAX) {
            Ok(size) => size.values,
            Err(why) => {
                return vec![ArgumentIssue {
                    path: String::new(),
                    message: why,
                    suggestion: None,
                }]
            }
        };
        let max_values = self.cost.max_argument_values();
        if values > max_values {
            let message = format!(
                "Arguments too large to validate against this schema: {values} JSON values \
                 (at most {max_values} for this tool); send fewer or smaller items."
            );
            return vec![ArgumentIssue {
                path: String::new(),
                message,
                suggestion: None,
            }];
        }
        // Yes / no first: it stops at the first failure and keeps no errors.
        if self.validator.is_valid(args) {
            return Vec::new();
        }
        // Every error is the expensive part (a failed `anyOf` keeps its
        // branches' errors, for every failing value): above the report
        // budget, only the first error is described.
        if values.saturating_mul(self.cost.checks_per_value) > MAX_REPORTED_CHECKS {
            let mut issues = match self.validator.validate(args) {
                Ok(()) => Vec::new(),
                Err(error) => self.describe(&error),
            };
            issues.truncate(MAX_ISSUES);
            return issues;
        }
        let mut issues: Vec<ArgumentIssue> = Vec::new();
        for error in self.validator.iter_errors(args) {
            for issue in self.describe(&error) {
                if !issues.contains(&issue) {
                    issues.push(issue);
                }
            }
            if issues.len() >= MAX_ISSUES {
                issues.truncate(MAX_ISSUES);
                break;
            }
        }
        issues
    }

    /// One validator error as zero or more issues (additionalProperties
    /// reports one issue per unexpected name).
    fn describe(&self, error: &ValidationError<'_>) -> Vec<ArgumentIssue> {
        let path = error.instance_path().as_str().to_string();
        let instance = error.instance();
        let subject = subject(error);
        let at = if path.is_empty() {
            String::new()
        } else {
            format!(" at {path}")
        };
        let single = |message: String| {
            vec![ArgumentIssue {
                path: path.clone(),
                message: cap_message(message),
                suggestion: None,
            }]
        };
        match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                // A misspelled key in the object is the usual cause.
                let present = instance.as_object();
                let allowed = self.allowed_names(error);
                let misspelt = present.and_then(|obj| {
                    let strays = obj.keys().filter(|k| !allowed.iter().any(|a| a == *k));
                    strays
                        .map(String::as_str)
                        .find(|stray| closest_name(stray, [name]).is_some())
                });
                let mut message = format!("Missing required property {}{at}.", quote_str(name));
                if let Some(stray) = misspelt {
                    message.push_str(&format!(
                        " Found {}; did you mean: {}?",
                        quote_str(stray),
                        clip(name)
                    ));
                }
                vec![ArgumentIssue {
                    path,
                    message: cap_message(message),
                    suggestion: misspelt.map(|_| name.to_string()),
                }]
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let allowed = self.allowed_names(error);
                let present: Vec<&str> = instance
                    .as_object()
                    .map(|obj| obj.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                // Suggest only names the caller has not already supplied.
                let free: Vec<&str> = allowed
                    .iter()
                    .map(String::as_str)
                    .filter(|a| !present.contains(a))
                    .collect();
                unexpected
                    .iter()
                    .take(MAX_ISSUES)
                    .map(|name| {
                        let suggestion = closest_name(name, free.iter().copied());
                        let mut message = format!("Unexpected property {}{at}.", quote_str(name));
                        match suggestion {
                            Some(s) => message.push_str(&format!(" Did you mean: {}?", clip(s))),
                            None if !allowed.is_empty() => {
                                message.push_str(&format!(" Allowed: {}.", list_names(&allowed)))
                            }
                            None => {}
                        }
                        ArgumentIssue {
                            path: path.clone(),
                            message: cap_message(message),
                            suggestion: suggestion.map(str::to_string),
                        }
                    })
                    .collect()
            }
            ValidationErrorKind::Type { kind } => single(format!(
                "{subject} must be {}, got {}.",
                expected_types(kind),
                type_with_article(instance)
            )),
            ValidationErrorKind::Enum { options } => single(format!(
                "{subject} must be one of: {}; got {}.",
                list_values(options),
                quote_value(instance)
            )),
            ValidationErrorKind::Constant { expected_value } => single(format!(
                "{subject} must be {}; got {}.",
                quote_value(expected_value),
                quote_value(instance)
            )),
            ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
                match self.owner_hint(error) {
                    Some(forms) => single(format!(
                        "{subject} must be {forms}; got {}.",
                        quote_value(instance)
                    )),
                    None => single(format!(
                        "{subject} does not match any of the allowed forms."
                    )),
                }
            }
            ValidationErrorKind::OneOfMultipleValid { .. } => single(format!(
                "{subject} matches more than one of the allowed forms."
            )),
            ValidationErrorKind::FalseSchema if path.is_empty() => {
                single("This tool accepts no arguments.".to_string())
            }
            ValidationErrorKind::FalseSchema => single(format!("{subject} is not allowed.")),
            ValidationErrorKind::MinLength { limit } => single(format!(
                "{subject} must be at least {limit} characters long."
            )),
            ValidationErrorKind::MaxLength { limit } => single(format!(
                "{subject} must be at most {limit} characters long."
            )),
            ValidationErrorKind::MinItems { limit } => {
                single(format!("{subject} must have at least {limit} items."))
            }
            ValidationErrorKind::MaxItems { limit } => {
                single(format!("{subject} must have at most {limit} items."))
            }
            ValidationErrorKind::Minimum { limit } => single(format!(
                "{subject} must be >= {limit}; got {}.",
                quote_value(instance)
            )),
            ValidationErrorKind::Maximum { limit } => single(format!(
                "{subject} must be <= {limit}; got {}.",
                quote_value(instance)
            )),
            ValidationErrorKind::ExclusiveMinimum { limit } => single(format!(
                "{subject} must be > {limit}; got {}.",
                quote_value(instance)
            )),
            ValidationErrorKind::ExclusiveMaximum { limit } => single(format!(
                "{subject} must be < {limit}; got {}.",
                quote_value(instance)
            )),
            ValidationErrorKind::Pattern { pattern } => single(format!(
                "{subject} must match the pattern {}; got {}.",
                quote_str(pattern),
                quote_value(instance)
            )),
            ValidationErrorKind::UniqueItems => single(format!("{subject} must not repeat items.")),
            _ => {
                // Rare kinds: the validator's own wording, without the
                // (possibly huge) instance it embeds, cut to size.
                single(format!(
                    "{subject} is invalid ({} constraint).",
                    error.kind().keyword()
                ))
            }
        }
    }

    /// TypeScript-style hint of the schema object whose keyword raised
    /// `error` (e.g. `string | null` for an `anyOf`), if it can be found.
    fn owner_hint(&self, error: &ValidationError<'_>) -> Option<String> {
        let keyword_path = error.schema_path().as_str();
        let parent = keyword_path
            .rsplit_once('/')
            .map_or("", |(parent, _)| parent);
        let owner = self.schema.pointer(parent)?;
        let hint = fragment_hint(&self.schema, owner, MAX_FORMS_HINT_CHARS);
        (hint != "unknown").then_some(hint)
    }

    /// Property names allowed by the schema object whose keyword raised
    /// `error` (its sibling `properties`), in schema order.
    fn allowed_names(&self, error: &ValidationError<'_>) -> Vec<String> {
        let keyword_path = error.schema_path().as_str();
        let parent = keyword_path
            .rsplit_once('/')
            .map_or("", |(parent, _)| parent);
        self.schema
            .pointer(parent)
            .and_then(|owner| owner.get("properties"))
            .and_then(Value::as_object)
            .map(|props| props.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// The checks every schema passes before it is compiled or cataloged: a
/// JSON object or boolean, within the depth and size limits, and cheap enough
/// to validate against. INVALID_SCHEMA otherwise.
pub fn check_schema(schema: &Value) -> Result<SchemaCost> {
    if !matches!(schema, Value::Object(_) | Value::Bool(_)) {
        return Err(invalid_schema(
            "the schema must be a JSON object or boolean.",
        ));
    }
    check_bounds(schema, MAX_JSON_DEPTH, MAX_SCHEMA_BYTES).map_err(|why| invalid_schema(&why))?;
    schema_cost(schema).map_err(|why| invalid_schema(why.reason()))
}

fn build(schema: &Value, draft: Option<Draft>) -> std::result::Result<Validator, String> {
    let patterns = PatternOptions::fancy_regex()
        .backtrack_limit(REGEX_BACKTRACK_LIMIT)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT);
    let mut options = jsonschema::options()
        .offline()
        .should_validate_formats(false)
        .with_pattern_options(patterns);
    if let Some(draft) = draft {
        options = options.with_draft(draft);
    }
    options.build(schema).map_err(|err| err.to_string())
}

/// Second chances for schemas in the wild, after `first` failed:
/// - an unknown `$schema` URI (custom dialect, typo) is dropped and the schema
///   compiled under the default draft (2020-12);
/// - draft-04 idioms without a `$schema` (`"exclusiveMinimum": true`, as
///   some generators emit) compile under draft 4.
///
/// If all fail, the error of the default-draft attempt names the problem.
fn compile_leniently(schema: &Value, first: String) -> Result<Validator> {
    let stripped = without_meta_schema(schema);
    let plain = stripped.as_ref().unwrap_or(schema);
    let mut error = first;
    if stripped.is_some() {
        match build(plain, None) {
            Ok(validator) => {
                tracing::debug!(%error, "schema compiled without its $schema");
                return Ok(validator);
            }
            Err(second) => error = second,
        }
    }
    match build(plain, Some(Draft::Draft4)) {
        Ok(validator) => {
            tracing::debug!(%error, "schema compiled as draft 4");
            Ok(validator)
        }
        Err(_) => Err(invalid_schema(&error)),
    }
}

/// The schema without its top-level `$schema`, if it had one.
fn without_meta_schema(schema: &Value) -> Option<Value> {
    let map = schema.as_object()?;
    map.contains_key("$schema").then(|| {
        let mut map = map.clone();
        map.remove("$schema");
        Value::Object(map)
    })
}

/// Compiles `schema` and validates `args` against it (use [`CompiledSchema`]
/// to validate many calls against one schema).
pub fn validate_args(schema: &Value, args: &Value) -> Result<Vec<ArgumentIssue>> {
    Ok(CompiledSchema::compile(schema)?.validate(args))
}

fn invalid_schema(why: &str) -> Error {
    Error::new(
        ErrorCode::InvalidSchema,
        cap_message(format!("Invalid input schema: {}", why.trim_end_matches('.')) + "."),
    )
}

/// How a message names the failing value: `Arguments` (root), `Property
/// "city"` (top-level property) or `Value at /address/city`.
fn subject(error: &ValidationError<'_>) -> String {
    let path = error.instance_path();
    let segments: Vec<LocationSegment<'_>> = path.iter().collect();
    match segments.as_slice() {
        [] => "Arguments".to_string(),
        [LocationSegment::Property(name)] => format!("Property {}", quote_str(name)),
        _ => format!("Value at {}", clip(path.as_str())),
    }
}

fn expected_types(kind: &TypeKind) -> String {
    let names: Vec<&'static str> = match kind {
        TypeKind::Single(t) => vec![article(*t)],
        // Null last reads better: "a string or null".
        TypeKind::Multiple(set) => {
            let mut names: Vec<&'static str> = set.iter().map(article).collect();
            names.sort_by_key(|name| *name == "null");
            names
        }
    };
    match names.as_slice() {
        [] => "of another type".to_string(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn article(t: JsonType) -> &'static str {
    match t {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

/// The JSON type of a value as written in messages: `got number`.
fn type_with_article(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A value as compact JSON, at most [`MAX_QUOTED_CHARS`](super::quote::MAX_QUOTED_CHARS) chars (`…` marks a cut).
fn quote_value(value: &Value) -> String {
    match value {
        // Containers can be huge: describe them instead of serializing.
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(map) => format!("an object with {} properties", map.len()),
        _ => clip(&serde_json::to_string(value).unwrap_or_default()),
    }
}

fn cap_message(message: String) -> String {
    if message.chars().count() <= MAX_MESSAGE_CHARS {
        message
    } else {
        tool_search_base::text::clip(&message, MAX_MESSAGE_CHARS)
    }
}

fn list_values(options: &Value) -> String {
    let Some(options) = options.as_array() else {
        return quote_value(options);
    };
    let mut listed: Vec<String> = options
        .iter()
        .take(MAX_LISTED_OPTIONS)
        .map(quote_value)
        .collect();
    if options.len() > MAX_LISTED_OPTIONS {
        listed.push(format!("... ({} more)", options.len() - MAX_LISTED_OPTIONS));
    }
    listed.join(", ")
}

fn list_names(names: &[String]) -> String {
    let mut listed: Vec<String> = names
        .iter()
        .take(MAX_LISTED_OPTIONS)
        .map(|n| clip(n))
        .collect();
    if names.len() > MAX_LISTED_OPTIONS {
        listed.push(format!("... ({} more)", names.len() - MAX_LISTED_OPTIONS));
    }
    listed.join(", ")
}

#[allow(dead_code)]
const fn assert_send_sync<T: Send + Sync>() {}
const _: () = assert_send_sync::<CompiledSchema>();

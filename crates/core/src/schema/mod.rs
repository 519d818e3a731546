//! Schemas: bounded TypeScript-style hints, argument validation and bounds
//! checks. (The search index reads parameter text itself: `search/params.rs`.)
//!
//! - [`input_hint`] (hint.rs): signature of an input schema,
//!   e.g. `{ id: string; mode?: "drip" | "flood" }` (caps in `limits`).
//! - [`output_hint`] (hint.rs): compact hint of a complete output schema, or None.
//! - [`CompiledSchema`] / [`validate_args`] (validate.rs): issues (path,
//!   message, suggestion), or INVALID_SCHEMA when the schema cannot be compiled.
//! - [`schema_cost`] (cost.rs): static bound on subschema checks per value;
//!   schemas whose validation would explode are rejected before compiling.
//! - [`check_bounds`] (bounds.rs): iterative depth / size guard for untrusted JSON.
//!
//! Everything here takes untrusted schemas and arguments: no panics, no
//! unbounded recursion, no network (remote `$ref`s are never fetched).

mod bounds;
mod cost;
mod hint;
mod quote;
mod refs;
mod suggest;
mod validate;

#[cfg(test)]
pub(crate) mod tests;

use serde::Serialize;

pub use bounds::{check_bounds, measure, too_deep, JsonSize};
pub use cost::{schema_cost, within_bound_as_a_tree, CostError, SchemaCost};
pub use hint::{input_hint, output_hint};
pub use validate::{check_schema, validate_args, CompiledSchema, MAX_ISSUES};

/// One problem with model-supplied arguments, phrased so a small model can fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgumentIssue {
    /// JSON pointer of the offending value, `""` for the root, e.g. `/address/city`.
    /// For a missing or unexpected property it is the object that holds it.
    pub path: String,
    pub message: String,
    /// The property name the caller most likely meant (for an unexpected or
    /// missing property); `Did you mean: x?` is already in `message`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

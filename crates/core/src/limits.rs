//! Bounds on untrusted input. Every size or depth the core accepts from a
//! client, an MCP server or a model is capped by one of these. Limits the
//! sandbox enforces too live in `tool_search_base::limits` and are
//! re-exported here, so each is written once.

pub use tool_search_base::limits::{MAX_JSON_DEPTH, MAX_JSON_VALUES, MAX_REASON_CHARS};

/// Longest tool name accepted in a catalog record.
pub const MAX_NAME_CHARS: usize = 256;
/// Longest owner (plugin id, MCP server name) accepted.
pub const MAX_OWNER_CHARS: usize = 256;
/// Descriptions longer than this are truncated (on a char boundary) when cataloged.
pub const MAX_DESCRIPTION_CHARS: usize = 8_192;
/// Label cap.
pub const MAX_LABEL_CHARS: usize = 512;
/// Largest serialized schema kept per tool (bytes); larger ones are rejected for that tool.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Parameter text indexed per tool (chars); the rest is ignored by search.
pub const MAX_PARAM_TEXT_CHARS: usize = 4_096;
/// Depth to which schema properties are walked for indexing.
pub const MAX_PARAM_INDEX_DEPTH: usize = 4;
/// Largest catalog accepted in one build.
pub const MAX_CATALOG_TOOLS: usize = 200_000;
/// Longest single search query, in JS string length (UTF-16 code units, as
/// the gateway counts a tool schema's `maxLength`); longer queries are an
/// INVALID_QUERY error. Long multi-task requests are real (the dev set has
/// some), so this is wider than a batch query; work stays bounded by the
/// engine's term caps, not by this length.
pub const MAX_QUERY_CHARS: usize = 4_096;
/// Batch search: longest query in a batch (contract §3).
pub const MAX_BATCH_QUERY_CHARS: usize = 512;
/// Batch search: queries per request.
pub const MAX_BATCH_QUERIES: usize = 16;
/// Batch search: serialized query list, UTF-8 bytes.
pub const MAX_BATCH_QUERY_BYTES: usize = 512;
/// Batch search: candidates across all groups.
pub const MAX_BATCH_CANDIDATES: usize = 50;
/// Batch search: serialized response budget (chars).
pub const BATCH_RESPONSE_BUDGET_CHARS: usize = 4_000;
/// Batch search: longest description of a hit (chars, after collapsing whitespace).
pub const BATCH_DESCRIPTION_MAX_CHARS: usize = 180;
/// Batch search: shortest a description is clipped to so that every group keeps a candidate.
pub const BATCH_DESCRIPTION_MIN_CHARS: usize = 40;
/// Batch search: labels longer than this are dropped from hits (the name remains).
pub const BATCH_LABEL_MAX_CHARS: usize = 64;
/// Longest description carried by a search hit (chars, `…` counted); describe
/// returns it whole.
pub const HIT_DESCRIPTION_MAX_CHARS: usize = 600;
/// Largest argument object accepted from a model (serialized, approximate bytes).
pub const MAX_ARGS_BYTES: usize = 1024 * 1024;
/// Longest `tool_search_code` body accepted (characters).
pub const MAX_CODE_CHARS: usize = 100_000;
/// Typed ids and names longer than this are not compared for suggestions.
pub const MAX_SELECTOR_CHARS: usize = 300;
/// `hydrate` never exposes more than this many schemas per turn (contract §4).
pub const MAX_HYDRATED_TOOLS: usize = 4;
/// Prompt bytes read; a longer prompt is read as its first quarter and last
/// three quarters of this (the request is at an end).
pub const MAX_PROMPT_BYTES: usize = 1 << 20;
/// Distinct tools tracked in `toolsCalled`; further tools are only counted.
pub const MAX_TRACKED_TOOLS: usize = 256;
/// Tool patterns one policy layer may expand to (groups included).
pub const MAX_PATTERNS: usize = 10_000;
/// Deepest nesting of groups within groups in a policy.
pub const MAX_GROUP_NESTING: usize = 8;
/// Input hint (TypeScript-style signature) caps.
pub const INPUT_HINT_MAX_CHARS: usize = 300;
pub const INPUT_HINT_MAX_DEPTH: usize = 4;
pub const INPUT_HINT_MAX_PROPERTIES: usize = 16;
pub const INPUT_HINT_MAX_ENUM: usize = 8;
pub const OUTPUT_HINT_MAX_CHARS: usize = 850;
/// Most subschema applications a schema may cause at one value of the
/// arguments (`schema::schema_cost`); above it the schema is INVALID_SCHEMA
/// (an `anyOf` of two refs to the next level doubles per level: depth 20 is
/// a million checks of one value).
pub const MAX_SCHEMA_CHECKS_PER_VALUE: u64 = 1_000;
/// Most subschema applications one validation may do (checks per value ×
/// values in the arguments); larger arguments are refused unvalidated.
pub const MAX_VALIDATION_CHECKS: u64 = 1_000_000;
/// Checks within which every issue of invalid arguments is described (a
/// described failure costs microseconds per check: each failed `anyOf` keeps
/// its branches' errors); beyond it only the first issue is.
pub const MAX_REPORTED_CHECKS: u64 = 20_000;

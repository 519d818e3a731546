//! The control tools. Their descriptions are the only documentation a model
//! gets, so each one states the exact argument shape, the result shape and
//! the next step, and asks for capability-style search queries.

use serde_json::{json, Value};

use super::format::ToolDefinition;
use crate::limits::{
    BATCH_RESPONSE_BUDGET_CHARS, MAX_BATCH_CANDIDATES, MAX_BATCH_QUERIES, MAX_BATCH_QUERY_CHARS,
};

pub use crate::entry::{
    CONTROL_TOOL_NAMES, TOOL_CALL, TOOL_DESCRIBE, TOOL_SEARCH, TOOL_SEARCH_CODE,
};

/// The resolved numbers the descriptions quote, so they never disagree with
/// what the session enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlSettings {
    pub search_default_limit: u32,
    pub max_search_limit: u32,
    pub code_timeout_ms: u64,
}

impl Default for ControlSettings {
    fn default() -> Self {
        ControlSettings {
            search_default_limit: 8,
            max_search_limit: 20,
            code_timeout_ms: 10_000,
        }
    }
}

/// Which control tools a mode exposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlSet {
    None,
    Code,
    Structured,
}

pub fn control_tools(set: ControlSet, settings: &ControlSettings) -> Vec<ToolDefinition> {
    match set {
        ControlSet::None => Vec::new(),
        ControlSet::Code => vec![tool_search_code(settings)],
        ControlSet::Structured => vec![tool_search(settings), tool_describe(), tool_call()],
    }
}

fn definition(name: &str, description: String, parameters: Value) -> ToolDefinition {
    ToolDefinition {
        name: name.to_string(),
        description,
        parameters,
        strict: None,
    }
}

// The structured tools are sent on every request of tools and directory
// modes: their texts say what a model needs to use them and nothing twice
// (the schema carries the limits, the description the shapes and next steps).

pub fn tool_search(s: &ControlSettings) -> ToolDefinition {
    let (default, max) = (s.search_default_limit, s.max_search_limit);
    let description = format!(
        "Search the tools that are not loaded up front. Query: the capability you need in a few plain words \
         (\"send a chat message\", \"create a github issue\"), not a guessed tool name or a sentence. \
         {{ query, limit? }} (default {default}, at most {max}) returns hits, best first: {{ id, source, sourceName, name, \
         label?, description, input, output?, weak?, neededBy? }}; `input` is a TypeScript-style signature of the arguments \
         (\"unknown\" for MCP and client tools: tool_describe them). Several searches: {{ queries: [{{ query, limit? }}] }} \
         (at most {MAX_BATCH_QUERIES}, limits totalling at most {MAX_BATCH_CANDIDATES}, no top-level limit) returns \
         {{ results: [{{ query, candidates, truncated? }}] }} within {BATCH_RESPONSE_BUDGET_CHARS} characters. `weak: true`: \
         only common words matched, rephrase. `neededBy`: the hit above needs an id this one finds. Then tool_call \
         {{ id, args }}, or tool_describe {{ id }} for the full schema."
    );
    // No maxLength on `query`: a longer one is searched on its first
    // MAX_QUERY_CHARS characters rather than refused (a refusal reads as
    // "search is broken").
    let limit = json!({ "type": "integer", "minimum": 1, "maximum": max });
    let parameters = json!({
        "type": "object",
        "properties": {
            "query": { "type": "string" },
            "limit": limit,
            "queries": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_BATCH_QUERIES,
                "items": {
                    "type": "object",
                    "properties": {
                        "query": { "type": "string", "maxLength": MAX_BATCH_QUERY_CHARS },
                        "limit": limit
                    },
                    "required": ["query"],
                    "additionalProperties": false
                }
            }
        },
        "additionalProperties": false
    });
    definition(TOOL_SEARCH, description, parameters)
}

pub fn tool_describe() -> ToolDefinition {
    let description = "The exact JSON Schema of one tool: { id } is an id from tool_search (or an exact unique tool \
        name). Returns the hit plus `parameters` (the schema of tool_call's `args`) and `outputSchema` when declared. \
        An unknown id returns up to three similar ids."
        .to_string();
    let parameters = json!({
        "type": "object",
        "properties": { "id": { "type": "string" } },
        "required": ["id"],
        "additionalProperties": false
    });
    definition(TOOL_DESCRIBE, description, parameters)
}

pub fn tool_call() -> ToolDefinition {
    let description = "Run a tool: { id, args }, `id` from tool_search (or an exact unique tool name), `args` shaped \
        as its `input` (never beside `id`; omit it for a tool without arguments). Arguments are checked first: an \
        error names what to fix and nothing runs. Returns { tool, result }. A call blocked by policy or approval says \
        so: do not reach the same action through another tool."
        .to_string();
    let parameters = json!({
        "type": "object",
        "properties": { "id": { "type": "string" }, "args": { "type": "object" } },
        "required": ["id"],
        "additionalProperties": false
    });
    definition(TOOL_CALL, description, parameters)
}

pub fn tool_search_code(s: &ControlSettings) -> ToolDefinition {
    let (default, max) = (s.search_default_limit, s.max_search_limit);
    let seconds = s.code_timeout_ms as f64 / 1000.0;
    let description = format!(
        "Find and run tools by executing a short JavaScript snippet in an isolated sandbox. The code is the body of an \
         async function: use `await`, and `return` a JSON-serializable value to get it back. It runs in a contained Node \
         process (its own `process` object exists but can reach nothing); besides JavaScript built-ins there is only \
         console.log/warn/error, and \
         `await openclaw.tools.search(query, {{ limit }}?)` -> array of hits, best first, each \
         {{ id, source, sourceName, name, label?, description, input, output?, weak?, neededBy? }} (`query` is the capability you need in a \
         few plain words, e.g. \"send a chat message\", not a guessed tool name; limit default {default}, at most {max}; \
         `input` is a TypeScript-style signature of the arguments, \"unknown\" for MCP and client tools; `weak: true` marks \
         a hit that shares only common words with the query: probably not what you need, search again in other words; \
         `neededBy` names the hit above that needs an id this tool looks up); \
         `await openclaw.tools.describe(id)` -> the hit plus `parameters` (the exact JSON Schema of the arguments) and \
         `outputSchema` when declared; \
         `await openclaw.tools.call(id, args?)` -> {{ tool, result }} where `result` is the tool's result (JSON values in \
         result.details). `id` is the exact id from search (or an exact unique tool name). Arguments are validated \
         before the tool runs; errors (unknown id, invalid arguments, a blocked or unavailable tool) are thrown as \
         Error with a message saying what to fix. No require, import, filesystem, network or child processes. Calls \
         started before the code returns are waited for; start none after it. The whole run, \
         including tool calls, must finish within {seconds} s. Returns {{ ok, value, logs }} (on failure ok is false \
         and `error` explains)."
    );
    let parameters = json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "JavaScript async function body, e.g. const [hit] = await openclaw.tools.search(\"send a chat message\"); return hit;"
            }
        },
        "required": ["code"],
        "additionalProperties": false
    });
    definition(TOOL_SEARCH_CODE, description, parameters)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_per_mode() {
        let s = ControlSettings::default();
        let names = |set| {
            control_tools(set, &s)
                .into_iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
        };
        assert!(names(ControlSet::None).is_empty());
        assert_eq!(names(ControlSet::Code), [TOOL_SEARCH_CODE]);
        assert_eq!(
            names(ControlSet::Structured),
            [TOOL_SEARCH, TOOL_DESCRIBE, TOOL_CALL]
        );
    }

    #[test]
    fn descriptions_quote_the_resolved_limits() {
        let s = ControlSettings {
            search_default_limit: 5,
            max_search_limit: 12,
            code_timeout_ms: 2500,
        };
        let search = tool_search(&s);
        assert!(search.description.contains("default 5, at most 12"));
        assert_eq!(search.parameters["properties"]["limit"]["maximum"], 12);
        assert!(search.description.contains("capability"));
        assert!(search.description.contains("limits totalling at most 50"));
        let code = tool_search_code(&s);
        assert!(code.description.contains("within 2.5 s"));
        assert!(code.description.contains("openclaw.tools.search(query"));
        assert!(code.description.contains("openclaw.tools.describe(id)"));
        assert!(code.description.contains("openclaw.tools.call(id, args?)"));
        assert!(code.description.contains("{ tool, result }"));
    }

    #[test]
    fn tool_search_declares_limits_as_integers_from_one_to_the_maximum() {
        let s = ControlSettings {
            search_default_limit: 5,
            max_search_limit: 12,
            code_timeout_ms: 2500,
        };
        let params = tool_search(&s).parameters;
        for limit in [
            &params["properties"]["limit"],
            &params["properties"]["queries"]["items"]["properties"]["limit"],
        ] {
            assert_eq!(limit["type"], "integer", "{limit}");
            assert_eq!(limit["minimum"], 1, "{limit}");
            assert_eq!(limit["maximum"], 12, "{limit}");
        }
        // A long query is answered on its prefix, so the schema does not refuse it.
        assert!(params["properties"]["query"].get("maxLength").is_none());
    }

    #[test]
    fn structured_schemas_are_closed_objects() {
        for d in control_tools(ControlSet::Structured, &ControlSettings::default()) {
            assert_eq!(d.parameters["type"], "object");
            assert_eq!(d.parameters["additionalProperties"], false);
        }
    }
}

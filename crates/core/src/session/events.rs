//! Structured session events: one per search, describe, call, code cell,
//! rendered surface and hydration, handed to the gateway's `onEvent` (for a
//! JSONL session log) and emitted as `tracing` events.

use std::sync::Arc;

use serde::Serialize;

use crate::catalog::Source;

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Ok,
    Error,
    Blocked,
    Unavailable,
    Cancelled,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Blocked => "blocked",
            Outcome::Unavailable => "unavailable",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// The tool an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolRef {
    pub id: String,
    pub name: String,
    pub source: Source,
    pub owner: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SessionEvent {
    #[serde(rename_all = "camelCase")]
    Search {
        /// The control tool that asked (`tool_search`, `tool_search_code`).
        via: String,
        queries: Vec<String>,
        /// Ids of the hits returned, best first (all groups, in order).
        hit_ids: Vec<String>,
        truncated: bool,
        duration_ms: f64,
        outcome: Outcome,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_code: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Describe {
        via: String,
        /// What the model asked for (clipped).
        requested: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool: Option<ToolRef>,
        duration_ms: f64,
        outcome: Outcome,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_code: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Call {
        /// `tool_call`, `tool_search_code`, or `direct` (exact tool name).
        via: String,
        tool_call_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
        requested: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool: Option<ToolRef>,
        /// Flattened or aliased arguments were repaired into `args`.
        repaired: bool,
        duration_ms: f64,
        outcome: Outcome,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_code: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Code {
        tool_call_id: String,
        duration_ms: f64,
        outcome: Outcome,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_code: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Surface {
        format: String,
        mode: String,
        /// Tool definitions sent (control, direct and catalog tools).
        tools: usize,
        /// Of those, catalog tools shown with their schema.
        catalog_schemas: usize,
        tool_bytes: usize,
        directory_prompt_bytes: usize,
    },
    #[serde(rename_all = "camelCase")]
    Hydrate { ids: Vec<String>, bytes: usize },
}

impl SessionEvent {
    pub fn kind(&self) -> &'static str {
        match self {
            SessionEvent::Search { .. } => "search",
            SessionEvent::Describe { .. } => "describe",
            SessionEvent::Call { .. } => "call",
            SessionEvent::Code { .. } => "code",
            SessionEvent::Surface { .. } => "surface",
            SessionEvent::Hydrate { .. } => "hydrate",
        }
    }

    /// Mirror the event into `tracing` (target `tool_search::session`).
    pub fn trace(&self) {
        match self {
            SessionEvent::Search {
                via,
                queries,
                hit_ids,
                duration_ms,
                outcome,
                ..
            } => tracing::info!(
                target: "tool_search::session", event = "search", via = via.as_str(), queries = queries.len(),
                hits = hit_ids.len(), duration_ms, outcome = outcome.as_str()
            ),
            SessionEvent::Describe {
                via,
                tool,
                duration_ms,
                outcome,
                ..
            } => tracing::info!(
                target: "tool_search::session", event = "describe", via = via.as_str(),
                id = tool.as_ref().map(|t| t.id.as_str()), duration_ms, outcome = outcome.as_str()
            ),
            SessionEvent::Call {
                via,
                tool,
                duration_ms,
                outcome,
                error_code,
                ..
            } => tracing::info!(
                target: "tool_search::session", event = "call", via = via.as_str(),
                id = tool.as_ref().map(|t| t.id.as_str()), source = tool.as_ref().map(|t| t.source.as_str()),
                owner = tool.as_ref().map(|t| t.owner.as_str()), duration_ms, outcome = outcome.as_str(),
                error_code = error_code.as_deref()
            ),
            SessionEvent::Code {
                duration_ms,
                outcome,
                ..
            } => tracing::info!(
                target: "tool_search::session", event = "code", duration_ms, outcome = outcome.as_str()
            ),
            SessionEvent::Surface {
                format,
                mode,
                tools,
                tool_bytes,
                directory_prompt_bytes,
                ..
            } => tracing::debug!(
                target: "tool_search::session", event = "surface", format = format.as_str(), mode = mode.as_str(),
                tools, tool_bytes, directory_prompt_bytes
            ),
            SessionEvent::Hydrate { ids, bytes } => tracing::debug!(
                target: "tool_search::session", event = "hydrate", tools = ids.len(), bytes
            ),
        }
    }
}

/// Receives every event. Must not block (the binding queues to JS).
pub type EventSink = Arc<dyn Fn(&SessionEvent) + Send + Sync>;

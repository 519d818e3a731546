//! Session telemetry (contract section 6 plus bytes): the catalog counters,
//! what the model saw up front, bytes per rendered surface, provider request
//! bytes reported by the gateway, and the tools finally called.

use serde::Serialize;

use super::events::Outcome;
use crate::catalog::Source;
use crate::config::Mode;
use crate::limits::MAX_TRACKED_TOOLS;
use crate::telemetry::CatalogTelemetry;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceRecord {
    pub format: String,
    pub tools: usize,
    pub catalog_schemas: usize,
    pub tool_bytes: usize,
    pub directory_prompt_bytes: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalledTool {
    pub id: String,
    pub name: String,
    pub source: Source,
    pub owner: String,
    pub calls: u64,
    pub ok: u64,
    pub failed: u64,
    pub blocked: u64,
    pub unavailable: u64,
    /// The `via` of the first call: `tool_call`, `tool_search_code` or `direct`.
    pub via: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ByteTotals {
    /// Sum over every rendered surface of its serialized tool definitions.
    pub tools: u64,
    /// Sum over every rendered surface of its directory prompt.
    pub directory_prompt: u64,
    /// Sum of the neutral-format bytes of schemas returned by `hydrate`.
    pub hydrated: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestBytes {
    pub total: u64,
    pub requests: u64,
    pub last: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTelemetry {
    #[serde(flatten)]
    pub catalog: CatalogTelemetry,
    pub mode: Mode,
    /// Tool definitions (with schemas) in the latest surface plus the schemas
    /// of the latest hydration: what the model saw up front.
    pub schemas_up_front: u64,
    /// Of those, catalog tools (direct mode: all; directory: client + hydrated).
    pub catalog_schemas_up_front: u64,
    pub surfaces_rendered: u64,
    pub last_surface: Option<SurfaceRecord>,
    pub surface_bytes: ByteTotals,
    pub request_bytes: RequestBytes,
    /// This session's own counts (the catalog counts above are running totals
    /// over the counter scope).
    pub searches: u64,
    pub describes: u64,
    pub calls: u64,
    pub code_runs: u64,
    pub hydrated: u64,
    pub tools_called: Vec<CalledTool>,
    /// Calls to tools beyond the `toolsCalled` cap.
    pub untracked_calls: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub surfaces_rendered: u64,
    pub last_surface: Option<SurfaceRecord>,
    pub bytes: ByteTotals,
    pub request_bytes: RequestBytes,
    pub searches: u64,
    pub describes: u64,
    pub calls: u64,
    pub code_runs: u64,
    pub last_hydrated: u64,
    pub hydrated_total: u64,
    pub tools_called: Vec<CalledTool>,
    pub untracked_calls: u64,
    /// The latest searches (query, ids shown), newest last, when the catalog learns.
    pub recent_searches: std::collections::VecDeque<(String, Vec<String>)>,
    /// Successful calls the catalog's learned ranking learned from.
    pub learned: u64,
}

/// Searches a session remembers for learning.
const REMEMBERED_SEARCHES: usize = 16;

impl Stats {
    pub fn remember_searches(&mut self, shown: Vec<(String, Vec<String>)>) {
        for search in shown {
            if self.recent_searches.len() == REMEMBERED_SEARCHES {
                self.recent_searches.pop_front();
            }
            self.recent_searches.push_back(search);
        }
    }

    /// The query of the latest remembered search that showed `id`.
    pub fn search_that_showed(&self, id: &str) -> Option<String> {
        self.recent_searches
            .iter()
            .rev()
            .find(|(_, ids)| ids.iter().any(|shown| shown == id))
            .map(|(query, _)| query.clone())
    }

    pub fn record_call(&mut self, tool: &super::events::ToolRef, via: &str, outcome: Outcome) {
        let position = self.tools_called.iter().position(|t| t.id == tool.id);
        let slot = match position {
            Some(i) => &mut self.tools_called[i],
            None if self.tools_called.len() < MAX_TRACKED_TOOLS => {
                self.tools_called.push(CalledTool {
                    id: tool.id.clone(),
                    name: tool.name.clone(),
                    source: tool.source,
                    owner: tool.owner.clone(),
                    calls: 0,
                    ok: 0,
                    failed: 0,
                    blocked: 0,
                    unavailable: 0,
                    via: via.to_string(),
                });
                let last = self.tools_called.len() - 1;
                &mut self.tools_called[last]
            }
            None => {
                self.untracked_calls += 1;
                return;
            }
        };
        slot.calls += 1;
        match outcome {
            Outcome::Ok => slot.ok += 1,
            Outcome::Blocked => slot.blocked += 1,
            Outcome::Unavailable => slot.unavailable += 1,
            Outcome::Error | Outcome::Cancelled => slot.failed += 1,
        }
    }
}

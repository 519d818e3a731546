//! Directory mode's per-turn hydrated schemas: the tools a user prompt
//! likely needs, sent with their schema for this turn.

use std::collections::BTreeSet;

use super::events::SessionEvent;
use super::surface::entry_definition;
use super::Session;
use crate::catalog::ToolEntry;
use crate::config::Mode;
use crate::limits::MAX_QUERY_CHARS;
use crate::surfaces::{serialized_len, ToolDefinition};

/// `hydrate` never exposes more than this many schemas per turn (contract §4).
pub const MAX_HYDRATED_TOOLS: usize = 4;

impl Session {
    /// Directory mode: at most `max_tools` (default and cap 4) schemas likely
    /// needed this turn, `required` ones first, the rest chosen by searching
    /// the catalog with the user's prompt. Only trusted (OpenClaw) tools that
    /// are not already visible; unknown or untrusted required names are
    /// skipped. Other modes: none (tools mode searches, direct mode already
    /// shows every schema).
    pub fn hydrate(&self, user_prompt: &str, max_tools: Option<usize>, required: &[String]) -> Vec<ToolDefinition> {
        if self.mode() != Mode::Directory {
            return Vec::new();
        }
        let max = max_tools.unwrap_or(MAX_HYDRATED_TOOLS).min(MAX_HYDRATED_TOOLS);
        let catalog = &self.inner.catalog;
        let eligible = |e: &ToolEntry| e.is_trusted() && !self.inner.direct_names.contains(&e.name);
        let mut chosen: Vec<usize> = Vec::new();
        let mut seen = BTreeSet::new();
        for wanted in required {
            if chosen.len() >= max {
                break;
            }
            match catalog.resolve_ordinal(wanted, crate::catalog::LookupStyle::Structured) {
                Ok(o) if catalog.entry(o).is_some_and(eligible) => {
                    if seen.insert(o) {
                        chosen.push(o);
                    }
                }
                _ => tracing::debug!(target: "tool_search::session", required = wanted.as_str(), "required tool not hydrated (unknown, untrusted or visible)"),
            }
        }
        if chosen.len() < max {
            let query: String = user_prompt.chars().take(MAX_QUERY_CHARS).collect();
            // Ask for extra hits: untrusted and visible ones are filtered out.
            match catalog.search_ordinals(&query, (max * 4).max(8)) {
                Ok(ordinals) => {
                    for o in ordinals {
                        if chosen.len() >= max {
                            break;
                        }
                        if catalog.entry(o).is_some_and(eligible) && seen.insert(o) {
                            chosen.push(o);
                        }
                    }
                }
                Err(e) => tracing::debug!(target: "tool_search::session", error = %e, "hydration search failed"),
            }
        }
        let defs: Vec<ToolDefinition> =
            chosen.iter().filter_map(|&o| catalog.entry(o)).map(|e| entry_definition(e, e.name.clone())).collect();
        let bytes = serialized_len(&defs);
        let ids: Vec<String> = chosen.iter().filter_map(|&o| catalog.entry(o)).map(|e| e.id.clone()).collect();
        self.with_stats(|s| {
            s.last_hydrated = defs.len() as u64;
            s.hydrated_total += defs.len() as u64;
            s.bytes.hydrated += bytes as u64;
        });
        self.emit(SessionEvent::Hydrate { ids, bytes });
        defs
    }
}

//! What search and describe return: compact hits and full descriptions.

use serde::Serialize;
use serde_json::Value;

use super::data::CatalogData;
use crate::entry::{McpInfo, Source};
use crate::search::ScoredHit;

use crate::limits::HIT_DESCRIPTION_MAX_CHARS;

/// A compact, ranked search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub id: String,
    pub source: Source,
    pub source_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpInfo>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub description: String,
    /// TypeScript-style input signature for trusted tools, `"unknown"` otherwise.
    pub input: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Search only: the hit matched only incidental common words of the query
    /// (`search::ScoredHit::weak`); serialized only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub weak: bool,
    /// Search only: the id of the hit above that requires an identifier this
    /// tool finds (search::prerequisites); serialized only when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needed_by: Option<String>,
}

/// A hit plus the exact schemas.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDescription {
    #[serde(flatten)]
    pub hit: SearchHit,
    /// The exact input schema (`{}` when the tool declared none).
    pub parameters: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl CatalogData {
    pub(crate) fn hit(&self, ordinal: usize) -> SearchHit {
        let e = &self.entries[ordinal];
        let mcp = e.mcp_info();
        SearchHit {
            id: e.id.clone(),
            source: e.source,
            source_name: e.owner.clone(),
            mcp,
            name: e.name.clone(),
            label: e.label.clone(),
            description: tool_search_base::text::clip(&e.description, HIT_DESCRIPTION_MAX_CHARS),
            input: self.input_hint(ordinal).to_string(),
            output: self.output_hint(ordinal).map(str::to_string),
            weak: false,
            needed_by: None,
        }
    }

    /// The compact hit of a search result, marked weak and needed-by as ranked.
    pub(crate) fn ranked_hit(&self, ranked: &ScoredHit) -> SearchHit {
        let needed_by = ranked
            .needed_by
            .map(|o| self.entries[o as usize].id.clone());
        SearchHit {
            weak: ranked.weak,
            needed_by,
            ..self.hit(ranked.ordinal)
        }
    }

    pub(crate) fn description(&self, ordinal: usize) -> ToolDescription {
        let e = &self.entries[ordinal];
        let mut hit = self.hit(ordinal);
        hit.description = e.description.clone();
        ToolDescription {
            hit,
            parameters: e
                .input_schema
                .as_deref()
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default())),
            output_schema: e
                .output_schema
                .as_deref()
                .filter(|_| e.is_trusted())
                .cloned(),
        }
    }
}

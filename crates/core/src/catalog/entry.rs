//! One cataloged tool and the record it is built from.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hits::McpInfo;

/// Where a tool comes from. Only `Openclaw` is trusted: MCP and client tool
/// text never enters a prompt, and their schemas are shown only via describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Openclaw,
    Mcp,
    Client,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Openclaw => "openclaw",
            Source::Mcp => "mcp",
            Source::Client => "client",
        }
    }
    pub fn parse(s: &str) -> Option<Source> {
        match s {
            "openclaw" => Some(Source::Openclaw),
            "mcp" => Some(Source::Mcp),
            "client" => Some(Source::Client),
            _ => None,
        }
    }
    pub fn is_trusted(self) -> bool {
        self == Source::Openclaw
    }
    pub fn default_owner(self) -> &'static str {
        match self {
            Source::Client => "client",
            _ => "core",
        }
    }
}

/// A tool record as a gateway (or the dev catalog file) supplies it, read by
/// `ToolRecord::deserialize_lenient`. `parameters` (OpenClaw tools) and
/// `input_schema` (Anthropic-style tools) are accepted as aliases of
/// `inputSchema`.
#[derive(Debug, Clone, Default)]
pub struct ToolRecord {
    pub id: Option<String>,
    pub source: Option<String>,
    pub owner: Option<String>,
    pub name: Option<String>,
    pub label: Option<String>,
    pub description: Option<String>,
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
    pub catalog_mode: Option<String>,
    /// The gateway's MCP routing metadata, derived fields filled in.
    pub mcp: Option<McpInfo>,
    /// Top-level fields outside [`super::records::KNOWN_FIELDS`] (at most a
    /// few names): ignored, except that `strict` builds reject them.
    pub unknown_fields: Vec<String>,
}

/// A validated, normalized catalog entry. Entries are immutable and shared.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// `<source>:<owner>:<name>`
    pub id: String,
    pub source: Source,
    pub owner: String,
    pub name: String,
    pub label: Option<String>,
    /// Whitespace-trimmed, bounded by `limits::MAX_DESCRIPTION_CHARS`.
    pub description: String,
    /// The exact input schema (`None` when the tool declared none). Bounded in
    /// size and depth at catalog time.
    pub input_schema: Option<Arc<Value>>,
    /// Output schema, kept for trusted tools only.
    pub output_schema: Option<Arc<Value>>,
    /// MCP metadata as the gateway supplied it (MCP tools only); `None`
    /// derives it from the owner and name.
    pub mcp: Option<McpInfo>,
}

impl ToolEntry {
    pub fn is_trusted(&self) -> bool {
        self.source.is_trusted()
    }
}

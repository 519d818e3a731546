//! MCP routing details of a tool: as the gateway supplied them, else derived
//! from the owner (server) and name.

use serde::Serialize;

use super::{Source, ToolEntry};

/// MCP routing details of an MCP tool's hit: as the gateway supplied them
/// (`mcp` in the record), else derived from the owner (server) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpInfo {
    pub server_name: String,
    /// The server name reduced to `[A-Za-z0-9_-]` (others become `_`).
    pub safe_server_name: String,
    pub tool_name: String,
    /// `<safeServerName>__<toolName>`: the name the tool has when an MCP
    /// server's tools are exposed directly.
    pub operation: String,
}

impl ToolEntry {
    /// The MCP routing details of an MCP tool (`None` for other sources).
    pub fn mcp_info(&self) -> Option<McpInfo> {
        if self.source != Source::Mcp {
            return None;
        }
        Some(self.mcp.clone().unwrap_or_else(|| {
            let safe = safe_server_name(&self.owner);
            McpInfo {
                server_name: self.owner.clone(),
                operation: format!("{safe}__{}", self.name),
                safe_server_name: safe,
                tool_name: self.name.clone(),
            }
        }))
    }
}

pub fn safe_server_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if safe.is_empty() {
        "_".into()
    } else {
        safe
    }
}

//! One cataloged tool and the record it is built from.

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
use crate::schema::CompiledSchema;

mod mcp;

pub use mcp::{safe_server_name, McpInfo};

/// The one marker for an entry ordinal with no entry in this version (its tool was
/// replaced or removed): the `ordinal_of_doc` of such a doc (skipped by
/// scoring and term statistics), and the new ordinal of such an old one in a
/// derived version's `new_of_old` map.
pub const GONE: u32 = u32::MAX;

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

    /// A tool's id: `<source>:<owner>:<name>` (the one place it is spelled).
    pub fn tool_id(self, owner: &str, name: &str) -> String {
        format!("{}:{owner}:{name}", self.as_str())
    }
}

/// The control tools' names: reserved by the gateway, never cataloged.
pub const TOOL_SEARCH_CODE: &str = "tool_search_code";
pub const TOOL_SEARCH: &str = "tool_search";
pub const TOOL_DESCRIBE: &str = "tool_describe";
pub const TOOL_CALL: &str = "tool_call";
pub const CONTROL_TOOL_NAMES: [&str; 4] = [TOOL_SEARCH_CODE, TOOL_SEARCH, TOOL_DESCRIBE, TOOL_CALL];

/// A tool record as a gateway (or the dev catalog file) supplies it, read by
/// the catalog's record reader (`catalog::records`). `parameters` (OpenClaw tools) and
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

impl ToolRecord {
    /// Named as a control tool: never cataloged, handed back as given.
    pub fn is_control(&self) -> bool {
        self.name
            .as_deref()
            .is_some_and(|name| CONTROL_TOOL_NAMES.contains(&name))
    }

    /// `catalogMode: "direct-only"`: not cataloged, handed back as given.
    pub fn is_direct_only(&self) -> bool {
        self.catalog_mode.as_deref() == Some(DIRECT_ONLY)
    }
}

/// The one `catalogMode` a record may name.
pub const DIRECT_ONLY: &str = "direct-only";

/// The content of a validated, normalized catalog entry.
#[derive(Debug, Clone)]
pub struct EntryFields {
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

/// 128 bits of BLAKE3 over one entry's content.
pub type EntryDigest = [u8; 16];

/// Per-tool artefacts computed on first use (hints, compiled validators).
/// They follow from the entry's content alone, so they live with it and
/// every catalog version that keeps the tool keeps them.
#[derive(Default)]
pub(crate) struct Lazy {
    pub input_hint: OnceLock<String>,
    pub output_hint: OnceLock<Option<String>>,
    pub validator: OnceLock<std::result::Result<Arc<CompiledSchema>, Error>>,
    pub output_validator: OnceLock<std::result::Result<Arc<CompiledSchema>, Error>>,
}

struct Shared {
    fields: EntryFields,
    digest: EntryDigest,
    lazy: Lazy,
}

/// Heap bytes of one entry's shared block (its strings aside).
pub(crate) const ENTRY_BLOCK_BYTES: usize =
    std::mem::size_of::<Shared>() + 2 * std::mem::size_of::<usize>();

/// A validated, normalized catalog entry: immutable, and shared by every
/// catalog version that keeps the tool (a live update copies a pointer, not
/// its strings), with its content digest and its lazily computed artefacts.
/// Reads its fields through `Deref`.
#[derive(Clone)]
pub struct ToolEntry(Arc<Shared>);

impl From<EntryFields> for ToolEntry {
    fn from(fields: EntryFields) -> ToolEntry {
        let digest = digest_of(&fields);
        ToolEntry(Arc::new(Shared {
            fields,
            digest,
            lazy: Lazy::default(),
        }))
    }
}

impl std::ops::Deref for ToolEntry {
    type Target = EntryFields;
    fn deref(&self) -> &EntryFields {
        &self.0.fields
    }
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fields.fmt(f)
    }
}

impl ToolEntry {
    pub fn is_trusted(&self) -> bool {
        self.source.is_trusted()
    }

    /// Digest of this entry's content, a part of the catalog fingerprint
    /// (kept per entry so a live catalog's fingerprint costs its changed tools only).
    pub fn digest(&self) -> EntryDigest {
        self.0.digest
    }

    pub(crate) fn lazy(&self) -> &Lazy {
        &self.0.lazy
    }

    /// Whether both are the same shared entry (not only equal content).
    pub fn same_entry(&self, other: &ToolEntry) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

fn digest_of(e: &EntryFields) -> EntryDigest {
    let mut hasher = blake3::Hasher::new();
    let mut write = |part: &[u8]| {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    };
    write(e.id.as_bytes());
    write(e.owner.as_bytes());
    write(e.name.as_bytes());
    write(if e.label.is_some() {
        b"label"
    } else {
        b"no label"
    });
    write(e.label.as_deref().unwrap_or_default().as_bytes());
    write(e.description.as_bytes());
    write(
        e.input_schema
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default()
            .as_bytes(),
    );
    write(
        e.output_schema
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default()
            .as_bytes(),
    );
    write(
        e.mcp
            .as_ref()
            .map(|m| format!("{m:?}"))
            .unwrap_or_default()
            .as_bytes(),
    );
    let mut out = [0u8; 16];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    out
}

/// The directory's row order: name, then owner (then id), byte-wise. The
/// catalog keeps its entries in this order, so it lives with the entry.
pub fn directory_order(a: &ToolEntry, b: &ToolEntry) -> std::cmp::Ordering {
    a.name
        .cmp(&b.name)
        .then_with(|| a.owner.cmp(&b.owner))
        .then_with(|| a.id.cmp(&b.id))
}

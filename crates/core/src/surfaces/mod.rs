//! Surfaces: what the model sees per mode, shaped for each provider API.
//!
//! - [`control`]: the control tools (`tool_search_code`, `tool_search`,
//!   `tool_describe`, `tool_call`) with descriptions precise enough to use
//!   without examples.
//! - [`directory`]: the bounded, cache-stable prompt directory of trusted
//!   deferred tools (directory mode).
//! - [`capabilities`]: the bounded owner-level capability directory (code
//!   and tools modes, when enabled).
//! - [`format`]: neutral tool definitions -> OpenAI Responses / OpenAI Chat
//!   Completions / Anthropic Messages tool objects, and their byte sizes.
//!
//! Which tools go into a surface (the mode logic) lives in the session; this
//! module only renders.

pub mod capabilities;
pub mod control;
pub mod directory;
pub mod format;

pub use capabilities::{capability_budget, render_capabilities, OwnerLine};
pub use control::{control_tools, ControlSet, ControlSettings, CONTROL_TOOL_NAMES};
pub use directory::{
    directory_budget, directory_order, directory_text, is_listable_identifier, render_directory,
    render_directory_sorted, DirectoryGuidance, DirectoryOptions,
};
pub use format::{entry_definition, render_tools, serialized_len, SurfaceFormat, ToolDefinition};

use serde::Serialize;
use serde_json::Value;

/// Serialized sizes of one rendered surface, in UTF-8 bytes: `tools` is the
/// compact JSON of the provider-shaped tool array (what goes into the request
/// body), `directory_prompt` the directory text (0 when the mode has none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceBytes {
    pub tools: usize,
    pub directory_prompt: usize,
}

/// The tools and prompt text to send for one turn, in one provider format.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSurface {
    pub format: SurfaceFormat,
    pub tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory_prompt: Option<std::sync::Arc<str>>,
    pub bytes: SurfaceBytes,
}

impl ModelSurface {
    pub fn new(
        format: SurfaceFormat,
        definitions: &[ToolDefinition],
        directory_prompt: Option<std::sync::Arc<str>>,
    ) -> Self {
        let tools = render_tools(format, definitions);
        let bytes = SurfaceBytes {
            tools: serialized_len(&tools),
            directory_prompt: directory_prompt.as_deref().map_or(0, str::len),
        };
        ModelSurface {
            format,
            tools,
            directory_prompt,
            bytes,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;

//! `contract()`: the rules the JS side reads instead of writing them again,
//! each from its one home in the crates.

use napi_derive::napi;
use tool_search_core::catalog::{CONTROL_TOOL_NAMES, KNOWN_FIELDS, UNREADABLE, UNREADABLE_FIELDS};
use tool_search_core::limits;
use tool_search_core::search::semantic::MODEL_FILES;

use super::errors::{guard, JsCode};

/// What the package's Rust side decides that its JS side needs to know.
#[napi(object)]
pub struct Contract {
    /// A tool record's known top-level fields (`KNOWN_FIELDS`): others are ignored, or
    /// refused by a strict build.
    pub record_fields: Vec<String>,
    /// Starts the JSON string standing for a tool `JSON.stringify` cannot write (the reason
    /// follows it), or is the key (the reason its value) of an object holding that tool's
    /// `unreadableFields` that could be written.
    pub unreadable_marker: String,
    /// The fields a tool `JSON.stringify` cannot write is indexed by with `repair: true`.
    pub unreadable_fields: Vec<String>,
    /// The record limits a catalog applies.
    pub limits: ContractLimits,
    /// The control tools' names: never cataloged (renamed with `repair: true`).
    pub control_tools: Vec<String>,
    /// The files a ranking model folder holds.
    pub model_files: Vec<String>,
}

/// Record limits (characters, except `maxSchemaBytes`).
#[napi(object)]
pub struct ContractLimits {
    pub max_name_chars: u32,
    pub max_owner_chars: u32,
    pub max_label_chars: u32,
    /// Longer descriptions are cut.
    pub max_description_chars: u32,
    /// A serialized input or output schema, bytes.
    pub max_schema_bytes: u32,
    /// Nesting of schemas and arguments.
    pub max_json_depth: u32,
    /// Tools in one catalog.
    pub max_catalog_tools: u32,
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The rules the JS side reads (record fields, the unreadable-record marker,
/// record limits, control tool names, model files): plain data, the same on
/// every call.
#[napi]
pub fn contract() -> napi::Result<Contract, JsCode> {
    guard(|| {
        Ok(Contract {
            record_fields: strings(KNOWN_FIELDS),
            unreadable_marker: UNREADABLE.to_string(),
            unreadable_fields: strings(&UNREADABLE_FIELDS),
            limits: ContractLimits {
                max_name_chars: limits::MAX_NAME_CHARS as u32,
                max_owner_chars: limits::MAX_OWNER_CHARS as u32,
                max_label_chars: limits::MAX_LABEL_CHARS as u32,
                max_description_chars: limits::MAX_DESCRIPTION_CHARS as u32,
                max_schema_bytes: limits::MAX_SCHEMA_BYTES as u32,
                max_json_depth: limits::MAX_JSON_DEPTH as u32,
                max_catalog_tools: limits::MAX_CATALOG_TOOLS as u32,
            },
            control_tools: strings(&CONTROL_TOOL_NAMES),
            model_files: strings(&MODEL_FILES),
        })
    })
}

/// `text` as a log line may carry it: control characters, line and paragraph
/// separators and characters that read invisibly written `\u{…}`.
#[napi]
pub fn printable(text: String) -> String {
    tool_search_core::catalog::printable(&text).into_owned()
}

//! A tool in full: its description, and arguments and results checked against its schemas.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::data::CatalogData;
use super::hits::ToolDescription;
use super::lookup::LookupStyle;
use super::Catalog;
use crate::error::{Error, ErrorCode, Result};
use crate::schema::ArgumentIssue;

/// Result of checking model-supplied arguments against a tool's schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgsValidation {
    pub ok: bool,
    pub errors: Vec<ArgumentIssue>,
}

impl Catalog {
    /// The hit plus exact schemas. Counts as one describe.
    pub fn describe(&self, id_or_name: &str, style: LookupStyle) -> Result<ToolDescription> {
        let ordinal = self.resolve_ordinal(id_or_name, style)?;
        self.counters.record_describe();
        Ok(self.data.description(ordinal))
    }

    /// Check arguments against the tool's input schema (trusted or not: the
    /// caller decides whether to enforce). An uncompilable schema is an
    /// INVALID_SCHEMA error.
    pub fn validate_args(&self, id_or_name: &str, args: &Value) -> Result<ArgsValidation> {
        let ordinal = self.resolve_ordinal(id_or_name, LookupStyle::Structured)?;
        self.validate_ordinal(ordinal, args)
    }

    pub fn validate_ordinal(&self, ordinal: usize, args: &Value) -> Result<ArgsValidation> {
        if !self.is_allowed(ordinal) {
            return Err(Error::new(
                ErrorCode::ToolNotFound,
                "tool is not in this catalog",
            ));
        }
        let validator = self.data.validator(ordinal)?;
        let errors = validator.validate(args);
        Ok(ArgsValidation {
            ok: errors.is_empty(),
            errors,
        })
    }

    /// Check what a trusted tool returned against its declared output schema.
    /// What is checked: the JSON value of the result, i.e. `details` when the
    /// result has OpenClaw's tool-result shape `{ content: [...], details }`
    /// (`content` is the text for the model), otherwise the whole result. Ok
    /// when the tool is untrusted or declares no output schema. Err says what
    /// does not match (a few issues, bounded); the call has then failed.
    pub fn check_output(&self, ordinal: usize, result: &Value) -> std::result::Result<(), String> {
        let Some(entry) = self.data.entries.get(ordinal) else {
            return Err("the tool is not in this catalog".into());
        };
        if !entry.is_trusted() || entry.output_schema.is_none() {
            return Ok(());
        }
        let value = match result {
            Value::Object(obj) if obj.get("content").is_some_and(Value::is_array) => match obj
                .get("details")
            {
                Some(details) => details,
                None => {
                    return Err(
                        "the result has no `details` to match its declared output schema".into(),
                    )
                }
            },
            other => other,
        };
        let validator = self
            .data
            .output_validator(ordinal)
            .map_err(|e| format!("its output schema is unusable: {}", e.message))?;
        let issues = validator.validate(value);
        if issues.is_empty() {
            return Ok(());
        }
        const SHOWN: usize = 3;
        let mut message = String::from("the result does not match its declared output schema:");
        for issue in issues.iter().take(SHOWN) {
            message.push(' ');
            message.push_str(&issue.message);
        }
        if issues.len() > SHOWN {
            message.push_str(&format!(" (+{} more)", issues.len() - SHOWN));
        }
        Err(message)
    }
}

impl CatalogData {
    /// The compiled output schema of a trusted tool, compiled on first use and
    /// cached like the input validator.
    pub(crate) fn output_validator(
        &self,
        ordinal: usize,
    ) -> std::result::Result<Arc<crate::schema::CompiledSchema>, Error> {
        let entry = &self.entries[ordinal];
        let schema = entry.output_schema.as_deref();
        entry
            .lazy()
            .output_validator
            .get_or_init(|| {
                crate::schema::CompiledSchema::compile(schema.unwrap_or(&Value::Bool(true)))
                    .map(Arc::new)
            })
            .clone()
    }
}

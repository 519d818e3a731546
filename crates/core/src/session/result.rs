//! What `handle` returns for one model tool call.

use serde::Serialize;
use serde_json::Value;

use super::events::Outcome;
use crate::error::{Error, ErrorCode};

/// Codes beyond [`ErrorCode`] that only tool results carry.
pub const TOOL_FAILED: &str = "TOOL_FAILED";
pub const CANCELLED: &str = "CANCELLED";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultStatus {
    Ok,
    Error,
    Blocked,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultError {
    pub code: String,
    pub message: String,
}

/// A failed operation: a stable code, a message written for the model, and
/// the outcome recorded in events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: String,
    pub message: String,
    pub outcome: Outcome,
}

impl Failure {
    pub fn new(code: impl Into<String>, message: impl Into<String>, outcome: Outcome) -> Self {
        Failure {
            code: code.into(),
            message: message.into(),
            outcome,
        }
    }
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Self {
        Failure::new(code.as_str(), message, Outcome::Error)
    }
    pub fn is_blocked(&self) -> bool {
        self.outcome == Outcome::Blocked
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let outcome = match e.code {
            ErrorCode::ToolBlocked => Outcome::Blocked,
            ErrorCode::ToolUnavailable => Outcome::Unavailable,
            _ => Outcome::Error,
        };
        Failure {
            code: e.code.as_str().to_string(),
            message: e.message,
            outcome,
        }
    }
}

/// The answer to one control-tool (or direct) call. `content` is the text to
/// put in the provider's tool-result message: the compact JSON of `value`, or
/// the error message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub ok: bool,
    pub status: ResultStatus,
    pub tool_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ResultError>,
    pub content: String,
}

impl ToolResult {
    pub fn from_outcome(tool_name: &str, outcome: Result<Value, Failure>) -> ToolResult {
        match outcome {
            Ok(value) => ToolResult {
                ok: true,
                status: ResultStatus::Ok,
                tool_name: tool_name.to_string(),
                content: serde_json::to_string(&value).unwrap_or_default(),
                value: Some(value),
                error: None,
            },
            Err(failure) => ToolResult {
                ok: false,
                status: if failure.is_blocked() {
                    ResultStatus::Blocked
                } else {
                    ResultStatus::Error
                },
                tool_name: tool_name.to_string(),
                value: None,
                content: failure.message.clone(),
                error: Some(ResultError {
                    code: failure.code,
                    message: failure.message,
                }),
            },
        }
    }
}

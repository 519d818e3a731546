//! One error type for the whole core. Every variant maps to a stable code
//! that the binding puts on the thrown JS error (`err.code`).

use std::fmt;

/// Stable, documented error codes. Never rename one: gateways match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    ToolNotFound,
    AmbiguousTool,
    InvalidLimit,
    InvalidQuery,
    InvalidCatalog,
    InvalidArgs,
    InvalidSchema,
    InvalidConfig,
    InvalidPolicy,
    InvalidRequest,
    ToolUnavailable,
    ToolBlocked,
    NameCollision,
    CodeModeUnavailable,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ToolNotFound => "TOOL_NOT_FOUND",
            ErrorCode::AmbiguousTool => "AMBIGUOUS_TOOL",
            ErrorCode::InvalidLimit => "INVALID_LIMIT",
            ErrorCode::InvalidQuery => "INVALID_QUERY",
            ErrorCode::InvalidCatalog => "INVALID_CATALOG",
            ErrorCode::InvalidArgs => "INVALID_ARGS",
            ErrorCode::InvalidSchema => "INVALID_SCHEMA",
            ErrorCode::InvalidConfig => "INVALID_CONFIG",
            ErrorCode::InvalidPolicy => "INVALID_POLICY",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::ToolUnavailable => "TOOL_UNAVAILABLE",
            ErrorCode::ToolBlocked => "TOOL_BLOCKED",
            ErrorCode::NameCollision => "NAME_COLLISION",
            ErrorCode::CodeModeUnavailable => "CODE_MODE_UNAVAILABLE",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A core error: a code plus a message written for the model or the operator
/// (the message is shown verbatim to models in tool results).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }
    pub fn invalid_catalog(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidCatalog, message)
    }
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidRequest, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Internal, message)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

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
    pub const ALL: [ErrorCode; 15] = [
        ErrorCode::ToolNotFound,
        ErrorCode::AmbiguousTool,
        ErrorCode::InvalidLimit,
        ErrorCode::InvalidQuery,
        ErrorCode::InvalidCatalog,
        ErrorCode::InvalidArgs,
        ErrorCode::InvalidSchema,
        ErrorCode::InvalidConfig,
        ErrorCode::InvalidPolicy,
        ErrorCode::InvalidRequest,
        ErrorCode::ToolUnavailable,
        ErrorCode::ToolBlocked,
        ErrorCode::NameCollision,
        ErrorCode::CodeModeUnavailable,
        ErrorCode::Internal,
    ];

    /// The code named by its `code` string ([`Self::as_str`]).
    pub fn parse(code: &str) -> Option<ErrorCode> {
        Self::ALL.into_iter().find(|c| c.as_str() == code)
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    /// `ALL` lists every code once: the match below stops compiling when a
    /// code is added, and its position must be the code's place in `ALL`.
    #[test]
    fn every_code_is_listed_once_and_parses_back() {
        for (at, code) in ErrorCode::ALL.into_iter().enumerate() {
            let place = match code {
                ErrorCode::ToolNotFound => 0,
                ErrorCode::AmbiguousTool => 1,
                ErrorCode::InvalidLimit => 2,
                ErrorCode::InvalidQuery => 3,
                ErrorCode::InvalidCatalog => 4,
                ErrorCode::InvalidArgs => 5,
                ErrorCode::InvalidSchema => 6,
                ErrorCode::InvalidConfig => 7,
                ErrorCode::InvalidPolicy => 8,
                ErrorCode::InvalidRequest => 9,
                ErrorCode::ToolUnavailable => 10,
                ErrorCode::ToolBlocked => 11,
                ErrorCode::NameCollision => 12,
                ErrorCode::CodeModeUnavailable => 13,
                ErrorCode::Internal => 14,
            };
            assert_eq!(at, place, "{code}");
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::parse("NOPE"), None);
    }
}

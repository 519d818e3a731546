//! Core errors → JS errors with a stable `code`, and the panic guard every
//! entry point goes through (a panic must never cross into the gateway; a
//! promise's future is guarded by `tool_search_gateway::runtime::guard_future`).

use tool_search_core::{Error as CoreError, ErrorCode};
pub use tool_search_gateway::runtime::guard_future;

/// The `code` property of a thrown JS error.
#[derive(Debug, Clone, Copy)]
pub struct JsCode(pub &'static str);

impl AsRef<str> for JsCode {
    fn as_ref(&self) -> &str {
        self.0
    }
}

pub type JsError = napi::Error<JsCode>;
pub type JsResult<T> = std::result::Result<T, JsError>;

pub fn to_js(e: CoreError) -> JsError {
    napi::Error::new(JsCode(e.code.as_str()), e.message)
}

pub fn js_error(code: ErrorCode, message: impl Into<String>) -> JsError {
    napi::Error::new(JsCode(code.as_str()), message.into())
}

/// An INVALID_REQUEST error: the most common refusal of an argument.
pub fn invalid(message: impl Into<String>) -> JsError {
    js_error(ErrorCode::InvalidRequest, message)
}

/// A napi failure (e.g. a value of the wrong type) as an INVALID_REQUEST error.
pub fn from_napi(e: napi::Error) -> JsError {
    napi::Error::new(JsCode(ErrorCode::InvalidRequest.as_str()), e.reason.clone())
}

/// Run `f`, turning a panic into an INTERNAL error (`tool_search_gateway::runtime::guard_call`).
pub fn guard<T>(f: impl FnOnce() -> JsResult<T>) -> JsResult<T> {
    tool_search_gateway::runtime::guard_call(f).unwrap_or_else(|panic| Err(to_js(panic)))
}

/// A coded JS error back as the core error it stands for (a session call's failed argument
/// is a failed result, not a rejection).
pub fn to_core(e: JsError) -> CoreError {
    let code = ErrorCode::parse(e.status.0).unwrap_or(ErrorCode::Internal);
    CoreError::new(code, e.reason.clone())
}

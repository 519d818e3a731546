//! A gateway's per-session and per-call options as JSON carries them (the
//! binding reads them through serde; what JSON cannot carry, the executor,
//! `onEvent` and an `AbortSignal`, it reads from the JS object itself).

use serde::Deserialize;
use serde_json::Value;

use super::direct::definition_from_value;
use super::{HandleOptions, OffloadHandle, SessionOptions};
use crate::error::{Error, ErrorCode, Result};

/// `ToolSearchSessionOptions` without its functions.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionArgs {
    /// Tool definitions ([`definition_from_value`] reads each).
    #[serde(default)]
    pub direct_tools: Option<Vec<Value>>,
    #[serde(default)]
    pub context_tokens: Option<f64>,
    #[serde(default)]
    pub capability_directory: Option<bool>,
}

impl SessionArgs {
    /// The session options these give (the caller adds the event sink and
    /// code runner); INVALID_REQUEST names the field that is wrong.
    pub fn into_options(self) -> Result<SessionOptions> {
        let context_tokens = match self.context_tokens {
            Some(n) if !(n.is_finite() && n >= 0.0) => {
                return Err(Error::new(
                    ErrorCode::InvalidRequest,
                    "options.contextTokens must be a non-negative number",
                ))
            }
            n => n.map(|n| n.floor() as u64),
        };
        let direct_tools = self.direct_tools.unwrap_or_default();
        let direct_tools = direct_tools.iter().map(definition_from_value);
        let direct_tools = direct_tools.collect::<Result<_>>()?;
        Ok(SessionOptions {
            direct_tools,
            context_tokens,
            capability_directory: self.capability_directory,
            ..SessionOptions::default()
        })
    }
}

/// `handle`'s options besides the `signal`: `{ toolCallId? }`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandleArgs {
    #[serde(default)]
    pub tool_call_id: Option<String>,
}

impl HandleArgs {
    /// The call's options these give (`None`: the defaults) with validation on `offload`; the
    /// caller adds the cancel signal.
    pub fn options(args: Option<HandleArgs>, offload: OffloadHandle) -> HandleOptions {
        HandleOptions {
            tool_call_id: args.and_then(|a| a.tool_call_id),
            offload: Some(offload),
            ..HandleOptions::default()
        }
    }
}

/// `surface`'s options: `{ prompt? }`, the turn's user prompt.
#[derive(Debug, Default, Deserialize)]
pub struct SurfaceArgs {
    #[serde(default)]
    pub prompt: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_args_read_and_check_their_fields() {
        let args: SessionArgs = serde_json::from_value(serde_json::json!({
            "contextTokens": 7680.9, "capabilityDirectory": true,
            "directTools": [{ "name": "exec" }], "executor": null
        }))
        .unwrap();
        let options = args.into_options().unwrap();
        assert_eq!(options.context_tokens, Some(7680));
        assert_eq!(options.capability_directory, Some(true));
        assert_eq!(options.direct_tools.len(), 1);
        let negative = SessionArgs {
            context_tokens: Some(-1.0),
            ..SessionArgs::default()
        };
        let err = negative.into_options().err().unwrap();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        assert!(serde_json::from_value::<SessionArgs>(
            serde_json::json!({ "capabilityDirectory": "yes" })
        )
        .is_err());
    }
}

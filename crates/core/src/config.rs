//! `tools.toolSearch` configuration, resolved once per run (contract §4).

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Tool Search disabled: every schema is sent directly.
    Direct,
    Code,
    Tools,
    Directory,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Code => "code",
            Mode::Tools => "tools",
            Mode::Directory => "directory",
        }
    }
}

pub const CODE_TIMEOUT_MS_DEFAULT: u64 = 10_000;
pub const CODE_TIMEOUT_MS_MIN: u64 = 1_000;
pub const CODE_TIMEOUT_MS_MAX: u64 = 60_000;
pub const MAX_SEARCH_LIMIT_DEFAULT: u32 = 20;
pub const MAX_SEARCH_LIMIT_CAP: u32 = 50;
pub const SEARCH_DEFAULT_LIMIT_DEFAULT: u32 = 8;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedConfig {
    pub enabled: bool,
    pub mode: Mode,
    /// The mode the configuration asked for, before any fallback.
    pub requested_mode: Mode,
    pub code_timeout_ms: u64,
    pub max_search_limit: u32,
    pub search_default_limit: u32,
    pub code_mode_supported: bool,
    /// Why the effective mode differs from the requested one, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
}

impl Default for ResolvedConfig {
    fn default() -> Self {
        resolve(&Value::Null, true)
    }
}

/// Resolve a raw `tools.toolSearch` value. `false` → direct; `true` → code; an
/// object → its `mode` (missing or invalid → code); unset → tools. Numbers that
/// are non-positive or non-integer fall back to defaults; others are clamped.
/// `code` becomes `tools` when code mode is unsupported on this host.
pub fn resolve(raw: &Value, code_mode_supported: bool) -> ResolvedConfig {
    let (enabled, requested_mode, obj) = match raw {
        Value::Bool(false) => (false, Mode::Direct, None),
        Value::Bool(true) => (true, Mode::Code, None),
        Value::Object(obj) => {
            let mode = match obj.get("mode").and_then(Value::as_str) {
                Some("tools") => Mode::Tools,
                Some("directory") => Mode::Directory,
                _ => Mode::Code,
            };
            (true, mode, Some(obj))
        }
        // Unset (null/undefined) and anything unrecognised: the default.
        _ => (true, Mode::Tools, None),
    };
    let int = |key: &str| obj.and_then(|o| o.get(key)).and_then(positive_integer);
    let code_timeout_ms =
        int("codeTimeoutMs").map_or(CODE_TIMEOUT_MS_DEFAULT, |v| v.clamp(CODE_TIMEOUT_MS_MIN, CODE_TIMEOUT_MS_MAX));
    let max_search_limit = int("maxSearchLimit")
        .map_or(MAX_SEARCH_LIMIT_DEFAULT, |v| v.clamp(1, u64::from(MAX_SEARCH_LIMIT_CAP)) as u32);
    let search_default_limit = int("searchDefaultLimit")
        .map_or(SEARCH_DEFAULT_LIMIT_DEFAULT, |v| v.min(u64::from(u32::MAX)) as u32)
        .clamp(1, max_search_limit);
    let (mode, fallback_reason) = if requested_mode == Mode::Code && !code_mode_supported {
        (Mode::Tools, Some("code mode is unavailable on this host (no Node with a sound permission model); using tools mode".to_string()))
    } else {
        (requested_mode, None)
    };
    ResolvedConfig {
        enabled,
        mode,
        requested_mode,
        code_timeout_ms,
        max_search_limit,
        search_default_limit,
        code_mode_supported,
        fallback_reason,
    }
}

fn positive_integer(v: &Value) -> Option<u64> {
    let f = v.as_f64()?;
    (f.is_finite() && f >= 1.0 && f.fract() == 0.0).then(|| if f > u64::MAX as f64 { u64::MAX } else { f as u64 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        assert_eq!(resolve(&json!(false), true).mode, Mode::Direct);
        assert!(!resolve(&json!(false), true).enabled);
        assert_eq!(resolve(&json!(true), true).mode, Mode::Code);
        assert_eq!(resolve(&Value::Null, true).mode, Mode::Tools);
        assert_eq!(resolve(&json!({}), true).mode, Mode::Code);
        assert_eq!(resolve(&json!({"mode": "bogus"}), true).mode, Mode::Code);
        assert_eq!(resolve(&json!({"mode": "directory"}), true).mode, Mode::Directory);
        assert_eq!(resolve(&json!({"mode": "tools"}), true).mode, Mode::Tools);
    }

    #[test]
    fn code_falls_back_to_tools() {
        let c = resolve(&json!(true), false);
        assert_eq!((c.mode, c.requested_mode), (Mode::Tools, Mode::Code));
        assert!(c.fallback_reason.is_some());
        assert_eq!(resolve(&json!({"mode": "directory"}), false).mode, Mode::Directory);
    }

    #[test]
    fn clamps_and_defaults() {
        let c = resolve(&json!({"codeTimeoutMs": 5, "maxSearchLimit": 500, "searchDefaultLimit": 100}), true);
        assert_eq!((c.code_timeout_ms, c.max_search_limit, c.search_default_limit), (1000, 50, 50));
        let c = resolve(&json!({"codeTimeoutMs": 999999, "maxSearchLimit": 3, "searchDefaultLimit": 8}), true);
        assert_eq!((c.code_timeout_ms, c.max_search_limit, c.search_default_limit), (60000, 3, 3));
        let c = resolve(&json!({"codeTimeoutMs": -1, "maxSearchLimit": 2.5, "searchDefaultLimit": "4"}), true);
        assert_eq!((c.code_timeout_ms, c.max_search_limit, c.search_default_limit), (10000, 20, 8));
        let c = resolve(&json!({"codeTimeoutMs": 0, "maxSearchLimit": 0, "searchDefaultLimit": 0}), true);
        assert_eq!((c.code_timeout_ms, c.max_search_limit, c.search_default_limit), (10000, 20, 8));
    }
}

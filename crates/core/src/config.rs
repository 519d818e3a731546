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

/// The contract's numbers, for JS to read instead of restating them (`toolSearchLimits()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContractLimits {
    pub code_timeout_ms_default: u64,
    pub code_timeout_ms_min: u64,
    pub code_timeout_ms_max: u64,
    pub max_search_limit_default: u32,
    /// The most `maxSearchLimit` may be, and so the most one search returns.
    pub max_search_limit_cap: u32,
    pub search_default_limit_default: u32,
}

pub const CONTRACT_LIMITS: ContractLimits = ContractLimits {
    code_timeout_ms_default: CODE_TIMEOUT_MS_DEFAULT,
    code_timeout_ms_min: CODE_TIMEOUT_MS_MIN,
    code_timeout_ms_max: CODE_TIMEOUT_MS_MAX,
    max_search_limit_default: MAX_SEARCH_LIMIT_DEFAULT,
    max_search_limit_cap: MAX_SEARCH_LIMIT_CAP,
    search_default_limit_default: SEARCH_DEFAULT_LIMIT_DEFAULT,
};

/// A code cell's deadline in ms from a caller's `timeoutMs` (`runCodeCell`): the default when
/// absent, else the contract's clamp of `codeTimeoutMs`. `Err` when it is not a positive number.
pub fn cell_timeout_ms(requested: Option<f64>) -> Result<u64, &'static str> {
    match requested {
        None => Ok(CODE_TIMEOUT_MS_DEFAULT),
        Some(ms) if ms.is_finite() && ms > 0.0 => {
            Ok(ms.clamp(CODE_TIMEOUT_MS_MIN as f64, CODE_TIMEOUT_MS_MAX as f64) as u64)
        }
        Some(_) => Err("options.timeoutMs must be a positive number"),
    }
}

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
    /// Values that were not used as given (an unknown mode, a number that fell
    /// back to its default or was clamped), one sentence each. Also logged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Default for ResolvedConfig {
    fn default() -> Self {
        resolve(&Value::Null, true)
    }
}

/// The keys of a raw `tools.toolSearch` object.
const NUMBER_KEYS: [&str; 3] = ["codeTimeoutMs", "maxSearchLimit", "searchDefaultLimit"];
/// Keys only a resolved config has: such a value is read back as resolved.
const RESOLVED_ONLY_KEYS: [&str; 4] = [
    "requestedMode",
    "codeModeSupported",
    "fallbackReason",
    "warnings",
];

/// Resolve a raw `tools.toolSearch` value. `false`, or an object with
/// `enabled: false` → direct (whatever its `mode`); `true` → code; an object →
/// its `mode` (missing → code; unknown → code with a warning); unset → tools.
/// Numbers that are not positive integers fall back to defaults, others are
/// clamped; both with a warning. `code` becomes `tools` when code mode is
/// unsupported on this host.
pub fn resolve(raw: &Value, code_mode_supported: bool) -> ResolvedConfig {
    resolve_labeled(raw, code_mode_supported, "tools.toolSearch")
}

/// [`resolve`], with `label` naming the value in warnings (the catalog's
/// search limits are resolved the same way).
pub(crate) fn resolve_labeled(
    raw: &Value,
    code_mode_supported: bool,
    label: &str,
) -> ResolvedConfig {
    let mut warnings = Vec::new();
    let (enabled, requested_mode, obj) = match raw {
        Value::Bool(false) => (false, Mode::Direct, None),
        Value::Bool(true) => (true, Mode::Code, None),
        Value::Null => (true, Mode::Tools, None),
        Value::Object(obj) => {
            let enabled = match obj.get("enabled") {
                None | Some(Value::Null) | Some(Value::Bool(true)) => true,
                Some(Value::Bool(false)) => false,
                Some(other) => {
                    warnings.push(format!(
                        "{label}.enabled must be true or false, not {}; Tool Search stays enabled",
                        shown(other)
                    ));
                    true
                }
            };
            // A disabled config ignores its mode (nothing to warn about: it has no effect).
            let mode = if !enabled {
                Mode::Direct
            } else {
                match obj.get("mode") {
                    None | Some(Value::Null) => Mode::Code,
                    Some(Value::String(m)) if m == "code" => Mode::Code,
                    Some(Value::String(m)) if m == "tools" => Mode::Tools,
                    Some(Value::String(m)) if m == "directory" => Mode::Directory,
                    Some(other) => {
                        warnings.push(format!(
                            "{label}.mode {} is not one of \"code\", \"tools\", \"directory\"; using \"code\"",
                            shown(other)
                        ));
                        Mode::Code
                    }
                }
            };
            (enabled, mode, Some(obj))
        }
        other => {
            warnings.push(format!(
                "{label} must be true, false or an object, not {}; using the defaults (tools mode)",
                shown(other)
            ));
            (true, Mode::Tools, None)
        }
    };
    let mut number = |key: &str, default: u64, min: u64, max: u64| -> u64 {
        let Some(v) = obj.and_then(|o| o.get(key)).filter(|v| !v.is_null()) else {
            return default;
        };
        match positive_integer(v) {
            None => {
                warnings.push(format!(
                    "{label}.{key} {} is not a positive integer; using the default {default}",
                    shown(v)
                ));
                default
            }
            Some(n) if n < min || n > max => {
                let clamped = n.clamp(min, max);
                warnings.push(format!(
                    "{label}.{key} {} is outside {min}..{max}; using {clamped}",
                    shown(v)
                ));
                clamped
            }
            Some(n) => n,
        }
    };
    let code_timeout_ms = number(
        NUMBER_KEYS[0],
        CODE_TIMEOUT_MS_DEFAULT,
        CODE_TIMEOUT_MS_MIN,
        CODE_TIMEOUT_MS_MAX,
    );
    let max_search_limit = number(
        NUMBER_KEYS[1],
        u64::from(MAX_SEARCH_LIMIT_DEFAULT),
        1,
        u64::from(MAX_SEARCH_LIMIT_CAP),
    ) as u32;
    // The default (8) quietly follows a smaller maxSearchLimit; a given value is warned about.
    let search_default_limit = number(
        NUMBER_KEYS[2],
        u64::from(SEARCH_DEFAULT_LIMIT_DEFAULT.min(max_search_limit)),
        1,
        u64::from(max_search_limit),
    ) as u32;
    let (mode, fallback_reason) = if requested_mode == Mode::Code && !code_mode_supported {
        (Mode::Tools, Some("code mode is unavailable on this host (no Node with a sound permission model); using tools mode".to_string()))
    } else {
        (requested_mode, None)
    };
    for warning in &warnings {
        tracing::warn!(target: "tool_search::config", "{warning}");
    }
    ResolvedConfig {
        enabled,
        mode,
        requested_mode,
        code_timeout_ms,
        max_search_limit,
        search_default_limit,
        code_mode_supported,
        fallback_reason,
        warnings,
    }
}

/// Resolve what a session is given: a raw `tools.toolSearch` value (resolved
/// exactly as [`resolve`] with this host's support), or a config that
/// [`resolve`] already produced (recognised by its resolved-only keys), read
/// back as it was resolved: its effective `mode` and its `codeModeSupported`.
pub fn resolve_for_session(raw: &Value, host_supports_code_mode: bool) -> ResolvedConfig {
    let Value::Object(obj) = raw else {
        return resolve(raw, host_supports_code_mode);
    };
    if !RESOLVED_ONLY_KEYS.iter().any(|k| obj.contains_key(*k)) {
        return resolve(raw, host_supports_code_mode);
    }
    if obj.get("enabled") == Some(&Value::Bool(false))
        || obj.get("mode") == Some(&Value::from("direct"))
    {
        return resolve(&Value::Bool(false), host_supports_code_mode);
    }
    let supported = obj
        .get("codeModeSupported")
        .and_then(Value::as_bool)
        .unwrap_or(host_supports_code_mode);
    let again: serde_json::Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| k.as_str() == "mode" || NUMBER_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    resolve(&Value::Object(again), supported)
}

/// A value as quoted in a warning, cut short.
fn shown(v: &Value) -> String {
    tool_search_base::text::clip(&v.to_string(), 40)
}

fn positive_integer(v: &Value) -> Option<u64> {
    let f = v.as_f64()?;
    // `as` saturates at u64::MAX.
    (f.is_finite() && f >= 1.0 && f.fract() == 0.0).then_some(f as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cells_timeout_follows_the_code_timeout_clamp() {
        assert_eq!(cell_timeout_ms(None), Ok(CODE_TIMEOUT_MS_DEFAULT));
        assert_eq!(cell_timeout_ms(Some(1.0)), Ok(CODE_TIMEOUT_MS_MIN));
        assert_eq!(cell_timeout_ms(Some(2_500.7)), Ok(2_500));
        assert_eq!(cell_timeout_ms(Some(1e9)), Ok(CODE_TIMEOUT_MS_MAX));
        for bad in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            assert!(cell_timeout_ms(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn shapes() {
        assert_eq!(resolve(&json!(false), true).mode, Mode::Direct);
        assert!(!resolve(&json!(false), true).enabled);
        assert_eq!(resolve(&json!(true), true).mode, Mode::Code);
        assert_eq!(resolve(&Value::Null, true).mode, Mode::Tools);
        assert_eq!(resolve(&json!({}), true).mode, Mode::Code);
        assert_eq!(resolve(&json!({"mode": "bogus"}), true).mode, Mode::Code);
        assert!(resolve(&json!({"mode": "tools"}), true).warnings.is_empty());
        assert_eq!(
            resolve(&json!({"mode": "directory"}), true).mode,
            Mode::Directory
        );
        assert_eq!(resolve(&json!({"mode": "tools"}), true).mode, Mode::Tools);
    }

    #[test]
    fn code_falls_back_to_tools() {
        let c = resolve(&json!(true), false);
        assert_eq!((c.mode, c.requested_mode), (Mode::Tools, Mode::Code));
        assert!(c.fallback_reason.is_some());
        assert_eq!(
            resolve(&json!({"mode": "directory"}), false).mode,
            Mode::Directory
        );
    }

    #[test]
    fn clamps_and_defaults() {
        let c = resolve(
            &json!({"codeTimeoutMs": 5, "maxSearchLimit": 500, "searchDefaultLimit": 100}),
            true,
        );
        assert_eq!(
            (
                c.code_timeout_ms,
                c.max_search_limit,
                c.search_default_limit
            ),
            (1000, 50, 50)
        );
        let c = resolve(
            &json!({"codeTimeoutMs": 999999, "maxSearchLimit": 3, "searchDefaultLimit": 8}),
            true,
        );
        assert_eq!(
            (
                c.code_timeout_ms,
                c.max_search_limit,
                c.search_default_limit
            ),
            (60000, 3, 3)
        );
        let c = resolve(
            &json!({"codeTimeoutMs": -1, "maxSearchLimit": 2.5, "searchDefaultLimit": "4"}),
            true,
        );
        assert_eq!(
            (
                c.code_timeout_ms,
                c.max_search_limit,
                c.search_default_limit
            ),
            (10000, 20, 8)
        );
        let c = resolve(
            &json!({"codeTimeoutMs": 0, "maxSearchLimit": 0, "searchDefaultLimit": 0}),
            true,
        );
        assert_eq!(
            (
                c.code_timeout_ms,
                c.max_search_limit,
                c.search_default_limit
            ),
            (10000, 20, 8)
        );
    }

    #[test]
    fn enabled_false_disables_whatever_the_mode() {
        for mode in ["code", "tools", "directory", "directroy"] {
            let c = resolve(&json!({ "enabled": false, "mode": mode }), true);
            assert!(!c.enabled, "{mode}");
            assert_eq!(
                (c.mode, c.requested_mode),
                (Mode::Direct, Mode::Direct),
                "{mode}"
            );
            assert!(c.warnings.is_empty(), "{mode}: {:?}", c.warnings);
        }
        let c = resolve(&json!({ "enabled": true, "mode": "directory" }), true);
        assert_eq!((c.enabled, c.mode), (true, Mode::Directory));
    }

    #[test]
    fn unknown_mode_is_a_warning_not_a_silent_mapping() {
        let c = resolve(&json!({ "mode": "directroy" }), true);
        assert_eq!(c.mode, Mode::Code);
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].contains("\"directroy\"") && c.warnings[0].contains("using \"code\""),
            "{:?}",
            c.warnings
        );
        assert_eq!(resolve(&json!({ "mode": 3 }), true).warnings.len(), 1);
        assert_eq!(
            resolve(&json!({ "enabled": "yes" }), true).warnings.len(),
            1
        );
        assert_eq!(resolve(&json!("code"), true).warnings.len(), 1);
        let serialized = serde_json::to_value(resolve(&json!({ "mode": "x" }), true)).unwrap();
        assert_eq!(serialized["warnings"].as_array().map(Vec::len), Some(1));
        // No warnings: the key is absent.
        assert!(serde_json::to_value(resolve(&json!(true), true))
            .unwrap()
            .get("warnings")
            .is_none());
    }

    #[test]
    fn numbers_that_fall_back_or_clamp_are_warned_about() {
        let c = resolve(
            &json!({ "codeTimeoutMs": 2.5, "maxSearchLimit": "4", "searchDefaultLimit": -1 }),
            true,
        );
        assert_eq!(
            (
                c.code_timeout_ms,
                c.max_search_limit,
                c.search_default_limit
            ),
            (10000, 20, 8)
        );
        assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
        assert!(c
            .warnings
            .iter()
            .all(|w| w.contains("not a positive integer")));
        let c = resolve(&json!({ "codeTimeoutMs": 500, "maxSearchLimit": 99 }), true);
        assert_eq!((c.code_timeout_ms, c.max_search_limit), (1000, 50));
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        // The default search limit follows a smaller max without a warning.
        let c = resolve(&json!({ "maxSearchLimit": 3 }), true);
        assert_eq!((c.search_default_limit, c.warnings.len()), (3, 0));
        let c = resolve(
            &json!({ "codeTimeoutMs": 20000, "maxSearchLimit": 30, "searchDefaultLimit": 10 }),
            true,
        );
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn sessions_resolve_raw_values_like_resolve_and_resolved_ones_as_resolved() {
        for raw in [
            json!(true),
            json!({ "mode": "code" }),
            json!({}),
            json!({ "enabled": true, "mode": "code" }),
            Value::Null,
            json!(false),
        ] {
            assert_eq!(
                resolve_for_session(&raw, true),
                resolve(&raw, true),
                "{raw}"
            );
            assert_eq!(
                resolve_for_session(&raw, false),
                resolve(&raw, false),
                "{raw}"
            );
        }
        assert_eq!(
            resolve_for_session(&json!({ "enabled": true, "mode": "code" }), true).mode,
            Mode::Code
        );
        // A resolved config reads back as itself.
        for resolved in [
            resolve(&json!(true), true),
            resolve(&json!(true), false),
            resolve(&json!(false), true),
            resolve(&json!({ "mode": "directory", "maxSearchLimit": 7 }), true),
        ] {
            let value = serde_json::to_value(&resolved).unwrap();
            let again = resolve_for_session(&value, true);
            assert_eq!(
                (again.enabled, again.mode, again.max_search_limit),
                (resolved.enabled, resolved.mode, resolved.max_search_limit),
                "{value}"
            );
        }
        // A resolution that said "unsupported" is kept even where the host could run code mode.
        let forced = serde_json::to_value(resolve(&json!({ "mode": "code" }), false)).unwrap();
        assert_eq!(resolve_for_session(&forced, true).mode, Mode::Tools);
    }
}

/// `resolveToolSearchConfig`'s `env`: `{ codeModeSupported? }`; absent or
/// `null`, the host's probed answer is used.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigEnv {
    #[serde(default)]
    pub code_mode_supported: Option<bool>,
}

//! One source's owner, the unit a live catalog replaces, and how records sent for it are claimed.

use serde::Deserialize;
use serde_json::Value;

use crate::entry::{safe_server_name, Source};
use crate::error::{Error, Result};

/// One source's owner: the unit a live catalog replaces (an MCP server's
/// tools are source `mcp`, owner = the server).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSelector {
    pub source: Source,
    pub owner: String,
}

/// The fields of a record [`SourceSelector::claim`] reads; the rest of the
/// record is skipped unparsed (a server's update claims every tool).
#[derive(Deserialize)]
pub(super) struct ClaimedFields {
    #[serde(default, deserialize_with = "present")]
    pub(super) source: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(super) owner: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(super) mcp: Option<Value>,
}

/// A field that is there, `null` included (`Option<Value>` alone reads `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl SourceSelector {
    /// `span` as a record of this source and owner: missing `source` /
    /// `owner` filled in (added at the end of the object), others refused.
    /// Text that is not a JSON object is passed on as is (the build excludes
    /// it alone, with the reason).
    pub(super) fn claim<'a>(
        &self,
        index: usize,
        span: &'a str,
    ) -> Result<std::borrow::Cow<'a, str>> {
        let object = span.trim_start().starts_with('{');
        // Anything unusual (not an object, a duplicate or `null` field) takes the general path.
        let fields = match serde_json::from_str::<ClaimedFields>(span) {
            Ok(fields)
                if object && ![&fields.source, &fields.owner].contains(&&Some(Value::Null)) =>
            {
                fields
            }
            _ => return self.claim_parsed(index, span),
        };
        let mut missing: Vec<(&str, &str)> = Vec::new();
        for (key, given, wanted) in [
            ("source", &fields.source, self.source.as_str()),
            ("owner", &fields.owner, self.owner.as_str()),
        ] {
            if self.is_missing(index, key, given.as_ref(), wanted)? {
                missing.push((key, wanted));
            }
        }
        if let Some(Value::Object(mcp)) = &fields.mcp {
            self.check_routing(index, mcp)?;
        }
        if missing.is_empty() {
            return Ok(std::borrow::Cow::Borrowed(span));
        }
        let body = span.trim_end();
        let Some(inner) = body.strip_suffix('}') else {
            return self.claim_parsed(index, span);
        };
        let mut text = String::with_capacity(span.len() + 64);
        text.push_str(inner);
        let mut first = inner
            .trim_start()
            .strip_prefix('{')
            .is_some_and(|rest| rest.trim().is_empty());
        for (key, wanted) in missing {
            text.push_str(if first { "\"" } else { ",\"" });
            first = false;
            text.push_str(key);
            text.push_str("\":");
            text.push_str(&Value::from(wanted).to_string());
        }
        text.push('}');
        Ok(std::borrow::Cow::Owned(text))
    }

    /// [`Self::claim`] through a parsed record (re-serialized when changed).
    fn claim_parsed<'a>(&self, index: usize, span: &'a str) -> Result<std::borrow::Cow<'a, str>> {
        let Ok(Value::Object(mut record)) = serde_json::from_str::<Value>(span) else {
            return Ok(std::borrow::Cow::Borrowed(span));
        };
        let mut changed = false;
        for (key, wanted) in [
            ("source", self.source.as_str()),
            ("owner", self.owner.as_str()),
        ] {
            if self.is_missing(index, key, record.get(key), wanted)? {
                record.insert(key.to_string(), Value::from(wanted));
                changed = true;
            }
        }
        if let Some(Value::Object(mcp)) = record.get("mcp") {
            self.check_routing(index, mcp)?;
        }
        Ok(if changed {
            std::borrow::Cow::Owned(Value::Object(record).to_string())
        } else {
            std::borrow::Cow::Borrowed(span)
        })
    }

    /// The one rule for a claimed record's `source` / `owner`: absent or
    /// `null` is filled in (true), the selector's own value is kept, any
    /// other value is refused.
    fn is_missing(
        &self,
        index: usize,
        key: &str,
        given: Option<&Value>,
        wanted: &str,
    ) -> Result<bool> {
        match given {
            None | Some(Value::Null) => Ok(true),
            Some(Value::String(given)) if given == wanted => Ok(false),
            Some(given) => Err(Error::invalid_catalog(format!(
                "tool #{index} names {key} {given}, not the replaced {key} \"{wanted}\""
            ))),
        }
    }

    /// Routing data names a server: a tool sent as this owner's may only name this owner.
    fn check_routing(&self, index: usize, mcp: &serde_json::Map<String, Value>) -> Result<()> {
        let named = |key: &str| mcp.get(key).and_then(Value::as_str);
        let Some(server) = named("serverName") else {
            return Ok(());
        };
        let safe = named("safeServerName");
        let owner = self.owner.as_str();
        let wrong = if !names_server(owner, server) {
            Some(("serverName", server))
        } else {
            safe.filter(|safe| *safe != owner && !names_server(safe, server))
                .map(|safe| ("safeServerName", safe))
        };
        match wrong {
            Some((key, named)) => Err(Error::invalid_catalog(format!(
                "tool #{index} names MCP server \"{}\" (mcp.{key}), not the replaced owner \"{}\"",
                tool_search_base::text::clip(named, 80),
                tool_search_base::text::clip(owner, 80)
            ))),
            None => Ok(()),
        }
    }
}

/// Whether `owner` is the MCP server `server`: its name as given, or a safe
/// form of it (this package's [`safe_server_name`], or OpenClaw's: characters
/// outside `[A-Za-z0-9_-]` as `-`, `mcp-` before a name not starting with a
/// letter, at most 30 characters, `-<n>` after a name another server took).
pub(crate) fn names_server(owner: &str, server: &str) -> bool {
    if owner == server || owner == safe_server_name(server) {
        return true;
    }
    const OPENCLAW_PREFIX_CHARS: usize = 30;
    let trimmed = server.trim();
    // OpenClaw replaces each UTF-16 code unit (JavaScript's regex without `u`): a
    // character outside the BMP becomes two `-`.
    let mut safe: String = trimmed
        .chars()
        .flat_map(|c| {
            let kept = c.is_ascii_alphanumeric() || c == '_' || c == '-';
            std::iter::repeat_n(
                if kept { c } else { '-' },
                if kept { 1 } else { c.len_utf16() },
            )
        })
        .collect();
    if safe.is_empty() {
        safe = "mcp".into();
    }
    if !safe.starts_with(|c: char| c.is_ascii_alphabetic()) {
        safe = format!("mcp-{safe}");
    }
    let safe: String = safe.chars().take(OPENCLAW_PREFIX_CHARS).collect();
    if owner == safe {
        return true;
    }
    // A collision suffix: `<safe, cut to leave room>-<n>`.
    let Some((base, n)) = owner.rsplit_once('-') else {
        return false;
    };
    !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && safe.starts_with(base)
        && !base.is_empty()
        && (base.len() == safe.len()
            || base.len() == OPENCLAW_PREFIX_CHARS.saturating_sub(n.len() + 1).max(1))
}

//! Layered tool policy: allow/deny lists at the agent, profile, sandbox and
//! session layers. Deny wins at any layer; an allow list at any layer
//! restricts. Patterns are tool names, ids, `*` globs or `group:` names.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::entry::{Source, ToolEntry};
use crate::error::{Error, ErrorCode, Result};
use crate::limits::{MAX_GROUP_NESTING, MAX_PATTERNS};

/// Built-in groups; options may define more (`CatalogOptions.groups`).
const BUILTIN_GROUPS: &[&str] = &["openclaw", "mcp", "client", "core", "plugins"];

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyLayer {
    pub allow: Option<Vec<String>>,
    #[serde(default)]
    pub deny: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    pub agent: Option<PolicyLayer>,
    pub profile: Option<PolicyLayer>,
    pub sandbox: Option<PolicyLayer>,
    pub session: Option<PolicyLayer>,
    /// User-defined groups: `group:<key>` expands to these patterns.
    #[serde(default)]
    pub groups: BTreeMap<String, Vec<String>>,
}

/// A policy compiled against its groups, ready to test tools.
#[derive(Debug, Clone, Default)]
pub struct CompiledPolicy {
    layers: Vec<CompiledLayer>,
}

#[derive(Debug, Clone)]
struct CompiledLayer {
    allow: Option<Vec<Matcher>>,
    deny: Vec<Matcher>,
}

#[derive(Debug, Clone)]
enum Matcher {
    /// Exact name or id, ASCII case-insensitive.
    Exact(String),
    /// `*` glob over name or id, ASCII case-insensitive.
    Glob(Vec<String>),
    Source(Source),
    Core,
    Plugins,
}

impl Policy {
    pub fn compile(&self) -> Result<CompiledPolicy> {
        let mut layers = Vec::new();
        for layer in [&self.agent, &self.profile, &self.sandbox, &self.session]
            .into_iter()
            .flatten()
        {
            let mut budget = MAX_PATTERNS;
            let allow = match &layer.allow {
                Some(list) => Some(self.expand(list, 0, &mut budget)?),
                None => None,
            };
            let deny = self.expand(&layer.deny, 0, &mut budget)?;
            layers.push(CompiledLayer { allow, deny });
        }
        Ok(CompiledPolicy { layers })
    }

    /// Expand groups; `budget` bounds the patterns a layer may expand to in
    /// total, so nested groups cannot multiply into millions of matchers.
    fn expand(
        &self,
        patterns: &[String],
        depth: usize,
        budget: &mut usize,
    ) -> Result<Vec<Matcher>> {
        if depth > MAX_GROUP_NESTING {
            return Err(policy_error(
                "policy groups nest too deeply (a group refers to itself?)",
            ));
        }
        let mut out = Vec::with_capacity(patterns.len().min(*budget));
        for pattern in patterns {
            *budget = budget.checked_sub(1).ok_or_else(|| {
                policy_error(format!(
                    "a policy layer expands to more than {MAX_PATTERNS} patterns"
                ))
            })?;
            let pattern = pattern.trim();
            if pattern.is_empty() {
                return Err(policy_error("a policy pattern is empty"));
            }
            if let Some(group) = pattern.strip_prefix("group:") {
                if let Some(members) = self.groups.get(group) {
                    out.extend(self.expand(members, depth + 1, budget)?);
                    continue;
                }
                out.push(match group {
                    "openclaw" => Matcher::Source(Source::Openclaw),
                    "mcp" => Matcher::Source(Source::Mcp),
                    "client" => Matcher::Source(Source::Client),
                    "core" => Matcher::Core,
                    "plugins" => Matcher::Plugins,
                    _ => {
                        // An unknown group would silently match nothing; for a
                        // deny list that is a hole, so it is an error either way.
                        return Err(policy_error(format!(
                            "unknown policy group \"group:{group}\" (built-in: {}; define others in policy.groups)",
                            BUILTIN_GROUPS.iter().map(|g| format!("group:{g}")).collect::<Vec<_>>().join(", ")
                        )));
                    }
                });
            } else if pattern.contains('*') {
                out.push(Matcher::Glob(
                    pattern
                        .to_ascii_lowercase()
                        .split('*')
                        .map(str::to_owned)
                        .collect(),
                ));
            } else {
                out.push(Matcher::Exact(pattern.to_ascii_lowercase()));
            }
        }
        Ok(out)
    }
}

fn policy_error(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidPolicy, message)
}

impl CompiledPolicy {
    pub fn is_unrestricted(&self) -> bool {
        self.layers.is_empty()
    }

    /// Whether the tool `(source, owner, name, id)` is allowed by every layer.
    pub fn allows(&self, source: Source, owner: &str, name: &str, id: &str) -> bool {
        let probe = Probe {
            source,
            owner,
            name: name.to_ascii_lowercase(),
            id: id.to_ascii_lowercase(),
        };
        self.layers.iter().all(|layer| {
            !layer.deny.iter().any(|m| probe.matches(m))
                && layer
                    .allow
                    .as_ref()
                    .is_none_or(|allow| allow.iter().any(|m| probe.matches(m)))
        })
    }

    pub fn allows_entry(&self, entry: &ToolEntry) -> bool {
        self.allows(entry.source, &entry.owner, &entry.name, &entry.id)
    }
}

struct Probe<'a> {
    source: Source,
    owner: &'a str,
    name: String,
    id: String,
}

impl Probe<'_> {
    fn matches(&self, matcher: &Matcher) -> bool {
        match matcher {
            // A pattern with ':' is id-shaped: it matches ids only.
            Matcher::Exact(p) if p.contains(':') => *p == self.id,
            Matcher::Exact(p) => *p == self.name || *p == self.id,
            Matcher::Glob(parts) if parts.iter().any(|p| p.contains(':')) => {
                glob_match(parts, &self.id)
            }
            Matcher::Glob(parts) => glob_match(parts, &self.name) || glob_match(parts, &self.id),
            Matcher::Source(s) => *s == self.source,
            Matcher::Core => self.source == Source::Openclaw && self.owner == "core",
            Matcher::Plugins => self.source == Source::Openclaw && self.owner != "core",
        }
    }
}

/// Glob with `*` only; `parts` is the pattern split on `*`. Linear time.
fn glob_match(parts: &[String], text: &str) -> bool {
    let (first, rest) = match parts.split_first() {
        Some(split) => split,
        None => return text.is_empty(),
    };
    if rest.is_empty() {
        return text == first;
    }
    let Some(mut remaining) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    let (last, middle) = rest.split_last().expect("rest is non-empty");
    for part in middle {
        match remaining.find(part.as_str()) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(allow: Option<&[&str]>, deny: &[&str]) -> Option<PolicyLayer> {
        Some(PolicyLayer {
            allow: allow.map(|a| a.iter().map(|s| s.to_string()).collect()),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        })
    }

    #[test]
    fn glob_matching() {
        let g =
            |p: &str, t: &str| glob_match(&p.split('*').map(str::to_owned).collect::<Vec<_>>(), t);
        assert!(g("fake_*", "fake_plugin_tool_01"));
        assert!(g("*_01", "fake_plugin_tool_01"));
        assert!(g("*plugin*", "fake_plugin_tool_01"));
        assert!(g("*", ""));
        assert!(!g("fake_*_02", "fake_plugin_tool_01"));
        assert!(!g("ab*ba", "aba"));
        assert!(g("mcp:github:*", "mcp:github:create_issue"));
    }

    #[test]
    fn deny_wins_and_allow_restricts() {
        let policy = Policy {
            agent: layer(Some(&["group:openclaw", "mcp:github:*"]), &[]),
            session: layer(None, &["exec"]),
            ..Default::default()
        }
        .compile()
        .unwrap();
        assert!(policy.allows(Source::Openclaw, "core", "read", "openclaw:core:read"));
        assert!(!policy.allows(Source::Openclaw, "core", "exec", "openclaw:core:exec"));
        assert!(policy.allows(
            Source::Mcp,
            "github",
            "create_issue",
            "mcp:github:create_issue"
        ));
        assert!(!policy.allows(Source::Mcp, "slack", "post", "mcp:slack:post"));
    }

    #[test]
    fn empty_allow_list_allows_nothing() {
        let policy = Policy {
            profile: layer(Some(&[]), &[]),
            ..Default::default()
        }
        .compile()
        .unwrap();
        assert!(!policy.allows(Source::Openclaw, "core", "read", "openclaw:core:read"));
    }

    #[test]
    fn groups_expand_and_unknown_groups_fail() {
        let mut groups = BTreeMap::new();
        groups.insert(
            "fs".to_string(),
            vec!["read".to_string(), "write".to_string()],
        );
        let policy = Policy {
            sandbox: layer(None, &["group:fs"]),
            groups,
            ..Default::default()
        }
        .compile()
        .unwrap();
        assert!(!policy.allows(Source::Openclaw, "core", "write", "openclaw:core:write"));
        assert!(policy.allows(Source::Openclaw, "core", "edit", "openclaw:core:edit"));
        let err = Policy {
            agent: layer(None, &["group:nope"]),
            ..Default::default()
        }
        .compile()
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidPolicy);
    }

    #[test]
    fn self_referential_group_is_an_error() {
        let mut groups = BTreeMap::new();
        groups.insert("loop".to_string(), vec!["group:loop".to_string()]);
        let err = Policy {
            agent: layer(Some(&["group:loop"]), &[]),
            groups,
            ..Default::default()
        }
        .compile()
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidPolicy);
    }

    #[test]
    fn nested_groups_cannot_multiply() {
        let mut groups = BTreeMap::new();
        groups.insert("a".to_string(), vec!["group:b".to_string(); 1000]);
        groups.insert("b".to_string(), vec!["x".to_string(); 1000]);
        let err = Policy {
            agent: layer(None, &["group:a"]),
            groups,
            ..Default::default()
        }
        .compile()
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidPolicy);
    }

    #[test]
    fn id_shaped_patterns_match_ids_only() {
        let policy = Policy {
            agent: layer(Some(&["mcp:github:*"]), &[]),
            ..Default::default()
        }
        .compile()
        .unwrap();
        assert!(policy.allows(
            Source::Mcp,
            "github",
            "create_issue",
            "mcp:github:create_issue"
        ));
        assert!(!policy.allows(Source::Mcp, "evil", "mcp_github_x", "mcp:evil:mcp_github_x"));
    }

    #[test]
    fn matching_is_case_insensitive() {
        let policy = Policy {
            agent: layer(None, &["EXEC"]),
            ..Default::default()
        }
        .compile()
        .unwrap();
        assert!(!policy.allows(Source::Openclaw, "core", "exec", "openclaw:core:exec"));
    }

    #[test]
    fn plugins_and_core_groups() {
        let policy = Policy {
            agent: layer(Some(&["group:plugins"]), &[]),
            ..Default::default()
        }
        .compile()
        .unwrap();
        assert!(policy.allows(
            Source::Openclaw,
            "browser",
            "browser_request",
            "openclaw:browser:browser_request"
        ));
        assert!(!policy.allows(Source::Openclaw, "core", "read", "openclaw:core:read"));
    }
}

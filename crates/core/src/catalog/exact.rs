//! The one exact-selector rule: an id, else a name that only one tool has.
//! Resolving a tool call and reading tool names out of a prompt both use it.

use super::Catalog;

/// What an exact selector names among the tools a caller accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExactMatch {
    /// The tool with that id, else the only tool with that name.
    One(usize),
    /// No tool has that id, and several have that name.
    Ambiguous,
    None,
}

impl ExactMatch {
    pub(crate) fn one(self) -> Option<usize> {
        match self {
            ExactMatch::One(ordinal) => Some(ordinal),
            ExactMatch::Ambiguous | ExactMatch::None => None,
        }
    }
}

impl Catalog {
    /// The one exact-selector rule (case and spacing as typed): the accepted
    /// tool with id `selector`, else the accepted tools named `selector`,
    /// which must be one. Tool calls accept the allowed tools; reading names
    /// out of a prompt accepts every tool and filters later. Whatever the
    /// view allows, only `accept` filters.
    pub(crate) fn exact_match(&self, selector: &str, accept: impl Fn(usize) -> bool) -> ExactMatch {
        if let Some(ordinal) = self.data().ordinal_of_id(selector).filter(|&o| accept(o)) {
            return ExactMatch::One(ordinal);
        }
        let mut named = self
            .data()
            .ordinals_named(selector)
            .iter()
            .map(|&o| o as usize)
            .filter(|&o| accept(o));
        match (named.next(), named.next()) {
            (Some(ordinal), None) => ExactMatch::One(ordinal),
            (Some(_), Some(_)) => ExactMatch::Ambiguous,
            (None, _) => ExactMatch::None,
        }
    }
}

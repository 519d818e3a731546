//! Batch search (contract §3): several queries in one call, bounded in count,
//! size and total candidates, with a response budget that drops the
//! lowest-ranked candidates first and marks every group that lost some.

use serde::{Deserialize, Serialize};

use super::{Catalog, SearchHit};
use crate::error::{Error, ErrorCode, Result};
use crate::limits::*;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchQuery {
    pub query: String,
    /// Any JSON: null/absent → default; a non-number is an INVALID_LIMIT error.
    #[serde(default)]
    pub limit: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchRequest {
    /// A scalar query; when non-empty it runs first.
    pub query: Option<String>,
    #[serde(default)]
    pub limit: Option<serde_json::Value>,
    pub queries: Option<Vec<BatchQuery>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchResultGroup {
    pub query: String,
    pub candidates: Vec<SearchHit>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchResult {
    pub results: Vec<BatchResultGroup>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// A JSON limit: null/absent → none; a number → itself; anything else → INVALID_LIMIT.
fn json_limit(limit: Option<&serde_json::Value>) -> Result<Option<f64>> {
    match limit {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(Error::new(ErrorCode::InvalidLimit, "limit must be a positive integer.")),
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidQuery, message)
}

impl Catalog {
    /// Run a batch. Counts as one search.
    pub fn search_batch(&self, request: &BatchRequest) -> Result<BatchResult> {
        let mut queries: Vec<BatchQuery> = Vec::new();
        if let Some(q) = request.query.as_deref().filter(|q| !q.trim().is_empty()) {
            queries.push(BatchQuery { query: q.to_string(), limit: request.limit.clone() });
        }
        queries.extend(request.queries.iter().flatten().cloned());
        if queries.is_empty() {
            return Err(invalid("Provide \"query\" or a non-empty \"queries\" list."));
        }
        if queries.len() > MAX_BATCH_QUERIES {
            return Err(invalid(format!("At most {MAX_BATCH_QUERIES} queries per call; got {}.", queries.len())));
        }
        for q in &queries {
            if q.query.chars().count() > MAX_BATCH_QUERY_CHARS {
                return Err(invalid(format!("Each query must be at most {MAX_BATCH_QUERY_CHARS} characters.")));
            }
        }
        let list: Vec<&str> = queries.iter().map(|q| q.query.as_str()).collect();
        let list_bytes = serde_json::to_string(&list).map(|s| s.len()).unwrap_or(usize::MAX);
        if list_bytes > MAX_BATCH_QUERY_BYTES {
            return Err(invalid(format!(
                "The queries together must serialize to at most {MAX_BATCH_QUERY_BYTES} bytes; got {list_bytes}. Use fewer or shorter queries."
            )));
        }
        let limits: Vec<usize> = queries.iter().map(|q| self.limits.effective(json_limit(q.limit.as_ref())?)).collect::<Result<_>>()?;
        let mut groups = Vec::with_capacity(queries.len());
        for (q, limit) in queries.iter().zip(limits) {
            let ordinals = self.search_ordinals(&q.query, limit)?;
            let candidates = ordinals.into_iter().map(|o| self.data.hit(o)).collect();
            groups.push(BatchResultGroup { query: q.query.clone(), candidates, truncated: false });
        }
        self.counters.record_search();
        Ok(fit_budget(groups))
    }
}

/// Drop the lowest-ranked candidates (deepest rank first; among equal ranks,
/// the later group first) until at most MAX_BATCH_CANDIDATES remain and the
/// serialized response fits BATCH_RESPONSE_BUDGET_CHARS.
fn fit_budget(mut groups: Vec<BatchResultGroup>) -> BatchResult {
    let mut sizes: Vec<Vec<usize>> = groups
        .iter()
        .map(|g| g.candidates.iter().map(|c| serde_json::to_string(c).map(|s| s.chars().count()).unwrap_or(0) + 1).collect())
        .collect();
    let fixed = serde_json::to_string(&BatchResult {
        results: groups
            .iter()
            .map(|g| BatchResultGroup { query: g.query.clone(), candidates: Vec::new(), truncated: true })
            .collect(),
        truncated: true,
    })
    .map(|s| s.chars().count())
    .unwrap_or(0);
    let mut total_chars = fixed + sizes.iter().flatten().sum::<usize>();
    let mut total_candidates: usize = groups.iter().map(|g| g.candidates.len()).sum();
    while total_candidates > MAX_BATCH_CANDIDATES || total_chars > BATCH_RESPONSE_BUDGET_CHARS {
        let victim = groups
            .iter()
            .enumerate()
            .filter(|(_, g)| !g.candidates.is_empty())
            .max_by_key(|(i, g)| (g.candidates.len(), *i))
            .map(|(i, _)| i);
        let Some(i) = victim else { break };
        groups[i].candidates.pop();
        groups[i].truncated = true;
        total_chars -= sizes[i].pop().unwrap_or(0);
        total_candidates -= 1;
    }
    let truncated = groups.iter().any(|g| g.truncated);
    BatchResult { results: groups, truncated }
}

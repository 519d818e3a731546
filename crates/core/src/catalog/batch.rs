//! Batch search (contract §3): several queries in one call, bounded in count,
//! size and total candidates, with a response budget that drops the
//! lowest-ranked candidates first and marks every group that lost some.
//! Batch hits are compact (descriptions whitespace-collapsed and clipped,
//! long labels dropped) so that, when the budget allows, every group keeps
//! its best candidate: descriptions of the remaining best candidates shrink
//! before a group is emptied.

use serde::{Deserialize, Serialize};

use super::{Catalog, QueryVectorSet, SearchHit, SearchOptions};
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
        Some(_) => Err(Error::new(
            ErrorCode::InvalidLimit,
            "limit must be a positive integer.",
        )),
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidQuery, message)
}

/// One query of a planned batch: where it came from (for error messages),
/// its trimmed text and effective limit.
struct Planned {
    query: String,
    limit: usize,
}

fn limit_error(path: &str, message: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::InvalidLimit, format!("{path}: {message}"))
}

impl Catalog {
    /// Run a batch, each query through [`Catalog::search`] with `vectors` (see
    /// [`SearchOptions::with_vectors`]; [`QueryVectorSet::embed_here`]: a query whose vectors
    /// are not cached is embedded on this thread). Counts one search per query. Every rule is
    /// checked before the first search, and a refusal names the offending path
    /// (`queries[2].query`), so the model can fix exactly that.
    pub fn search_batch(
        &self,
        request: &BatchRequest,
        vectors: &QueryVectorSet,
    ) -> Result<BatchResult> {
        let planned = self.plan_batch(request)?;
        let mut groups = Vec::with_capacity(planned.len());
        for q in &planned {
            // The limit was checked with the others (plan_batch); the search counts itself.
            let options = SearchOptions::hits(None)
                .at_most(q.limit)
                .with_vectors(vectors);
            let mut candidates = self.search(&q.query, &options)?;
            for hit in &mut candidates {
                compact(hit, BATCH_DESCRIPTION_MAX_CHARS);
            }
            // The group echoes the query as searched (trimmed).
            groups.push(BatchResultGroup {
                query: q.query.clone(),
                candidates,
                truncated: false,
            });
        }
        Ok(fit_budget(groups))
    }

    /// The query texts `search_batch` would search (trimmed), for
    /// [`Catalog::query_vectors`]; none when the request would be refused.
    pub fn batch_queries(&self, request: &BatchRequest) -> Vec<String> {
        self.plan_batch(request)
            .map(|planned| planned.into_iter().map(|q| q.query).collect())
            .unwrap_or_default()
    }

    /// [`Catalog::search_batch`] on a worker thread (`searchBatchAsync`): the vectors of every
    /// query not cached are made first, here, off the caller's event loop; the same result.
    pub fn search_batch_on_worker(&self, request: &BatchRequest) -> Result<BatchResult> {
        let queries = self.batch_queries(request);
        let vectors = self.query_vectors(queries.iter().map(String::as_str));
        self.search_batch(request, &vectors.complete())
    }

    /// The batch's queries in run order (a non-blank scalar `query` first,
    /// with the top-level `limit`), trimmed, with their effective limits.
    fn plan_batch(&self, request: &BatchRequest) -> Result<Vec<Planned>> {
        let scalar = request
            .query
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty());
        let batch = request.queries.as_deref().unwrap_or(&[]);
        let top_limit =
            json_limit(request.limit.as_ref()).map_err(|e| limit_error("limit", e.message))?;
        // The top-level limit belongs to the scalar query; beside a batch alone it
        // would silently apply to nothing.
        if scalar.is_none() && !batch.is_empty() && top_limit.is_some() {
            return Err(limit_error(
                "limit",
                "a top-level limit applies only to \"query\"; beside \"queries\" set each entry's own limit (queries[i].limit).",
            ));
        }
        let mut entries: Vec<(String, &str, Option<f64>)> = Vec::new();
        if let Some(q) = scalar {
            entries.push(("query".to_string(), q, top_limit));
        }
        for (i, q) in batch.iter().enumerate() {
            let limit = json_limit(q.limit.as_ref())
                .map_err(|e| limit_error(&format!("queries[{i}].limit"), e.message))?;
            entries.push((format!("queries[{i}]"), q.query.as_str(), limit));
        }
        if entries.is_empty() {
            return Err(invalid(
                "Provide \"query\" or a non-empty \"queries\" list.",
            ));
        }
        if entries.len() > MAX_BATCH_QUERIES {
            return Err(invalid(format!(
                "At most {MAX_BATCH_QUERIES} queries per call (a scalar \"query\" counts); got {}.",
                entries.len()
            )));
        }
        let mut planned = Vec::with_capacity(entries.len());
        let mut total = 0usize;
        for (path, text, limit) in &entries {
            let query = text.trim();
            let query_path = if path == "query" {
                path.clone()
            } else {
                format!("{path}.query")
            };
            if query.is_empty() {
                return Err(invalid(format!("{query_path} is blank; give every entry the capability to search for, or drop it.")));
            }
            if query.chars().count() > MAX_BATCH_QUERY_CHARS {
                return Err(invalid(format!(
                    "{query_path}: each query must be at most {MAX_BATCH_QUERY_CHARS} characters."
                )));
            }
            let limit_path = if path == "query" {
                "limit".to_string()
            } else {
                format!("{path}.limit")
            };
            let limit = self
                .limits
                .effective(*limit)
                .map_err(|e| limit_error(&limit_path, e.message))?;
            total += limit;
            if total > MAX_BATCH_CANDIDATES {
                let default = self.limits.default_limit;
                return Err(limit_error(
                    &limit_path,
                    format!(
                        "the limits together ask for {total} hits, over {MAX_BATCH_CANDIDATES} per call (an omitted limit counts as {default}); \
                         lower the limits or split the queries over several calls."
                    ),
                ));
            }
            planned.push(Planned {
                query: query.to_string(),
                limit,
            });
        }
        let list: Vec<&str> = planned.iter().map(|q| q.query.as_str()).collect();
        let list_bytes = serde_json::to_string(&list)
            .map(|s| s.len())
            .unwrap_or(usize::MAX);
        if list_bytes > MAX_BATCH_QUERY_BYTES {
            return Err(invalid(format!(
                "The queries together must serialize to at most {MAX_BATCH_QUERY_BYTES} bytes; got {list_bytes}. Use fewer or shorter queries."
            )));
        }
        Ok(planned)
    }
}

/// A batch hit: description whitespace-collapsed and clipped to `max_chars`,
/// an over-long label dropped.
fn compact(hit: &mut SearchHit, max_chars: usize) {
    let collapsed = hit
        .description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    hit.description = tool_search_base::text::clip(&collapsed, max_chars);
    if hit
        .label
        .as_ref()
        .is_some_and(|l| l.chars().count() > BATCH_LABEL_MAX_CHARS)
    {
        hit.label = None;
    }
}

fn serialized_chars<T: Serialize>(value: &T) -> usize {
    serde_json::to_string(value)
        .map(|s| s.chars().count())
        .unwrap_or(0)
}

/// Drop the lowest-ranked candidates (deepest rank first; among equal ranks,
/// the later group first) until at most MAX_BATCH_CANDIDATES remain and the
/// serialized response fits BATCH_RESPONSE_BUDGET_CHARS. Before the last
/// candidate of a group would go, the descriptions of the remaining
/// candidates are shortened (down to BATCH_DESCRIPTION_MIN_CHARS).
fn fit_budget(mut groups: Vec<BatchResultGroup>) -> BatchResult {
    let mut sizes: Vec<Vec<usize>> = groups
        .iter()
        .map(|g| {
            g.candidates
                .iter()
                .map(|c| serialized_chars(c) + 1)
                .collect()
        })
        .collect();
    let fixed = serialized_chars(&BatchResult {
        results: groups
            .iter()
            .map(|g| BatchResultGroup {
                query: g.query.clone(),
                candidates: Vec::new(),
                truncated: true,
            })
            .collect(),
        truncated: true,
    });
    let mut total_chars = fixed + sizes.iter().flatten().sum::<usize>();
    let mut total_candidates: usize = groups.iter().map(|g| g.candidates.len()).sum();
    let mut shrunk = false;
    while total_candidates > MAX_BATCH_CANDIDATES || total_chars > BATCH_RESPONSE_BUDGET_CHARS {
        let victim = groups
            .iter()
            .enumerate()
            .filter(|(_, g)| !g.candidates.is_empty())
            .max_by_key(|(i, g)| (g.candidates.len(), *i))
            .map(|(i, g)| (i, g.candidates.len()));
        let Some((i, len)) = victim else { break };
        if len == 1 && !shrunk && total_candidates <= MAX_BATCH_CANDIDATES {
            // Only best candidates are left: share the excess among their descriptions.
            shrunk = true;
            let excess = total_chars - BATCH_RESPONSE_BUDGET_CHARS;
            let cut = excess.div_ceil(total_candidates.max(1));
            for (group, group_sizes) in groups.iter_mut().zip(sizes.iter_mut()) {
                for (hit, size) in group.candidates.iter_mut().zip(group_sizes.iter_mut()) {
                    let current = hit.description.chars().count();
                    let target = current.saturating_sub(cut).max(BATCH_DESCRIPTION_MIN_CHARS);
                    if target < current {
                        compact(hit, target);
                        let new_size = serialized_chars(hit) + 1;
                        total_chars = total_chars - *size + new_size;
                        *size = new_size;
                    }
                }
            }
            continue;
        }
        groups[i].candidates.pop();
        groups[i].truncated = true;
        total_chars -= sizes[i].pop().unwrap_or(0);
        total_candidates -= 1;
    }
    let truncated = groups.iter().any(|g| g.truncated);
    BatchResult {
        results: groups,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::catalog::CatalogOptions;

    fn catalog(tools: Vec<Value>) -> Catalog {
        Catalog::from_records(tools, &CatalogOptions::default()).unwrap()
    }

    fn request(value: Value) -> BatchRequest {
        serde_json::from_value(value).unwrap()
    }

    /// Sixteen tools with long, loosely spaced descriptions, each found by its own word.
    fn sixteen_tools() -> Vec<Value> {
        (0..16)
            .map(|i| {
                let word = format!("topic{}", (b'a' + i as u8) as char);
                json!({
                    "name": format!("tool_{word}"),
                    "label": format!("{} {}", word, "very long label ".repeat(8)),
                    "description": format!("Handles {word}.\n\n   {}", "Lots of detail about   the behaviour.  ".repeat(15)),
                    "inputSchema": { "type": "object", "properties": { "marker": { "type": "string" } }, "required": ["marker"] }
                })
            })
            .collect()
    }

    #[test]
    fn every_group_keeps_its_best_candidate_when_the_budget_allows() {
        let c = catalog(sixteen_tools());
        let queries: Vec<Value> = (0..16)
            .map(|i| json!({ "query": format!("topic{}", (b'a' + i as u8) as char), "limit": 1 }))
            .collect();
        let result = c
            .search_batch(
                &request(json!({ "queries": queries })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap();
        let size = serde_json::to_string(&result).unwrap().chars().count();
        assert!(size <= BATCH_RESPONSE_BUDGET_CHARS, "{size}");
        assert_eq!(result.results.len(), 16);
        for group in &result.results {
            assert_eq!(
                group.candidates.len(),
                1,
                "{} lost its only candidate",
                group.query
            );
            let hit = &group.candidates[0];
            assert!(
                hit.name.ends_with(&group.query),
                "{} → {}",
                group.query,
                hit.name
            );
            assert!(hit.description.chars().count() <= BATCH_DESCRIPTION_MAX_CHARS);
            assert!(
                !hit.description.contains("  ") && !hit.description.contains('\n'),
                "{:?}",
                hit.description
            );
            assert_eq!(hit.label, None, "an over-long label is dropped");
        }
    }

    #[test]
    fn batch_descriptions_are_compacted_to_180_chars() {
        let c = catalog(sixteen_tools());
        let result = c
            .search_batch(
                &request(json!({ "queries": [{ "query": "topica" }] })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap();
        let hit = &result.results[0].candidates[0];
        let chars = hit.description.chars().count();
        assert!(
            (170..=BATCH_DESCRIPTION_MAX_CHARS).contains(&chars),
            "{chars}"
        );
        assert!(
            hit.description
                .starts_with("Handles topica. Lots of detail about the behaviour. Lots"),
            "{}",
            hit.description
        );
        assert!(hit.description.ends_with('…'));
        // A short label is kept; single searches keep the full hit.
        let short = catalog(vec![
            json!({ "name": "t", "label": "Short", "description": "a  b" }),
        ]);
        let result = short
            .search_batch(
                &request(json!({ "queries": [{ "query": "t" }] })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap();
        assert_eq!(
            result.results[0].candidates[0].label.as_deref(),
            Some("Short")
        );
        assert_eq!(result.results[0].candidates[0].description, "a b");
        assert_eq!(
            short.search("t", &SearchOptions::hits(None)).unwrap()[0].description,
            "a  b"
        );
    }

    #[test]
    fn top_level_limit_beside_queries_is_refused_before_any_search() {
        let c = catalog(sixteen_tools());
        for bad in [json!(0), json!(-1), json!(1.5), json!("3"), json!(3)] {
            let err = c
                .search_batch(
                    &request(json!({ "limit": bad, "queries": [{ "query": "topica" }] })),
                    &QueryVectorSet::embed_here(),
                )
                .unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidLimit, "{bad}");
            assert!(err.message.starts_with("limit: "), "{}", err.message);
        }
        let err = c
            .search_batch(
                &request(json!({ "query": "  ", "limit": 3, "queries": [{ "query": "topica" }] })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap_err();
        assert!(err.message.contains("queries[i].limit"), "{}", err.message);
        assert_eq!(c.telemetry().search_count, 0, "refused before any search");
        // Null is no limit; beside a scalar query the limit is that query's own.
        assert!(c
            .search_batch(
                &request(json!({ "limit": null, "queries": [{ "query": "topica" }] })),
                &QueryVectorSet::embed_here()
            )
            .is_ok());
        let both = c
            .search_batch(
                &request(
                    json!({ "query": "topicb", "limit": 1, "queries": [{ "query": "topica" }] }),
                ),
                &QueryVectorSet::embed_here(),
            )
            .unwrap();
        assert_eq!(both.results[0].query, "topicb");
        assert_eq!(both.results[0].candidates.len(), 1);
    }

    #[test]
    fn limits_totalling_over_fifty_are_refused_naming_the_entry() {
        let c = catalog(sixteen_tools());
        let err = c
            .search_batch(&request(json!({ "queries": [
                { "query": "topica", "limit": 20 }, { "query": "topicb", "limit": 20 }, { "query": "topicc", "limit": 11 }] })), &QueryVectorSet::embed_here())
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidLimit);
        assert!(
            err.message
                .starts_with("queries[2].limit: the limits together ask for 51 hits, over 50"),
            "{}",
            err.message
        );
        // An omitted limit counts as the default (8): seven defaults are 56.
        let seven: Vec<Value> = (0..7)
            .map(|i| json!({ "query": format!("topic{}", (b'a' + i as u8) as char) }))
            .collect();
        let err = c
            .search_batch(
                &request(json!({ "queries": seven })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap_err();
        assert!(
            err.message
                .starts_with("queries[6].limit: the limits together ask for 56 hits"),
            "{}",
            err.message
        );
        // A scalar query counts toward the budget, with its own limit.
        let err = c
            .search_batch(
                &request(json!({ "query": "topicd", "limit": 11, "queries": [
                { "query": "topica", "limit": 20 }, { "query": "topicb", "limit": 20 }] })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap_err();
        assert!(
            err.message
                .starts_with("queries[1].limit: the limits together ask for 51 hits"),
            "{}",
            err.message
        );
        assert_eq!(c.telemetry().search_count, 0);
        let fifty = json!({ "query": "topicd", "limit": 10, "queries": [{ "query": "topica", "limit": 20 }, { "query": "topicb", "limit": 20 }] });
        assert!(c
            .search_batch(&request(fifty), &QueryVectorSet::embed_here())
            .is_ok());
    }

    #[test]
    fn a_blank_query_at_any_position_is_refused_naming_it() {
        let c = catalog(sixteen_tools());
        let err = c
            .search_batch(&request(json!({ "queries": [{ "query": "topica" }, { "query": "topicb" }, { "query": " \t " }] })), &QueryVectorSet::embed_here())
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidQuery);
        assert!(
            err.message.starts_with("queries[2].query is blank"),
            "{}",
            err.message
        );
        let err = c
            .search_batch(
                &request(json!({ "queries": [{ "query": "" }, { "query": "topicb" }] })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap_err();
        assert!(
            err.message.starts_with("queries[0].query is blank"),
            "{}",
            err.message
        );
        assert_eq!(c.telemetry().search_count, 0);
        // A blank scalar query beside a batch is ignored.
        let ok = c
            .search_batch(
                &request(json!({ "query": " ", "queries": [{ "query": "topica" }] })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap();
        assert_eq!(ok.results.len(), 1);
    }

    #[test]
    fn groups_echo_the_trimmed_query() {
        let c = catalog(sixteen_tools());
        let result = c
            .search_batch(
                &request(json!({ "query": "  topicc ", "queries": [{ "query": "\ttopica  " }] })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap();
        let queries: Vec<&str> = result.results.iter().map(|g| g.query.as_str()).collect();
        assert_eq!(queries, ["topicc", "topica"]);
        assert_eq!(result.results[1].candidates[0].name, "tool_topica");
    }

    #[test]
    fn a_scalar_query_counts_toward_the_query_budget() {
        let c = catalog(sixteen_tools());
        let sixteen: Vec<Value> = (0..16)
            .map(|i| json!({ "query": format!("topic{}", (b'a' + i as u8) as char), "limit": 1 }))
            .collect();
        let err = c
            .search_batch(
                &request(json!({ "query": "topica", "limit": 1, "queries": sixteen })),
                &QueryVectorSet::embed_here(),
            )
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidQuery);
        assert!(err.message.contains("got 17"), "{}", err.message);
    }

    #[test]
    fn a_batch_counts_one_search_per_query() {
        let c = catalog(sixteen_tools());
        let queries: Vec<Value> = (0..5)
            .map(|i| json!({ "query": format!("topic{}", (b'a' + i as u8) as char) }))
            .collect();
        c.search_batch(
            &request(json!({ "queries": queries })),
            &QueryVectorSet::embed_here(),
        )
        .unwrap();
        assert_eq!(c.telemetry().search_count, 5);
        c.search_batch(
            &request(json!({ "query": "topica", "queries": [{ "query": "topicb" }] })),
            &QueryVectorSet::embed_here(),
        )
        .unwrap();
        assert_eq!(c.telemetry().search_count, 7);
        c.search("topicc", &SearchOptions::hits(None)).unwrap();
        assert_eq!(c.telemetry().search_count, 8);
    }
}

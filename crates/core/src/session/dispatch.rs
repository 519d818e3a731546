//! Answering model tool calls. Every path resolves against the session's
//! policy-filtered catalog, validates trusted input before anything runs,
//! and maps the executor's answer without retrying or swapping tools.

use std::time::Instant;

use serde_json::{json, Map, Value};
use tool_search_base::text::{clip, prefix};

use super::args::{self, CallSpec, SearchRequest};
use super::cancel::{until_cancelled, CancelSignal};
use super::events::{Outcome, SessionEvent, ToolRef};
use super::executor::{offloaded, CodeContext, ExecutorCall, ExecutorOutcome, OffloadHandle};
use super::result::{Failure, ResultError, ResultStatus, ToolResult, CANCELLED, TOOL_FAILED};
use super::{control_names, control_set, Session};
use crate::catalog::{Catalog, LookupStyle, QueryVectorSet, SearchOptions, Source, ToolEntry};
use crate::config::Mode;
use crate::error::{Error, ErrorCode};
use crate::limits::{
    MAX_ARGS_BYTES, MAX_CODE_CHARS, MAX_JSON_DEPTH, MAX_JSON_VALUES, MAX_REASON_CHARS,
};
use crate::surfaces::control::{TOOL_CALL, TOOL_DESCRIBE, TOOL_SEARCH, TOOL_SEARCH_CODE};
use crate::surfaces::CONTROL_TOOL_NAMES;

const VIA_DIRECT: &str = "direct";

/// Per-call options of [`Session::handle`].
#[derive(Debug, Clone, Default)]
pub struct HandleOptions {
    /// The provider's tool call id; generated when absent.
    pub tool_call_id: Option<String>,
    /// Cancels the call (and a code cell's outstanding bridged calls).
    pub cancel: Option<CancelSignal>,
    /// Where argument validation runs (off the async workers); inline when absent.
    pub offload: Option<OffloadHandle>,
}

/// Context of a bridged `openclaw.tools.call` from a code cell.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// The executor's call id; when absent, a bridged call with a parent gets
    /// `tool_search_code:<parent>:<tool name>:<sequence>`.
    pub tool_call_id: Option<String>,
    pub parent_tool_call_id: Option<String>,
    /// 1-based position of this call among the cell's calls.
    pub sequence: Option<u64>,
    pub cancel: CancelSignal,
    pub offload: Option<OffloadHandle>,
}

fn ms(start: Instant) -> f64 {
    (start.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

fn tool_ref(e: &ToolEntry) -> ToolRef {
    ToolRef {
        id: e.id.clone(),
        name: e.name.clone(),
        source: e.source,
        owner: e.owner.clone(),
    }
}

fn requested_of(raw: &Value) -> String {
    let text = match raw {
        Value::String(s) => s.as_str(),
        Value::Object(m) => ["id", "toolId", "tool_id", "name"]
            .iter()
            .find_map(|k| m.get(*k)?.as_str())
            .unwrap_or(""),
        _ => "",
    };
    clip(text, 200)
}

/// Longest query quoted in a weak-match note (chars).
const NOTE_QUERY_CHARS: usize = 80;

/// "Note: no tool matched well ..." when the best hit of a search (or of
/// some queries of a batch) is marked weak: it shares only common words with
/// the query.
fn weak_note(value: &Value) -> Option<String> {
    let top_is_weak = |hits: &Value| {
        hits.get(0)
            .and_then(|h| h.get("weak"))
            .and_then(Value::as_bool)
            == Some(true)
    };
    const ADVICE: &str = "hits marked \"weak\": true share only common words with the query and are probably not the \
        tool you need; search again with the capability's own words (what the tool does) before calling one.";
    match value {
        Value::Array(_) => {
            top_is_weak(value).then(|| format!("Note: no tool matched well; {ADVICE}"))
        }
        Value::Object(batch) => {
            let weak: Vec<String> = batch
                .get("results")?
                .as_array()?
                .iter()
                .filter(|group| group.get("candidates").is_some_and(top_is_weak))
                .filter_map(|group| {
                    group
                        .get("query")?
                        .as_str()
                        .map(|q| Value::String(clip(q, NOTE_QUERY_CHARS)).to_string())
                })
                .collect();
            (!weak.is_empty())
                .then(|| format!("Note: no tool matched {} well; {ADVICE}", weak.join(", ")))
        }
        _ => None,
    }
}

/// "Note: the query was 5,000 characters; ..." for a scalar query searched on its prefix.
fn note_for_long_query(request: Option<SearchRequest>) -> Option<String> {
    match request {
        Some(SearchRequest::Single { cut_from: Some(total), query, .. }) => Some(format!(
            "Note: the query was {total} characters; only its first {} were searched. For several capabilities, use \
             queries: [{{ query }}, ...] with a few words each.",
            query.chars().count()
        )),
        _ => None,
    }
}

/// A search's answer: the queries, whether the batch was cut, the value the model sees, and
/// per query the ids it was shown (the event's hit ids, and what learning attributes a call to).
struct Searched {
    queries: Vec<String>,
    truncated: bool,
    value: Value,
    shown: Vec<(String, Vec<String>)>,
}

/// A parsed search request run with `vectors` (see [`QueryVectorSet`]).
fn run_search(
    catalog: &Catalog,
    request: SearchRequest,
    vectors: &QueryVectorSet,
) -> crate::Result<Searched> {
    match request {
        SearchRequest::Single { query, limit, .. } => {
            let options = SearchOptions::hits(limit).with_vectors(vectors);
            catalog.search(&query, &options).map(|hits| {
                let ids: Vec<String> = hits.iter().map(|h| h.id.clone()).collect();
                Searched {
                    queries: vec![query.clone()],
                    truncated: false,
                    value: serde_json::to_value(&hits).unwrap_or(Value::Null),
                    shown: vec![(query, ids)],
                }
            })
        }
        SearchRequest::Batch(batch) => {
            catalog
                .search_batch(&batch.to_request(), vectors)
                .map(|result| {
                    let shown = result
                        .results
                        .iter()
                        .map(|g| {
                            (
                                g.query.clone(),
                                g.candidates.iter().map(|h| h.id.clone()).collect(),
                            )
                        })
                        .collect();
                    Searched {
                        queries: batch.all_queries(),
                        truncated: result.truncated,
                        value: serde_json::to_value(&result).unwrap_or(Value::Null),
                        shown,
                    }
                })
        }
    }
}

/// A code cell's `search(query, options)` as a `tool_search` request.
fn search_json_request(query: &str, options: &Value) -> Result<Value, Failure> {
    let mut raw = Map::new();
    raw.insert("query".into(), Value::String(query.to_string()));
    match options {
        Value::Null => {}
        Value::Object(o) => {
            if let Some(limit) = o.get("limit") {
                raw.insert("limit".into(), limit.clone());
            }
        }
        _ => {
            return Err(Failure::error(
                ErrorCode::InvalidRequest,
                "search options must be an object like { limit: 5 }.",
            ))
        }
    }
    Ok(Value::Object(raw))
}

fn guidance(style: LookupStyle) -> &'static str {
    match style {
        LookupStyle::Structured => TOOL_DESCRIBE,
        LookupStyle::Code => "openclaw.tools.describe",
    }
}

impl Session {
    /// Answer one model tool call by name. Never panics and never rejects: a
    /// failure is a result with `ok: false`, a stable code and a message for
    /// the model.
    pub async fn handle(&self, tool_name: &str, args: Value, options: HandleOptions) -> ToolResult {
        if tool_name == TOOL_SEARCH_CODE && self.offers(TOOL_SEARCH_CODE) {
            return self.run_code(args, options).await;
        }
        let note = (tool_name == TOOL_SEARCH)
            .then(|| self.unavailable_note(&args))
            .flatten();
        let long_query_note = (tool_name == TOOL_SEARCH)
            .then(|| note_for_long_query(args::parse_search(&args).ok()))
            .flatten();
        let outcome = self.dispatch(tool_name, args, options).await;
        let mut result = ToolResult::from_outcome(tool_name, outcome);
        // The model reads `content`: it learns why a tool it may expect is missing and
        // does not reach for an unrelated one. `value` keeps the contract's shape.
        if let (true, Some(note)) = (result.ok, note) {
            result.content.push('\n');
            result.content.push_str(&note);
        }
        // A long query was searched on its prefix: say so, so the model does not
        // take a miss for "nothing exists".
        if let (true, Some(note)) = (result.ok, long_query_note) {
            result.content.push('\n');
            result.content.push_str(&note);
        }
        // Likewise it learns that the best hits fit poorly, before it calls one of them.
        if let (true, Some(note)) = (
            result.ok && tool_name == TOOL_SEARCH,
            result.value.as_ref().and_then(weak_note),
        ) {
            result.content.push('\n');
            result.content.push_str(&note);
        }
        result
    }

    /// "Note: 3 matching tools from server github are unavailable (...)" when
    /// the search's best matches include tools of unavailable owners.
    fn unavailable_note(&self, args: &Value) -> Option<String> {
        let catalog = self.catalog();
        let queries: Vec<(String, usize)> = match args::parse_search(args).ok()? {
            args::SearchRequest::Single { query, limit, .. } => {
                vec![(query, catalog.limits().effective(limit).ok()?)]
            }
            args::SearchRequest::Batch(batch) => {
                let limit = catalog.limits().default_limit as usize;
                batch
                    .all_queries()
                    .into_iter()
                    .map(|q| (q, limit))
                    .collect()
            }
        };
        let mut groups: Vec<(Source, String, usize, String)> = Vec::new();
        for (query, limit) in &queries {
            for (source, owner, count, reason) in catalog.unavailable_matches(query, *limit) {
                match groups.iter_mut().find(|g| g.0 == source && g.1 == owner) {
                    Some(g) => g.2 = g.2.max(count),
                    None => groups.push((source, owner.to_string(), count, reason.to_string())),
                }
            }
        }
        if groups.is_empty() {
            return None;
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(source, owner, count, reason)| {
                let kind = match source {
                    Source::Mcp => "server",
                    Source::Openclaw => "plugin",
                    Source::Client => "client",
                };
                let tools = if *count == 1 { "tool" } else { "tools" };
                let verb = if *count == 1 { "is" } else { "are" };
                format!(
                    "{count} matching {tools} from {kind} {owner} {verb} unavailable ({reason})"
                )
            })
            .collect();
        Some(format!(
            "Note: {}; they cannot be called now.",
            parts.join("; ")
        ))
    }

    fn offers(&self, control_tool: &str) -> bool {
        control_names(control_set(self.mode())).contains(&control_tool)
    }

    async fn dispatch(
        &self,
        tool_name: &str,
        args: Value,
        options: HandleOptions,
    ) -> Result<Value, Failure> {
        if CONTROL_TOOL_NAMES.contains(&tool_name) && !self.offers(tool_name) {
            let offered = control_names(control_set(self.mode()));
            let hint = if offered.is_empty() {
                "Tool Search is disabled".to_string()
            } else {
                format!("use {}", offered.join(", "))
            };
            return Err(Failure::error(
                ErrorCode::ToolNotFound,
                format!(
                    "{tool_name} is not available in {} mode; {hint}.",
                    self.mode().as_str()
                ),
            ));
        }
        match tool_name {
            TOOL_SEARCH => {
                self.search_value(&args, TOOL_SEARCH, options.offload.as_ref())
                    .await
            }
            TOOL_DESCRIBE => self.describe_value(&args, LookupStyle::Structured, TOOL_DESCRIBE),
            TOOL_CALL => {
                let wrapper_id = options
                    .tool_call_id
                    .clone()
                    .unwrap_or_else(|| self.next_tool_call_id());
                let cancel = options.cancel.unwrap_or_default();
                match args::parse_call(self.catalog(), &args, LookupStyle::Structured) {
                    Ok(spec) => {
                        // The target call gets its own id and names the wrapper as its parent, so a
                        // gateway can project it into its transcript.
                        let name = self
                            .catalog()
                            .entry(spec.ordinal)
                            .map(|e| e.name.clone())
                            .unwrap_or_default();
                        let target_id = format!("{TOOL_CALL}:{wrapper_id}:{name}");
                        let offload = options.offload.clone();
                        self.execute(
                            spec,
                            TOOL_CALL,
                            target_id,
                            Some(wrapper_id),
                            cancel,
                            offload,
                            LookupStyle::Structured,
                        )
                        .await
                    }
                    Err(e) => Err(self.call_rejected(
                        TOOL_CALL,
                        &wrapper_id,
                        None,
                        requested_of(&args),
                        e,
                    )),
                }
            }
            name => self.direct_call(name, args, options).await,
        }
    }

    // ---- search ---------------------------------------------------------

    /// A search request, hybrid when the catalog is: query vectors not in
    /// the model's cache are embedded through `offload` (the binding's
    /// blocking pool), never on the thread polling this call.
    async fn search_value(
        &self,
        raw: &Value,
        via: &str,
        offload: Option<&OffloadHandle>,
    ) -> Result<Value, Failure> {
        let start = Instant::now();
        let catalog = self.catalog();
        let request = args::parse_search(raw);
        let vectors = match &request {
            Ok(request) => self.search_vectors(request, offload).await,
            Err(_) => QueryVectorSet::default(),
        };
        self.finish_search(
            via,
            start,
            request.and_then(|request| run_search(catalog, request, &vectors)),
        )
    }

    /// The query vectors `request` needs: the cached ones, and the others
    /// embedded through `offload` (inline without one). Lexical ranking needs
    /// none.
    async fn search_vectors(
        &self,
        request: &SearchRequest,
        offload: Option<&OffloadHandle>,
    ) -> QueryVectorSet {
        let catalog = self.catalog();
        let vectors = match request {
            SearchRequest::Single { query, .. } => catalog.query_vectors([query.as_str()]),
            SearchRequest::Batch(batch) => {
                let queries = catalog.batch_queries(&batch.to_request());
                catalog.query_vectors(queries.iter().map(String::as_str))
            }
        };
        if vectors.is_complete() {
            return vectors;
        }
        // A pool that dropped the job: the search ranks those queries lexically.
        offloaded(offload, move || vectors.complete())
            .await
            .unwrap_or_default()
    }

    fn finish_search(
        &self,
        via: &str,
        start: Instant,
        result: crate::Result<Searched>,
    ) -> Result<Value, Failure> {
        self.with_stats(|s| s.searches += 1);
        match result {
            Ok(Searched {
                queries,
                truncated,
                value,
                shown,
            }) => {
                let hit_ids = shown
                    .iter()
                    .flat_map(|(_, ids)| ids.iter().cloned())
                    .collect();
                if self.catalog().learns() {
                    self.with_stats(|s| s.remember_searches(shown));
                }
                self.emit(SessionEvent::Search {
                    via: via.to_string(),
                    queries,
                    hit_ids,
                    truncated,
                    duration_ms: ms(start),
                    outcome: Outcome::Ok,
                    error_code: None,
                });
                Ok(value)
            }
            Err(e) => {
                self.emit(SessionEvent::Search {
                    via: via.to_string(),
                    queries: Vec::new(),
                    hit_ids: Vec::new(),
                    truncated: false,
                    duration_ms: ms(start),
                    outcome: Outcome::Error,
                    error_code: Some(e.code.as_str().to_string()),
                });
                Err(e.into())
            }
        }
    }

    /// Code mode: `openclaw.tools.search(query, options?)` -> array of hits,
    /// answered on the calling thread: hybrid only with the query's vectors
    /// cached (see [`Session::search_json_needs_embedding`] and
    /// [`Session::search_json_async`]).
    pub fn search_json(&self, query: &str, options: &Value) -> Result<Value, Failure> {
        let raw = search_json_request(query, options)?;
        let start = Instant::now();
        let result = args::parse_search(&raw)
            .and_then(|request| run_search(self.catalog(), request, &QueryVectorSet::default()));
        self.finish_search(TOOL_SEARCH_CODE, start, result)
    }

    /// Whether a code cell's search of `query` would embed it (hybrid ranking
    /// and its vectors not cached): then [`Session::search_json_async`]
    /// answers it, embedding through `offload`.
    pub fn search_json_needs_embedding(&self, query: &str) -> bool {
        !self.catalog().query_vectors([query]).is_complete()
    }

    /// `search_json` with the query embedded through `offload` first.
    pub async fn search_json_async(
        &self,
        query: &str,
        options: &Value,
        offload: Option<&OffloadHandle>,
    ) -> Result<Value, Failure> {
        let raw = search_json_request(query, options)?;
        self.search_value(&raw, TOOL_SEARCH_CODE, offload).await
    }

    // ---- describe -------------------------------------------------------

    fn describe_value(&self, raw: &Value, style: LookupStyle, via: &str) -> Result<Value, Failure> {
        let start = Instant::now();
        let catalog = self.catalog();
        let result = args::parse_describe(catalog, raw, style).and_then(|(_, ordinal)| {
            let entry = catalog
                .entry(ordinal)
                .ok_or_else(|| Error::internal("resolved tool is not allowed"))?;
            catalog
                .describe(&entry.id, style)
                .map(|d| (tool_ref(entry), d))
        });
        self.with_stats(|s| s.describes += 1);
        let (tool, outcome, error_code, value) = match result {
            Ok((tool, description)) => (
                Some(tool),
                Outcome::Ok,
                None,
                Ok(serde_json::to_value(&description).unwrap_or(Value::Null)),
            ),
            Err(e) => (
                None,
                Outcome::Error,
                Some(e.code.as_str().to_string()),
                Err(Failure::from(e)),
            ),
        };
        self.emit(SessionEvent::Describe {
            via: via.to_string(),
            requested: requested_of(raw),
            tool,
            duration_ms: ms(start),
            outcome,
            error_code,
        });
        value
    }

    /// Code mode: `openclaw.tools.describe(id)`.
    pub fn describe_json(&self, id: &str) -> Result<Value, Failure> {
        let mut raw = Map::new();
        raw.insert("id".into(), Value::String(id.to_string()));
        self.describe_value(&Value::Object(raw), LookupStyle::Code, TOOL_SEARCH_CODE)
    }

    // ---- call -----------------------------------------------------------

    /// Code mode: `openclaw.tools.call(id, args?)` -> `{ tool, result }`.
    pub async fn call(
        &self,
        id: &str,
        args: Value,
        context: CallContext,
    ) -> Result<Value, Failure> {
        let parent = context.parent_tool_call_id;
        let resolved = self.catalog().resolve_ordinal(id, LookupStyle::Code);
        let name = resolved
            .as_ref()
            .ok()
            .and_then(|&o| self.catalog().entry(o))
            .map(|e| e.name.clone());
        let tool_call_id = match (context.tool_call_id, &parent) {
            (Some(id), _) => id,
            (None, Some(parent)) => {
                let sequence = context.sequence.unwrap_or(0);
                format!(
                    "{TOOL_SEARCH_CODE}:{parent}:{}:{sequence}",
                    name.as_deref().unwrap_or_else(|| prefix(id, 120))
                )
            }
            (None, None) => self.next_tool_call_id(),
        };
        let ordinal = match resolved {
            Ok(o) => o,
            Err(e) => {
                return Err(self.call_rejected(
                    TOOL_SEARCH_CODE,
                    &tool_call_id,
                    parent,
                    clip(id, 200),
                    e,
                ))
            }
        };
        let spec = CallSpec {
            requested: id.to_string(),
            ordinal,
            args,
            repaired: None,
        };
        self.execute(
            spec,
            TOOL_SEARCH_CODE,
            tool_call_id,
            parent,
            context.cancel,
            context.offload,
            LookupStyle::Code,
        )
        .await
    }

    /// A direct call of an exact catalog tool name (direct and directory
    /// modes). Ids, near-misses and names held by several tools are refused.
    async fn direct_call(
        &self,
        name: &str,
        raw: Value,
        options: HandleOptions,
    ) -> Result<Value, Failure> {
        let tool_call_id = options
            .tool_call_id
            .clone()
            .unwrap_or_else(|| self.next_tool_call_id());
        let resolved = self.resolve_direct_name(name);
        let ordinal = match resolved {
            Ok(o) => o,
            Err(e) => {
                return Err(self.call_rejected(VIA_DIRECT, &tool_call_id, None, clip(name, 200), e))
            }
        };
        let args = match args::object_args(&raw, "Tool arguments") {
            Ok(map) => Value::Object(map),
            Err(e) => {
                return Err(self.call_rejected(VIA_DIRECT, &tool_call_id, None, clip(name, 200), e))
            }
        };
        let spec = CallSpec {
            requested: name.to_string(),
            ordinal,
            args,
            repaired: None,
        };
        let cancel = options.cancel.unwrap_or_default();
        self.execute(
            spec,
            VIA_DIRECT,
            tool_call_id,
            None,
            cancel,
            options.offload,
            LookupStyle::Structured,
        )
        .await
    }

    fn resolve_direct_name(&self, name: &str) -> crate::Result<usize> {
        if self.inner.direct_names.contains(name) {
            return Err(Error::invalid_request(format!(
                "{} is one of the gateway's direct tools; the gateway runs it, not Tool Search.",
                clip(name, 120)
            )));
        }
        let not_found = || {
            let offered = control_names(control_set(self.mode()));
            Error::new(
                ErrorCode::ToolNotFound,
                format!(
                    "Unknown tool: {}. Available: {}.",
                    clip(name, 120),
                    offered.join(", ")
                ),
            )
        };
        match self.mode() {
            Mode::Direct => self
                .inner
                .direct_mode_names
                .get(name)
                .copied()
                .ok_or_else(not_found),
            Mode::Directory => {
                let ordinals: Vec<usize> = self.exact_name_ordinals(name).take(2).collect();
                match ordinals.as_slice() {
                    [one] => Ok(*one),
                    [] => match self.catalog().resolve_ordinal(name, LookupStyle::Structured) {
                        // Exact id: only a name may be called directly.
                        Ok(_) => Err(Error::new(
                            ErrorCode::ToolNotFound,
                            format!(
                                "{} is a tool id, not a tool name; call tool_call with {{ \"id\": \"{}\", \"args\": {{...}} }}.",
                                clip(name, 120),
                                clip(name, 120)
                            ),
                        )),
                        Err(e) => Err(e),
                    },
                    _ => Err(Error::new(
                        ErrorCode::AmbiguousTool,
                        format!("Ambiguous tool name: {}; use tool_call with an exact tool id.", clip(name, 120)),
                    )),
                }
            }
            Mode::Code | Mode::Tools => Err(not_found()),
        }
    }

    /// Record and report a call refused before a tool was chosen.
    fn call_rejected(
        &self,
        via: &str,
        tool_call_id: &str,
        parent: Option<String>,
        requested: String,
        error: Error,
    ) -> Failure {
        self.with_stats(|s| s.calls += 1);
        self.emit(SessionEvent::Call {
            via: via.to_string(),
            tool_call_id: tool_call_id.to_string(),
            parent_tool_call_id: parent,
            requested,
            tool: None,
            repaired: false,
            duration_ms: 0.0,
            outcome: Outcome::Error,
            error_code: Some(error.code.as_str().to_string()),
        });
        error.into()
    }

    #[allow(clippy::too_many_arguments)]
    async fn execute(
        &self,
        spec: CallSpec,
        via: &str,
        tool_call_id: String,
        parent: Option<String>,
        cancel: CancelSignal,
        offload: Option<OffloadHandle>,
        style: LookupStyle,
    ) -> Result<Value, Failure> {
        let start = Instant::now();
        let Some(entry) = self.catalog().entry(spec.ordinal).cloned() else {
            let e = Error::new(ErrorCode::ToolNotFound, "tool is not in this catalog");
            return Err(self.call_rejected(
                via,
                &tool_call_id,
                parent,
                clip(&spec.requested, 200),
                e,
            ));
        };
        let tool = tool_ref(&entry);
        // `counted`: the call counts against the tool (the executor was reached,
        // or the tool is known but its owner unavailable).
        let (result, counted) = match self.catalog().unavailable_reason(spec.ordinal) {
            // A known tool that cannot run now: never run, and counted and reported
            // like a tool the executor found gone (outcome `unavailable`).
            Some(reason) => {
                let message = format!("{} is unavailable ({reason}); it was not run. Search again for another way to do this.", entry.id);
                (
                    Err(Error::new(ErrorCode::ToolUnavailable, message).into()),
                    true,
                )
            }
            None => {
                self.execute_inner(
                    &entry,
                    spec.ordinal,
                    spec.args,
                    &tool_call_id,
                    &parent,
                    cancel,
                    offload,
                    style,
                )
                .await
            }
        };
        let outcome = match &result {
            Ok(_) => Outcome::Ok,
            Err(f) => f.outcome,
        };
        if counted {
            self.learn_from_call(&entry, outcome == Outcome::Ok);
        }
        self.with_stats(|s| {
            s.calls += 1;
            if counted {
                s.record_call(&tool, via, outcome);
            }
        });
        self.emit(SessionEvent::Call {
            via: via.to_string(),
            tool_call_id,
            parent_tool_call_id: parent,
            requested: clip(&spec.requested, 200),
            tool: Some(tool),
            repaired: spec.repaired.is_some(),
            duration_ms: ms(start),
            outcome,
            error_code: result.as_ref().err().map(|f| f.code.clone()),
        });
        if let Some(repair) = &spec.repaired {
            tracing::debug!(target: "tool_search::session", id = entry.id.as_str(), repair = repair.as_str(), "tool_call arguments repaired");
        }
        result
    }

    /// Teaches the catalog's learned ranking what a call of `entry` says about the search that
    /// showed it: the latest search of this session whose hits included the tool. A call no
    /// search showed (the model knew the name) teaches nothing.
    fn learn_from_call(&self, entry: &ToolEntry, ok: bool) {
        let catalog = self.catalog();
        if !catalog.learns() {
            return;
        }
        let mut query = None;
        self.with_stats(|s| query = s.search_that_showed(&entry.id));
        if let Some(query) = query {
            let outcome = crate::catalog::Outcome {
                query,
                id: entry.id.to_string(),
                ok,
            };
            if let Ok(recorded) = catalog.record_outcome(&outcome) {
                if recorded.learned {
                    self.with_stats(|s| s.learned += 1);
                }
            }
        }
    }

    /// Validate, then run through the executor. The bool says whether the
    /// executor was reached.
    #[allow(clippy::too_many_arguments)]
    async fn execute_inner(
        &self,
        entry: &ToolEntry,
        ordinal: usize,
        args: Value,
        tool_call_id: &str,
        parent: &Option<String>,
        cancel: CancelSignal,
        offload: Option<OffloadHandle>,
        style: LookupStyle,
    ) -> (Result<Value, Failure>, bool) {
        let args = match args {
            Value::Null => Value::Object(Map::new()),
            Value::Object(map) => Value::Object(map),
            _ => {
                return (
                    Err(Failure::error(
                        ErrorCode::InvalidArgs,
                        format!(
                            "Arguments for {} must be a JSON object. Nothing was run.",
                            entry.id
                        ),
                    )),
                    false,
                )
            }
        };
        // Bounds and schema validation off the async workers: their cost grows with the
        // arguments and the schema, and a worker busy here would delay other cells' deadlines.
        let catalog = self.catalog().clone();
        let trusted = entry.is_trusted();
        let checked = offloaded(offload.as_ref(), move || {
            let verdict = check_args(&catalog, ordinal, trusted, &args);
            (args, verdict)
        })
        .await;
        let args = match checked {
            Some((args, Ok(()))) => args,
            Some((_, Err(ArgsProblem::Bounds(why)))) => {
                return (
                    Err(Failure::error(
                        ErrorCode::InvalidArgs,
                        format!("Arguments for {}: {why} Nothing was run.", entry.id),
                    )),
                    false,
                )
            }
            Some((_, Err(ArgsProblem::Invalid(issues)))) => {
                // The tool's input hint: what a valid call looks like, without a describe round trip.
                let expected = self.catalog().data().input_hint(ordinal).to_string();
                let message = format!(
                    "Invalid arguments for {}: {} Expected input: {expected}. Nothing was run; fix the arguments (the full schema is in {}) and call again.",
                    entry.id,
                    issues.join(" "),
                    guidance(style)
                );
                return (Err(Failure::error(ErrorCode::InvalidArgs, message)), false);
            }
            // An unusable schema cannot vouch for the input: fail closed.
            Some((_, Err(ArgsProblem::Schema(e)))) => {
                let message = format!(
                    "{} cannot be called: its input schema is unusable ({}). Nothing was run.",
                    entry.id, e.message
                );
                return (
                    Err(Failure::new(e.code.as_str(), message, Outcome::Error)),
                    false,
                );
            }
            None => {
                let message = format!("{} was not run: its arguments could not be validated (the gateway is shutting down).", entry.id);
                return (Err(Failure::error(ErrorCode::Internal, message)), false);
            }
        };
        if cancel.is_cancelled() {
            return (Err(cancelled(entry, &cancel)), false);
        }
        self.catalog().counters().record_call();
        let call = ExecutorCall {
            id: entry.id.clone(),
            name: entry.name.clone(),
            source: entry.source,
            owner: entry.owner.clone(),
            args,
            tool_call_id: tool_call_id.to_string(),
            parent_tool_call_id: parent.clone(),
            cancel: cancel.clone(),
        };
        let future = self.inner.executor.call(call);
        let result = match until_cancelled(future, &cancel).await {
            None => Err(cancelled(entry, &cancel)),
            // A trusted tool's result must match its declared output schema: a mismatch is a
            // failed call, never passed on as if it matched.
            Some(ExecutorOutcome::Ok(result)) => match self.catalog().check_output(ordinal, &result) {
                Ok(()) => Ok(json!({ "tool": compact_tool(self, ordinal), "result": result })),
                Err(mismatch) => Err(Failure::new(
                    TOOL_FAILED,
                    format!("{} failed: {}", entry.id, clip(&mismatch, MAX_REASON_CHARS)),
                    Outcome::Error,
                )),
            },
            Some(ExecutorOutcome::Missing(reason)) => Err(Failure::new(
                ErrorCode::ToolUnavailable.as_str(),
                format!(
                    "{} is no longer available ({}); it was not run. Search again for another way to do this.",
                    entry.id,
                    clip(reason_or(&reason, "removed since the catalog was built"), MAX_REASON_CHARS)
                ),
                Outcome::Unavailable,
            )),
            Some(ExecutorOutcome::Blocked(reason)) => Err(Failure::new(
                ErrorCode::ToolBlocked.as_str(),
                format!(
                    "The call to {} was blocked: {}. Do not retry it or reach the same action through another tool; tell the user if it is needed.",
                    entry.id,
                    clip(reason_or(&reason, "not allowed"), MAX_REASON_CHARS)
                ),
                Outcome::Blocked,
            )),
            Some(ExecutorOutcome::Failed(error)) => Err(Failure::new(
                TOOL_FAILED,
                format!("{} failed: {}", entry.id, clip(reason_or(&error, "unknown error"), MAX_REASON_CHARS)),
                Outcome::Error,
            )),
        };
        (result, true)
    }

    // ---- code -----------------------------------------------------------

    async fn run_code(&self, raw: Value, options: HandleOptions) -> ToolResult {
        let start = Instant::now();
        let tool_call_id = options
            .tool_call_id
            .unwrap_or_else(|| self.next_tool_call_id());
        let cancel = options.cancel.unwrap_or_default();
        let code = match &raw {
            Value::String(s) if !s.trim_start().starts_with('{') => Ok(s.clone()),
            _ => args::object_args(&raw, "tool_search_code arguments").and_then(|m| match m.get("code") {
                Some(Value::String(code)) => Ok(code.clone()),
                _ => Err(Error::invalid_request("tool_search_code needs { \"code\": string }: a JavaScript async function body.")),
            }),
        };
        let code = code.and_then(|c| {
            if c.chars().count() > MAX_CODE_CHARS {
                Err(Error::invalid_request(format!(
                    "code must be at most {MAX_CODE_CHARS} characters."
                )))
            } else {
                Ok(c)
            }
        });
        let runner = self.code_runner();
        let (status, value, error) = match (code, runner) {
            (Err(e), _) => (ResultStatus::Error, None, Some(ResultError { code: e.code.as_str().into(), message: e.message })),
            (Ok(_), None) => (
                ResultStatus::Error,
                None,
                Some(ResultError {
                    code: ErrorCode::CodeModeUnavailable.as_str().into(),
                    message: "Code mode is not available in this session (no sandbox runner); nothing was run.".into(),
                }),
            ),
            (Ok(code), Some(runner)) => {
                let context = CodeContext { tool_call_id: tool_call_id.clone(), cancel, timeout_ms: self.config().code_timeout_ms };
                let value = runner.run(self.clone(), code, context).await;
                match value.get("ok") {
                    Some(Value::Bool(true)) => (ResultStatus::Ok, Some(value), None),
                    _ => {
                        let code = value.pointer("/error/code").and_then(Value::as_str).unwrap_or("CODE_FAILED").to_string();
                        let message = value
                            .pointer("/error/message")
                            .and_then(Value::as_str)
                            .unwrap_or("The code cell failed.")
                            .to_string();
                        (ResultStatus::Error, Some(value), Some(ResultError { code, message }))
                    }
                }
            }
        };
        let outcome = if status == ResultStatus::Ok {
            Outcome::Ok
        } else {
            Outcome::Error
        };
        self.with_stats(|s| s.code_runs += 1);
        self.emit(SessionEvent::Code {
            tool_call_id,
            duration_ms: ms(start),
            outcome,
            error_code: error.as_ref().map(|e| e.code.clone()),
        });
        let content = match (&value, &error) {
            (Some(v), _) => serde_json::to_string(&without_telemetry(v)).unwrap_or_default(),
            (None, Some(e)) => e.message.clone(),
            (None, None) => String::new(),
        };
        ToolResult {
            ok: status == ResultStatus::Ok,
            status,
            tool_name: TOOL_SEARCH_CODE.into(),
            value,
            error,
            content,
        }
    }
}

/// A cell's result as the model reads it: its value or error and its logs. The cell's
/// telemetry (the child's pid, its Node, the containment applied) is for the gateway, in
/// `value`, not for the model.
fn without_telemetry(result: &Value) -> Value {
    match result {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter(|(key, _)| key.as_str() != "telemetry")
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn reason_or<'a>(reason: &'a str, fallback: &'a str) -> &'a str {
    if reason.trim().is_empty() {
        fallback
    } else {
        reason.trim()
    }
}

fn cancelled(entry: &ToolEntry, cancel: &CancelSignal) -> Failure {
    let reason = cancel.reason().unwrap_or_else(|| "cancelled".into());
    Failure::new(
        CANCELLED,
        format!(
            "The call to {} was cancelled ({}).",
            entry.id,
            clip(&reason, 200)
        ),
        Outcome::Cancelled,
    )
}

/// `{ id, name, source, sourceName, mcp? }` of the tool that ran.
fn compact_tool(session: &Session, ordinal: usize) -> Value {
    let Some(hit) = session.catalog().hit(ordinal) else {
        return Value::Null;
    };
    let mut out = Map::new();
    out.insert("id".into(), hit.id.into());
    out.insert("name".into(), hit.name.into());
    out.insert("source".into(), hit.source.as_str().into());
    out.insert("sourceName".into(), hit.source_name.into());
    if let Some(mcp) = hit.mcp {
        out.insert(
            "mcp".into(),
            serde_json::to_value(mcp).unwrap_or(Value::Null),
        );
    }
    Value::Object(out)
}

enum ArgsProblem {
    Bounds(String),
    Invalid(Vec<String>),
    Schema(Error),
}

/// Size, depth and value-count bounds for every tool; schema validation for trusted ones.
fn check_args(
    catalog: &crate::catalog::Catalog,
    ordinal: usize,
    trusted: bool,
    args: &Value,
) -> Result<(), ArgsProblem> {
    let size = crate::schema::measure(args, MAX_JSON_DEPTH, MAX_ARGS_BYTES)
        .map_err(ArgsProblem::Bounds)?;
    if size.values > MAX_JSON_VALUES as u64 {
        return Err(ArgsProblem::Bounds(format!(
            "more than {MAX_JSON_VALUES} JSON values (each array item and object property counts); pass fewer items per call."
        )));
    }
    if !trusted {
        return Ok(());
    }
    match catalog.validate_ordinal(ordinal, args) {
        Ok(v) if v.ok => Ok(()),
        Ok(v) => Err(ArgsProblem::Invalid(
            v.errors.iter().map(|i| i.message.clone()).collect(),
        )),
        Err(e) => Err(ArgsProblem::Schema(e)),
    }
}

//! Fuzz entry points for `tool-search-core`, shared by the libFuzzer targets
//! (fuzz/fuzz_targets/*.rs, through fuzz/src/lib.rs) and the stable replay
//! test (crates/core/tests/fuzz_replay.rs, through `#[path]`), so a corpus or
//! crash file runs the same code in both. Each entry takes arbitrary bytes,
//! must return normally for every input, and only feeds a function what the
//! production path can hand it (the bounds the callers apply are applied here).

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

use serde_json::{json, Value};
use tool_search_core::catalog::{
    BatchQuery, BatchRequest, Catalog, CatalogOptions, LookupStyle, QueryVectorSet, SearchOptions,
};
use tool_search_core::limits::{MAX_ARGS_BYTES, MAX_JSON_DEPTH, MAX_SCHEMA_BYTES};
use tool_search_core::schema::{self, check_bounds, CompiledSchema};
use tool_search_core::session::args::{self, SearchRequest};
use tool_search_core::session::{
    BoxFuture, CallContext, Executor, ExecutorCall, ExecutorOutcome, HandleOptions, Session,
    SessionOptions,
};

/// The catalog the query and control-argument targets run against: the
/// node tests' sample catalog (331 real tools).
const SAMPLE_CATALOG: &str = include_str!("../../__test__/data/sample-catalog.jsonl");

/// Tools with the shapes argument repair cares about (a `name` parameter, a
/// direct-only tool, an MCP and a client tool), as in the session unit tests.
fn repair_tools() -> Vec<Value> {
    vec![
        json!({ "name": "get_weather", "owner": "weather", "description": "Current weather and forecast for a city.",
                "inputSchema": { "type": "object", "properties": { "city": { "type": "string" }, "units": { "enum": ["metric", "imperial"] } },
                                 "required": ["city"], "additionalProperties": false } }),
        json!({ "name": "send_message", "description": "Send a chat message to a channel.",
                "inputSchema": { "type": "object", "properties": { "channel": { "type": "string" }, "text": { "type": "string" } },
                                 "required": ["channel", "text"], "additionalProperties": false } }),
        json!({ "name": "create_user", "owner": "crm", "description": "Create a CRM user with a display name.",
                "inputSchema": { "type": "object", "properties": { "name": { "type": "string" }, "email": { "type": "string" } },
                                 "required": ["name"], "additionalProperties": false } }),
        json!({ "source": "mcp", "owner": "github", "name": "create_issue", "description": "Open a GitHub issue.",
                "inputSchema": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
                "outputSchema": { "type": "object", "properties": { "url": { "type": "string" } } } }),
        json!({ "source": "client", "name": "select_file", "description": "Let the user pick a file in the app.",
                "inputSchema": { "type": "object", "properties": {} } }),
        json!({ "name": "exec", "description": "Run a shell command.", "catalogMode": "direct-only",
                "inputSchema": { "type": "object", "properties": { "command": { "type": "string" } }, "required": ["command"] } }),
        json!({ "name": "get_wether_alerts", "owner": "weather", "description": "Weather alerts (a near-miss name for typo lookup).",
                "inputSchema": { "type": "object", "properties": { "region": { "type": "string", "pattern": "^[a-z]+$" } } } }),
    ]
}

/// A gateway that answers every call at once with the arguments it got: the
/// real `Executor` trait, so dispatch runs its full path up to the gateway.
struct EchoExecutor;

impl Executor for EchoExecutor {
    fn call(&self, call: ExecutorCall) -> BoxFuture<ExecutorOutcome> {
        let outcome = match call.name.as_str() {
            "send_message" => ExecutorOutcome::Blocked("blocked by policy".into()),
            "create_user" => ExecutorOutcome::Failed("backend down".into()),
            _ => ExecutorOutcome::Ok(
                json!({ "content": [{ "type": "text", "text": "ok" }], "details": call.args }),
            ),
        };
        Box::pin(async move { outcome })
    }
}

struct Fixtures {
    sample: Catalog,
    /// tools, directory, direct and code mode sessions over `repair_tools`.
    sessions: Vec<Session>,
}

fn fixtures() -> &'static Fixtures {
    static FIXTURES: OnceLock<Fixtures> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let sample = Catalog::from_json_text(SAMPLE_CATALOG, &CatalogOptions::default())
            .expect("sample catalog builds");
        let repair = Catalog::from_records(repair_tools(), &CatalogOptions::default())
            .expect("repair catalog builds");
        let sessions = [
            json!({ "mode": "tools" }),
            json!({ "mode": "directory" }),
            json!(false),
            json!({ "mode": "code" }),
        ]
        .iter()
        .map(|raw| {
            let config = tool_search_core::config::resolve(raw, true);
            Session::new(
                &repair,
                config,
                Arc::new(EchoExecutor),
                SessionOptions::default(),
            )
            .expect("session builds")
        })
        .collect();
        Fixtures { sample, sessions }
    })
}

/// Build the fixtures outside any per-input time budget (the fuzz targets call
/// this; the replay test builds them on first use).
pub fn warm() {
    fixtures();
}

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Drive a dispatch future; the echo executor never leaves it pending for long.
fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

/// A JSON value from fuzz bytes: the parsed document, or the text as a JSON
/// string (models send bare strings too).
fn json_or_string(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// Up to `n` JSON documents read one after another from `bytes`, stopping at
/// the first that does not parse.
fn json_values(bytes: &[u8], n: usize) -> Vec<Value> {
    serde_json::Deserializer::from_slice(bytes)
        .into_iter::<Value>()
        .take(n)
        .map_while(Result::ok)
        .collect()
}

// ---- 1. catalog records -------------------------------------------------

/// Catalog text (JSON array or JSON Lines) through splitting, per-record
/// parsing and, for small texts, a full build (policy, validation, index)
/// followed by describe / validate / search on what was built.
pub fn catalog_records(data: &[u8]) {
    catalog_records_with(data, false)
}

/// [`catalog_records`] building every small text (the replay test: a superset
/// of what the fuzzer ran, so every crash it saved still reproduces).
pub fn catalog_records_full(data: &[u8]) {
    catalog_records_with(data, true)
}

fn catalog_records_with(data: &[u8], build_all: bool) {
    // The binding takes a JS string, never invalid UTF-8; lossy text is what a
    // Buffer.toString() would hand over.
    let text = String::from_utf8_lossy(data);
    let len = data.len();
    // Splitting and the record reader (every record's fields, its errors).
    let _ = tool_search_core::catalog::parse_catalog_text(&text);
    // A build indexes with tantivy (milliseconds each); parsing takes
    // microseconds. Build for one small text in eight, chosen by content so a
    // replay makes the same choice.
    if len > 4096 || (!build_all && !fnv1a(data).is_multiple_of(8)) {
        return;
    }
    // Odd lengths build strictly; every fourth length goes through the
    // process-wide cache (bounded: a few recent builds), the rest bypass it;
    // every third length repairs the records it would refuse.
    let options = CatalogOptions {
        strict: len % 2 == 1,
        cache: Some(len.is_multiple_of(4)),
        repair: len.is_multiple_of(3),
        ..CatalogOptions::default()
    };
    let Ok(catalog) = Catalog::from_json_text(&text, &options) else {
        return;
    };
    let ids: Vec<(String, String)> = catalog
        .entries()
        .take(4)
        .map(|e| (e.id.clone(), e.name.clone()))
        .collect();
    for (id, name) in &ids {
        let _ = catalog.describe(id, LookupStyle::Structured);
        let _ = catalog.describe(name, LookupStyle::Code);
        let _ = catalog.validate_args(id, &json!({}));
        let _ = catalog.validate_args(id, &json!({ "a": 1, "b": [true, null, "x"] }));
        let _ = catalog.search(name, &SearchOptions::hits(None));
    }
    let _ = catalog.telemetry();
    if let Some((_, name)) = ids.first() {
        let _ = catalog
            .restrict(&[name.as_str()])
            .search(name, &SearchOptions::hits(Some(3.0)));
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

// ---- 2. queries -----------------------------------------------------------

/// Search requests against the sample catalog. The first byte picks the
/// request kind, the rest is the request: 0 a raw query (limit from the
/// first byte), 1 a JSON `BatchRequest` or newline-separated queries, 2
/// `tool_search` arguments as a model sends them, 3 `<id>\n<args JSON>` for
/// describe and validate.
pub fn queries(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let catalog = &fixtures().sample;
    match selector % 4 {
        0 => {
            let query = String::from_utf8_lossy(body);
            let limit = match selector / 4 {
                0 => None,
                n => Some(f64::from(n) - 1.0),
            };
            let _ = catalog.search(&query, &SearchOptions::hits(limit));
        }
        1 => {
            let request =
                serde_json::from_slice::<BatchRequest>(body).unwrap_or_else(|_| BatchRequest {
                    query: None,
                    limit: None,
                    queries: Some(
                        String::from_utf8_lossy(body)
                            .split('\n')
                            .map(|q| BatchQuery {
                                query: q.to_string(),
                                limit: None,
                            })
                            .collect(),
                    ),
                });
            let _ = catalog.search_batch(&request, &QueryVectorSet::embed_here());
        }
        2 => {
            let raw = json_or_string(body);
            match args::parse_search(&raw) {
                Ok(SearchRequest::Single { query, limit, .. }) => {
                    drop(catalog.search(&query, &SearchOptions::hits(limit)))
                }
                Ok(SearchRequest::Batch(batch)) => {
                    drop(catalog.search_batch(&batch.to_request(), &QueryVectorSet::embed_here()))
                }
                Err(_) => {}
            }
        }
        _ => {
            let text = String::from_utf8_lossy(body);
            let (id, rest) = text.split_once('\n').unwrap_or((&text, ""));
            let style = if selector & 4 == 0 {
                LookupStyle::Structured
            } else {
                LookupStyle::Code
            };
            let _ = catalog.describe(id, style);
            let args = json_or_string(rest.as_bytes());
            // Model arguments reach validation bounded (object_args).
            if check_bounds(&args, MAX_JSON_DEPTH, MAX_ARGS_BYTES).is_ok() {
                let _ = catalog.validate_args(id, &args);
            }
        }
    }
}

// ---- 3. input schemas -----------------------------------------------------

/// A schema document followed by up to three argument documents: hints,
/// parameter text, compile and validate, as a catalog entry's lazy data
/// does. Schemas pass the catalog's own admission check first (depth,
/// size, object or boolean), arguments the control tools' bound.
pub fn schemas(data: &[u8]) {
    let mut values = json_values(data, 4).into_iter();
    let Some(schema) = values.next() else { return };
    if check_bounds(&schema, MAX_JSON_DEPTH, MAX_SCHEMA_BYTES).is_err()
        || !(schema.is_object() || schema.is_boolean())
    {
        return;
    }
    let _ = schema::input_hint(Some(&schema));
    let _ = schema::output_hint(&schema);
    let mut arguments: Vec<Value> = values
        .filter(|a| check_bounds(a, MAX_JSON_DEPTH, MAX_ARGS_BYTES).is_ok())
        .collect();
    if arguments.is_empty() {
        arguments = vec![
            json!({}),
            json!({ "a": 1, "b": "x", "c": [null, true, 2.5] }),
        ];
    }
    let Ok(compiled) = CompiledSchema::compile(&schema) else {
        return;
    };
    for args in &arguments {
        let _ = compiled.validate(args);
    }
    let _ = schema::validate_args(&schema, &arguments[0]);
}

// ---- 5. control-tool arguments ----------------------------------------------

const CONTROL_TOOLS: [&str; 6] = [
    "tool_search",
    "tool_describe",
    "tool_call",
    "get_weather",
    "tool_search_code",
    "exec",
];

/// Model-written control-tool arguments through repair and full dispatch.
/// First byte: session mode (tools, directory, direct, code) and which tool
/// is called; the rest is the arguments (JSON, or a bare string). Also runs
/// the parsers directly in both lookup styles and the code-mode bridge
/// entry points (`search_json`, `describe_json`, `call`).
pub fn control_args(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let fixtures = fixtures();
    let session = &fixtures.sessions[usize::from(selector % 4)];
    let tool = CONTROL_TOOLS[usize::from(selector / 4) % CONTROL_TOOLS.len()];
    let raw = json_or_string(body);
    let catalog = session.catalog();
    let style = if selector & 0x80 == 0 {
        LookupStyle::Structured
    } else {
        LookupStyle::Code
    };
    let _ = args::parse_search(&raw);
    let _ = args::parse_describe(catalog, &raw, style);
    let _ = args::parse_call(catalog, &raw, style);
    let _ = block_on(session.handle(tool, raw.clone(), HandleOptions::default()));
    if selector % 4 == 3 {
        // Code mode: what a cell's bridged calls reach (the runner bounds frames first).
        if let Value::Object(map) = &raw {
            let id = map
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("get_weather");
            let query = map
                .get("query")
                .and_then(Value::as_str)
                .unwrap_or("weather");
            let options = map.get("options").cloned().unwrap_or_else(|| json!({}));
            let _ = session.search_json(query, &options);
            let _ = session.describe_json(id);
            let call_args = map.get("args").cloned().unwrap_or_else(|| json!({}));
            let _ = block_on(session.call(id, call_args, CallContext::default()));
        }
    }
}

//! Session rules: surfaces per mode (golden), dispatch, argument repair,
//! exact hidden-name dispatch, fail-closed handling, hydration, telemetry and
//! events. The executor here is a scripted test double for the gateway's
//! (the real one is JS, tested in __test__/session.test.mjs).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use serde_json::{json, Value};

use super::*;
use crate::catalog::{Catalog, CatalogOptions, SearchOptions};
use crate::config::resolve;
use crate::surfaces::tests::assert_golden;
use crate::surfaces::SurfaceFormat;

// ---- harness ------------------------------------------------------------

struct ThreadWaker(std::thread::Thread);
impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

pub(super) fn block_on<F: Future>(future: F) -> F::Output {
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

/// Scripted gateway: outcome per tool name (default: ok echo), records calls.
#[derive(Default)]
struct TestExecutor {
    outcomes: Mutex<HashMap<String, ExecutorOutcome>>,
    calls: Mutex<Vec<ExecutorCall>>,
    /// Tools whose call never finishes (for cancellation).
    hang: Mutex<Vec<String>>,
}

impl TestExecutor {
    fn with(name: &str, outcome: ExecutorOutcome) -> Arc<Self> {
        let e = TestExecutor::default();
        e.outcomes.lock().unwrap().insert(name.into(), outcome);
        Arc::new(e)
    }
    fn calls(&self) -> Vec<ExecutorCall> {
        self.calls.lock().unwrap().clone()
    }
}

impl Executor for TestExecutor {
    fn call(&self, call: ExecutorCall) -> BoxFuture<ExecutorOutcome> {
        self.calls.lock().unwrap().push(call.clone());
        if self.hang.lock().unwrap().contains(&call.name) {
            return Box::pin(std::future::pending());
        }
        let outcome = self.outcomes.lock().unwrap().get(&call.name).cloned().unwrap_or_else(|| {
            ExecutorOutcome::Ok(json!({ "content": [{ "type": "text", "text": format!("OK {}", call.name) }], "details": call.args }))
        });
        Box::pin(async move { outcome })
    }
}

fn marker_tool(name: &str, description: &str) -> Value {
    json!({ "name": name, "description": description,
            "inputSchema": { "type": "object", "properties": { "marker": { "type": "string" } },
                             "required": ["marker"], "additionalProperties": false } })
}

fn sample_tools() -> Vec<Value> {
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
                "inputSchema": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] } }),
        json!({ "source": "client", "name": "select_file", "description": "Let the user pick a file in the app.",
                "inputSchema": { "type": "object", "properties": {} } }),
        json!({ "name": "exec", "description": "Run a shell command.", "catalogMode": "direct-only",
                "inputSchema": { "type": "object", "properties": { "command": { "type": "string" } }, "required": ["command"] } }),
        marker_tool("fake_plugin_tool_01", "Fake plugin tool number one for QA."),
    ]
}

fn catalog_of(tools: Vec<Value>) -> Catalog {
    Catalog::from_records(tools, &CatalogOptions::default()).unwrap()
}

fn config(raw: Value) -> crate::config::ResolvedConfig {
    resolve(&raw, true)
}

fn session_with(
    tools: Vec<Value>,
    raw_config: Value,
    executor: Arc<TestExecutor>,
    options: SessionOptions,
) -> crate::Result<Session> {
    Session::new(&catalog_of(tools), config(raw_config), executor, options)
}

fn session(mode: &str) -> (Session, Arc<TestExecutor>) {
    let executor = Arc::new(TestExecutor::default());
    let raw = if mode == "direct" {
        json!(false)
    } else {
        json!({ "mode": mode })
    };
    (
        session_with(
            sample_tools(),
            raw,
            executor.clone(),
            SessionOptions::default(),
        )
        .unwrap(),
        executor,
    )
}

fn handle(s: &Session, name: &str, args: Value) -> ToolResult {
    block_on(s.handle(name, args, HandleOptions::default()))
}

fn code_of(r: &ToolResult) -> &str {
    r.error.as_ref().map_or("", |e| e.code.as_str())
}

fn names(surface: &crate::surfaces::ModelSurface) -> Vec<String> {
    surface
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn events_sink() -> (EventSink, Arc<Mutex<Vec<SessionEvent>>>) {
    let store = Arc::new(Mutex::new(Vec::new()));
    let s2 = store.clone();
    (
        Arc::new(move |e: &SessionEvent| s2.lock().unwrap().push(e.clone())),
        store,
    )
}

// ---- surfaces -----------------------------------------------------------

#[test]
fn surface_tools_per_mode() {
    let (tools, _) = session("tools");
    assert_eq!(
        names(&tools.surface(SurfaceFormat::Neutral)),
        ["tool_search", "tool_describe", "tool_call", "exec"]
    );
    assert!(tools
        .surface(SurfaceFormat::Neutral)
        .directory_prompt
        .is_none());

    let (code, _) = session("code");
    assert_eq!(
        names(&code.surface(SurfaceFormat::Neutral)),
        ["tool_search_code", "exec"]
    );

    let (directory, _) = session("directory");
    let surface = directory.surface(SurfaceFormat::Neutral);
    assert_eq!(
        names(&surface),
        [
            "tool_search",
            "tool_describe",
            "tool_call",
            "exec",
            "select_file"
        ]
    );
    let prompt = surface.directory_prompt.as_deref().unwrap();
    assert!(prompt.contains("- get_weather (weather): Current weather"));
    assert!(
        !prompt.contains("create_issue")
            && !prompt.contains("select_file")
            && !prompt.contains("- exec")
    );
    assert_eq!(surface.bytes.directory_prompt, prompt.len());

    let (direct, _) = session("direct");
    let surface = direct.surface(SurfaceFormat::Neutral);
    assert_eq!(
        names(&surface),
        [
            "exec",
            "select_file",
            "github__create_issue",
            "fake_plugin_tool_01",
            "send_message",
            "create_user",
            "get_weather"
        ]
    );
}

#[test]
fn surface_bytes_are_the_serialized_tools() {
    for format in SurfaceFormat::ALL {
        let (s, _) = session("directory");
        let surface = s.surface(format);
        assert_eq!(
            surface.bytes.tools,
            serde_json::to_string(&surface.tools).unwrap().len()
        );
    }
}

#[test]
fn tool_search_bytes_are_smaller_than_direct_for_many_tools() {
    let tools: Vec<Value> = (1..=36)
        .map(|i| marker_tool(&format!("fake_plugin_tool_{i:02}"), "Fake plugin tool."))
        .collect();
    let e = Arc::new(TestExecutor::default());
    let direct = session_with(
        tools.clone(),
        json!(false),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let search = session_with(
        tools,
        json!({ "mode": "tools" }),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    let (d, t) = (
        direct.surface(SurfaceFormat::OpenaiResponses),
        search.surface(SurfaceFormat::OpenaiResponses),
    );
    assert_eq!(d.tools.len(), 36);
    assert!(
        t.bytes.tools < d.bytes.tools,
        "{} vs {}",
        t.bytes.tools,
        d.bytes.tools
    );
}

#[test]
fn golden_surfaces_per_mode_and_format() {
    for mode in ["tools", "code", "directory", "direct"] {
        let (s, _) = session(mode);
        for format in SurfaceFormat::ALL {
            let surface = s.surface(format);
            let text = serde_json::to_string_pretty(&*surface).unwrap();
            assert_golden(
                &format!("surface-{mode}-{}.json", format.as_str()),
                &(text + "\n"),
            );
        }
    }
}

#[test]
fn surface_is_memoized_and_directory_shared_across_sessions() {
    let (a, _) = session("directory");
    let (b, _) = session("directory");
    let (sa, sb) = (
        a.surface(SurfaceFormat::Anthropic),
        a.surface(SurfaceFormat::Anthropic),
    );
    assert!(Arc::ptr_eq(&sa, &sb));
    let (pa, pb) = (a.directory_prompt().unwrap(), b.directory_prompt().unwrap());
    assert!(
        Arc::ptr_eq(&pa, &pb),
        "same snapshot and options reuse the rendered text"
    );
}

#[test]
fn directory_budget_follows_context_tokens() {
    let tools: Vec<Value> = (0..300)
        .map(|i| {
            marker_tool(
                &format!("plugin_tool_{i:03}"),
                &"Does something useful. ".repeat(10),
            )
        })
        .collect();
    let e = Arc::new(TestExecutor::default());
    let options = SessionOptions {
        context_tokens: Some(7_680),
        ..Default::default()
    };
    let small = session_with(
        tools.clone(),
        json!({ "mode": "directory" }),
        e.clone(),
        options,
    )
    .unwrap();
    let prompt = small.directory_prompt().unwrap();
    assert!(prompt.chars().count() <= 768);
    assert!(prompt.contains("more deferred tools are not listed"));
    let large = session_with(
        tools,
        json!({ "mode": "directory" }),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    assert!(large.directory_prompt().unwrap().chars().count() > 768);
}

// ---- construction -------------------------------------------------------

#[test]
fn client_name_collisions_fail_in_directory_mode_only() {
    let mut tools = sample_tools();
    tools.push(json!({ "source": "client", "name": "send_message", "description": "client copy" }));
    let e = Arc::new(TestExecutor::default());
    let err = session_with(
        tools.clone(),
        json!({ "mode": "directory" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, crate::ErrorCode::NameCollision);
    assert!(
        err.message.contains("client:client:send_message"),
        "{}",
        err.message
    );
    assert!(session_with(
        tools,
        json!({ "mode": "tools" }),
        e,
        SessionOptions::default()
    )
    .is_ok());
}

#[test]
fn direct_tools_must_not_shadow_control_tools_or_repeat() {
    let e = Arc::new(TestExecutor::default());
    let def = |n: &str| ToolDefinition::new(n, "", None);
    let shadow = SessionOptions {
        direct_tools: vec![def("tool_call")],
        ..Default::default()
    };
    let err = session_with(
        sample_tools(),
        json!({ "mode": "tools" }),
        e.clone(),
        shadow,
    )
    .unwrap_err();
    assert_eq!(err.code, crate::ErrorCode::NameCollision);
    let twice = SessionOptions {
        direct_tools: vec![def("read"), def("read")],
        ..Default::default()
    };
    assert_eq!(
        session_with(sample_tools(), json!({ "mode": "tools" }), e.clone(), twice)
            .unwrap_err()
            .code,
        crate::ErrorCode::NameCollision
    );
    // Gateway direct tools come first; the catalog's direct-only copy is not repeated.
    let exec = SessionOptions {
        direct_tools: vec![def("exec"), def("read")],
        ..Default::default()
    };
    let s = session_with(sample_tools(), json!({ "mode": "tools" }), e, exec).unwrap();
    assert_eq!(
        names(&s.surface(SurfaceFormat::Neutral)),
        ["tool_search", "tool_describe", "tool_call", "exec", "read"]
    );
}

// ---- search and describe ------------------------------------------------

#[test]
fn tool_search_single_batch_and_errors() {
    let (s, _) = session("tools");
    let r = handle(
        &s,
        "tool_search",
        json!({ "query": "weather forecast for a city" }),
    );
    assert!(r.ok, "{r:?}");
    let hits = r.value.as_ref().unwrap().as_array().unwrap();
    assert_eq!(hits[0]["id"], "openclaw:weather:get_weather");
    assert_eq!(
        r.content,
        serde_json::to_string(r.value.as_ref().unwrap()).unwrap()
    );

    let r = handle(
        &s,
        "tool_search",
        json!({ "query": "weather", "queries": [{ "query": "send chat message", "limit": 1 }, "github issue"] }),
    );
    let groups = r.value.as_ref().unwrap()["results"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        groups
            .iter()
            .map(|g| g["query"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["weather", "send chat message", "github issue"]
    );
    assert_eq!(groups[1]["candidates"].as_array().unwrap().len(), 1);

    assert_eq!(
        code_of(&handle(
            &s,
            "tool_search",
            json!({ "query": "x", "limit": 0 })
        )),
        "INVALID_LIMIT"
    );
    assert_eq!(
        code_of(&handle(
            &s,
            "tool_search",
            json!({ "query": "x", "limit": "5" })
        )),
        "INVALID_LIMIT"
    );
    assert_eq!(
        code_of(&handle(&s, "tool_search", json!({}))),
        "INVALID_QUERY"
    );
    assert_eq!(
        code_of(&handle(
            &s,
            "tool_search",
            json!({ "queries": vec![json!("q"); 17] })
        )),
        "INVALID_QUERY"
    );
    assert_eq!(
        code_of(&handle(
            &s,
            "tool_search",
            json!({ "queries": [{ "query": "weather" }, { "query": " " }] })
        )),
        "INVALID_QUERY"
    );
    // Provider-style JSON string arguments.
    assert!(handle(&s, "tool_search", json!("{\"query\":\"send message\"}")).ok);
}

#[test]
fn batch_response_budget_marks_truncated_groups() {
    let tools: Vec<Value> = (0..120)
        .map(|i| {
            marker_tool(
                &format!("report_tool_{i:03}"),
                &format!("Generate report {i} with {}", "detail ".repeat(40)),
            )
        })
        .collect();
    let e = Arc::new(TestExecutor::default());
    let s = session_with(
        tools,
        json!({ "mode": "tools", "maxSearchLimit": 50 }),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    let queries: Vec<Value> = (0..4)
        .map(|i| json!({ "query": format!("generate report {i}"), "limit": 12 }))
        .collect();
    let r = handle(&s, "tool_search", json!({ "queries": queries }));
    assert!(r.ok, "{r:?}");
    let value = r.value.unwrap();
    assert!(
        r.content.chars().count() <= crate::limits::BATCH_RESPONSE_BUDGET_CHARS,
        "{}",
        r.content.chars().count()
    );
    assert_eq!(value["truncated"], true);
    let groups = value["results"].as_array().unwrap();
    let total: usize = groups
        .iter()
        .map(|g| g["candidates"].as_array().unwrap().len())
        .sum();
    assert!(total <= crate::limits::MAX_BATCH_CANDIDATES);
    assert!(groups.iter().all(|g| g["truncated"] == true));
}

#[test]
fn tool_describe_by_id_name_and_unknown() {
    let (s, _) = session("tools");
    let r = handle(
        &s,
        "tool_describe",
        json!({ "id": "openclaw:weather:get_weather" }),
    );
    assert_eq!(
        r.value.as_ref().unwrap()["parameters"]["required"],
        json!(["city"])
    );
    assert!(handle(&s, "tool_describe", json!({ "id": "get_weather" })).ok);
    assert!(handle(&s, "tool_describe", json!({ "toolId": "get_weather" })).ok);
    let r = handle(&s, "tool_describe", json!({ "id": "get_wether" }));
    assert_eq!(code_of(&r), "TOOL_NOT_FOUND");
    assert!(
        r.content
            .starts_with("Unknown tool id: get_wether. Did you mean: openclaw:weather:get_weather"),
        "{}",
        r.content
    );
    let r = handle(
        &s,
        "tool_describe",
        json!({ "id": "get_weather", "name": "send_message" }),
    );
    assert_eq!(code_of(&r), "AMBIGUOUS_TOOL");
}

#[test]
fn control_tools_outside_the_mode_are_refused() {
    let (code, _) = session("code");
    assert_eq!(
        code_of(&handle(&code, "tool_search", json!({ "query": "x" }))),
        "TOOL_NOT_FOUND"
    );
    let (tools, _) = session("tools");
    assert_eq!(
        code_of(&handle(
            &tools,
            "tool_search_code",
            json!({ "code": "return 1" })
        )),
        "TOOL_NOT_FOUND"
    );
    assert!(!tools.handles("tool_search_code") && tools.handles("tool_call"));
    let (direct, _) = session("direct");
    assert_eq!(
        code_of(&handle(
            &direct,
            "tool_call",
            json!({ "id": "send_message" })
        )),
        "TOOL_NOT_FOUND"
    );
}

// ---- tool_call and argument repair --------------------------------------

#[test]
fn tool_call_runs_validated_input_through_the_executor() {
    let (s, e) = session("tools");
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "openclaw:weather:get_weather", "args": { "city": "Paris" } }),
    );
    assert!(r.ok, "{r:?}");
    let v = r.value.unwrap();
    assert_eq!(
        v["tool"],
        json!({ "id": "openclaw:weather:get_weather", "name": "get_weather", "source": "openclaw", "sourceName": "weather" })
    );
    assert_eq!(v["result"]["details"], json!({ "city": "Paris" }));
    let calls = e.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].owner.as_str()),
        ("openclaw:weather:get_weather", "weather")
    );
}

#[test]
fn invalid_trusted_input_never_executes() {
    let (s, e) = session("tools");
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "get_weather", "args": { "cty": "Paris" } }),
    );
    assert_eq!(code_of(&r), "INVALID_ARGS");
    assert!(
        r.content.contains("city") && r.content.contains("Nothing was run"),
        "{}",
        r.content
    );
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "get_weather", "args": { "city": 5 } }),
    );
    assert_eq!(code_of(&r), "INVALID_ARGS");
    assert!(e.calls().is_empty());
    // Untrusted (MCP) input goes to the gateway, which validates it there.
    assert!(
        handle(
            &s,
            "tool_call",
            json!({ "id": "mcp:github:create_issue", "args": { "anything": 1 } })
        )
        .ok
    );
    assert_eq!(e.calls().len(), 1);
}

#[test]
fn flattened_and_aliased_arguments_are_repaired() {
    let (s, e) = session("tools");
    for args in [
        json!({ "id": "get_weather", "city": "Paris" }),
        json!({ "toolId": "get_weather", "args": { "city": "Paris" } }),
        json!({ "tool_id": "openclaw:weather:get_weather", "input": { "city": "Paris" } }),
        json!({ "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" }),
        json!({ "id": "get_weather", "args": "{\"city\":\"Paris\"}" }),
        json!("{\"id\":\"get_weather\",\"args\":{\"city\":\"Paris\"}}"),
        json!({ "id": "get_weather", "name": "get_weather", "city": "Paris" }),
    ] {
        let r = handle(&s, "tool_call", args.clone());
        assert!(r.ok, "{args} -> {r:?}");
    }
    assert!(e
        .calls()
        .iter()
        .all(|c| c.args == json!({ "city": "Paris" })));
    // A tool that takes `name`: a flattened `name` is an argument, not a selector.
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "create_user", "name": "Ada", "email": "a@b.c" }),
    );
    assert!(r.ok, "{r:?}");
    assert_eq!(
        e.calls().last().unwrap().args,
        json!({ "name": "Ada", "email": "a@b.c" })
    );
}

#[test]
fn ambiguous_selectors_are_rejected() {
    let (s, e) = session("tools");
    let cases = [
        (
            json!({ "id": "get_weather", "toolId": "send_message", "args": {} }),
            "AMBIGUOUS_TOOL",
        ),
        (
            json!({ "id": "get_weather", "name": "send_message", "city": "x" }),
            "AMBIGUOUS_TOOL",
        ),
        (
            json!({ "id": "get_weather", "args": { "city": "x" }, "input": { "city": "y" } }),
            "INVALID_REQUEST",
        ),
        (
            json!({ "id": "get_weather", "args": { "city": "x" }, "units": "metric" }),
            "INVALID_REQUEST",
        ),
        (json!({ "args": { "city": "x" } }), "INVALID_REQUEST"),
        (json!({ "id": 7 }), "INVALID_REQUEST"),
        (
            json!({ "id": "get_weather", "args": [1] }),
            "INVALID_REQUEST",
        ),
        (json!([1, 2]), "INVALID_REQUEST"),
    ];
    for (args, code) in cases {
        let r = handle(&s, "tool_call", args.clone());
        assert_eq!(code_of(&r), code, "{args} -> {}", r.content);
    }
    assert!(e.calls().is_empty());
}

#[test]
fn hostile_argument_depth_is_refused() {
    let (s, e) = session("tools");
    let mut deep = json!("x");
    for _ in 0..100 {
        deep = json!({ "a": deep });
    }
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "mcp:github:create_issue", "args": deep }),
    );
    assert_eq!(code_of(&r), "INVALID_REQUEST");
    assert!(e.calls().is_empty());
}

// ---- exact hidden-name dispatch -----------------------------------------

#[test]
fn directory_mode_calls_exact_hidden_names() {
    let (s, e) = session("directory");
    assert!(s.handles("get_weather") && s.handles("create_issue"));
    assert!(!s.handles("exec"), "direct tools are the gateway's");
    assert!(
        !s.handles("select_file"),
        "visible client tools are the gateway's too"
    );
    assert!(!s.handles("openclaw:weather:get_weather") && !s.handles("Get_Weather"));
    let r = handle(&s, "get_weather", json!({ "city": "Paris" }));
    assert!(r.ok, "{r:?}");
    assert_eq!(e.calls()[0].id, "openclaw:weather:get_weather");
    // Ids and near-misses are rejected, nothing runs.
    let r = handle(
        &s,
        "openclaw:weather:get_weather",
        json!({ "city": "Paris" }),
    );
    assert_eq!(code_of(&r), "TOOL_NOT_FOUND");
    assert!(r.content.contains("is a tool id, not a tool name"));
    let r = handle(&s, "get_wether", json!({ "city": "Paris" }));
    assert_eq!(code_of(&r), "TOOL_NOT_FOUND");
    assert!(r.content.contains("Did you mean"));
    assert_eq!(
        code_of(&handle(&s, "exec", json!({ "command": "ls" }))),
        "INVALID_REQUEST"
    );
    // Validation applies to direct calls too.
    assert_eq!(
        code_of(&handle(&s, "get_weather", json!({}))),
        "INVALID_ARGS"
    );
    assert_eq!(e.calls().len(), 1);
}

#[test]
fn directory_mode_shows_client_tools_without_cataloging_them() {
    let (s, e) = session("directory");
    // Visible with their schema, once: not also in search, describe, tool_call or the directory.
    assert!(names(&s.surface(SurfaceFormat::Neutral)).contains(&"select_file".to_string()));
    assert!(s
        .catalog()
        .entries()
        .all(|e| e.source != crate::catalog::Source::Client));
    let r = handle(
        &s,
        "tool_search",
        json!({ "query": "let the user pick a file in the app" }),
    );
    assert!(r.ok && !r.content.contains("select_file"), "{}", r.content);
    assert_eq!(
        code_of(&handle(
            &s,
            "tool_describe",
            json!({ "id": "client:client:select_file" })
        )),
        "TOOL_NOT_FOUND"
    );
    assert_eq!(
        code_of(&handle(&s, "tool_call", json!({ "id": "select_file" }))),
        "TOOL_NOT_FOUND"
    );
    assert!(e.calls().is_empty());
    // Tools mode catalogs them (they are not visible there).
    let (t, _) = session("tools");
    let r = handle(
        &t,
        "tool_search",
        json!({ "query": "let the user pick a file in the app" }),
    );
    assert!(
        r.content.contains("client:client:select_file"),
        "{}",
        r.content
    );
}

#[test]
fn directory_mode_refuses_duplicate_names() {
    let mut tools = sample_tools();
    tools.push(json!({ "name": "send_message", "owner": "slack", "description": "Slack copy" }));
    let e = Arc::new(TestExecutor::default());
    let s = session_with(
        tools,
        json!({ "mode": "directory" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let r = handle(&s, "send_message", json!({ "channel": "c", "text": "t" }));
    assert_eq!(code_of(&r), "AMBIGUOUS_TOOL");
    assert!(!s.directory_prompt().unwrap().contains("send_message"));
    assert!(e.calls().is_empty());
}

#[test]
fn tools_mode_does_not_dispatch_hidden_names() {
    let (s, e) = session("tools");
    assert!(!s.handles("get_weather"));
    assert_eq!(
        code_of(&handle(&s, "get_weather", json!({ "city": "Paris" }))),
        "TOOL_NOT_FOUND"
    );
    assert!(e.calls().is_empty());
}

#[test]
fn direct_mode_dispatches_visible_names_including_mcp_operations() {
    let (s, e) = session("direct");
    assert!(handle(&s, "github__create_issue", json!({ "title": "t" })).ok);
    assert_eq!(e.calls()[0].id, "mcp:github:create_issue");
    assert_eq!(
        code_of(&handle(&s, "create_issue", json!({ "title": "t" }))),
        "TOOL_NOT_FOUND"
    );
}

// ---- fail closed --------------------------------------------------------

#[test]
fn policy_removed_tools_cannot_be_searched_described_or_called() {
    let options: CatalogOptions =
        serde_json::from_value(json!({ "policy": { "session": { "deny": ["get_weather"] } } }))
            .unwrap();
    let catalog = Catalog::from_records(sample_tools(), &options).unwrap();
    let e = Arc::new(TestExecutor::default());
    let s = Session::new(
        &catalog,
        config(json!({ "mode": "directory" })),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let r = handle(&s, "tool_search", json!({ "query": "get_weather" }));
    assert!(r
        .value
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["name"] != "get_weather"));
    assert_eq!(
        code_of(&handle(
            &s,
            "tool_describe",
            json!({ "id": "openclaw:weather:get_weather" })
        )),
        "TOOL_NOT_FOUND"
    );
    assert_eq!(
        code_of(&handle(
            &s,
            "tool_call",
            json!({ "id": "openclaw:weather:get_weather", "args": { "city": "x" } })
        )),
        "TOOL_NOT_FOUND"
    );
    assert_eq!(
        code_of(&handle(&s, "get_weather", json!({ "city": "x" }))),
        "TOOL_NOT_FOUND"
    );
    assert!(!s.directory_prompt().unwrap().contains("get_weather"));
    assert!(s
        .hydrate("weather in Paris", None, &["get_weather".into()])
        .is_empty());
    assert!(e.calls().is_empty());
}

#[test]
fn executor_missing_tool_fails_the_call() {
    let e = TestExecutor::with(
        "send_message",
        ExecutorOutcome::Missing("plugin unloaded".into()),
    );
    let s = session_with(
        sample_tools(),
        json!({ "mode": "tools" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "send_message", "args": { "channel": "c", "text": "t" } }),
    );
    assert_eq!(
        (r.ok, r.status, code_of(&r)),
        (false, ResultStatus::Error, "TOOL_UNAVAILABLE")
    );
    assert!(r.content.contains("plugin unloaded") && r.content.contains("was not run"));
    assert_eq!(e.calls().len(), 1, "not retried, not swapped");
}

#[test]
fn executor_block_is_a_blocked_result_never_retried() {
    let e = TestExecutor::with(
        "send_message",
        ExecutorOutcome::Blocked("approval denied".into()),
    );
    let s = session_with(
        sample_tools(),
        json!({ "mode": "tools" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "send_message", "args": { "channel": "c", "text": "t" } }),
    );
    assert_eq!(
        (r.ok, r.status, code_of(&r)),
        (false, ResultStatus::Blocked, "TOOL_BLOCKED")
    );
    assert!(r.content.contains("approval denied") && r.content.contains("Do not retry"));
    assert_eq!(e.calls().len(), 1);
    let t = s.telemetry();
    assert_eq!(t.tools_called[0].blocked, 1);
}

#[test]
fn executor_failure_is_reported() {
    let e = TestExecutor::with(
        "send_message",
        ExecutorOutcome::Failed("channel not found".into()),
    );
    let s = session_with(
        sample_tools(),
        json!({ "mode": "tools" }),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "send_message", "args": { "channel": "c", "text": "t" } }),
    );
    assert_eq!(code_of(&r), "TOOL_FAILED");
    assert!(r.content.contains("channel not found"));
}

#[test]
fn cancellation_stops_waiting_and_signals_the_executor() {
    let e = Arc::new(TestExecutor::default());
    e.hang.lock().unwrap().push("send_message".into());
    let s = session_with(
        sample_tools(),
        json!({ "mode": "tools" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let cancel = CancelSignal::new();
    let c2 = cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        c2.cancel("run aborted");
    });
    let r = block_on(s.handle(
        "tool_call",
        json!({ "id": "send_message", "args": { "channel": "c", "text": "t" } }),
        HandleOptions {
            tool_call_id: Some("call_9".into()),
            cancel: Some(cancel),
            ..Default::default()
        },
    ));
    t.join().unwrap();
    assert_eq!(code_of(&r), "CANCELLED");
    assert!(r.content.contains("run aborted"));
    let calls = e.calls();
    // The target call has its own id and names the tool_call wrapper as its parent.
    assert_eq!(calls[0].tool_call_id, "tool_call:call_9:send_message");
    assert_eq!(calls[0].parent_tool_call_id.as_deref(), Some("call_9"));
    assert!(calls[0].cancel.is_cancelled());
    // Already cancelled: nothing reaches the executor.
    let cancel = CancelSignal::new();
    cancel.cancel("early");
    let r = block_on(s.handle(
        "tool_call",
        json!({ "id": "get_weather", "args": { "city": "x" } }),
        HandleOptions {
            tool_call_id: None,
            cancel: Some(cancel),
            ..Default::default()
        },
    ));
    assert_eq!(code_of(&r), "CANCELLED");
    assert_eq!(e.calls().len(), 1);
}

// ---- hydrate ------------------------------------------------------------

#[test]
fn hydrate_picks_trusted_likely_tools_required_first() {
    let mut tools = sample_tools();
    tools.push(json!({ "source": "mcp", "owner": "weather", "name": "weather_mcp", "description": "Weather forecast for a city from MCP." }));
    tools.push(json!({ "source": "client", "name": "weather_client", "description": "Weather forecast for a city in the app." }));
    let e = Arc::new(TestExecutor::default());
    let s = session_with(
        tools,
        json!({ "mode": "directory" }),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    let defs = s.hydrate(
        "What's the weather forecast in Paris?",
        None,
        &["send_message".into(), "create_issue".into()],
    );
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names[0], "send_message", "required first");
    assert!(names.contains(&"get_weather"), "{names:?}");
    assert!(
        !names.iter().any(|n| [
            "create_issue",
            "weather_mcp",
            "weather_client",
            "select_file"
        ]
        .contains(n)),
        "{names:?}"
    );
    assert!(defs.len() <= 4);
    assert_eq!(s.hydrate("weather", Some(1), &[]).len(), 1);
    assert_eq!(
        s.hydrate("weather", Some(50), &[]).len().min(4),
        s.hydrate("weather", Some(50), &[]).len()
    );
    assert!(s.hydrate("", None, &[]).is_empty());
    let (tools_mode, _) = session("tools");
    assert!(tools_mode.hydrate("weather", None, &[]).is_empty());
}

// ---- telemetry and events -----------------------------------------------

#[test]
fn telemetry_and_events_answer_the_session_log_questions() {
    let (sink, events) = events_sink();
    let e = Arc::new(TestExecutor::default());
    let s = session_with(
        sample_tools(),
        json!({ "mode": "tools" }),
        e,
        SessionOptions {
            on_event: Some(sink),
            ..Default::default()
        },
    )
    .unwrap();
    let surface = s.surface(SurfaceFormat::OpenaiResponses);
    s.record_request_bytes(1_234.0).unwrap();
    s.record_request_bytes(766.0).unwrap();
    assert!(s.record_request_bytes(-1.0).is_err() && s.record_request_bytes(f64::NAN).is_err());
    handle(
        &s,
        "tool_search",
        json!({ "queries": [{ "query": "fake plugin tool" }, { "query": "weather" }] }),
    );
    handle(&s, "tool_describe", json!({ "id": "fake_plugin_tool_01" }));
    handle(
        &s,
        "tool_call",
        json!({ "id": "fake_plugin_tool_01", "args": { "marker": "m" } }),
    );
    handle(
        &s,
        "tool_call",
        json!({ "id": "mcp:github:create_issue", "args": { "title": "t" } }),
    );

    let t = s.telemetry();
    assert_eq!(t.schemas_up_front, 4);
    assert_eq!(t.catalog_schemas_up_front, 0);
    assert_eq!(t.surface_bytes.tools, surface.bytes.tools as u64);
    assert_eq!(
        (t.request_bytes.total, t.request_bytes.requests),
        (2_000, 2)
    );
    assert_eq!((t.searches, t.describes, t.calls), (1, 1, 2));
    assert_eq!(
        (
            t.catalog.search_count,
            t.catalog.describe_count,
            t.catalog.call_count
        ),
        (2, 1, 2)
    );
    assert_eq!(t.catalog.catalog_size, 6);
    assert_eq!(
        t.tools_called
            .iter()
            .map(|c| (c.id.as_str(), c.source.as_str()))
            .collect::<Vec<_>>(),
        [
            ("openclaw:core:fake_plugin_tool_01", "openclaw"),
            ("mcp:github:create_issue", "mcp")
        ]
    );
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(
        json["sources"],
        json!({ "openclaw": 4, "mcp": 1, "client": 1 })
    );
    assert!(json["counterScope"].is_string());

    let events = events.lock().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds, ["surface", "search", "describe", "call", "call"]);
    match &events[3] {
        SessionEvent::Call {
            tool: Some(tool),
            outcome,
            via,
            ..
        } => {
            assert_eq!(
                (
                    tool.id.as_str(),
                    tool.owner.as_str(),
                    *outcome,
                    via.as_str()
                ),
                (
                    "openclaw:core:fake_plugin_tool_01",
                    "core",
                    Outcome::Ok,
                    "tool_call"
                )
            );
        }
        other => panic!("{other:?}"),
    }
    let line = serde_json::to_value(&events[1]).unwrap();
    assert_eq!(line["type"], "search");
    assert_eq!(line["queries"], json!(["fake plugin tool", "weather"]));
    assert!(line["durationMs"].is_number());
}

#[test]
fn direct_mode_counts_every_catalog_schema_up_front() {
    let (s, _) = session("direct");
    s.surface(SurfaceFormat::Anthropic);
    let t = s.telemetry();
    assert_eq!((t.schemas_up_front, t.catalog_schemas_up_front), (7, 6));
}

// ---- code mode ----------------------------------------------------------

/// A code runner double that performs fixed bridge calls through the session
/// (the real runner executes the cell in the sandbox and makes these calls).
struct ScriptedRunner;

impl CodeRunner for ScriptedRunner {
    fn run(&self, session: Session, code: String, context: CodeContext) -> BoxFuture<Value> {
        Box::pin(async move {
            let hits = session
                .search_json(&code, &json!({ "limit": 2 }))
                .map_err(|f| f.message);
            let id = hits
                .as_ref()
                .ok()
                .and_then(|h| h[0]["id"].as_str().map(str::to_string))
                .unwrap_or_default();
            let described = session.describe_json(&id).is_ok();
            let unknown = session
                .describe_json("nope")
                .err()
                .map(|f| f.message)
                .unwrap_or_default();
            let call = session
                .call(
                    &id,
                    json!({ "marker": "from-code" }),
                    CallContext {
                        tool_call_id: None,
                        parent_tool_call_id: Some(context.tool_call_id.clone()),
                        sequence: Some(1),
                        cancel: context.cancel.child(),
                        offload: None,
                    },
                )
                .await;
            json!({ "ok": call.is_ok(), "value": { "described": described, "unknown": unknown, "result": call.ok() }, "logs": [],
                    "telemetry": { "childPid": 4242, "nodeVersion": "v24.22.3" } })
        })
    }
}

#[test]
fn code_mode_without_runner_is_unavailable() {
    let (s, _) = session("code");
    let r = handle(&s, "tool_search_code", json!({ "code": "return 1" }));
    assert_eq!(code_of(&r), "CODE_MODE_UNAVAILABLE");
    assert_eq!(
        code_of(&handle(&s, "tool_search_code", json!({}))),
        "INVALID_REQUEST"
    );
}

#[test]
fn code_mode_bridges_through_the_same_session() {
    let (sink, events) = events_sink();
    let e = Arc::new(TestExecutor::default());
    let options = SessionOptions {
        on_event: Some(sink),
        code_runner: Some(Arc::new(ScriptedRunner)),
        ..Default::default()
    };
    let s = session_with(
        sample_tools(),
        json!({ "mode": "code" }),
        e.clone(),
        options,
    )
    .unwrap();
    let r = block_on(s.handle(
        "tool_search_code",
        json!({ "code": "fake plugin tool" }),
        HandleOptions {
            tool_call_id: Some("cell_1".into()),
            cancel: None,
            ..Default::default()
        },
    ));
    assert!(r.ok, "{r:?}");
    // The model reads the value and logs; the cell's telemetry is the gateway's.
    assert!(
        !r.content.contains("childPid") && r.content.contains("\"described\":true"),
        "{}",
        r.content
    );
    let value = r.value.unwrap();
    assert_eq!(value["telemetry"]["childPid"], 4242);
    assert_eq!(value["value"]["described"], true);
    assert!(
        value["value"]["unknown"]
            .as_str()
            .unwrap()
            .contains("openclaw.tools.search"),
        "code-mode error text"
    );
    assert_eq!(
        value["value"]["result"]["tool"]["id"],
        "openclaw:core:fake_plugin_tool_01"
    );
    let calls = e.calls();
    assert_eq!(calls[0].parent_tool_call_id.as_deref(), Some("cell_1"));
    let t = s.telemetry();
    assert_eq!(
        (t.code_runs, t.searches, t.describes, t.calls),
        (1, 1, 2, 1)
    );
    assert_eq!(t.tools_called[0].via, "tool_search_code");
    let kinds: Vec<&str> = events.lock().unwrap().iter().map(|e| e.kind()).collect();
    assert_eq!(kinds, ["search", "describe", "describe", "call", "code"]);
}

// ---- gateway fidelity: configuration, pass-through, core tools ------------

#[test]
fn enabled_false_turns_tool_search_off_whatever_the_mode() {
    let (direct, _) = session("direct");
    for mode in ["code", "tools", "directory"] {
        let e = Arc::new(TestExecutor::default());
        let s = session_with(
            sample_tools(),
            json!({ "enabled": false, "mode": mode }),
            e,
            SessionOptions::default(),
        )
        .unwrap();
        assert_eq!(s.mode(), crate::config::Mode::Direct, "{mode}");
        assert_eq!(
            names(&s.surface(SurfaceFormat::Neutral)),
            names(&direct.surface(SurfaceFormat::Neutral)),
            "{mode}"
        );
        assert!(!s.handles("tool_search") && !s.handles("tool_search_code"));
        assert!(s.handles("get_weather"));
    }
}

#[test]
fn direct_mode_passes_tools_named_like_control_tools_through() {
    let plugin_search = json!({ "owner": "registry", "name": "tool_search", "description": "Search the plugin registry.",
                                "inputSchema": { "type": "object", "properties": { "q": { "type": "string" } } } });
    let mut tools = sample_tools();
    tools.push(plugin_search.clone());
    let e = Arc::new(TestExecutor::default());
    let direct = session_with(
        tools.clone(),
        json!(false),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let surface = direct.surface(SurfaceFormat::Neutral);
    let shown = names(&surface);
    assert_eq!(
        shown.iter().filter(|n| *n == "tool_search").count(),
        1,
        "{shown:?}"
    );
    let tool = surface
        .tools
        .iter()
        .find(|t| t["name"] == "tool_search")
        .unwrap();
    assert_eq!(tool["description"], "Search the plugin registry.");
    assert_eq!(tool["parameters"], plugin_search["inputSchema"]);
    // Every catalog tool is still there: nothing else changed.
    for name in [
        "get_weather",
        "send_message",
        "create_user",
        "github__create_issue",
        "select_file",
        "exec",
        "fake_plugin_tool_01",
    ] {
        assert!(
            shown.iter().any(|n| n == name),
            "{name} missing from {shown:?}"
        );
    }
    // The gateway runs it as its own tool: the session does not answer it.
    assert!(!direct.handles("tool_search"));
    // With Tool Search on, the name is the control tool's, and the plugin tool stays out.
    let tools_mode = session_with(
        tools,
        json!({ "mode": "tools" }),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    let surface = tools_mode.surface(SurfaceFormat::Neutral);
    assert_eq!(
        names(&surface)
            .iter()
            .filter(|n| *n == "tool_search")
            .count(),
        1
    );
    assert_ne!(
        surface.tools[0]["description"],
        "Search the plugin registry."
    );
    assert!(tools_mode.handles("tool_search"));
}

fn coding_tools() -> Vec<Value> {
    let path = json!({ "type": "object", "properties": { "path": { "type": "string" } }, "required": ["path"] });
    vec![
        json!({ "name": "read", "description": "Read a file from the workspace.", "inputSchema": path.clone() }),
        json!({ "name": "write", "description": "Write a file in the workspace.", "inputSchema": path.clone() }),
        json!({ "owner": "notes", "name": "edit", "description": "Edit a note (a plugin tool reusing a core name).", "inputSchema": path }),
        json!({ "name": "send_message", "description": "Send a chat message to a channel." }),
        json!({ "source": "client", "name": "select_file", "description": "Let the user pick a file in the app." }),
    ]
}

#[test]
fn core_coding_tools_stay_visible_and_cataloged_in_tools_and_directory_modes() {
    let e = Arc::new(TestExecutor::default());
    let tools = session_with(
        coding_tools(),
        json!({ "mode": "tools" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let surface = tools.surface(SurfaceFormat::Neutral);
    assert_eq!(
        names(&surface),
        ["tool_search", "tool_describe", "tool_call", "read", "write"]
    );
    let read = surface.tools.iter().find(|t| t["name"] == "read").unwrap();
    assert_eq!(read["parameters"]["required"], json!(["path"]));
    // Still cataloged: found by search and callable through tool_call.
    let found = handle(&tools, "tool_search", json!({ "query": "read a file" }));
    assert!(
        found.ok && found.content.contains("openclaw:core:read"),
        "{found:?}"
    );
    assert!(
        handle(
            &tools,
            "tool_call",
            json!({ "id": "openclaw:core:read", "args": { "path": "a" } })
        )
        .ok
    );
    // Shown directly: the gateway runs a direct call itself.
    assert!(!tools.handles("read"));
    assert_eq!(tools.telemetry().schemas_up_front, 5);

    let directory = session_with(
        coding_tools(),
        json!({ "mode": "directory" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let surface = directory.surface(SurfaceFormat::Neutral);
    assert_eq!(
        names(&surface),
        [
            "tool_search",
            "tool_describe",
            "tool_call",
            "read",
            "write",
            "select_file"
        ]
    );
    let prompt = surface.directory_prompt.as_deref().unwrap();
    assert!(
        !prompt.contains("- read ") && !prompt.contains("- write "),
        "{prompt}"
    );
    // The plugin's `edit` is deferred like any plugin tool.
    assert!(prompt.contains("- edit (notes)"), "{prompt}");
    assert!(!directory.handles("read") && directory.handles("edit"));
    assert!(directory
        .hydrate("read the file a.txt", None, &["read".into()])
        .iter()
        .all(|d| d.name != "read"));

    // Code mode shows only its tool; direct mode shows everything anyway.
    let code = session_with(
        coding_tools(),
        json!({ "mode": "code" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    assert_eq!(
        names(&code.surface(SurfaceFormat::Neutral)),
        ["tool_search_code"]
    );

    // The set is the catalog's `coreTools`.
    let catalog = Catalog::from_records(
        coding_tools(),
        &serde_json::from_value(json!({ "coreTools": ["send_message"] })).unwrap(),
    )
    .unwrap();
    let custom = Session::new(
        &catalog,
        config(json!({ "mode": "tools" })),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    assert_eq!(
        names(&custom.surface(SurfaceFormat::Neutral)),
        ["tool_search", "tool_describe", "tool_call", "send_message"]
    );
}

#[test]
fn direct_mode_names_mcp_tools_from_their_supplied_metadata() {
    let tools = vec![
        json!({ "source": "mcp", "owner": "docs_io", "name": "fetch_page", "description": "Fetch a page.",
                             "mcp": { "serverName": "docs.io", "toolName": "fetch" } }),
    ];
    let e = Arc::new(TestExecutor::default());
    let s = session_with(tools, json!(false), e.clone(), SessionOptions::default()).unwrap();
    assert_eq!(
        names(&s.surface(SurfaceFormat::Neutral)),
        ["docs_io__fetch"]
    );
    assert!(s.handles("docs_io__fetch") && !s.handles("docs__fetch_page"));
    assert!(handle(&s, "docs_io__fetch", json!({})).ok);
    assert_eq!(e.calls()[0].id, "mcp:docs_io:fetch_page");
}

#[test]
fn a_call_to_an_unavailable_owner_fails_closed_without_reaching_the_executor() {
    let selector: crate::catalog::SourceSelector =
        serde_json::from_value(json!({ "source": "mcp", "owner": "github" })).unwrap();
    let catalog = catalog_of(sample_tools())
        .with_unavailable(&selector, "server github disconnected")
        .unwrap();
    let e = Arc::new(TestExecutor::default());
    let s = Session::new(
        &catalog,
        config(json!({ "mode": "tools" })),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "mcp:github:create_issue", "args": { "title": "x" } }),
    );
    assert_eq!(
        (r.ok, r.status, code_of(&r)),
        (false, ResultStatus::Error, "TOOL_UNAVAILABLE")
    );
    assert!(
        r.content.contains("server github disconnected") && r.content.contains("was not run"),
        "{}",
        r.content
    );
    assert!(e.calls().is_empty(), "the executor was reached");
    // Counted as a call to a known tool that could not run, as when the executor finds it gone.
    let t = s.telemetry();
    let called = t
        .tools_called
        .iter()
        .find(|c| c.id == "mcp:github:create_issue")
        .expect("counted");
    assert_eq!((called.calls, called.unavailable), (1, 1));
    // A mistyped id is never pointed at a tool that cannot run.
    let typo = handle(
        &s,
        "tool_call",
        json!({ "id": "mcp:github:create_isue", "args": {} }),
    );
    assert_eq!(code_of(&typo), "TOOL_NOT_FOUND");
    assert!(
        !typo.content.contains("mcp:github:create_issue"),
        "{}",
        typo.content
    );
    // Search leaves it out and says so to the model; the value keeps its shape.
    let hits = handle(&s, "tool_search", json!({ "query": "open a github issue" }));
    assert!(
        hits.content.contains(
            "Note: 1 matching tool from server github is unavailable (server github disconnected)"
        ),
        "{}",
        hits.content
    );
    assert!(hits
        .value
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["id"] != "mcp:github:create_issue"));
    let batch = handle(
        &s,
        "tool_search",
        json!({ "queries": [{ "query": "github issue" }, { "query": "weather" }] }),
    );
    assert!(
        batch.content.contains("server github is unavailable"),
        "{}",
        batch.content
    );
    let unrelated = handle(&s, "tool_search", json!({ "query": "weather forecast" }));
    assert!(
        !unrelated.content.contains("Note:"),
        "{}",
        unrelated.content
    );
    assert!(
        handle(
            &s,
            "tool_call",
            json!({ "id": "send_message", "args": { "channel": "c", "text": "t" } })
        )
        .ok
    );
}

#[test]
fn a_session_moves_to_a_new_catalog_keeping_telemetry_and_surface_bytes() {
    let e = Arc::new(TestExecutor::default());
    let base = catalog_of(sample_tools());
    let s = Session::new(
        &base,
        config(json!({ "mode": "tools" })),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let before = s.surface(SurfaceFormat::OpenaiResponses);
    assert!(
        handle(
            &s,
            "tool_call",
            json!({ "id": "send_message", "args": { "channel": "c", "text": "t" } })
        )
        .ok
    );
    handle(&s, "tool_search", json!({ "query": "github issue" }));
    let selector: crate::catalog::SourceSelector =
        serde_json::from_value(json!({ "source": "mcp", "owner": "github" })).unwrap();
    let next_catalog = base
        .with_source(
            &selector,
            r#"[{"name":"list_pulls","description":"List the pull requests of a repository"}]"#,
        )
        .unwrap();
    let moved = s.with_catalog(&next_catalog).unwrap();
    // Tools mode: the surface does not depend on the deferred tools; same bytes.
    assert!(Arc::ptr_eq(
        &before,
        &moved.surface(SurfaceFormat::OpenaiResponses)
    ));
    let hits = handle(&moved, "tool_search", json!({ "query": "pull requests" }));
    assert_eq!(hits.value.unwrap()[0]["id"], "mcp:github:list_pulls");
    let gone = handle(
        &moved,
        "tool_call",
        json!({ "id": "mcp:github:create_issue", "args": { "title": "x" } }),
    );
    assert_eq!(code_of(&gone), "TOOL_NOT_FOUND");
    assert!(
        handle(
            &moved,
            "tool_call",
            json!({ "id": "mcp:github:list_pulls", "args": {} })
        )
        .ok
    );
    // One telemetry: both sessions count into it, and call numbering continues.
    let t = moved.telemetry();
    assert_eq!((t.searches, t.calls), (2, 3));
    assert_eq!(s.telemetry().calls, 3);
    assert_eq!(t.tools_called.len(), 2);
    // The old session still answers on its catalog (calls in flight finish there).
    assert!(
        handle(
            &s,
            "tool_call",
            json!({ "id": "mcp:github:create_issue", "args": { "title": "x" } })
        )
        .ok
    );
    // Directory mode renders the new catalog's directory.
    let d = Session::new(
        &base,
        config(json!({ "mode": "directory" })),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let plugin: crate::catalog::SourceSelector =
        serde_json::from_value(json!({ "source": "openclaw", "owner": "weather" })).unwrap();
    let replaced = base
        .with_source(
            &plugin,
            r#"[{"name":"get_forecast","description":"Seven-day forecast for a city."}]"#,
        )
        .unwrap();
    let moved_d = d.with_catalog(&replaced).unwrap();
    assert!(d.directory_prompt().unwrap().contains("get_weather"));
    assert!(moved_d.directory_prompt().unwrap().contains("get_forecast"));
    assert!(!moved_d.directory_prompt().unwrap().contains("get_weather"));
    let calls: Vec<String> = e.calls().into_iter().map(|c| c.name).collect();
    assert_eq!(calls, ["send_message", "list_pulls", "create_issue"]);
}

#[test]
fn directory_rows_of_unchanged_owners_keep_their_bytes_when_one_owner_changes() {
    let mut tools = sample_tools();
    for i in 0..12 {
        tools.push(json!({ "owner": format!("plugin{}", i % 3), "name": format!("tool_{i:02}"), "description": format!("Does thing number {i}.") }));
    }
    let base = catalog_of(tools);
    let e = Arc::new(TestExecutor::default());
    let d = Session::new(
        &base,
        config(json!({ "mode": "directory" })),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let before = d.directory_prompt().unwrap().to_string();
    let plugin: crate::catalog::SourceSelector =
        serde_json::from_value(json!({ "source": "openclaw", "owner": "plugin1" })).unwrap();
    let changed = base.with_source(&plugin, r#"[{"name":"tool_01","description":"Does thing number one, better."},{"name":"tool_99","description":"New."}]"#).unwrap();
    let after = d
        .with_catalog(&changed)
        .unwrap()
        .directory_prompt()
        .unwrap()
        .to_string();
    assert_ne!(before, after);
    let touched = ["tool_01", "tool_04", "tool_07", "tool_10", "tool_99"];
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !touched.iter().any(|t| l.contains(t)))
            .map(str::to_string)
            .collect()
    };
    // Every other line (header, guidance, other owners' rows) is byte-identical and in order.
    assert_eq!(rows(&before), rows(&after));
    assert!(after.contains("tool_99") && !after.contains("tool_04"));
}

fn status_catalog_tools() -> Vec<Value> {
    crate::search::tests::status_tools()
        .into_iter()
        .map(|(name, description)| json!({ "name": name, "description": description }))
        .collect()
}

#[test]
fn a_search_that_matched_only_common_words_is_marked_weak_with_a_note() {
    let e = Arc::new(TestExecutor::default());
    let s = session_with(
        status_catalog_tools(),
        json!({ "mode": "tools" }),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    let weak = handle(
        &s,
        "tool_search",
        json!({ "query": "get the current status of my flux capacitor" }),
    );
    assert!(weak.ok);
    let hits = weak.value.clone().unwrap();
    assert!(!hits.as_array().unwrap().is_empty());
    assert!(
        hits.as_array().unwrap().iter().all(|h| h["weak"] == true),
        "{hits}"
    );
    assert!(
        weak.content.contains("Note: no tool matched well;"),
        "{}",
        weak.content
    );
    assert!(
        weak.content.contains("capability's own words"),
        "{}",
        weak.content
    );

    let strong = handle(
        &s,
        "tool_search",
        json!({ "query": "status of the turbine" }),
    );
    let hits = strong.value.unwrap();
    assert_eq!(hits[0]["name"], "get_turbine_status");
    assert!(hits[0].get("weak").is_none(), "{hits}");
    assert!(!strong.content.contains("Note:"), "{}", strong.content);
    // An exact name is never weak, even when it is a common word.
    let exact = handle(&s, "tool_search", json!({ "query": "status" }));
    assert_eq!(exact.value.as_ref().unwrap()[0]["name"], "status");
    assert!(!exact.content.contains("Note:"), "{}", exact.content);

    // Batch: the note names the queries whose best candidate is weak.
    let batch = handle(
        &s,
        "tool_search",
        json!({ "queries": [{ "query": "send an email" }, { "query": "current status of the flux capacitor" }] }),
    );
    let value = batch.value.unwrap();
    assert!(
        value["results"][0]["candidates"][0].get("weak").is_none(),
        "{value}"
    );
    assert_eq!(
        value["results"][1]["candidates"][0]["weak"], true,
        "{value}"
    );
    assert!(
        batch
            .content
            .contains("Note: no tool matched \"current status of the flux capacitor\" well;"),
        "{}",
        batch.content
    );
    assert!(
        !batch.content.contains("\"send an email\" well"),
        "{}",
        batch.content
    );
}

#[test]
fn code_mode_search_hits_carry_the_weak_mark() {
    let e = Arc::new(TestExecutor::default());
    let s = session_with(
        status_catalog_tools(),
        json!({ "mode": "tools" }),
        e,
        SessionOptions::default(),
    )
    .unwrap();
    let hits = s
        .search_json("current status of my flux capacitor", &Value::Null)
        .unwrap();
    assert_eq!(hits[0]["weak"], true, "{hits}");
    let hits = s.search_json("send an email", &Value::Null).unwrap();
    assert!(hits[0].get("weak").is_none(), "{hits}");
}

// ---- what the model reads back (issue 27) ----------------------------------

#[test]
fn a_refused_call_says_what_input_was_expected() {
    let tools = vec![
        json!({ "name": "lookup", "owner": "kb", "description": "Look up a target in the knowledge base.",
        "inputSchema": { "type": "object", "additionalProperties": false, "required": ["target"],
                         "properties": { "target": { "type": "string" }, "limit": { "type": "integer" } } } }),
    ];
    let e = Arc::new(TestExecutor::default());
    let s = session_with(
        tools,
        json!({ "mode": "tools" }),
        e.clone(),
        SessionOptions::default(),
    )
    .unwrap();
    let expected = "Expected input: { target: string; limit?: number /* integer */ }.";
    let r = handle(
        &s,
        "tool_call",
        json!({ "id": "lookup", "args": { "targte": "x", "limit": 2.5 } }),
    );
    assert_eq!(code_of(&r), "INVALID_ARGS");
    assert!(r.content.contains(expected), "{}", r.content);
    // A bridged call from a code cell reads the same.
    let failure =
        block_on(s.call("openclaw:kb:lookup", json!({}), CallContext::default())).unwrap_err();
    assert_eq!(failure.code, "INVALID_ARGS");
    assert!(failure.message.contains(expected), "{}", failure.message);
    assert!(e.calls().is_empty(), "nothing ran");
}

#[test]
fn a_long_query_is_answered_on_its_prefix() {
    let (s, _) = session("tools");
    let query = format!(
        "weather forecast for a city {}",
        "with many more words than anyone needs ".repeat(120)
    );
    let total = query.chars().count();
    assert!(total > crate::limits::MAX_QUERY_CHARS);
    let r = handle(&s, "tool_search", json!({ "query": query }));
    assert!(r.ok, "{r:?}");
    assert_eq!(
        r.value.as_ref().unwrap()[0]["id"],
        "openclaw:weather:get_weather"
    );
    let searched = super::args::bounded_query(query.clone()).0.chars().count();
    assert!(
        searched <= crate::limits::MAX_QUERY_CHARS
            && searched > crate::limits::MAX_QUERY_CHARS - 64,
        "{searched}"
    );
    assert!(
        r.content.contains(&format!(
            "Note: the query was {total} characters; only its first {searched} were searched."
        )),
        "{}",
        r.content
    );
    // Code mode's openclaw.tools.search answers it too.
    let hits = s.search_json(&query, &Value::Null).unwrap();
    assert_eq!(hits[0]["id"], "openclaw:weather:get_weather");
    // A short query gets no note.
    assert!(!handle(&s, "tool_search", json!({ "query": "weather" }))
        .content
        .contains("Note: the query"));
}

/// The sample tools plus a 12-tool plugin, a session in `mode` with the capability directory as given.
fn capability_session(mode: &str, on: Option<bool>) -> Session {
    let mut tools = sample_tools();
    for i in 1..=12 {
        tools.push(json!({ "name": format!("chart_tool_{i:02}"), "owner": "charts", "description": format!("Draw chart kind {i}.") }));
    }
    let options = SessionOptions {
        capability_directory: on,
        ..Default::default()
    };
    session_with(
        tools,
        json!({ "mode": mode }),
        Arc::new(TestExecutor::default()),
        options,
    )
    .unwrap()
}

#[test]
fn capability_directory_is_off_by_default_and_on_when_asked() {
    let default = CAPABILITY_DIRECTORY_DEFAULT;
    assert!(!default);
    for mode in ["tools", "code"] {
        let off = capability_session(mode, None);
        assert!(
            off.surface(SurfaceFormat::Neutral)
                .directory_prompt
                .is_none(),
            "{mode}"
        );
        assert!(
            off.surface_for(SurfaceFormat::Neutral, Some("draw a chart"))
                .directory_prompt
                .is_none(),
            "{mode}"
        );
    }
    let tools = capability_session("tools", Some(true));
    let surface = tools.surface(SurfaceFormat::OpenaiResponses);
    let text = surface.directory_prompt.as_deref().unwrap();
    assert_eq!(
        text,
        "Deferred tools, by owner (schemas not loaded): find one with tool_search, then tool_call with its id or exact name.\n\
         - charts (12 tools): chart_tool_01, chart_tool_02, chart_tool_03, chart_tool_04, chart_tool_05, chart_tool_06, \
         chart_tool_07, chart_tool_08, chart_tool_09, chart_tool_10, … +2\n\
         - core (2 tools): fake_plugin_tool_01, send_message\n\
         - crm (1 tool): create_user\n\
         - weather (1 tool): get_weather\n\
         - MCP server github (1 tool)\n\
         - client app (1 tool)"
    );
    assert_eq!(surface.bytes.directory_prompt, text.len());
    // Same snapshot, same text: the provider's prompt cache keeps it.
    assert!(Arc::ptr_eq(
        &tools.directory_prompt().unwrap(),
        &tools.directory_prompt().unwrap()
    ));
    // Code mode says how to reach them from a cell; directory mode keeps its own directory.
    let code = capability_session("code", Some(true));
    assert!(code
        .directory_prompt()
        .unwrap()
        .contains("openclaw.tools.search(query)"));
    let directory = capability_session("directory", Some(true));
    assert!(directory
        .directory_prompt()
        .unwrap()
        .starts_with("Available deferred-schema tools:"));
}

#[test]
fn capability_directory_lists_what_the_request_needs_first() {
    let s = capability_session("tools", Some(true));
    let text = s
        .surface_for(
            SurfaceFormat::Neutral,
            Some("What is the weather in Lyon? Then create_user for Ada."),
        )
        .directory_prompt
        .clone()
        .unwrap();
    let owners: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(" (").next().unwrap())
        .collect();
    assert_eq!(owners[..2], ["- crm", "- weather"], "{text}");
    // Within an owner's line the matching tool comes first.
    let text = s
        .surface_for(SurfaceFormat::Neutral, Some("draw chart kind 11"))
        .directory_prompt
        .clone()
        .unwrap();
    assert!(
        text.contains("\n- charts (12 tools): chart_tool_11, chart_tool_01,"),
        "{text}"
    );
    // The tools are the memoized ones; the request never adds an untrusted name.
    let plain = s.surface(SurfaceFormat::Neutral);
    let turn = s.surface_for(
        SurfaceFormat::Neutral,
        Some("open a github issue: create_issue"),
    );
    assert_eq!(plain.tools, turn.tools);
    let text = turn.directory_prompt.as_deref().unwrap();
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("- MCP server github (1 tool)")
            && !text.contains("create_issue"),
        "{text}"
    );
}

#[test]
fn capability_directory_leaves_out_visible_tools() {
    // Tools mode shows core coding tools and direct tools with their schemas: not listed again.
    let mut tools = sample_tools();
    tools.push(json!({ "name": "read", "description": "Read a file." }));
    let options = SessionOptions {
        capability_directory: Some(true),
        ..Default::default()
    };
    let s = session_with(
        tools,
        json!({ "mode": "tools" }),
        Arc::new(TestExecutor::default()),
        options,
    )
    .unwrap();
    let text = s.directory_prompt().unwrap();
    assert!(!text.contains("read") && !text.contains("exec"), "{text}");
    assert!(
        text.contains("- core (2 tools): fake_plugin_tool_01, send_message"),
        "{text}"
    );
}

fn learning_catalog(scope: &str) -> Catalog {
    let options: CatalogOptions =
        serde_json::from_value(json!({ "learning": { "folder": false, "scope": scope } })).unwrap();
    Catalog::from_records(sample_tools(), &options).unwrap()
}

#[test]
fn a_successful_call_after_a_search_teaches_the_catalog_and_a_failed_one_does_not() {
    let catalog = learning_catalog("session-learns");
    let executor = TestExecutor::with("create_issue", ExecutorOutcome::Failed("boom".into()));
    let s = Session::new(
        &catalog,
        config(json!({ "mode": "tools" })),
        executor,
        SessionOptions::default(),
    )
    .unwrap();
    let query = "ping the team about it";
    // Neither tool matches these words: nothing to attribute a call to yet.
    handle(
        &s,
        "tool_call",
        json!({ "id": "openclaw:core:send_message", "args": { "channel": "c", "text": "t" } }),
    );
    assert_eq!(
        catalog.learning_status().unwrap().learned,
        0,
        "a call no search showed teaches nothing"
    );
    // A search that shows the tool, then a successful call of it.
    handle(
        &s,
        "tool_search",
        json!({ "query": format!("{query} send message") }),
    );
    handle(
        &s,
        "tool_call",
        json!({ "id": "openclaw:core:send_message", "args": { "channel": "c", "text": "t" } }),
    );
    let status = catalog.learning_status().unwrap();
    assert_eq!(status.learned, 1);
    // A failed call of a shown tool teaches nothing.
    handle(&s, "tool_search", json!({ "query": "open a github issue" }));
    handle(
        &s,
        "tool_call",
        json!({ "id": "mcp:github:create_issue", "args": { "title": "x" } }),
    );
    let status = catalog.learning_status().unwrap();
    assert_eq!(status.learned, 1);
    assert_eq!(status.ignored, 1);
    // The words that led to the call now find the tool, learned part shown by learnedParts.
    let parts = catalog.learned_parts(query).unwrap();
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].id, "openclaw:core:send_message");
    let hits = catalog.search(query, &SearchOptions::hits(None)).unwrap();
    assert_eq!(hits[0].id, "openclaw:core:send_message");
}

mod args {
    //! `tool_call` / `tool_describe` argument repair: the shapes models actually
    //! send (dotted keys, selectors that are arguments, empty or null wrappers,
    //! double-wrapped calls) against a real catalog.

    use serde_json::{json, Value};

    use crate::catalog::{Catalog, CatalogOptions, LookupStyle};
    use crate::error::ErrorCode;
    use crate::session::args::{parse_call, parse_describe, CallSpec};

    fn catalog() -> Catalog {
        let tools = vec![
            json!({ "name": "get_weather", "owner": "weather", "description": "Current weather for a city.",
                "inputSchema": { "type": "object", "properties": { "city": { "type": "string" }, "units": { "type": "string" } } } }),
            json!({ "name": "read_file", "description": "Read a file.",
                "inputSchema": { "type": "object", "properties": { "path": { "type": "string" }, "range": { "type": "object" } } } }),
            json!({ "name": "get_record", "description": "Fetch a record by its id.",
                "inputSchema": { "type": "object", "properties": { "id": { "type": "string" } } } }),
            json!({ "name": "create_user", "description": "Create a user with a display name.",
                "inputSchema": { "type": "object", "properties": { "name": { "type": "string" } } } }),
            json!({ "name": "send_message", "description": "Send a message.",
                "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } } }),
        ];
        Catalog::from_records(tools, &CatalogOptions::default()).unwrap()
    }

    fn call(c: &Catalog, raw: Value) -> CallSpec {
        match parse_call(c, &raw, LookupStyle::Structured) {
            Ok(spec) => spec,
            Err(e) => panic!("{raw} -> {e:?}"),
        }
    }

    fn name_of(c: &Catalog, spec: &CallSpec) -> String {
        c.entry(spec.ordinal).unwrap().name.clone()
    }

    fn refused(c: &Catalog, raw: Value) -> ErrorCode {
        match parse_call(c, &raw, LookupStyle::Structured) {
            Ok(spec) => panic!("{raw} was accepted: {spec:?}"),
            Err(e) => e.code,
        }
    }

    #[test]
    fn dotted_keys_become_nested_arguments() {
        let c = catalog();
        let spec = call(&c, json!({ "id": "read_file", "args.path": "x" }));
        assert_eq!(
            (name_of(&c, &spec).as_str(), &spec.args),
            ("read_file", &json!({ "path": "x" }))
        );
        assert!(spec.repaired.unwrap().contains("dotted"));
        let spec = call(
            &c,
            json!({ "id": "read_file", "input.path": "x", "arguments.range.start": 3, "args.range.end": 9 }),
        );
        assert_eq!(
            spec.args,
            json!({ "path": "x", "range": { "start": 3, "end": 9 } })
        );
        // Ordinary flattened keys win over dotted ones.
        let spec = call(
            &c,
            json!({ "id": "read_file", "path": "plain", "args.path": "dotted" }),
        );
        assert_eq!(spec.args, json!({ "path": "plain" }));
        // Explicit args win over dotted keys and are merged with the dotted extras.
        let spec = call(
            &c,
            json!({ "id": "read_file", "args": { "path": "explicit", "range": { "start": 1 } },
                                "args.path": "dotted", "args.range.start": 5, "args.range.end": 7 }),
        );
        assert_eq!(
            spec.args,
            json!({ "path": "explicit", "range": { "start": 1, "end": 7 } })
        );
        // A key that merely contains a dot is an ordinary argument.
        assert_eq!(
            call(&c, json!({ "id": "read_file", "path.txt": 1 })).args,
            json!({ "path.txt": 1 })
        );
        // Conflicting dotted keys and empty segments are refused, not guessed.
        assert_eq!(
            refused(
                &c,
                json!({ "id": "read_file", "args.range": 1, "args.range.start": 2 })
            ),
            ErrorCode::InvalidRequest
        );
        let deep: String = format!("args.{}", vec!["a"; 40].join("."));
        assert_eq!(
            refused(&c, json!({ "id": "read_file", deep: 1 })),
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            call(&c, json!({ "id": "read_file", "args..x": 1 })).args,
            json!({ "args..x": 1 })
        );
    }

    #[test]
    fn selectors_not_needed_to_identify_the_tool_are_arguments() {
        let c = catalog();
        let spec = call(&c, json!({ "toolId": "get_record", "id": "record-7" }));
        assert_eq!(
            (name_of(&c, &spec).as_str(), &spec.args),
            ("get_record", &json!({ "id": "record-7" }))
        );
        let spec = call(&c, json!({ "id": "create_user", "name": "x" }));
        assert_eq!(
            (name_of(&c, &spec).as_str(), &spec.args),
            ("create_user", &json!({ "name": "x" }))
        );
        // `name` naming another tool next to explicit args: the id's tool runs with the args.
        let spec = call(
            &c,
            json!({ "id": "get_weather", "name": "send_message", "args": { "city": "Paris" } }),
        );
        assert_eq!(
            (name_of(&c, &spec).as_str(), &spec.args),
            ("get_weather", &json!({ "city": "Paris" }))
        );
        // Agreeing selectors are not arguments.
        let spec = call(
            &c,
            json!({ "id": "openclaw:weather:get_weather", "name": "get_weather", "city": "Paris" }),
        );
        assert_eq!(spec.args, json!({ "city": "Paris" }));
        // Two different tools and no explicit args: refused.
        for raw in [
            json!({ "id": "get_weather", "name": "send_message" }),
            json!({ "toolId": "get_weather", "id": "send_message", "city": "Paris" }),
            json!({ "id": "get_weather", "toolId": "send_message", "args": {} }),
        ] {
            assert_eq!(refused(&c, raw), ErrorCode::AmbiguousTool);
        }
        // Nothing names a tool: the strongest selector's error.
        assert_eq!(
            refused(&c, json!({ "id": "record-7", "name": "x" })),
            ErrorCode::ToolNotFound
        );
    }

    #[test]
    fn empty_and_null_wrappers_next_to_flattened_keys() {
        let c = catalog();
        for raw in [
            json!({ "id": "get_weather", "args": {}, "city": "Paris" }),
            json!({ "id": "get_weather", "input": {}, "city": "Paris" }),
            json!({ "id": "get_weather", "args": "{}", "city": "Paris" }),
            json!({ "id": "get_weather", "args": null, "city": "Paris" }),
            json!({ "id": "get_weather", "input": null, "args": { "city": "Paris" } }),
            json!({ "id": "get_weather", "args": {}, "input": { "city": "Paris" } }),
        ] {
            assert_eq!(
                call(&c, raw.clone()).args,
                json!({ "city": "Paris" }),
                "{raw}"
            );
        }
        // Non-empty args next to ordinary flattened keys stay refused.
        assert_eq!(
            refused(
                &c,
                json!({ "id": "get_weather", "args": { "city": "x" }, "units": "metric" })
            ),
            ErrorCode::InvalidRequest
        );
    }

    #[test]
    fn double_wrapped_payloads_are_hoisted() {
        let c = catalog();
        for raw in [
            json!({ "args": { "id": "get_weather", "args": { "city": "Paris" } } }),
            json!({ "input": { "id": "get_weather", "args": { "city": "Paris" } } }),
            json!({ "arguments": "{\"toolId\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}" }),
            json!({ "args": { "name": "get_weather", "city": "Paris" }, "input": null }),
        ] {
            let spec = call(&c, raw.clone());
            assert_eq!(
                (name_of(&c, &spec).as_str(), &spec.args),
                ("get_weather", &json!({ "city": "Paris" })),
                "{raw}"
            );
            assert!(spec.repaired.unwrap().contains("unwrapped"));
        }
        // Not a wrapped call: the wrapper holds no selector, or sits next to other keys.
        assert_eq!(
            refused(&c, json!({ "args": { "city": "Paris" } })),
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            refused(
                &c,
                json!({ "args": { "id": "get_weather" }, "city": "Paris" })
            ),
            ErrorCode::InvalidRequest
        );
        let described = |raw: Value| {
            parse_describe(&c, &raw, LookupStyle::Structured)
                .map(|(_, o)| c.entry(o).unwrap().name.clone())
        };
        assert_eq!(
            described(json!({ "input": { "id": "get_weather" } })).unwrap(),
            "get_weather"
        );
        assert_eq!(
            described(json!({ "args": { "toolId": "send_message" } })).unwrap(),
            "send_message"
        );
        assert_eq!(
            described(json!({ "input": { "query": "weather" } }))
                .unwrap_err()
                .code,
            ErrorCode::InvalidRequest
        );
    }

    #[test]
    fn bounded_query_cuts_long_queries_at_a_word_within_the_limit() {
        use crate::limits::MAX_QUERY_CHARS;
        use crate::session::args::bounded_query;
        assert_eq!(
            bounded_query("send a message".into()),
            ("send a message".to_string(), None)
        );
        let exact = "é".repeat(MAX_QUERY_CHARS);
        assert_eq!(bounded_query(exact.clone()), (exact, None));
        // Words: cut at the last space of the final 64 characters.
        let words = "word ".repeat(1_000);
        let (cut, total) = bounded_query(words.clone());
        assert_eq!(total, Some(5_000));
        assert!(
            cut.chars().count() <= MAX_QUERY_CHARS && cut.ends_with("word"),
            "{}",
            &cut[cut.len() - 10..]
        );
        assert!(words.starts_with(&cut));
        // No space near the end (one long token, multi-byte): a hard cut on a char boundary.
        let (cut, total) = bounded_query("日".repeat(MAX_QUERY_CHARS + 10));
        assert_eq!(
            (cut.chars().count(), total),
            (MAX_QUERY_CHARS, Some(MAX_QUERY_CHARS + 10))
        );
    }
}

mod hybrid {
    //! Hybrid ranking through a session: the model's searches (tool_search,
    //! batches, code-mode lookups) embed queries through the offload pool, never
    //! on the thread that polls the call; the synchronous catalog API embeds on
    //! its caller and ranks the same. The model is the test stand-in (hashed
    //! bags of words), so these run without the model package.

    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use serde_json::{json, Value};

    use super::block_on;
    use crate::catalog::{Catalog, CatalogOptions, RankingMode, SearchOptions};
    use crate::config::resolve;
    use crate::search::semantic::query_embeddings;
    use crate::search::semantic::tests::word_model_at;
    use crate::session::*;

    /// Never reached: these tests only search.
    struct NoExecutor;
    impl Executor for NoExecutor {
        fn call(&self, _call: ExecutorCall) -> BoxFuture<ExecutorOutcome> {
            Box::pin(async { ExecutorOutcome::Missing("not in this test".into()) })
        }
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({ "name": name, "description": description, "inputSchema": { "type": "object" } })
    }

    fn sample_tools() -> Vec<Value> {
        vec![
            tool("exec", "Run a shell command in the workspace."),
            tool("read", "Read a file from disk."),
            tool("list_dir", "List the files of a folder."),
            tool("send_email", "Send an email message to a recipient."),
            tool("web_search", "Search the web for current news."),
            tool("fake_plugin_tool_01", "Fake plugin tool number one for QA."),
        ]
    }

    /// Runs each job on a new thread.
    struct ThreadOffload;
    impl Offload for ThreadOffload {
        fn run(&self, job: Box<dyn FnOnce() + Send>) {
            std::thread::spawn(job);
        }
    }

    fn hybrid_catalog(folder: &str) -> Catalog {
        let dir = std::env::temp_dir().join(folder);
        word_model_at(&dir);
        let options = CatalogOptions {
            ranking: Some(RankingMode::Hybrid),
            model: Some(dir),
            vector_cache: Some(json!(false)),
            ..CatalogOptions::default()
        };
        let catalog = Catalog::from_records(sample_tools(), &options).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while catalog.ranking_status().active != RankingMode::Hybrid {
            assert!(
                Instant::now() < deadline,
                "the tool vectors were not ready in 30 s"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        catalog
    }

    fn ids(value: &Value) -> Vec<String> {
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn control_tools_embed_off_the_polling_thread() {
        let catalog = hybrid_catalog("tool-search-test-words-session");
        let s = Session::new(
            &catalog,
            resolve(&json!({ "mode": "tools" }), true),
            Arc::new(NoExecutor),
            SessionOptions::default(),
        )
        .unwrap();
        let offload = || HandleOptions {
            offload: Some(OffloadHandle(Arc::new(ThreadOffload))),
            ..HandleOptions::default()
        };
        let (_, here_before) = query_embeddings();

        let single = block_on(s.handle(
            "tool_search",
            json!({ "query": "run a shell command in the workspace" }),
            offload(),
        ));
        assert!(single.ok, "{single:?}");
        let batch = block_on(s.handle(
        "tool_search",
        json!({ "queries": [{ "query": "read a file from disk" }, { "query": "fake plugin tool for qa" }] }),
        offload(),
    ));
        assert!(batch.ok, "{batch:?}");
        assert!(s.search_json_needs_embedding("a code cell's new lookup"));
        let cell = block_on(s.search_json_async(
            "a code cell's new lookup",
            &Value::Null,
            Some(&OffloadHandle(Arc::new(ThreadOffload))),
        ));
        assert!(cell.is_ok());
        assert!(
            !s.search_json_needs_embedding("a code cell's new lookup"),
            "its vectors are cached now"
        );
        assert_eq!(
            query_embeddings().1,
            here_before,
            "no query was embedded on the thread polling the calls"
        );

        // The synchronous API embeds on its caller, and ranks as the session did.
        let fresh = "list the files of a folder";
        let sync_hits = catalog
            .search(fresh, &SearchOptions::hits(Some(5.0)))
            .unwrap();
        assert_eq!(
            query_embeddings().1,
            here_before + 1,
            "catalog.search embeds on its caller"
        );
        let via_session = block_on(s.handle(
            "tool_search",
            json!({ "query": fresh, "limit": 5 }),
            offload(),
        ));
        let session_ids = ids(via_session.value.as_ref().unwrap());
        assert_eq!(
            sync_hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
            session_ids
        );
    }

    #[test]
    fn a_session_without_a_pool_ranks_an_unembedded_query_as_its_catalog_does() {
        // No offload: the embedding runs inline (a gateway always passes one), and
        // the ranking is still the catalog's.
        let catalog = hybrid_catalog("tool-search-test-words-inline");
        let s = Session::new(
            &catalog,
            resolve(&json!({ "mode": "tools" }), true),
            Arc::new(NoExecutor),
            SessionOptions::default(),
        )
        .unwrap();
        let query = "execute a command";
        let r = block_on(s.handle(
            "tool_search",
            json!({ "query": query, "limit": 3 }),
            HandleOptions::default(),
        ));
        let expected: Vec<String> = catalog
            .search(query, &SearchOptions::hits(Some(3.0)))
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(ids(r.value.as_ref().unwrap()), expected);
    }
}

mod hydrate {
    //! Directory-mode hydration: whole-prompt reading with bounded work, names a
    //! direct call can resolve, and capability families hydrated together.

    use std::sync::Arc;

    use serde_json::{json, Value};

    use crate::catalog::{Catalog, CatalogOptions};
    use crate::config::resolve;
    use crate::session::*;

    /// The gateway side is never reached by hydration.
    struct NoExecutor;
    impl Executor for NoExecutor {
        fn call(&self, _call: ExecutorCall) -> BoxFuture<ExecutorOutcome> {
            Box::pin(async { ExecutorOutcome::Missing("not in this test".into()) })
        }
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({ "name": name, "description": description,
            "inputSchema": { "type": "object", "properties": { "q": { "type": "string" } } } })
    }

    fn assistant_tools() -> Vec<Value> {
        vec![
        tool("web_search", "Search the web. Returns titles, URLs and snippets of matching pages."),
        tool("web_fetch", "Fetch a URL and extract its readable content as markdown or text."),
        tool("memory_search", "Search the agent's long-term memory notes before answering questions about prior work, decisions, people, preferences or todos."),
        tool("memory_get", "Read a snippet from the memory files by path and line range."),
        tool("browser", "Control a browser: open pages, click, type and take snapshots."),
        tool("read", "Read a file from the workspace."),
        tool("write", "Write a file in the workspace."),
        tool("send_message", "Send a chat message to a channel."),
        tool("cron", "Schedule reminders and recurring jobs."),
        tool("image", "Analyze an image with a vision model."),
        json!({ "name": "get_weather", "owner": "weather", "description": "Current weather and forecast for a city.",
                "inputSchema": { "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] } }),
        tool("create_user", "Create a CRM user with a display name."),
    ]
    }

    fn directory_session(tools: Vec<Value>) -> Session {
        let catalog = Catalog::from_records(tools, &CatalogOptions::default()).unwrap();
        Session::new(
            &catalog,
            resolve(&json!({ "mode": "directory" }), true),
            Arc::new(NoExecutor),
            SessionOptions::default(),
        )
        .unwrap()
    }

    fn hydrated(s: &Session, prompt: &str) -> Vec<String> {
        s.hydrate(prompt, None, &[])
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    /// Prose with many distinct words (more than a search query keeps) and no
    /// tool vocabulary: sentence `i` of a pasted document.
    fn filler(chars: usize) -> String {
        let mut out = String::new();
        let mut i = 0usize;
        while out.len() < chars {
            out.push_str(&format!(
            "Paragraph {i} of the ledger notes that lorem{i} ipsum{} dolor sits near quartz{} amber{} and velvet{}. ",
            i * 7 % 97,
            i * 13 % 89,
            i * 3 % 83,
            i * 11 % 79
        ));
            i += 1;
        }
        out
    }

    #[test]
    fn the_request_at_the_end_of_a_long_prompt_is_read() {
        let s = directory_session(assistant_tools());
        // ~1,000 characters, then the request: more words than one query keeps.
        let short = format!(
            "{}\n\nWhat will the weather forecast be in Lyon tomorrow?",
            filler(1_000)
        );
        assert!(
            hydrated(&s, &short).contains(&"get_weather".to_string()),
            "{:?}",
            hydrated(&s, &short)
        );
        // A ~20,000-token paste (about 80,000 characters), then the request.
        let long = format!(
            "{}\nPlease give me the weather forecast for Lyon",
            filler(80_000)
        );
        assert!(
            hydrated(&s, &long).contains(&"get_weather".to_string()),
            "{:?}",
            hydrated(&s, &long)
        );
        // The request first, then the paste.
        let head = format!(
            "Check the weather forecast for Lyon, then look at this log:\n{}",
            filler(80_000)
        );
        assert!(
            hydrated(&s, &head).contains(&"get_weather".to_string()),
            "{:?}",
            hydrated(&s, &head)
        );
        // Beyond the read bound the prompt's ends are still read (and the work stays bounded).
        let huge = format!(
            "{}\nWhat is the weather forecast in Lyon?",
            filler(3 * crate::session::hydrate::MAX_PROMPT_BYTES)
        );
        assert!(
            hydrated(&s, &huge).contains(&"get_weather".to_string()),
            "{:?}",
            hydrated(&s, &huge)
        );
        // A tool named in the middle of a paste is read too.
        let named = format!(
            "{} The create_user tool failed here. {} Thanks.",
            filler(20_000),
            filler(20_000)
        );
        assert!(
            hydrated(&s, &named).contains(&"create_user".to_string()),
            "{:?}",
            hydrated(&s, &named)
        );
        assert!(hydrated(&s, &filler(80_000)).len() <= 4);
    }

    #[test]
    fn hydration_never_offers_a_name_a_direct_call_refuses() {
        let mut tools = assistant_tools();
        tools.push(json!({ "name": "send_message", "owner": "chat", "description": "Send a chat message through the chat plugin." }));
        let s = directory_session(tools);
        let defs = s.hydrate(
            "Send a chat message to the team channel about the weather forecast in Lyon",
            None,
            &["openclaw:chat:send_message".into(), "send_message".into()],
        );
        assert!(
            defs.iter().any(|d| d.name == "get_weather"),
            "{:?}",
            defs.iter().map(|d| &d.name).collect::<Vec<_>>()
        );
        for def in &defs {
            assert_ne!(
                def.name, "send_message",
                "two tools share the name: a direct call would be AMBIGUOUS_TOOL"
            );
            assert!(
                s.handles(&def.name),
                "{} must be directly callable",
                def.name
            );
        }
    }

    #[test]
    fn implied_capability_families_hydrate_together() {
        let s = directory_session(assistant_tools());
        let research = hydrated(
            &s,
            "Research the history of the printing press and summarize what the main sources say.",
        );
        assert!(
            research.contains(&"web_search".into()) && research.contains(&"web_fetch".into()),
            "{research:?}"
        );
        let recall = hydrated(
            &s,
            "Do you remember what I told you about my sister's birthday?",
        );
        assert!(
            recall.contains(&"memory_search".into()) && recall.contains(&"memory_get".into()),
            "{recall:?}"
        );
        let facts = hydrated(&s, "Who is the CEO of Northwind Traders?");
        assert!(facts.contains(&"web_search".into()), "{facts:?}");
        assert!(!facts.iter().any(|n| n.starts_with("memory_")), "{facts:?}");
        // Families come from names and descriptions, not from fixed tool names.
        let s = directory_session(vec![
            tool(
                "search_internet",
                "Look up pages on the internet and return links.",
            ),
            tool("fetch_url", "Download a page and return its text."),
            tool(
                "recall_notes",
                "Search what the user asked the assistant to remember.",
            ),
            tool("notes_memory_read", "Read one remembered note in full."),
            tool("send_message", "Send a chat message to a channel."),
        ]);
        let research = hydrated(
            &s,
            "Please research electric ferries online and cite your sources.",
        );
        assert!(
            research.contains(&"search_internet".into()) && research.contains(&"fetch_url".into()),
            "{research:?}"
        );
        let recall = hydrated(&s, "What did I tell you last time about the garden?");
        assert!(
            recall.contains(&"recall_notes".into()) && recall.contains(&"notes_memory_read".into()),
            "{recall:?}"
        );
    }

    /// OpenClaw's own tools for web research and delivery, with their descriptions.
    fn openclaw_core_tools() -> Vec<Value> {
        vec![
        tool("web_search", "Search the web. Returns titles, URLs, and snippets."),
        tool("web_fetch", "Fetch and extract readable content from a URL (HTML to markdown/text)."),
        tool("message", "Send, read, and manage messages and channel actions"),
        tool("memory_search", "Search the agent's long-term memory notes before answering questions about prior work."),
        tool("memory_get", "Read a snippet from the memory files by path and line range."),
        tool("browser", "Control a browser: open pages, click, type and take snapshots."),
        tool("read", "Read a file from the workspace."),
        tool("cron", "Schedule reminders and recurring jobs."),
        tool("image_generate", "Generate an image from a text prompt."),
        tool("tts", "Convert text to speech audio."),
        json!({ "name": "market_quote", "owner": "finance", "description": "Current stock quote for a ticker symbol.",
                "inputSchema": { "type": "object", "properties": { "symbol": { "type": "string" } }, "required": ["symbol"] } }),
    ]
    }

    #[test]
    fn news_urls_and_posting_hydrate_the_web_and_message_families() {
        let s = directory_session(openclaw_core_tools());
        let news = hydrated(&s, "search today's latest AI news");
        assert!(
            news.contains(&"web_search".into()) && news.contains(&"web_fetch".into()),
            "{news:?}"
        );
        assert!(!news.iter().any(|n| n.starts_with("memory_")), "{news:?}");
        let post = hydrated(&s, "read https://example.com and post it here");
        assert!(
            post.contains(&"web_fetch".into()) && post.contains(&"message".into()),
            "{post:?}"
        );
        let market = hydrated(&s, "latest market news");
        assert!(market.contains(&"web_search".into()), "{market:?}");
        // Posting alone: the message tool, and no web tools it did not ask for.
        let tell = hydrated(&s, "Tell the team channel that the build is green");
        assert_eq!(
            tell.first().map(String::as_str),
            Some("message"),
            "{tell:?}"
        );
    }

    #[test]
    fn hydrate_options_are_read_from_json_with_the_wrong_field_named() {
        use crate::session::HydrateOptions;
        assert_eq!(
            HydrateOptions::from_json(&Value::Null).unwrap(),
            HydrateOptions::default()
        );
        let read =
            HydrateOptions::from_json(&json!({ "maxTools": 2, "required": ["read"] })).unwrap();
        assert_eq!(
            (read.max_tools, read.required),
            (Some(2), vec!["read".to_string()])
        );
        for (bad, says) in [
            (json!([]), "options must be an object"),
            (json!({ "maxTools": 1.5 }), "maxTools"),
            (json!({ "maxTools": -1 }), "maxTools"),
            (json!({ "required": "read" }), "required"),
            (json!({ "required": [1] }), "required"),
        ] {
            let err = HydrateOptions::from_json(&bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest);
            assert!(err.message.contains(says), "{bad}: {}", err.message);
        }
    }
}

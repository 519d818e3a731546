//! Functional behaviour through the bridge with real node children.

mod common;

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use tool_search_sandbox::{BridgeHost, CancelToken, CodeRunResult, CodeRunner, FailureKind};

async fn run(runner: &CodeRunner, code: &str) -> (CodeRunResult, Arc<TestHost>) {
    let host = TestHost::new();
    let result = runner
        .run(
            code.into(),
            host.clone() as Arc<dyn BridgeHost>,
            CancelToken::new(),
        )
        .await;
    (result, host)
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_describe_call_through_the_bridge() {
    let runner = runner();
    let code = r#"
        const hits = await openclaw.tools.search('echo', { limit: 3 });
        const schema = await openclaw.tools.describe(hits[0].id);
        const out = await openclaw.tools.call(schema.id, { marker: 'm1' });
        return { hits, schema, out };
    "#;
    let (result, host) = run(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let value = result.value.clone().unwrap();
    assert_eq!(value["hits"][0]["id"], "echo");
    assert_eq!(value["schema"]["id"], "echo");
    assert_eq!(value["out"], json!({"marker": "m1"}));
    assert_eq!(result.telemetry.bridge_calls.search, 1);
    assert_eq!(result.telemetry.bridge_calls.describe, 1);
    assert_eq!(result.telemetry.bridge_calls.call, 1);
    assert_eq!(host.calls.load(Ordering::SeqCst), 1);
    let containment = result
        .telemetry
        .containment
        .clone()
        .expect("containment report");
    assert!(
        containment.seccomp
            && containment.setsid
            && containment.pdeathsig
            && containment.close_range
    );
    assert_eq!(result.telemetry.workdir_clean, Some(true));
    assert_eq!(result.telemetry.child_exit.as_deref(), Some("signal 9"));
    // The serialized shape the binding hands to JS.
    let js = serde_json::to_value(&result).unwrap();
    assert_eq!(js["ok"], true);
    assert!(js["telemetry"]["bridgeCalls"]["search"].is_number());
    assert!(js["telemetry"]["durationMs"].is_number());
    assert!(js.get("error").is_none());
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_errors_and_policy_rejections_reach_the_code() {
    let runner = runner();
    let code = r#"
        const out = {};
        try { await openclaw.tools.describe('nope'); } catch (e) { out.describe = e.code; }
        try { await openclaw.tools.call('secret_admin', { all: true }); } catch (e) { out.call = e.code + ':' + e.message; }
        try { await openclaw.tools.search('x', 5); } catch (e) { out.options = e.name; }
        return out;
    "#;
    let (result, _) = run(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let value = result.value.unwrap();
    assert_eq!(value["describe"], "not_found");
    assert_eq!(value["call"], "policy_denied:secret_admin is not allowed");
    assert_eq!(value["options"], "TypeError");
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_with_promise_all_respect_the_cap() {
    let mut config = config();
    config.caps.concurrent_calls = 3;
    let runner = runner_with(config);
    let code = r#"
        const sums = await Promise.all(Array.from({ length: 25 }, (_, i) => openclaw.tools.call('add', { a: i, b: 1 })));
        const [s, d] = await Promise.all([openclaw.tools.search(''), openclaw.tools.describe('add')]);
        return { sums, n: s.length, d: d.id };
    "#;
    let (result, host) = run(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let value = result.value.unwrap();
    let sums: Vec<f64> = value["sums"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(sums, (0..25).map(|i| (i + 1) as f64).collect::<Vec<_>>());
    assert_eq!(value["d"], "add");
    assert_eq!(host.calls.load(Ordering::SeqCst), 25);
    assert_eq!(result.telemetry.bridge_calls.call, 25);
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_are_kept_in_order_and_capped() {
    let mut config = config();
    config.caps.log_lines = 5;
    let runner = runner_with(config);
    let code = r#"
        console.log('hello', 1, { a: [1, 2] });
        console.warn('careful');
        console.error(new Error('boom').message);
        for (let i = 0; i < 100; i++) console.log('line', i);
        return 'done';
    "#;
    let (result, _) = run(&runner, code).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(result.logs[0], "hello 1 { a: [ 1, 2 ] }");
    assert_eq!(result.logs[1], "[warn] careful");
    assert_eq!(result.logs[2], "[error] boom");
    assert_eq!(result.logs.len(), 5);
    assert!(result.telemetry.logs_truncated);
    assert_eq!(result.value, Some(json!("done")));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_unsafe_return_values_are_made_safe() {
    let runner = runner();
    let code = r#"
        const cyc = { name: 'c' }; cyc.self = cyc;
        return { big: 12345678901234567890n, undef: undefined, fn() {}, nan: NaN, inf: -Infinity,
                 cyc, map: new Map([['k', 1]]), set: new Set([1, 2]), err: new TypeError('bad'),
                 date: new Date(0), sym: Symbol('s'), nested: [undefined, () => 1] };
    "#;
    let (result, _) = run(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert_eq!(v["big"], "12345678901234567890");
    assert!(v.get("undef").is_none() && v.get("fn").is_none() && v.get("sym").is_none());
    assert_eq!(v["nan"], json!(null));
    assert_eq!(v["inf"], json!(null));
    assert_eq!(v["cyc"], json!({"name": "c", "self": "[Circular]"}));
    assert_eq!(v["map"], json!([["k", 1]]));
    assert_eq!(v["set"], json!([1, 2]));
    assert_eq!(v["err"], json!({"name": "TypeError", "message": "bad"}));
    assert_eq!(v["date"], "1970-01-01T00:00:00.000Z");
    assert_eq!(v["nested"], json!([null, null]));

    let (undef, _) = run(&runner, "return undefined").await;
    assert!(undef.ok);
    assert_eq!(undef.value, Some(json!(null)));

    let (bad, _) = run(&runner, "return { toJSON() { throw new Error('nope') } }").await;
    assert_eq!(bad.failure_kind(), Some(FailureKind::RuntimeError));
    assert!(bad.error.unwrap().message.contains("not serializable"));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrown_errors_and_syntax_errors_are_runtime_errors() {
    let runner = runner();
    let (thrown, _) = run(
        &runner,
        "console.log('before'); throw new RangeError('out of range')",
    )
    .await;
    assert!(!thrown.ok);
    let error = thrown.error.clone().unwrap();
    assert_eq!(error.kind, FailureKind::RuntimeError);
    assert!(
        error.message.contains("RangeError: out of range"),
        "{}",
        error.message
    );
    assert_eq!(thrown.logs, vec!["before".to_string()]);

    let (non_error, _) = run(&runner, "throw { weird: true }").await;
    assert!(non_error.error.unwrap().message.contains("weird"));

    let (syntax, _) = run(&runner, "return (").await;
    let error = syntax.error.unwrap();
    assert_eq!(error.kind, FailureKind::RuntimeError);
    assert!(error.message.contains("SyntaxError"), "{}", error.message);

    let (rejected, _) = run(&runner, "await Promise.reject(new Error('async boom'))").await;
    assert!(rejected.error.unwrap().message.contains("async boom"));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_aborts_an_in_flight_call() {
    let runner = runner();
    let host = TestHost::new();
    let result = runner
        .run_with_timeout(
            "await openclaw.tools.call('slow', {}); return 'unreachable'".into(),
            host.clone() as Arc<dyn BridgeHost>,
            CancelToken::new(),
            Duration::from_millis(700),
        )
        .await;
    assert_eq!(
        result.failure_kind(),
        Some(FailureKind::Timeout),
        "{result:?}"
    );
    let tokens = host.tokens.lock().unwrap();
    assert_eq!(tokens.len(), 1);
    assert!(
        tokens[0].is_cancelled(),
        "the in-flight call's signal must fire"
    );
    assert_eq!(result.telemetry.calls_cancelled, 1);
    assert_eq!(result.telemetry.child_exit.as_deref(), Some("signal 9"));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_signal_ends_the_run_and_cancels_calls() {
    let runner = runner();
    let host = TestHost::new();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let watcher = host.clone();
    tokio::spawn(async move {
        // Abort once the call is in flight.
        while watcher.tokens.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        trigger.cancel();
    });
    let result = runner
        .run(
            "await openclaw.tools.call('slow', {}); return 1".into(),
            host.clone() as Arc<dyn BridgeHost>,
            cancel,
        )
        .await;
    assert_eq!(
        result.failure_kind(),
        Some(FailureKind::Aborted),
        "{result:?}"
    );
    assert!(host.tokens.lock().unwrap()[0].is_cancelled());

    let pre = CancelToken::new();
    pre.cancel();
    let result = runner
        .run("return 1".into(), host as Arc<dyn BridgeHost>, pre)
        .await;
    assert_eq!(result.failure_kind(), Some(FailureKind::Aborted));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_results_and_code_are_refused() {
    let mut config = config();
    config.caps.result_bytes = 10_000;
    config.caps.code_bytes = 5_000;
    let runner = runner_with(config);
    let (big, _) = run(&runner, "return 'x'.repeat(20000)").await;
    assert_eq!(
        big.failure_kind(),
        Some(FailureKind::OutputLimit),
        "{big:?}"
    );
    let long_code = format!("return 1 // {}", "y".repeat(6000));
    let (code, _) = run(&runner, &long_code).await;
    assert_eq!(code.failure_kind(), Some(FailureKind::RuntimeError));
    assert!(code.error.unwrap().message.contains("over the cap"));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_pool_uses_each_child_once() {
    let mut config = config();
    config.pool_size = 1;
    let runner = runner_with(config);
    runner.prewarm();
    let mut pids = HashSet::new();
    let mut warm = 0;
    for _ in 0..4 {
        // Give the background start a chance; correctness does not depend on it.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (result, _) = run(&runner, "return process.pid").await;
        assert!(result.ok, "{result:?}");
        assert_eq!(
            result.value.clone().unwrap().as_u64().map(|p| p as u32),
            result.telemetry.child_pid
        );
        assert!(
            pids.insert(result.telemetry.child_pid.unwrap()),
            "a child was reused"
        );
        if result.telemetry.warm {
            warm += 1;
        }
    }
    assert!(warm >= 1, "no run used a warm child");
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_cells_complete() {
    let mut config = config();
    config.pool_size = 2;
    let runner = runner_with(config);
    let runner = Arc::new(runner);
    let mut tasks = Vec::new();
    for i in 0..20 {
        let runner = runner.clone();
        tasks.push(tokio::spawn(async move {
            let code = format!(
                "const r = await openclaw.tools.call('add', {{ a: {i}, b: 1 }}); return r;"
            );
            run(&runner, &code).await.0
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let result = task.await.unwrap();
        assert!(result.ok, "{result:?}");
        assert_eq!(result.value.and_then(|v| v.as_f64()), Some((i + 1) as f64));
    }
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_config_kills_before_returning_and_reaps_soon_after() {
    let mut config = config();
    config.await_reap = false;
    let runner = runner_with(config);
    let (result, _) = run(&runner, "setInterval(() => {}, 1); return process.pid").await;
    assert!(result.ok, "{result:?}");
    let pid = result.telemetry.child_pid.unwrap();
    // Liveness wait, not a timing assertion: the reaper thread collects the killed child.
    let mut gone = false;
    for _ in 0..200 {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(gone, "the child was not reaped");
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serializer_survives_cycles_through_maps_and_sets() {
    let runner = runner();
    let code = r#"
        const o = { m: new Map([[1, 2]]) }; o.self = o;
        const s = new Set(['a']); s.add(s);
        const m = new Map(); m.set('me', m); m.set({ k: 1 }, new Set([1n]));
        const shared = { x: 1 };
        return { o, s, m, twice: [shared, shared] };
    "#;
    let (result, _) = run(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert_eq!(v["o"], json!({"m": [[1, 2]], "self": "[Circular]"}));
    assert_eq!(v["s"], json!(["a", "[Circular]"]));
    assert_eq!(v["m"], json!([["me", "[Circular]"], [{"k": 1}, ["1"]]]));
    // Only ancestors are cycles: a value seen twice side by side is written twice.
    assert_eq!(v["twice"], json!([{"x": 1}, {"x": 1}]));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serializer_follows_json_rules_and_honours_to_json() {
    let runner = runner();
    let code = r#"
        class Point { constructor() { this.x = 1; } toJSON(key) { return 'point@' + key; } }
        const err = new RangeError('r'); err.extra = 1;
        return {
            p: new Point(), list: [new Point()], boxed: [new Number(2), new String('s'), new Boolean(false), Object(3n)],
            sparse: [1, , 3], negZero: -0, bytes: Buffer.from('hi'), typed: new Uint8Array([7]),
            err, nested: { deeper: { big: 10n ** 20n } }, skipped: { f() {}, s: Symbol('x'), u: undefined, keep: 0 },
        };
    "#;
    let (result, _) = run(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert_eq!(v["p"], "point@p");
    assert_eq!(v["list"], json!(["point@0"]));
    assert_eq!(v["boxed"], json!([2, "s", false, "3"]));
    assert_eq!(v["sparse"], json!([1, null, 3]));
    assert_eq!(v["negZero"], json!(0));
    assert_eq!(v["bytes"], json!({"type": "Buffer", "data": [104, 105]}));
    assert_eq!(v["typed"], json!({"0": 7}));
    assert_eq!(v["err"], json!({"name": "RangeError", "message": "r"}));
    assert_eq!(v["nested"]["deeper"]["big"], "100000000000000000000");
    assert_eq!(v["skipped"], json!({"keep": 0}));
    // Patched globals cannot change the framing: the result is still well formed.
    let (patched, _) = run(
        &runner,
        r#"JSON.stringify = () => '1}\n{"t":"ready"'; Array.prototype.join = () => 'x'; String = () => '"';
           return { a: 'b', n: [1, 2n] };"#,
    )
    .await;
    assert!(patched.ok, "{patched:?}");
    assert_eq!(patched.value, Some(json!({"a": "b", "n": [1, "2"]})));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serializer_reports_hostile_values_as_errors_and_bounds_size_and_depth() {
    let mut config = config();
    config.caps.result_bytes = 10_000;
    let runner = runner_with(config);
    let cases = [
        ("return { a: { get b() { throw new Error('boom') } } }", "reading $.a.b threw Error: boom"),
        ("return [{ toJSON() { throw new TypeError('no json') } }]", "calling toJSON of $[0] threw TypeError: no json"),
        ("const p = Proxy.revocable({}, {}); p.revoke(); return { x: p.proxy }", "reading toJSON of $.x threw TypeError"),
        ("return { p: new Proxy({}, { ownKeys() { throw new RangeError('trap') } }) }", "listing the keys of $.p threw RangeError: trap"),
        ("let d = {}; const root = d; for (let i = 0; i < 200; i++) { d.n = {}; d = d.n; } return root", "nested deeper than"),
        ("return { get ['k'.repeat(100000)]() { throw 1 } }", "threw Thrown: 1"),
    ];
    for (code, expected) in cases {
        let (result, _) = run(&runner, code).await;
        assert_eq!(
            result.failure_kind(),
            Some(FailureKind::RuntimeError),
            "{code}: {result:?}"
        );
        let message = result.error.unwrap().message;
        assert!(
            message.contains("not serializable") && message.contains(expected),
            "{code}: {message}"
        );
        assert!(message.len() < 2000, "{code}: the message is not bounded");
    }
    // A value nested as deep as the bridge allows still goes through.
    let (deep, _) = run(&runner, "let d = {}; const root = d; for (let i = 0; i < 60; i++) { d.n = {}; d = d.n; } return root").await;
    assert!(deep.ok, "{deep:?}");
    // Size is bounded while walking, not after building the whole text.
    for code in [
        "return new Array(1e9)",
        "return new Map(Array.from({ length: 1e5 }, (_, i) => [i, 'v' + i]))",
    ] {
        let (big, _) = run(&runner, code).await;
        assert_eq!(
            big.failure_kind(),
            Some(FailureKind::OutputLimit),
            "{code}: {big:?}"
        );
    }
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_errors_carry_no_child_stack_frames() {
    let runner = runner();
    let code = r#"
        const seen = {};
        const grab = async (name, f) => {
            try { await f(); seen[name] = 'resolved'; }
            catch (e) { seen[name] = { stack: e.stack, code: e.code ?? null, name: e.name, message: e.message }; }
        };
        await grab('policy', () => openclaw.tools.call('secret_admin', { all: true }));
        await grab('missing', () => openclaw.tools.describe('nope'));
        await grab('options', () => openclaw.tools.search('x', 5));
        await grab('args', () => openclaw.tools.call('echo', { big: 1n }));
        return seen;
    "#;
    let (result, _) = run(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert_eq!(
        v["policy"],
        json!({"stack": "Error: secret_admin is not allowed", "code": "policy_denied", "name": "Error", "message": "secret_admin is not allowed"})
    );
    assert_eq!(v["missing"]["stack"], "Error: no tool nope");
    assert_eq!(v["missing"]["code"], "not_found");
    assert_eq!(
        v["options"]["stack"],
        "TypeError: search options must be an object"
    );
    assert_eq!(v["args"]["code"], "invalid_args");
    assert!(!v["args"]["stack"].as_str().unwrap().contains("\n"), "{v}");
    // Rethrown, it is the cell's failure with the same text; the cell's own errors keep only the
    // cell's frames (with the cell's line numbers).
    let (rethrown, _) = run(&runner, "await openclaw.tools.call('secret_admin', {})").await;
    assert_eq!(
        rethrown.error.unwrap().message,
        "Error: secret_admin is not allowed"
    );
    let (own, _) = run(&runner, "const x = 1;\nthrow new Error('mine');").await;
    let message = own.error.unwrap().message;
    assert!(
        message.starts_with("Error: mine\n    at tool_search_code.js:2:"),
        "{message}"
    );
    assert!(
        !message.contains("[eval]") && !message.contains("node:"),
        "{message}"
    );
}

/// A host whose `call` takes a while (so a call is still running when the cell returns), counts
/// what finished, and records every call's arguments and cancel token.
#[derive(Default)]
struct DelayHost {
    calls: std::sync::atomic::AtomicUsize,
    finished: Arc<std::sync::atomic::AtomicUsize>,
    seen: std::sync::Mutex<Vec<serde_json::Value>>,
    tokens: std::sync::Mutex<Vec<CancelToken>>,
}

impl BridgeHost for DelayHost {
    fn search(
        &self,
        _: &str,
        _: &serde_json::Value,
    ) -> Result<serde_json::Value, tool_search_sandbox::BridgeError> {
        Ok(json!([]))
    }
    fn describe(&self, id: &str) -> Result<serde_json::Value, tool_search_sandbox::BridgeError> {
        Ok(json!({ "id": id }))
    }
    fn call(
        &self,
        id: String,
        args: serde_json::Value,
        cancel: CancelToken,
    ) -> tool_search_sandbox::CallFuture {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(args.clone());
        self.tokens.lock().unwrap().push(cancel.clone());
        let finished = self.finished.clone();
        Box::pin(async move {
            if id == "deny" {
                return Err(tool_search_sandbox::BridgeError::new(
                    "policy_denied",
                    "denied",
                ));
            }
            tokio::select! {
                _ = cancel.cancelled() => Err(tool_search_sandbox::BridgeError::new("cancelled", "cancelled")),
                _ = tokio::time::sleep(Duration::from_millis(50)) => {
                    finished.fetch_add(1, Ordering::SeqCst);
                    Ok(args)
                }
            }
        })
    }
}

impl DelayHost {
    fn cancelled(&self) -> usize {
        self.tokens
            .lock()
            .unwrap()
            .iter()
            .filter(|t| t.is_cancelled())
            .count()
    }
}

async fn run_delayed(runner: &CodeRunner, code: &str) -> (CodeRunResult, Arc<DelayHost>) {
    let host = Arc::new(DelayHost::default());
    let result = runner
        .run(
            code.into(),
            host.clone() as Arc<dyn BridgeHost>,
            CancelToken::new(),
        )
        .await;
    (result, host)
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unawaited_call_is_waited_for_in_every_cell() {
    let runner = runner();
    for i in 0..10 {
        let code = format!("openclaw.tools.call('echo', {{ cell: {i} }}); return 'done';");
        let (result, host) = run_delayed(&runner, &code).await;
        assert!(result.ok, "cell {i}: {result:?}");
        assert_eq!(
            host.calls.load(Ordering::SeqCst),
            1,
            "cell {i}: the call did not reach the host once"
        );
        assert_eq!(
            host.finished.load(Ordering::SeqCst),
            1,
            "cell {i}: the call did not finish"
        );
        assert_eq!(host.cancelled(), 0, "cell {i}: the call was cancelled");
        assert_eq!(result.telemetry.bridge_calls.call, 1, "cell {i}");
        assert_eq!(result.telemetry.calls_cancelled, 0, "cell {i}");
        assert_eq!(host.seen.lock().unwrap()[0], json!({ "cell": i }));
    }
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chained_calls_run_and_fill_the_returned_value() {
    let runner = runner();
    let code = r#"
        const out = [];
        openclaw.tools.call('echo', { step: 1 })
            .then((r) => { out.push(r); return r; })
            .then(() => openclaw.tools.call('echo', { step: 2 }))
            .then((r) => out.push(r));
        return out;
    "#;
    let (result, host) = run_delayed(&runner, code).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(host.calls.load(Ordering::SeqCst), 2);
    assert_eq!(host.finished.load(Ordering::SeqCst), 2);
    assert_eq!(host.cancelled(), 0);
    assert_eq!(result.telemetry.bridge_calls.call, 2);
    // The value is serialized once the calls have settled.
    assert_eq!(result.value, Some(json!([{ "step": 1 }, { "step": 2 }])));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unawaited_failures_and_body_errors_report_after_the_calls_settle() {
    let runner = runner();
    // A rejected call nobody awaits is not an unhandled rejection of the cell.
    let (denied, host) = run_delayed(
        &runner,
        "openclaw.tools.call('deny', {}); return 'still ok';",
    )
    .await;
    assert_eq!(denied.value, Some(json!("still ok")), "{denied:?}");
    assert_eq!(host.calls.load(Ordering::SeqCst), 1);
    // The body's own failure still wins, but only after its calls have finished.
    let (thrown, host) = run_delayed(
        &runner,
        "openclaw.tools.call('echo', {}); throw new Error('body failed');",
    )
    .await;
    assert_eq!(
        thrown.failure_kind(),
        Some(FailureKind::RuntimeError),
        "{thrown:?}"
    );
    assert!(thrown.error.unwrap().message.contains("body failed"));
    assert_eq!(host.finished.load(Ordering::SeqCst), 1);
    assert_eq!(host.cancelled(), 0);
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_started_after_the_result_never_reach_the_host() {
    let runner = runner();
    let code = r#"
        setTimeout(() => openclaw.tools.call('echo', { late: 'timeout' }), 0);
        setImmediate(() => setImmediate(() => openclaw.tools.call('echo', { late: 'immediate' })));
        return 'done';
    "#;
    for _ in 0..3 {
        let (result, host) = run_delayed(&runner, code).await;
        assert_eq!(result.value, Some(json!("done")), "{result:?}");
        assert_eq!(
            host.calls.load(Ordering::SeqCst),
            0,
            "{:?}",
            host.seen.lock().unwrap()
        );
        assert_eq!(result.telemetry.bridge_calls.call, 0);
    }
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_ends_a_cell_whose_calls_never_settle() {
    let runner = runner();
    let host = TestHost::new();
    let result = runner
        .run_with_timeout(
            "openclaw.tools.call('slow', {}); return 'returned early'".into(),
            host.clone() as Arc<dyn BridgeHost>,
            CancelToken::new(),
            Duration::from_millis(700),
        )
        .await;
    assert_eq!(
        result.failure_kind(),
        Some(FailureKind::Timeout),
        "{result:?}"
    );
    assert_eq!(host.calls.load(Ordering::SeqCst), 1);
    assert!(host.tokens.lock().unwrap()[0].is_cancelled());
    assert_eq!(result.telemetry.calls_cancelled, 1);
}

// Gateway exit: `shutdown()` kills the warm child and removes every working directory. It is
// process-wide, so it runs in a re-executed copy of this test binary playing the gateway.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[test]
fn shutdown_kills_pooled_children_and_removes_their_workdirs() {
    if std::env::var_os("SANDBOX_TEST_SHUTDOWN_ROOT").is_some() {
        return act_as_exiting_gateway();
    }
    drop(runner()); // fails here, not in the child process, when code mode cannot run
    let root = std::env::temp_dir().join(format!("sandbox-test-shutdown-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "shutdown_kills_pooled_children_and_removes_their_workdirs",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SANDBOX_TEST_SHUTDOWN_ROOT", &root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The test harness prints its own text on the same line.
    let line = stdout
        .split("SHUTDOWN ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_else(|| panic!("{stdout}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    let pid: u32 = fields[0].parse().unwrap();
    assert_eq!(fields[1], "killed=1", "{line}");
    assert_eq!(fields[2], "removed=1", "{line}");
    // The gateway has exited: nothing of it is left in the work root.
    let left: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let mut gone = false;
    for _ in 0..200 {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(gone, "the warm child outlived the gateway");
    std::fs::remove_dir_all(&root).unwrap();
}

fn act_as_exiting_gateway() {
    let root = std::path::PathBuf::from(std::env::var_os("SANDBOX_TEST_SHUTDOWN_ROOT").unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut config = config();
        config.pool_size = 1;
        config.work_root = Some(root.clone());
        let runner = runner_with(config);
        // One cell (its workdir is removed after the run), then the pool refills: one warm child.
        let (result, _) = run(&runner, "return 1").await;
        assert!(result.ok, "{result:?}");
        for _ in 0..500 {
            if runner.warm_children() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(runner.warm_children(), 1, "the pool did not refill");
        let dirs: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        let pid = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .find(|pid| {
                std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dirs[0])
            })
            .expect("the warm child runs in its workdir");
        let report = tool_search_sandbox::shutdown();
        println!(
            "SHUTDOWN {pid} killed={} removed={}",
            report.children_killed, report.workdirs_removed
        );
        // No new child starts after shutdown.
        let (after, _) = run(&runner, "return 2").await;
        assert_eq!(
            after.failure_kind(),
            Some(FailureKind::RuntimeUnavailable),
            "{after:?}"
        );
    });
}

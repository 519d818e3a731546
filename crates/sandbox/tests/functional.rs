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
    let result = runner.run(code.into(), host.clone() as Arc<dyn BridgeHost>, CancelToken::new()).await;
    (result, host)
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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
    let containment = result.telemetry.containment.clone().expect("containment report");
    assert!(containment.seccomp && containment.setsid && containment.pdeathsig && containment.close_range);
    assert_eq!(result.telemetry.workdir_clean, Some(true));
    assert_eq!(result.telemetry.child_exit.as_deref(), Some("signal 9"));
    // The serialized shape the binding hands to JS.
    let js = serde_json::to_value(&result).unwrap();
    assert_eq!(js["ok"], true);
    assert!(js["telemetry"]["bridgeCalls"]["search"].is_number());
    assert!(js["telemetry"]["durationMs"].is_number());
    assert!(js.get("error").is_none());
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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
    let sums: Vec<f64> = value["sums"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(sums, (0..25).map(|i| (i + 1) as f64).collect::<Vec<_>>());
    assert_eq!(value["d"], "add");
    assert_eq!(host.calls.load(Ordering::SeqCst), 25);
    assert_eq!(result.telemetry.bridge_calls.call, 25);
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrown_errors_and_syntax_errors_are_runtime_errors() {
    let runner = runner();
    let (thrown, _) = run(&runner, "console.log('before'); throw new RangeError('out of range')").await;
    assert!(!thrown.ok);
    let error = thrown.error.clone().unwrap();
    assert_eq!(error.kind, FailureKind::RuntimeError);
    assert!(error.message.contains("RangeError: out of range"), "{}", error.message);
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

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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
    assert_eq!(result.failure_kind(), Some(FailureKind::Timeout), "{result:?}");
    let tokens = host.tokens.lock().unwrap();
    assert_eq!(tokens.len(), 1);
    assert!(tokens[0].is_cancelled(), "the in-flight call's signal must fire");
    assert_eq!(result.telemetry.calls_cancelled, 1);
    assert_eq!(result.telemetry.child_exit.as_deref(), Some("signal 9"));
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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
        .run("await openclaw.tools.call('slow', {}); return 1".into(), host.clone() as Arc<dyn BridgeHost>, cancel)
        .await;
    assert_eq!(result.failure_kind(), Some(FailureKind::Aborted), "{result:?}");
    assert!(host.tokens.lock().unwrap()[0].is_cancelled());

    let pre = CancelToken::new();
    pre.cancel();
    let result = runner.run("return 1".into(), host as Arc<dyn BridgeHost>, pre).await;
    assert_eq!(result.failure_kind(), Some(FailureKind::Aborted));
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_results_and_code_are_refused() {
    let mut config = config();
    config.caps.result_bytes = 10_000;
    config.caps.code_bytes = 5_000;
    let runner = runner_with(config);
    let (big, _) = run(&runner, "return 'x'.repeat(20000)").await;
    assert_eq!(big.failure_kind(), Some(FailureKind::OutputLimit), "{big:?}");
    let long_code = format!("return 1 // {}", "y".repeat(6000));
    let (code, _) = run(&runner, &long_code).await;
    assert_eq!(code.failure_kind(), Some(FailureKind::RuntimeError));
    assert!(code.error.unwrap().message.contains("over the cap"));
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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
        assert_eq!(result.value.clone().unwrap().as_u64().map(|p| p as u32), result.telemetry.child_pid);
        assert!(pids.insert(result.telemetry.child_pid.unwrap()), "a child was reused");
        if result.telemetry.warm {
            warm += 1;
        }
    }
    assert!(warm >= 1, "no run used a warm child");
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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
            let code = format!("const r = await openclaw.tools.call('add', {{ a: {i}, b: 1 }}); return r;");
            run(&runner, &code).await.0
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let result = task.await.unwrap();
        assert!(result.ok, "{result:?}");
        assert_eq!(result.value.and_then(|v| v.as_f64()), Some((i + 1) as f64));
    }
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
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

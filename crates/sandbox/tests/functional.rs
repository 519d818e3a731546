//! Functional behaviour through the bridge with real node children.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use common::*;
use serde_json::json;
use tool_search_sandbox::{BridgeHost, CancelToken, FailureKind};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_describe_call_through_the_bridge() {
    let Some(runner) = runner() else { return };
    let host = TestHost::new();
    let code = r#"
        const hits = await openclaw.tools.search('echo', { limit: 3 });
        const schema = await openclaw.tools.describe(hits[0].id);
        const out = await openclaw.tools.call(schema.id, { marker: 'm1' });
        return { hits, schema, out };
    "#;
    let result = runner.run(code.into(), host.clone() as Arc<dyn BridgeHost>, CancelToken::new()).await;
    assert!(result.ok, "{result:?}");
    let value = result.value.unwrap();
    assert_eq!(value["hits"][0]["id"], "echo");
    assert_eq!(value["schema"]["id"], "echo");
    assert_eq!(value["out"], json!({"marker": "m1"}));
    assert_eq!(result.telemetry.bridge_calls.search, 1);
    assert_eq!(result.telemetry.bridge_calls.describe, 1);
    assert_eq!(result.telemetry.bridge_calls.call, 1);
    assert_eq!(host.calls.load(Ordering::SeqCst), 1);
    let containment = result.telemetry.containment.expect("containment report");
    assert!(containment.seccomp && containment.setsid && containment.pdeathsig);
    assert_eq!(result.telemetry.workdir_clean, Some(true));
}

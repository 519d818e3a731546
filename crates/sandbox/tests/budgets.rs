//! Gateway-wide budgets: the cell-slot cap and the children's memory group.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use tool_search_sandbox::{BridgeHost, CancelToken, FailureKind};

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cell_beyond_the_slot_cap_waits_then_fails_as_busy_without_running() {
    let mut config = config();
    config.max_concurrent_cells = 1;
    let runner = Arc::new(runner_with(config));
    let holder = {
        let runner = Arc::clone(&runner);
        tokio::spawn(async move {
            let host = TestHost::new();
            runner
                .run_with_timeout("while (true) {}".into(), host as Arc<dyn BridgeHost>, CancelToken::new(), Duration::from_millis(3000))
                .await
        })
    };
    // Let the holder take the only slot.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let host = TestHost::new();
    let waiting = runner
        .run_with_timeout(
            "await openclaw.tools.call('echo', { a: 1 }); return 1".into(),
            host.clone() as Arc<dyn BridgeHost>,
            CancelToken::new(),
            Duration::from_millis(1000),
        )
        .await;
    assert_eq!(waiting.failure_kind(), Some(FailureKind::Busy), "{waiting:?}");
    assert!(waiting.error.as_ref().unwrap().message.contains("capacity"));
    assert_eq!(host.calls.load(std::sync::atomic::Ordering::SeqCst), 0, "nothing of the refused cell ran");
    assert!(waiting.telemetry.child_pid.is_none());
    let held = holder.await.unwrap();
    assert_eq!(held.failure_kind(), Some(FailureKind::Timeout));
    // The slot is free again.
    let (after, _) = run_code(&runner, "return 2").await;
    assert!(after.ok, "{after:?}");
}

#[cfg_attr(not(code_mode_host), ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_group_is_reported_applied_or_with_its_reason() {
    let mut config = config();
    config.children_memory_bytes = 512 * 1024 * 1024;
    let runner = runner_with(config);
    let report = runner.capability_report().memory_cgroup;
    assert_eq!(report.limit_bytes, 512 * 1024 * 1024);
    if report.applied {
        let dir = report.path.clone().expect("an applied group has a path");
        assert!(dir.is_dir());
        let limit_file = if report.version.as_deref() == Some("v2") { "memory.max" } else { "memory.limit_in_bytes" };
        let limit: u64 = std::fs::read_to_string(dir.join(limit_file)).unwrap().trim().parse().unwrap();
        assert_eq!(limit, 512 * 1024 * 1024);
        // A cell runs with the group in place; the group goes with its runner.
        let host = TestHost::new();
        let result = runner.run("return process.pid".into(), host as Arc<dyn BridgeHost>, CancelToken::new()).await;
        assert!(result.ok, "{result:?}");
        drop(runner);
        assert!(!dir.exists(), "the group is removed with its runner");
    } else {
        assert!(report.reason.as_deref().is_some_and(|r| !r.is_empty()), "{report:?}");
    }
}

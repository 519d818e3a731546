//! What a cell's result says when the cell fails for a reason of the runner's (memory, output,
//! launcher, deadline, a dead child): a stable kind and one sentence that names no host path, pid
//! or native stack. The child's stderr is for the operator's log only.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use tool_search_sandbox::{
    BridgeHost, CancelToken, CodeRunResult, CodeRunner, FailureKind, LAUNCHER_NAME,
};

/// The failure's kind and message, asserting the message holds nothing of the host.
fn clean_failure(result: &CodeRunResult) -> (FailureKind, String) {
    let error = result.error.as_ref().expect("a failure");
    let message = error.message.clone();
    assert!(!message.contains('/'), "a path in {message:?}");
    assert!(!message.contains("pid"), "a pid in {message:?}");
    if let Some(pid) = result.telemetry.child_pid {
        assert!(
            !message.contains(&pid.to_string()),
            "the child's pid in {message:?}"
        );
    }
    assert!(!message.contains("    at "), "a stack in {message:?}");
    assert!(
        !message.contains('\n') && message.len() < 200,
        "not one sentence: {message:?}"
    );
    (error.kind, message)
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sandbox-faults-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_flood_reports_the_limit_not_the_gc_trace() {
    let runner = runner();
    let (result, _) = run_code(
        &runner,
        "const a = []; while (true) a.push(new Array(1e6).fill(1))",
    )
    .await;
    assert_eq!(
        clean_failure(&result),
        (
            FailureKind::MemoryLimit,
            "the cell ran out of memory (limit 256 MB)".to_string()
        ),
        "{result:?}"
    );
    // The runner reaped the child to read how it ended.
    assert!(result.telemetry.child_exit.is_some(), "{result:?}");
    let (after, _) = run_code(&runner, "return 1 + 1").await;
    assert_eq!(after.value.and_then(|v| v.as_i64()), Some(2));
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_and_deadline_faults_are_one_sentence() {
    let runner = runner();
    let (big, _) = run_code(&runner, "return 'x'.repeat(50e6)").await;
    assert_eq!(
        clean_failure(&big),
        (
            FailureKind::OutputLimit,
            "the returned value is at least 50000002 bytes of JSON, over the cap of 262144; return a smaller value (a summary, a slice or a count)".to_string()
        )
    );
    let (noisy, _) = run_code(
        &runner,
        "for (;;) process.stderr.write('/srv/secret pid 4242\\n'.repeat(4096))",
    )
    .await;
    assert_eq!(
        clean_failure(&noisy),
        (
            FailureKind::OutputLimit,
            "the cell wrote more than 1048576 bytes to its stdout and stderr".to_string()
        )
    );
    let slow = runner
        .run_with_timeout(
            "while (true) {}".into(),
            TestHost::new() as Arc<dyn BridgeHost>,
            CancelToken::new(),
            Duration::from_millis(1000),
        )
        .await;
    assert_eq!(
        clean_failure(&slow),
        (
            FailureKind::Timeout,
            "the code did not finish within 1000 ms".to_string()
        )
    );
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_dies_says_how_without_quoting_its_stderr() {
    // The bypass prelude keeps `process` whole, so the cell can end its own process.
    let runner = bypass_runner();
    let (exited, _) = run_code(
        &runner,
        "process.stderr.write('FATAL at /opt/node/bin/node pid 4242\\n    at x (/srv/a.js:1:1)\\n'); process.reallyExit(3);",
    )
    .await;
    assert_eq!(
        clean_failure(&exited),
        (
            FailureKind::RuntimeError,
            "the cell's process exited (code 3) before it returned a result".to_string()
        ),
        "{exited:?}"
    );
    let (crashed, _) = run_code(&runner, "process.kill(process.pid, 'SIGSEGV');").await;
    assert_eq!(
        clean_failure(&crashed),
        (
            FailureKind::RuntimeError,
            "the cell's process crashed (signal 11) before it returned a result".to_string()
        ),
        "{crashed:?}"
    );
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_non_executable_launcher_is_named_without_its_path() {
    let dir = scratch("launcher");
    let path = dir.join(LAUNCHER_NAME);
    let inert = dir.join("inert").join(LAUNCHER_NAME);
    std::fs::create_dir_all(inert.parent().unwrap()).unwrap();
    std::fs::copy(launcher_path(), &inert).unwrap();
    std::fs::set_permissions(&inert, std::fs::Permissions::from_mode(0o644)).unwrap();
    for (launcher, expected) in [
        (&path, "the code-mode launcher openclaw-tool-search-launcher is missing at its configured path"),
        (&inert, "the code-mode launcher openclaw-tool-search-launcher at its configured path is not executable"),
    ] {
        let mut config = config();
        config.launcher_path = Some(launcher.clone());
        let runner = CodeRunner::new(config).unwrap();
        let report = runner.capability_report();
        assert!(!report.available);
        let reason = report.reason.unwrap();
        // The operator's reason names the file it looked for.
        assert!(
            reason.starts_with(expected) && reason.contains(&launcher.display().to_string()),
            "{reason}"
        );
        assert!(!reason.contains("permission model"), "{reason}");
        let (result, _) = run_code(&runner, "return 1").await;
        assert_eq!(
            clean_failure(&result),
            (
                FailureKind::RuntimeUnavailable,
                format!("code mode is unavailable: {expected}")
            )
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! Gateway-wide budgets: the cell-slot cap (and its default from the machine), the children's
//! memory group and their CPU isolation (cpu group, nice value, policy).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use tool_search_sandbox::{BridgeHost, CancelToken, CpuIsolation, FailureKind, SchedPolicy};

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
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
                .run_with_timeout(
                    "while (true) {}".into(),
                    host as Arc<dyn BridgeHost>,
                    CancelToken::new(),
                    Duration::from_millis(3000),
                )
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
    assert_eq!(
        waiting.failure_kind(),
        Some(FailureKind::Busy),
        "{waiting:?}"
    );
    assert!(waiting.error.as_ref().unwrap().message.contains("capacity"));
    assert_eq!(
        host.calls.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing of the refused cell ran"
    );
    assert!(waiting.telemetry.child_pid.is_none());
    let held = holder.await.unwrap();
    assert_eq!(held.failure_kind(), Some(FailureKind::Timeout));
    // The slot is free again.
    let (after, _) = run_code(&runner, "return 2").await;
    assert!(after.ok, "{after:?}");
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
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
        let limit_file = if report.version.as_deref() == Some("v2") {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        let limit: u64 = std::fs::read_to_string(dir.join(limit_file))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(limit, 512 * 1024 * 1024);
        // A cell runs with the group in place; the group goes with its runner.
        let host = TestHost::new();
        let result = runner
            .run(
                "return process.pid".into(),
                host as Arc<dyn BridgeHost>,
                CancelToken::new(),
            )
            .await;
        assert!(result.ok, "{result:?}");
        drop(runner);
        assert!(!dir.exists(), "the group is removed with its runner");
    } else {
        assert!(
            report.reason.as_deref().is_some_and(|r| !r.is_empty()),
            "{report:?}"
        );
    }
}

/// Fields 19 (nice) and 41 (policy) of `/proc/<pid>/task/<tid>/stat`, for every thread.
fn thread_priorities(pid: u64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // The command name may hold spaces: fields start after its closing parenthesis (field 3 on).
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        out.push((
            fields[19 - 3].parse().unwrap(),
            fields[41 - 3].parse().unwrap(),
        ));
    }
    out
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unless_the_gateway_names_a_policy_children_run_idle_under_their_cpu_group_else_batch() {
    let runner = runner_with(config());
    let report = runner.capability_report();
    let expected = if report.cpu_cgroup.applied {
        SchedPolicy::Idle
    } else {
        SchedPolicy::Batch
    };
    assert_eq!(report.cpu_isolation.policy, expected, "{report:?}");
    let (result, _host) = run_code(&runner, "return 1").await;
    assert!(result.ok, "{result:?}");
    let containment = result
        .telemetry
        .containment
        .clone()
        .expect("containment record");
    assert_eq!(
        containment.sched_policy,
        expected.as_str(),
        "{containment:?}"
    );
    assert!(containment.priority_locked, "{containment:?}");
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cpu_isolation_applied_is_in_the_capability_report_and_each_containment_record() {
    let mut config = config();
    config.cpu = CpuIsolation {
        weight: 20,
        max_share: Some(0.5),
        nice: 12,
        policy: SchedPolicy::Batch,
        policy_set: true,
    };
    let runner = runner_with(config.clone());
    let report = runner.capability_report();
    assert_eq!(report.cpu_isolation, config.cpu);
    let group = report.cpu_cgroup.clone();
    assert_eq!(group.weight, 20);
    if group.applied {
        let dir = group.path.clone().expect("an applied group has a path");
        let read = |file: &str| {
            std::fs::read_to_string(dir.join(file))
                .unwrap()
                .trim()
                .to_string()
        };
        let quota = (0.5 * report.cpu_budget.cores * 100_000.0).round() as u64;
        if group.version.as_deref() == Some("v1") {
            // The gateway (this test process) joined the group that holds the children's group,
            // inside the cgroup it was started in.
            let gateway = group
                .gateway_path
                .clone()
                .expect("v1: the gateway's own group");
            assert_eq!(dir.parent(), Some(gateway.as_path()));
            let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
            let gateway_name = gateway.file_name().unwrap().to_str().unwrap();
            assert!(
                own.lines()
                    .any(|l| l.contains("cpu") && l.ends_with(gateway_name)),
                "{own}"
            );
            assert_eq!(read("cpu.shares"), "204", "20 × 1024 / 100");
            assert_eq!(group.shares, Some(204));
            assert_eq!(
                (read("cpu.cfs_quota_us"), read("cpu.cfs_period_us")),
                (quota.to_string(), "100000".to_string())
            );
        } else {
            assert_eq!(read("cpu.weight"), "20");
            assert_eq!(read("cpu.max"), format!("{quota} 100000"));
        }
        assert_eq!(
            group.max.as_deref(),
            Some(format!("{quota} 100000").as_str())
        );
    } else {
        assert!(
            group.reason.as_deref().is_some_and(|r| !r.is_empty()),
            "{group:?}"
        );
    }

    // A cell: while it waits on a call, the host reads the child's threads and cgroups in /proc.
    // (nice, policy) per thread, and /proc/<pid>/cgroup, as the host saw them.
    type Seen = Option<(Vec<(i64, i64)>, String)>;
    let seen: Arc<std::sync::Mutex<Seen>> = Arc::default();
    let host = TestHost::new();
    {
        let seen = Arc::clone(&seen);
        *host.on_pid.lock().unwrap() = Some(Box::new(move |pid| {
            let cgroups =
                std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
            *seen.lock().unwrap() = Some((thread_priorities(pid), cgroups));
        }));
    }
    // (`pid` holds the call until the run ends: the cell ends at its deadline.)
    let code = "await openclaw.tools.call('pid', { pid: process.pid }); return 1";
    let result = runner
        .run_with_timeout(
            code.into(),
            host as Arc<dyn BridgeHost>,
            CancelToken::new(),
            Duration::from_millis(2000),
        )
        .await;
    assert_eq!(
        result.failure_kind(),
        Some(FailureKind::Timeout),
        "{result:?}"
    );
    let containment = result
        .telemetry
        .containment
        .clone()
        .expect("containment record");
    assert_eq!(
        (containment.nice, containment.sched_policy.as_str()),
        (12, "batch"),
        "{containment:?}"
    );
    assert!(containment.priority_locked, "{containment:?}");
    let autogroups = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .map(|t| t.trim() == "1")
        .unwrap_or(false);
    assert_eq!(
        containment.autogroup,
        if autogroups { "nice 12" } else { "off" },
        "{containment:?}"
    );
    let cpu_entries: Vec<&String> = result
        .telemetry
        .cgroups
        .iter()
        .filter(|g| g.starts_with("cpu ("))
        .collect();
    assert_eq!(
        cpu_entries.len(),
        usize::from(group.applied),
        "{:?}",
        result.telemetry.cgroups
    );
    // The record matches what the kernel shows for the child: every thread at nice 12, SCHED_BATCH
    // (3), and inside the group when there is one.
    let (threads, cgroups) = seen
        .lock()
        .unwrap()
        .clone()
        .expect("the host saw the child");
    assert!(threads.len() > 1, "node runs several threads: {threads:?}");
    assert!(
        threads.iter().all(|&t| t == (12, libc::SCHED_BATCH as i64)),
        "{threads:?}"
    );
    if group.applied {
        let name = group
            .path
            .as_ref()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            cgroups
                .lines()
                .any(|l| l.ends_with(&name) && l.contains("cpu")),
            "{cgroups}"
        );
        assert!(
            cpu_entries[0].contains(if group.version.as_deref() == Some("v1") {
                "shares 204"
            } else {
                "weight 20"
            })
        );
        let dir = group.path.clone().unwrap();
        drop(runner);
        assert!(!dir.exists(), "the cpu group is removed with its runner");
    }
}

#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_children_are_below_the_gateway_before_any_cell() {
    let mut config = config();
    config.pool_size = 1;
    config.cpu.policy = SchedPolicy::Idle;
    let runner = runner_with(config);
    runner.prewarm();
    let started = std::time::Instant::now();
    while runner.warm_children() == 0 && started.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(runner.warm_children(), 1, "the pool did not fill");
    // The pooled child's record (made by the launcher when the pool started it, before any cell)
    // comes with the cell that uses it.
    let (result, _) = run_code(&runner, "return process.pid").await;
    assert!(result.ok, "{result:?}");
    assert!(result.telemetry.warm, "the cell took the pooled child");
    let containment = result.telemetry.containment.expect("containment record");
    assert_eq!(
        (containment.nice, containment.sched_policy.as_str()),
        (10, "idle"),
        "{containment:?}"
    );
    assert_eq!(
        result.value,
        Some(serde_json::json!(result.telemetry.child_pid.unwrap()))
    );
}

#[test]
fn admission_follows_the_cores_and_can_be_configured() {
    use tool_search_sandbox::admission::{cells_for, cpu_budget, default_concurrent_cells};
    let budget = cpu_budget();
    let config = tool_search_sandbox::RunnerConfig::new("/nonexistent/node");
    assert_eq!(config.max_concurrent_cells, default_concurrent_cells());
    assert_eq!(config.max_concurrent_cells, cells_for(budget.whole_cores()));
    assert!(config.max_concurrent_cells >= 2 && config.max_concurrent_cells <= 64);
    // The capability report carries the figure and its inputs, and a configured value wins.
    let mut unprobed = config.clone();
    unprobed.probe_on_new = false;
    unprobed.launcher_path = Some(launcher_path());
    let report = tool_search_sandbox::CodeRunner::new(unprobed.clone())
        .unwrap()
        .capability_report();
    assert_eq!(report.max_concurrent_cells, cells_for(budget.whole_cores()));
    assert_eq!(report.cpu_budget, budget);
    unprobed.max_concurrent_cells = 3;
    let report = tool_search_sandbox::CodeRunner::new(unprobed)
        .unwrap()
        .capability_report();
    assert_eq!(report.max_concurrent_cells, 3);
}

#[test]
fn cpu_settings_out_of_range_are_configuration_errors() {
    let base = tool_search_sandbox::RunnerConfig::new("/nonexistent/node");
    type Change = Box<dyn Fn(&mut CpuIsolation)>;
    let cases: Vec<(&str, Change)> = vec![
        ("weight 0", Box::new(|c| c.weight = 0)),
        ("weight 10001", Box::new(|c| c.weight = 10_001)),
        ("nice -1", Box::new(|c| c.nice = -1)),
        ("nice 20", Box::new(|c| c.nice = 20)),
        ("max 0", Box::new(|c| c.max_share = Some(0.0))),
        ("max 1.5", Box::new(|c| c.max_share = Some(1.5))),
        ("max NaN", Box::new(|c| c.max_share = Some(f64::NAN))),
    ];
    for (what, change) in cases {
        let mut config = base.clone();
        change(&mut config.cpu);
        assert!(
            tool_search_sandbox::validate_config(&config).is_err(),
            "{what} was accepted"
        );
        assert!(
            tool_search_sandbox::CodeRunner::new(config).is_err(),
            "{what} was accepted"
        );
    }
    let mut fine = base.clone();
    fine.cpu = CpuIsolation {
        weight: 10_000,
        max_share: Some(1.0),
        nice: 0,
        policy: SchedPolicy::Other,
        policy_set: true,
    };
    assert!(tool_search_sandbox::validate_config(&fine).is_ok());
}

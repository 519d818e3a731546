//! Directory-mode hydration: whole-prompt reading with bounded work, names a
//! direct call can resolve, and capability families hydrated together.

use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::catalog::{Catalog, CatalogOptions};
use crate::config::resolve;

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
        filler(3 * super::hydrate::MAX_PROMPT_BYTES)
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
    let read = HydrateOptions::from_json(&json!({ "maxTools": 2, "required": ["read"] })).unwrap();
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

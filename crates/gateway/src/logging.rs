//! Opt-in tracing of the engine: off unless `OPENCLAW_TOOL_SEARCH_LOG` is set (an `EnvFilter`
//! directive such as `info` or `openclaw_tool_search=debug`). Output goes to stderr, or to the
//! file in `OPENCLAW_TOOL_SEARCH_LOG_FILE`; never to stdout (the gateway may speak a protocol
//! there). The binding calls [`init`] once, when the addon loads.

use std::sync::OnceLock;

/// Installs the subscriber `OPENCLAW_TOOL_SEARCH_LOG` asks for (once; a no-op without it).
pub fn init() {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        let Ok(filter) = std::env::var("OPENCLAW_TOOL_SEARCH_LOG") else {
            return;
        };
        let filter = tracing_subscriber::EnvFilter::new(filter);
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false);
        let result = match std::env::var_os("OPENCLAW_TOOL_SEARCH_LOG_FILE") {
            Some(path) => match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
            {
                Ok(file) => builder.with_writer(std::sync::Mutex::new(file)).try_init(),
                Err(_) => builder.with_writer(std::io::stderr).try_init(),
            },
            None => builder.with_writer(std::io::stderr).try_init(),
        };
        // Another subscriber already installed (embedding host): keep theirs.
        let _ = result;
    });
}

#![no_main]
//! See fuzz/entries/core.rs (schemas): the same function `cargo test` replays.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openclaw_tool_search_fuzz::within_budget("schemas", data, openclaw_tool_search_fuzz::core_entries::schemas);
});

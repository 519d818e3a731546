#![no_main]
//! See fuzz/entries/core.rs (queries): the same function `cargo test` replays.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openclaw_tool_search_fuzz::within_budget("queries", data, openclaw_tool_search_fuzz::core_entries::queries);
});

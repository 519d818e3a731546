#![no_main]
//! See fuzz/entries/core.rs (catalog_records): the same function `cargo test` replays.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openclaw_tool_search_fuzz::within_budget("catalog_records", data, openclaw_tool_search_fuzz::core_entries::catalog_records);
});

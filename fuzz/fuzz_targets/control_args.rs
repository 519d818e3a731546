#![no_main]
//! See fuzz/entries/core.rs (control_args): the same function `cargo test` replays.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openclaw_tool_search_fuzz::within_budget("control_args", data, openclaw_tool_search_fuzz::core_entries::control_args);
});

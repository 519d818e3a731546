#![no_main]
//! See fuzz/entries/sandbox.rs (bridge_frames): the same function `cargo test` replays.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    openclaw_tool_search_fuzz::within_budget("bridge_frames", data, openclaw_tool_search_fuzz::sandbox_entries::bridge_frames);
});

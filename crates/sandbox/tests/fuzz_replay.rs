//! Replays the committed bridge-frame fuzz corpus and crash regressions
//! (fuzz/corpus/bridge_frames/, fuzz/regressions/bridge_frames/) through the
//! entry point the libFuzzer target calls (fuzz/entries/sandbox.rs).

#[path = "../../../fuzz/entries/sandbox.rs"]
mod entries;

#[path = "../../../fuzz/entries/replay.rs"]
mod replay;

#[test]
fn bridge_frames_corpus_replays() {
    replay::replay("bridge_frames", entries::bridge_frames);
}

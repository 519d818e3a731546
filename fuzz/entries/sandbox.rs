//! Fuzz entry point for the sandbox bridge protocol, shared by the libFuzzer
//! target (fuzz/fuzz_targets/bridge_frames.rs) and the stable replay test
//! (crates/sandbox/tests/fuzz_replay.rs, through `#[path]`).

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use tool_search_base::limits::MAX_JSON_DEPTH as JSON_DEPTH;
use tool_search_base::text::clip;
use tool_search_sandbox::protocol::{check_tree, parse_child_frame, FrameReader};

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Drive a future over an in-memory reader (always ready).
fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

/// Bytes the child writes on fd 3: the whole input as one frame, then split
/// by the `FrameReader` (frame cap from the first byte, 16 B .. 4 KiB, so
/// the over-cap paths are reached) with every frame parsed as the runner
/// parses it.
pub fn bridge_frames(data: &[u8]) {
    if let Ok(frame) = parse_child_frame(data, JSON_DEPTH) {
        // A parsed frame is re-serialized by nobody, but its strings are shown truncated.
        let _ = format!("{frame:?}");
    }
    let Some(&first) = data.first() else { return };
    let cap = 16usize << (first % 9);
    let mut reader = FrameReader::new(data, cap);
    block_on(async {
        let mut frames = 0usize;
        while let Ok(Some(line)) = reader.next_frame().await {
            frames += 1;
            assert!(
                line.len() <= cap,
                "frame of {} bytes passed the {cap}-byte cap",
                line.len()
            );
            assert!(!line.contains(&b'\n'), "frame contains a newline");
            if let Ok(text) = std::str::from_utf8(&line) {
                let _ = clip(text, 40);
            }
            let _ = parse_child_frame(&line, JSON_DEPTH);
            if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&line) {
                let _ = check_tree(&value, JSON_DEPTH);
            }
            assert!(frames <= data.len() + 1, "more frames than input bytes");
        }
    });
}

//! The fuzz targets' shared code: the entry points (also replayed by
//! `cargo test`, see fuzz/entries/) and a per-input time budget.

#[path = "../entries/core.rs"]
pub mod core_entries;
#[path = "../entries/sandbox.rs"]
pub mod sandbox_entries;

use std::sync::Once;
use std::time::Duration;

/// CPU time one input may take (override: TOOL_SEARCH_FUZZ_BUDGET_MS).
/// Process CPU time, not wall time: the campaign runs at nice 19 on a busy
/// machine, where one input of 10 ms CPU was seen to take over a second of
/// wall time. A real hang (a blocked wait) is libFuzzer's `-timeout`.
const DEFAULT_BUDGET_MS: u64 = 100;

fn budget() -> Duration {
    static BUDGET: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(|| {
        let ms = std::env::var("TOOL_SEARCH_FUZZ_BUDGET_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_BUDGET_MS);
        Duration::from_millis(ms)
    })
}

fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Run one input through `entry`; panic (a crash libFuzzer saves) when it
/// takes more CPU time than the budget.
pub fn within_budget(target: &str, data: &[u8], entry: fn(&[u8])) {
    static WARM: Once = Once::new();
    WARM.call_once(core_entries::warm);
    let start = process_cpu_time();
    entry(data);
    let cpu = process_cpu_time() - start;
    if cpu > budget() {
        panic!(
            "{target}: one input took {:.1} ms CPU (budget {} ms); {} bytes",
            cpu.as_secs_f64() * 1e3,
            budget().as_millis(),
            data.len()
        );
    }
}

//! The gateway process's allocator: mimalloc (the binding installs it as the global allocator),
//! told to give freed memory back promptly.

// Linked for `mi_option_set` below.
use mimalloc as _;

/// mimalloc purges freed memory only after a delay (1 s in this build), and
/// only when that thread allocates again: a libuv worker that built a catalog
/// and went idle kept its build garbage resident, and eagerly committed arenas
/// added more (RSS per 12.8k-tool catalog here: 74 MB before, 59 MB after).
/// Purge at once, commit on use.
pub fn return_freed_memory_promptly() {
    use std::ffi::{c_int, c_long};
    extern "C" {
        fn mi_option_set(option: c_int, value: c_long);
    }
    // Positions in `enum mi_option_e` of the mimalloc v3 sources that
    // libmimalloc-sys (pinned in Cargo.lock) bundles: include/mimalloc.h.
    // Named here because libmimalloc-sys 0.1.49 does not name them: its
    // `extended` feature declares mi_option_set but constants for only some
    // options (show_errors .. reserve_os_memory, use_numa_nodes, ...), not
    // purge_delay or arena_eager_commit (and it would add the `cty` crate).
    // Recheck both positions when libmimalloc-sys is upgraded.
    const ARENA_EAGER_COMMIT: c_int = 4;
    const PURGE_DELAY: c_int = 15;
    // SAFETY: a plain option setter of the linked mimalloc.
    unsafe {
        mi_option_set(ARENA_EAGER_COMMIT, 0);
        mi_option_set(PURGE_DELAY, 0);
    }
}

//! The gateway process's allocator: mimalloc (the binding installs it as the global allocator),
//! told to give freed memory back promptly.

// Linked for `mi_option_set` below.
use mimalloc as _;

/// mimalloc purges freed memory only after a delay (1 s in this build), and
/// only when that thread allocates again: a libuv worker that built a catalog
/// and went idle kept its build garbage resident, and eagerly committed arenas
/// added more (RSS per 12.8k-tool catalog here: 74 MB before, 59 MB after).
/// Purge at once, commit on use; a catalog build purges later
/// ([`with_build_purging`]).
pub fn return_freed_memory_promptly() {
    use std::ffi::c_int;
    // Positions in `enum mi_option_e` of the mimalloc v3 sources that
    // libmimalloc-sys (pinned in Cargo.lock) bundles: include/mimalloc.h.
    // Named here because libmimalloc-sys 0.1.49 does not name them: its
    // `extended` feature declares mi_option_set but constants for only some
    // options (show_errors .. reserve_os_memory, use_numa_nodes, ...), not
    // purge_delay or arena_eager_commit (and it would add the `cty` crate).
    // Recheck both positions when libmimalloc-sys is upgraded.
    const ARENA_EAGER_COMMIT: c_int = 4;
    set_option(ARENA_EAGER_COMMIT, 0);
    set_option(PURGE_DELAY, 0);
}

const PURGE_DELAY: std::ffi::c_int = 15;

fn set_option(option: std::ffi::c_int, value: std::ffi::c_long) {
    extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    // SAFETY: a plain option setter of the linked mimalloc.
    unsafe { mi_option_set(option, value) }
}

/// Catalog builds in flight (they purge later while any runs).
static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs a catalog build with purging delayed (10 ms), then gives this
/// thread's freed memory back. Purging at once emptied and refilled pages
/// through tantivy's per-document allocations ~14,000 times in a 15k-tool
/// build (~100 ms of `madvise` and page faults); outside builds it stays at once.
pub fn with_build_purging<T>(build: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering;
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            if BUILDS.fetch_sub(1, Ordering::AcqRel) == 1 {
                set_option(PURGE_DELAY, 0);
            }
            extern "C" {
                fn mi_collect(force: bool);
            }
            // SAFETY: collects the calling thread's heap of the linked mimalloc.
            unsafe { mi_collect(true) }
        }
    }
    if BUILDS.fetch_add(1, Ordering::AcqRel) == 0 {
        set_option(PURGE_DELAY, 10);
    }
    let _done = Done;
    build()
}

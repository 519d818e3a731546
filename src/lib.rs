//! Node binding for the Tool Search core: thin `#[napi]` wrappers and DTOs.
//! All behaviour lives in `tool-search-core` and `tool-search-sandbox`.

#![deny(clippy::all)]
// `cargo test --workspace` builds this crate as a test harness, where the
// `#[napi]` exports have no caller.
#![cfg_attr(test, allow(dead_code))]

mod binding;

/// At load: the allocator's purge settings, then opt-in tracing (`tool_search_gateway::logging`).
#[napi_derive::module_init]
fn module_init() {
    return_freed_memory_promptly();
    tool_search_gateway::logging::init();
}

/// mimalloc for the addon's own allocations: a catalog build is mostly small
/// allocations (JSON values, strings, postings) and glibc's malloc spent about
/// a quarter of it; with mimalloc record parsing is ~3x and the whole build
/// ~20% faster. Memory crosses to JS only as copies, never freed across.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc purges freed memory only after a delay (1 s in this build), and
/// only when that thread allocates again: a libuv worker that built a catalog
/// and went idle kept its build garbage resident, and eagerly committed arenas
/// added more (RSS per 12.8k-tool catalog here: 74 MB before, 59 MB after).
/// Purge at once, commit on use.
fn return_freed_memory_promptly() {
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

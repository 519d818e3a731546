//! Node binding for the Tool Search core: thin `#[napi]` wrappers and DTOs.
//! All behaviour lives in the crates: `tool-search-core`, `-sandbox` and `-gateway`.

#![deny(clippy::all)]
// `cargo test --workspace` builds this crate as a test harness, where the
// `#[napi]` exports have no caller.
#![cfg_attr(test, allow(dead_code))]

mod binding;

/// At load: mimalloc's purge settings (`tool_search_gateway::allocator`), then opt-in tracing
/// (`tool_search_gateway::logging`).
#[napi_derive::module_init]
fn module_init() {
    tool_search_gateway::allocator::return_freed_memory_promptly();
    tool_search_gateway::logging::init();
}

/// mimalloc for the addon's own allocations: a catalog build is mostly small
/// allocations (JSON values, strings, postings) and glibc's malloc spent about
/// a quarter of it; with mimalloc record parsing is ~3x and the whole build
/// ~20% faster. Memory crosses to JS only as copies, never freed across.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

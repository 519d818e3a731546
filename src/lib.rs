//! Node binding for the Tool Search core: thin `#[napi]` wrappers and DTOs.
//! All behaviour lives in `tool-search-core` and `tool-search-sandbox`.

#![deny(clippy::all)]
// `cargo test --workspace` builds this crate as a test harness, where the
// `#[napi]` exports have no caller.
#![cfg_attr(test, allow(dead_code))]

mod binding;

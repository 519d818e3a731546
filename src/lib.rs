//! Node binding for the Tool Search core: thin `#[napi]` wrappers and DTOs.
//! All behaviour lives in `tool-search-core` and `tool-search-sandbox`.

#![deny(clippy::all)]

mod binding;

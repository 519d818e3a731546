//! Tool Search core: everything the gateway needs except the JS boundary.
//!
//! Data flow: tool records -> [`catalog`] (policy, ids, ordering, fingerprint)
//! -> [`search`] (tantivy index, cached by fingerprint) and [`schema`] (hints,
//! argument validation) -> [`surfaces`] (what the model sees per mode) and
//! [`session`] (control-tool dispatch) -> [`telemetry`] (counters, bytes).
//! No napi types live here; the binding crate wraps these in `#[napi]` classes.
//!
//! Layers: imports run downward only, base ([`error`], [`limits`], [`config`],
//! [`telemetry`]) < [`schema`] < [`entry`] < [`search`] < [`catalog`] <
//! [`surfaces`] < [`session`], and files import no circle; checked by
//! `tests/layers.rs`.

pub mod catalog;
pub mod config;
pub mod entry;
pub mod error;
pub mod limits;
pub mod schema;
pub mod search;
pub mod session;
pub mod surfaces;
pub mod telemetry;

pub use error::{Error, ErrorCode, Result};

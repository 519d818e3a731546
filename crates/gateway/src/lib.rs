//! The engine's side of the gateway process, with no Node types: what the binding hands off to
//! once it has converted its arguments.
//!
//! - [`allocator`]: mimalloc's purge settings for the process (the binding installs mimalloc).
//! - [`channel`]: the one way Rust calls into the gateway's JavaScript (the session's executor
//!   and `runCodeCell`'s bridge): one delivery per event-loop turn, keyed aborts, answers decoded.
//!   The binding supplies only the [`channel::Port`] (two threadsafe functions over
//!   `js/channel.js`).
//! - [`executor`]: the gateway's tool executor behind a session, over the channel.
//! - [`code_mode`]: the process-wide sandbox runner behind sessions (`tool_search_code`, with the
//!   session answering the cell's bridge) and behind `runCodeCell` (the gateway's bridge), the
//!   code → tools fallback, and the stable codes of failed cells.
//! - [`logging`]: opt-in tracing (`OPENCLAW_TOOL_SEARCH_LOG`).
//! - [`model`]: which ranking model the package found, the ranking defaults it gives a
//!   catalog, and when a catalog's ranking has settled.
//! - [`runtime`]: what the binding's async runtime lends this crate (spawn, blocking pool).

pub mod allocator;
pub mod channel;
pub mod code_mode;
pub mod executor;
pub mod logging;
pub mod model;
pub mod runtime;

//! `#[napi]` classes and functions. Each file wraps one part of the core;
//! errors cross the boundary through `errors` with a stable `code`.

mod audit;
mod catalog;
mod code_cell;
mod code_mode;
mod config;
mod contract;
mod convert;
mod errors;
mod learning;
mod model;
mod port;
mod promise;
mod runtime;
mod search;
mod session;

#[allow(unused_imports)]
pub(crate) use catalog::ToolCatalog;
#[allow(unused_imports)]
pub(crate) use session::ToolSearchSession;

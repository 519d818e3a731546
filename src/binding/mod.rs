//! `#[napi]` classes and functions. Each file wraps one part of the core;
//! errors cross the boundary through `errors` with a stable `code`.

mod audit;
mod catalog;
mod code_mode;
mod config;
mod contract;
mod convert;
mod errors;
mod learning;
mod port;
mod promise;
mod runtime;
mod search;
mod session;

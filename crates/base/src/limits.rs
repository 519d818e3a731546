//! Limits enforced on both sides of the code-mode bridge (core's dispatch and
//! the sandbox runner), kept in one place so the two cannot drift apart.

/// Deepest JSON nesting (containers) accepted anywhere: schemas, call
/// arguments, bridge frames, returned values. serde_json stops at 128; this
/// keeps every iterative walk and every JS consumer well below that.
pub const MAX_JSON_DEPTH: usize = 64;

/// Most JSON values (containers and scalars) in one call's arguments or one
/// cell's returned value. The gateway rebuilds such a value with `JSON.parse`
/// on its event loop, whose cost grows with the number of values far more
/// than with bytes.
pub const MAX_JSON_VALUES: usize = 25_000;

/// Longest failure reason passed back for one call (chars): core clips the
/// reasons it reports, the sandbox clips the error message of a bridge reply,
/// so a cell sees the same text either way.
pub const MAX_REASON_CHARS: usize = 2_000;

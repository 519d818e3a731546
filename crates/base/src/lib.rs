//! What core and sandbox share and neither owns: the limits both enforce, the
//! one rule for clipping text and measuring edit distance, and the one
//! iterative JSON walk. A leaf crate so the sandbox need not depend on core.

pub mod limits;
pub mod text;
pub mod value;

//! The model's dimensions and the weight-panel width: shared by the forward
//! pass (model.rs) and the int8 dense layers (quant.rs), which otherwise do
//! not depend on each other's internals.

pub const HIDDEN: usize = 384;
pub const LAYERS: usize = 6;
pub const HEADS: usize = 12;
pub const HEAD_DIM: usize = HIDDEN / HEADS;
pub const INTERMEDIATE: usize = 1536;
pub const MAX_POSITIONS: usize = 512;
/// Query, key and value outputs of one fused projection.
pub const QKV: usize = 3 * HIDDEN;

/// Output columns per packed weight panel (int8 and f32 dense layers).
pub const PANEL: usize = 32;

// The dense kernels work on whole panels; attention on 8 lanes.
const _: () = assert!(
    HIDDEN.is_multiple_of(PANEL)
        && INTERMEDIATE.is_multiple_of(PANEL)
        && QKV.is_multiple_of(PANEL)
        && HEAD_DIM.is_multiple_of(8)
);

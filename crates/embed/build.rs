// Finds the model files for the parity tests: OPENCLAW_TOOL_SEARCH_MODEL_DIR,
// else the package folder scripts/model-package.mjs writes. Sets cfg
// `has_model` so the tests that need the weights are ignored (with the reason)
// instead of passing silently when they are absent.
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(has_model)");
    println!("cargo:rerun-if-env-changed=OPENCLAW_TOOL_SEARCH_MODEL_DIR");
    let dir = match std::env::var_os("OPENCLAW_TOOL_SEARCH_MODEL_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap())
            .join("../../npm/model-minilm/model"),
    };
    let weights = dir.join("model.safetensors");
    println!("cargo:rerun-if-changed={}", weights.display());
    if weights.is_file() {
        println!("cargo:rustc-cfg=has_model");
    }
    println!(
        "cargo:rustc-env=TOOL_SEARCH_EMBED_MODEL_DIR={}",
        dir.display()
    );
}

//! TOOL_SEARCH_INDEX_CODE: a hash of the code that decides what a search
//! index holds (search, entries, the shared text helpers, the locked
//! dependency versions). A stored index (src/search/stored.rs) is keyed by
//! it, so an index written by other indexing code is never loaded.
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    for item in listing.flatten() {
        let path = item.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// FNV-1a, 64 bits, from `seed`: enough to tell code versions apart.
fn fnv(seed: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(seed, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let inputs = [
        root.join("src/search"),
        root.join("src/entry"),
        root.join("../base/src"),
        root.join("../../Cargo.lock"),
    ];
    let mut paths = Vec::new();
    for input in &inputs {
        println!("cargo:rerun-if-changed={}", input.display());
        if input.is_dir() {
            files(input, &mut paths);
        } else {
            paths.push(input.clone());
        }
    }
    paths.sort();
    let (mut a, mut b) = (0xcbf2_9ce4_8422_2325u64, 0x8422_2325_cbf2_9ce4u64);
    for path in &paths {
        let relative = path.strip_prefix(&root).unwrap_or(path);
        let text = std::fs::read(path).unwrap_or_default();
        for part in [relative.to_string_lossy().as_bytes(), &text[..]] {
            a = fnv(a, part);
            b = fnv(b, part);
            a = fnv(a, &[0xff]);
            b = fnv(b, &[0xfe]);
        }
    }
    println!("cargo:rustc-env=TOOL_SEARCH_INDEX_CODE={a:016x}{b:016x}");
}

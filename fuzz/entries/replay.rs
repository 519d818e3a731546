//! Corpus replay for `cargo test`: every committed input of a target, each
//! under `catch_unwind` so one failure names its file and the rest still run.

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Run every file of fuzz/corpus/<target>/ and fuzz/regressions/<target>/
/// through `entry`. The corpus must not be empty: a replay of nothing proves nothing.
pub fn replay(target: &str, entry: fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let corpus = files(&fuzz.join("corpus").join(target));
    assert!(
        !corpus.is_empty(),
        "no corpus for {target} under {}",
        fuzz.display()
    );
    let inputs: Vec<PathBuf> = corpus
        .into_iter()
        .chain(files(&fuzz.join("regressions").join(target)))
        .collect();
    let mut failed = Vec::new();
    for path in &inputs {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        if std::panic::catch_unwind(|| entry(&data)).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs panicked:\n{}",
        failed.len(),
        inputs.len(),
        failed.join("\n")
    );
    eprintln!("{target}: {} inputs replayed", inputs.len());
}

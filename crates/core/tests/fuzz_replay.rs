//! Replays the committed fuzz corpus and crash regressions (fuzz/corpus/<target>/,
//! fuzz/regressions/<target>/) through the same entry points the libFuzzer
//! targets call (fuzz/entries/core.rs), on the stable toolchain: every input
//! must return without a panic. `pnpm fuzz` grows the corpus; CI replays it here.

// `warm` and `catalog_records` are the fuzz targets' own (see catalog_records_full).
#[allow(dead_code)]
#[path = "../../../fuzz/entries/core.rs"]
mod entries;

#[path = "../../../fuzz/entries/replay.rs"]
mod replay;

#[test]
fn catalog_records_corpus_replays() {
    replay::replay("catalog_records", entries::catalog_records_full);
}

#[test]
fn queries_corpus_replays() {
    replay::replay("queries", entries::queries);
}

#[test]
fn schemas_corpus_replays() {
    replay::replay("schemas", entries::schemas);
}

#[test]
fn control_args_corpus_replays() {
    replay::replay("control_args", entries::control_args);
}

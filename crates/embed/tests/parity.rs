//! Parity of the Rust encoder with an independent reference
//! (tests/fixtures/reference.json, written by tests/fixtures/make_reference.py:
//! Hugging Face `tokenizers` ids and a float64 numpy forward pass), and with
//! the similarities published for this model: strict for the f32 dense
//! layers, with measured tolerances for the int8 ones (the product's
//! numerics).
//!
//! Needs the model files (OPENCLAW_TOOL_SEARCH_MODEL_DIR, or
//! npm/model-minilm/model from `node scripts/model-package.mjs`); without them
//! these tests are ignored, and `model_files_present_when_required` fails when
//! REQUIRE_MODEL=1.

use std::path::Path;
use std::sync::OnceLock;

use serde::Deserialize;
use tool_search_embed::{cosine, Encoder, Precision, DIM};

const MODEL_DIR: &str = env!("TOOL_SEARCH_EMBED_MODEL_DIR");

#[derive(Deserialize)]
struct Reference {
    max_len: usize,
    tokens: Vec<TokenCase>,
    sentences: Vec<SentenceCase>,
}

#[derive(Deserialize)]
struct TokenCase {
    text: String,
    ids: Vec<u32>,
}

#[derive(Deserialize)]
struct SentenceCase {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn reference() -> Reference {
    serde_json::from_str(include_str!("fixtures/reference.json")).unwrap()
}

/// The product's encoder (int8 dense layers).
fn encoder() -> &'static Encoder {
    static ENCODER: OnceLock<Encoder> = OnceLock::new();
    ENCODER.get_or_init(|| Encoder::load(Path::new(MODEL_DIR)).expect("load model"))
}

fn encoder_f32() -> &'static Encoder {
    static ENCODER: OnceLock<Encoder> = OnceLock::new();
    ENCODER.get_or_init(|| {
        Encoder::load_with_precision(Path::new(MODEL_DIR), Precision::F32).expect("load model")
    })
}

fn encoder_of(precision: Precision) -> &'static Encoder {
    match precision {
        Precision::Int8 => encoder(),
        Precision::F32 => encoder_f32(),
    }
}

#[test]
fn model_files_present_when_required() {
    if std::env::var("REQUIRE_MODEL").as_deref() == Ok("1") {
        let has_model = cfg!(has_model);
        assert!(
            has_model,
            "REQUIRE_MODEL=1 but no model.safetensors in {MODEL_DIR} at build time \
             (run `node scripts/model-package.mjs` or set OPENCLAW_TOOL_SEARCH_MODEL_DIR)"
        );
    }
}

#[test]
#[cfg_attr(
    not(has_model),
    ignore = "model files absent: run `node scripts/model-package.mjs` or set OPENCLAW_TOOL_SEARCH_MODEL_DIR"
)]
fn token_ids_match_reference_tokenizer() {
    let reference = reference();
    let mut mismatches = Vec::new();
    for case in reference.tokens.iter().chain(
        reference
            .sentences
            .iter()
            .map(|s| TokenCase {
                text: s.text.clone(),
                ids: s.ids.clone(),
            })
            .collect::<Vec<_>>()
            .iter(),
    ) {
        let ids = encoder().token_ids(&case.text, reference.max_len);
        if ids != case.ids {
            mismatches.push(format!(
                "{:?}\n  rust {:?}\n  ref  {:?}",
                case.text, ids, case.ids
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
#[cfg_attr(
    not(has_model),
    ignore = "model files absent: run `node scripts/model-package.mjs` or set OPENCLAW_TOOL_SEARCH_MODEL_DIR"
)]
fn vectors_match_reference_forward_pass() {
    // (precision, least cosine, least mean cosine). int8 measured on an
    // AVX-512 VNNI host: worst 0.99348 ("" alone: [CLS] [SEP]), mean 0.99802.
    for (precision, worst, mean) in [
        (Precision::F32, 0.999, 0.999),
        (Precision::Int8, 0.99, 0.997),
    ] {
        let reference = reference();
        let texts: Vec<&str> = reference
            .sentences
            .iter()
            .map(|s| s.text.as_str())
            .collect();
        let vectors = encoder_of(precision).embed(&texts);
        let mut sum = 0.0;
        for (case, vector) in reference.sentences.iter().zip(&vectors) {
            let expected: [f32; DIM] = case.vector.as_slice().try_into().unwrap();
            let similarity = cosine(vector, &expected);
            eprintln!(
                "{precision:?} cosine {similarity:.7} {:?}",
                case.text.chars().take(40).collect::<String>()
            );
            assert!(
                similarity >= worst,
                "{precision:?} cosine {similarity} for {:?}",
                case.text
            );
            let norm: f32 = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
            sum += similarity;
        }
        let average = sum / vectors.len() as f32;
        assert!(average >= mean, "{precision:?} mean cosine {average}");
    }
}

/// The similarities of the sentence-transformers quickstart for this model
/// (0.6660, 0.1046, 0.1411), which the reference forward pass reproduces.
#[test]
#[cfg_attr(
    not(has_model),
    ignore = "model files absent: run `node scripts/model-package.mjs` or set OPENCLAW_TOOL_SEARCH_MODEL_DIR"
)]
fn published_example_similarities() {
    // int8 measured: 0.6654, 0.1110, 0.1461 (worst difference 0.0064).
    for (precision, tolerance) in [(Precision::F32, 0.002), (Precision::Int8, 0.01)] {
        let v = encoder_of(precision).embed(&[
            "The weather is lovely today.",
            "It's so sunny outside!",
            "He drove to the stadium.",
        ]);
        for (a, b, expected) in [(0, 1, 0.6660), (0, 2, 0.1046), (1, 2, 0.1411)] {
            let got = cosine(&v[a], &v[b]);
            eprintln!("{precision:?} sim({a},{b}) = {got:.4}, expected {expected}");
            assert!(
                (got - expected).abs() < tolerance,
                "{precision:?} sim({a},{b}) = {got}, expected {expected}"
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(has_model),
    ignore = "model files absent: run `node scripts/model-package.mjs` or set OPENCLAW_TOOL_SEARCH_MODEL_DIR"
)]
fn batching_and_repetition_give_the_same_vectors() {
    let texts = [
        "send an email",
        "",
        "weather forecast for Paris tomorrow",
        &"very long text ".repeat(200),
    ];
    let batch = encoder().embed(&texts);
    assert_eq!(batch, encoder().embed(&texts), "not deterministic");
    // Exactly: int8 rows are quantized one by one and summed exactly, and
    // attention runs per text, so a vector never depends on its batch.
    for (text, batched) in texts.iter().zip(&batch) {
        assert_eq!(
            &encoder().embed(&[text])[0],
            batched,
            "batch changes {text:?}"
        );
    }
    assert!(encoder().embed(&[]).is_empty());
}

#[test]
#[cfg_attr(
    not(has_model),
    ignore = "model files absent: run `node scripts/model-package.mjs` or set OPENCLAW_TOOL_SEARCH_MODEL_DIR"
)]
fn truncation_bounds_tokens_and_digest_is_stable() {
    let long = "word ".repeat(10_000);
    assert_eq!(encoder().token_ids(&long, 64).len(), 64);
    assert_eq!(encoder().token_ids(&long, 100_000).len(), 256);
    let short = encoder().embed_truncated(&[&long], 16);
    assert_eq!(short.len(), 1);
    let digest = encoder().model_digest();
    assert_eq!(digest.len(), 64);
    assert_eq!(
        digest,
        Encoder::load(Path::new(MODEL_DIR)).unwrap().model_digest()
    );
    // Other numerics, other vectors: another digest, so caches never mix them.
    assert_ne!(digest, encoder_f32().model_digest());
}

#[test]
#[cfg_attr(
    not(has_model),
    ignore = "model files absent: run `node scripts/model-package.mjs` or set OPENCLAW_TOOL_SEARCH_MODEL_DIR"
)]
fn joint_pooling_keeps_part_vectors_and_approximates_the_whole() {
    // One part: its own vector, and the joint mean is the same mean.
    let (parts, whole) = encoder().embed_joint(&["weather forecast for Paris tomorrow"]);
    assert_eq!(
        parts,
        encoder().embed(&["weather forecast for Paris tomorrow"])
    );
    assert_eq!(whole, parts[0]);
    // Parts in different forward batches (over 256 pieces together; one cut
    // at 256 pieces) keep their own vectors exactly, and the whole does not
    // depend on how they fell into batches: every batch's states count.
    let long_a = "summarize the quarterly budget review ".repeat(30);
    let long_b = "translate the contract into German ".repeat(30);
    let too_long = "schedule a meeting with the design team ".repeat(60);
    let texts = [
        long_a.as_str(),
        long_b.as_str(),
        "and email it",
        too_long.as_str(),
    ];
    let (parts, whole) = encoder().embed_joint(&texts);
    assert_eq!(parts, encoder().embed(&texts));
    let reordered = [texts[2], texts[0], texts[3], texts[1]];
    let (_, whole_reordered) = encoder().embed_joint(&reordered);
    let same = cosine(&whole, &whole_reordered);
    assert!(same > 0.99999, "whole depends on batching: cosine {same}");
    let (_, without_last) = encoder().embed_joint(&texts[..3]);
    assert!(
        cosine(&whole, &without_last) < 0.99,
        "the last batch's part is not in the whole"
    );
    // The joint vector stands in for a pass over the whole request, and it is
    // neither clause's vector.
    let request = [
        "find flights from Berlin to Lisbon next Friday",
        "then book a hotel near the airport",
    ];
    let (parts, whole) = encoder().embed_joint(&request);
    let concatenated = encoder().embed(&[&request.join(" ")])[0];
    let similarity = cosine(&whole, &concatenated);
    assert!(
        similarity > 0.9,
        "joint vector far from the whole request's: cosine {similarity}"
    );
    for part in &parts {
        assert!(cosine(&whole, part) < 0.99, "joint vector is one clause's");
    }
    let (parts, whole) = encoder().embed_joint(&[]);
    assert!(parts.is_empty() && whole.iter().all(|v| *v == 0.0));
}

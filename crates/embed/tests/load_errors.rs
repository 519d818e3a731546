//! Bad model directories fail with a clear error, never a panic. These build
//! their own small files and need no model.

use std::fs;
use std::path::{Path, PathBuf};

use tool_search_embed::{EmbedError, Encoder};

const CONFIG: &str = r#"{"model_type":"bert","hidden_size":384,"num_hidden_layers":6,"num_attention_heads":12,
"intermediate_size":1536,"max_position_embeddings":512,"vocab_size":1000,"hidden_act":"gelu","layer_norm_eps":1e-12}"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tool-search-embed-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn vocab(n: usize) -> String {
    let mut lines: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].iter().map(|s| s.to_string()).collect();
    lines.extend((lines.len()..n).map(|i| format!("tok{i}")));
    lines.join("\n")
}

/// A safetensors file with one F32 tensor.
fn safetensors_with(name: &str, shape: &[usize]) -> Vec<u8> {
    let count: usize = shape.iter().product();
    let header = format!(r#"{{"{name}":{{"dtype":"F32","shape":{shape:?},"data_offsets":[0,{}]}}}}"#, count * 4);
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header.as_bytes());
    bytes.extend(std::iter::repeat_n(0u8, count * 4));
    bytes
}

fn write_dir(name: &str, config: &str, vocab_text: &str, weights: &[u8]) -> PathBuf {
    let dir = scratch(name);
    fs::write(dir.join("config.json"), config).unwrap();
    fs::write(dir.join("vocab.txt"), vocab_text).unwrap();
    fs::write(dir.join("model.safetensors"), weights).unwrap();
    dir
}

fn load_err(dir: &Path) -> EmbedError {
    match Encoder::load(dir) {
        Ok(_) => panic!("loaded a bad model from {}", dir.display()),
        Err(e) => e,
    }
}

#[test]
fn missing_directory() {
    let err = load_err(Path::new("/nonexistent/tool-search-embed"));
    assert!(matches!(err, EmbedError::Missing { .. }), "{err}");
    assert!(err.to_string().contains("config.json"), "{err}");
}

#[test]
fn wrong_architecture_in_config() {
    let dir = write_dir("config", &CONFIG.replace("\"hidden_size\":384", "\"hidden_size\":768"), &vocab(1000), b"");
    assert!(matches!(load_err(&dir), EmbedError::WrongModel(_)));
    let dir = write_dir("act", &CONFIG.replace("\"gelu\"", "\"relu\""), &vocab(1000), b"");
    assert!(matches!(load_err(&dir), EmbedError::WrongModel(_)));
    let dir = write_dir("json", "{not json", &vocab(1000), b"");
    assert!(matches!(load_err(&dir), EmbedError::Invalid(_)));
}

#[test]
fn vocab_size_mismatch_and_missing_special_tokens() {
    let dir = write_dir("vocab", CONFIG, &vocab(999), b"");
    assert!(matches!(load_err(&dir), EmbedError::WrongModel(_)));
    let dir = write_dir("special", CONFIG, &(0..1000).map(|i| format!("t{i}")).collect::<Vec<_>>().join("\n"), b"");
    assert!(matches!(load_err(&dir), EmbedError::Invalid(_)));
}

#[test]
fn truncated_or_garbage_weights() {
    let good_header = safetensors_with("embeddings.word_embeddings.weight", &[1000, 384]);
    for (name, bytes) in [
        ("empty", Vec::new()),
        ("garbage", b"\xff\xff\xff\xff\xff\xff\xff\xffgarbage".to_vec()),
        ("truncated", good_header[..good_header.len() / 2].to_vec()),
    ] {
        let dir = write_dir(name, CONFIG, &vocab(1000), &bytes);
        assert!(matches!(load_err(&dir), EmbedError::Invalid(_)), "{name}");
    }
}

#[test]
fn missing_or_misshapen_tensors() {
    let dir = write_dir("missing", CONFIG, &vocab(1000), &safetensors_with("something.else", &[4]));
    let err = load_err(&dir);
    assert!(matches!(err, EmbedError::WrongModel(_)) && err.to_string().contains("missing"), "{err}");
    let dir = write_dir("shape", CONFIG, &vocab(1000), &safetensors_with("encoder.layer.0.attention.self.query.weight", &[384, 385]));
    let err = load_err(&dir);
    assert!(matches!(err, EmbedError::WrongModel(_)) && err.to_string().contains("shape"), "{err}");
}

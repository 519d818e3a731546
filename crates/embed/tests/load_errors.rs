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
    let mut lines: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    lines.extend((lines.len()..n).map(|i| format!("tok{i}")));
    lines.join("\n")
}

/// A safetensors file with one F32 tensor.
fn safetensors_with(name: &str, shape: &[usize]) -> Vec<u8> {
    let count: usize = shape.iter().product();
    let header = format!(
        r#"{{"{name}":{{"dtype":"F32","shape":{shape:?},"data_offsets":[0,{}]}}}}"#,
        count * 4
    );
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
    let dir = write_dir(
        "config",
        &CONFIG.replace("\"hidden_size\":384", "\"hidden_size\":768"),
        &vocab(1000),
        b"",
    );
    assert!(matches!(load_err(&dir), EmbedError::WrongModel(_)));
    let dir = write_dir(
        "act",
        &CONFIG.replace("\"gelu\"", "\"relu\""),
        &vocab(1000),
        b"",
    );
    assert!(matches!(load_err(&dir), EmbedError::WrongModel(_)));
    let dir = write_dir("json", "{not json", &vocab(1000), b"");
    assert!(matches!(load_err(&dir), EmbedError::Invalid(_)));
}

#[test]
fn vocab_size_mismatch_and_missing_special_tokens() {
    let dir = write_dir("vocab", CONFIG, &vocab(999), b"");
    assert!(matches!(load_err(&dir), EmbedError::WrongModel(_)));
    let dir = write_dir(
        "special",
        CONFIG,
        &(0..1000)
            .map(|i| format!("t{i}"))
            .collect::<Vec<_>>()
            .join("\n"),
        b"",
    );
    assert!(matches!(load_err(&dir), EmbedError::Invalid(_)));
}

#[test]
fn truncated_or_garbage_weights() {
    let good_header = safetensors_with("embeddings.word_embeddings.weight", &[1000, 384]);
    for (name, bytes) in [
        ("empty", Vec::new()),
        (
            "garbage",
            b"\xff\xff\xff\xff\xff\xff\xff\xffgarbage".to_vec(),
        ),
        ("truncated", good_header[..good_header.len() / 2].to_vec()),
    ] {
        let dir = write_dir(name, CONFIG, &vocab(1000), &bytes);
        assert!(matches!(load_err(&dir), EmbedError::Invalid(_)), "{name}");
    }
}

#[test]
fn missing_or_misshapen_tensors() {
    let dir = write_dir(
        "missing",
        CONFIG,
        &vocab(1000),
        &safetensors_with("something.else", &[4]),
    );
    let err = load_err(&dir);
    assert!(
        matches!(err, EmbedError::WrongModel(_)) && err.to_string().contains("missing"),
        "{err}"
    );
    let dir = write_dir(
        "shape",
        CONFIG,
        &vocab(1000),
        &safetensors_with("encoder.layer.0.attention.self.query.weight", &[384, 385]),
    );
    let err = load_err(&dir);
    assert!(
        matches!(err, EmbedError::WrongModel(_)) && err.to_string().contains("shape"),
        "{err}"
    );
}

#[test]
fn a_vocabulary_with_a_repeated_token_is_refused() {
    // 1,000 distinct tokens, as config.json says, but one of them on two lines:
    // every later id would be shifted by one.
    let mut lines: Vec<String> = vocab(1000).lines().map(str::to_string).collect();
    lines.insert(500, "tok20".to_string());
    let dir = write_dir("dup-vocab", CONFIG, &lines.join("\n"), b"");
    let err = load_err(&dir);
    assert!(matches!(err, EmbedError::Invalid(_)), "{err}");
    assert!(
        err.to_string().contains("twice") && err.to_string().contains("tok20"),
        "{err}"
    );
}

/// Runs `Encoder::load` on a thread and returns its error; if it has not
/// finished after a long while (blocked on `fifo`), opens the FIFO's write
/// end so the thread can end, and fails.
fn load_err_unblocking(dir: &Path, fifo: &Path) -> EmbedError {
    let (sender, receiver) = std::sync::mpsc::channel();
    let owned = dir.to_path_buf();
    std::thread::spawn(move || {
        let _ = sender.send(Encoder::load(&owned).err());
    });
    match receiver.recv_timeout(std::time::Duration::from_secs(30)) {
        Ok(Some(err)) => err,
        Ok(None) => panic!("loaded a model with a FIFO in it"),
        Err(_) => {
            let _writer = fs::OpenOptions::new().write(true).open(fifo);
            panic!("Encoder::load blocked on the FIFO {}", fifo.display());
        }
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.display()
    );
}

#[test]
fn fifos_devices_and_links_out_of_the_folder_are_refused_without_blocking() {
    for name in ["config.json", "vocab.txt", "model.safetensors"] {
        let dir = write_dir(&format!("fifo-{name}"), CONFIG, &vocab(1000), b"");
        let fifo = dir.join(name);
        fs::remove_file(&fifo).unwrap();
        mkfifo(&fifo);
        let err = load_err_unblocking(&dir, &fifo);
        assert!(matches!(err, EmbedError::Refused { .. }), "{name}: {err}");
        assert!(
            err.to_string().contains("FIFO") && err.to_string().contains(name),
            "{err}"
        );
        assert!(tool_search_embed::check_model_dir(&dir).is_err());
    }
    // A device: /dev/zero would be read up to the size limit and fail late.
    let dir = write_dir("device", CONFIG, &vocab(1000), b"");
    fs::remove_file(dir.join("model.safetensors")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("model.safetensors")).unwrap();
    let err = load_err(&dir);
    assert!(
        matches!(err, EmbedError::Refused { .. })
            && err.to_string().contains("outside the model folder"),
        "{err}"
    );
    // A link to a file outside the folder is refused; one inside it is followed.
    let outside = scratch("outside-target");
    fs::write(outside.join("vocab.txt"), vocab(1000)).unwrap();
    let dir = write_dir("link-out", CONFIG, &vocab(1000), b"");
    fs::remove_file(dir.join("vocab.txt")).unwrap();
    std::os::unix::fs::symlink(outside.join("vocab.txt"), dir.join("vocab.txt")).unwrap();
    assert!(matches!(load_err(&dir), EmbedError::Refused { .. }));
    let dir = write_dir("link-in", CONFIG, &vocab(1000), b"");
    fs::rename(dir.join("vocab.txt"), dir.join("vocab.real.txt")).unwrap();
    std::os::unix::fs::symlink("vocab.real.txt", dir.join("vocab.txt")).unwrap();
    // Read through the link: it fails later, on the empty weights.
    assert!(matches!(load_err(&dir), EmbedError::Invalid(_)));
}

//! Sentence encoder for hybrid ranking: all-MiniLM-L6-v2 (BERT, 6 layers,
//! 384 dimensions) in pure Rust, as sentence-transformers runs it: WordPiece
//! tokens (at most 256), mean pooling over the last hidden state, L2
//! normalization.
//!
//! The dense layers run in int8 (s8 weights per output channel, u8
//! activations per token, exact i32 sums; see quant.rs); attention, layer
//! norms, GELU and pooling run in f32. With the `f32-reference` feature (on
//! for this crate's own tests and examples only), f32 dense layers are
//! available through `Encoder::load_with_precision` for comparisons.
//!
//! The model directory holds `config.json`, `model.safetensors` (F32, F16 or
//! BF16) and `vocab.txt`, as the `openclaw-tool-search-model-minilm` package
//! ships them (scripts/model-package.mjs). Files come from disk: sizes are
//! bounded, shapes and the configuration are checked, and nothing panics on a
//! bad file.

mod model;
mod quant;
mod shape;
mod tokenizer;

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::Deserialize;

pub use shape::HIDDEN as DIM;

/// sentence-transformers' max_seq_length for this model (word pieces,
/// including [CLS] and [SEP]).
pub const MAX_TOKENS: usize = 256;

/// The encoder's numerics: changes whenever the vectors for the same text
/// and the same model files change (quantization scheme, kernels' shared
/// arithmetic, pooling). Part of `Encoder::model_digest`, so a vector cache
/// keyed on the digest never mixes vectors of other numerics. It describes
/// `Encoder::load`'s (int8) vectors; `Precision::F32` has its own tag.
/// v2: the AVX2 attention's softmax takes e^x from a vector polynomial
/// (model.rs `exp_nonpositive`) and sums 8 lanes, where v1 called libm's expf
/// and summed in order.
pub const NUMERICS: &str = "int8-v2";

/// Arithmetic of the dense layers (nearly all of the work).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// The product's numerics (`NUMERICS`): s8 weights, u8 activations.
    Int8,
    /// The original f32 weights: for tests, parity and quality comparisons
    /// (feature `f32-reference`).
    #[cfg(feature = "f32-reference")]
    F32,
}

impl Precision {
    /// The numerics tag folded into the model digest.
    pub fn numerics(self) -> &'static str {
        match self {
            Precision::Int8 => NUMERICS,
            #[cfg(feature = "f32-reference")]
            Precision::F32 => "f32-v1",
        }
    }
}
/// Tokens per forward batch: bounds scratch memory (the intermediate
/// activations are 6 KiB a token). 256 keeps them (1.5 MiB) in L2 across the
/// elementwise passes; the int8 weights (10.6 MB) are then read once per
/// batch, which costs less than the cache misses of larger batches (measured:
/// 500 tool texts at 32 word pieces, 1.37 s CPU with 2048, 1.0 s with 256).
const BATCH_TOKENS: usize = 256;
const MAX_WEIGHTS_BYTES: u64 = 512 << 20;
const MAX_CONFIG_BYTES: u64 = 64 << 10;
const MAX_VOCAB_BYTES: u64 = 8 << 20;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model file {path} is missing or unreadable: {source}")]
    Missing {
        path: String,
        source: std::io::Error,
    },
    #[error("model file {path} is larger than {limit} bytes")]
    TooLarge { path: String, limit: u64 },
    #[error("invalid model file: {0}")]
    Invalid(String),
    #[error("not the expected model (all-MiniLM-L6-v2 BERT shape): {0}")]
    WrongModel(String),
    #[error("model file {path} is refused: {why}")]
    Refused { path: String, why: String },
}

pub struct Encoder {
    bert: model::Bert,
    precision: Precision,
    tokenizer: tokenizer::WordPiece,
    digest: String,
}

/// The fields of config.json that must match the forward pass.
#[derive(Deserialize)]
struct Config {
    model_type: Option<String>,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    vocab_size: usize,
    hidden_act: String,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
    #[serde(default)]
    position_embedding_type: Option<String>,
}

fn default_eps() -> f64 {
    1e-12
}

impl Encoder {
    /// Loads config.json, vocab.txt and model.safetensors from `dir`, with
    /// int8 dense layers (the product's numerics, `NUMERICS`).
    pub fn load(dir: &Path) -> Result<Encoder, EmbedError> {
        Encoder::load_with_precision(dir, Precision::Int8)
    }

    /// As `load`, in a given precision. `Precision::F32` is for tests and
    /// comparisons: its vectors differ from `NUMERICS` vectors. Only one set
    /// of weights is kept (f32: 4 bytes a weight, int8: 1).
    pub fn load_with_precision(dir: &Path, precision: Precision) -> Result<Encoder, EmbedError> {
        let config_bytes = read_bounded(dir, "config.json", MAX_CONFIG_BYTES)?;
        let vocab_bytes = read_bounded(dir, "vocab.txt", MAX_VOCAB_BYTES)?;
        let weights = read_bounded(dir, "model.safetensors", MAX_WEIGHTS_BYTES)?;

        let config: Config = serde_json::from_slice(&config_bytes)
            .map_err(|e| EmbedError::Invalid(format!("config.json: {e}")))?;
        check_config(&config)?;
        let vocab_text = std::str::from_utf8(&vocab_bytes)
            .map_err(|_| EmbedError::Invalid("vocab.txt is not UTF-8".into()))?;
        let tokenizer = tokenizer::WordPiece::from_vocab_text(vocab_text)?;
        if tokenizer.vocab_len() != config.vocab_size {
            return Err(EmbedError::WrongModel(format!(
                "vocab.txt has {} tokens, config.json says {}",
                tokenizer.vocab_len(),
                config.vocab_size
            )));
        }
        let bert = model::Bert::from_safetensors(
            &weights,
            config.vocab_size,
            config.layer_norm_eps as f32,
            precision,
        )?;

        // Everything that changes the vectors, length-prefixed.
        let mut hasher = blake3::Hasher::new();
        for part in [&config_bytes, &vocab_bytes, &weights] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        hasher.update(&(MAX_TOKENS as u64).to_le_bytes());
        hasher.update(precision.numerics().as_bytes());
        // The f32 parts' code path (FMA or not) changes the last bits of a
        // vector: a cache shared by different CPUs keeps them apart. ("Avx2"
        // or "Portable"; AVX-512 hosts said "Avx512" for the same int8
        // vectors until the f32-only AVX-512 kernel was dropped.)
        hasher.update(format!("{:?}", model::Kernel::detect()).as_bytes());
        let digest = hasher.finalize().to_hex().to_string();
        Ok(Encoder {
            bert,
            precision,
            tokenizer,
            digest,
        })
    }

    /// L2-normalized vectors of `texts`, truncated to MAX_TOKENS word pieces.
    pub fn embed(&self, texts: &[&str]) -> Vec<[f32; DIM]> {
        self.embed_truncated(texts, MAX_TOKENS)
    }

    /// As `embed`, with at most `max_tokens` word pieces per text (including
    /// [CLS] and [SEP]; clamped to 2..=MAX_TOKENS). Shorter limits trade
    /// fidelity on long texts for speed.
    pub fn embed_truncated(&self, texts: &[&str], max_tokens: usize) -> Vec<[f32; DIM]> {
        let max_tokens = max_tokens.clamp(2, MAX_TOKENS);
        let sequences: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.tokenizer.encode(t, max_tokens))
            .collect();
        batches(&sequences)
            .flat_map(|batch| self.bert.encode(batch))
            .collect()
    }

    /// The vectors of `parts`, each embedded as its own text, and an
    /// approximation of their concatenation's vector: the mean over every
    /// word piece of every part. The whole then costs no pass of its own
    /// (its pieces have not seen the other parts, unlike in a pass over the
    /// concatenation).
    pub fn embed_joint(&self, parts: &[&str]) -> (Vec<[f32; DIM]>, [f32; DIM]) {
        self.embed_joint_within(parts, usize::MAX)
    }

    /// `embed_joint` with the parts sharing one budget of `budget` word
    /// pieces (each part's [CLS] and [SEP] included; `MAX_JOINT_TOKENS` for a
    /// search request): a request of many long clauses costs at most about
    /// that many pieces, not 256 per clause. Within the budget, the same as
    /// `embed_joint`.
    pub fn embed_joint_within(
        &self,
        parts: &[&str],
        budget: usize,
    ) -> (Vec<[f32; DIM]>, [f32; DIM]) {
        let sequences = joint_sequences(&self.tokenizer, parts, budget);
        let mut vectors = Vec::with_capacity(parts.len());
        let mut total = [0f32; DIM];
        for sum in batches(&sequences).flat_map(|batch| self.bert.state_sums(batch)) {
            model::add_assign(&mut total, &sum);
            vectors.push(model::normalized(sum));
        }
        (vectors, model::normalized(total))
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Token ids as the model sees them (for tests and diagnostics).
    pub fn token_ids(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        self.tokenizer.encode(text, max_tokens.clamp(2, MAX_TOKENS))
    }

    /// Hex BLAKE3 digest of the model files, the token limit, the numerics
    /// and the CPU's kernel class: vectors cached under one digest are valid
    /// for any encoder with the same digest.
    pub fn model_digest(&self) -> &str {
        &self.digest
    }
}

/// Word pieces of all the clauses of one search request together
/// (`embed_joint_within`): twice one clause's limit.
pub const MAX_JOINT_TOKENS: usize = 2 * MAX_TOKENS;

/// The token ids of `parts`, cut so that together they hold at most `budget`
/// pieces: every part gets the same cap (the largest one that fits, so short
/// parts stay whole and the long ones share the rest), never below
/// `[CLS] x [SEP]`.
fn joint_sequences(
    tokenizer: &tokenizer::WordPiece,
    parts: &[&str],
    budget: usize,
) -> Vec<Vec<u32>> {
    let mut sequences: Vec<Vec<u32>> = parts
        .iter()
        .map(|t| tokenizer.encode(t, MAX_TOKENS))
        .collect();
    let total: usize = sequences.iter().map(Vec::len).sum();
    if total <= budget || sequences.is_empty() {
        return sequences;
    }
    let fits = |cap: usize| sequences.iter().map(|s| s.len().min(cap)).sum::<usize>() <= budget;
    let (mut low, mut high) = (3usize, MAX_TOKENS);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(mid) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    for sequence in &mut sequences {
        if sequence.len() > low {
            // Keep [CLS] and the first pieces, end with [SEP].
            let sep = sequence[sequence.len() - 1];
            sequence.truncate(low - 1);
            sequence.push(sep);
        }
    }
    sequences
}

/// Consecutive runs of sequences of at most BATCH_TOKENS pieces together
/// (a longer sequence is a batch of its own).
fn batches(sequences: &[Vec<u32>]) -> impl Iterator<Item = &[Vec<u32>]> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= sequences.len() {
            return None;
        }
        let mut end = start;
        let mut tokens = 0;
        while end < sequences.len()
            && (end == start || tokens + sequences[end].len() <= BATCH_TOKENS)
        {
            tokens += sequences[end].len();
            end += 1;
        }
        let batch = &sequences[start..end];
        start = end;
        Some(batch)
    })
}

/// Cosine of two L2-normalized vectors.
pub fn cosine(a: &[f32; DIM], b: &[f32; DIM]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn check_config(c: &Config) -> Result<(), EmbedError> {
    let expect = |what: &str, got: usize, want: usize| {
        if got == want {
            Ok(())
        } else {
            Err(EmbedError::WrongModel(format!(
                "config.json {what} is {got}, expected {want}"
            )))
        }
    };
    if c.model_type.as_deref().is_some_and(|t| t != "bert") {
        return Err(EmbedError::WrongModel(format!(
            "config.json model_type is {:?}, expected bert",
            c.model_type
        )));
    }
    if c.hidden_act != "gelu" {
        return Err(EmbedError::WrongModel(format!(
            "config.json hidden_act is {}, expected gelu",
            c.hidden_act
        )));
    }
    if c.position_embedding_type
        .as_deref()
        .is_some_and(|t| t != "absolute")
    {
        return Err(EmbedError::WrongModel(
            "config.json position_embedding_type is not absolute".into(),
        ));
    }
    if !(c.layer_norm_eps > 0.0 && c.layer_norm_eps < 1e-3) {
        return Err(EmbedError::Invalid(format!(
            "config.json layer_norm_eps {} is out of range",
            c.layer_norm_eps
        )));
    }
    expect("hidden_size", c.hidden_size, shape::HIDDEN)?;
    expect("num_hidden_layers", c.num_hidden_layers, shape::LAYERS)?;
    expect("num_attention_heads", c.num_attention_heads, shape::HEADS)?;
    expect(
        "intermediate_size",
        c.intermediate_size,
        shape::INTERMEDIATE,
    )?;
    expect(
        "max_position_embeddings",
        c.max_position_embeddings,
        shape::MAX_POSITIONS,
    )?;
    if !(1000..=1_000_000).contains(&c.vocab_size) {
        return Err(EmbedError::WrongModel(format!(
            "config.json vocab_size {} is out of range",
            c.vocab_size
        )));
    }
    Ok(())
}

/// The model files a folder must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "vocab.txt", "model.safetensors"];

/// Whether `dir` holds the model files as regular files (see `open_model_file`),
/// without reading them: what a capability check can say before loading.
pub fn check_model_dir(dir: &Path) -> Result<(), EmbedError> {
    MODEL_FILES
        .iter()
        .try_for_each(|name| open_model_file(dir, name).map(drop))
}

/// Opens `dir/name` for reading if it is a regular file inside `dir`. A FIFO
/// or a device would block the loading thread or never end, and a link out of
/// the folder would load files nobody installed: refused with the reason. The
/// file is opened without following a link at its last step and without
/// waiting (O_NONBLOCK), then checked on the open descriptor.
pub fn open_model_file(dir: &Path, name: &str) -> Result<File, EmbedError> {
    let display = dir.join(name).display().to_string();
    let missing = |source| EmbedError::Missing {
        path: display.clone(),
        source,
    };
    let refused = |why: String| EmbedError::Refused {
        path: display.clone(),
        why,
    };
    let root = std::fs::canonicalize(dir).map_err(missing)?;
    let real = std::fs::canonicalize(root.join(name)).map_err(missing)?;
    if !real.starts_with(&root) {
        return Err(refused(format!(
            "it links to {}, outside the model folder",
            real.display()
        )));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&real)
        .map_err(missing)?;
    let kind = file.metadata().map_err(missing)?.file_type();
    if !kind.is_file() {
        return Err(refused(format!(
            "it is not a regular file ({})",
            file_kind(&kind)
        )));
    }
    Ok(file)
}

/// A short name of a file type, for reasons.
pub fn file_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

fn read_bounded(dir: &Path, name: &str, limit: u64) -> Result<Vec<u8>, EmbedError> {
    let display = dir.join(name).display().to_string();
    let file = open_model_file(dir, name)?;
    let mut bytes = Vec::new();
    // Read one byte past the limit to tell "exactly at" from "over".
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| EmbedError::Missing {
            path: display.clone(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(EmbedError::TooLarge {
            path: display,
            limit,
        });
    }
    Ok(bytes)
}

/// The text embedded for a tool: its name split into words, its description
/// and its parameter names, e.g. `get user profile: Returns a profile.
/// Parameters: user id, fields`. Identifier words are split (camelCase,
/// snake_case, kebab-case) because the uncased WordPiece vocabulary would
/// otherwise cut `getUserProfile` into sub-word fragments.
pub fn tool_text(name: &str, description: &str, parameters: &[&str]) -> String {
    let mut text = identifier_words(name);
    let description = description.trim();
    if !description.is_empty() {
        text.push_str(": ");
        text.push_str(description);
    }
    if !parameters.is_empty() {
        if !text.ends_with('.') {
            text.push('.');
        }
        text.push_str(" Parameters: ");
        let words: Vec<String> = parameters.iter().map(|p| identifier_words(p)).collect();
        text.push_str(&words.join(", "));
    }
    text
}

/// `getUserProfile_v2` -> `get user profile v2`.
fn identifier_words(identifier: &str) -> String {
    let mut out = String::with_capacity(identifier.len() + 8);
    let mut previous: Option<char> = None;
    for c in identifier.chars() {
        if c == '_' || c == '-' || c == '.' || c == '/' || c.is_whitespace() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            previous = None;
            continue;
        }
        if let Some(p) = previous {
            if c.is_uppercase() && p.is_lowercase() && !out.ends_with(' ') {
                out.push(' ');
            }
        }
        out.extend(c.to_lowercase());
        previous = Some(c);
    }
    out.trim_end().to_string()
}

#[cfg(test)]
pub(crate) mod tests;

//! Hybrid ranking's parts: fusion, tool vectors and their job, the disk cache, the query cache
//! and clauses; with a stand-in model ([`word_model_at`]) where the encoder is not needed.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc::channel;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tool_search_embed::DIM;

use super::disk::DiskCache;
use super::model::{handles, Embedder};
use super::*;
use crate::search::tests::scratch_dir;

/// The tests' stand-in model: hashed bags of words ([`words_vector`]), no files read.
struct Words;

impl Embedder for Words {
    fn digest(&self) -> &str {
        "test-words-v1"
    }

    fn embed_one(&self, text: &str) -> [f32; DIM] {
        words_vector(&[text])
    }

    fn embed_clauses(&self, clauses: &[&str]) -> (Vec<[f32; DIM]>, [f32; DIM]) {
        (
            clauses.iter().map(|c| words_vector(&[c])).collect(),
            words_vector(clauses),
        )
    }

    fn embed_tools(&self, texts: &[&str]) -> Vec<QVec> {
        texts
            .iter()
            .map(|t| QVec::quantize(&words_vector(&[t])))
            .collect()
    }
}

/// The normalized sum of one pseudo-random unit vector per word
/// (lowercased letters and digits) of `texts`.
fn words_vector(texts: &[&str]) -> [f32; DIM] {
    let mut sum = [0f32; DIM];
    for word in texts
        .iter()
        .flat_map(|t| t.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
    {
        let mut x = blake3::hash(word.to_lowercase().as_bytes()).as_bytes()[..8]
            .iter()
            .fold(0u64, |a, &b| a << 8 | b as u64)
            | 1;
        for v in sum.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v += (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        }
    }
    let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    sum.map(|v| v / norm)
}

/// A stand-in model registered under `dir` (no files read), whose vectors are hashed bags of
/// words, so hybrid ranking, the query cache and the embedding counters run without the model
/// package (other modules' tests use it too).
pub(crate) fn word_model_at(dir: &Path) -> Arc<ModelHandle> {
    let handle = Arc::new(ModelHandle {
        dir: dir.to_path_buf(),
        loaded: OnceLock::new(),
    });
    let _ = handle
        .loaded
        .set(Ok(Arc::new(SemanticModel::new(Box::new(Words)))));
    handles().insert(dir.to_path_buf(), Arc::clone(&handle));
    handle
}

impl DiskCache {
    /// The cached vectors among `wanted` (a missing or unusable file: none).
    fn read(&self, wanted: &HashSet<[u8; 32]>) -> HashMap<[u8; 32], QVec> {
        self.read_checked(wanted).found
    }
}

fn unit(seed: u32) -> [f32; DIM] {
    let mut v = [0f32; DIM];
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    for value in v.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *value = (x as f32 / u32::MAX as f32) - 0.5;
    }
    let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    v.map(|a| a / norm)
}

#[test]
fn fusion_reorders_the_head_and_keeps_the_tail() {
    let params = HybridParams {
        depth: 5,
        weight: 0.15,
    };
    // Similarities 0.1 / 0.5 / 0.3: mean 0.3, deviation 0.1633, z = -1.22 / +1.22 / 0;
    // fused 0.816 / 1.084 / 0.8.
    let scores = [10.0f32, 9.0, 8.0];
    let similarities = [0.1f32, 0.5, 0.3];
    assert_eq!(
        fuse(&[0usize, 1, 2], |i| scores[i], |i| similarities[i], &params),
        vec![1, 0, 2]
    );
    // Only standardized similarity counts: shifted and scaled, the same order.
    let scaled = similarities.map(|s| 10.0 * s - 3.0);
    assert_eq!(
        fuse(&[0usize, 1, 2], |i| scores[i], |i| scaled[i], &params),
        vec![1, 0, 2]
    );
    // A clear lexical lead survives the largest similarity gap of two (z = -1 / +1):
    // 1 - 0.15 against 0.5 + 0.15.
    assert_eq!(
        fuse(&[0usize, 1], |i| [10.0, 5.0][i], |i| [0.0, 1.0][i], &params),
        vec![0, 1]
    );
    // Beyond the depth, lexical order is kept.
    let shallow = HybridParams {
        depth: 1,
        weight: 0.15,
    };
    assert_eq!(
        fuse(
            &[0usize, 1, 2],
            |i| scores[i],
            |i| similarities[i],
            &shallow
        ),
        vec![0, 1, 2]
    );
    // Equal similarities (or NaN, counted as 0) keep the lexical order; no scores: similarity decides.
    assert_eq!(
        fuse(&[5usize, 6], |_| 1.0, |_| f32::NAN, &params),
        vec![5, 6]
    );
    assert_eq!(
        fuse(&[5usize, 6, 7], |i| 10.0 - i as f32, |_| 0.4, &params),
        vec![5, 6, 7]
    );
    assert_eq!(
        fuse(&[5usize, 6], |_| 0.0, |i| i as f32, &params),
        vec![6, 5]
    );
    assert!(fuse::<usize>(&[], |_| 1.0, |_| 1.0, &params).is_empty());
}

#[test]
fn queries_of_several_sentences_are_embedded_clause_by_clause() {
    assert!(
        query_clauses("send an email to my boss").is_empty(),
        "one clause: the whole query only"
    );
    assert_eq!(
        query_clauses("Find flights to Paris. Book a hotel there!"),
        vec!["Find flights to Paris", "Book a hotel there"]
    );
    // Connector words start a clause and are dropped; parts without three letters
    // or digits are not clauses ("Ok." here).
    assert_eq!(
        query_clauses("Ok. Convert 5 USD to EUR and then email it"),
        vec!["Convert 5 USD to EUR", "email it"]
    );
    // Past MAX_QUERY_CLAUSES, the last clause runs to the end of the query.
    let long: String = (0..12).map(|i| format!("Task number {i}. ")).collect();
    let parts = query_clauses(&long);
    assert_eq!(parts.len(), MAX_QUERY_CLAUSES);
    assert_eq!(parts[MAX_QUERY_CLAUSES - 2], "Task number 6");
    assert!(
        parts[MAX_QUERY_CLAUSES - 1].starts_with("Task number 7. Task number 8.")
            && parts[MAX_QUERY_CLAUSES - 1].ends_with("Task number 11.")
    );
}

#[test]
fn a_tool_matching_one_clause_well_outranks_one_matching_the_blend() {
    let (a, b) = (unit(1), unit(2));
    let blend: [f32; DIM] = {
        let v: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        std::array::from_fn(|i| v[i] / norm)
    };
    let query = QueryVectors {
        whole: blend,
        clauses: vec![a, b],
    };
    let exact_a = query.similarity(&QVec::quantize(&a));
    let whole_only = QueryVectors {
        whole: blend,
        clauses: Vec::new(),
    };
    // 0.25 · cos(blend, a) + 0.75 · max(cos(blend, a), cos(a, a) = 1).
    let expected = 0.25 * QVec::quantize(&a).cosine(&blend) + 0.75;
    assert!((exact_a - expected).abs() < 0.01, "{exact_a} vs {expected}");
    assert!(exact_a > whole_only.similarity(&QVec::quantize(&a)) + 0.2);
    assert!(
        (query.similarity(&QVec::quantize(&blend))
            - whole_only.similarity(&QVec::quantize(&blend)))
        .abs()
            < 1e-6
    );
}

#[test]
fn tools_with_the_same_text_share_one_embedding() {
    // Rows 0, 2 and 4 have the same text; row 5 was reused from a cache.
    let keys = [[1u8; 32], [2; 32], [1; 32], [3; 32], [1; 32], [4; 32]];
    let mut rows = vec![None; keys.len()];
    rows[5] = Some(QVec::quantize(&unit(5)));
    let (missing, first_of) = job::distinct_missing(&rows, &keys);
    assert_eq!(
        missing,
        vec![0, 1, 3],
        "each distinct text once, at its first row"
    );
    for &i in &missing {
        rows[i] = Some(QVec::quantize(&unit(i as u32 + 1)));
    }
    let rows = job::share_duplicates(rows, &keys, &first_of);
    for i in [2, 4] {
        assert_eq!(
            rows[i].values, rows[0].values,
            "row {i} shares row 0's vector"
        );
        assert_eq!(rows[i].scale, rows[0].scale);
    }
    assert_eq!(rows[5].values, QVec::quantize(&unit(5)).values);
}

#[test]
fn quantized_cosine_is_close_to_the_float_one() {
    for seed in 1..50 {
        let (a, b) = (unit(seed), unit(seed + 1000));
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let approx = QVec::quantize(&a).cosine(&b);
        assert!(
            (exact - approx).abs() < 0.01,
            "seed {seed}: {exact} vs {approx}"
        );
        assert!((QVec::quantize(&a).cosine(&a) - 1.0).abs() < 0.01);
    }
    let zero = QVec::quantize(&[0.0; DIM]);
    assert_eq!(zero.cosine(&unit(3)), 0.0);
}

#[test]
fn disk_cache_reads_back_and_survives_torn_writes() {
    let dir = std::env::temp_dir().join(format!(
        "ots-vectors-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = DiskCache::open(&dir, "0123456789abcdef0123").unwrap();
    let rows: Vec<([u8; 32], QVec)> = (0..5u8)
        .map(|i| ([i; 32], QVec::quantize(&unit(i as u32 + 1))))
        .collect();
    cache.append(&rows[..2]).unwrap();
    // A torn record (a crash mid-write) between two good batches.
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "vectors"))
        .unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(&[7u8; 100]);
    std::fs::write(&file, &bytes).unwrap();
    cache.append(&rows[2..]).unwrap();

    let again = DiskCache::open(&dir, "0123456789abcdef0123").unwrap();
    let wanted: HashSet<[u8; 32]> = [[0u8; 32], [3u8; 32], [4u8; 32], [9u8; 32]]
        .into_iter()
        .collect();
    let found = again.read(&wanted);
    assert_eq!(
        found.len(),
        3,
        "the torn bytes are skipped, later records still read"
    );
    assert_eq!(found[&[3u8; 32]].values, rows[3].1.values);
    assert_eq!(found[&[3u8; 32]].scale, rows[3].1.scale);
    // Another model digest: another file, nothing found.
    assert!(DiskCache::open(&dir, "ffff456789abcdef0123")
        .unwrap()
        .read(&wanted)
        .is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keys_depend_on_model_and_text() {
    let a = tool_key("model-a", "send email");
    assert_eq!(a, tool_key("model-a", "send email"));
    assert_ne!(a, tool_key("model-b", "send email"));
    assert_ne!(a, tool_key("model-a", "send mail"));
}

fn vectors_file(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "vectors"))
        .unwrap()
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.display()
    );
}

/// `work` on a thread; if it has not finished after a long while (blocked
/// opening `fifo`), opens the FIFO's write end so the thread can end, and fails.
fn without_blocking_on<T: Send + 'static>(
    fifo: &std::path::Path,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    match receiver.recv_timeout(Duration::from_secs(30)) {
        Ok(out) => out,
        Err(_) => {
            let _writer = std::fs::OpenOptions::new().write(true).open(fifo);
            panic!("blocked on the FIFO {}", fifo.display());
        }
    }
}

#[test]
fn a_fifo_or_a_link_in_place_of_the_cache_file_is_refused_without_blocking() {
    let digest = "0123456789abcdef0123";
    let rows: Vec<([u8; 32], QVec)> = (0..3u8)
        .map(|i| ([i; 32], QVec::quantize(&unit(i as u32 + 1))))
        .collect();
    let wanted: HashSet<[u8; 32]> = rows.iter().map(|(k, _)| *k).collect();

    let dir = scratch_dir("fifo-cache");
    DiskCache::open(&dir, digest)
        .unwrap()
        .append(&rows)
        .unwrap();
    let file = vectors_file(&dir);
    std::fs::remove_file(&file).unwrap();
    mkfifo(&file);
    let (d, w) = (dir.clone(), wanted.clone());
    let read = without_blocking_on(&file, move || {
        DiskCache::open(&d, digest).unwrap().read_checked(&w)
    });
    assert!(read.found.is_empty());
    assert!(
        read.warning.as_deref().is_some_and(|w| w.contains("FIFO")),
        "{:?}",
        read.warning
    );
    let d = dir.clone();
    let appended = without_blocking_on(&file, move || {
        DiskCache::open(&d, digest)
            .unwrap()
            .append(&[([9; 32], QVec::quantize(&unit(9)))])
    });
    assert!(appended.unwrap_err().contains("not a regular file"));

    // A link planted in place of the file: never followed, for reading or appending.
    let victim = scratch_dir("cache-victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("victim.txt"), b"keep me").unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(victim.join("victim.txt"), &file).unwrap();
    let cache = DiskCache::open(&dir, digest).unwrap();
    assert!(cache.append(&rows).unwrap_err().contains("symbolic link"));
    assert!(cache
        .read_checked(&wanted)
        .warning
        .is_some_and(|w| w.contains("symbolic link")));
    assert_eq!(
        std::fs::read(victim.join("victim.txt")).unwrap(),
        b"keep me"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&victim);
}

#[test]
fn a_cache_folder_others_can_write_or_own_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let digest = "0123456789abcdef0123";
    let dir = scratch_dir("open-cache");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = DiskCache::open(&dir, digest)
        .err()
        .expect("a world-writable folder is refused");
    assert!(
        err.contains("writable by group or others") && err.contains("memory only"),
        "{err}"
    );
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).unwrap();
    assert!(DiskCache::open(&dir, digest).is_err(), "group-writable too");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(
        DiskCache::open(&dir, digest).is_ok(),
        "readable by others is fine"
    );
    // Owned by another user (only root can make one here).
    if unsafe { libc::geteuid() } == 0 {
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        let err = DiskCache::open(&dir, digest)
            .err()
            .expect("a folder of another uid is refused");
        assert!(err.contains("owned by uid 65534"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cache_records_need_the_installation_key_and_unit_length() {
    let digest = "0123456789abcdef0123";
    let dir = scratch_dir("keyed-cache");
    let cache = DiskCache::open(&dir, digest).unwrap();
    let rows: Vec<([u8; 32], QVec)> = (0..4u8)
        .map(|i| ([i; 32], QVec::quantize(&unit(i as u32 + 1))))
        .collect();
    cache.append(&rows[..2]).unwrap();
    // The key: 32 bytes, mode 0600, beside the file.
    let key_meta = std::fs::metadata(dir.join("vectors.key")).unwrap();
    assert_eq!(
        (
            key_meta.len(),
            std::os::unix::fs::PermissionsExt::mode(&key_meta.permissions()) & 0o777
        ),
        (32, 0o600)
    );
    // A forged record (right layout, no key) claiming tool 3 with a huge scale.
    let file = vectors_file(&dir);
    let mut bytes = std::fs::read(&file).unwrap();
    let record = bytes.len() / 2;
    let mut forged = bytes[..record].to_vec();
    forged[8..40].copy_from_slice(&[3u8; 32]);
    forged[40..44].copy_from_slice(&1000f32.to_le_bytes());
    let body = forged[8..8 + 32 + 4 + DIM].to_vec();
    let unkeyed = blake3::hash(&body);
    forged[8 + 32 + 4 + DIM..].copy_from_slice(&unkeyed.as_bytes()[..16]);
    bytes.extend_from_slice(&forged);
    std::fs::write(&file, &bytes).unwrap();
    let wanted: HashSet<[u8; 32]> = (0..4u8).map(|i| [i; 32]).collect();
    let read = cache.read_checked(&wanted);
    assert_eq!(read.found.len(), 2, "the forged record is not read");
    assert!(!read.found.contains_key(&[3u8; 32]));
    // Another installation's key: its records are not read either.
    std::fs::remove_file(dir.join("vectors.key")).unwrap();
    let other = DiskCache::open(&dir, digest).unwrap();
    assert!(other.read(&wanted).is_empty());
    // A key file of the wrong mode turns the cache off, with the reason.
    std::fs::set_permissions(
        dir.join("vectors.key"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let err = DiskCache::open(&dir, digest)
        .err()
        .expect("a readable key is refused");
    assert!(err.contains("mode 0600"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_garbage_cache_file_is_given_up_in_one_pass_and_moved_aside() {
    let digest = "0123456789abcdef0123";
    let dir = scratch_dir("garbage-cache");
    let cache = DiskCache::open(&dir, digest).unwrap();
    let rows: Vec<([u8; 32], QVec)> = (0..2u8)
        .map(|i| ([i; 32], QVec::quantize(&unit(i as u32 + 1))))
        .collect();
    cache.append(&rows).unwrap();
    let file = vectors_file(&dir);
    // 64 MiB of zeros after the good records (a `/dev/zero` copy), then a good one.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.resize(bytes.len() + (64 << 20), 0);
    std::fs::write(&file, &bytes).unwrap();
    cache
        .append(&[([7u8; 32], QVec::quantize(&unit(7)))])
        .unwrap();
    let wanted: HashSet<[u8; 32]> = [[0u8; 32], [7u8; 32]].into_iter().collect();
    // The pass a read makes over these bytes, its record checks counted instead of timed.
    let mut checks = 0;
    let scanned = super::disk::scan(&std::fs::read(&file).unwrap(), &wanted, |record| {
        checks += 1;
        cache.parse(record)
    });
    assert!(scanned.is_none(), "given up");
    assert!(
        checks <= 2 + super::disk::MAX_DAMAGED,
        "{checks} records checked: one pass, not one check per byte"
    );
    let read = cache.read_checked(&wanted);
    assert!(read.found.is_empty());
    assert!(
        read.warning
            .as_deref()
            .is_some_and(|w| w.contains("moved aside")),
        "{:?}",
        read.warning
    );
    assert!(dir
        .join(format!(
            "{}.corrupt",
            file.file_name().unwrap().to_str().unwrap()
        ))
        .exists());
    // Appends start a new file, which reads back.
    cache.append(&rows).unwrap();
    assert_eq!(cache.read(&[[0u8; 32]].into_iter().collect()).len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

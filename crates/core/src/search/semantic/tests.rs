use std::collections::HashSet;
use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::json;
use tool_search_embed::DIM;

use super::disk::DiskCache;
use super::*;
use crate::catalog::{Catalog, CatalogOptions, RankingMode};

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
    // Cases from the dev set (bench/experiments/hybrid-rerank.mjs --examples), checked by hand.
    let params = HybridParams { depth: 5, weight: 0.5 };
    let scores = [11.5401f32, 11.3089, 9.8984, 9.7896, 9.2204];
    let cosines = [0.4725f32, 0.0457, 0.3553, -0.0819, 0.3589];
    let order = fuse(&[0usize, 1, 2, 3, 4], |i| scores[i], |i| cosines[i], &params);
    assert_eq!(order, vec![0, 2, 1, 4, 3]);
    let scores = [15.6908f32, 15.3029, 15.2409, 15.0083, 14.9109];
    let cosines = [0.3379f32, 0.1465, 0.4483, 0.2054, 0.1941];
    let order = fuse(&[0usize, 1, 2, 3, 4], |i| scores[i], |i| cosines[i], &params);
    assert_eq!(order, vec![2, 0, 3, 1, 4]);
    // Beyond the depth, lexical order is kept.
    let shallow = HybridParams { depth: 2, weight: 0.5 };
    let order = fuse(&[0usize, 1, 2, 3, 4], |i| scores[i], |i| cosines[i], &shallow);
    assert_eq!(order, vec![0, 1, 2, 3, 4]);
    // Equal fused scores keep the lexical order; NaN counts as 0; no scores: cosine decides.
    assert_eq!(fuse(&[5usize, 6], |_| 1.0, |_| f32::NAN, &params), vec![5, 6]);
    assert_eq!(fuse(&[5usize, 6], |_| 0.0, |i| i as f32, &params), vec![6, 5]);
    assert!(fuse::<usize>(&[], |_| 1.0, |_| 1.0, &params).is_empty());
}

#[test]
fn quantized_cosine_is_close_to_the_float_one() {
    for seed in 1..50 {
        let (a, b) = (unit(seed), unit(seed + 1000));
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let approx = QVec::quantize(&a).cosine(&b);
        assert!((exact - approx).abs() < 0.01, "seed {seed}: {exact} vs {approx}");
        assert!((QVec::quantize(&a).cosine(&a) - 1.0).abs() < 0.01);
    }
    let zero = QVec::quantize(&[0.0; DIM]);
    assert_eq!(zero.cosine(&unit(3)), 0.0);
}

#[test]
fn disk_cache_reads_back_and_survives_torn_writes() {
    let dir = std::env::temp_dir().join(format!("ots-vectors-{}-{:?}", std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = DiskCache::open(&dir, "0123456789abcdef0123").unwrap();
    let rows: Vec<([u8; 32], QVec)> = (0..5u8).map(|i| ([i; 32], QVec::quantize(&unit(i as u32 + 1)))).collect();
    cache.append(&rows[..2]).unwrap();
    // A torn record (a crash mid-write) between two good batches.
    let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(&[7u8; 100]);
    std::fs::write(&file, &bytes).unwrap();
    cache.append(&rows[2..]).unwrap();

    let again = DiskCache::open(&dir, "0123456789abcdef0123").unwrap();
    let wanted: HashSet<[u8; 32]> = [[0u8; 32], [3u8; 32], [4u8; 32], [9u8; 32]].into_iter().collect();
    let found = again.read(&wanted);
    assert_eq!(found.len(), 3, "the torn bytes are skipped, later records still read");
    assert_eq!(found[&[3u8; 32]].values, rows[3].1.values);
    assert_eq!(found[&[3u8; 32]].scale, rows[3].1.scale);
    // Another model digest: another file, nothing found.
    assert!(DiskCache::open(&dir, "ffff456789abcdef0123").unwrap().read(&wanted).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keys_depend_on_model_and_text() {
    let a = tool_key("model-a", "send email");
    assert_eq!(a, tool_key("model-a", "send email"));
    assert_ne!(a, tool_key("model-b", "send email"));
    assert_ne!(a, tool_key("model-a", "send mail"));
}

fn tools() -> String {
    json!([
        { "name": "send_email", "description": "Send an email message to a recipient" },
        { "name": "read_file", "description": "Read a file from disk", "inputSchema": { "type": "object", "properties": { "path": { "type": "string" } } } },
    ])
    .to_string()
}

#[test]
fn hybrid_without_a_usable_model_ranks_lexically_and_says_why() {
    let lexical = Catalog::from_json_text(&tools(), &CatalogOptions::default()).unwrap();
    let status = lexical.ranking_status();
    assert_eq!((status.ranking, status.active, status.vectors.state), (RankingMode::Lexical, RankingMode::Lexical, RankingState::Off));

    let no_model = CatalogOptions { ranking: Some(RankingMode::Hybrid), vector_cache: Some(json!(false)), ..Default::default() };
    let catalog = Catalog::from_json_text(&tools(), &no_model).unwrap();
    let status = catalog.ranking_status();
    assert_eq!((status.active, status.vectors.state), (RankingMode::Lexical, RankingState::Off));
    assert!(status.vectors.error.unwrap().contains("model"));

    let missing_dir = std::env::temp_dir().join("ots-no-such-model");
    let bad_model = CatalogOptions {
        ranking: Some(RankingMode::Hybrid),
        model: Some(missing_dir),
        vector_cache: Some(json!(false)),
        ..Default::default()
    };
    let catalog = Catalog::from_json_text(&tools(), &bad_model).unwrap();
    let (sender, receiver) = channel();
    catalog.on_ranking_progress(Box::new(move |status| {
        if status.vectors.state == RankingState::Failed {
            let _ = sender.send(status.clone());
        }
    }));
    let status = receiver.recv_timeout(Duration::from_secs(60)).expect("the job reports failure");
    assert!(status.vectors.error.unwrap().contains("could not be loaded"));
    assert_eq!(status.active, RankingMode::Lexical);
    let hits = catalog.search("email", None).unwrap();
    assert_eq!(hits[0].name, "send_email");
}

#[test]
fn bad_vector_cache_option_is_refused() {
    let options = CatalogOptions { ranking: Some(RankingMode::Hybrid), vector_cache: Some(json!(12)), ..Default::default() };
    assert!(Catalog::from_json_text(&tools(), &options).is_err());
}

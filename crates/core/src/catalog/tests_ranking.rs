//! Catalog ranking settings (hybrid without a usable model, bad cache
//! option): catalog tests, kept apart from `search::semantic`'s own.

use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::json;

use crate::catalog::{Catalog, CatalogOptions, RankingMode};
use crate::search::semantic::RankingState;

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
    assert_eq!(
        (status.ranking, status.active, status.vectors.state),
        (
            RankingMode::Lexical,
            RankingMode::Lexical,
            RankingState::Off
        )
    );

    let no_model = CatalogOptions {
        ranking: Some(RankingMode::Hybrid),
        vector_cache: Some(json!(false)),
        ..Default::default()
    };
    let catalog = Catalog::from_json_text(&tools(), &no_model).unwrap();
    let status = catalog.ranking_status();
    assert_eq!(
        (status.active, status.vectors.state),
        (RankingMode::Lexical, RankingState::Off)
    );
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
    let status = receiver
        .recv_timeout(Duration::from_secs(60))
        .expect("the job reports failure");
    assert!(status
        .vectors
        .error
        .unwrap()
        .contains("could not be loaded"));
    assert_eq!(status.active, RankingMode::Lexical);
    let hits = catalog.search("email", None).unwrap();
    assert_eq!(hits[0].name, "send_email");
}

#[test]
fn bad_vector_cache_option_is_refused() {
    let options = CatalogOptions {
        ranking: Some(RankingMode::Hybrid),
        vector_cache: Some(json!(12)),
        ..Default::default()
    };
    assert!(Catalog::from_json_text(&tools(), &options).is_err());
}

//! Catalog ranking settings (hybrid without a usable model, bad cache
//! option): catalog tests, kept apart from `search::semantic`'s own.

use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::json;

use crate::catalog::{Catalog, CatalogOptions, RankingMode, SearchOptions};
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
    let hits = catalog.search("email", &SearchOptions::hits(None)).unwrap();
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

/// `count` tools no other test builds (`tag` in every name).
fn many_tools(tag: &str, count: usize) -> String {
    let tools: Vec<_> = (0..count)
        .map(|i| json!({ "name": format!("{tag}_{i}"), "description": format!("Looks up record {i} of the {tag} ledger") }))
        .collect();
    serde_json::to_string(&tools).unwrap()
}

/// `indexCache`: a folder stores a large catalog's index (the status says
/// so); `false` builds in each process; the default follows `vectorCache`;
/// anything else is refused.
#[test]
fn the_index_cache_option_stores_large_catalogs_and_says_how_the_index_came_to_be() {
    use crate::search::{IndexCacheState, STORED_MIN_ENTRIES};
    let dir = std::env::temp_dir().join(format!("ots-index-option-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let with = |value: serde_json::Value| CatalogOptions {
        index_cache: Some(value),
        ..Default::default()
    };
    let stored =
        Catalog::from_json_text(&many_tools("stored", STORED_MIN_ENTRIES), &with(json!(dir)))
            .unwrap();
    assert_eq!(stored.ranking_status().index.state, IndexCacheState::Saved);
    let files = std::fs::read_dir(&dir).unwrap().flatten();
    let names: Vec<String> = files
        .map(|f| f.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.ends_with(".index")), "{names:?}");

    let off = Catalog::from_json_text(&many_tools("off", STORED_MIN_ENTRIES), &with(json!(false)))
        .unwrap();
    assert_eq!(off.ranking_status().index.state, IndexCacheState::Off);
    let small = Catalog::from_json_text(&tools(), &with(json!(dir))).unwrap();
    assert_eq!(small.ranking_status().index.state, IndexCacheState::Off);
    // No index cache given, no vector cache: none.
    let default_off = CatalogOptions {
        vector_cache: Some(json!(false)),
        ..Default::default()
    };
    let catalog =
        Catalog::from_json_text(&many_tools("default", STORED_MIN_ENTRIES), &default_off).unwrap();
    assert_eq!(catalog.ranking_status().index.state, IndexCacheState::Off);
    // A live catalog's next version is derived from this one, not stored.
    let next = stored
        .append(&json!([{ "name": "stored_extra", "description": "One more" }]).to_string())
        .unwrap();
    assert_eq!(next.ranking_status().index.state, IndexCacheState::Derived);
    for bad in [json!(12), json!(""), json!({})] {
        let err = Catalog::from_json_text(&tools(), &with(bad.clone())).unwrap_err();
        assert!(err.to_string().contains("indexCache"), "{bad}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Learned ranking: a tool taught with every call there is gains at most the weight, and never
/// passes an exact name match.
#[test]
fn learning_is_bounded_and_never_passes_an_exact_name_match() {
    use crate::catalog::Outcome;
    let tools: Vec<serde_json::Value> = (0..40)
        .map(|i| {
            serde_json::json!({ "name": format!("tool_{i}"), "description": format!("Report number {i} about invoices and payments") })
        })
        .chain([
            serde_json::json!({ "name": "invoices", "description": "List invoices." }),
            serde_json::json!({ "name": "flooder", "description": "Does something unrelated entirely." }),
        ])
        .collect();
    let options = |weight: f64| -> CatalogOptions {
        serde_json::from_value(serde_json::json!({ "learning": { "folder": false, "scope": format!("bounded-{weight}"), "weight": weight } })).unwrap()
    };
    let plain = Catalog::from_records(tools.clone(), &CatalogOptions::default()).unwrap();
    for weight in [0.25, 1.0] {
        let catalog = Catalog::from_records(tools.clone(), &options(weight)).unwrap();
        for _ in 0..500 {
            for query in ["invoices", "invoices and payments report"] {
                let recorded = catalog
                    .record_outcome(&Outcome {
                        query: query.into(),
                        id: "openclaw:core:flooder".into(),
                        ok: true,
                    })
                    .unwrap();
                assert!(recorded.learned);
            }
        }
        // The exact name match stays first however much the flooder was taught.
        let hits = catalog
            .search("invoices", &SearchOptions::hits(Some(20.0)))
            .unwrap();
        assert_eq!(hits[0].id, "openclaw:core:invoices");
        // The learned part never exceeds the weight.
        for part in catalog
            .learned_parts("invoices and payments report")
            .unwrap()
        {
            assert!(part.bonus <= weight as f32 + 1e-6, "{part:?}");
        }
        // It passes only tools within the weight of the top score: with 0.25 the flooder (no
        // words in common, base 0) cannot pass the unlearned top hits.
        let learned = catalog
            .search("invoices and payments report", &SearchOptions::scored(50))
            .unwrap();
        let unlearned = plain
            .search("invoices and payments report", &SearchOptions::scored(50))
            .unwrap();
        let flooder = catalog
            .resolve_ordinal("flooder", crate::catalog::LookupStyle::Structured)
            .unwrap();
        let at = learned.iter().position(|h| h.ordinal == flooder).unwrap();
        let top = unlearned[0].score;
        // Every tool it passed scored at most `weight` of the top score before.
        for hit in &learned[at + 1..] {
            let before = unlearned.iter().find(|u| u.ordinal == hit.ordinal).unwrap();
            assert!(
                before.score <= top * weight as f32 + 1e-3,
                "passed a tool at {} of {top}",
                before.score
            );
        }
        // And the tools above it are the unlearned ones, in their order.
        let above: Vec<usize> = learned[..at].iter().map(|h| h.ordinal).collect();
        let unlearned_order: Vec<usize> = unlearned.iter().map(|h| h.ordinal).take(at).collect();
        assert_eq!(above, unlearned_order);
    }
    // Off: exactly the unlearned ranking.
    let off: CatalogOptions =
        serde_json::from_value(serde_json::json!({ "learning": false })).unwrap();
    let catalog = Catalog::from_records(tools, &off).unwrap();
    assert!(!catalog.learns());
    assert_eq!(
        catalog
            .search(
                "invoices and payments report",
                &SearchOptions::hits(Some(20.0))
            )
            .unwrap(),
        plain
            .search(
                "invoices and payments report",
                &SearchOptions::hits(Some(20.0))
            )
            .unwrap()
    );
}

/// One catalog, two agents: `with_learning_scope` gives each agent its own prior over the same
/// index, so one agent's calls never move another's ranking; the same scope is one prior.
#[test]
fn each_learning_scope_learns_alone_over_one_index() {
    use crate::catalog::Outcome;
    let ledger: Vec<serde_json::Value> = (0..30)
        .map(|i| serde_json::json!({ "name": format!("ledger_{i}"), "description": format!("Ledger entry report {i} for the month") }))
        .collect();
    let options: CatalogOptions = serde_json::from_value(
        serde_json::json!({ "learning": { "folder": false, "scope": "scopes-base" } }),
    )
    .unwrap();
    let base = Catalog::from_records(ledger, &options).unwrap();
    let accounting = base.with_learning_scope("scopes-accounting").unwrap();
    let deploy = base.with_learning_scope("scopes-deploy").unwrap();
    assert_eq!(accounting.fingerprint(), base.fingerprint());
    assert_eq!(
        accounting.learning_status().unwrap().scope,
        "scopes-accounting"
    );
    let query = "monthly ledger report";
    let before = base
        .search(query, &SearchOptions::hits(Some(10.0)))
        .unwrap();
    let taught = before.last().unwrap().id.clone();
    for _ in 0..20 {
        let recorded = accounting
            .record_outcome(&Outcome {
                query: query.into(),
                id: taught.clone(),
                ok: true,
            })
            .unwrap();
        assert!(recorded.learned);
    }
    let ids = |c: &Catalog| -> Vec<String> {
        c.search(query, &SearchOptions::hits(Some(10.0)))
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect()
    };
    assert_eq!(
        ids(&accounting)[0],
        taught,
        "the teaching agent ranks it first"
    );
    let unlearned: Vec<String> = before.into_iter().map(|h| h.id).collect();
    assert_eq!(
        ids(&deploy),
        unlearned,
        "another agent's ranking did not move"
    );
    assert_eq!(ids(&base), unlearned, "nor the base scope's");
    // The same scope again is the same prior.
    let again = base.with_learning_scope("scopes-accounting").unwrap();
    assert_eq!(ids(&again)[0], taught);
    assert_eq!(deploy.learning_status().unwrap().learned, 0);
    for bad in ["", "a\u{7}b"] {
        assert!(base.with_learning_scope(bad).is_err(), "{bad:?}");
    }
    let off = Catalog::from_json_text(&tools(), &CatalogOptions::default()).unwrap();
    let err = off.with_learning_scope("agent").unwrap_err();
    assert_eq!(err.code, crate::error::ErrorCode::InvalidRequest);
}

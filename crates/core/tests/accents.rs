//! Requests typed with or without accents (and in full-width letters) find the
//! same tools, on the repository's copy of the dev catalog (13,163 tools) plus a
//! few tools described in French, German, Spanish, Vietnamese and Turkish; the
//! request's own spelling ranks first where two tools differ only by accents.

mod common;

use std::sync::OnceLock;

use tool_search_core::catalog::ToolEntry;
use tool_search_core::search::{with_second_thread, SearchIndex};

/// (name, description) of the tools added to the dev catalog.
const LOCAL_TOOLS: &[(&str, &str)] = &[
    (
        "previsions_meteo",
        "Prévisions météo détaillées pour une ville",
    ),
    (
        "verkehrslage",
        "Aktuelle Verkehrslage und Staus auf Straßen und Autobahnen abfragen",
    ),
    (
        "pronostico_tiempo",
        "Pronóstico del tiempo para mañana en una ciudad de España",
    ),
    (
        "du_bao_thoi_tiet",
        "Dự báo thời tiết hôm nay cho Hà Nội và Đà Nẵng",
    ),
    (
        "trafik_durumu",
        "İstanbul ve Kırşehir için anlık trafik durumu ve yol çalışmaları",
    ),
    (
        "resume_builder",
        "Build a résumé: format your work history as a printable résumé",
    ),
    (
        "resume_playback",
        "Resume playback: resume a paused song on the speaker",
    ),
];

struct Fixture {
    entries: Vec<ToolEntry>,
    index: SearchIndex,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let mut entries = common::dev_entries();
        for (name, description) in LOCAL_TOOLS {
            entries.push(common::entry(
                format!("mcp:local:{name}"),
                "mcp",
                "local",
                name.to_string(),
                description.to_string(),
                None,
            ));
        }
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        let index = with_second_thread(|| SearchIndex::build(&entries)).expect("build");
        Fixture { entries, index }
    })
}

fn top_ids(query: &str, limit: usize) -> Vec<String> {
    let f = fixture();
    f.index
        .search(query, limit, &|_| true)
        .into_iter()
        .map(|h| f.entries[h.ordinal].id.clone())
        .collect()
}

#[test]
fn requests_with_and_without_accents_find_the_same_tool_first() {
    let cases: &[(&str, &[&str])] = &[
        // French
        (
            "mcp:local:previsions_meteo",
            &[
                "météo à Lyon demain",
                "meteo lyon",
                "prevision meteo detaillee",
            ],
        ),
        // German: ß typed as ss
        (
            "mcp:local:verkehrslage",
            &[
                "Verkehrslage Straßen",
                "verkehrslage strassen",
                "staus auf strassen",
            ],
        ),
        // Spanish
        (
            "mcp:local:pronostico_tiempo",
            &["pronóstico del tiempo mañana", "pronostico tiempo manana"],
        ),
        // Vietnamese: stacked diacritics and đ
        (
            "mcp:local:du_bao_thoi_tiet",
            &[
                "dự báo thời tiết Hà Nội",
                "du bao thoi tiet ha noi",
                "thoi tiet da nang",
            ],
        ),
        // Turkish: dotted İ and dotless ı
        (
            "mcp:local:trafik_durumu",
            &[
                "İstanbul trafik durumu",
                "istanbul trafik",
                "kirsehir yol calismalari",
                "KIRŞEHİR TRAFİK",
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (expected, queries) in cases {
        for query in *queries {
            let got = top_ids(query, 3);
            if got.first().map(String::as_str) != Some(*expected) {
                failures.push(format!("{query:?}: expected {expected} first, got {got:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_requests_own_spelling_ranks_first() {
    let accented = top_ids("résumé", 2);
    assert_eq!(
        accented.first().map(String::as_str),
        Some("mcp:local:resume_builder"),
        "{accented:?}"
    );
    assert!(
        accented.iter().any(|id| id == "mcp:local:resume_playback"),
        "{accented:?}"
    );
}

#[test]
fn full_width_letters_rank_as_ascii_ones() {
    for (wide, narrow) in [
        ("ｗｅａｔｈｅｒ ｆｏｒｅｃａｓｔ", "weather forecast"),
        ("ｓｅｎｄ ａｎ ｅｍａｉｌ", "send an email"),
    ] {
        assert_eq!(top_ids(wide, 10), top_ids(narrow, 10), "{wide:?}");
    }
}

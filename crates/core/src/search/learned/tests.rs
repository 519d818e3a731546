use super::*;

fn query(words: &[&str]) -> LearnedQuery {
    LearnedQuery::new(words.iter().map(|w| (term_hash(w), 1.0)))
}

fn digest(n: u8) -> EntryDigest {
    [n; 16]
}

fn hit(ordinal: usize, score: f32) -> ScoredHit {
    ScoredHit {
        ordinal,
        score,
        strength: 0.5,
        weak: false,
        needed_by: None,
    }
}

const NOW: u64 = 1_800_000_000;

#[test]
fn a_repeated_request_finds_the_tool_it_called() {
    let mut memory = Memory::default();
    let params = LearningParams::default();
    memory.record(
        digest(1),
        &query(&["post", "team", "channel"]),
        NOW,
        params.half_life_secs,
    );
    let scores = memory.score(
        &query(&["post", "team", "channel"]),
        NOW,
        params.half_life_secs,
    );
    assert_eq!(scores.len(), 1);
    assert!((scores[0].similarity - 1.0).abs() < 1e-5);
    // One call: confidence 1 / (1 + 0.5).
    assert!((scores[0].strength - 1.0 / 1.5).abs() < 1e-5);
    // Unrelated words: nothing.
    assert!(memory
        .score(&query(&["weather", "lyon"]), NOW, params.half_life_secs)
        .is_empty());
}

#[test]
fn what_was_learned_halves_every_half_life() {
    let mut memory = Memory::default();
    let half_life = 86_400.0;
    memory.record(digest(1), &query(&["invoice"]), NOW, half_life);
    let later = memory.score(&query(&["invoice"]), NOW + 86_400, half_life);
    assert!((later[0].events - 0.5).abs() < 1e-4);
    // Counts decay with the events, so the bag's shape (and similarity) stays.
    memory.record(
        digest(1),
        &query(&["invoice", "pdf"]),
        NOW + 86_400,
        half_life,
    );
    let tool = &memory.tools[0];
    assert!((tool.events - 1.5).abs() < 1e-4);
    assert!(
        (tool
            .terms
            .iter()
            .find(|t| t.0 == term_hash("invoice"))
            .unwrap()
            .1
            - 1.5)
            .abs()
            < 1e-4
    );
}

#[test]
fn a_tool_called_for_everything_gains_nothing_for_a_new_request() {
    let mut memory = Memory::default();
    let half_life = LearningParams::default().half_life_secs;
    let vocabulary: Vec<String> = (0..400).map(|i| format!("word{i}")).collect();
    for i in 0..400 {
        let words = [
            &vocabulary[i],
            &vocabulary[(i * 7 + 3) % 400],
            &vocabulary[(i * 13 + 5) % 400],
        ];
        let q = LearnedQuery::new(words.iter().map(|w| (term_hash(w), 1.0)));
        memory.record(digest(9), &q, NOW, half_life);
    }
    assert!(memory.tools[0].terms.len() <= MAX_TOOL_TERMS);
    // A request sharing one word with the bag gains nothing; one sharing two (its bag kept
    // both) gains a sliver of the bound.
    let mut gained = 0;
    for i in 0..400 {
        let q = query(&[&vocabulary[i], &vocabulary[(i * 3 + 1) % 400]]);
        for score in memory.score(&q, NOW, half_life) {
            gained += 1;
            assert!(score.strength < 0.15, "{score:?}");
        }
    }
    assert!(
        gained <= 12,
        "the flooding tool matched {gained} of 400 requests"
    );
}

#[test]
fn the_bonus_is_bounded_and_exact_matches_stay_first() {
    // Hit 0 is an exact name match; 1..=4 rank lexically 10, 8, 6, 1.
    let ranked = vec![
        hit(0, 30.0),
        hit(1, 10.0),
        hit(2, 8.0),
        hit(3, 6.0),
        hit(4, 1.0),
    ];
    // The full bonus for tool 4 (base 0.1) and tool 3 (base 0.6), a learned-only tool 7.
    let out = blend(
        ranked.clone(),
        1,
        &[(4, 1.0), (3, 1.0), (7, 1.0), (0, 1.0)],
        0.5,
    );
    let order: Vec<usize> = out.iter().map(|h| h.ordinal).collect();
    // 3: 0.6 + 0.5 = 1.1 passes 1 (1.0); 4: 0.1 + 0.5 = 0.6 passes nothing it was behind by
    // more than 0.5; 7 enters at 0.5.
    assert_eq!(order, vec![0, 3, 1, 2, 4, 7]);
    assert_eq!(out[0], ranked[0]);
    // Scores stay on the top score's scale.
    assert!((out[1].score - 11.0).abs() < 1e-4);
    // No weight, or nothing learned: the same ranking.
    assert_eq!(blend(ranked.clone(), 1, &[(4, 1.0)], 0.0), ranked);
    assert_eq!(blend(ranked.clone(), 1, &[], 0.5), ranked);
    // A weight above the cap is the cap.
    let capped = blend(ranked.clone(), 1, &[(4, 1.0)], 5.0);
    assert_eq!(
        capped.iter().map(|h| h.ordinal).collect::<Vec<_>>(),
        vec![0, 4, 1, 2, 3]
    );
    assert!(capped[1].score <= capped[0].score);
}

#[test]
fn a_prior_keeps_its_bounds() {
    let mut memory = Memory::default();
    let half_life = LearningParams::default().half_life_secs;
    for n in 0..(MAX_TOOLS + 50) {
        let mut d = [0u8; 16];
        d[..8].copy_from_slice(&(n as u64).to_le_bytes());
        memory.record(d, &query(&["alpha", "beta"]), NOW + n as u64, half_life);
    }
    assert_eq!(memory.tools.len(), MAX_TOOLS);
    assert_eq!(memory.by_digest.len(), MAX_TOOLS);
    // Postings name live slots only, each once per word.
    for list in memory.postings.values() {
        assert!(list.len() <= MAX_TOOLS);
        assert!(list.iter().all(|&s| (s as usize) < memory.tools.len()));
    }
    for (slot, tool) in memory.tools.iter().enumerate() {
        assert_eq!(memory.by_digest[&tool.digest] as usize, slot);
    }
    // ≤ 8 MiB at the tool bound, with full bags.
    let mut full = Memory::default();
    for n in 0..MAX_TOOLS {
        let mut d = [0u8; 16];
        d[..8].copy_from_slice(&(n as u64).to_le_bytes());
        let words: Vec<String> = (0..MAX_TOOL_TERMS).map(|w| format!("w{n}x{w}")).collect();
        let q = LearnedQuery::new(words.iter().map(|w| (term_hash(w), 1.0)));
        full.record(d, &q, NOW, half_life);
    }
    assert!(full.bytes() <= 8 << 20, "{} bytes", full.bytes());
    assert!(file::encode("gateway", &full).len() <= 8 << 20);
}

#[test]
fn a_file_reads_back_as_written_and_refuses_damage() {
    let mut memory = Memory::default();
    let half_life = LearningParams::default().half_life_secs;
    memory.record(digest(1), &query(&["post", "team"]), NOW, half_life);
    memory.record(digest(2), &query(&["weather", "city"]), NOW, half_life);
    memory.ignored = 3;
    let bytes = file::encode("agent-a", &memory);
    let (scope, back) = file::decode(&bytes).unwrap();
    assert_eq!(scope, "agent-a");
    assert_eq!(back.learned, 2);
    assert_eq!(back.ignored, 3);
    let q = query(&["post", "team"]);
    assert_eq!(
        back.score(&q, NOW, half_life),
        memory.score(&q, NOW, half_life)
    );
    for cut in [0, 8, 20, bytes.len() - 1] {
        assert!(file::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(file::decode(&longer).is_err());
    // A count that is not a number.
    let mut nan = bytes.clone();
    let at = bytes.len() - 4;
    nan[at..].copy_from_slice(&f32::NAN.to_le_bytes());
    assert!(file::decode(&nan).is_err());
}

#[test]
fn a_folders_status_shows_an_open_prior_as_it_is_now() {
    let dir = crate::search::tests::scratch_dir("learned-live-status");
    let params = LearningParams::default();
    let written = LearnedPrior::open(Some(&dir), "written");
    written.record(digest(1), &query(&["send", "invoice"]), NOW, &params);
    written.flush().unwrap();
    // Changes the writer thread has not written yet: counted all the same.
    written.record(digest(2), &query(&["list", "invoices"]), NOW, &params);
    let fresh = LearnedPrior::open(Some(&dir), "fresh");
    fresh.record(digest(3), &query(&["book", "room"]), NOW, &params);
    let statuses = folder_status(&dir).unwrap();
    let learned = |scope: &str| {
        statuses
            .iter()
            .find(|s| s.scope == scope)
            .map(|s| s.learned)
    };
    assert_eq!(learned("written"), Some(2));
    assert_eq!(learned("fresh"), Some(1));
    drop((written, fresh));
    // Closed (each wrote itself when dropped): read from the files alone.
    let statuses = folder_status(&dir).unwrap();
    assert_eq!(statuses.iter().map(|s| s.learned).sum::<u64>(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_prior_survives_a_restart_and_a_damaged_file_starts_again() {
    let dir = crate::search::tests::scratch_dir("learned-restart");
    let params = LearningParams::default();
    {
        let prior = LearnedPrior::open(Some(&dir), "restart");
        prior.record(digest(4), &query(&["send", "invoice"]), NOW, &params);
        prior.flush().unwrap();
    }
    // Dropped, so a new open reads the file.
    let prior = LearnedPrior::open(Some(&dir), "restart");
    assert_eq!(prior.status().learned, 1);
    assert_eq!(
        prior
            .score(&query(&["send", "invoice"]), NOW, &params)
            .len(),
        1
    );
    drop(prior);
    let path = dir.join(file::name("restart"));
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 40;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let prior = LearnedPrior::open(Some(&dir), "restart");
    let status = prior.status();
    assert_eq!(status.learned, 0);
    assert!(status.warning.unwrap().contains("refused"));
    assert!(!path.exists(), "a refused file is removed");
    // Reset forgets, on disk too.
    prior.record(digest(4), &query(&["send"]), NOW, &params);
    prior.flush().unwrap();
    assert!(path.exists());
    assert_eq!(
        reset_folder(&dir).unwrap(),
        0,
        "reset removed the open prior's file itself"
    );
    assert!(!path.exists());
    assert_eq!(prior.status().learned, 0);
}

//! The crate's unit tests (one sibling file, as ARCHITECTURE.md's "Tests" says), by topic.

/// For the kernel-agreement tests: says on stderr (not captured by the test
/// harness, so it shows in every run) that `kernel` could not be compared on
/// this CPU, and fails when REQUIRE_ALL_KERNELS=1 (for a CI host that must
/// cover every kernel).
pub(crate) fn kernel_not_compared(kernel: &dyn std::fmt::Debug) {
    use std::io::Write;
    let line = format!("skipped: {kernel:?} not supported on this CPU\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    assert!(
        std::env::var("REQUIRE_ALL_KERNELS").as_deref() != Ok("1"),
        "REQUIRE_ALL_KERNELS=1 but {kernel:?} is not supported on this CPU"
    );
}

mod batch {
    use crate::{batches, BATCH_TOKENS};

    fn lengths(sequences: &[Vec<u32>]) -> Vec<Vec<usize>> {
        batches(sequences)
            .map(|b| b.iter().map(Vec::len).collect())
            .collect()
    }

    #[test]
    fn batches_hold_at_most_batch_tokens_unless_one_sequence_is_longer() {
        let seq = |n: usize| vec![0u32; n];
        assert!(lengths(&[]).is_empty());
        assert_eq!(lengths(&[seq(BATCH_TOKENS)]), vec![vec![BATCH_TOKENS]]);
        assert_eq!(
            lengths(&[seq(100), seq(156), seq(1)]),
            vec![vec![100, 156], vec![1]]
        );
        assert_eq!(
            lengths(&[seq(10), seq(BATCH_TOKENS + 1), seq(10)]),
            vec![vec![10], vec![BATCH_TOKENS + 1], vec![10]]
        );
        let many: Vec<Vec<u32>> = (0..100).map(|_| seq(7)).collect();
        let split = lengths(&many);
        assert!(split
            .iter()
            .all(|b| b.iter().sum::<usize>() <= BATCH_TOKENS));
        assert_eq!(split.iter().map(Vec::len).sum::<usize>(), 100);
    }
}

mod joint {
    use crate::*;

    fn words() -> tokenizer::WordPiece {
        let mut vocab: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        vocab.extend((0..100).map(|i| format!("w{i}")));
        tokenizer::WordPiece::from_vocab_text(&vocab.join("\n")).unwrap()
    }

    #[test]
    fn clauses_share_one_budget_of_word_pieces() {
        let tokenizer = words();
        let long: String = (0..400).map(|i| format!("w{} ", i % 100)).collect();
        // Eight clauses of 256 pieces each (the most one clause may have): 2,048 pieces before.
        let parts = vec![long.as_str(); 8];
        let sequences = joint_sequences(&tokenizer, &parts, MAX_JOINT_TOKENS);
        let total: usize = sequences.iter().map(Vec::len).sum();
        assert!(total <= MAX_JOINT_TOKENS, "{total} pieces");
        assert_eq!(sequences.len(), 8);
        for s in &sequences {
            assert_eq!(s.len(), MAX_JOINT_TOKENS / 8);
            assert_eq!((s[0], s[s.len() - 1]), (2, 3), "[CLS] … [SEP] kept");
        }
        // Short clauses stay whole; the long one takes what is left.
        let short = "w1 w2 w3";
        let parts = [short, long.as_str(), short];
        let sequences = joint_sequences(&tokenizer, &parts, MAX_JOINT_TOKENS);
        assert_eq!(sequences[0], tokenizer.encode(short, MAX_TOKENS));
        assert_eq!(sequences[2].len(), 5);
        assert_eq!(
            sequences[1].len(),
            MAX_TOKENS,
            "one clause never exceeds its own limit"
        );
        assert_eq!(sequences[1], tokenizer.encode(&long, MAX_TOKENS));
        // Within the budget nothing changes.
        let parts = [short, short];
        assert_eq!(
            joint_sequences(&tokenizer, &parts, MAX_JOINT_TOKENS),
            parts.map(|p| tokenizer.encode(p, MAX_TOKENS)).to_vec()
        );
    }
}

mod text {
    use crate::*;

    /// The lead shares one encoder across worker threads.
    #[test]
    fn encoder_is_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Encoder>();
    }

    #[test]
    fn tool_text_splits_identifiers() {
        assert_eq!(
            tool_text(
                "getUserProfile",
                "Returns a profile.",
                &["user_id", "include-fields"]
            ),
            "get user profile: Returns a profile. Parameters: user id, include fields"
        );
        assert_eq!(tool_text("send_email", "", &[]), "send email");
        assert_eq!(
            tool_text("HTTPGet", " Fetch ", &["url"]),
            "httpget: Fetch. Parameters: url"
        );
        assert_eq!(tool_text("", "", &[]), "");
    }
}

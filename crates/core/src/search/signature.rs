//! Term signatures of entries: what the redundancy-aware selection
//! ([`super::diversify`]) compares, built with the index.

/// Most distinct terms kept per entry for overlap (name first, then label, description).
pub const MAX_SIGNATURE_TERMS: usize = 48;
/// Signature width in 64-bit words (1,024 bits): two unrelated 48-term
/// entries share about two bits by chance, a Jaccard error of about 0.02.
pub(super) const SIGNATURE_WORDS: usize = 16;

/// A set of term hashes as a fixed-width bit set, so the overlap of two
/// entries is a few popcounts rather than a merge of sorted lists (the
/// selection compares up to 300 pairs per search).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Signature([u64; SIGNATURE_WORDS]);

impl Signature {
    pub(super) const EMPTY: Signature = Signature([0; SIGNATURE_WORDS]);

    /// The bit set's words (the stored index writes them).
    pub(super) fn words(&self) -> &[u64; SIGNATURE_WORDS] {
        &self.0
    }

    pub(super) fn from_words(words: [u64; SIGNATURE_WORDS]) -> Signature {
        Signature(words)
    }

    fn insert(&mut self, hash: u32) -> bool {
        let bit = hash as usize % (SIGNATURE_WORDS * 64);
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        let fresh = self.0[word] & mask == 0;
        self.0[word] |= mask;
        fresh
    }
}

/// FNV-1a: stable across runs and platforms (rankings must be deterministic).
pub fn term_hash(term: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in term.bytes() {
        hash ^= byte as u32;
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// The signature of space-joined analyzed fields, most important first.
pub fn signature<'a>(fields: impl IntoIterator<Item = &'a str>) -> Signature {
    let mut out = Signature::EMPTY;
    let mut terms = 0usize;
    for field in fields {
        for term in field.split(' ').filter(|t| !t.is_empty()) {
            if terms == MAX_SIGNATURE_TERMS {
                return out;
            }
            if out.insert(term_hash(term)) {
                terms += 1;
            }
        }
    }
    out
}

pub(super) fn jaccard(a: &Signature, b: &Signature) -> f32 {
    let (mut shared, mut union) = (0u32, 0u32);
    for (x, y) in a.0.iter().zip(&b.0) {
        shared += (x & y).count_ones();
        union += (x | y).count_ones();
    }
    if union == 0 {
        0.0
    } else {
        shared as f32 / union as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Signature {
        /// The number of bits set.
        fn len(&self) -> u32 {
            self.0.iter().map(|w| w.count_ones()).sum()
        }
    }

    #[test]
    fn signature_is_a_bounded_set() {
        let s = signature(["weather forecast", "forecast daily weather"]);
        assert_eq!(s.len(), 3);
        assert_eq!(jaccard(&s, &signature(["daily weather forecast"])), 1.0);
        assert_eq!(jaccard(&s, &signature(["stock price"])), 0.0);
        let long: String = (0..200).map(|i| format!("t{i} ")).collect();
        assert_eq!(signature([long.as_str()]).len(), MAX_SIGNATURE_TERMS as u32);
    }
}

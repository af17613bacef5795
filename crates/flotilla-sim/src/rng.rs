//! Deterministic randomness: one seed decides node names, zones, latencies and scheduling
//! tie-breaks. SplitMix64 is enough (no cryptography here) and needs no dependency.

/// A small, fast, seedable generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// A generator for one purpose (`scope`) derived from the run's seed, so that adding draws
    /// in one place does not shift the numbers drawn in another.
    pub fn derived(seed: u64, scope: &str) -> Self {
        Rng::new(mix(seed, scope))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        // Multiply-shift: unbiased enough for simulation purposes.
        ((u128::from(self.next_u64()) * u128::from(bound.max(1))) >> 64) as u64
    }

    /// `len` characters from Kubernetes' generateName alphabet (no vowels, no confusables).
    pub fn name_suffix(&mut self, len: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..len)
            .map(|_| ALPHABET[self.below(ALPHABET.len() as u64) as usize] as char)
            .collect()
    }
}

/// A 64-bit hash of `scope` mixed with `seed` (FNV-1a, then one SplitMix step).
pub fn mix(seed: u64, scope: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in scope.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    Rng::new(hash ^ seed).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_scopes_are_independent() {
        let mut a = Rng::derived(7, "nodes");
        let mut b = Rng::derived(7, "nodes");
        let drawn: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        assert_eq!(drawn, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(Rng::derived(7, "zones").next_u64(), drawn[0]);
        assert_ne!(Rng::derived(8, "nodes").next_u64(), drawn[0]);
    }

    #[test]
    fn below_stays_in_range_and_suffix_uses_the_alphabet() {
        let mut rng = Rng::new(1);
        assert!((0..1000).all(|_| rng.below(3) < 3));
        let suffix = rng.name_suffix(5);
        assert_eq!(suffix.len(), 5);
        assert!(
            suffix
                .chars()
                .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c))
        );
    }
}

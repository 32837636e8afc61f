//! SplitMix64 (Steele, Lea, Flood 2014): a seeded stream of 64-bit numbers,
//! the same for the same seed on every machine and with no dependency. The
//! model shuffles its replicated dies with it; the engine's fault injection
//! and the benchmarks' request streams draw from it.

/// The stream's step (the golden ratio in 64 bits).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output for state `z` before its step: a good 64-bit mix.
pub fn mix(z: u64) -> u64 {
    let mut z = z.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A SplitMix64 stream from its seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        let out = mix(self.0);
        self.0 = self.0.wrapping_add(GAMMA);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_the_published_one() {
        // The first outputs for seed 1234567 in the reference implementation
        // (Vigna's splitmix64.c).
        let mut rng = SplitMix64(1_234_567);
        assert_eq!(
            [rng.next_u64(), rng.next_u64(), rng.next_u64()],
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }
}

//! Per-entity random streams. Each stream's seed is derived from the scenario seed and a
//! stable identity string (e.g. "vm0/thread3"), so one entity's draws never depend on how
//! many draws another made, nor on the hypervisor policy: policies compare on common random
//! numbers. The generator is PCG-64 (MCG variant, `rand_pcg::Pcg64Mcg`).

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finaliser (Steele, Lea, Flood 2014) over FNV-1a of the identity.
pub fn stream_seed(seed: u64, identity: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in identity.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = seed ^ h.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[derive(Debug)]
pub struct RngStream {
    rng: Pcg64Mcg,
    draws: u64,
    /// Running FNV-style hash of every value drawn (tests of common random numbers).
    trace: u64,
}

impl RngStream {
    pub fn new(seed: u64, identity: &str) -> Self {
        RngStream { rng: Pcg64Mcg::seed_from_u64(stream_seed(seed, identity)), draws: 0, trace: 0xcbf2_9ce4_8422_2325 }
    }

    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// Hash of the sequence of values drawn so far.
    pub fn trace(&self) -> u64 {
        self.trace
    }

    fn note(&mut self, x: f64) -> f64 {
        self.draws += 1;
        self.trace = (self.trace ^ x.to_bits()).wrapping_mul(0x0000_0100_0000_01b3);
        x
    }

    pub fn uniform(&mut self) -> f64 {
        let x = self.rng.gen::<f64>();
        self.note(x)
    }

    pub fn below(&mut self, n: usize) -> usize {
        let x = self.rng.gen_range(0..n.max(1));
        self.note(x as f64);
        x
    }

    pub fn exp(&mut self, mean: f64) -> f64 {
        let x = if mean <= 0.0 { 0.0 } else { Exp::new(1.0 / mean).map(|d| d.sample(&mut self.rng)).unwrap_or(mean) };
        self.note(x)
    }

    /// Log-normal with the given mean and coefficient of variation.
    pub fn lognormal(&mut self, mean: f64, cv: f64) -> f64 {
        let x = match log_normal(mean, cv) {
            Some(d) => d.sample(&mut self.rng),
            None if mean <= 0.0 => 0.0,
            None => mean,
        };
        self.note(x)
    }

    /// A draw from a distribution built once by the caller (e.g. [`log_normal`] on a hot path).
    pub fn sample(&mut self, d: &impl Distribution<f64>) -> f64 {
        let x = d.sample(&mut self.rng);
        self.note(x)
    }
}

/// The log-normal of the given mean and coefficient of variation (None for a mean ≤ 0 or a
/// CV that gives no valid distribution).
pub fn log_normal(mean: f64, cv: f64) -> Option<LogNormal<f64>> {
    if mean <= 0.0 {
        return None;
    }
    let s2 = (1.0 + cv * cv).ln();
    LogNormal::new(mean.ln() - 0.5 * s2, s2.sqrt()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent_of_each_other() {
        let mut a1 = RngStream::new(7, "vm0/thread0");
        let mut b = RngStream::new(7, "vm0/thread1");
        let x: Vec<f64> = (0..5).map(|_| a1.uniform()).collect();
        let mut a2 = RngStream::new(7, "vm0/thread0");
        for _ in 0..100 {
            b.uniform();
        }
        let y: Vec<f64> = (0..5).map(|_| a2.uniform()).collect();
        assert_eq!(x, y);
        assert_ne!(stream_seed(7, "vm0/thread0"), stream_seed(7, "vm0/thread1"));
        assert_ne!(stream_seed(7, "a"), stream_seed(8, "a"));
    }
}

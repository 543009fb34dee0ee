//! Integration tests live in tests/*.rs; this library holds what several of them share.
//!
//! [`Sample`]: how much of the kernels × tiles × shapes cross product the emulator tests run.
//! The whole product takes over half an hour on CI's two cores; a contributor should not wait
//! that long for every change, and most of it re-proves what one tile of a kernel proves for its
//! siblings (the tiles of a kernel share its source and differ in constants). So by default:
//! - every kernel runs, at its **default tile** (the one `auto` and `--variant` take when no
//!   tile is named), in each of its types and layouts, the **edge case**: the shape of each test
//!   that crosses every tile edge (partial tiles in m, n and k, more tiles than the emulator's
//!   multiprocessors), and the small cases (one element, a few), which cost nothing;
//! - every other tile runs the edge case once, in the kernel's first type and layout;
//! - a **rotating sample** of the other (tile, case) pairs runs as well, drawn from a seed that
//!   is printed, so that over successive runs every pair is exercised and a failure replays
//!   with `GEMM_SUITE_SEED=<seed>`.
//!
//! `GEMM_FULL_SUITE=1` runs the whole cross product (run it before a stop, and after a change to
//! a kernel's tiles or to the skeleton they share).
use std::sync::OnceLock;

/// The environment variable that asks for the whole cross product.
pub const FULL_SUITE_VAR: &str = "GEMM_FULL_SUITE";
/// The environment variable that fixes the sample's seed.
pub const SEED_VAR: &str = "GEMM_SUITE_SEED";
/// One in this many of the (tile, case) pairs outside the default tile and the edge case runs.
pub const SAMPLE_ONE_IN: u64 = 4;

/// Which part of the cross product this run covers (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sample {
    /// Every tile at every case.
    Full,
    /// Every kernel at its edge cases, every tile somewhere, and one in [`SAMPLE_ONE_IN`] of
    /// the rest, chosen by the seed.
    Seeded(u64),
}

impl Sample {
    /// From the environment, read once per test binary and printed once.
    pub fn from_env() -> Sample {
        static SAMPLE: OnceLock<Sample> = OnceLock::new();
        *SAMPLE.get_or_init(|| {
            let full = std::env::var(FULL_SUITE_VAR).is_ok_and(|v| !v.is_empty() && v != "0");
            let sample = if full {
                Sample::Full
            } else {
                let seed = match std::env::var(SEED_VAR) {
                    Ok(text) => text.trim().parse().unwrap_or_else(|_| {
                        panic!("{SEED_VAR}={text:?}: expected an unsigned integer")
                    }),
                    Err(_) => {
                        std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map(|d| d.as_secs())
                            .unwrap_or(0)
                            % 1_000_000
                    }
                };
                Sample::Seeded(seed)
            };
            // Straight to the process's stderr: the harness captures `eprintln!` of a passing
            // test, and the seed must be in the log of every run, to replay the one that failed.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{}", sample.describe());
            sample
        })
    }

    /// One line for the log: what runs, and how to replay or widen it.
    pub fn describe(self) -> String {
        match self {
            Sample::Full => {
                format!("emulator coverage: the full cross product ({FULL_SUITE_VAR} is set)")
            }
            Sample::Seeded(seed) => format!(
                "emulator coverage: every kernel at its edge cases, every tile once, 1 in \
                 {SAMPLE_ONE_IN} of the rest; seed {seed} (replay: {SEED_VAR}={seed}; \
                 everything: {FULL_SUITE_VAR}=1)"
            ),
        }
    }

    /// Whether case `case` of `kernel` at its tile number `tile_index` (0: the default) runs in
    /// the test named `test`: always in the full product, and in a sample where the caller says
    /// it must (`always`: the default tile's edge case, say) or the seed draws it.
    pub fn runs(
        self,
        test: &str,
        kernel: &str,
        tile_index: usize,
        case: usize,
        always: bool,
    ) -> bool {
        match self {
            Sample::Full => true,
            Sample::Seeded(_) if always => true,
            Sample::Seeded(seed) => {
                let key = format!("{test}/{kernel}/{tile_index}/{case}");
                fnv1a(seed, key.as_bytes()).is_multiple_of(SAMPLE_ONE_IN)
            }
        }
    }

    /// The tiles of `kernel` that run the test `test` when each tile runs a single problem
    /// (no edge case to fall back on): the default tile, and the others one in
    /// [`SAMPLE_ONE_IN`] by the seed, so that every tile is reached over a few runs.
    pub fn tiles(self, test: &str, kernel: &str, tiles: &[u32]) -> Vec<u32> {
        tiles
            .iter()
            .enumerate()
            .filter(|&(i, _)| self.runs(test, kernel, i, 0, i == 0))
            .map(|(_, &t)| t)
            .collect()
    }
}

/// FNV-1a of `bytes`, started from `seed`: a stable hash (std's is randomised per process).
fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn what_must_run_runs_and_the_default_tile_is_always_taken() {
        for seed in 0..50 {
            let s = Sample::Seeded(seed);
            assert!(s.runs("t", "k", 5, 3, true));
            assert_eq!(s.tiles("t", "k", &[7, 8, 9])[0], 7);
        }
        assert!(Sample::Full.runs("t", "k", 5, 3, false));
        assert_eq!(Sample::Full.tiles("t", "k", &[7, 8, 9]), [7, 8, 9]);
    }

    #[test]
    fn the_rest_is_a_seeded_fraction_that_rotates() {
        let picked = |seed| {
            (1..200)
                .filter(|&i| Sample::Seeded(seed).runs("t", "k", i, 1, false))
                .collect::<Vec<_>>()
        };
        let (a, b) = (picked(1), picked(2));
        // About one in four, and another set for another seed.
        assert!((25..=75).contains(&a.len()), "{}", a.len());
        assert_ne!(a, b);
        // The same seed draws the same pairs: a failure replays.
        assert_eq!(a, picked(1));
        // Over a few seeds every pair is drawn.
        let every = (1..200).all(|i| (0..40).any(|s| picked(s).contains(&i)));
        assert!(every);
    }
}

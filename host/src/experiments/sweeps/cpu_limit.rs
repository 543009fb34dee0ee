//! The time limit of the CPU parts. A CPU run grows as n³, so each doubling of n multiplies its
//! time by eight and the last size of a sweep can cost more than all the others together;
//! rather than ask the reader to pick sizes per variant by hand, each variant's next run is
//! estimated from its previous one and skipped, estimate shown, when it would exceed
//! `--cpu-time-limit`. `Outcome` carries either result into the tables, and `cpu_timing` says
//! how a CPU run is timed: once, as the report did.
use crate::experiments::chart::compact;
use crate::experiments::context::{time_cell, valid_time};
use crate::experiments::table::Cell;
use anyhow::Result;
use gpu_gemm::run::{Report, Timing};
use std::collections::HashMap;

/// Whether a CPU run goes ahead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CpuPlan {
    Run,
    Skip { estimate_ms: f64 },
}

/// The time of a size-`n` run estimated from a size-`from_n` one: the work grows as n³.
pub fn estimate_ms(from_n: u32, from_ms: f64, n: u32) -> f64 {
    from_ms * (n as f64 / from_n as f64).powi(3)
}

/// The time-limit rule of the CPU tables: each variant's next run is estimated from its last
/// size (measured, or itself estimated when that one was skipped) and skipped when the estimate
/// exceeds the limit. A variant's first size always runs.
#[derive(Debug)]
pub struct CpuLimiter {
    pub limit_ms: f64,
    last: HashMap<String, (u32, f64)>,
}

impl CpuLimiter {
    pub fn new(limit_s: f64) -> Self {
        Self {
            limit_ms: limit_s * 1e3,
            last: HashMap::new(),
        }
    }

    pub fn plan(&mut self, variant: &str, n: u32) -> CpuPlan {
        let Some(&(from_n, from_ms)) = self.last.get(variant) else {
            return CpuPlan::Run;
        };
        let estimate = estimate_ms(from_n, from_ms, n);
        if estimate > self.limit_ms {
            // Larger sizes are estimated from this estimate, so they are skipped too.
            self.last.insert(variant.to_string(), (n, estimate));
            CpuPlan::Skip {
                estimate_ms: estimate,
            }
        } else {
            CpuPlan::Run
        }
    }

    /// Records a measured time.
    pub fn measured(&mut self, variant: &str, n: u32, ms: f64) {
        if ms.is_finite() {
            self.last.insert(variant.to_string(), (n, ms));
        }
    }

    /// The table cell of a skipped run: `skipped: est. 180 s > 20 s limit`.
    pub fn reason(&self, estimate_ms: f64) -> String {
        format!(
            "skipped: est. {} s > {} s limit",
            compact(estimate_ms / 1e3),
            compact(self.limit_ms / 1e3)
        )
    }
}

/// A CPU run, or the estimate that skipped it.
pub(super) enum Outcome {
    /// Boxed: a report is large, and many outcomes of a sweep are small skips.
    Ran(Box<Result<Report>>),
    Skipped(f64),
}

impl Outcome {
    pub(super) fn time(&self) -> Option<f64> {
        match self {
            Outcome::Ran(r) => valid_time(r),
            Outcome::Skipped(_) => None,
        }
    }

    pub(super) fn cell(&self, limiter: &CpuLimiter) -> Cell {
        match self {
            Outcome::Ran(r) => time_cell(r),
            Outcome::Skipped(e) => Cell::missing(limiter.reason(*e)),
        }
    }

    pub(super) fn failed_check(&self) -> bool {
        match self {
            Outcome::Ran(report) => report.as_ref().as_ref().is_ok_and(|r| !r.passed()),
            Outcome::Skipped(_) => false,
        }
    }
}

/// One run of a CPU variant: as measured (the CPU's own time, not the emulator's).
pub(super) fn cpu_timing() -> Timing {
    Timing::CHECK_ONCE
}

/// The checks of a row that holds several runs: `pass`, or which failed.
pub(super) fn checks_cell(failures: &[String]) -> Cell {
    Cell::text(if failures.is_empty() {
        "pass".to_string()
    } else {
        format!("FAIL: {}", failures.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_grow_as_n_cubed() {
        assert_eq!(estimate_ms(512, 250.0, 1024), 2000.0);
        assert_eq!(estimate_ms(1024, 100.0, 4096), 6400.0);
        assert_eq!(estimate_ms(64, 8.0, 64), 8.0);
    }

    #[test]
    fn the_limit_skips_what_the_estimate_puts_over_it() {
        // The report's baseline: 250 ms at 512, 4219 ms at 1024. With a 20 s limit, 2048
        // (est. 33.8 s) and then 4096 are skipped.
        let mut limiter = CpuLimiter::new(20.0);
        assert_eq!(
            limiter.plan("naive", 512),
            CpuPlan::Run,
            "the first size always runs"
        );
        limiter.measured("naive", 512, 250.0);
        assert_eq!(limiter.plan("naive", 1024), CpuPlan::Run);
        limiter.measured("naive", 1024, 4219.0);
        assert_eq!(
            limiter.plan("naive", 2048),
            CpuPlan::Skip {
                estimate_ms: 33752.0
            }
        );
        assert_eq!(
            limiter.plan("naive", 4096),
            CpuPlan::Skip {
                estimate_ms: 270016.0
            },
            "estimated from the skipped size's estimate"
        );
        assert_eq!(limiter.reason(270016.0), "skipped: est. 270 s > 20 s limit");
        // Other variants are independent.
        assert_eq!(limiter.plan("simd", 4096), CpuPlan::Run);
        // Exactly at the limit still runs.
        limiter.measured("simd", 1024, 2500.0);
        assert_eq!(limiter.plan("simd", 2048), CpuPlan::Run);
    }
}

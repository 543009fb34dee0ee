//! A chain's kernels on the GPU's own clock (CUPTI's start and end stamps,
//! [`gpu_gemm::kernel_clock`]): how much of a decode step the GPU spends in kernels, how much
//! between them, and how much two kernels overlap — what the early start
//! (programmatic dependent launch) changes. Events around a graph give its total only.
//!
//! An early-started kernel's stamps begin when its first block does, waiting for the kernel
//! ahead included: it overlaps that kernel, and the gap between them is negative.

/// The stamps of one launch of a chain of `layers` layers, each a mean per layer.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Kernels in the whole chain.
    pub kernels: usize,
    /// µs a layer in which some kernel ran (the union of the kernels' spans).
    pub busy_us: f64,
    /// µs a layer in which none ran, between the first start and the last end.
    pub idle_us: f64,
    /// µs a layer in which two or more ran (the kernels' summed spans past the union).
    pub overlap_us: f64,
    /// The kernels of the middle layer, each (start, end) in µs from that layer's first start,
    /// where every layer launches the same few kernels (at most [`LAYER_DETAIL`]).
    pub layer: Option<Vec<(f64, f64)>>,
}

/// The most kernels a layer may launch for [`Timeline::layer`] to list them.
pub const LAYER_DETAIL: usize = 8;

impl Timeline {
    /// From every kernel's (start, end) in nanoseconds, in any order.
    pub fn of(stamps: &[(u64, u64)], layers: u32) -> Option<Timeline> {
        let mut stamps = stamps.to_vec();
        stamps.sort_unstable();
        let (first, last) = (stamps.first()?.0, stamps.iter().map(|s| s.1).max()?);
        let mut union = 0u64;
        let mut summed = 0u64;
        let mut covered_to = first;
        for &(start, end) in &stamps {
            summed += end.saturating_sub(start);
            if end > covered_to {
                union += end - start.max(covered_to);
                covered_to = end;
            }
        }
        let per_layer = |ns: u64| ns as f64 * 1e-3 / layers.max(1) as f64;
        let in_layer = stamps.len() / layers.max(1) as usize;
        let layer = (layers > 0
            && stamps.len().is_multiple_of(layers as usize)
            && in_layer <= LAYER_DETAIL)
            .then(|| {
                let middle = &stamps[(layers as usize / 2) * in_layer..][..in_layer];
                let zero = middle[0].0;
                let us = |ns: u64| ns.wrapping_sub(zero) as i64 as f64 * 1e-3;
                middle.iter().map(|&(s, e)| (us(s), us(e))).collect()
            });
        Some(Timeline {
            kernels: stamps.len(),
            busy_us: per_layer(union),
            idle_us: per_layer((last - first) - union),
            overlap_us: per_layer(summed - union),
            layer,
        })
    }

    /// The middle layer's kernels as `start–end` µs, with the gap before each: `0.0–21.3,
    /// +1.2: 22.5–40.1`.
    pub fn layer_text(&self) -> String {
        let Some(layer) = &self.layer else {
            return format!("more than {LAYER_DETAIL} kernels a layer");
        };
        let mut text = Vec::new();
        let mut previous_end = None;
        for &(start, end) in layer {
            let span = format!("{start:.1}–{end:.1}");
            text.push(match previous_end {
                None => span,
                Some(before) => format!("{:+.1}: {span}", start - before),
            });
            previous_end = Some(end);
        }
        text.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two layers of two kernels: the first pair with a 2 µs gap, the second overlapping by 3
    /// µs (an early start), 1 µs between the layers.
    #[test]
    fn busy_idle_and_overlap_are_told_apart() {
        let us = |a: u64, b: u64| (a * 1000, b * 1000);
        let stamps = [us(0, 10), us(12, 20), us(21, 30), us(27, 40)];
        let t = Timeline::of(&stamps, 2).unwrap();
        assert_eq!(t.kernels, 4);
        // Busy: 10 + 8 + 19 = 37; idle 2 + 1 = 3; overlap 3; each over 2 layers.
        assert_eq!((t.busy_us, t.idle_us, t.overlap_us), (18.5, 1.5, 1.5));
        assert_eq!(t.layer, Some(vec![(0.0, 9.0), (6.0, 19.0)]));
        assert_eq!(t.layer_text(), "0.0–9.0, -3.0: 6.0–19.0");
    }

    /// A kernel inside another's span adds to the overlap, not to the busy time; stamps come
    /// in any order; a layer of more kernels than [`LAYER_DETAIL`] is not listed.
    #[test]
    fn a_kernel_inside_another_and_long_layers() {
        let stamps = [(5_000, 6_000), (0, 10_000)];
        let t = Timeline::of(&stamps, 1).unwrap();
        assert_eq!((t.busy_us, t.idle_us, t.overlap_us), (10.0, 0.0, 1.0));
        let many: Vec<(u64, u64)> = (0..9).map(|i| (i * 10, i * 10 + 5)).collect();
        let t = Timeline::of(&many, 1).unwrap();
        assert_eq!(t.layer, None);
        assert!(t.layer_text().starts_with("more than 8"));
        assert_eq!(Timeline::of(&[], 1), None);
    }
}

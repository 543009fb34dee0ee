//! The loops of a function, found from its backward branches, and its hot loop: the k-loop
//! whose instruction mix `cargo xtask sass` reports.
//!
//! # Finding the hot loop
//! ptxas lays a loop out as one address range whose last instruction is a branch back to its
//! first, `@!P2 BRA `(.L_x_19)`. So every branch to an earlier address closes a loop spanning
//! [target, branch]; two back edges to the same target are one loop (a `continue`). The hot
//! loop of a GEMM is its k-loop: the innermost loop that does FMAs. When there are several
//! (a main loop and a remainder loop, say), it is the one with the most FMAs. A branch to
//! itself is not a loop but the trap nvdisasm shows after the last `EXIT`.
use super::{Function, Instruction, Mix, Precision};
use std::collections::BTreeMap;

/// A loop: the address range from its first instruction to the branch that closes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loop {
    /// Address of the loop's first instruction (the back edge's target).
    pub start: u32,
    /// Address of the last backward branch to `start`.
    pub end: u32,
    /// How many other loops enclose this one (0: outermost).
    pub depth: u32,
    /// Whether no other loop lies inside this one.
    pub innermost: bool,
}

impl Loop {
    /// Whether `other` is a different loop inside this one.
    fn contains(&self, other: &Loop) -> bool {
        (self.start, self.end) != (other.start, other.end)
            && self.start <= other.start
            && other.end <= self.end
    }

    /// Whether `other` is a shorter loop that shares addresses with this one without lying
    /// inside it: this one is then no k-loop but the range of a back edge from code laid out
    /// elsewhere, such as the retry of an `mbarrier` wait that ptxas places after the
    /// function's last `EXIT`, whose branch back into a loop's middle spans everything between.
    fn straddles(&self, other: &Loop) -> bool {
        other.end - other.start < self.end - self.start
            && other.start <= self.end
            && self.start <= other.end
    }
}

impl Function {
    /// The instructions at addresses `start..=end`.
    pub fn range(&self, start: u32, end: u32) -> &[Instruction] {
        let from = self.instructions.partition_point(|i| i.address < start);
        let to = self.instructions.partition_point(|i| i.address <= end);
        &self.instructions[from..to]
    }

    /// Every loop, in address order: one per target of a backward branch.
    pub fn loops(&self) -> Vec<Loop> {
        // Header address → last back edge to it.
        let mut ends: BTreeMap<u32, u32> = BTreeMap::new();
        for branch in &self.instructions {
            if !branch.base().starts_with("BRA") {
                continue;
            }
            let Some(&target) = branch.target.as_ref().and_then(|l| self.labels.get(l)) else {
                continue;
            };
            // `target == address` is the trap after the last EXIT, not a loop.
            if target < branch.address {
                let end = ends.entry(target).or_insert(branch.address);
                *end = (*end).max(branch.address);
            }
        }
        let mut loops: Vec<Loop> = ends
            .into_iter()
            .map(|(start, end)| Loop {
                start,
                end,
                depth: 0,
                innermost: true,
            })
            .collect();
        let snapshot = loops.clone();
        for l in &mut loops {
            l.depth = snapshot.iter().filter(|outer| outer.contains(l)).count() as u32;
            l.innermost = !snapshot.iter().any(|inner| l.contains(inner));
        }
        loops
    }

    /// The k-loop: among the loops that do FMAs and hold no other loop that does, the one with
    /// the most FMAs; of equals, the one with the fewest instructions (a kernel with a 16-byte
    /// and a per-element copy of its pipeline has two such loops, and the fast path is the
    /// one it runs on aligned data), then the first. `None` when no loop does an FMA of
    /// `precision`.
    pub fn hot_loop(&self, precision: Precision) -> Option<(Loop, Mix)> {
        let loops: Vec<(Loop, Mix)> = self
            .loops()
            .into_iter()
            .map(|l| (l, Mix::of(self.range(l.start, l.end), precision)))
            .filter(|(_, mix)| mix.fma() > 0)
            .collect();
        loops
            .iter()
            .filter(|(outer, _)| {
                !loops
                    .iter()
                    .any(|(inner, _)| outer.contains(inner) || outer.straddles(inner))
            })
            .fold(None::<&(Loop, Mix)>, |best, candidate| match best {
                Some(b)
                    if (b.1.fma(), std::cmp::Reverse(b.1.total))
                        >= (candidate.1.fma(), std::cmp::Reverse(candidate.1.total)) =>
                {
                    Some(b)
                }
                _ => Some(candidate),
            })
            .cloned()
    }
}

//! The planted bugs of the tensor-parallel tests: each a small change to a correct schedule
//! that a real mistake would make. The schedule's symbolic replay (unit tests) and the emulator's
//! f64 check (`tests/emulator_parallel.rs`) must both catch every one.
use super::schedule::{Buffer, Collective, Op, Schedule};

/// Each all-gather lands `tokens` further than the GEMMs read it (where it still fits in B).
pub fn gather_shifted(schedule: &mut Schedule, tokens: usize) {
    let s = &schedule.sharding;
    let (k, b) = (s.k_local() as usize, s.len(Buffer::B));
    for step in &mut schedule.steps {
        if let Op::Collectives(group) = &mut step.op {
            for c in group {
                if let Collective::AllGather {
                    offset, per_rank, ..
                } = c
                {
                    if *offset + tokens * k + s.ranks as usize * *per_rank <= b {
                        *offset += tokens * k;
                    }
                }
            }
        }
    }
}

/// The first two reduce-scatters swap where their sums go (two chunks' tokens exchanged).
pub fn scattered_chunks_swapped(schedule: &mut Schedule) {
    let mut offsets: Vec<&mut usize> = schedule
        .steps
        .iter_mut()
        .filter_map(|step| match &mut step.op {
            Op::Collectives(group) => match &mut group[0] {
                Collective::ReduceScatter { recv_offset, .. } => Some(recv_offset),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(offsets.len() >= 2, "the bug needs two chunks");
    let (first, second) = (*offsets[0], *offsets[1]);
    *offsets[0] = second;
    *offsets[1] = first;
}

/// Every pull copies without waiting for the peer's flag.
pub fn pulls_without_flags(schedule: &mut Schedule) {
    for step in &mut schedule.steps {
        if let Op::Pull(p) = &mut step.op {
            p.ready = None;
        }
    }
}

/// Every GEMM overwrites its output (β = 0) where the ring adds to the partial sum received.
pub fn ring_overwrites(schedule: &mut Schedule) {
    for step in &mut schedule.steps {
        if let Op::Gemm(g) = &mut step.op {
            g.accumulate = false;
        }
    }
}

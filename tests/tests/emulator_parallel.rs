//! Tensor-parallel GEMM on the emulator: every rank a thread, the collectives over host memory,
//! the project's kernels on each rank's shards, and each rank's result checked against the f64
//! reference. What the GPU runs with NCCL on two streams is the same schedule; this is its
//! correctness without a GPU. Planted bugs: a gathered chunk off by 8 tokens, two chunks' sums
//! scattered to each other's places, a ring step that overwrites the partial sum it received instead of adding to it.
use gpu_gemm::half::bf16;
use gpu_gemm::parallel::local;
use gpu_gemm::parallel::planted;
use gpu_gemm::parallel::{Form, Layer, Overlap, ParallelError, Schedule};
use gpu_gemm::{Algorithm, Math};

/// Off the 128-grid in every dimension, so that the chunks cross the kernels' tile edges; every
/// split dimension divides by 2 and 3, and K/P stays a multiple of 8 (16-byte TMA rows).
const LAYER: Layer = Layer {
    tokens: 96,
    out_features: 96,
    in_features: 48,
};

fn run(form: Form, ranks: u32, overlap: Overlap, chunks: u32) -> Vec<local::LocalRank> {
    local::run::<bf16>(
        form,
        LAYER,
        ranks,
        overlap,
        chunks,
        &Algorithm::Auto(Math::Strict),
        7,
        |_| {},
    )
    .unwrap_or_else(|e| panic!("{form:?} {ranks} ranks {overlap:?}: {e}"))
}

#[test]
fn both_forms_on_two_and_three_ranks_match_the_reference_with_and_without_chunks() {
    for form in [Form::AllGather, Form::ReduceScatter] {
        for (ranks, overlap, chunks) in [
            (2, Overlap::None, 1),
            (2, Overlap::Chunked, 3),
            (3, Overlap::Chunked, 2),
            (2, Overlap::Ring, 2),
            (3, Overlap::Ring, 3),
            (2, Overlap::Copy, 2),
            (3, Overlap::Copy, 1),
            (3, Overlap::CopyFirst, 1),
        ] {
            if overlap == Overlap::CopyFirst && form == Form::ReduceScatter {
                continue;
            }
            if overlap == Overlap::Ring && form == Form::AllGather {
                continue;
            }
            let results = run(form, ranks, overlap, chunks);
            assert_eq!(results.len(), ranks as usize);
            for r in &results {
                assert!(
                    r.check.passed(),
                    "{form:?} {ranks} ranks {overlap:?}: rank {}: {:?}",
                    r.rank,
                    r.check
                );
                assert!(r.check.checked >= 100, "{:?}", r.check);
            }
        }
    }
}

#[test]
fn chunked_and_sequential_runs_give_the_same_bits() {
    // The chunks multiply the same rows by the same columns: each element's sum is the same
    // f32 sum, whatever the chunk it is in.
    for form in [Form::AllGather, Form::ReduceScatter] {
        let none = run(form, 2, Overlap::None, 1);
        let chunked = run(form, 2, Overlap::Chunked, 4);
        for (a, b) in none.iter().zip(&chunked) {
            assert_eq!(a.result.len(), b.result.len());
            let differ = a
                .result
                .iter()
                .zip(&b.result)
                .filter(|(x, y)| x.to_bits() != y.to_bits())
                .count();
            assert_eq!(
                differ, 0,
                "{form:?} rank {}: {differ} elements differ",
                a.rank
            );
        }
    }
}

/// Runs a planted bug and returns the first rank's check verdict.
fn planted(form: Form, tamper: impl Fn(&mut Schedule) + Sync) -> Vec<local::LocalRank> {
    local::run::<bf16>(
        form,
        LAYER,
        2,
        Overlap::Chunked,
        2,
        &Algorithm::Auto(Math::Strict),
        7,
        tamper,
    )
    .expect("the planted bug still runs")
}

#[test]
fn a_gathered_chunk_at_the_wrong_offset_fails_the_check() {
    let results = planted(Form::AllGather, |s| planted::gather_shifted(s, 8));
    let failed: Vec<_> = results.iter().filter(|r| !r.check.passed()).collect();
    assert!(!failed.is_empty(), "the shifted gather passed every check");
    println!("planted gather offset: {:?}", failed[0].check);
}

#[test]
fn chunk_sums_scattered_to_each_others_places_fail_the_check() {
    let results = planted(Form::ReduceScatter, planted::scattered_chunks_swapped);
    for r in &results {
        assert!(
            !r.check.passed(),
            "rank {} passed with the sums swapped",
            r.rank
        );
    }
    println!("planted swapped sums: {:?}", results[0].check);
}

#[test]
fn a_layer_that_does_not_shard_is_refused_with_a_typed_error() {
    let odd = Layer {
        tokens: 95,
        ..LAYER
    };
    let e = local::run::<bf16>(
        Form::AllGather,
        odd,
        2,
        Overlap::None,
        1,
        &Algorithm::Auto(Math::Strict),
        7,
        |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, ParallelError::Sharding(_)), "{e}");
    assert!(e.to_string().contains("tokens (T) (95)"), "{e}");
}

#[test]
fn a_ring_step_that_overwrites_the_received_sum_fails_the_check() {
    let results = local::run::<bf16>(
        Form::ReduceScatter,
        LAYER,
        3,
        Overlap::Ring,
        2,
        &Algorithm::Auto(Math::Strict),
        7,
        planted::ring_overwrites,
    )
    .expect("the planted bug still runs");
    for r in &results {
        assert!(
            !r.check.passed(),
            "rank {} passed without the ring's sums",
            r.rank
        );
    }
    println!("planted ring overwrite: {:?}", results[0].check);
}

#[test]
fn four_and_eight_ranks_run_every_overlap_on_the_emulator() {
    // The 4- and 8-GPU machines are not lent: the N-rank code paths are checked here.
    let cases = [
        (
            4,
            Layer {
                tokens: 96,
                out_features: 96,
                in_features: 64,
            },
        ),
        (
            8,
            Layer {
                tokens: 128,
                out_features: 128,
                in_features: 128,
            },
        ),
    ];
    for (ranks, layer) in cases {
        for form in [Form::AllGather, Form::ReduceScatter] {
            for (overlap, chunks) in [
                (Overlap::None, 1),
                (Overlap::Chunked, 2),
                (Overlap::Copy, 2),
                (Overlap::Ring, 2),
            ] {
                if overlap == Overlap::Ring && form == Form::AllGather {
                    continue;
                }
                let results = local::run::<bf16>(
                    form,
                    layer,
                    ranks,
                    overlap,
                    chunks,
                    &Algorithm::Auto(Math::Strict),
                    3,
                    |_| {},
                )
                .unwrap_or_else(|e| panic!("{form:?} {ranks} ranks {overlap:?}: {e}"));
                assert_eq!(results.len(), ranks as usize);
                for r in &results {
                    assert!(
                        r.check.passed(),
                        "{form:?} {ranks} ranks {overlap:?}: rank {}: {:?}",
                        r.rank,
                        r.check
                    );
                }
            }
        }
    }
}

//! The emulator runs every registered variant, and reports planted bugs.
use kernels_gpu::device::{sync_threads, thread_idx_x, Global, GlobalMut, Real, Shared};
use kernels_gpu::emu::{launch, Buffer, FaultKind, LaunchShape};
use kernels_gpu::entry::{self, KernelBody};
use kernels_gpu::gemm::{Dtype, GemmArgs};
use kernels_gpu::registry;

fn buffer<T>(name: &'static str, v: &[T]) -> Buffer {
    Buffer {
        name,
        address: v.as_ptr() as usize,
        bytes: std::mem::size_of_val(v),
    }
}

/// A small deterministic matrix with entries in [-1, 1].
fn matrix(rows: u32, cols: u32, ld: u32, seed: u32) -> Vec<f64> {
    (0..ld * cols)
        .map(|i| {
            let x = (i
                .wrapping_mul(2654435761)
                .wrapping_add(seed.wrapping_mul(40503)))
                >> 8;
            if i % ld < rows {
                (x % 2001) as f64 / 1000.0 - 1.0
            } else {
                f64::NAN
            }
        })
        .collect()
}

fn run_variant(variant: &registry::Variant, tile: u32, dtype: Dtype, shape: &registry::Shape) {
    let registry::Shape {
        m,
        n,
        k,
        lda,
        ldb,
        ldc,
    } = *shape;
    let a = matrix(m, k, lda, 1);
    let b = matrix(k, n, ldb, 2);
    let c0 = matrix(m, n, ldc, 3);
    let (alpha, beta) = (1.5, -0.75);
    let mut want = c0.clone();
    for j in 0..n {
        for i in 0..m {
            let dot: f64 = (0..k)
                .map(|p| a[(i + p * lda) as usize] * b[(p + j * ldb) as usize])
                .sum();
            want[(i + j * ldc) as usize] = alpha * dot + beta * c0[(i + j * ldc) as usize];
        }
    }
    let geometry = (variant.geometry)(m, n, k, dtype.bytes(), tile);
    let shape = LaunchShape {
        grid: geometry.grid,
        block: geometry.block,
        shared_bytes: geometry.shared_bytes,
    };
    let name = variant.entry_name(dtype, tile);
    let body = entry::find(&name).unwrap_or_else(|| panic!("no entry point {name}"));
    let got: Vec<f64> = match body {
        KernelBody::F32(f) => {
            let (a, b) = (
                a.iter().map(|&x| x as f32).collect::<Vec<_>>(),
                b.iter().map(|&x| x as f32).collect::<Vec<_>>(),
            );
            let mut c: Vec<f32> = c0.iter().map(|&x| x as f32).collect();
            let args = GemmArgs {
                m,
                n,
                k,
                alpha: alpha as f32,
                a: Global::new(a.as_ptr()),
                lda,
                b: Global::new(b.as_ptr()),
                ldb,
                beta: beta as f32,
                c: GlobalMut::new(c.as_mut_ptr()),
                ldc,
            };
            let args_addr = &args as *const GemmArgs<f32> as usize;
            launch(
                &name,
                shape,
                &[buffer("A", &a), buffer("B", &b), buffer("C", &c)],
                &move || unsafe { f(*(args_addr as *const GemmArgs<f32>)) },
            )
            .unwrap();
            c.iter().map(|&x| x as f64).collect()
        }
        KernelBody::F64(f) => {
            let mut c = c0.clone();
            let args = GemmArgs {
                m,
                n,
                k,
                alpha,
                a: Global::new(a.as_ptr()),
                lda,
                b: Global::new(b.as_ptr()),
                ldb,
                beta,
                c: GlobalMut::new(c.as_mut_ptr()),
                ldc,
            };
            let args_addr = &args as *const GemmArgs<f64> as usize;
            launch(
                &name,
                shape,
                &[buffer("A", &a), buffer("B", &b), buffer("C", &c)],
                &move || unsafe { f(*(args_addr as *const GemmArgs<f64>)) },
            )
            .unwrap();
            c
        }
    };
    let tolerance = if dtype == Dtype::F32 { 1e-4 } else { 1e-12 } * k as f64;
    for j in 0..n {
        for i in 0..m {
            let at = (i + j * ldc) as usize;
            assert!(
                (got[at] - want[at]).abs() <= tolerance,
                "{name} {m}x{n}x{k}: C({i},{j}) = {} want {}",
                got[at],
                want[at]
            );
        }
    }
}

/// Shapes every variant runs at, each with leading dimensions larger than the rows. The first
/// fits no tile; the others satisfy the 16-byte-load rule (m, k, lda, ldb multiples of 4) and
/// give the 64- and 128-wide tiles interior and edge blocks.
const SHAPES: &[registry::Shape] = &[
    shape(33, 17, 45, 36, 46, 35),
    shape(64, 64, 64, 68, 68, 66),
    shape(132, 70, 44, 136, 48, 133),
    shape(128, 256, 40, 128, 40, 129),
];

const fn shape(m: u32, n: u32, k: u32, lda: u32, ldb: u32, ldc: u32) -> registry::Shape {
    registry::Shape {
        m,
        n,
        k,
        lda,
        ldb,
        ldc,
    }
}

#[test]
fn smoke_every_variant() {
    for v in registry::ALL {
        let tiles: &[u32] = if v.tiles.is_empty() { &[0] } else { v.tiles };
        let mut ran = false;
        for s in SHAPES {
            for dtype in [Dtype::F32, Dtype::F64] {
                // A variant that rejects a shape through `supports` is not run at it.
                if (v.supports)(s, dtype).is_err() {
                    continue;
                }
                for &tile in tiles {
                    run_variant(v, tile, dtype, s);
                    ran = true;
                }
            }
        }
        assert!(ran, "{} supports none of the test shapes", v.name);
    }
}

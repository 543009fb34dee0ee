//! The tensor cores on the emulator: `mma.sync` computes `D = A·B + C` from every lane's
//! registers exactly as the PTX ISA's fragment tables place the elements, so a kernel that
//! puts an element into the wrong register computes a wrong product, as it would on the GPU.
use kernels_gpu::device::mma::{
    mma_m16n8k16_f64, mma_m16n8k4_f64, mma_m16n8k8_tf32, Accum, FragA, FragB, Tf32,
};
use kernels_gpu::device::{shfl_idx, thread_idx_x, Global, GlobalMut};
use kernels_gpu::emu::{launch, Buffer, Fault, FaultKind, LaunchShape};

fn buffer<T>(name: &'static str, v: &[T]) -> Buffer {
    Buffer {
        name,
        address: v.as_ptr() as usize,
        bytes: std::mem::size_of_val(v),
    }
}

/// Runs `kernel` on one block of `threads` threads over row-major A (m×k), B (k×n) and an output
/// D (m×n) starting as C = 1; returns D.
fn run_warp<T: kernels_gpu::device::Real + From<i8>>(
    name: &str,
    threads: u32,
    (m, n, k): (usize, usize, usize),
    kernel: impl Fn(Global<T>, Global<T>, GlobalMut<T>) + Sync,
) -> (Result<(), Fault>, Vec<T>, Vec<T>, Vec<T>) {
    // Small integers: exact in TF32 and f64, so the product is exact and comparable bit for bit.
    let a: Vec<T> = (0..m * k).map(|i| T::from((i % 7) as i8 - 3)).collect();
    let b: Vec<T> = (0..k * n).map(|i| T::from((i % 5) as i8 - 2)).collect();
    let mut d = vec![T::from(1); m * n];
    let (pa, pb, pd) = (
        a.as_ptr() as usize,
        b.as_ptr() as usize,
        d.as_mut_ptr() as usize,
    );
    let shape = LaunchShape {
        grid: (1, 1),
        block: (threads, 1),
        shared_bytes: 0,
        cluster: (1, 1),
    };
    let buffers = [buffer("A", &a), buffer("B", &b), buffer("D", &d)];
    let result = launch(name, shape, &buffers, &|| {
        kernel(
            Global::new(pa as *const T),
            Global::new(pb as *const T),
            GlobalMut::new(pd as *mut T),
        )
    });
    (result, a, b, d)
}

/// `1 + A·B` by the definition (the kernels start from C = 1).
fn expected<T: kernels_gpu::device::Real + From<i8>>(
    a: &[T],
    b: &[T],
    (m, n, k): (usize, usize, usize),
) -> Vec<T> {
    let mut d = vec![T::from(1); m * n];
    for r in 0..m {
        for c in 0..n {
            for q in 0..k {
                d[r * n + c] = a[r * k + q].fma(b[q * n + c], d[r * n + c]);
            }
        }
    }
    d
}

/// One `m16n8k8` TF32 product, each register loaded where the PTX ISA's table puts it
/// (g = lane / 4, t = lane % 4), or, with `swap_a1_a2`, two A registers exchanged: the bug of
/// reading the table's "a1 = A[g+8][t], a2 = A[g][t+4]" the wrong way round.
fn tf32_tile(a: Global<f32>, b: Global<f32>, d: GlobalMut<f32>, swap_a1_a2: bool) {
    let lane = thread_idx_x();
    let (g, t) = ((lane / 4) as usize, (lane % 4) as usize);
    let at = |row: usize, col: usize| Tf32::round(unsafe { a.load(row * 8 + col) });
    let bt = |row: usize, col: usize| Tf32::round(unsafe { b.load(row * 8 + col) });
    let (mut a1, mut a2) = (at(g + 8, t), at(g, t + 4));
    if swap_a1_a2 {
        (a1, a2) = (a2, a1);
    }
    let frag_a = FragA([at(g, t), a1, a2, at(g + 8, t + 4)]);
    let frag_b = FragB([bt(t, g), bt(t + 4, g)]);
    let c = Accum([1.0; 4]);
    let out = mma_m16n8k8_tf32(&frag_a, &frag_b, c);
    for (i, (row, col)) in [
        (g, 2 * t),
        (g, 2 * t + 1),
        (g + 8, 2 * t),
        (g + 8, 2 * t + 1),
    ]
    .into_iter()
    .enumerate()
    {
        unsafe { d.store(row * 8 + col, out.0[i]) };
    }
}

#[test]
fn tf32_mma_follows_the_fragment_table() {
    let (result, a, b, d) = run_warp("tf32_tile", 32, (16, 8, 8), |a, b, d| {
        tf32_tile(a, b, d, false)
    });
    result.unwrap();
    assert_eq!(d, expected(&a, &b, (16, 8, 8)));
}

#[test]
fn a_fragment_register_in_the_wrong_place_gives_a_wrong_product() {
    let (result, a, b, d) = run_warp("tf32_tile_swapped", 32, (16, 8, 8), |a, b, d| {
        tf32_tile(a, b, d, true)
    });
    result.unwrap(); // nothing illegal happened: the product is simply wrong, as on the GPU
    let want = expected(&a, &b, (16, 8, 8));
    let wrong = d.iter().zip(&want).filter(|(x, y)| x != y).count();
    // a1 and a2 swapped moves A[g+8][t] to column t+4 of row g and back: every element of D
    // mixes the wrong products in.
    assert!(wrong > 100, "only {wrong} of 128 elements differ");
    println!(
        "planted fragment bug: {wrong} of 128 elements of D wrong, e.g. D[0][0] = {} instead of {}",
        d[0], want[0]
    );
}

/// `m16n8k4` and `m16n8k16` in f64 on the same principle: lane (g, t) holds `A[g][t+4j]`,
/// `A[g+8][t+4j]` in registers `2j`, `2j+1` and `B[t+4j][g]` in register `j`.
fn f64_tile<const K: usize>(a: Global<f64>, b: Global<f64>, d: GlobalMut<f64>) {
    let lane = thread_idx_x();
    let (g, t) = ((lane / 4) as usize, (lane % 4) as usize);
    let at = |row: usize, col: usize| unsafe { a.load(row * K + col) };
    let bt = |row: usize, col: usize| unsafe { b.load(row * 8 + col) };
    let c = Accum([1.0; 4]);
    let out = if K == 4 {
        let frag_a = FragA([at(g, t), at(g + 8, t)]);
        mma_m16n8k4_f64(&frag_a, &FragB([bt(t, g)]), c)
    } else {
        let frag_a = FragA(core::array::from_fn(|i| {
            at(g + 8 * (i % 2), t + 4 * (i / 2))
        }));
        let frag_b = FragB(core::array::from_fn(|j| bt(t + 4 * j, g)));
        mma_m16n8k16_f64(&frag_a, &frag_b, c)
    };
    for (i, (row, col)) in [
        (g, 2 * t),
        (g, 2 * t + 1),
        (g + 8, 2 * t),
        (g + 8, 2 * t + 1),
    ]
    .into_iter()
    .enumerate()
    {
        unsafe { d.store(row * 8 + col, out.0[i]) };
    }
}

#[test]
fn f64_mma_follows_the_fragment_tables() {
    let (result, a, b, d) = run_warp("f64_m16n8k4", 32, (16, 8, 4), f64_tile::<4>);
    result.unwrap();
    assert_eq!(d, expected(&a, &b, (16, 8, 4)));
    let (result, a, b, d) = run_warp("f64_m16n8k16", 32, (16, 8, 16), f64_tile::<16>);
    result.unwrap();
    assert_eq!(d, expected(&a, &b, (16, 8, 16)));
}

#[test]
fn an_mma_without_all_32_lanes_is_reported() {
    let (result, ..) = run_warp("half_warp_mma", 16, (16, 8, 8), |a, b, d| {
        tf32_tile(a, b, d, false)
    });
    let fault = result.unwrap_err();
    assert_eq!(fault.kind, FaultKind::Deadlock, "{fault}");
    assert!(fault.detail.contains("needs all 32 lanes"), "{fault}");
    println!("{fault}");
}

#[test]
fn lanes_at_different_warp_wide_operations_are_reported() {
    let (result, ..) = run_warp("diverged_mma", 32, (16, 8, 8), |a, b, d| {
        if thread_idx_x() == 5 {
            // One lane takes another path and shuffles while its warp multiplies.
            let x = shfl_idx(1.0f32, 0);
            unsafe { d.store(0, x) };
        } else {
            tf32_tile(a, b, d, false)
        }
    });
    let fault = result.unwrap_err();
    assert_eq!(fault.kind, FaultKind::Deadlock, "{fault}");
    assert!(
        fault.detail.contains("different warp-wide operations"),
        "{fault}"
    );
    println!("{fault}");
}

//! The device layer on the GPU: inline PTX, and nothing else in the project has any.
//!
//! Every `asm!` here is one instruction. Options matter for the code around them:
//! `pure` + `readonly` on loads lets LLVM hoist and combine them like ordinary loads, the
//! barrier and the stores keep the default (they may write memory), so no shared access moves
//! across a barrier.
use core::arch::asm;
use core::arch::nvptx;
use core::simd::{f32x2, f32x4, f64x2};

#[cfg(target_feature = "sm_90a")]
pub mod hopper;

// The block's dynamic shared-memory pool, declared once for the whole module. Its size is the
// `sharedMemBytes` of each launch.
core::arch::global_asm!(".extern .shared .align 16 .b8 gemm_shared_pool[];");

macro_rules! index_fns {
    ($($name:ident => $intrinsic:ident),* $(,)?) => {$(
        #[inline(always)]
        pub fn $name() -> u32 {
            unsafe { nvptx::$intrinsic() as u32 }
        }
    )*};
}

index_fns! {
    thread_idx_x => _thread_idx_x,
    thread_idx_y => _thread_idx_y,
    block_idx_x => _block_idx_x,
    block_idx_y => _block_idx_y,
    block_idx_z => _block_idx_z,
    block_dim_x => _block_dim_x,
    block_dim_y => _block_dim_y,
    grid_dim_x => _grid_dim_x,
    grid_dim_y => _grid_dim_y,
}

/// `bar.sync 0` (`__syncthreads()`).
#[inline(always)]
pub fn sync_threads() {
    unsafe { nvptx::_syncthreads() }
}

/// `bar.warp.sync 0xffffffff` (`__syncwarp()`): waits for the warp's 32 lanes and orders each
/// lane's earlier memory accesses before every lane's later ones, the one warp-wide operation
/// that does (a shuffle or a `wgmma` wait waits for the lanes, and orders nothing). All 32
/// lanes must call it together.
#[inline(always)]
pub fn sync_warp() {
    unsafe { asm!("bar.warp.sync -1;", options(nostack)) }
}

/// `vote.sync.all.pred` (`__all_sync(0xffffffff, p)`): whether `p` holds in all 32 lanes. All
/// 32 lanes must call it together.
#[inline(always)]
pub fn vote_all(p: bool) -> bool {
    let all: u32;
    unsafe {
        asm!(
            "{{ .reg .pred p, q; setp.ne.u32 p, {p}, 0; vote.sync.all.pred q, p, -1; selp.u32 {all}, 1, 0, q; }}",
            p = in(reg32) p as u32, all = out(reg32) all, options(nomem, nostack)
        )
    };
    all != 0
}

/// The 32-bit shared-window address of the pool.
#[inline(always)]
pub fn shared_pool_base() -> u32 {
    let base: u32;
    unsafe {
        asm!("mov.u32 {b}, gemm_shared_pool;", b = out(reg32) base, options(pure, nomem, nostack))
    };
    base
}

/// Bounds are checked by the emulator; on the GPU this costs nothing.
#[inline(always)]
pub fn check_shared_view(_byte_offset: u32, _len: u32, _index: u32, _width: u32) {}

/// The per-type half of the device layer. Implemented for `f32` and `f64` only.
pub trait Element: Sized {
    fn fused_mul_add(a: Self, b: Self, c: Self) -> Self;
    unsafe fn ld_global(p: *const Self) -> Self;
    unsafe fn ld_global_nc(p: *const Self) -> Self;
    unsafe fn ld_global_x4(p: *const Self) -> [Self; 4];
    unsafe fn st_global(p: *mut Self, v: Self);
    unsafe fn st_global_x4(p: *mut Self, v: [Self; 4]);
    unsafe fn ld_global_x2(p: *const Self) -> [Self; 2];
    unsafe fn st_global_x2(p: *mut Self, v: [Self; 2]);
    unsafe fn ld_shared(addr: u32) -> Self;
    unsafe fn st_shared(addr: u32, v: Self);
    unsafe fn ld_shared_x4(addr: u32) -> [Self; 4];
    unsafe fn ld_shared_x2(addr: u32) -> [Self; 2];
    unsafe fn st_shared_x4(addr: u32, v: [Self; 4]);
    fn shfl_idx(v: Self, src_lane: u32) -> Self;
    unsafe fn cp_async_x4(dst: u32, src: *const Self, valid: bool);
    unsafe fn cp_async_x2(dst: u32, src: *const Self, valid: bool);
    unsafe fn cp_async_x1(dst: u32, src: *const Self, valid: bool);
}

/// `cp.async.commit_group`: closes the group of asynchronous copies this thread issued since
/// the last commit.
#[inline(always)]
pub fn cp_async_commit() {
    unsafe { asm!("cp.async.commit_group;", options(nostack)) }
}

/// `cp.async.wait_group pending`: waits until at most `pending` of this thread's committed
/// groups are still in flight. Not a barrier: other threads' copies need `sync_threads` too.
/// `pending` must be a compile-time constant (0 to 7) after inlining: it is an immediate.
#[inline(always)]
pub fn cp_async_wait(pending: u32) {
    macro_rules! wait {
        ($($n:literal)*) => {
            match pending {
                $($n => unsafe { asm!(concat!("cp.async.wait_group ", $n, ";"), options(nostack)) },)*
                _ => unsafe { asm!("cp.async.wait_all;", options(nostack)) },
            }
        };
    }
    wait!(0 1 2 3 4 5 6 7)
}

impl Element for f32 {
    #[inline(always)]
    fn fused_mul_add(a: f32, b: f32, c: f32) -> f32 {
        core::intrinsics::fmaf32(a, b, c)
    }
    #[inline(always)]
    unsafe fn ld_global(p: *const f32) -> f32 {
        unsafe { p.read() }
    }
    #[inline(always)]
    unsafe fn ld_global_nc(p: *const f32) -> f32 {
        let v: f32;
        unsafe {
            asm!("ld.global.nc.f32 {v}, [{p}];", v = out(reg32) v, p = in(reg64) p,
                 options(pure, readonly, nostack))
        };
        v
    }
    #[inline(always)]
    unsafe fn ld_global_x4(p: *const f32) -> [f32; 4] {
        unsafe { (p as *const f32x4).read().to_array() }
    }
    #[inline(always)]
    unsafe fn st_global(p: *mut f32, v: f32) {
        unsafe { p.write(v) }
    }
    #[inline(always)]
    unsafe fn st_global_x4(p: *mut f32, v: [f32; 4]) {
        unsafe { (p as *mut f32x4).write(f32x4::from_array(v)) }
    }
    #[inline(always)]
    unsafe fn ld_global_x2(p: *const f32) -> [f32; 2] {
        unsafe { (p as *const f32x2).read().to_array() }
    }
    #[inline(always)]
    unsafe fn st_global_x2(p: *mut f32, v: [f32; 2]) {
        unsafe { (p as *mut f32x2).write(f32x2::from_array(v)) }
    }
    #[inline(always)]
    unsafe fn ld_shared(addr: u32) -> f32 {
        let v: f32;
        unsafe {
            asm!("ld.shared.f32 {v}, [{a}];", v = out(reg32) v, a = in(reg32) addr,
                 options(pure, readonly, nostack))
        };
        v
    }
    #[inline(always)]
    unsafe fn st_shared(addr: u32, v: f32) {
        unsafe {
            asm!("st.shared.f32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) v,
                 options(nostack))
        }
    }
    #[inline(always)]
    unsafe fn ld_shared_x4(addr: u32) -> [f32; 4] {
        let (x, y, z, w): (f32, f32, f32, f32);
        unsafe {
            asm!("ld.shared.v4.f32 {{{x}, {y}, {z}, {w}}}, [{a}];",
                 x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
                 a = in(reg32) addr, options(pure, readonly, nostack))
        };
        [x, y, z, w]
    }
    #[inline(always)]
    unsafe fn ld_shared_x2(addr: u32) -> [f32; 2] {
        let (x, y): (f32, f32);
        unsafe {
            asm!("ld.shared.v2.f32 {{{x}, {y}}}, [{a}];", x = out(reg32) x, y = out(reg32) y,
                 a = in(reg32) addr, options(pure, readonly, nostack))
        };
        [x, y]
    }
    #[inline(always)]
    unsafe fn st_shared_x4(addr: u32, v: [f32; 4]) {
        unsafe {
            asm!("st.shared.v4.f32 [{a}], {{{x}, {y}, {z}, {w}}};", a = in(reg32) addr,
                 x = in(reg32) v[0], y = in(reg32) v[1], z = in(reg32) v[2], w = in(reg32) v[3],
                 options(nostack))
        }
    }
    #[inline(always)]
    fn shfl_idx(v: f32, src_lane: u32) -> f32 {
        let out: f32;
        unsafe {
            asm!("shfl.sync.idx.b32 {o}, {v}, {l}, 31, -1;", o = out(reg32) out,
                 v = in(reg32) v, l = in(reg32) src_lane, options(nomem, nostack))
        };
        out
    }
    #[inline(always)]
    unsafe fn cp_async_x4(dst: u32, src: *const f32, valid: bool) {
        // `.cg`: 16-byte copies may bypass L1; the tile is read once per block from L2.
        // A source size of 0 writes 16 zero bytes: the zero-filled edge tiles.
        let src_bytes: u32 = if valid { 16 } else { 0 };
        unsafe {
            asm!("cp.async.cg.shared.global [{d}], [{s}], 16, {n};", d = in(reg32) dst,
                 s = in(reg64) src, n = in(reg32) src_bytes, options(nostack))
        }
    }
    #[inline(always)]
    unsafe fn cp_async_x2(dst: u32, src: *const f32, valid: bool) {
        let src_bytes: u32 = if valid { 8 } else { 0 };
        unsafe {
            asm!("cp.async.ca.shared.global [{d}], [{s}], 8, {n};", d = in(reg32) dst,
                 s = in(reg64) src, n = in(reg32) src_bytes, options(nostack))
        }
    }
    #[inline(always)]
    unsafe fn cp_async_x1(dst: u32, src: *const f32, valid: bool) {
        let src_bytes: u32 = if valid { 4 } else { 0 };
        unsafe {
            asm!("cp.async.ca.shared.global [{d}], [{s}], 4, {n};", d = in(reg32) dst,
                 s = in(reg64) src, n = in(reg32) src_bytes, options(nostack))
        }
    }
}

impl Element for f64 {
    #[inline(always)]
    fn fused_mul_add(a: f64, b: f64, c: f64) -> f64 {
        core::intrinsics::fmaf64(a, b, c)
    }
    #[inline(always)]
    unsafe fn ld_global(p: *const f64) -> f64 {
        unsafe { p.read() }
    }
    #[inline(always)]
    unsafe fn ld_global_nc(p: *const f64) -> f64 {
        let v: f64;
        unsafe {
            asm!("ld.global.nc.f64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p,
                 options(pure, readonly, nostack))
        };
        v
    }
    /// 32 bytes as two 16-byte loads: PTX vectors are at most 128 bits before sm_100.
    #[inline(always)]
    unsafe fn ld_global_x4(p: *const f64) -> [f64; 4] {
        let lo = unsafe { (p as *const f64x2).read() }.to_array();
        let hi = unsafe { (p.add(2) as *const f64x2).read() }.to_array();
        [lo[0], lo[1], hi[0], hi[1]]
    }
    #[inline(always)]
    unsafe fn st_global(p: *mut f64, v: f64) {
        unsafe { p.write(v) }
    }
    #[inline(always)]
    unsafe fn ld_global_x2(p: *const f64) -> [f64; 2] {
        unsafe { (p as *const f64x2).read().to_array() }
    }
    #[inline(always)]
    unsafe fn st_global_x2(p: *mut f64, v: [f64; 2]) {
        unsafe { (p as *mut f64x2).write(f64x2::from_array(v)) }
    }
    #[inline(always)]
    unsafe fn st_global_x4(p: *mut f64, v: [f64; 4]) {
        unsafe {
            (p as *mut f64x2).write(f64x2::from_array([v[0], v[1]]));
            (p.add(2) as *mut f64x2).write(f64x2::from_array([v[2], v[3]]));
        }
    }
    #[inline(always)]
    unsafe fn ld_shared(addr: u32) -> f64 {
        let v: f64;
        unsafe {
            asm!("ld.shared.f64 {v}, [{a}];", v = out(reg64) v, a = in(reg32) addr,
                 options(pure, readonly, nostack))
        };
        v
    }
    #[inline(always)]
    unsafe fn st_shared(addr: u32, v: f64) {
        unsafe {
            asm!("st.shared.f64 [{a}], {v};", a = in(reg32) addr, v = in(reg64) v,
                 options(nostack))
        }
    }
    #[inline(always)]
    unsafe fn ld_shared_x4(addr: u32) -> [f64; 4] {
        let (x, y, z, w): (f64, f64, f64, f64);
        unsafe {
            asm!("ld.shared.v2.f64 {{{x}, {y}}}, [{a}];",
                 "ld.shared.v2.f64 {{{z}, {w}}}, [{a}+16];",
                 x = out(reg64) x, y = out(reg64) y, z = out(reg64) z, w = out(reg64) w,
                 a = in(reg32) addr, options(pure, readonly, nostack))
        };
        [x, y, z, w]
    }
    #[inline(always)]
    unsafe fn ld_shared_x2(addr: u32) -> [f64; 2] {
        let (x, y): (f64, f64);
        unsafe {
            asm!("ld.shared.v2.f64 {{{x}, {y}}}, [{a}];", x = out(reg64) x, y = out(reg64) y,
                 a = in(reg32) addr, options(pure, readonly, nostack))
        };
        [x, y]
    }
    #[inline(always)]
    unsafe fn st_shared_x4(addr: u32, v: [f64; 4]) {
        unsafe {
            asm!("st.shared.v2.f64 [{a}], {{{x}, {y}}};",
                 "st.shared.v2.f64 [{a}+16], {{{z}, {w}}};", a = in(reg32) addr,
                 x = in(reg64) v[0], y = in(reg64) v[1], z = in(reg64) v[2], w = in(reg64) v[3],
                 options(nostack))
        }
    }
    /// A 64-bit shuffle is two 32-bit shuffles of the halves.
    #[inline(always)]
    fn shfl_idx(v: f64, src_lane: u32) -> f64 {
        let bits = v.to_bits();
        let lo = f32::shfl_idx(f32::from_bits(bits as u32), src_lane).to_bits();
        let hi = f32::shfl_idx(f32::from_bits((bits >> 32) as u32), src_lane).to_bits();
        f64::from_bits(((hi as u64) << 32) | lo as u64)
    }
    #[inline(always)]
    unsafe fn cp_async_x4(dst: u32, src: *const f64, valid: bool) {
        let src_bytes: u32 = if valid { 16 } else { 0 };
        unsafe {
            asm!("cp.async.cg.shared.global [{d}], [{s}], 16, {n};",
                 "cp.async.cg.shared.global [{d}+16], [{s}+16], 16, {n};", d = in(reg32) dst,
                 s = in(reg64) src, n = in(reg32) src_bytes, options(nostack))
        }
    }
    #[inline(always)]
    unsafe fn cp_async_x2(dst: u32, src: *const f64, valid: bool) {
        let src_bytes: u32 = if valid { 16 } else { 0 };
        unsafe {
            asm!("cp.async.cg.shared.global [{d}], [{s}], 16, {n};", d = in(reg32) dst,
                 s = in(reg64) src, n = in(reg32) src_bytes, options(nostack))
        }
    }
    #[inline(always)]
    unsafe fn cp_async_x1(dst: u32, src: *const f64, valid: bool) {
        let src_bytes: u32 = if valid { 8 } else { 0 };
        unsafe {
            asm!("cp.async.ca.shared.global [{d}], [{s}], 8, {n};", d = in(reg32) dst,
                 s = in(reg64) src, n = in(reg32) src_bytes, options(nostack))
        }
    }
}

/// `cvt.rna.tf32.f32`: the TF32 bits of `x` (see [`super::mma::Tf32::round`]).
#[inline(always)]
pub fn cvt_rna_tf32(x: f32) -> u32 {
    let bits: u32;
    unsafe {
        asm!("cvt.rna.tf32.f32 {d}, {x};", d = out(reg32) bits, x = in(reg32) x,
             options(pure, nomem, nostack))
    };
    bits
}

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (see [`super::mma`] for the layout).
/// Not `pure`: every lane of the warp must execute it together, so it must not be moved or
/// removed as if it were lane-local arithmetic.
#[inline(always)]
pub fn mma_m16n8k8_tf32(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    let [mut d0, mut d1, mut d2, mut d3] = c;
    unsafe {
        asm!(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{d0}, {d1}, {d2}, {d3}}};",
            d0 = inout(reg32) d0, d1 = inout(reg32) d1, d2 = inout(reg32) d2, d3 = inout(reg32) d3,
            a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
            b0 = in(reg32) b[0], b1 = in(reg32) b[1],
            options(nomem, nostack)
        )
    };
    [d0, d1, d2, d3]
}

/// `mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64`: `D (8×8) = A (8×4)·B (4×8) + C`; lane
/// (g, t) holds A[g][t], B[t][g] and C[g][2t..2t+2].
#[cfg(not(target_feature = "sm_90"))]
#[inline(always)]
fn mma_m8n8k4_f64(a: f64, b: f64, c: [f64; 2]) -> [f64; 2] {
    let [mut d0, mut d1] = c;
    unsafe {
        asm!(
            "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{{d0}, {d1}}}, {{{a}}}, {{{b}}}, {{{d0}, {d1}}};",
            d0 = inout(reg64) d0, d1 = inout(reg64) d1, a = in(reg64) a, b = in(reg64) b,
            options(nomem, nostack)
        )
    };
    [d0, d1]
}

/// `mma.sync.aligned.m16n8k4.row.col.f64…`: native on sm_90, two `m8n8k4` before it (rows 0–7
/// take a0 and c0..c1, rows 8–15 take a1 and c2..c3; both share b0).
#[inline(always)]
pub fn mma_m16n8k4_f64(a: [f64; 2], b: f64, c: [f64; 4]) -> [f64; 4] {
    #[cfg(target_feature = "sm_90")]
    {
        let [mut d0, mut d1, mut d2, mut d3] = c;
        unsafe {
            asm!(
                "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}}}, {{{b}}}, {{{d0}, {d1}, {d2}, {d3}}};",
                d0 = inout(reg64) d0, d1 = inout(reg64) d1, d2 = inout(reg64) d2, d3 = inout(reg64) d3,
                a0 = in(reg64) a[0], a1 = in(reg64) a[1], b = in(reg64) b,
                options(nomem, nostack)
            )
        };
        [d0, d1, d2, d3]
    }
    #[cfg(not(target_feature = "sm_90"))]
    {
        let [d0, d1] = mma_m8n8k4_f64(a[0], b, [c[0], c[1]]);
        let [d2, d3] = mma_m8n8k4_f64(a[1], b, [c[2], c[3]]);
        [d0, d1, d2, d3]
    }
}

/// `mma.sync.aligned.m16n8k16.row.col.f64…`: native on sm_90, four `m16n8k4` in k order before.
#[inline(always)]
pub fn mma_m16n8k16_f64(a: [f64; 8], b: [f64; 4], c: [f64; 4]) -> [f64; 4] {
    #[cfg(target_feature = "sm_90")]
    {
        let [mut d0, mut d1, mut d2, mut d3] = c;
        unsafe {
            asm!(
                "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}, {a4}, {a5}, {a6}, {a7}}}, {{{b0}, {b1}, {b2}, {b3}}}, {{{d0}, {d1}, {d2}, {d3}}};",
                d0 = inout(reg64) d0, d1 = inout(reg64) d1, d2 = inout(reg64) d2, d3 = inout(reg64) d3,
                a0 = in(reg64) a[0], a1 = in(reg64) a[1], a2 = in(reg64) a[2], a3 = in(reg64) a[3],
                a4 = in(reg64) a[4], a5 = in(reg64) a[5], a6 = in(reg64) a[6], a7 = in(reg64) a[7],
                b0 = in(reg64) b[0], b1 = in(reg64) b[1], b2 = in(reg64) b[2], b3 = in(reg64) b[3],
                options(nomem, nostack)
            )
        };
        [d0, d1, d2, d3]
    }
    #[cfg(not(target_feature = "sm_90"))]
    {
        let mut d = c;
        for j in 0..4 {
            d = mma_m16n8k4_f64([a[2 * j], a[2 * j + 1]], b[j], d);
        }
        d
    }
}

// -- 16-bit elements (`device::half`) --

/// `cvt.rn.bf16x2.f32 d, hi, lo`: the first source goes to the upper half.
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let d: u32;
    unsafe {
        asm!("cvt.rn.bf16x2.f32 {d}, {hi}, {lo};", d = out(reg32) d, hi = in(reg32) hi,
             lo = in(reg32) lo, options(pure, nomem, nostack))
    };
    d
}

/// `cvt.rn.f16x2.f32 d, hi, lo`.
#[inline(always)]
pub fn pack_f16x2(lo: f32, hi: f32) -> u32 {
    let d: u32;
    unsafe {
        asm!("cvt.rn.f16x2.f32 {d}, {hi}, {lo};", d = out(reg32) d, hi = in(reg32) hi,
             lo = in(reg32) lo, options(pure, nomem, nostack))
    };
    d
}

/// The two f16 of a pair as f32: Rust's `f16`, which LLVM widens with `cvt.f32.f16` (exact).
/// Not inline PTX: the loop unroller prices an `asm!` block high, and an epilogue over 128
/// accumulators must unroll whole to keep them in registers.
#[inline(always)]
pub fn unpack_f16x2(pair: u32) -> [f32; 2] {
    [
        f16::from_bits(pair as u16) as f32,
        f16::from_bits((pair >> 16) as u16) as f32,
    ]
}

/// A 2-byte global load (the pointer is a kernel parameter's, so LLVM emits `ld.global`).
///
/// # Safety
/// `p` inside an allocation, 2-byte aligned.
#[inline(always)]
pub unsafe fn ld_global_b16(p: *const u16) -> u16 {
    unsafe { p.read() }
}

/// # Safety
/// As [`ld_global_b16`].
#[inline(always)]
pub unsafe fn st_global_b16(p: *mut u16, v: u16) {
    unsafe { p.write(v) }
}

/// # Safety
/// `p` inside an allocation, 4-byte aligned.
#[inline(always)]
pub unsafe fn ld_global_b32(p: *const u32) -> u32 {
    unsafe { p.read() }
}

/// # Safety
/// As [`ld_global_b32`].
#[inline(always)]
pub unsafe fn st_global_b32(p: *mut u32, v: u32) {
    unsafe { p.write(v) }
}

/// Sixteen bytes that the compiler may move as one vector (`st.global.v4.b32`).
#[repr(C, align(16))]
struct Aligned16([u32; 4]);

/// A 16-byte global store of four words: one `st.global.v4.u32` (the pointer is a kernel
/// parameter's and the type 16-byte aligned, so LLVM emits the vector store, no inline PTX).
///
/// # Safety
/// `p` inside an allocation, 16-byte aligned.
#[inline(always)]
pub unsafe fn st_global_v4_b32(p: *mut u32, v: [u32; 4]) {
    unsafe { p.cast::<Aligned16>().write(Aligned16(v)) }
}

/// `bar.sync id, threads`.
#[inline(always)]
pub fn named_barrier(id: u32, threads: u32) {
    unsafe { asm!("bar.sync {i}, {t};", i = in(reg32) id, t = in(reg32) threads, options(nostack)) }
}

/// `atom.acq_rel.gpu.global.add.u32 old, [p], v`: the arrival of a grid-wide counter. Release:
/// this thread's earlier writes (and, after a barrier, its block's) are visible to whoever
/// acquires the counter's new value; acquire: the writes released by earlier arrivals are
/// visible to this thread (and, after a barrier, to its block).
///
/// # Safety
/// `p` inside an allocation, 4-byte aligned.
#[inline(always)]
pub unsafe fn atom_add_acq_rel_gpu(p: *mut u32, v: u32) -> u32 {
    let old: u32;
    unsafe {
        asm!(
            "atom.acq_rel.gpu.global.add.u32 {old}, [{p}], {v};",
            old = out(reg32) old, p = in(reg64) p, v = in(reg32) v,
            options(nostack)
        )
    };
    old
}

/// `atom.relaxed.gpu.global.add.u32 old, [p], v`: a ticket from a counter, ordering no other
/// memory access (nothing is published through it).
///
/// # Safety
/// As [`atom_add_acq_rel_gpu`].
#[inline(always)]
pub unsafe fn atom_add_relaxed_gpu(p: *mut u32, v: u32) -> u32 {
    let old: u32;
    unsafe {
        asm!(
            "atom.relaxed.gpu.global.add.u32 {old}, [{p}], {v};",
            old = out(reg32) old, p = in(reg64) p, v = in(reg32) v,
            options(nostack)
        )
    };
    old
}

/// `red.relaxed.gpu.global.max.u32 [p], v`: `*p = max(*p, v)`, atomically, with no ordering
/// and no result (a reduction: the maxima of many blocks gathered in one word).
///
/// # Safety
/// `p` inside an allocation, 4-byte aligned.
#[inline(always)]
pub unsafe fn red_max_relaxed_gpu(p: *mut u32, v: u32) {
    unsafe {
        asm!(
            "red.relaxed.gpu.global.max.u32 [{p}], {v};",
            p = in(reg64) p, v = in(reg32) v,
            options(nostack)
        )
    };
}

/// `tanh.approx.f32`: one `MUFU.TANH` (sm_75 and later).
#[inline(always)]
pub fn tanh_approx_f32(x: f32) -> f32 {
    let y: f32;
    unsafe {
        asm!("tanh.approx.f32 {y}, {x};", y = out(reg32) y, x = in(reg32) x,
             options(pure, nomem, nostack))
    };
    y
}

/// `st.relaxed.gpu.global.u32 [p], v`: a counter put back for the next launch.
///
/// # Safety
/// As [`atom_add_acq_rel_gpu`].
#[inline(always)]
pub unsafe fn st_relaxed_gpu(p: *mut u32, v: u32) {
    unsafe {
        asm!(
            "st.relaxed.gpu.global.u32 [{p}], {v};",
            p = in(reg64) p, v = in(reg32) v,
            options(nostack)
        )
    }
}

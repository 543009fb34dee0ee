//! Hopper's asynchronous instructions as inline PTX (sm_90, `wgmma` and `setmaxnreg` sm_90a):
//! mbarriers, TMA tile copies, proxy fences, warpgroup MMA. One instruction per function, as in
//! the rest of the backend; the semantics are documented where the kernels see them
//! ([`crate::device::mbarrier`], [`crate::device::tma`], [`crate::device::wgmma`]).
//!
//! None of these is `pure`: each one orders memory or is executed by a whole warp together.
use core::arch::asm;

/// `mbarrier.init.shared::cta.b64 [addr], count`.
#[inline(always)]
pub fn mbarrier_init(addr: u32, count: u32) {
    unsafe {
        asm!("mbarrier.init.shared::cta.b64 [{a}], {c};", a = in(reg32) addr, c = in(reg32) count, options(nostack))
    }
}

/// `fence.mbarrier_init.release.cluster`: makes the initialisations visible before a barrier.
#[inline(always)]
pub fn fence_mbarrier_init() {
    unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack)) }
}

/// `mbarrier.arrive.shared::cta.b64 _, [addr]` (release, CTA scope).
#[inline(always)]
pub fn mbarrier_arrive(addr: u32) {
    unsafe {
        asm!("mbarrier.arrive.shared::cta.b64 _, [{a}];", a = in(reg32) addr, options(nostack))
    }
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], bytes`.
#[inline(always)]
pub fn mbarrier_arrive_expect_tx(addr: u32, bytes: u32) {
    unsafe {
        asm!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [{a}], {n};", a = in(reg32) addr,
             n = in(reg32) bytes, options(nostack))
    }
}

/// `mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], bytes` (no arrival).
#[inline(always)]
pub fn mbarrier_expect_tx(addr: u32, bytes: u32) {
    unsafe {
        asm!("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{a}], {n};", a = in(reg32) addr,
             n = in(reg32) bytes, options(nostack))
    }
}

/// `mbarrier.try_wait.parity.shared::cta.b64` (acquire, CTA scope): whether the phase of
/// parity `parity` has completed. The instruction itself waits a while before answering no.
#[inline(always)]
pub fn mbarrier_try_wait(addr: u32, parity: u32) -> bool {
    let done: u32;
    unsafe {
        asm!(
            "{{",
            ".reg .pred p;",
            "mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {ph};",
            "selp.u32 {d}, 1, 0, p;",
            "}}",
            a = in(reg32) addr, ph = in(reg32) parity, d = out(reg32) done, options(nostack)
        )
    };
    done != 0
}

/// `mbarrier.try_wait` in a loop until the phase of parity `parity` has completed.
#[inline(always)]
pub fn mbarrier_wait(addr: u32, parity: u32) {
    while !mbarrier_try_wait(addr, parity) {}
}

/// `cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`: the
/// TMA engine copies the box at coordinates (x, y, z) of `map` to `dst`, and counts its bytes
/// off the tx-count of the mbarrier at `bar`. (Every map of the course is three-dimensional,
/// the third dimension the members of a batch: `crate::device::tma`.)
///
/// # Safety
/// `map` must point to a valid `CUtensorMap` in global memory for the whole kernel.
#[inline(always)]
pub unsafe fn tma_load_3d(map: *const u8, dst: u32, [x, y, z]: [i32; 3], bar: u32) {
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}, {z}}}], [{b}];",
            d = in(reg32) dst, m = in(reg64) map, x = in(reg32) x, y = in(reg32) y, z = in(reg32) z,
            b = in(reg32) bar, options(nostack)
        )
    }
}

/// [`tma_load_3d`] with `.L2::cache_hint`: the copy's lines enter L2 under `policy` (a
/// [`l2_evict_first`] or [`l2_evict_last`] policy), a hint that changes no result.
///
/// # Safety
/// As [`tma_load_3d`].
#[inline(always)]
pub unsafe fn tma_load_3d_hinted(
    map: *const u8,
    dst: u32,
    [x, y, z]: [i32; 3],
    bar: u32,
    policy: u64,
) {
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [{d}], [{m}, {{{x}, {y}, {z}}}], [{b}], {p};",
            d = in(reg32) dst, m = in(reg64) map, x = in(reg32) x, y = in(reg32) y, z = in(reg32) z,
            b = in(reg32) bar, p = in(reg64) policy, options(nostack)
        )
    }
}

/// `createpolicy.fractional.L2::evict_first.b64 policy, 1.0`: an L2 policy for data read once
/// (its lines the first to go).
#[inline(always)]
pub fn l2_evict_first() -> u64 {
    let policy: u64;
    unsafe {
        asm!(
            "createpolicy.fractional.L2::evict_first.b64 {p}, 1.0;",
            p = out(reg64) policy, options(nostack, pure, nomem)
        )
    }
    policy
}

/// `createpolicy.fractional.L2::evict_last.b64 policy, 1.0`: an L2 policy for data read again
/// (its lines the last to go).
#[inline(always)]
pub fn l2_evict_last() -> u64 {
    let policy: u64;
    unsafe {
        asm!(
            "createpolicy.fractional.L2::evict_last.b64 {p}, 1.0;",
            p = out(reg64) policy, options(nostack, pure, nomem)
        )
    }
    policy
}

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes,
/// [bar]`: `bytes` contiguous bytes from global `src` to shared `dst`.
///
/// # Safety
/// `src..src + bytes` must be readable global memory; both addresses 16-byte aligned, `bytes` a
/// multiple of 16.
#[inline(always)]
pub unsafe fn bulk_load(dst: u32, src: *const u8, bytes: u32, bar: u32) {
    unsafe {
        asm!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{b}];",
            d = in(reg32) dst, s = in(reg64) src, n = in(reg32) bytes, b = in(reg32) bar,
            options(nostack)
        )
    }
}

/// `cp.async.bulk.tensor.3d…multicast::cluster`: the box lands at `dst` in every block of the
/// cluster whose rank is a bit of `mask`, and completes on the mbarrier at `bar` of each.
///
/// # Safety
/// As [`tma_load_3d`].
#[inline(always)]
pub unsafe fn tma_load_3d_multicast(
    map: *const u8,
    dst: u32,
    [x, y, z]: [i32; 3],
    bar: u32,
    mask: u16,
) {
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{x}, {y}, {z}}}], [{b}], {k};",
            d = in(reg32) dst, m = in(reg64) map, x = in(reg32) x, y = in(reg32) y, z = in(reg32) z,
            b = in(reg32) bar, k = in(reg16) mask, options(nostack)
        )
    }
}

/// `prefetch.tensormap [map]`: brings the descriptor into the TMA unit's cache.
///
/// # Safety
/// `map` must point to a valid `CUtensorMap`.
#[inline(always)]
pub unsafe fn tma_prefetch(map: *const u8) {
    unsafe { asm!("prefetch.tensormap [{m}];", m = in(reg64) map, options(nostack)) }
}

/// `cp.async.bulk.prefetch.tensor.3d.L2.global.tile [map, {x, y, z}]`: the TMA engine reads
/// the box at `(x, y, z)` into L2 and nowhere else; no barrier, no shared memory, no result.
///
/// # Safety
/// `map` must point to a valid `CUtensorMap`.
#[inline(always)]
pub unsafe fn tma_prefetch_box_3d(map: *const u8, [x, y, z]: [i32; 3]) {
    unsafe {
        asm!(
            "cp.async.bulk.prefetch.tensor.3d.L2.global.tile [{m}, {{{x}, {y}, {z}}}];",
            m = in(reg64) map, x = in(reg32) x, y = in(reg32) y, z = in(reg32) z, options(nostack)
        )
    }
}

/// `griddepcontrol.wait` (sm_90): waits until the grids this one depends on have ended and
/// their memory operations are visible; returns at once where there are none.
#[inline(always)]
pub fn griddepcontrol_wait() {
    unsafe { asm!("griddepcontrol.wait;", options(nostack)) }
}

/// `griddepcontrol.launch_dependents` (sm_90): the grid launched after this one with
/// programmatic stream serialisation may start once every block has executed this or ended.
#[inline(always)]
pub fn griddepcontrol_launch_dependents() {
    unsafe { asm!("griddepcontrol.launch_dependents;", options(nostack)) }
}

/// `fence.proxy.async.shared::cta`: this thread's earlier shared-memory writes become visible
/// to the async proxy (the tensor cores' and the TMA engine's reads).
#[inline(always)]
pub fn fence_proxy_async() {
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) }
}

/// `wgmma.fence.sync.aligned`.
#[inline(always)]
pub fn wgmma_fence() {
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) }
}

/// `wgmma.commit_group.sync.aligned`.
#[inline(always)]
pub fn wgmma_commit() {
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) }
}

/// `wgmma.wait_group.sync.aligned N`.
#[inline(always)]
pub fn wgmma_wait<const N: u32>() {
    unsafe { asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack)) }
}

/// `setmaxnreg.{inc,dec}.sync.aligned.u32 count`: `count` must be a constant after inlining
/// (the match then folds to one instruction); other values trap.
#[inline(always)]
pub fn setmaxnreg(increase: bool, count: u32) {
    macro_rules! setmaxnreg {
        ($($n:literal)*) => {
            match (increase, count) {
                $(
                    (true, $n) => unsafe { asm!(concat!("setmaxnreg.inc.sync.aligned.u32 ", $n, ";"), options(nostack)) },
                    (false, $n) => unsafe { asm!(concat!("setmaxnreg.dec.sync.aligned.u32 ", $n, ";"), options(nostack)) },
                )*
                _ => unsafe { core::arch::nvptx::trap() },
            }
        };
    }
    setmaxnreg!(24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192 200 208 216 224 232 240 248 256)
}

/// The `wgmma` of one shape: `m64n{N}k8` with TF32 operands and f32 accumulators, A from
/// shared memory (`_ss`) or from registers (`_rs`), and the accumulators' operand fence. The
/// accumulators are N/2 registers per thread, so the instruction has N/2 + 3 operands; the
/// register indices are listed once per shape and build both the template and the operands.
/// The TF32 `wgmma` of one shape with both operands in shared memory.
macro_rules! wgmma_tf32_shared {
    ($n:literal, $ss:ident, [$first:literal $(, $i:literal)* $(,)?]) => {
        /// `wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32 d, a-desc, b-desc, p, 1, 1`
        /// (A from shared memory); `p` (scale-d) false means D = A·B.
        #[inline(always)]
        pub fn $ss(d: &mut [f32; $n / 2], a: u64, b: u64, scale_d: bool) {
            unsafe {
                asm!(
                    "{{",
                    ".reg .pred p;",
                    "setp.ne.b32 p, {scale}, 0;",
                    concat!(
                        "wgmma.mma_async.sync.aligned.m64n", $n, "k8.f32.tf32.tf32 {{{", $first, "}"
                        $(, ", {", $i, "}")*, "}}, {a}, {b}, p, 1, 1;"
                    ),
                    "}}",
                    inout(reg32) d[$first] $(, inout(reg32) d[$i])*,
                    a = in(reg64) a, b = in(reg64) b, scale = in(reg32) scale_d as u32,
                    options(nostack)
                )
            }
        }
    };
}

/// The TF32 `wgmma` of one shape, A from shared memory or from registers, and its
/// accumulator's operand fence.
macro_rules! wgmma_tf32 {
    ($n:literal, $ss:ident, $rs:ident, $fence:ident, [$first:literal $(, $i:literal)* $(,)?]) => {
        wgmma_tf32_shared!($n, $ss, [$first $(, $i)*]);

        /// As the shared-memory form, with A from four registers per thread.
        #[inline(always)]
        pub fn $rs(d: &mut [f32; $n / 2], a: [u32; 4], b: u64, scale_d: bool) {
            unsafe {
                asm!(
                    "{{",
                    ".reg .pred p;",
                    "setp.ne.b32 p, {scale}, 0;",
                    concat!(
                        "wgmma.mma_async.sync.aligned.m64n", $n, "k8.f32.tf32.tf32 {{{", $first, "}"
                        $(, ", {", $i, "}")*, "}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1;"
                    ),
                    "}}",
                    inout(reg32) d[$first] $(, inout(reg32) d[$i])*,
                    a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
                    b = in(reg64) b, scale = in(reg32) scale_d as u32,
                    options(nostack)
                )
            }
        }

        /// Tells the compiler that every accumulator register may change here (a `wgmma` in
        /// flight writes them), so that it keeps no copy of them across this point and moves
        /// no access to them over it: CUTLASS's `warpgroup_fence_operand`.
        #[inline(always)]
        pub fn $fence(d: &mut [f32; $n / 2]) {
            unsafe {
                // The operands appear in a PTX comment: the template must name them all.
                asm!(
                    concat!("// accumulators: {", $first, "}" $(, " {", $i, "}")*),
                    inout(reg32) d[$first] $(, inout(reg32) d[$i])*,
                    options(nostack, nomem, preserves_flags)
                )
            }
        }
    };
}

#[rustfmt::skip]
wgmma_tf32!(64, wgmma_m64n64k8_tf32_ss, wgmma_m64n64k8_tf32_rs, fence_operands_32, [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
]);

#[rustfmt::skip]
wgmma_tf32!(128, wgmma_m64n128k8_tf32_ss, wgmma_m64n128k8_tf32_rs, fence_operands_64, [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
    48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
]);

#[rustfmt::skip]
wgmma_tf32!(256, wgmma_m64n256k8_tf32_ss, wgmma_m64n256k8_tf32_rs, fence_operands_128, [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
    48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
    64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79,
    80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
    96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127,
]);

// The swapped tiles' narrower shapes in TF32 (`crate::variants::wgmma_swap`'s TF32 form): the
// weights' rows of a decode tile, A from shared memory only.
#[rustfmt::skip]
wgmma_tf32_shared!(16, wgmma_m64n16k8_tf32_ss, [0, 1, 2, 3, 4, 5, 6, 7]);
#[rustfmt::skip]
wgmma_tf32_shared!(32, wgmma_m64n32k8_tf32_ss, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
#[rustfmt::skip]
wgmma_tf32_shared!(48, wgmma_m64n48k8_tf32_ss, [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
]);
#[rustfmt::skip]
wgmma_tf32_shared!(56, wgmma_m64n56k8_tf32_ss, [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
    24, 25, 26, 27,
]);

/// The 16-bit `wgmma` of one shape and type: `m64n{N}k16.f32.{bf16,f16}` with A and B from
/// shared memory through their descriptors, and the transpose bits as immediates (`TA`, `TB`:
/// 1 for an MN-major operand). N/2 accumulator registers, as for TF32.
macro_rules! wgmma_half {
    ($n:literal, $ty:literal, $ss:ident, [$first:literal $(, $i:literal)* $(,)?]) => {
        /// `wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T d, a-desc, b-desc, p, 1, 1, TA, TB`.
        #[inline(always)]
        pub fn $ss<const TA: u32, const TB: u32>(d: &mut [f32; $n / 2], a: u64, b: u64, scale_d: bool) {
            unsafe {
                asm!(
                    "{{",
                    ".reg .pred p;",
                    "setp.ne.b32 p, {scale}, 0;",
                    concat!(
                        "wgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.", $ty, ".", $ty, " {{{", $first, "}"
                        $(, ", {", $i, "}")*, "}}, {a}, {b}, p, 1, 1, {ta}, {tb};"
                    ),
                    "}}",
                    inout(reg32) d[$first] $(, inout(reg32) d[$i])*,
                    a = in(reg64) a, b = in(reg64) b, scale = in(reg32) scale_d as u32,
                    ta = const TA, tb = const TB,
                    options(nostack)
                )
            }
        }
    };
}

/// The FP8 `wgmma` of one shape: `m64n{N}k32.f32.e4m3.{e4m3,e5m2}`, A and B from shared
/// memory, both K-major (8-bit operands have no transpose bits), A e4m3 and B e4m3 or, with
/// `B_E5M2`, e5m2. N/2 accumulator registers.
macro_rules! wgmma_fp8 {
    ($n:literal, $ty:literal, $ss:ident, [$first:literal $(, $i:literal)* $(,)?]) => {
        /// `wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.T d, a-desc, b-desc, p, 1, 1`.
        #[inline(always)]
        pub fn $ss<const B_E5M2: bool>(d: &mut [f32; $n / 2], a: u64, b: u64, scale_d: bool) {
            macro_rules! issue {
                ($b_ty:literal) => {
                    unsafe {
                        asm!(
                            "{{",
                            ".reg .pred p;",
                            "setp.ne.b32 p, {scale}, 0;",
                            concat!(
                                "wgmma.mma_async.sync.aligned.m64n", $n, "k32.f32.", $ty, ".", $b_ty,
                                " {{{", $first, "}" $(, ", {", $i, "}")*, "}}, {a}, {b}, p, 1, 1;"
                            ),
                            "}}",
                            inout(reg32) d[$first] $(, inout(reg32) d[$i])*,
                            a = in(reg64) a, b = in(reg64) b, scale = in(reg32) scale_d as u32,
                            options(nostack)
                        )
                    }
                };
            }
            if B_E5M2 {
                issue!("e5m2")
            } else {
                issue!($ty)
            }
        }
    };
}

/// One `wgmma` macro (`wgmma_half`, `wgmma_fp8`) at N = 64, 128 and 256: the register lists
/// are written once.
#[rustfmt::skip]
macro_rules! wgmma_shapes {
    ($wgmma:ident, $ty:literal, $n64:ident, $n128:ident, $n256:ident) => {
        $wgmma!(64, $ty, $n64, [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
        ]);
        $wgmma!(128, $ty, $n128, [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
            32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
            48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
        ]);
        $wgmma!(256, $ty, $n256, [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
            16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
            32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
            48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
            64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79,
            80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95,
            96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
            112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127,
        ]);
    };
}

/// The narrow shapes, N = 8, 16 and 32, for tiles as narrow as a decode step's tokens
/// (`crate::variants::wgmma_narrow`), and their accumulators' operand fences.
#[rustfmt::skip]
macro_rules! wgmma_narrow_shapes {
    ($wgmma:ident, $ty:literal, $n8:ident, $n16:ident, $n32:ident) => {
        $wgmma!(8, $ty, $n8, [0, 1, 2, 3]);
        $wgmma!(16, $ty, $n16, [0, 1, 2, 3, 4, 5, 6, 7]);
        $wgmma!(32, $ty, $n32, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    };
}

/// The operand fence of an accumulator of N/2 registers (as `wgmma_tf32!`'s, for the shapes
/// that have no TF32 kernel).
macro_rules! fence_operands {
    ($fence:ident, $r:literal, [$first:literal $(, $i:literal)* $(,)?]) => {
        /// Every accumulator register may change here (see `wgmma_tf32!`'s fence).
        #[inline(always)]
        pub fn $fence(d: &mut [f32; $r]) {
            unsafe {
                asm!(
                    concat!("// accumulators: {", $first, "}" $(, " {", $i, "}")*),
                    inout(reg32) d[$first] $(, inout(reg32) d[$i])*,
                    options(nostack, nomem, preserves_flags)
                )
            }
        }
    };
}

fence_operands!(fence_operands_4, 4, [0, 1, 2, 3]);
fence_operands!(fence_operands_8, 8, [0, 1, 2, 3, 4, 5, 6, 7]);
#[rustfmt::skip]
fence_operands!(fence_operands_16, 16, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

// The shapes between, N = 24, 48 and 56: the weights' rows of a tile of the swapped kernels
// (`crate::variants::wgmma_swap`, `crate::variants::wgmma_fp8_block_swap`), chosen so that the
// tiles of a model's layer make whole waves (7168 rows in 128 tiles of 56), and their
// accumulators' operand fences.
#[rustfmt::skip]
fence_operands!(fence_operands_12, 12, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
#[rustfmt::skip]
fence_operands!(fence_operands_24, 24, [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
]);
#[rustfmt::skip]
fence_operands!(fence_operands_28, 28, [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
]);

/// One `wgmma` macro (`wgmma_half`, `wgmma_fp8`) at N = 24, 48 and 56.
#[rustfmt::skip]
macro_rules! wgmma_between_shapes {
    ($wgmma:ident, $ty:literal, $n24:ident, $n48:ident, $n56:ident) => {
        $wgmma!(24, $ty, $n24, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        $wgmma!(48, $ty, $n48, [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
        ]);
        $wgmma!(56, $ty, $n56, [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
            24, 25, 26, 27,
        ]);
    };
}

wgmma_between_shapes!(
    wgmma_fp8,
    "e4m3",
    wgmma_m64n24k32_e4m3_ss,
    wgmma_m64n48k32_e4m3_ss,
    wgmma_m64n56k32_e4m3_ss
);
wgmma_between_shapes!(
    wgmma_half,
    "bf16",
    wgmma_m64n24k16_bf16_ss,
    wgmma_m64n48k16_bf16_ss,
    wgmma_m64n56k16_bf16_ss
);
wgmma_between_shapes!(
    wgmma_half,
    "f16",
    wgmma_m64n24k16_f16_ss,
    wgmma_m64n48k16_f16_ss,
    wgmma_m64n56k16_f16_ss
);

wgmma_narrow_shapes!(
    wgmma_half,
    "bf16",
    wgmma_m64n8k16_bf16_ss,
    wgmma_m64n16k16_bf16_ss,
    wgmma_m64n32k16_bf16_ss
);
wgmma_narrow_shapes!(
    wgmma_half,
    "f16",
    wgmma_m64n8k16_f16_ss,
    wgmma_m64n16k16_f16_ss,
    wgmma_m64n32k16_f16_ss
);
wgmma_narrow_shapes!(
    wgmma_fp8,
    "e4m3",
    wgmma_m64n8k32_e4m3_ss,
    wgmma_m64n16k32_e4m3_ss,
    wgmma_m64n32k32_e4m3_ss
);

wgmma_shapes!(
    wgmma_half,
    "bf16",
    wgmma_m64n64k16_bf16_ss,
    wgmma_m64n128k16_bf16_ss,
    wgmma_m64n256k16_bf16_ss
);
wgmma_shapes!(
    wgmma_half,
    "f16",
    wgmma_m64n64k16_f16_ss,
    wgmma_m64n128k16_f16_ss,
    wgmma_m64n256k16_f16_ss
);
wgmma_shapes!(
    wgmma_fp8,
    "e4m3",
    wgmma_m64n64k32_e4m3_ss,
    wgmma_m64n128k32_e4m3_ss,
    wgmma_m64n256k32_e4m3_ss
);

// -- clusters --

/// `%cluster_ctarank`.
#[inline(always)]
pub fn cluster_ctarank() -> u32 {
    let r: u32;
    unsafe {
        asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) r, options(pure, nomem, nostack))
    };
    r
}

/// `%clusterid.x`.
#[inline(always)]
pub fn cluster_id_x() -> u32 {
    let r: u32;
    unsafe { asm!("mov.u32 {r}, %clusterid.x;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

/// `%nclusterid.x`.
#[inline(always)]
pub fn cluster_count_x() -> u32 {
    let r: u32;
    unsafe { asm!("mov.u32 {r}, %nclusterid.x;", r = out(reg32) r, options(pure, nomem, nostack)) };
    r
}

/// `barrier.cluster.arrive.release.aligned`.
#[inline(always)]
pub fn cluster_arrive() {
    unsafe { asm!("barrier.cluster.arrive.release.aligned;", options(nostack)) }
}

/// `barrier.cluster.wait.acquire.aligned`.
#[inline(always)]
pub fn cluster_wait() {
    unsafe { asm!("barrier.cluster.wait.acquire.aligned;", options(nostack)) }
}

/// `mapa.shared::cluster.u32` then `mbarrier.arrive.shared::cluster.b64` (the default
/// semantics, `.release` at CTA scope, as CUTLASS's `ClusterBarrier::arrive`: with
/// `.release.cluster` ptxas puts `MEMBAR.ALL.CTA; MEMBAR.ALL.GPU` before every arrival, and
/// `wgmma-cluster` ran at half speed).
#[inline(always)]
pub fn mbarrier_arrive_cluster(addr: u32, rank: u32) {
    unsafe {
        asm!(
            "{{",
            ".reg .b32 remote;",
            "mapa.shared::cluster.u32 remote, {a}, {r};",
            "mbarrier.arrive.shared::cluster.b64 _, [remote];",
            "}}",
            a = in(reg32) addr, r = in(reg32) rank, options(nostack)
        )
    }
}

/// `mapa.shared::cluster.u32` then `mbarrier.arrive.release.cluster.shared::cluster.b64`: an
/// arrival that publishes this thread's earlier writes to the peer's shared memory (the tile
/// queue's slots) at cluster scope. ptxas puts a `MEMBAR` before it (see
/// [`mbarrier_arrive_cluster`]); the queue makes one per tile.
#[inline(always)]
pub fn mbarrier_arrive_release_cluster(addr: u32, rank: u32) {
    unsafe {
        asm!(
            "{{",
            ".reg .b32 remote;",
            "mapa.shared::cluster.u32 remote, {a}, {r};",
            "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];",
            "}}",
            a = in(reg32) addr, r = in(reg32) rank, options(nostack)
        )
    }
}

/// `mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64` in a loop: a wait that acquires
/// what a peer block's thread released into the phase (its writes to this block's shared memory).
#[inline(always)]
pub fn mbarrier_wait_acquire_cluster(addr: u32, parity: u32) {
    loop {
        let done: u32;
        unsafe {
            asm!(
                "{{",
                ".reg .pred p;",
                "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [{a}], {ph};",
                "selp.u32 {d}, 1, 0, p;",
                "}}",
                a = in(reg32) addr, ph = in(reg32) parity, d = out(reg32) done, options(nostack)
            )
        };
        if done != 0 {
            break;
        }
    }
}

/// `mapa.shared::cluster.u32` then `st.shared::cluster.u32`: a word into the shared memory of
/// block `rank` of the cluster (this block's own too), at the offset `addr` has in this block's.
#[inline(always)]
pub fn st_shared_cluster_u32(addr: u32, rank: u32, value: u32) {
    unsafe {
        asm!(
            "{{",
            ".reg .b32 remote;",
            "mapa.shared::cluster.u32 remote, {a}, {r};",
            "st.shared::cluster.u32 [remote], {v};",
            "}}",
            a = in(reg32) addr, r = in(reg32) rank, v = in(reg32) value, options(nostack)
        )
    }
}

// -- the TMA store epilogue --

/// `stmatrix.sync.aligned.m8n8.x4.shared.b16 [row], {r0, r1, r2, r3}`.
#[inline(always)]
pub fn stmatrix_x4(row: u32, r: [u32; 4]) {
    unsafe {
        asm!(
            "stmatrix.sync.aligned.m8n8.x4.shared.b16 [{p}], {{{a}, {b}, {c}, {d}}};",
            p = in(reg32) row, a = in(reg32) r[0], b = in(reg32) r[1], c = in(reg32) r[2],
            d = in(reg32) r[3], options(nostack)
        )
    }
}

/// `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [row], {r0, r1, r2, r3}`.
#[inline(always)]
pub fn stmatrix_x4_trans(row: u32, r: [u32; 4]) {
    unsafe {
        asm!(
            "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [{p}], {{{a}, {b}, {c}, {d}}};",
            p = in(reg32) row, a = in(reg32) r[0], b = in(reg32) r[1], c = in(reg32) r[2],
            d = in(reg32) r[3], options(nostack)
        )
    }
}

/// `cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [map, {x, y, z}], [src]`.
///
/// # Safety
/// `map` must point to a valid `CUtensorMap` in global memory for the whole kernel.
#[inline(always)]
pub unsafe fn tma_store_3d(map: *const u8, src: u32, [x, y, z]: [i32; 3]) {
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [{m}, {{{x}, {y}, {z}}}], [{s}];",
            m = in(reg64) map, x = in(reg32) x, y = in(reg32) y, z = in(reg32) z, s = in(reg32) src,
            options(nostack)
        )
    }
}

/// `cp.async.bulk.commit_group`.
#[inline(always)]
pub fn bulk_commit() {
    unsafe { asm!("cp.async.bulk.commit_group;", options(nostack)) }
}

/// `cp.async.bulk.wait_group{.read} N`.
#[inline(always)]
pub fn bulk_wait<const N: u32, const READ: bool>() {
    unsafe {
        if READ {
            asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack))
        } else {
            asm!("cp.async.bulk.wait_group {n};", n = const N, options(nostack))
        }
    }
}

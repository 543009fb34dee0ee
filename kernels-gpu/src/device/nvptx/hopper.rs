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

/// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`: the
/// TMA engine copies the box at coordinates (x, y) of `map` to `dst`, and counts its bytes off
/// the tx-count of the mbarrier at `bar`.
///
/// # Safety
/// `map` must point to a valid `CUtensorMap` in global memory for the whole kernel.
#[inline(always)]
pub unsafe fn tma_load_2d(map: *const u8, dst: u32, x: i32, y: i32, bar: u32) {
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}}}], [{b}];",
            d = in(reg32) dst, m = in(reg64) map, x = in(reg32) x, y = in(reg32) y, b = in(reg32) bar,
            options(nostack)
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

/// `setmaxnreg.inc.sync.aligned.u32 N`.
#[inline(always)]
pub fn setmaxnreg_inc<const N: u32>() {
    unsafe { asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nostack)) }
}

/// `setmaxnreg.dec.sync.aligned.u32 N`.
#[inline(always)]
pub fn setmaxnreg_dec<const N: u32>() {
    unsafe { asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nostack)) }
}

/// The `wgmma` of one shape: `m64n{N}k8` with TF32 operands and f32 accumulators, A from
/// shared memory (`_ss`) or from registers (`_rs`), and the accumulators' operand fence. The
/// accumulators are N/2 registers per thread, so the instruction has N/2 + 3 operands; the
/// register indices are listed once per shape and build both the template and the operands.
macro_rules! wgmma_tf32 {
    ($n:literal, $ss:ident, $rs:ident, $fence:ident, [$first:literal $(, $i:literal)* $(,)?]) => {
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

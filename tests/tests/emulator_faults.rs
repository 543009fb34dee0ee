//! Bugs the emulator must catch. Each test plants one in a small kernel written against the
//! device layer (exactly as the real kernels are) and checks what the emulator reports.
use kernels_gpu::device::{
    block_idx_x, cp_async_commit, cp_async_wait, sync_threads, thread_idx_x, Global, GlobalMut,
    Real, Shared,
};
use kernels_gpu::emu::{launch, Buffer, Fault, FaultKind, LaunchShape};

fn buffer<T>(name: &'static str, v: &[T]) -> Buffer {
    Buffer {
        name,
        address: v.as_ptr() as usize,
        bytes: std::mem::size_of_val(v),
    }
}

/// Runs `kernel` over 2 blocks of 64 threads with 64 floats of shared memory per block, on an
/// input of 128 floats and an output of 128 floats.
fn run(
    name: &str,
    kernel: impl Fn(Global<f32>, GlobalMut<f32>) + Sync,
) -> (Result<(), Fault>, Vec<f32>) {
    let input: Vec<f32> = (0..128).map(|i| i as f32).collect();
    let mut output = vec![f32::NAN; 128];
    let (src, dst) = (input.as_ptr() as usize, output.as_mut_ptr() as usize);
    let shape = LaunchShape {
        grid: (2, 1),
        block: (64, 1),
        shared_bytes: 64 * 4,
        cluster: (1, 1),
    };
    let buffers = [buffer("input", &input), buffer("output", &output)];
    let result = launch(name, shape, &buffers, &|| {
        kernel(
            Global::new(src as *const f32),
            GlobalMut::new(dst as *mut f32),
        )
    });
    (result, output)
}

/// Each block reverses its 64 elements through shared memory: correct with the barrier.
fn reverse(input: Global<f32>, output: GlobalMut<f32>, with_barrier: bool) {
    let tile = Shared::<f32>::at(0, 64);
    let (t, base) = (thread_idx_x(), block_idx_x() * 64);
    tile.store(t, unsafe { input.load((base + t) as usize) });
    if with_barrier {
        sync_threads();
    }
    unsafe { output.store((base + t) as usize, tile.load(63 - t)) };
}

#[test]
fn a_correct_kernel_passes() {
    let (result, out) = run("reverse", |i, o| reverse(i, o, true));
    result.unwrap();
    assert_eq!(out[0], 63.0);
    assert_eq!(out[64], 127.0);
}

#[test]
fn missing_barrier_before_a_read_is_a_race() {
    let (result, _) = run("reverse_without_barrier", |i, o| reverse(i, o, false));
    let fault = result.unwrap_err();
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    // Without the barrier, thread t reads slot 63 - t in the same interval in which thread
    // 63 - t writes it. The emulator runs threads in order, so the first conflict it meets is
    // thread 32 writing slot 32 (byte 128) after thread 31 read it. On the GPU the outcome would
    // depend on timing; here it is a reported race whatever the order.
    assert_eq!(
        (fault.kernel.as_str(), fault.block, fault.thread),
        ("reverse_without_barrier", (0, 0), (32, 0))
    );
    assert!(
        fault
            .detail
            .contains("write to shared byte 128 that thread (31, 0) read"),
        "{fault}"
    );
    println!("{fault}");
}

/// Two passes over one tile; without the second barrier, pass 2 overwrites what slower
/// threads may still be reading from pass 1 (write-after-read).
fn two_passes(input: Global<f32>, output: GlobalMut<f32>, second_barrier: bool) {
    let tile = Shared::<f32>::at(0, 64);
    let (t, base) = (thread_idx_x(), block_idx_x() * 64);
    let mut acc = 0.0f32;
    for pass in 0..2u32 {
        tile.store(t, unsafe { input.load((base + t) as usize) } + pass as f32);
        sync_threads();
        acc += tile.load((t + 1) % 64);
        if second_barrier {
            sync_threads();
        }
    }
    unsafe { output.store((base + t) as usize, acc) };
}

#[test]
fn missing_barrier_before_an_overwrite_is_a_race() {
    let (ok, out) = run("two_passes", |i, o| two_passes(i, o, true));
    ok.unwrap();
    assert_eq!(out[0], 1.0 + 2.0);
    let (result, _) = run("two_passes_without_second_barrier", |i, o| {
        two_passes(i, o, false)
    });
    let fault = result.unwrap_err();
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(fault.detail.contains("write to shared byte"), "{fault}");
    assert!(
        fault.detail.contains("read in the same barrier interval"),
        "{fault}"
    );
    println!("{fault}");
}

#[test]
fn out_of_bounds_global_access_names_block_thread_and_buffer() {
    // Off by one: the last thread of the last block reads input[128].
    let (result, _) = run("off_by_one", |input, output| {
        let i = block_idx_x() * 64 + thread_idx_x();
        unsafe { output.store(i as usize, input.load(i as usize + 1)) };
    });
    let fault = result.unwrap_err();
    assert_eq!(fault.kind, FaultKind::GlobalOutOfBounds, "{fault}");
    assert_eq!((fault.block, fault.thread), ((1, 0), (63, 0)), "{fault}");
    assert!(
        fault
            .detail
            .contains("byte offset 512 of buffer `input` (512 bytes)"),
        "{fault}"
    );
    let text = fault.to_string();
    assert!(
        text.contains("off_by_one") && text.contains("block (1, 0), thread (63, 0)"),
        "{text}"
    );
    println!("{fault}");
}

#[test]
fn out_of_bounds_shared_access_is_caught_before_it_corrupts_a_neighbour() {
    let (result, _) = run("shared_overflow", |input, output| {
        let first = Shared::<f32>::at(0, 32);
        let t = thread_idx_x();
        first.store(t, unsafe { input.load(t as usize) }); // threads 32..63 overflow the view
        sync_threads();
        unsafe { output.store(t as usize, first.load(t % 32)) };
    });
    let fault = result.unwrap_err();
    assert_eq!(fault.kind, FaultKind::SharedOutOfBounds, "{fault}");
    assert_eq!(fault.thread, (32, 0), "{fault}");
    assert!(fault.detail.contains("index 32"), "{fault}");
}

#[test]
fn misaligned_vector_load_is_reported() {
    let (result, _) = run("misaligned", |input, output| {
        let t = thread_idx_x();
        let v = unsafe { input.load4(1 + 4 * (t as usize % 8)) };
        unsafe { output.store(t as usize, v[0].fma(1.0, v[3])) };
    });
    assert_eq!(result.unwrap_err().kind, FaultKind::MisalignedVectorAccess);
}

/// The reversal again, with the tile filled by asynchronous copies (`cp.async`). The copy is
/// complete for the issuing thread only after its `cp_async_wait`, and for the others only
/// after a barrier that follows the wait.
fn reverse_async(input: Global<f32>, output: GlobalMut<f32>, wait_before_barrier: bool) {
    let tile = Shared::<f32>::at(0, 64);
    let (t, base) = (thread_idx_x(), block_idx_x() * 64);
    unsafe { tile.copy_async(t, input, (base + t) as usize, true) };
    cp_async_commit();
    if wait_before_barrier {
        cp_async_wait(0);
    }
    sync_threads();
    let value = tile.load(63 - t);
    cp_async_wait(0);
    unsafe { output.store((base + t) as usize, value) };
}

#[test]
fn async_copies_waited_for_before_the_barrier_pass() {
    let (result, out) = run("reverse_async", |i, o| reverse_async(i, o, true));
    result.unwrap();
    assert_eq!((out[0], out[64]), (63.0, 127.0));
}

#[test]
fn async_copy_read_before_its_wait_is_a_race() {
    let (result, _) = run("reverse_async_without_wait", |i, o| {
        reverse_async(i, o, false)
    });
    let fault = result.unwrap_err();
    // Every copy lands only at its thread's wait, after the barrier, in the same interval as
    // the other threads' reads of it: on the GPU they could read stale data. The emulator
    // meets it as thread 32 reading slot 31, which thread 31's copy wrote at its wait.
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault
            .detail
            .contains("read of shared byte 124 that thread (31, 0) wrote"),
        "{fault}"
    );
    println!("{fault}");
}

/// Each block's thread 0 starts a bulk copy (`cp.async.bulk`, no tensor map) of its 64 floats
/// into shared memory, counted on an mbarrier; every thread waits for the phase and writes its
/// element back. `expected`: whether the copy's bytes are added to the phase before it starts
/// (`arrive.expect_tx`), as `wgmma-fp8-block:8` and `:9` do with A's scales; `skew`: floats by
/// which the source is moved off its 16-byte alignment.
fn bulk_copy(input: Global<f32>, output: GlobalMut<f32>, expected: bool, skew: isize) {
    use kernels_gpu::device::mbarrier::{fence_mbarrier_init, MBarrier};
    use kernels_gpu::device::tma;
    // The floats after the barrier's 16 bytes (a bulk copy's destination is 16-byte aligned).
    let (bar, tile) = (MBarrier::at(0), Shared::<f32>::at(16, 64));
    let (t, base) = (thread_idx_x(), block_idx_x() * 64);
    if t == 0 {
        bar.init(1);
        fence_mbarrier_init();
    }
    sync_threads();
    if t == 0 {
        let bytes = 64 * 4;
        bar.arrive_expect_tx(if expected { bytes } else { 0 });
        let from = input.offset(base as isize + skew);
        unsafe { tma::load_bulk(tile.shared_address(0), from, bytes, bar) };
    }
    bar.wait(0);
    unsafe { output.store((base + t) as usize, tile.load(t)) };
}

/// The emulator's `run` with room for the barrier before the tile.
fn run_bulk(name: &str, expected: bool, skew: isize) -> (Result<(), Fault>, Vec<f32>) {
    let input: Vec<f32> = (0..128 + 4).map(|i| i as f32).collect();
    let mut output = vec![f32::NAN; 128];
    let (src, dst) = (input.as_ptr() as usize, output.as_mut_ptr() as usize);
    let shape = LaunchShape {
        grid: (2, 1),
        block: (64, 1),
        shared_bytes: 16 + 64 * 4,
        cluster: (1, 1),
    };
    let buffers = [buffer("input", &input), buffer("output", &output)];
    let result = launch(name, shape, &buffers, &|| {
        bulk_copy(
            Global::new(src as *const f32),
            GlobalMut::new(dst as *mut f32),
            expected,
            skew,
        )
    });
    (result, output)
}

#[test]
fn a_bulk_copy_counted_on_its_mbarrier_lands_before_the_phase_completes() {
    // Rust's allocator gives a Vec of 132 floats 16-byte alignment on the hosts CI runs.
    let (result, out) = run_bulk("bulk_copy", true, 0);
    result.unwrap();
    assert_eq!(out, (0..128).map(|i| i as f32).collect::<Vec<_>>());
}

#[test]
fn a_bulk_copy_the_phase_does_not_expect_is_read_before_it_lands() {
    // The planted bug: the phase completes on its arrival alone, and the copy lands in the
    // next one; the threads that waited read the tile in a race with the copy.
    let (result, _) = run_bulk("bulk_copy_unexpected", false, 0);
    let fault = result.unwrap_err();
    println!("{fault}");
    assert_eq!(fault.kind, FaultKind::SharedRace, "{fault}");
    assert!(
        fault.detail.contains("TMA copy completing on the mbarrier"),
        "{fault}"
    );
}

#[test]
fn a_bulk_copy_from_an_address_off_16_bytes_is_refused() {
    let (result, _) = run_bulk("bulk_copy_misaligned", true, 1);
    let fault = result.unwrap_err();
    println!("{fault}");
    assert_eq!(fault.kind, FaultKind::MisalignedVectorAccess, "{fault}");
}

/// `vote.sync.all` ([`kernels_gpu::device::vote_all`], behind `warp_uniform_condition`): each
/// lane gets whether the condition held in all 32 lanes of its own warp. One lane of block 1's
/// second warp votes no.
#[test]
fn a_vote_is_true_only_where_every_lane_of_the_warp_says_so() {
    let (result, out) = run("vote_all", |_, o| {
        let (t, b) = (thread_idx_x(), block_idx_x());
        let all = kernels_gpu::device::vote_all(!(b == 1 && t == 40));
        unsafe { o.store((b * 64 + t) as usize, if all { 1.0 } else { 0.0 }) };
    });
    result.unwrap();
    let expected: Vec<f32> = (0..128).map(|i| if i >= 96 { 0.0 } else { 1.0 }).collect();
    assert_eq!(out, expected);
}

/// A lane that skips the vote its warp takes: on the GPU the warp would hang in
/// `vote.sync` (or, with lanes at another warp-wide operation, compute garbage).
#[test]
fn a_lane_missing_from_a_vote_is_reported() {
    let (result, _) = run("vote_missing_lane", |_, o| {
        let t = thread_idx_x();
        if t == 7 {
            let x = kernels_gpu::device::shfl_idx(1.0f32, 0);
            unsafe { o.store(t as usize, x) };
        } else {
            let all = kernels_gpu::device::vote_all(true);
            unsafe { o.store(t as usize, if all { 1.0 } else { 0.0 }) };
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

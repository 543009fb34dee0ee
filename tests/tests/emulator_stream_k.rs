//! Stream-k's fixup on the emulator, by itself: blocks that share a tile hand their parts over
//! through a workspace and a counter in global memory (`kernels_gpu::pipeline::stream`, the
//! device layer's `Semaphore`), and exactly one of them, the last to arrive, writes the sum.
//!
//! The kernel here is the protocol and nothing else: block `b` of a one-tile grid "computes" a
//! part whose every register is a small integer that depends on the block, the thread and the
//! register, calls [`stream::finish`] and, if it finishes the tile, writes what it got. The
//! emulator runs the blocks on several worker threads at once, so the arrivals come in an order
//! that timing decides; the sum must not depend on it, and the counter must be back at zero for
//! the next launch. Then a planted bug: a finisher that forgets to put the counter back, which
//! the next launch's sum betrays.
use kernels_gpu::device::semaphore::Semaphore;
use kernels_gpu::device::{block_idx_x, grid_dim_x, thread_idx_x, GlobalMut};
use kernels_gpu::emu::{launch, Buffer, LaunchShape};
use kernels_gpu::pipeline::stream::{self, Scratch, FIXUP_BYTES};
use kernels_gpu::pipeline::Work;

/// Registers per thread and threads per block (as a 16-bit kernel's two consumer warpgroups).
const R: usize = 16;
const THREADS: u32 = 256;

/// Block `b`'s register `i` of thread `t` in launch `salt` (each launch's parts differ, so that
/// a part left in the workspace by the last one cannot pass for this one's).
fn part(salt: u32, b: u32, t: u32, i: usize) -> f32 {
    ((salt * 13 + b * 7 + t * 3 + i as u32 * 5) % 11) as f32 - 5.0
}

fn buffer<T>(name: &'static str, v: &[T]) -> Buffer {
    Buffer {
        name,
        address: v.as_ptr() as usize,
        bytes: std::mem::size_of_val(v),
    }
}

/// One launch of `blocks` blocks sharing one tile: what each thread of the finisher wrote
/// (`out`, NaN where nothing was), and how many blocks finished.
fn run(
    (blocks, salt): (u32, u32),
    workspace: &mut [f32],
    counters: &mut [u32],
    reset: bool,
) -> (Vec<f32>, u32) {
    let mut out = vec![f32::NAN; THREADS as usize * R];
    let mut finishers = vec![0u32; 1];
    let scratch = Scratch {
        workspace: workspace.as_mut_ptr(),
        counters: counters.as_mut_ptr(),
    };
    let (scratch_at, out_at, finishers_at) = (
        &scratch as *const Scratch as usize,
        out.as_mut_ptr() as usize,
        finishers.as_mut_ptr() as usize,
    );
    let buffers = [
        buffer("workspace", workspace),
        buffer("counters", counters),
        buffer("out", &out),
        buffer("finishers", &finishers),
    ];
    let shape = LaunchShape {
        grid: (blocks, 1),
        block: (THREADS, 1),
        shared_bytes: FIXUP_BYTES,
        cluster: (1, 1),
    };
    let kernel = || {
        let scratch = unsafe { *(scratch_at as *const Scratch) };
        let (b, t) = (block_idx_x(), thread_idx_x());
        // Block b is part b of the tile (stream-k's slabs: part 0 in slab 1, part j in 2j).
        let work = Work {
            tile: kernels_gpu::pipeline::schedule::Tile::of_member(0, 0, 0),
            split: b,
            parts: grid_dim_x(),
            first_slice: 0,
            slices: 1,
            slab0: 1,
            unit: 0,
        };
        let mut values: [f32; R] = core::array::from_fn(|i| part(salt, b, t, i));
        // The flag: the first 16 bytes of the block's shared memory.
        let flag = 0;
        let finishes = unsafe { stream::finish(scratch, &work, &mut values, t, THREADS, flag) };
        if finishes {
            if !reset && t == 0 {
                // The planted bug: the finisher leaves the counter one arrival up.
                unsafe { Semaphore::new(scratch.counters).arrive() };
            }
            let out = GlobalMut::new(out_at as *mut f32);
            for (i, v) in values.iter().enumerate() {
                unsafe { out.store(t as usize * R + i, *v) };
            }
            if t == 0 {
                unsafe { Semaphore::new(finishers_at as *mut u32).arrive() };
            }
        }
    };
    launch("stream-k fixup", shape, &buffers, &kernel).expect("the fixup runs");
    (out, finishers[0])
}

fn expected(blocks: u32, salt: u32) -> Vec<f32> {
    (0..THREADS)
        .flat_map(|t| (0..R).map(move |i| (0..blocks).map(|b| part(salt, b, t, i)).sum()))
        .collect()
}

#[test]
fn the_last_block_to_arrive_adds_every_part_and_puts_the_counter_back() {
    for blocks in [2u32, 3, 7] {
        // Two slabs per block, as the host allocates them.
        let mut workspace = vec![f32::NAN; 2 * blocks as usize * THREADS as usize * R];
        let mut counters = vec![0u32; 1];
        for salt in 0..2 {
            let (out, finished) = run((blocks, salt), &mut workspace, &mut counters, true);
            assert_eq!(
                out,
                expected(blocks, salt),
                "{blocks} blocks, launch {salt}"
            );
            assert_eq!(finished, 1, "one finisher");
            assert_eq!(
                counters,
                [0],
                "the counter is back at zero for the next launch"
            );
        }
    }
}

#[test]
fn a_counter_left_behind_spoils_the_next_launch() {
    let blocks = 3;
    let mut workspace = vec![f32::NAN; 2 * blocks as usize * THREADS as usize * R];
    let mut counters = vec![0u32; 1];
    let (first, _) = run((blocks, 0), &mut workspace, &mut counters, false);
    assert_eq!(first, expected(blocks, 0), "the first launch is right");
    assert_ne!(
        counters,
        [0],
        "the planted finisher left its counter behind"
    );
    // The next launch, correct itself, counts one arrival too many: its second block to arrive
    // finishes the tile before the third part is in (the sum is then wrong unless the third
    // block happened to write first), and its third arrival leaves the counter at one again, as
    // the emulator backend reports after every stream-k launch ("left stream-k counters
    // nonzero"): that part does not depend on timing.
    let (_, finished) = run((blocks, 1), &mut workspace, &mut counters, true);
    assert_eq!(finished, 1);
    assert_eq!(counters, [1], "the stale arrival is still counted");
}

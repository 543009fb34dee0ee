//! The order in which blocks take C's tiles: down a group of tile-rows, then right, so that the
//! blocks resident together share the panels of A and B they read in L2. Plain integer
//! arithmetic that both the classic kernels (through `gemm`, which re-exports it) and the Hopper
//! skeleton's scheduler (`pipeline::schedule`) use; a leaf, so that neither imports the other.

/// Tile-rows a group of consecutive blocks walks down before moving to the next column.
const RASTER_GROUP: u32 = 8;

/// The (tile-row, tile-column) of C that block `block` of a 1D grid computes: down a group of
/// `RASTER_GROUP` tile-rows, then right, so that the blocks resident together cover a compact
/// patch of C and share the panels of A and B they read in L2.
#[inline(always)]
pub fn rasterise(block: u32, tiles_m: u32, tiles_n: u32) -> (u32, u32) {
    rasterise_in_groups(block, tiles_m, tiles_n, RASTER_GROUP)
}

/// [`rasterise`] with groups of `group` tile-rows: the patch a wave of blocks covers is about
/// `group` tiles tall, so the choice balances the rows of A and the columns of B it reads.
#[inline(always)]
pub fn rasterise_in_groups(block: u32, tiles_m: u32, tiles_n: u32, group: u32) -> (u32, u32) {
    // `max(1)`: n = 0 or m = 0 launch no block, and the divisions need no zero check.
    let per_group = (group * tiles_n).max(1);
    let first_m = block / per_group * group;
    let rows = tiles_m.saturating_sub(first_m).clamp(1, group);
    let within = block % per_group;
    (first_m + within % rows, within / rows)
}

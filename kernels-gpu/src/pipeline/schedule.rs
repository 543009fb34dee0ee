//! The tile scheduler of a persistent grid: which output tiles a block computes, in which order.
//!
//! The grid has at most one block per multiprocessor (the host caps it), and block `b` takes
//! work units `b`, `b + grid`, `b + 2·grid`, … A unit is one tile of C, or with clusters one
//! tile per block of the cluster (CUTLASS's cluster shape: `cluster.0` tiles down m times
//! `cluster.1` tiles along n), so that the blocks of a cluster compute neighbouring tiles that
//! share an operand. Units are numbered in the grouped order of [`rasterise_in_groups`], with
//! the roles of m and n exchanged: groups of `group` unit-columns, and within a group along n
//! first, then down m. The blocks working at the same time cover a compact patch of C, whose
//! rows of A and columns of B stay in L2 while they are read.
//!
//! Why along n: the same order with the roles as they were (groups of unit-rows, down m first)
//! covers a patch of the same size, yet measured slower at 17 of 20 problems, 0.6% in the
//! geomean (H200, three rounds, the two builds alternating per problem: bf16 at Llama-3 8B's
//! layers with 4096 tokens and on the squares, strided batches, block-scaled e4m3 at
//! DeepGEMM's 4096 and 1 024 tokens; `docs/results/h200-2026-11-29-tile-order/`); groups of 4
//! or 16 unit-rows did no better than 8. CUTLASS's sm90 scheduler walks along n first where C
//! has at least as many tile-rows as tile-columns (a model's layer, m its weights' rows), along
//! m otherwise; here n first was as fast or faster where C has fewer tile-rows too (4096 ×
//! 4096, 2112 × 4096). Why is not measured: both orders read the same bytes from DRAM there.
//!
//! A strided batch (`count` problems of one shape) is one walk over the units of all its
//! members: member 0's units, then member 1's, … A block that finishes a member's last tile
//! goes on with the next member's first, so small members fill the machine together (cuBLAS's
//! strided batched GEMM launches a grid over the batch for the same reason), and a tile is
//! ([`Tile`]) a tile-row, a tile-column and a member: the copies take the member as the layer of their tensor
//! maps, the epilogue as the offset of C ([`crate::pipeline::Problem::member`]).
//!
//! A grouped GEMM ([`crate::gemm::Groups`]) walks the same units: the one problem's (contiguous
//! layout: each tile then reads its group, the layer of A, from a table) or the batch's
//! (masked layout: a tile that starts past its member's count is skipped). The walk does not
//! change; [`crate::pipeline::Problem::locate`] says, per tile, where it lies or that it has
//! nothing to compute, and every role of the block asks it of the same tiles.
use crate::tile_order::rasterise_in_groups;

/// A tile of C, in tiles down m and along n, and whose operands it multiplies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub row: u32,
    pub col: u32,
    /// The member of the batch whose B and C the tile is of: the layer of their tensor maps
    /// (0 for one problem).
    pub member: u32,
    /// The group whose A it multiplies, the layer of A's map: the member, but in a grouped
    /// GEMM's contiguous layout, where B and C are one matrix whose columns the groups share
    /// and each group has an A of its own ([`crate::gemm::Groups`]).
    pub group: u32,
}

impl Tile {
    /// Tile `(row, col)` of member `member`, which multiplies its own A.
    #[inline(always)]
    pub fn of_member(row: u32, col: u32, member: u32) -> Self {
        Tile {
            row,
            col,
            member,
            group: member,
        }
    }
}

/// Where a role's walk over the masked layout's packed units stands ([`Tiles::masked_tile`]):
/// the member its last unit was of, and the units of the members before it.
#[derive(Clone, Copy, Debug)]
pub struct MaskedCursor {
    member: u32,
    first_unit: u32,
}

impl MaskedCursor {
    /// Before the first unit.
    pub const START: MaskedCursor = MaskedCursor {
        member: 0,
        first_unit: 0,
    };
}

/// The tiles of a problem, or of every member of a batch, as work units.
#[derive(Clone, Copy, Debug)]
pub struct Tiles {
    tiles_m: u32,
    tiles_n: u32,
    /// Units down m and along n (of one member).
    units_m: u32,
    units_n: u32,
    members: u32,
    cluster: (u32, u32),
    group: u32,
}

impl Tiles {
    /// Tiles of `bm × bn` over an `m × n` C, in units of `cluster` tiles, ordered in groups of
    /// `group` unit-columns; `members` such problems one after the other.
    #[inline(always)]
    pub fn new(
        (m, n, members): (u32, u32, u32),
        bm: u32,
        bn: u32,
        cluster: (u32, u32),
        group: u32,
    ) -> Self {
        let (tiles_m, tiles_n) = (m.div_ceil(bm), n.div_ceil(bn));
        let (units_m, units_n) = (tiles_m.div_ceil(cluster.0), tiles_n.div_ceil(cluster.1));
        Tiles {
            tiles_m,
            tiles_n,
            units_m,
            units_n,
            members,
            cluster,
            group,
        }
    }

    /// Work units (cluster tiles), of all members.
    #[inline(always)]
    pub fn units(self) -> u32 {
        self.units_m * self.units_n * self.members
    }

    /// The tile of C that the block of cluster rank `rank` computes in unit `unit`. With
    /// clusters it may lie past C's edge (an odd number of tile-rows): the block still loads
    /// its share of the operands the cluster shares, and writes nothing.
    #[inline(always)]
    pub fn tile(self, unit: u32, rank: u32) -> Tile {
        // One member: no division (the divisor is 1, but ptxas cannot know it). `max(1)`: the
        // divisor is never 0 (m, n ≥ 1), and saying so spares the division its panic branch.
        let (member, unit) = if self.members == 1 {
            (0, unit)
        } else {
            let per_member = (self.units_m * self.units_n).max(1);
            (unit / per_member, unit % per_member)
        };
        let (un, um) = rasterise_in_groups(unit, self.units_n, self.units_m, self.group);
        Tile::of_member(
            um * self.cluster.0 + rank % self.cluster.0,
            un * self.cluster.1 + rank / self.cluster.0,
            member,
        )
    }

    /// The masked layout's tile of unit `unit`, `None` past the last: the units are the tiles
    /// below each member's count of columns (`columns(member)`, `bn` a tile's), member after
    /// member, each member's in the order of [`Tiles::tile`] over its filled unit-columns only.
    /// The walk still counts the capacity's units, so that its end stays what every lane
    /// computes alike; the empty ones come last, where they are skipped.
    ///
    /// `cursor` is where the last unit of this walk was found: a role's units only grow, so
    /// the member of the next is found by moving forward from there, and a whole walk reads
    /// each member's count once, whatever its units. (Scanning from member 0 for every unit, as
    /// this did first, cost a walk units × members steps: with DeepSeek-V3's 256 experts and
    /// 124 units a block, 32 000.) The counts are read four at a time, four loads in flight
    /// for every step that waits. With a count of n for every member the units are
    /// [`Tiles::tile`]'s, in its order: `wgmma-fp8-block:11` walks every layout this way
    /// ([`crate::pipeline::Kernel::PACKED_WALK`]).
    #[inline(always)]
    pub fn masked_tile(
        self,
        cursor: &mut MaskedCursor,
        unit: u32,
        rank: u32,
        bn: u32,
        columns: impl Fn(u32) -> u32,
    ) -> Option<Tile> {
        // A member's units: its unit-columns with tokens (a grouped kernel's clusters lie along
        // m: a unit-column is a tile-column; `columns` is at most n, so they are at most
        // `units_n`) down the unit-rows.
        let units_of = |member: u32| self.units_m * columns(member).div_ceil(bn);
        while cursor.member + 4 <= self.members {
            let four = [0, 1, 2, 3].map(|i| units_of(cursor.member + i));
            let units = four[0] + four[1] + four[2] + four[3];
            if unit < cursor.first_unit + units {
                break;
            }
            cursor.first_unit += units;
            cursor.member += 4;
        }
        while cursor.member < self.members {
            let units = units_of(cursor.member);
            if unit < cursor.first_unit + units {
                break;
            }
            cursor.first_unit += units;
            cursor.member += 1;
        }
        if cursor.member == self.members {
            return None;
        }
        let filled = columns(cursor.member).div_ceil(bn);
        let (un, um) =
            rasterise_in_groups(unit - cursor.first_unit, filled, self.units_m, self.group);
        Some(Tile::of_member(
            um * self.cluster.0 + rank % self.cluster.0,
            un * self.cluster.1 + rank / self.cluster.0,
            cursor.member,
        ))
    }

    /// Whether a tile lies (at least partly) inside C.
    #[inline(always)]
    pub fn inside(self, tile: Tile) -> bool {
        tile.row < self.tiles_m && tile.col < self.tiles_n
    }
}

/// A block's walk through the units: `first`, `first + step`, … below `end`.
#[derive(Clone, Copy, Debug)]
pub struct Walk {
    next: u32,
    step: u32,
    end: u32,
}

impl Walk {
    /// The walk of cluster `cluster` of `clusters` (a block without a cluster is a cluster of
    /// one) over `units` units.
    #[inline(always)]
    pub fn new(cluster: u32, clusters: u32, units: u32) -> Self {
        Walk {
            next: cluster,
            step: clusters,
            end: units,
        }
    }

    /// The unit the walk is at, without moving on (`None` past the end).
    #[inline(always)]
    pub fn current(&self) -> Option<u32> {
        (self.next < self.end).then_some(self.next)
    }

    /// The tile queue's walk ([`super::queue`]): on to the unit of ticket `ticket`. The first
    /// `step` units (one per cluster) take no ticket, so ticket `t` is unit `step + t`.
    #[inline(always)]
    pub fn to_ticket(&mut self, ticket: u32) {
        self.next = self.step.wrapping_add(ticket);
    }

    /// Whether the walk is at the unit of the launch's last ticket (`end − 1`: every cluster
    /// takes one per unit it computes, `end` in all).
    #[inline(always)]
    pub fn at_last_ticket(&self) -> bool {
        self.next == self.step.wrapping_add(self.end - 1)
    }
}

impl Iterator for Walk {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        (self.next < self.end).then(|| {
            let unit = self.next;
            self.next += self.step;
            unit
        })
    }
}

/// Stream-k (Osama et al., "Stream-K: Work-centric Parallel Decomposition for Dense
/// Matrix-Matrix Multiplication on the GPU", 2023; CUTLASS's `PersistentTileSchedulerSm90StreamK`):
/// the grid divides the *iterations* (one slice of k of one tile), not the tiles, as evenly as
/// whole iterations go. Block `b` of `G` takes iterations `⌊b·T/G⌋ .. ⌊(b+1)·T/G⌋` of the `T =
/// tiles × slices` in tile order, so every block streams the same share of A and B whatever
/// the number of tiles: no wave is left half empty.
///
/// A block's range cuts the tiles it crosses into *segments*. A tile covered by one segment is
/// computed whole; a tile shared by several blocks is computed in parts, one per block, that
/// the last of them to finish adds ([`crate::pipeline::stream`]). Only a block's first and last
/// segments can be parts: each has a workspace slab, `2b` and `2b + 1`, so the workspace is
/// `2·G` slabs whatever the problem.
///
/// With more tiles than blocks, the whole waves are better computed a tile per block (no parts
/// to add, and the blocks working together cover a compact patch of C, whose operands stay in
/// L2): [`StreamK::hybrid`] streams only the last partial wave and one whole wave before it,
/// as CUTLASS's hybrid stream-k does.
#[derive(Clone, Copy, Debug)]
pub struct StreamK {
    /// The next iteration of this block, and one past its last.
    next: u64,
    end: u64,
    slices: u64,
    blocks: u64,
    total: u64,
    block: u32,
    /// The first streamed tile's number (the data-parallel tiles come before).
    first_tile: u32,
}

/// One segment of a stream-k block: `slices` slices of tile number `tile` from `first_slice`;
/// part `part` of the tile's `parts`, whose part 0 has workspace slab `slab0` (part `j > 0`
/// slab `2·(slab0 / 2 + j)`: [`Segment::slab`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub tile: u32,
    pub first_slice: u32,
    pub slices: u32,
    pub part: u32,
    pub parts: u32,
    pub slab0: u32,
}

impl Segment {
    /// The workspace slab of part `j` of the tile: part 0 is its first block's first or last
    /// segment, every later part the first segment of its block.
    #[inline(always)]
    pub fn slab(slab0: u32, j: u32) -> u32 {
        if j == 0 {
            slab0
        } else {
            2 * (slab0 / 2 + j)
        }
    }
}

impl StreamK {
    /// Block `block` of `blocks`, over `tiles` tiles of `slices` slices each. Every block must
    /// have an iteration (`blocks ≤ tiles × slices`: the host sizes the grid so), or a tile
    /// would count a part that never arrives.
    #[inline(always)]
    pub fn new(block: u32, blocks: u32, tiles: u32, slices: u32) -> Self {
        Self::from_tile(block, blocks, 0, tiles, slices)
    }

    /// Tiles `first_tile..first_tile + tiles` streamed.
    #[inline(always)]
    fn from_tile(block: u32, blocks: u32, first_tile: u32, tiles: u32, slices: u32) -> Self {
        let (blocks64, total) = (blocks as u64, tiles as u64 * slices as u64);
        StreamK {
            next: block as u64 * total / blocks64,
            end: (block as u64 + 1) * total / blocks64,
            slices: slices as u64,
            blocks: blocks64,
            total,
            block,
            first_tile,
        }
    }

    /// The hybrid: of `tiles`, the tiles of all but the last whole wave go a tile per block
    /// (the [`Walk`] returned, over tiles `0..data_parallel`), the rest is streamed (tiles
    /// `data_parallel..tiles`). With at most a wave of tiles, or whole waves only, nothing or
    /// everything is streamed.
    #[inline(always)]
    pub fn hybrid(block: u32, blocks: u32, tiles: u32, slices: u32) -> (Walk, StreamK) {
        let streamed = if tiles <= blocks {
            tiles
        } else if tiles.is_multiple_of(blocks) {
            0
        } else {
            tiles % blocks + blocks
        };
        let data_parallel = tiles - streamed;
        (
            Walk::new(block, blocks, data_parallel),
            Self::from_tile(block, blocks, data_parallel, streamed, slices),
        )
    }

    /// Equal parts: with at most as many tiles as blocks, each tile cut into the same number of
    /// parts, as many as the blocks allow (at most one per slice), and each part one block's: no
    /// block crosses from one tile into the next, so none pays a second segment's fixup, and
    /// the parts of a tile run side by side and end together. The blocks left over (fewer than
    /// the tiles) get nothing: in `wgmma-narrow`, 17 tiles in 119 of 132 blocks ran 10% faster
    /// than the hybrid on all 132, 48 in 96 7% faster, 56 in 112 3% slower. With more tiles
    /// than blocks, [`StreamK::hybrid`].
    #[inline(always)]
    pub fn equal_parts(block: u32, blocks: u32, tiles: u32, slices: u32) -> (Walk, StreamK) {
        if tiles > blocks {
            return Self::hybrid(block, blocks, tiles, slices);
        }
        let used = tiles * (blocks / tiles).min(slices.max(1));
        let stream = if block < used {
            Self::from_tile(block, used, 0, tiles, slices)
        } else {
            StreamK {
                next: 0,
                end: 0,
                ..Self::from_tile(0, used, 0, tiles, slices)
            }
        };
        (Walk::new(block, blocks, 0), stream)
    }

    /// The block whose range holds iteration `x`: the largest `b` with `⌊b·T/G⌋ ≤ x`.
    #[inline(always)]
    fn block_of(&self, x: u64) -> u64 {
        ((x + 1) * self.blocks - 1) / self.total
    }

    /// The first iteration of block `b`.
    #[inline(always)]
    fn start_of(&self, b: u64) -> u64 {
        b * self.total / self.blocks
    }
}

impl Iterator for StreamK {
    type Item = Segment;

    #[inline(always)]
    fn next(&mut self) -> Option<Segment> {
        if self.next >= self.end {
            return None;
        }
        let tile = self.next / self.slices;
        let (tile_start, tile_end) = (tile * self.slices, (tile + 1) * self.slices);
        let stop = tile_end.min(self.end);
        let first_block = self.block_of(tile_start);
        // Part 0 is its block's first segment when the block starts with the tile, else its last.
        let slab0 = 2 * first_block as u32 + (self.start_of(first_block) < tile_start) as u32;
        let segment = Segment {
            tile: self.first_tile + tile as u32,
            first_slice: (self.next - tile_start) as u32,
            slices: (stop - self.next) as u32,
            part: (self.block as u64 - first_block) as u32,
            parts: (self.block_of(tile_end - 1) - first_block + 1) as u32,
            slab0,
        };
        self.next = stop;
        Some(segment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every iteration is covered once, each tile's parts are numbered 0.. in block order with
    /// the same count, and the slabs of split tiles' parts are distinct, below 2·blocks, and the
    /// ones [`Segment::slab`] computes from part 0's.
    #[test]
    fn stream_k_covers_every_iteration_once() {
        for (blocks, tiles, slices) in [
            (132, 17, 112),
            (132, 48, 64),
            (7, 3, 5),
            (5, 9, 1),
            (3, 1, 3),
            (2, 2, 1),
            (9, 9, 1),
            (4, 30, 7),
        ] {
            let mut covered = vec![0u32; (tiles * slices) as usize];
            let mut parts_seen = vec![Vec::new(); tiles as usize];
            let mut slabs = Vec::new();
            for b in 0..blocks {
                for s in StreamK::new(b, blocks, tiles, slices) {
                    assert!(s.slices > 0 && s.first_slice + s.slices <= slices);
                    for i in s.first_slice..s.first_slice + s.slices {
                        covered[(s.tile * slices + i) as usize] += 1;
                    }
                    parts_seen[s.tile as usize].push((s.part, s.parts, s.slab0));
                    if s.parts > 1 {
                        slabs.push(Segment::slab(s.slab0, s.part));
                        // Its own slab: its block's first segment (2b) or its last (2b + 1).
                        assert!(slabs.last().unwrap() / 2 == b);
                    }
                }
            }
            assert!(covered.iter().all(|&c| c == 1), "{blocks} {tiles} {slices}");
            for seen in &parts_seen {
                let (parts, slab0) = (seen[0].1, seen[0].2);
                let indices: Vec<u32> = seen.iter().map(|p| p.0).collect();
                assert!(seen.iter().all(|p| p.1 == parts && p.2 == slab0));
                assert_eq!(indices, (0..parts).collect::<Vec<_>>());
            }
            let count = slabs.len();
            slabs.sort();
            slabs.dedup();
            assert_eq!(slabs.len(), count, "{blocks} {tiles} {slices}");
            assert!(slabs.iter().all(|&s| s < 2 * blocks));
        }
    }

    /// Equal parts: every tile in the same number of parts, each a block's only segment, the
    /// blocks past a multiple of the tiles idle; more tiles than blocks as the hybrid.
    #[test]
    fn equal_parts_give_each_block_one_part_of_one_tile() {
        for (blocks, tiles, slices, parts) in [
            (132, 33, 56, 4),
            (132, 64, 56, 2),
            (132, 17, 56, 7),
            (132, 56, 56, 2),
            (3, 1, 11, 3),
            (6, 2, 3, 3),
        ] {
            let mut covered = vec![0u32; (tiles * slices) as usize];
            let mut busy = 0;
            for b in 0..blocks {
                let (walk, stream) = StreamK::equal_parts(b, blocks, tiles, slices);
                assert_eq!(walk.count(), 0);
                let segments: Vec<Segment> = stream.collect();
                assert!(segments.len() <= 1, "{blocks} {tiles}: block {b}");
                for s in &segments {
                    assert_eq!(s.parts, parts, "{blocks} {tiles} {slices}");
                    for i in s.first_slice..s.first_slice + s.slices {
                        covered[(s.tile * slices + i) as usize] += 1;
                    }
                }
                busy += segments.len() as u32;
            }
            assert_eq!(busy, tiles * parts);
            assert!(covered.iter().all(|&c| c == 1), "{blocks} {tiles} {slices}");
        }
        // More tiles than blocks: the hybrid.
        let (walk, stream) = StreamK::equal_parts(5, 132, 200, 7);
        let (hybrid_walk, hybrid) = StreamK::hybrid(5, 132, 200, 7);
        assert_eq!(walk.count(), hybrid_walk.count());
        assert_eq!(stream.collect::<Vec<_>>(), hybrid.collect::<Vec<_>>());
    }

    /// The hybrid streams nothing with whole waves, everything with at most one, else the
    /// partial wave and one whole wave; the walk and the stream cover every tile once.
    #[test]
    fn hybrid_streams_the_last_waves() {
        for (blocks, tiles, streamed) in [
            (132, 1024, 100 + 132),
            (132, 264, 0),
            (132, 100, 100),
            (4, 9, 5),
        ] {
            let mut seen = vec![0u32; tiles as usize];
            for b in 0..blocks {
                let (walk, stream) = StreamK::hybrid(b, blocks, tiles, 3);
                for t in walk {
                    assert!(t < tiles - streamed);
                    seen[t as usize] += 3;
                }
                for s in stream {
                    assert!(s.tile >= tiles - streamed);
                    seen[s.tile as usize] += s.slices;
                }
            }
            assert!(seen.iter().all(|&c| c == 3), "{blocks} {tiles}");
        }
    }

    /// With every member's count n, the packed walk is the plain one, unit for unit: what
    /// lets `wgmma-fp8-block:11` run the other layouts on it.
    #[test]
    fn the_packed_walk_over_full_counts_is_the_plain_walk() {
        for ((m, n, members), cluster) in [
            ((1000, 700, 1), (1, 1)),
            ((7 * 192, 1024, 3), (2, 1)),
            ((136, 200, 4), (1, 1)),
        ] {
            let tiles = Tiles::new((m, n, members), 128, 128, cluster, 8);
            let mut cursors = [MaskedCursor::START; 2];
            for unit in 0..tiles.units() {
                for rank in 0..cluster.0 {
                    let cursor = &mut cursors[rank as usize];
                    let packed = tiles.masked_tile(cursor, unit, rank, 128, |_| n);
                    assert_eq!(
                        packed,
                        Some(tiles.tile(unit, rank)),
                        "{m} {n} {members} {unit}"
                    );
                }
            }
        }
    }

    /// A block's walk (units `block`, `block + blocks`, …) with one cursor finds each unit's
    /// tile where counting the members' units from the first finds it: a decode step's 256
    /// experts of which a few have tokens, members whose units end inside a step of four, and
    /// walks whose first unit lies past several members.
    #[test]
    fn a_cursor_moving_with_the_walk_finds_what_counting_from_the_first_member_finds() {
        let mut sparse = vec![0u32; 256];
        for (member, count) in [(3, 1), (4, 16), (77, 5), (78, 1), (200, 9), (255, 2)] {
            sparse[member] = count;
        }
        let ragged = vec![17, 0, 0, 0, 0, 33, 1, 0, 64, 0, 0];
        let (m, n, bm, bn, group) = (4096, 64, 64, 16, 8);
        for counts in [sparse, ragged] {
            let members = counts.len() as u32;
            let tiles = Tiles::new((m, n, members), bm, bn, (1, 1), group);
            let units_m = m / bm;
            // The packed order, counted out member by member.
            let counted = |unit: u32| {
                let mut first = 0;
                for (member, &count) in counts.iter().enumerate() {
                    let filled = count.div_ceil(bn);
                    if unit < first + units_m * filled {
                        let (un, um) = rasterise_in_groups(unit - first, filled, units_m, group);
                        return Some(Tile::of_member(um, un, member as u32));
                    }
                    first += units_m * filled;
                }
                None
            };
            for blocks in [1, 7, 132] {
                for block in 0..blocks {
                    let mut cursor = MaskedCursor::START;
                    for unit in (block..tiles.units()).step_by(blocks as usize) {
                        let walked =
                            tiles.masked_tile(&mut cursor, unit, 0, bn, |g| counts[g as usize]);
                        assert_eq!(walked, counted(unit), "{blocks} blocks, unit {unit}");
                    }
                }
            }
        }
    }

    /// The masked layout's units: every tile below a member's count exactly once, clusters
    /// along m included (both ranks of a unit in the same column), and `None` for the units
    /// past them; the empty members and the capacity's empty columns never come up.
    #[test]
    fn masked_units_are_the_tiles_below_the_counts() {
        let bn = 128;
        for (cluster, counts) in [
            ((1, 1), vec![1024]),
            ((1, 1), vec![800, 0, 1, 512, 1000]),
            ((2, 1), vec![300, 129, 0, 1024]),
        ] {
            let (m, n) = (7 * 192, 1024);
            let members = counts.len() as u32;
            let tiles = Tiles::new((m, n, members), 192, bn, cluster, 8);
            let mut seen = std::collections::HashMap::new();
            let mut last_found = None;
            let mut cursors = [MaskedCursor::START; 2];
            for unit in 0..tiles.units() {
                for rank in 0..cluster.0 {
                    let cursor = &mut cursors[rank as usize];
                    match tiles.masked_tile(cursor, unit, rank, bn, |g| counts[g as usize]) {
                        Some(t) => {
                            assert!(last_found.is_none_or(|u| u + 1 >= unit), "a gap at {unit}");
                            last_found = Some(unit);
                            assert!(t.col * bn < counts[t.member as usize], "{t:?}");
                            assert_eq!(t.group, t.member);
                            // (An odd tile-row's cluster has a rank past C's edge.)
                            if tiles.inside(t) {
                                *seen.entry((t.row, t.col, t.member)).or_insert(0) += 1;
                            }
                        }
                        None => assert!(last_found.is_none_or(|u| u < unit)),
                    }
                }
            }
            let filled: u32 = counts
                .iter()
                .map(|&c| c.div_ceil(bn) * m.div_ceil(192))
                .sum();
            let units_m = m.div_ceil(192).div_ceil(cluster.0);
            assert_eq!(seen.len() as u32, filled, "{counts:?}");
            assert!(seen.values().all(|&c| c == 1));
            // The packed units are as many as the filled tiles need, no more.
            let filled_units: u32 = counts.iter().map(|&c| c.div_ceil(bn) * units_m).sum();
            assert_eq!(last_found.map_or(0, |u| u + 1), filled_units);
        }
    }
}

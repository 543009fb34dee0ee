//! The tile scheduler of a persistent grid: which output tiles a block computes, in which order.
//!
//! The grid has at most one block per multiprocessor (the host caps it), and block `b` takes
//! work units `b`, `b + grid`, `b + 2·grid`, … A unit is one tile of C, or with clusters one
//! tile per block of the cluster (CUTLASS's cluster shape: `cluster.0` tiles down m times
//! `cluster.1` tiles along n), so that the blocks of a cluster compute neighbouring tiles that
//! share an operand. Units are numbered in the grouped order of [`rasterise_in_groups`]: the
//! blocks working at the same time cover a compact patch of C, whose rows of A and columns of
//! B stay in L2 while they are read.
use crate::gemm::rasterise_in_groups;

/// The tiles of one problem, as work units.
#[derive(Clone, Copy, Debug)]
pub struct Tiles {
    tiles_m: u32,
    tiles_n: u32,
    /// Units down m and along n.
    units_m: u32,
    units_n: u32,
    cluster: (u32, u32),
    group: u32,
}

impl Tiles {
    /// Tiles of `bm × bn` over an `m × n` C, in units of `cluster` tiles, ordered in groups of
    /// `group` unit-rows.
    #[inline(always)]
    pub fn new(m: u32, n: u32, bm: u32, bn: u32, cluster: (u32, u32), group: u32) -> Self {
        let (tiles_m, tiles_n) = (m.div_ceil(bm), n.div_ceil(bn));
        Tiles {
            tiles_m,
            tiles_n,
            units_m: tiles_m.div_ceil(cluster.0),
            units_n: tiles_n.div_ceil(cluster.1),
            cluster,
            group,
        }
    }

    /// Work units (cluster tiles).
    #[inline(always)]
    pub fn units(self) -> u32 {
        self.units_m * self.units_n
    }

    /// The (tile-row, tile-column) of C that the block of cluster rank `rank` computes in unit
    /// `unit`. With clusters it may lie past C's edge (an odd number of tile-rows): the block
    /// still loads its share of the operands the cluster shares, and writes nothing.
    #[inline(always)]
    pub fn tile(self, unit: u32, rank: u32) -> (u32, u32) {
        let (um, un) = rasterise_in_groups(unit, self.units_m, self.units_n, self.group);
        (
            um * self.cluster.0 + rank % self.cluster.0,
            un * self.cluster.1 + rank / self.cluster.0,
        )
    }

    /// Whether a tile lies (at least partly) inside C.
    #[inline(always)]
    pub fn inside(self, tile: (u32, u32)) -> bool {
        tile.0 < self.tiles_m && tile.1 < self.tiles_n
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

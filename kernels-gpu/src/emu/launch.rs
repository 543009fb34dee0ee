//! A launch as the emulator's parts see it: its shape, the global memory it may touch, and
//! where the dynamic shared-memory pool starts.
/// The shared-window address of the dynamic pool in the emulator. The PTX declares the pool
/// `.align 16`; the emulator gives exactly that, so that a kernel assuming more (a 1024-byte
/// swizzle atom, a 128-byte TMA destination) without aligning its own offsets fails here.
pub const SHARED_POOL_BASE: u32 = 16;

/// Grid and block shape (x, y), the dynamic shared-memory size of a launch, and its cluster
/// shape in blocks ((1, 1): no cluster; the grid must be a multiple of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: (u32, u32),
    pub block: (u32, u32),
    pub shared_bytes: u32,
    pub cluster: (u32, u32),
}

/// A region of host memory the kernel may access as global memory.
#[derive(Clone, Copy, Debug)]
pub struct Buffer {
    pub name: &'static str,
    pub address: usize,
    pub bytes: usize,
}

pub(super) struct Launch<'a> {
    pub(super) kernel_name: &'a str,
    pub(super) shape: LaunchShape,
    pub(super) buffers: &'a [Buffer],
    /// A programmatic dependent launch's buffers that the kernel before it may still be
    /// writing ([`super::launch_dependent`]); empty for an ordinary launch.
    pub(super) written_before: &'a [&'a str],
}

//! Where a call's operands live ([`Memory`], [`MemoryMut`]) and what a program may pass as one
//! ([`Operand`], [`OperandMut`]): host slices and vectors (the emulator), `cust`'s device slices
//! and buffers, the handle's own [`Buffer`]s, and a grouped GEMM's [`Table`].
use super::Element;
use cust::memory::{DeviceBuffer, DeviceSlice};

/// Where an operand lives, as the call sees it.
pub enum Memory<'a, T> {
    /// Device memory of the handle's context.
    Device {
        /// The first element's device address.
        address: u64,
        /// Elements.
        len: usize,
    },
    /// Host memory, for the emulator.
    Host(&'a [T]),
}

/// Where the output lives.
pub enum MemoryMut<'a, T> {
    /// Device memory of the handle's context.
    Device {
        /// The first element's device address.
        address: u64,
        /// Elements.
        len: usize,
    },
    /// Host memory, for the emulator.
    Host(&'a mut [T]),
}

impl<T> MemoryMut<'_, T> {
    /// The same place, read-only.
    pub fn as_memory(&self) -> Memory<'_, T> {
        match self {
            MemoryMut::Device { address, len } => Memory::Device {
                address: *address,
                len: *len,
            },
            MemoryMut::Host(h) => Memory::Host(h),
        }
    }
}

/// A matrix the call reads: device memory (`cust`'s [`DeviceBuffer`] or [`DeviceSlice`], of
/// the element's bits: `u16` for bf16 and f16) on the GPU, host memory (`[T]`, `Vec<T>`) on the
/// emulator, or a [`Buffer`] made by the handle.
pub trait Operand<T> {
    /// Where the elements are.
    fn memory(&self) -> Memory<'_, T>;
}

/// The matrix the call writes (C).
pub trait OperandMut<T>: Operand<T> {
    /// Where the elements are, to be written.
    fn memory_mut(&mut self) -> MemoryMut<'_, T>;
}

impl<T: Element> Operand<T> for [T] {
    fn memory(&self) -> Memory<'_, T> {
        Memory::Host(self)
    }
}

impl<T: Element> OperandMut<T> for [T] {
    fn memory_mut(&mut self) -> MemoryMut<'_, T> {
        MemoryMut::Host(self)
    }
}

impl<T: Element> Operand<T> for Vec<T> {
    fn memory(&self) -> Memory<'_, T> {
        Memory::Host(self)
    }
}

impl<T: Element> OperandMut<T> for Vec<T> {
    fn memory_mut(&mut self) -> MemoryMut<'_, T> {
        MemoryMut::Host(self)
    }
}

/// Device memory of each element type: its own bits for f32 and f64, `u16` for bf16 and f16.
macro_rules! device_operand {
    ($t:ty, $bits:ty) => {
        impl Operand<$t> for DeviceSlice<$bits> {
            fn memory(&self) -> Memory<'_, $t> {
                Memory::Device {
                    address: self.as_device_ptr().as_raw(),
                    len: self.len(),
                }
            }
        }
        impl OperandMut<$t> for DeviceSlice<$bits> {
            fn memory_mut(&mut self) -> MemoryMut<'_, $t> {
                MemoryMut::Device {
                    address: self.as_device_ptr().as_raw(),
                    len: self.len(),
                }
            }
        }
        impl Operand<$t> for DeviceBuffer<$bits> {
            fn memory(&self) -> Memory<'_, $t> {
                Operand::<$t>::memory(&**self)
            }
        }
        impl OperandMut<$t> for DeviceBuffer<$bits> {
            fn memory_mut(&mut self) -> MemoryMut<'_, $t> {
                OperandMut::<$t>::memory_mut(&mut **self)
            }
        }
    };
}
/// A grouped GEMM's table ([`GemmConfig::contiguous_groups`](crate::api::GemmConfig::contiguous_groups), [`GemmConfig::masked_groups`](crate::api::GemmConfig::masked_groups)):
/// 32-bit words on the host (the emulator) or the device.
impl Operand<u32> for [u32] {
    fn memory(&self) -> Memory<'_, u32> {
        Memory::Host(self)
    }
}

impl Operand<u32> for Vec<u32> {
    fn memory(&self) -> Memory<'_, u32> {
        Memory::Host(self)
    }
}

impl Operand<u32> for DeviceSlice<u32> {
    fn memory(&self) -> Memory<'_, u32> {
        Memory::Device {
            address: self.as_device_ptr().as_raw(),
            len: self.len(),
        }
    }
}

impl Operand<u32> for DeviceBuffer<u32> {
    fn memory(&self) -> Memory<'_, u32> {
        Operand::<u32>::memory(&**self)
    }
}

device_operand!(f32, f32);
device_operand!(f64, f64);
device_operand!(half::bf16, u16);
device_operand!(half::f16, u16);

/// A matrix in the memory the handle runs on: the device's, or the host's for the emulator.
/// Made by [`Gemm::upload`](crate::api::Gemm::upload) and [`Gemm::zeros`](crate::api::Gemm::zeros), read back by [`Gemm::download`](crate::api::Gemm::download), so that the
/// same program runs on both.
pub enum Buffer<T: Element> {
    /// On the GPU, as the element's bits (`u16` for bf16 and f16).
    Device(DeviceBuffer<T::Bits>),
    /// On the host, for the emulator.
    Host(Vec<T>),
}

impl<T: Element> Operand<T> for Buffer<T> {
    fn memory(&self) -> Memory<'_, T> {
        match self {
            Buffer::Device(d) => Memory::Device {
                address: d.as_device_ptr().as_raw(),
                len: d.len(),
            },
            Buffer::Host(h) => Memory::Host(h),
        }
    }
}

impl<T: Element> OperandMut<T> for Buffer<T> {
    fn memory_mut(&mut self) -> MemoryMut<'_, T> {
        match self {
            Buffer::Device(d) => MemoryMut::Device {
                address: d.as_device_ptr().as_raw(),
                len: d.len(),
            },
            Buffer::Host(h) => MemoryMut::Host(h),
        }
    }
}

impl<T: Element> Buffer<T> {
    /// Elements `range` of the buffer as an operand (on the device, or the host's slice): a
    /// matrix that lies inside a larger buffer, as one expert's weights inside all of them.
    /// Panics where the range is not inside the buffer, as slicing does.
    pub fn range(&self, range: std::ops::Range<usize>) -> Memory<'_, T> {
        match self {
            Buffer::Device(d) => {
                let (address, len) = device_range(d, range);
                Memory::Device { address, len }
            }
            Buffer::Host(h) => Memory::Host(&h[range]),
        }
    }

    /// [`Buffer::range`] to be written.
    pub fn range_mut(&mut self, range: std::ops::Range<usize>) -> MemoryMut<'_, T> {
        match self {
            Buffer::Device(d) => {
                let (address, len) = device_range(d, range);
                MemoryMut::Device { address, len }
            }
            Buffer::Host(h) => MemoryMut::Host(&mut h[range]),
        }
    }
}

/// The address and length of elements `range` of a device buffer; panics outside it.
fn device_range<B: cust::memory::DeviceCopy>(
    d: &DeviceBuffer<B>,
    range: std::ops::Range<usize>,
) -> (u64, usize) {
    let len = d.len();
    assert!(
        range.start <= range.end && range.end <= len,
        "{range:?} outside a buffer of {len} elements"
    );
    let offset = (range.start * size_of::<B>()) as u64;
    (d.as_device_ptr().as_raw() + offset, range.len())
}

/// A part of a buffer ([`Buffer::range`]) is an operand.
impl<T: Element> Operand<T> for Memory<'_, T> {
    fn memory(&self) -> Memory<'_, T> {
        match self {
            Memory::Device { address, len } => Memory::Device {
                address: *address,
                len: *len,
            },
            Memory::Host(h) => Memory::Host(h),
        }
    }
}

impl<T: Element> Operand<T> for MemoryMut<'_, T> {
    fn memory(&self) -> Memory<'_, T> {
        self.as_memory()
    }
}

impl<T: Element> OperandMut<T> for MemoryMut<'_, T> {
    fn memory_mut(&mut self) -> MemoryMut<'_, T> {
        match self {
            MemoryMut::Device { address, len } => MemoryMut::Device {
                address: *address,
                len: *len,
            },
            MemoryMut::Host(h) => MemoryMut::Host(h),
        }
    }
}

/// A grouped GEMM's table in the memory the handle runs on ([`Gemm::upload_table`](crate::api::Gemm::upload_table)).
pub enum Table {
    /// On the GPU.
    Device(DeviceBuffer<u32>),
    /// On the host, for the emulator.
    Host(Vec<u32>),
}

impl Operand<u32> for Table {
    fn memory(&self) -> Memory<'_, u32> {
        match self {
            Table::Device(d) => Operand::<u32>::memory(d),
            Table::Host(h) => Memory::Host(h),
        }
    }
}

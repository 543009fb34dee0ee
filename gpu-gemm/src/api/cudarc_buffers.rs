//! Buffers and streams of [cudarc](https://docs.rs/cudarc), the CUDA binding most Rust ML
//! crates build on: a program that holds its tensors as `CudaSlice`s passes them to a plan
//! without a copy, and the GEMM takes its place in the order of the program's stream.
//!
//! cudarc keeps each slice's last read and write as events, and makes a stream that touches the
//! slice wait for them ([`DevicePtr::device_ptr`]). A plan enqueues on the handle's own stream,
//! so [`Plan::enqueue_cudarc`] joins the two: the handle's stream waits for everything enqueued
//! on the program's stream so far (the slices' pending writes included), the GEMM runs, and the
//! program's stream waits for the GEMM before its next work. The slices' guards are dropped
//! only then, so the events cudarc records for A, B and C come after the GEMM: a later kernel
//! on any cudarc stream that reads C waits for it. All of it is stream work: it can be captured
//! into a CUDA graph on the program's stream.
use super::{Element, Gemm, GemmError, Memory, MemoryMut, Operand, OperandMut, Plan, Result};
use cudarc::driver::sys::{
    cuEventCreate, cuEventDestroy_v2, cuEventRecord, cuStreamWaitEvent, CUevent, CUevent_flags,
    CUresult, CUstream,
};
use cudarc::driver::{CudaContext, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;

impl Gemm {
    /// A GPU handle on cudarc's context (its device's primary context, as [`Gemm::new`] uses
    /// for device 0), with a stream of its own: enqueue on cudarc's buffers with
    /// [`Plan::enqueue_cudarc`].
    pub fn on_cudarc(context: &Arc<CudaContext>) -> Result<Self> {
        context
            .bind_to_thread()
            .map_err(|e| GemmError::NoGpu(format!("cannot make cudarc's context current: {e}")))?;
        Gemm::on_current_context(None)
    }
}

/// Two events that order the handle's stream after the program's and the program's after the
/// GEMM.
pub(super) struct Joins {
    before: CUevent,
    after: CUevent,
}

impl Joins {
    fn new() -> Result<Self> {
        let create = || {
            let mut event = std::ptr::null_mut();
            // SAFETY: one out-pointer; the context is current (the handle was made on it).
            match unsafe {
                cuEventCreate(&mut event, CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
            } {
                CUresult::CUDA_SUCCESS => Ok(event),
                status => Err(GemmError::Launch(format!(
                    "cuEventCreate failed: {status:?}"
                ))),
            }
        };
        Ok(Joins {
            before: create()?,
            after: create()?,
        })
    }
}

impl Drop for Joins {
    fn drop(&mut self) {
        // SAFETY: both events were created by `new` and are destroyed once.
        unsafe {
            cuEventDestroy_v2(self.before);
            cuEventDestroy_v2(self.after);
        }
    }
}

/// `waiting` waits on `stream` for what `stream` has enqueued so far.
fn join(event: CUevent, stream: CUstream, waiting: CUstream) -> Result<()> {
    // SAFETY: a live event and two streams of the current context.
    let status = unsafe {
        match cuEventRecord(event, stream) {
            CUresult::CUDA_SUCCESS => cuStreamWaitEvent(waiting, event, 0),
            failed => failed,
        }
    };
    match status {
        CUresult::CUDA_SUCCESS => Ok(()),
        status => Err(GemmError::Launch(format!(
            "ordering the GEMM with cudarc's stream failed: {status:?}"
        ))),
    }
}

/// A device range as the plan checks and reads it.
struct Raw {
    address: u64,
    len: usize,
}

impl<T> Operand<T> for Raw {
    fn memory(&self) -> Memory<'_, T> {
        Memory::Device {
            address: self.address,
            len: self.len,
        }
    }
}

impl<T> OperandMut<T> for Raw {
    fn memory_mut(&mut self) -> MemoryMut<'_, T> {
        MemoryMut::Device {
            address: self.address,
            len: self.len,
        }
    }
}

impl<T: Element> Plan<'_, T> {
    /// [`Plan::enqueue`] on cudarc's slices (or views) in the order of cudarc's `stream`: the
    /// GEMM starts after the work already on `stream` and the work enqueued on `stream`
    /// afterwards starts after it. `E` is the slices' element type, of `T`'s size (`f32` for
    /// f32; `half::bf16`, `half::f16` or `u16` for the 16-bit types).
    pub fn enqueue_cudarc<E>(
        &mut self,
        stream: &Arc<CudaStream>,
        a: &impl DevicePtr<E>,
        b: &impl DevicePtr<E>,
        c: &mut impl DevicePtrMut<E>,
    ) -> Result<()> {
        if size_of::<E>() != size_of::<T>() {
            return Err(GemmError::InvalidConfig(format!(
                "cudarc slices of {}-byte elements given to a GEMM of {} ({} bytes)",
                size_of::<E>(),
                T::DTYPE.name(),
                size_of::<T>()
            )));
        }
        let gpu_stream = match self.gemm.stream() {
            Some(s) => s.as_inner() as CUstream,
            None => {
                return Err(GemmError::WrongMemory {
                    operand: 'A',
                    found: "device",
                    needs: "host",
                    backend: self.gemm.device(),
                })
            }
        };
        if self.joins.is_none() {
            self.joins = Some(Joins::new()?);
        }
        let (a_len, b_len, c_len) = (a.len(), b.len(), c.len());
        // The guards record cudarc's read and write events when dropped: after the join below.
        let (a_address, _a_read) = a.device_ptr(stream);
        let (b_address, _b_read) = b.device_ptr(stream);
        let (c_address, _c_written) = c.device_ptr_mut(stream);
        let joins = self.joins.as_ref().expect("made above");
        let (before, after) = (joins.before, joins.after);
        let program = stream.cu_stream();
        join(before, program, gpu_stream)?;
        self.enqueue(
            &Raw {
                address: a_address,
                len: a_len,
            },
            &Raw {
                address: b_address,
                len: b_len,
            },
            &mut Raw {
                address: c_address,
                len: c_len,
            },
        )?;
        join(after, gpu_stream, program)
    }
}

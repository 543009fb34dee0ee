//! A chain of enqueues recorded once and replayed as one launch: a CUDA graph.
//!
//! A decode step is dozens of GEMMs whose shapes and buffers never change from one token to
//! the next. Enqueued one by one, each costs the host a few microseconds and reaches the GPU
//! only when the host gets to it; captured into a graph ([`Gemm::capture`]), the whole chain
//! is one launch ([`Graph::launch`]) whose kernels the GPU starts back to back. What a capture
//! records is stream work only: [`Plan::enqueue`](crate::api::Plan::enqueue) is (its tensor
//! maps go up by an asynchronous copy, captured as a node of the graph); [`Gemm::run`], which
//! allocates and waits, is not, and breaks the capture.
//!
//! The graph reads the plans' tensor maps and workspaces and the buffers as they were when it
//! was recorded, so it borrows them for its life: the closure given to [`Gemm::capture`] is
//! kept by the graph, and the borrow checker keeps the plans and buffers alive as long.
//!
//! On the emulator, which runs each GEMM when it is enqueued, a graph is its closure: each
//! launch calls it again.
use super::{Gemm, GemmError, Result};
use crate::run::Backend;
use cudarc::driver::sys::{
    cuGraphDestroy, cuGraphExecDestroy, cuGraphInstantiateWithFlags, cuGraphLaunch,
    cuStreamBeginCapture_v2, cuStreamEndCapture, CUgraph, CUgraphExec, CUresult, CUstream,
    CUstreamCaptureMode,
};
use cust::event::{Event, EventFlags};
use std::time::Instant;

/// The work a closure enqueued on a handle's stream, recorded once ([`Gemm::capture`]) and
/// launched as often as needed.
pub struct Graph<'a> {
    gemm: &'a Gemm,
    recorded: Recorded<'a>,
}

enum Recorded<'a> {
    /// The captured graph, instantiated. The closure is kept only for what it borrows.
    Gpu {
        graph: CUgraph,
        exec: CUgraphExec,
        stream: CUstream,
        _record: Box<dyn FnMut() -> Result<()> + 'a>,
    },
    /// The emulator's graph: the closure, run again at each launch.
    Emulator(Box<dyn FnMut() -> Result<()> + 'a>),
}

fn driver(call: &str, status: CUresult) -> Result<()> {
    match status {
        CUresult::CUDA_SUCCESS => Ok(()),
        status => Err(GemmError::Launch(format!("{call} failed: {status:?}"))),
    }
}

impl Gemm {
    /// Records what `record` enqueues on this handle's stream into a graph, without running
    /// it (on the emulator: runs it once, as every launch will). The stream must have nothing
    /// in flight that the recording depends on; an enqueue that cannot be recorded (one that
    /// waits or allocates) fails, and so does the capture.
    pub fn capture<'a>(&'a self, mut record: impl FnMut() -> Result<()> + 'a) -> Result<Graph<'a>> {
        let stream = match &self.backend {
            Backend::Emulator => {
                record()?;
                return Ok(Graph {
                    gemm: self,
                    recorded: Recorded::Emulator(Box::new(record)),
                });
            }
            Backend::Gpu(gpu) => gpu.stream().as_inner() as CUstream,
        };
        // Thread-local: a call of another thread (an allocation) does not break this capture.
        driver("cuStreamBeginCapture", unsafe {
            cuStreamBeginCapture_v2(
                stream,
                CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        })?;
        let recorded = record();
        let mut graph = std::ptr::null_mut();
        let ended = driver("cuStreamEndCapture", unsafe {
            cuStreamEndCapture(stream, &mut graph)
        });
        if let Err(e) = recorded {
            if !graph.is_null() {
                unsafe { cuGraphDestroy(graph) };
            }
            return Err(e);
        }
        ended.map_err(|e| {
            GemmError::Launch(format!(
                "{e}: something enqueued inside the capture waited or allocated (a plan's \
                 enqueue does neither; Gemm::run does both)"
            ))
        })?;
        let mut exec = std::ptr::null_mut();
        if let Err(e) = driver("cuGraphInstantiate", unsafe {
            cuGraphInstantiateWithFlags(&mut exec, graph, 0)
        }) {
            unsafe { cuGraphDestroy(graph) };
            return Err(e);
        }
        Ok(Graph {
            gemm: self,
            recorded: Recorded::Gpu {
                graph,
                exec,
                stream,
                _record: Box::new(record),
            },
        })
    }
}

impl Graph<'_> {
    /// Enqueues the recorded work on the handle's stream and returns at once (on the emulator:
    /// runs it).
    pub fn launch(&mut self) -> Result<()> {
        match &mut self.recorded {
            Recorded::Gpu { exec, stream, .. } => {
                driver("cuGraphLaunch", unsafe { cuGraphLaunch(*exec, *stream) })
            }
            Recorded::Emulator(record) => record(),
        }
    }

    /// One launch, timed: the milliseconds between CUDA events recorded on the stream before
    /// and after it (waits for it); on the emulator the wall time of running it.
    pub fn launch_timed(&mut self) -> Result<f64> {
        let Some(stream) = self.gemm.stream() else {
            let start = Instant::now();
            self.launch()?;
            return Ok(start.elapsed().as_secs_f64() * 1e3);
        };
        let failed = |e: cust::error::CudaError| GemmError::Launch(format!("timing a graph: {e}"));
        let (start, end) = (
            Event::new(EventFlags::DEFAULT).map_err(failed)?,
            Event::new(EventFlags::DEFAULT).map_err(failed)?,
        );
        start.record(stream).map_err(failed)?;
        self.launch()?;
        end.record(stream).map_err(failed)?;
        end.synchronize().map_err(failed)?;
        Ok(end.elapsed_time_f32(&start).map_err(failed)? as f64)
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        if let Recorded::Gpu { graph, exec, .. } = &self.recorded {
            // A launch still running reads what the graph borrows: it must end first.
            let _ = self.gemm.synchronize();
            unsafe {
                cuGraphExecDestroy(*exec);
                cuGraphDestroy(*graph);
            }
        }
    }
}

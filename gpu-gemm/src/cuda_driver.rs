//! The CUDA driver (`libcuda.so.1`), loaded when the GPU backend first initialises it rather
//! than when the program starts, so that `host --help`, `--list`, the emulator and the CPU
//! variants run on a machine with no NVIDIA driver however the binary is started.
//!
//! `cust` calls the driver's C functions (`cuInit`, `cuMemAlloc_v2`, …) by name, and
//! `cust_raw`'s build script links `libcuda` for them, which makes the dynamic loader refuse to
//! start the program where the driver is missing. Instead, on x86-64 Linux `build.rs` generates
//! a trampoline for each of those functions (`gpu-gemm/cuda-stub/symbols.txt`, every `cu*` function
//! of `cust_raw`'s bindings): a jump through a table of slots, defined in this binary, so the
//! link needs nothing from `libcuda` (it gets an empty `libcuda.a`, and an undefined driver
//! function would be a link error). The jump passes the arguments on untouched, so the
//! trampolines need no signatures.
//!
//! Until `cuInit` is called, every slot returns `CUDA_ERROR_NOT_INITIALIZED`, which is what the
//! driver itself answers before `cuInit`. The slot of `cuInit` starts at
//! `gemm_cuda_init_on_first_call`: it opens `libcuda.so.1` ([`load`]), points every slot at the
//! driver's function of that name (a function this driver lacks answers
//! `CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND`), then calls the real `cuInit`. Where the library
//! cannot be opened, `cuInit` answers `CUDA_ERROR_STUB_LIBRARY`, as the link stub of a CUDA
//! toolkit does, and [`load`] says why. cuBLAS is loaded at run time by `cudarc` already.

/// The file name the driver is loaded by, as the dynamic loader would (its soname).
pub const LIBRARY: &str = "libcuda.so.1";

/// Opens the driver and fills the trampolines' slots, once per process; afterwards returns
/// the first outcome. The error is the dynamic loader's, which names the library
/// (`libcuda.so.1: cannot open shared object file: No such file or directory`).
pub fn load() -> Result<(), String> {
    imp::load()
}

#[cfg(cuda_trampolines)]
mod imp {
    use super::LIBRARY;
    use std::os::raw::{c_int, c_uint};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::OnceLock;

    include!(concat!(env!("OUT_DIR"), "/cuda_symbols.rs"));
    std::arch::global_asm!(include_str!(concat!(
        env!("OUT_DIR"),
        "/cuda_trampolines.s"
    )));

    extern "C" {
        /// One function address per name of [`SYMBOLS`], defined in `cuda_trampolines.s`.
        static gemm_cuda_slots: [AtomicUsize; SYMBOLS.len()];
        fn gemm_cuda_symbol_missing() -> c_int;
    }

    /// `CUDA_ERROR_STUB_LIBRARY`: what `cuInit` answers when the driver cannot be loaded.
    const CUDA_ERROR_STUB_LIBRARY: c_int = 34;

    /// The opened driver, kept for the life of the process, or why it could not be opened.
    static DRIVER: OnceLock<Result<libloading::Library, String>> = OnceLock::new();

    fn slots() -> &'static [AtomicUsize; SYMBOLS.len()] {
        // SAFETY: a static array of atomics defined by the generated assembly, never moved.
        unsafe { &gemm_cuda_slots }
    }

    pub fn load() -> Result<(), String> {
        DRIVER
            .get_or_init(|| {
                // SAFETY: loading the NVIDIA driver runs its initialisers, as linking it would.
                let library = unsafe { libloading::Library::new(LIBRARY) }.map_err(|e| {
                    // The loader's own message (dlerror), which names the library.
                    match std::error::Error::source(&e) {
                        Some(why) => why.to_string(),
                        None => format!("{LIBRARY}: {e}"),
                    }
                })?;
                for (slot, name) in slots().iter().zip(SYMBOLS) {
                    // SAFETY: only the address is taken; the trampoline calls it with the
                    // arguments `cust_raw` declares for that name.
                    let address = unsafe { library.get::<unsafe extern "C" fn()>(name.as_bytes()) }
                        .map(|f| *f as usize)
                        .unwrap_or(gemm_cuda_symbol_missing as *const () as usize);
                    slot.store(address, Ordering::Release);
                }
                Ok(library)
            })
            .as_ref()
            .map(|_| ())
            .map_err(Clone::clone)
    }

    /// The first value of `cuInit`'s slot: loads the driver, then calls its `cuInit`.
    #[no_mangle]
    extern "C" fn gemm_cuda_init_on_first_call(flags: c_uint) -> c_int {
        if load().is_err() {
            return CUDA_ERROR_STUB_LIBRARY;
        }
        let address = slots()[CU_INIT].load(Ordering::Acquire);
        // SAFETY: the driver's `cuInit(unsigned int) -> CUresult`.
        let cu_init: extern "C" fn(c_uint) -> c_int = unsafe { std::mem::transmute(address) };
        cu_init(flags)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn every_name_has_a_slot_and_cuinit_starts_at_the_loader() {
            assert_eq!(SYMBOLS[CU_INIT], "cuInit");
            assert!(SYMBOLS.contains(&"cuMemAlloc_v2"));
            assert_eq!(slots().len(), SYMBOLS.len());
        }
    }
}

#[cfg(not(cuda_trampolines))]
mod imp {
    /// Elsewhere `libcuda` is linked (build.rs): it was loaded before `main`.
    pub fn load() -> Result<(), String> {
        Ok(())
    }
}

//! What each instruction is for, in the course's terms: the useful FMA (or MMA), a shared or
//! global load, a barrier, address arithmetic, ….
//!
//! The class of an opcode depends on what the kernel computes with: an `FFMA` is the useful
//! work of an f32 kernel but just another instruction in an f64 one, and a tensor-core kernel is judged by its
//! `HMMA`/`DMMA`/`HGMMA`. So [`Precision`] lives here beside [`Class`]. [`access_bits`] reads
//! the width off a memory opcode, which is what tells a 16-byte load from four scalar ones.
use super::Function;

/// What a kernel computes with: it decides which instruction is the useful one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// `FFMA`
    F32,
    /// `DFMA`
    F64,
    /// `HMMA`: the tensor cores' warp-wide `mma.sync` (TF32, 3xTF32).
    TensorCoreTf32,
    /// `DMMA`: the FP64 tensor cores' `mma.sync`.
    TensorCoreF64,
    /// `HGMMA`: Hopper's warpgroup `wgmma.mma_async` (TF32, 3xTF32, bf16, f16).
    Warpgroup,
    /// `QGMMA`: the same with FP8 operands (e4m3).
    WarpgroupFp8,
}

impl Precision {
    /// The SASS opcode of the useful instruction: the fused multiply-add, or the `mma`.
    pub fn fma_opcode(self) -> &'static str {
        match self {
            Precision::F32 => "FFMA",
            Precision::F64 => "DFMA",
            Precision::TensorCoreTf32 => "HMMA",
            Precision::TensorCoreF64 => "DMMA",
            Precision::Warpgroup => "HGMMA",
            Precision::WarpgroupFp8 => "QGMMA",
        }
    }

    /// "FMA" for the CUDA cores' kernels, "MMA" for the tensor cores'.
    pub fn useful_name(self) -> &'static str {
        match self {
            Precision::F32 | Precision::F64 => "FMA",
            Precision::TensorCoreTf32
            | Precision::TensorCoreF64
            | Precision::Warpgroup
            | Precision::WarpgroupFp8 => "MMA",
        }
    }

    /// The precision of a function compiled for `dtype`'s precision: a kernel that issues
    /// tensor-core instructions is judged by those, not by the stray FMAs of its epilogue.
    pub fn of(function: &Function, dtype: Precision) -> Precision {
        let has = |opcode: &str| function.instructions.iter().any(|i| i.base() == opcode);
        if has("HGMMA") {
            Precision::Warpgroup
        } else if has("QGMMA") {
            Precision::WarpgroupFp8
        } else if has("HMMA") {
            Precision::TensorCoreTf32
        } else if has("DMMA") {
            Precision::TensorCoreF64
        } else {
            dtype
        }
    }
}

/// What an instruction is for, in the terms of the course.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// The useful work: `FFMA` (f32) or `DFMA` (f64), or the tensor cores' `HMMA`/`DMMA`.
    Fma,
    /// `LDS` (`ld.shared`) and `LDSM`.
    SharedLoad,
    /// `STS`.
    SharedStore,
    /// `LDG`, including the read-only path (`.CONSTANT`).
    GlobalLoad,
    /// `STG`.
    GlobalStore,
    /// `LDGSTS` (`cp.async`: global to shared without registers).
    AsyncCopy,
    /// `BAR` (`bar.sync`, `__syncthreads`).
    Barrier,
    /// `LDL`/`STL`: spills or arrays that did not become registers. Must be 0.
    LocalMemory,
    /// `SHFL`.
    Shuffle,
    /// Integer and address arithmetic, on the vector (`IADD3`, `IMAD`, `LEA`, …) and the
    /// uniform datapath (`UIADD3`, …), including integer compares.
    IntegerAddress,
    /// Branches, `EXIT`, and the convergence barriers (`BSSY`/`BSYNC`, `WARPSYNC`).
    ControlFlow,
    /// Everything else: moves, constant loads (`LDC`, `ULDC`), special registers, float
    /// arithmetic other than the FMA, conversions, `NOP`.
    Other,
}

impl Class {
    /// Every class, in the order reports print them.
    pub const ALL: [Class; 12] = [
        Class::Fma,
        Class::SharedLoad,
        Class::SharedStore,
        Class::GlobalLoad,
        Class::GlobalStore,
        Class::AsyncCopy,
        Class::Barrier,
        Class::LocalMemory,
        Class::Shuffle,
        Class::IntegerAddress,
        Class::ControlFlow,
        Class::Other,
    ];

    /// The class of an opcode (with or without modifiers) in a kernel of `precision`.
    pub fn of(opcode: &str, precision: Precision) -> Class {
        let base = opcode.split('.').next().unwrap_or(opcode);
        // The uniform datapath's integer instructions are the vector ones with a `U` in front.
        let integer = |b: &str| {
            matches!(
                b,
                "IADD3"
                    | "IADD"
                    | "IADD32I"
                    | "IMAD"
                    | "IMUL"
                    | "LEA"
                    | "SHF"
                    | "SHL"
                    | "SHR"
                    | "LOP3"
                    | "LOP"
                    | "IABS"
                    | "IMNMX"
                    | "VIADD"
                    | "VIADDMNMX"
                    | "VIMNMX"
                    | "ISETP"
                    | "ISCADD"
                    | "BMSK"
                    | "BREV"
                    | "FLO"
                    | "POPC"
                    | "PRMT"
                    | "SGXT"
                    | "SEL"
            )
        };
        match base {
            b if b == precision.fma_opcode() => Class::Fma,
            "LDS" | "LDSM" => Class::SharedLoad,
            "STS" => Class::SharedStore,
            "LDG" => Class::GlobalLoad,
            "STG" => Class::GlobalStore,
            "LDGSTS" => Class::AsyncCopy,
            "BAR" => Class::Barrier,
            "LDL" | "STL" => Class::LocalMemory,
            "SHFL" => Class::Shuffle,
            "BRA" | "BRX" | "JMP" | "JMX" | "CALL" | "RET" | "EXIT" | "BSSY" | "BSYNC"
            | "WARPSYNC" | "BREAK" | "KILL" => Class::ControlFlow,
            b if integer(b) || b.strip_prefix('U').is_some_and(integer) => Class::IntegerAddress,
            _ => Class::Other,
        }
    }

    /// A short name for tables.
    pub fn label(self) -> &'static str {
        match self {
            Class::Fma => "FMA",
            Class::SharedLoad => "shared loads",
            Class::SharedStore => "shared stores",
            Class::GlobalLoad => "global loads",
            Class::GlobalStore => "global stores",
            Class::AsyncCopy => "async copies (LDGSTS)",
            Class::Barrier => "barriers",
            Class::LocalMemory => "local memory (LDL/STL)",
            Class::Shuffle => "shuffles",
            Class::IntegerAddress => "integer/address",
            Class::ControlFlow => "control flow",
            Class::Other => "other",
        }
    }

    /// A name for JSON keys.
    pub fn key(self) -> &'static str {
        match self {
            Class::Fma => "fma",
            Class::SharedLoad => "shared_load",
            Class::SharedStore => "shared_store",
            Class::GlobalLoad => "global_load",
            Class::GlobalStore => "global_store",
            Class::AsyncCopy => "async_copy",
            Class::Barrier => "barrier",
            Class::LocalMemory => "local_memory",
            Class::Shuffle => "shuffle",
            Class::IntegerAddress => "integer_address",
            Class::ControlFlow => "control_flow",
            Class::Other => "other",
        }
    }
}

/// The bits a memory instruction moves per thread: `.128` → 128, `.64` → 64, `.U8` → 8, …,
/// none of these → 32 (`LDS`, `LDG.E`, `LDG.E.CONSTANT`).
pub fn access_bits(opcode: &str) -> u32 {
    opcode
        .split('.')
        .skip(1)
        .find_map(|modifier| match modifier {
            "128" => Some(128),
            "64" => Some(64),
            "U16" | "S16" => Some(16),
            "U8" | "S8" => Some(8),
            _ => None,
        })
        .unwrap_or(32)
}

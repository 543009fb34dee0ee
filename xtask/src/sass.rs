//! Reading the machine code (SASS) that ptxas makes of our PTX: the functions of a cubin as
//! `nvdisasm -c` prints them, their loops, and the instruction mix of the hot loop.
//!
//! Used by `cargo xtask sass` and by the integration test `tests/tests/sass.rs`. Everything
//! here is a *static* count over an address range of the disassembly, not a profile: an
//! instruction behind a branch that is rarely taken counts as much as one that always runs.
//! For the fully unrolled k-loops of the course that is the same thing.
//!
//! # Finding the hot loop
//! ptxas lays a loop out as one address range whose last instruction is a branch back to its
//! first, `@!P2 BRA `(.L_x_19)`. So every branch to an earlier address closes a loop spanning
//! [target, branch]; two back edges to the same target are one loop (a `continue`). The hot
//! loop of a GEMM is its k-loop: the innermost loop that does FMAs. When there are several
//! (a main loop and a remainder loop, say), it is the one with the most FMAs. A branch to
//! itself is not a loop but the trap nvdisasm shows after the last `EXIT`.
//!
//! # What the document counts
//! `001_…txt` reads the share of useful instructions off the PTX of the inner loop, counting
//! only `fma` and `ld.shared`: 1 FMA per 2 scalar loads in `v4` (1/3, "wasting 2/3 of the
//! instruction throughput"), 4 FMA per `ld.shared.v4` + `ld.shared` in `v5` (4/6 = 2/3), 16 per
//! two `ld.shared.v4` in `gemm_64x64` (8/9) and 64 per four in `gemm_128x128` (16/17).
//! [`Mix::fma_per_fma_and_shared_load`] is that count on the SASS; [`Mix::fma_share`] divides
//! by every instruction of the loop instead (address arithmetic, staging, the barrier, the
//! branch), which is what the issue slots really see.
use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `cargo xtask sass` keeps the cubin for `arch`: `target/sass/<arch>/kernels_gpu.cubin`.
pub fn cubin_path(root: &Path, arch: &str) -> PathBuf {
    root.join("target")
        .join("sass")
        .join(arch)
        .join("kernels_gpu.cubin")
}

/// The code sections of a cubin, as `nvdisasm -c` prints them.
///
/// (`nvdisasm -fun` selects functions by symbol *index*, not name, so we disassemble the whole
/// cubin once and cut it into functions with [`parse_functions`].)
pub fn disassemble(nvdisasm: &Path, cubin: &Path) -> Result<String> {
    let out = Command::new(nvdisasm)
        .arg("-c")
        .arg(cubin)
        .output()
        .with_context(|| format!("cannot run {}", nvdisasm.display()))?;
    if !out.status.success() {
        bail!(
            "nvdisasm failed on {}:\n{}",
            cubin.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8(out.stdout)?)
}

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
        }
    }

    /// "FMA" for the CUDA cores' kernels, "MMA" for the tensor cores'.
    pub fn useful_name(self) -> &'static str {
        match self {
            Precision::F32 | Precision::F64 => "FMA",
            Precision::TensorCoreTf32 | Precision::TensorCoreF64 | Precision::Warpgroup => "MMA",
        }
    }

    /// The precision of a function compiled for `dtype`'s precision: a kernel that issues
    /// tensor-core instructions is judged by those, not by the stray FMAs of its epilogue.
    pub fn of(function: &Function, dtype: Precision) -> Precision {
        let has = |opcode: &str| function.instructions.iter().any(|i| i.base() == opcode);
        if has("HGMMA") {
            Precision::Warpgroup
        } else if has("HMMA") {
            Precision::TensorCoreTf32
        } else if has("DMMA") {
            Precision::TensorCoreF64
        } else {
            dtype
        }
    }
}

/// One SASS instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Byte offset in the function (`/*0a60*/`).
    pub address: u32,
    /// The guard, `@P0` or `@!P2`, if any.
    pub predicate: Option<String>,
    /// The opcode with its modifiers: `LDS.128`, `LDG.E.128.CONSTANT`, `BAR.SYNC.DEFER_BLOCKING`.
    pub opcode: String,
    /// Everything after the opcode, without the closing `;`.
    pub operands: String,
    /// For a branch to a label (`` BRA `(.L_x_19) ``), the label.
    pub target: Option<String>,
}

impl Instruction {
    /// The opcode without modifiers: `LDS` for `LDS.128`.
    pub fn base(&self) -> &str {
        self.opcode.split('.').next().unwrap_or(&self.opcode)
    }

    /// Parses one line of `nvdisasm` output: `/*0a60*/ @!P0 LDS.128 R36, [R12+UR9+0x200] ;`.
    /// Anything else (labels, directives, comments) is `None`.
    pub fn parse(line: &str) -> Option<Self> {
        let rest = line.trim_start().strip_prefix("/*")?;
        let (address, rest) = rest.split_once("*/")?;
        let address = u32::from_str_radix(address.trim(), 16).ok()?;
        // `-hex` appends the encoding after the `;`.
        let body = rest.split(';').next()?.trim();
        let mut words = body.splitn(2, char::is_whitespace);
        let mut opcode = words.next()?.to_string();
        let mut operands = words.next().unwrap_or("").trim().to_string();
        let mut predicate = None;
        if opcode.starts_with('@') {
            predicate = Some(opcode);
            let mut words = operands.splitn(2, char::is_whitespace);
            opcode = words.next()?.to_string();
            operands = words.next().unwrap_or("").trim().to_string();
        }
        if opcode.is_empty() {
            return None;
        }
        let target = operands
            .split_once("`(")
            .and_then(|(_, t)| t.split_once(')'))
            .map(|(label, _)| label.to_string());
        Some(Self {
            address,
            predicate,
            opcode,
            operands,
            target,
        })
    }
}

/// One function of the disassembly (a kernel is a function named after its PTX entry).
#[derive(Clone, Debug, Default)]
pub struct Function {
    pub name: String,
    /// In address order.
    pub instructions: Vec<Instruction>,
    /// Label → address of the instruction that follows it.
    pub labels: HashMap<String, u32>,
}

/// Cuts `nvdisasm -c` output into its functions, one per `.section .text.NAME`.
pub fn parse_functions(disassembly: &str) -> Vec<Function> {
    let mut functions: Vec<Function> = Vec::new();
    let mut pending_labels: Vec<String> = Vec::new();
    for line in disassembly.lines() {
        let trimmed = line.trim();
        if let Some(section) = trimmed.strip_prefix(".section") {
            if let Some(name) = section.trim().strip_prefix(".text.") {
                let name = name.split(',').next().unwrap_or(name).trim();
                functions.push(Function {
                    name: name.to_string(),
                    ..Default::default()
                });
                pending_labels.clear();
            }
            continue;
        }
        let Some(function) = functions.last_mut() else {
            continue;
        };
        if let Some(instruction) = Instruction::parse(line) {
            for label in pending_labels.drain(..) {
                function.labels.insert(label, instruction.address);
            }
            function.instructions.push(instruction);
        } else if let Some(label) = trimmed.strip_suffix(':') {
            if !label.is_empty() && !label.contains(char::is_whitespace) {
                pending_labels.push(label.to_string());
            }
        }
    }
    functions
}

/// A loop: the address range from its first instruction to the branch that closes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loop {
    /// Address of the loop's first instruction (the back edge's target).
    pub start: u32,
    /// Address of the last backward branch to `start`.
    pub end: u32,
    /// How many other loops enclose this one (0: outermost).
    pub depth: u32,
    /// Whether no other loop lies inside this one.
    pub innermost: bool,
}

impl Loop {
    /// Whether `other` is a different loop inside this one.
    fn contains(&self, other: &Loop) -> bool {
        (self.start, self.end) != (other.start, other.end)
            && self.start <= other.start
            && other.end <= self.end
    }
}

impl Function {
    /// The instructions at addresses `start..=end`.
    pub fn range(&self, start: u32, end: u32) -> &[Instruction] {
        let from = self.instructions.partition_point(|i| i.address < start);
        let to = self.instructions.partition_point(|i| i.address <= end);
        &self.instructions[from..to]
    }

    /// Every loop, in address order: one per target of a backward branch.
    pub fn loops(&self) -> Vec<Loop> {
        // Header address → last back edge to it.
        let mut ends: BTreeMap<u32, u32> = BTreeMap::new();
        for branch in &self.instructions {
            if !branch.base().starts_with("BRA") {
                continue;
            }
            let Some(&target) = branch.target.as_ref().and_then(|l| self.labels.get(l)) else {
                continue;
            };
            // `target == address` is the trap after the last EXIT, not a loop.
            if target < branch.address {
                let end = ends.entry(target).or_insert(branch.address);
                *end = (*end).max(branch.address);
            }
        }
        let mut loops: Vec<Loop> = ends
            .into_iter()
            .map(|(start, end)| Loop {
                start,
                end,
                depth: 0,
                innermost: true,
            })
            .collect();
        let snapshot = loops.clone();
        for l in &mut loops {
            l.depth = snapshot.iter().filter(|outer| outer.contains(l)).count() as u32;
            l.innermost = !snapshot.iter().any(|inner| l.contains(inner));
        }
        loops
    }

    /// The k-loop: among the loops that do FMAs and hold no other loop that does, the one with
    /// the most FMAs; of equals, the one with the fewest instructions (a kernel with a 16-byte
    /// and a per-element copy of its pipeline has two such loops, and the fast path is the
    /// one it runs on aligned data), then the first. `None` when no loop does an FMA of
    /// `precision`.
    pub fn hot_loop(&self, precision: Precision) -> Option<(Loop, Mix)> {
        let loops: Vec<(Loop, Mix)> = self
            .loops()
            .into_iter()
            .map(|l| (l, Mix::of(self.range(l.start, l.end), precision)))
            .filter(|(_, mix)| mix.fma() > 0)
            .collect();
        loops
            .iter()
            .filter(|(outer, _)| !loops.iter().any(|(inner, _)| outer.contains(inner)))
            .fold(None::<&(Loop, Mix)>, |best, candidate| match best {
                Some(b)
                    if (b.1.fma(), std::cmp::Reverse(b.1.total))
                        >= (candidate.1.fma(), std::cmp::Reverse(candidate.1.total)) =>
                {
                    Some(b)
                }
                _ => Some(candidate),
            })
            .cloned()
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

/// The instruction mix of a run of instructions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    pub precision: Precision,
    /// Every instruction of the range.
    pub total: u32,
    /// Count per full opcode (`LDS.128`, `IMAD.WIDE.U32`, …), sorted by name.
    pub opcodes: BTreeMap<String, u32>,
}

impl Mix {
    pub fn of(instructions: &[Instruction], precision: Precision) -> Self {
        let mut opcodes = BTreeMap::new();
        for i in instructions {
            *opcodes.entry(i.opcode.clone()).or_insert(0) += 1;
        }
        Self {
            precision,
            total: instructions.len() as u32,
            opcodes,
        }
    }

    /// The opcodes of one class with their counts, most frequent first.
    pub fn opcodes_of(&self, class: Class) -> Vec<(&str, u32)> {
        let mut of: Vec<(&str, u32)> = self
            .opcodes
            .iter()
            .filter(|(op, _)| Class::of(op, self.precision) == class)
            .map(|(op, n)| (op.as_str(), *n))
            .collect();
        of.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        of
    }

    pub fn count(&self, class: Class) -> u32 {
        self.opcodes_of(class).iter().map(|(_, n)| n).sum()
    }

    /// Instructions of `class` moving `bits` per thread (`LDS.128`: `(SharedLoad, 128)`).
    pub fn count_bits(&self, class: Class, bits: u32) -> u32 {
        self.opcodes_of(class)
            .iter()
            .filter(|(op, _)| access_bits(op) == bits)
            .map(|(_, n)| n)
            .sum()
    }

    pub fn fma(&self) -> u32 {
        self.count(Class::Fma)
    }

    /// Useful FMA per instruction issued: FMA / every instruction of the loop.
    pub fn fma_share(&self) -> Fraction {
        Fraction::new(self.fma(), self.total)
    }

    /// The document's count: FMA / (FMA + shared loads), what `001` calls the useful share.
    /// `None` when the loop reads no shared memory (`v0`, `v1`: the count is not about them).
    pub fn fma_per_fma_and_shared_load(&self) -> Option<Fraction> {
        let shared = self.count(Class::SharedLoad);
        (shared > 0).then(|| Fraction::new(self.fma(), self.fma() + shared))
    }
}

/// A ratio of two counts, kept in lowest terms (`512/544` is `16/17`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fraction {
    pub numerator: u32,
    pub denominator: u32,
}

impl Fraction {
    pub const fn new(numerator: u32, denominator: u32) -> Self {
        let (mut a, mut b) = (numerator, denominator);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        let gcd = if a == 0 { 1 } else { a };
        Self {
            numerator: numerator / gcd,
            denominator: denominator / gcd,
        }
    }

    pub fn value(self) -> f64 {
        if self.denominator == 0 {
            0.0
        } else {
            self.numerator as f64 / self.denominator as f64
        }
    }
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.numerator, self.denominator)
    }
}

/// The useful shares `001_…txt` reads off its PTX (FMA / (FMA + `ld.shared`)), by the name of
/// our variant of that kernel, with the document's kernel name. All for `float`.
pub const DOCUMENT_SHARES: &[(&str, &str, Fraction)] = &[
    ("v4", "gemm_32x32_v4", Fraction::new(1, 3)),
    ("v5", "gemm_32x32_v5", Fraction::new(2, 3)),
    ("gemm64", "gemm_64x64", Fraction::new(8, 9)),
    ("gemm128", "gemm_128x128", Fraction::new(16, 17)),
];

/// The document's figure for one of our variants, with its kernel's name there. Only for f32:
/// a 16-byte load holds four floats but two doubles, so the f64 shares differ (gemm128: 8/9).
pub fn document_share(variant: &str, precision: Precision) -> Option<(&'static str, Fraction)> {
    if precision != Precision::F32 {
        return None;
    }
    DOCUMENT_SHARES
        .iter()
        .find(|(name, _, _)| *name == variant)
        .map(|(_, kernel, share)| (*kernel, *share))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two functions. `outer_inner_f32` has an outer loop (0x0040..0x0140) around an inner one
    /// (0x0060..0x00d0) closed by a predicated branch, then a remainder loop with fewer FMAs,
    /// then the trap that branches to itself. `dfma_f64` has one loop of DFMAs and LDS.64.
    const SNIPPET: &str = r#"
//--------------------- .text.outer_inner_f32 --------------------------
	.section	.text.outer_inner_f32,"ax",@progbits
	.align	128
outer_inner_f32:
.text.outer_inner_f32:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   MOV R2, RZ ;
        /*0030*/                   CS2R R4, SRZ ;
.L_x_1:
        /*0040*/              @!P3 LDG.E.128 R24, desc[UR6][R12.64] ;
        /*0050*/                   LDG.E.CONSTANT R19, desc[UR6][R14.64] ;
.L_x_2:
        /*0060*/                   LDS.128 R8, [R11+0x80] ;
        /*0070*/                   LDS R20, [R8+0x4] ;
        /*0080*/                   FFMA R4, R8, R20, R4 ;
        /*0090*/                   FFMA R5, R9, R20.reuse, R5 ;
        /*00a0*/                   FFMA R6, R10, R20, R6 ;
        /*00b0*/                   FFMA R7, R11, R20, R7 ;
        /*00c0*/                   IADD3 R11, R11, 0x4, RZ ;
        /*00d0*/               @P0 BRA `(.L_x_2) ;
        /*00e0*/                   STS.128 [R9], R24 ;
        /*00f0*/                   STS [R10+0x1080], R19 ;
        /*0100*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0110*/                   UIADD3 UR4, UR4, 0x20, URZ ;
        /*0120*/                   ISETP.LE.U32.AND P2, PT, R4, UR4, PT ;
        /*0130*/                   LDL R3, [R1+0x8] ;
        /*0140*/              @!P2 BRA `(.L_x_1) ;
.L_x_3:
        /*0150*/                   LDS.64 R8, [R11] ;
        /*0160*/                   FFMA R4, R8, R9, R4 ;
        /*0170*/                   SHFL.IDX PT, R9, R8, RZ, 0x1f ;
        /*0180*/              @P1 BRA `(.L_x_3) ;
        /*0190*/                   STG.E desc[UR6][R2.64], R4 ;
        /*01a0*/                   EXIT ;
.L_x_4:
        /*01b0*/                   BRA `(.L_x_4);
        /*01c0*/                   NOP;
.L_x_99:
//--------------------- .text.dfma_f64 --------------------------
	.section	.text.dfma_f64,"ax",@progbits
dfma_f64:
.text.dfma_f64:
        /*0000*/                   MOV R2, RZ ;
.L_x_7:
        /*0010*/                   LDS.64 R8, [R11] ;
        /*0020*/                   LDS.U16 R12, [R11+0x10] ;
        /*0030*/                   DFMA R4, R8, R10, R4 ;
        /*0040*/                   FFMA R6, R7, R7, R6 ;
        /*0050*/                   LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R6.64] ;
        /*0060*/              @!P0 BRA `(.L_x_7) ;
        /*0070*/                   EXIT ;
"#;

    fn functions() -> Vec<Function> {
        parse_functions(SNIPPET)
    }

    #[test]
    fn parses_instructions_with_predicates_and_targets() {
        let i = Instruction::parse("        /*00d0*/               @P0 BRA `(.L_x_2) ;").unwrap();
        assert_eq!(i.address, 0xd0);
        assert_eq!(i.predicate.as_deref(), Some("@P0"));
        assert_eq!(i.opcode, "BRA");
        assert_eq!(i.target.as_deref(), Some(".L_x_2"));
        let i = Instruction::parse(
            "        /*0a60*/                   LDS.128 R36, [R12+UR9+0x200] ; /* 0x000fe2 */",
        )
        .unwrap();
        assert_eq!(
            (
                i.predicate.as_deref(),
                i.opcode.as_str(),
                i.base(),
                i.operands.as_str()
            ),
            (None, "LDS.128", "LDS", "R36, [R12+UR9+0x200]")
        );
        assert_eq!(i.target, None);
        assert!(Instruction::parse(".L_x_2:").is_none());
        assert!(Instruction::parse("\t.section\t.text.f,\"ax\",@progbits").is_none());
    }

    #[test]
    fn cuts_the_disassembly_into_functions_with_labels() {
        let f = functions();
        assert_eq!(
            f.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            ["outer_inner_f32", "dfma_f64"]
        );
        assert_eq!(f[0].instructions.len(), 29);
        assert_eq!(f[0].labels[".L_x_1"], 0x40);
        assert_eq!(f[0].labels[".L_x_2"], 0x60);
        assert_eq!(f[0].labels[".L_x_4"], 0x1b0);
        // A label at the very end (no instruction follows) has no address.
        assert!(!f[0].labels.contains_key(".L_x_99"));
        assert_eq!(f[1].instructions.len(), 8);
    }

    #[test]
    fn finds_nested_loops_and_skips_the_trap() {
        let f = &functions()[0];
        let loops = f.loops();
        assert_eq!(
            loops,
            vec![
                Loop {
                    start: 0x40,
                    end: 0x140,
                    depth: 0,
                    innermost: false
                },
                Loop {
                    start: 0x60,
                    end: 0xd0,
                    depth: 1,
                    innermost: true
                },
                Loop {
                    start: 0x150,
                    end: 0x180,
                    depth: 0,
                    innermost: true
                },
            ]
        );
    }

    #[test]
    fn the_hot_loop_is_the_innermost_with_the_most_fma() {
        let f = &functions()[0];
        let (hot, mix) = f.hot_loop(Precision::F32).unwrap();
        assert_eq!((hot.start, hot.end), (0x60, 0xd0));
        assert_eq!((mix.total, mix.fma()), (8, 4));
        assert_eq!(mix.count(Class::SharedLoad), 2);
        assert_eq!(mix.count(Class::IntegerAddress), 1);
        assert_eq!(mix.count(Class::ControlFlow), 1);
        // The document's count: 4 FMA per LDS.128 + LDS, v5's 2/3.
        assert_eq!(mix.fma_per_fma_and_shared_load(), Some(Fraction::new(2, 3)));
        assert_eq!(mix.fma_share().to_string(), "1/2");
        // No FFMA in an f64 kernel's sense: no hot loop.
        assert!(f.hot_loop(Precision::F64).is_none());
    }

    #[test]
    fn counts_the_outer_loop_by_class_and_width() {
        let f = &functions()[0];
        let mix = Mix::of(f.range(0x40, 0x140), Precision::F32);
        assert_eq!(mix.total, 17);
        assert_eq!(mix.count_bits(Class::GlobalLoad, 128), 1);
        assert_eq!(mix.count_bits(Class::GlobalLoad, 32), 1);
        assert_eq!(mix.opcodes_of(Class::GlobalLoad).len(), 2);
        assert_eq!(mix.count_bits(Class::SharedLoad, 128), 1);
        assert_eq!(mix.count_bits(Class::SharedLoad, 32), 1);
        assert_eq!(mix.count_bits(Class::SharedStore, 128), 1);
        assert_eq!(mix.count_bits(Class::SharedStore, 32), 1);
        assert_eq!(mix.count(Class::Barrier), 1);
        assert_eq!(mix.count(Class::LocalMemory), 1);
        // IADD3 + UIADD3 (uniform datapath) + ISETP.
        assert_eq!(mix.count(Class::IntegerAddress), 3);
        let remainder = Mix::of(f.range(0x150, 0x180), Precision::F32);
        assert_eq!(
            (
                remainder.count_bits(Class::SharedLoad, 64),
                remainder.count(Class::Shuffle)
            ),
            (1, 1)
        );
        // A loop that reads no shared memory has no "document's count".
        let no_shared = Mix::of(f.range(0x160, 0x180), Precision::F32);
        assert_eq!(no_shared.fma_per_fma_and_shared_load(), None);
    }

    #[test]
    fn dfma_is_the_useful_fma_of_f64_kernels() {
        let f = &functions()[1];
        let (hot, mix) = f.hot_loop(Precision::F64).unwrap();
        assert_eq!((hot.start, hot.end, hot.depth), (0x10, 0x60, 0));
        assert_eq!(mix.fma(), 1);
        // The FFMA of an f64 kernel is not its useful work.
        assert_eq!(mix.opcodes_of(Class::Other), vec![("FFMA", 1)]);
        assert_eq!(mix.count_bits(Class::SharedLoad, 64), 1);
        assert_eq!(mix.count_bits(Class::SharedLoad, 16), 1);
        assert_eq!(mix.count_bits(Class::AsyncCopy, 128), 1);
        assert_eq!(mix.fma_per_fma_and_shared_load(), Some(Fraction::new(1, 3)));
    }

    #[test]
    fn widths_and_classes() {
        assert_eq!(access_bits("LDG.E.128.CONSTANT"), 128);
        assert_eq!(access_bits("LDG.E.64"), 64);
        assert_eq!(access_bits("LDG.E.CONSTANT"), 32);
        assert_eq!(access_bits("LDS"), 32);
        assert_eq!(access_bits("STS.U8"), 8);
        assert_eq!(
            Class::of("IMAD.WIDE.U32", Precision::F32),
            Class::IntegerAddress
        );
        assert_eq!(
            Class::of("USHF.L.U32", Precision::F32),
            Class::IntegerAddress
        );
        assert_eq!(Class::of("UMOV", Precision::F32), Class::Other);
        assert_eq!(
            Class::of("BAR.SYNC.DEFER_BLOCKING", Precision::F64),
            Class::Barrier
        );
        assert_eq!(Class::of("DFMA", Precision::F32), Class::Other);
        assert_eq!(Class::of("BSSY", Precision::F32), Class::ControlFlow);
    }

    #[test]
    fn fractions_are_in_lowest_terms() {
        assert_eq!(Fraction::new(512, 544).to_string(), "16/17");
        assert_eq!(Fraction::new(0, 7).to_string(), "0/1");
        assert_eq!(Fraction::new(0, 0).value(), 0.0);
        let gemm64 = document_share("gemm64", Precision::F32).unwrap();
        assert_eq!(gemm64, ("gemm_64x64", Fraction::new(16, 18)));
        assert!(document_share("gemm64", Precision::F64).is_none());
        assert!(document_share("naive", Precision::F32).is_none());
    }
}

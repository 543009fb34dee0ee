//! Reading the machine code (SASS) that ptxas makes of our PTX: the functions of a cubin as
//! `nvdisasm -c` prints them, their loops, and the instruction mix of the hot loop.
//!
//! Used by `cargo xtask sass` and by the integration test `tests/tests/sass.rs`. Everything
//! here is a *static* count over an address range of the disassembly, not a profile: an
//! instruction behind a branch that is rarely taken counts as much as one that always runs.
//! For the fully unrolled k-loops of the course that is the same thing.
//!
//! The reading goes in steps, one file each, in the order the data flows, so that each step can
//! be read (and checked) without the others:
//! - `nvdisasm.rs` runs nvdisasm on the cubin: the only step that needs the CUDA tools;
//! - `parse.rs` cuts its text into functions, instructions and labels;
//! - `classify.rs` says what an opcode is for in the course's terms, which depends on the
//!   precision the kernel computes in;
//! - `mix.rs` counts a run of instructions by class and turns the counts into shares, the
//!   document's among them;
//! - `loops.rs` finds the loops from their back edges and picks the hot one by its mix.
//!
//! The files are private modules and everything is re-exported here, so callers keep writing
//! `sass::Mix`, `sass::parse_functions`, …: how the code is cut up is not part of its interface.
mod classify;
mod loops;
mod mix;
mod nvdisasm;
mod parse;

pub use classify::{access_bits, Class, Precision};
pub use loops::Loop;
pub use mix::{document_share, Fraction, Mix, DOCUMENT_SHARES};
pub use nvdisasm::{cubin_path, disassemble};
pub use parse::{parse_functions, Function, Instruction};

#[cfg(test)]
mod tests;

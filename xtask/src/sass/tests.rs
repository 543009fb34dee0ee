//! Unit tests of the whole reading on one hand-written disassembly: the same snippet goes
//! through parsing, loop finding and counting, so what one step hands the next is checked
//! too. They need no CUDA tools; `tests/tests/sass.rs` runs the same steps on real ptxas
//! output when the tools are installed.
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

/// A k-loop (0x0020..0x0080) whose `mbarrier` wait retries out of line, after the `EXIT`
/// (0x00b0..0x00d0), and comes back into the loop's middle: that back edge spans the loop's
/// second half, the epilogue's FMAs and the retry, more FMAs than the loop, and is no loop.
const RETRY_AFTER_EXIT: &str = r#"
//--------------------- .text.retry_f32 --------------------------
	.section	.text.retry_f32,"ax",@progbits
retry_f32:
.text.retry_f32:
        /*0000*/                   MOV R2, RZ ;
        /*0010*/                   MOV R3, RZ ;
.L_x_10:
        /*0020*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3 ;
        /*0030*/              @!P0 BRA `(.L_x_12) ;
.L_x_11:
        /*0040*/                   FFMA R4, R8, R9, R4 ;
        /*0050*/                   FFMA R5, R8, R9, R5 ;
        /*0060*/                   IADD3 R2, R2, 0x1, RZ ;
        /*0070*/                   ISETP.NE.AND P1, PT, R2, R6, PT ;
        /*0080*/               @P1 BRA `(.L_x_10) ;
        /*0090*/                   FFMA R4, R4, R5, R4 ;
        /*00a0*/                   FFMA R5, R4, R5, R5 ;
        /*00a8*/                   FFMA R6, R4, R5, R6 ;
        /*00ac*/                   EXIT ;
.L_x_12:
        /*00b0*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3 ;
        /*00c0*/              @!P0 BRA `(.L_x_12) ;
        /*00d0*/                   BRA `(.L_x_11) ;
"#;

#[test]
fn a_back_edge_from_a_retry_after_exit_is_not_the_hot_loop() {
    let f = &parse_functions(RETRY_AFTER_EXIT)[0];
    let spans: Vec<(u32, u32)> = f.loops().iter().map(|l| (l.start, l.end)).collect();
    assert!(spans.contains(&(0x40, 0xd0)), "{spans:x?}");
    let (hot, mix) = f.hot_loop(Precision::F32).unwrap();
    assert_eq!((hot.start, hot.end), (0x20, 0x80));
    assert_eq!(mix.fma(), 2);
}

//! Parsing `nvdisasm -c` output: the text cut into functions, each a list of instructions in
//! address order with its labels.
//!
//! Only as much of the syntax as the later steps need: address, guard, opcode, operands and
//! a branch's target label. Loops are found from branches to labels, so the labels are kept
//! as the address of the instruction that follows them; everything else (directives,
//! comments, the encoding `-hex` appends) is skipped.
use std::collections::HashMap;

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

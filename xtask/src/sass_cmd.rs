//! `cargo xtask sass`: what ptxas made of a variant's inner loop.
//!
//! Builds the PTX, compiles it with `ptxas -O3` into `target/sass/<arch>/kernels_gpu.cubin`,
//! disassembles that with `nvdisasm -c`, and reports, for a variant's entry point, ptxas's
//! resources and the instruction mix of its hot loop ([`ptx_builder::sass`] says how the loop
//! is found and what is counted). `--all` prints one row per registered variant instead.
use anyhow::{bail, Context, Result};
use kernels_gpu::registry::{self, Target, Variant};
use ptx_builder::cli::SassArgs;
use ptx_builder::sass::{self, Class, Fraction, Function, Loop, Mix, Precision};
use ptx_builder::*;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// The cubin of one architecture, compiled and disassembled.
struct Module {
    resources: Vec<Resources>,
    functions: Vec<Function>,
    ptxas_version: String,
    nvdisasm_version: String,
}

impl Module {
    fn build(root: &Path, arch: &str) -> Result<Self> {
        let ptxas = find_ptxas(root)
            .context("ptxas not found: run `cargo xtask install-cuda-tools` (or set PTXAS)")?;
        let nvdisasm = find_cuda_tool(root, "nvdisasm").context(
            "nvdisasm not found: run `cargo xtask install-cuda-tools` (or set NVDISASM)",
        )?;
        eprintln!("building the PTX for {arch} …");
        let built = build_ptx(root, arch, true)?;
        let cubin = sass::cubin_path(root, arch);
        std::fs::create_dir_all(cubin.parent().unwrap())?;
        let resources = ptxas_resources(&ptxas, &built.ptx, arch, &cubin)?;
        let functions = sass::parse_functions(&sass::disassemble(&nvdisasm, &cubin)?);
        Ok(Self {
            resources,
            functions,
            ptxas_version: tool_version(&ptxas),
            nvdisasm_version: tool_version(&nvdisasm),
        })
    }

    /// The analysis of one entry point.
    fn entry(&self, variant: &Variant, entry: String, precision: Precision) -> Result<Entry> {
        let function = self
            .functions
            .iter()
            .find(|f| f.name == entry)
            .with_context(|| format!("no function {entry} in the disassembly"))?;
        let resources = self
            .resources
            .iter()
            .find(|r| r.kernel == entry)
            .cloned()
            .with_context(|| format!("ptxas reported nothing for {entry}"))?;
        let precision = Precision::of(function, precision);
        Ok(Entry {
            precision,
            variant: variant.name,
            entry,
            resources,
            instructions: function.instructions.len() as u32,
            loops: function
                .loops()
                .into_iter()
                .map(|l| (l, Mix::of(function.range(l.start, l.end), precision)))
                .collect(),
            hot: function.hot_loop(precision),
            function: function.clone(),
        })
    }
}

/// "release 13.0, V13.0.88" from `TOOL --version`.
fn tool_version(tool: &Path) -> String {
    Command::new(tool)
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| {
            String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
                l.split_once("compilation tools, ")
                    .map(|(_, v)| v.to_string())
            })
        })
        .unwrap_or_else(|| "unknown version".to_string())
}

/// What the report says about one entry point.
struct Entry {
    variant: &'static str,
    /// Which instruction is the useful one (FFMA, DFMA, HMMA, DMMA).
    precision: Precision,
    entry: String,
    resources: Resources,
    /// In the whole function.
    instructions: u32,
    loops: Vec<(Loop, Mix)>,
    hot: Option<(Loop, Mix)>,
    function: Function,
}

pub fn run(root: &Path, args: SassArgs) -> Result<()> {
    if let Some(arch) = &args.arch {
        check_arch(arch)?;
    }
    let precision = args.dtype.precision();
    let dtype = args.dtype.dtype();
    if args.all {
        // One build at a time: the sm_90a build holds the Hopper variants alone.
        let arch = args
            .arch
            .clone()
            .unwrap_or_else(|| DEFAULT_ARCH.to_string());
        let target = if arch == Target::Sm90a.arch() {
            Target::Sm90a
        } else {
            Target::Portable
        };
        let module = Module::build(root, &arch)?;
        let mut rows = Vec::new();
        for variant in registry::ALL
            .iter()
            .filter(|v| v.dtypes.contains(&dtype) && v.target == target)
        {
            let tile = variant.tiles.first().copied().unwrap_or(0);
            rows.push(module.entry(variant, variant.first_entry_name(dtype, tile), precision)?);
        }
        if args.json {
            let rows: Vec<Value> = rows
                .iter()
                .map(|e| entry_json(e, &arch, precision, false))
                .collect();
            println!("{}", serde_json::to_string_pretty(&rows)?);
        } else {
            print!("{}", summary_table(&rows, precision));
        }
        if let Some(page) = &args.markdown_page {
            std::fs::write(page, summary_page(&module, &rows, &arch, precision, page))
                .with_context(|| format!("cannot write {}", page.display()))?;
            eprintln!("wrote {}", page.display());
        }
        return Ok(());
    }

    let name = args
        .variant
        .as_deref()
        .expect("clap requires --variant or --all");
    let Some(variant) = registry::find(name) else {
        let names: Vec<&str> = registry::ALL.iter().map(|v| v.name).collect();
        bail!("no variant `{name}`: choose one of {}", names.join(", "));
    };
    let tile = match (args.tile, variant.tiles) {
        (None, tiles) => tiles.first().copied().unwrap_or(0),
        (Some(t), tiles) if tiles.contains(&t) => t,
        (Some(t), []) => bail!("variant {name} takes no --tile (got {t})"),
        (Some(t), tiles) => bail!("variant {name} takes --tile {tiles:?}, not {t}"),
    };
    let own = variant.target.arch();
    let arch = match args.arch.as_deref() {
        None => own.to_string(),
        Some(arch) if (arch == "sm_90a") != (variant.target == Target::Sm90a) => bail!(
            "variant {name} is in the {own} build{}, not in the {arch} one",
            if variant.target == Target::Sm90a {
                " (Hopper's wgmma exists there only)"
            } else {
                " (the sm_90a build holds the Hopper variants alone)"
            }
        ),
        Some(arch) => arch.to_string(),
    };
    let module = Module::build(root, &arch)?;
    let entry = module.entry(variant, variant.first_entry_name(dtype, tile), precision)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&entry_json(&entry, &arch, precision, true))?
        );
    } else {
        print!("{}", detail(&entry, &arch, args.all_loops, args.listing));
    }
    Ok(())
}

/// `0.871`, or `–` for an empty loop.
fn decimal(f: Fraction) -> String {
    if f.denominator == 0 {
        "–".into()
    } else {
        format!("{:.3}", f.value())
    }
}

/// `512/544 = 16/17`: the counts, then the fraction in lowest terms when it differs.
fn counts_and_fraction(numerator: u32, denominator: u32) -> String {
    let reduced = Fraction::new(numerator, denominator);
    if reduced.numerator == numerator {
        format!("{numerator}/{denominator}")
    } else {
        format!("{numerator}/{denominator} = {reduced}")
    }
}

/// A fraction, or `–` where there is none.
fn or_dash(f: Option<Fraction>) -> String {
    f.map_or_else(|| "–".to_string(), |f| f.to_string())
}

fn spills(r: &Resources) -> u32 {
    r.spill_stores + r.spill_loads
}

/// The Markdown report for one entry point.
fn detail(e: &Entry, arch: &str, all_loops: bool, listing: bool) -> String {
    let p = e.precision;
    let (fma, useful) = (p.fma_opcode(), p.useful_name());
    let r = &e.resources;
    let mut out = String::new();
    let _ = writeln!(out, "## `{}` on {arch}: `{}`\n", e.variant, e.entry);
    let _ = writeln!(
        out,
        "ptxas -O3: {} registers, {} B stack frame, {} B spill stores, {} B spill loads, \
         {} B static shared memory (the kernels' tiles are in the dynamic pool).\n",
        r.registers, r.stack_frame, r.spill_stores, r.spill_loads, r.shared_bytes
    );
    let _ = write!(
        out,
        "SASS: {} instructions, {} loop(s). ",
        e.instructions,
        e.loops.len()
    );
    let Some((hot, mix)) = &e.hot else {
        let _ = writeln!(out, "No loop does an {fma}: nothing to report.");
        if all_loops {
            out.push_str(&loop_table(e, p));
        }
        return out;
    };
    let _ = writeln!(
        out,
        "Hot loop (the innermost loop with the most {fma}): {:#06x}–{:#06x}, {} instructions.\n",
        hot.start, hot.end, mix.total
    );
    let _ = writeln!(out, "| class | count | share | opcodes |");
    let _ = writeln!(out, "|---|---:|---:|---|");
    for class in Class::ALL {
        let n = mix.count(class);
        let label = match class {
            Class::Fma => format!("{useful} ({fma})"),
            _ => class.label().to_string(),
        };
        let opcodes: Vec<String> = mix
            .opcodes_of(class)
            .iter()
            .map(|(op, n)| format!("{op} ×{n}"))
            .collect();
        let _ = writeln!(
            out,
            "| {label} | {n} | {:.1} % | {} |",
            100.0 * Fraction::new(n, mix.total).value(),
            opcodes.join(", ")
        );
    }
    let _ = writeln!(out, "| **total** | **{}** | 100 % | |\n", mix.total);
    let _ = writeln!(
        out,
        "- useful {useful} per instruction, {fma} / all: {} = {}",
        counts_and_fraction(mix.fma(), mix.total),
        decimal(mix.fma_share())
    );
    let shared = mix.count(Class::SharedLoad);
    let _ = write!(
        out,
        "- the document's count, {fma} / ({fma} + shared loads): "
    );
    match mix.fma_per_fma_and_shared_load() {
        Some(share) => {
            let _ = write!(
                out,
                "{} = {}",
                counts_and_fraction(mix.fma(), mix.fma() + shared),
                decimal(share)
            );
        }
        None => out.push_str("– (the loop reads no shared memory)"),
    }
    match sass::document_share(e.variant, p) {
        Some((kernel, share)) => {
            let _ = writeln!(out, "; `001` found {share} for `{kernel}`");
        }
        None => out.push('\n'),
    }
    if all_loops {
        out.push('\n');
        out.push_str(&loop_table(e, p));
    }
    if listing {
        let _ = writeln!(out, "\n```");
        let mut labels: Vec<(&u32, &String)> = e
            .function
            .labels
            .iter()
            .map(|(label, address)| (address, label))
            .collect();
        labels.sort();
        for i in e.function.range(hot.start, hot.end) {
            for (_, label) in labels.iter().filter(|(a, _)| **a == i.address) {
                let _ = writeln!(out, "{label}:");
            }
            let _ = writeln!(
                out,
                "/*{:04x}*/ {:>6} {} {} ;",
                i.address,
                i.predicate.as_deref().unwrap_or(""),
                i.opcode,
                i.operands
            );
        }
        let _ = writeln!(out, "```");
    }
    out
}

/// Every loop of an entry point, for `--all-loops`.
fn loop_table(e: &Entry, p: Precision) -> String {
    let fma = p.fma_opcode();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| loop | depth | innermost | instructions | {fma} | shared loads | barriers | hot |"
    );
    let _ = writeln!(out, "|---|---:|---|---:|---:|---:|---:|---|");
    for (l, mix) in &e.loops {
        let hot = e.hot.as_ref().is_some_and(|(h, _)| h == l);
        let _ = writeln!(
            out,
            "| {:#06x}–{:#06x} | {} | {} | {} | {} | {} | {} | {} |",
            l.start,
            l.end,
            l.depth,
            if l.innermost { "yes" } else { "no" },
            mix.total,
            mix.fma(),
            mix.count(Class::SharedLoad),
            mix.count(Class::Barrier),
            if hot { "←" } else { "" }
        );
    }
    out
}

/// The `--all` table: one row per variant.
fn summary_table(rows: &[Entry], p: Precision) -> String {
    let fma = p.fma_opcode();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| variant | entry | regs | spills (B) | loop instr | {fma} | {fma} share | \
         {fma} / ({fma} + LDS) | `001` | LDS.128 | LDG.128 | BAR |"
    );
    let _ = writeln!(
        out,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for e in rows {
        let document = sass::document_share(e.variant, p)
            .map(|(_, share)| share.to_string())
            .unwrap_or_default();
        let _ = write!(
            out,
            "| {} | `{}` | {} | {} | ",
            e.variant,
            e.entry,
            e.resources.registers,
            spills(&e.resources)
        );
        let _ = match &e.hot {
            // A tensor-core kernel's useful instruction is its `mma`: the row names it.
            Some((_, mix)) => writeln!(
                out,
                "{} | {}{} | {} | {} | {document} | {} | {} | {} |",
                mix.total,
                mix.fma(),
                if e.precision == p {
                    String::new()
                } else {
                    format!(" {}", e.precision.fma_opcode())
                },
                decimal(mix.fma_share()),
                or_dash(mix.fma_per_fma_and_shared_load()),
                mix.count_bits(Class::SharedLoad, 128),
                mix.count_bits(Class::GlobalLoad, 128),
                mix.count(Class::Barrier)
            ),
            None => writeln!(out, "– | 0 | – | – | {document} | – | – | – |"),
        };
    }
    out
}

/// The Markdown page `--markdown-page` writes: the table with what it was made with and what
/// the columns mean, and the document's progression read off it.
fn summary_page(module: &Module, rows: &[Entry], arch: &str, p: Precision, page: &Path) -> String {
    let fma = p.fma_opcode();
    let dtype = match p {
        Precision::F32 | Precision::TensorCoreTf32 | Precision::Warpgroup => "f32",
        Precision::F64 | Precision::TensorCoreF64 => "f64",
        Precision::WarpgroupFp8 => "e4m3",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The hot loop of every variant in SASS ({arch}, {dtype})\n"
    );
    let _ = writeln!(
        out,
        "Generated by `cargo xtask sass --all --arch {arch} --dtype {dtype} --markdown-page {}` \
         (ptxas {}, nvdisasm {}); do not edit by hand. `cargo xtask sass --variant NAME` gives \
         one variant in detail.\n",
        page.display(),
        module.ptxas_version,
        module.nvdisasm_version
    );
    let _ = writeln!(
        out,
        "Each row is the variant's entry point at its default tile. *regs* and *spills* are \
         ptxas's report. The other columns count the instructions of the hot loop: the \
         innermost loop with the most {fma}, an address range closed by a backward branch, \
         counted statically. *{fma} share* is {fma} over every instruction of the loop; \
         *{fma} / ({fma} + LDS)* is the document's own count (`001` reads only `fma` and \
         `ld.shared` off its PTX), next to the document's figure in *`001`*.\n"
    );
    out.push_str(&summary_table(rows, p));
    // The document's four kernels: does the SASS have its mix, and what is left of it once
    // every instruction of the loop counts?
    let progression: Vec<(&Entry, Fraction, Option<Fraction>, f64)> = rows
        .iter()
        .filter_map(|e| {
            let (_, document) = sass::document_share(e.variant, p)?;
            let (_, mix) = e.hot.as_ref()?;
            Some((
                e,
                document,
                mix.fma_per_fma_and_shared_load(),
                mix.fma_share().value(),
            ))
        })
        .collect();
    if !progression.is_empty() {
        let names: Vec<&str> = progression.iter().map(|(e, ..)| e.variant).collect();
        let ours: Vec<String> = progression.iter().map(|(_, _, o, _)| or_dash(*o)).collect();
        let documents: Vec<String> = progression.iter().map(|(_, d, ..)| d.to_string()).collect();
        let shares: Vec<String> = progression
            .iter()
            .map(|(.., share)| format!("{share:.2}"))
            .collect();
        let matches = progression.iter().all(|(_, d, o, _)| Some(*d) == *o);
        let _ = writeln!(
            out,
            "\nThe document's progression, {}: {fma} / ({fma} + LDS) is {} in the SASS, \
             against the document's {} ({}). Counting every instruction of the loop (staging \
             loads and stores, address arithmetic, barriers, the branch), the useful share is \
             {}. A `–` in the {fma} / ({fma} + LDS) column is a loop that reads no shared memory.",
            names.join(" → "),
            ours.join(" → "),
            documents.join(" → "),
            if matches {
                "the same mix"
            } else {
                "not the same mix everywhere"
            },
            shares.join(" → ")
        );
    }
    out
}

/// The JSON of one entry point; `loops` adds every loop.
fn entry_json(e: &Entry, arch: &str, p: Precision, loops: bool) -> Value {
    let r = &e.resources;
    let mut value = json!({
        "variant": e.variant,
        "entry": e.entry,
        "arch": arch,
        "fma_opcode": p.fma_opcode(),
        "registers": r.registers,
        "stack_frame_bytes": r.stack_frame,
        "spill_store_bytes": r.spill_stores,
        "spill_load_bytes": r.spill_loads,
        "static_shared_bytes": r.shared_bytes,
        "instructions": e.instructions,
        "hot_loop": e.hot.as_ref().map(|(l, mix)| loop_json(l, mix, e.variant, p)),
    });
    if loops {
        value["loops"] = e
            .loops
            .iter()
            .map(|(l, mix)| loop_json(l, mix, e.variant, p))
            .collect();
    }
    value
}

fn loop_json(l: &Loop, mix: &Mix, variant: &str, p: Precision) -> Value {
    let classes: serde_json::Map<String, Value> = Class::ALL
        .iter()
        .map(|c| (c.key().to_string(), json!(mix.count(*c))))
        .collect();
    json!({
        "start": l.start,
        "end": l.end,
        "depth": l.depth,
        "innermost": l.innermost,
        "instructions": mix.total,
        "fma": mix.fma(),
        "fma_share": mix.fma_share().value(),
        "fma_per_fma_and_shared_load": mix.fma_per_fma_and_shared_load().map(|f| f.to_string()),
        "document": sass::document_share(variant, p).map(|(_, s)| s.to_string()),
        "lds_128": mix.count_bits(Class::SharedLoad, 128),
        "ldg_128": mix.count_bits(Class::GlobalLoad, 128),
        "classes": classes,
        "opcodes": mix.opcodes,
    })
}

//! `cargo xtask …`: the project's developer commands.
use anyhow::{bail, Context, Result};
use clap::Parser;
use ptx_builder::cli::{Cli, Cmd};
use ptx_builder::*;
use std::process::Command;

mod gpu_bundle;
mod sass_cmd;

fn main() -> Result<()> {
    let root = workspace_root();
    match Cli::parse().command {
        Cmd::BuildPtx { arch } => {
            let built = build_ptx(&root, &arch, false)?;
            println!(
                "built {} ({} entry points, {} KiB) for {arch} in {:.1} s",
                built
                    .ptx
                    .strip_prefix(&root)
                    .unwrap_or(&built.ptx)
                    .display(),
                built.entry_points,
                built.bytes / 1024,
                built.elapsed.as_secs_f64()
            );
        }
        Cmd::InstallCudaTools => {
            let dir = cuda_tools_dir(&root);
            let status = Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--target",
                ])
                .arg(&dir)
                .args(CUDA_TOOL_PACKAGES)
                .status()
                .context("cannot run `python3 -m pip`: install Python 3 with pip")?;
            if !status.success() {
                bail!("pip could not install {}", CUDA_TOOL_PACKAGES.join(" "));
            }
            println!(
                "installed {} into {}",
                CUDA_TOOL_PACKAGES.join(", "),
                dir.display()
            );
        }
        Cmd::Ptxas { arch } => {
            let built = build_ptx(&root, &arch, true)?;
            let ptxas = find_ptxas(&root)
                .context("ptxas not found: run `cargo xtask install-cuda-tools` (or set PTXAS)")?;
            let cubin = built.ptx.with_extension(format!("{arch}.cubin"));
            // Every kernel uses the dynamic pool, sized per launch (the registry's geometry), so
            // ptxas's static shared memory is 0 by design.
            println!(
                "{:<24} {:>5} {:>12} {:>6} {:>7}",
                "kernel", "regs", "static smem", "stack", "spills"
            );
            for r in ptxas_resources(&ptxas, &built.ptx, &arch, &cubin)? {
                println!(
                    "{:<24} {:>5} {:>12} {:>6} {:>7}",
                    r.kernel,
                    r.registers,
                    r.shared_bytes,
                    r.stack_frame,
                    r.spill_stores + r.spill_loads
                );
            }
        }
        Cmd::Readme { check } => {
            if check {
                let readme = std::fs::read_to_string(root.join("README.md"))?;
                let expected =
                    front_page::with_tables(&readme, &front_page::results_tables(&root)?)?;
                if expected != readme {
                    bail!("README.md's results tables differ from docs/results/: run `cargo xtask readme`");
                }
                println!("README.md's results tables match docs/results/");
            } else if front_page::update_readme(&root)? {
                println!("rewrote README.md's results tables from docs/results/");
            } else {
                println!("README.md's results tables already match docs/results/");
            }
        }
        Cmd::Book => {
            let started = std::time::Instant::now();
            let (generated, index) = ptx_builder::book::build(&root)?;
            println!(
                "built the book ({} pages, from {}) in {:.1} s; open {}",
                generated.pages.len(),
                generated
                    .root
                    .strip_prefix(&root)
                    .unwrap_or(&generated.root)
                    .display(),
                started.elapsed().as_secs_f64(),
                index.display()
            );
        }
        Cmd::Sass(args) => sass_cmd::run(&root, args)?,
        Cmd::GpuBundle { out, dev_host } => gpu_bundle::run(&root, &root.join(out), dev_host)?,
    }
    Ok(())
}

//! No import circle: a reader can take the host's and the library's modules in an order where
//! each uses only what came before.
//!
//! - `host/src`, file by file (the command line and the experiments): once, the pipeline took
//!   `cli`'s types, `cli` imported the experiments and the experiments the pipeline.
//! - `gpu-gemm/src`, by top-level module: the layers its `lib.rs` names.
//! - `kernels-gpu/src`, file by file, outside the emulator.
//!
//! An edge is a `crate::…` or `super::…` path (in `use` or in code) resolved to the file of the
//! longest module prefix, or a path through a child module the file declares (`mod x;` then
//! `x::…`). The crate roots only declare and re-export, and are left out; so are comments and
//! the `#[cfg(test)]` modules at the end of a file (a module's tests may drive it through the
//! layers above it).
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A source file: its module path (`experiments::sweeps::cpu`) and its text.
struct Source {
    module: Vec<String>,
    text: String,
}

fn sources(src: &Path) -> Vec<Source> {
    fn walk(dir: &Path, src: &Path, out: &mut Vec<Source>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, src, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(src).unwrap().with_extension("");
                let mut module: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if module.last().is_some_and(|m| m == "mod") {
                    module.pop();
                }
                let text = std::fs::read_to_string(&path).unwrap();
                out.push(Source { module, text });
            }
        }
    }
    let mut out = Vec::new();
    walk(src, src, &mut out);
    out
}

/// The code of a file: without comments and without its trailing test modules.
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let end = (0..lines.len())
        .find(|&i| {
            lines[i].trim() == "#[cfg(test)]"
                && lines.get(i + 1).is_some_and(|next| next.contains("mod "))
        })
        .unwrap_or(lines.len());
    lines[..end]
        .iter()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every module path a file's code names through `crate::` or `super::` (a braced list
/// `a::{b, c}` names `a::b` and `a::c`), resolved against the file's own module.
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':';
        let rest: String = chars[i..chars.len().min(i + 7)].iter().collect();
        let (root, skip) = if starts_word && rest.starts_with("crate::") {
            (Vec::new(), 7)
        } else if starts_word && rest.starts_with("super::") {
            // `super` of module a::b (`a/b.rs`) is a; of module a (`a/mod.rs`), the root.
            (module[..module.len().saturating_sub(1)].to_vec(), 7)
        } else {
            i += 1;
            continue;
        };
        let mut path = root;
        let mut j = i + skip;
        loop {
            let start = j;
            while j < chars.len() && is_ident(chars[j]) {
                j += 1;
            }
            let segment: String = chars[start..j].iter().collect();
            if segment == "super" {
                path.pop();
            } else if !segment.is_empty() {
                path.push(segment);
            }
            if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                j += 2;
                if chars.get(j) == Some(&'{') {
                    let close = (j..chars.len()).find(|&k| chars[k] == '}').unwrap_or(j);
                    let inner: String = chars[j + 1..close].iter().collect();
                    for item in inner.split(',') {
                        let name: String =
                            item.trim().chars().take_while(|&c| is_ident(c)).collect();
                        if !name.is_empty() && name != "self" {
                            let mut p = path.clone();
                            p.push(name);
                            out.push(p);
                        }
                    }
                    j = close;
                    break;
                }
                continue;
            }
            break;
        }
        out.push(path);
        i = j.max(i + 1);
    }
    out
}

/// The modules each node uses: nodes are the files (`whole_files`), or the top-level modules.
fn graph(sources: &[Source], whole_files: bool) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let node = |module: &[String]| -> Option<String> {
        match (module.is_empty(), whole_files) {
            (true, _) => None,
            (false, true) => Some(module.join("::")),
            (false, false) => Some(module[0].clone()),
        }
    };
    // The longest prefix of `path` that is a file's module.
    let file_of = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| modules.contains(p))
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in sources {
        let Some(from) = node(&s.module) else {
            continue;
        };
        let code = code(&s.text);
        let mut targets = named_paths(&s.module, &code);
        // `mod x;` then `x::…`: the file uses its child x.
        for line in code.lines() {
            let decl = line
                .trim()
                .trim_start_matches("pub ")
                .trim_start_matches("pub(crate) ");
            if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                let used = code
                    .match_indices(&format!("{name}::"))
                    .any(|(at, _)| !code[..at].ends_with(|c: char| is_ident(c) || c == ':'));
                if used {
                    let mut child = s.module.clone();
                    child.push(name.to_string());
                    targets.push(child);
                }
            }
        }
        let entry = edges.entry(from.clone()).or_default();
        for t in targets {
            if let Some(to) = file_of(&t).and_then(|f| node(&f)) {
                if to != from {
                    entry.insert(to);
                }
            }
        }
    }
    edges
}

/// A circle of the graph, if any, as the nodes in order.
fn circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == m).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn root() -> std::path::PathBuf {
    ptx_builder::workspace_root()
}

#[test]
fn host_src_has_no_import_circle_between_its_files() {
    let edges = graph(&sources(&root().join("host/src")), true);
    assert!(edges.contains_key("cli") && edges.contains_key("experiments::sweeps::cpu"));
    assert!(
        edges["cli"].contains("experiments"),
        "cli runs the experiments: {edges:?}"
    );
    if let Some(c) = circle(&edges) {
        panic!("an import circle under host/src: {}", c.join(" → "));
    }
}

#[test]
fn gpu_gemm_modules_form_layers() {
    let edges = graph(&sources(&root().join("gpu-gemm/src")), false);
    assert!(
        edges["run"].contains("gpu") && edges["api"].contains("run"),
        "{edges:?}"
    );
    if let Some(c) = circle(&edges) {
        panic!(
            "an import circle between gpu-gemm's modules: {}",
            c.join(" → ")
        );
    }
}

/// The kernels, file by file, outside the emulator (`emu/`, whose scheduler and memory model
/// are one machine): once, `device::half` took `gemm`'s element type while `gemm` built on the
/// 16-bit types, and the Hopper scheduler took `gemm`'s tile order while `gemm` named its tiles.
#[test]
fn kernels_gpu_has_no_import_circle_outside_the_emulator() {
    let kernels: Vec<Source> = sources(&root().join("kernels-gpu/src"))
        .into_iter()
        .filter(|s| s.module.first().is_none_or(|m| m != "emu"))
        .collect();
    let edges = graph(&kernels, true);
    assert!(
        edges["gemm"].contains("fused") && edges["device::half"].contains("dtype"),
        "{edges:?}"
    );
    if let Some(c) = circle(&edges) {
        panic!("an import circle under kernels-gpu/src: {}", c.join(" → "));
    }
}

#[test]
fn a_planted_circle_is_found() {
    let file = |module: &str, text: &str| Source {
        module: module.split("::").map(String::from).collect(),
        text: text.to_string(),
    };
    // The shape of the old host: run takes cli's types, cli the experiments', and an
    // experiment the pipeline; a child using its parent's item while the parent calls it.
    let planted = [
        file("run", "use crate::cli::{BackendArg, Cli};\n"),
        file("cli", "use crate::experiments::Experiment;\n"),
        file("experiments", "pub mod auto;\nfn f() { auto::run(); }\n"),
        file(
            "experiments::auto",
            "use super::{Context, label};\nuse crate::run::Report;\n",
        ),
    ];
    let c = circle(&graph(&planted, true)).expect("the circle is found");
    assert_eq!(c.first(), c.last());
    assert!(c.len() >= 3, "{c:?}");
    // Comments, test modules and a child's own items are not edges.
    let clean = [
        file("a", "// crate::b::x\nuse crate::b::y;\n"),
        file(
            "b",
            "/// [`crate::a`]\n#[cfg(test)]\nmod tests {\n    use crate::a::z;\n}\n",
        ),
    ];
    assert!(circle(&graph(&clean, true)).is_none());
}

/// The emulator, file by file: its scheduler, the thread context and the operations that
/// take the context (memory, barriers, TMA, `wgmma`, clusters) import each other one way only;
/// what a thread carries between operations is defined apart (`emu/state.rs`), so that the
/// context holds it without importing the operations back.
#[test]
fn the_emulator_has_no_import_circle_between_its_files() {
    let emulator: Vec<Source> = sources(&root().join("kernels-gpu/src"))
        .into_iter()
        .filter(|s| s.module.first().is_some_and(|m| m == "emu"))
        .collect();
    let edges = graph(&emulator, true);
    assert!(
        edges["emu::schedule"].contains("emu::context")
            && edges["emu::memory"].contains("emu::context"),
        "{edges:?}"
    );
    if let Some(c) = circle(&edges) {
        panic!("an import circle in the emulator: {}", c.join(" → "));
    }
}

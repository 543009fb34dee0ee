//! Every command the documents name exists (once a script pointed at a `cargo xtask
//! gpu-bundle` that did not exist).
//!
//! Scans README.md, docs/*.md, docs/perf-notes/*.md, xtask/scripts/* and `host --help`'s
//! examples for `cargo xtask CMD …`, `cargo run … -p host -- ARGS`, and `host ARGS` (also
//! `target/release/host`, `.gpu/host`, the scripts' `$host`) where ARGS start with an option or
//! `experiment`. Against the clap definitions of both programs, each one's subcommand must exist,
//! each `--option` must be one that subcommand takes, each variant named by `--variant` must be
//! registered, and a command with no placeholder in it (`NAME`, `[--size N]`, `…`, `$size`) must
//! parse as written.
use clap::CommandFactory;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tool {
    Xtask,
    Host,
}

#[derive(Debug)]
struct Found {
    place: String,
    tool: Tool,
    text: String,
}

fn root() -> PathBuf {
    ptx_builder::workspace_root()
}

/// The documents: README.md, docs/*.md, the performance notes by chapter (docs/perf-notes/), the
/// book's hand-written pages (docs/book/, its chapters' notes and exercises in
/// docs/book/chapters/) and xtask/scripts/*.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    for dir in [
        "docs",
        "docs/perf-notes",
        "docs/book",
        "docs/book/chapters",
        "xtask/scripts",
    ] {
        let mut in_dir: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .filter(|p| dir.starts_with("xtask") || p.extension().is_some_and(|e| e == "md"))
            .collect();
        in_dir.sort();
        files.extend(in_dir);
    }
    files
}

/// `${NAME:-default}` → `default`, as the shell expands it when NAME is unset.
fn expand_defaults(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out += &rest[..start];
        let after = &rest[start + 2..];
        match (after.find('}'), after.find(":-")) {
            (Some(end), Some(dash)) if dash < end => {
                out += &after[dash + 2..end];
                rest = &after[end + 1..];
            }
            _ => {
                out += "${";
                rest = after;
            }
        }
    }
    out + rest
}

/// Where a command's text ends: a closing backtick, a comment, a pipe or redirection.
fn command_text(rest: &str) -> String {
    let end = ["`", " #", " |", " 2>", " >", ";", "&&"]
        .iter()
        .filter_map(|stop| rest.find(stop))
        .min()
        .unwrap_or(rest.len());
    rest[..end].trim().to_string()
}

/// The commands named on one line.
fn commands_in(line: &str) -> Vec<(Tool, String)> {
    let line = expand_defaults(line);
    let mut found = Vec::new();
    for (at, _) in line.match_indices("cargo xtask ") {
        found.push((
            Tool::Xtask,
            command_text(&line[at + "cargo xtask ".len()..]),
        ));
    }
    for marker in ["-p host -- ", "--package host -- "] {
        for (at, _) in line.match_indices(marker) {
            found.push((Tool::Host, command_text(&line[at + marker.len()..])));
        }
    }
    for (at, _) in line.match_indices("host ") {
        let before = line[..at].chars().next_back();
        let after = &line[at + "host ".len()..];
        let starts_a_command = matches!(before, None | Some(' ' | '`' | '/' | '$' | '('));
        let takes_arguments = (after.starts_with("--") && !after.starts_with("-- "))
            || after.starts_with("experiment");
        if starts_a_command && takes_arguments {
            found.push((Tool::Host, command_text(after)));
        }
    }
    found
}

fn scan() -> Vec<Found> {
    let root = root();
    let mut found = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            for (tool, text) in commands_in(line) {
                found.push(Found {
                    place: format!("{name}:{}", i + 1),
                    tool,
                    text,
                });
            }
        }
    }
    let help = host::cli::Cli::command()
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    for line in help.lines() {
        for (tool, text) in commands_in(line) {
            found.push(Found {
                place: "host --help".into(),
                tool,
                text,
            });
        }
    }
    found
}

/// A word that stands for something: `NAME`, `N`, `[--size`, `…`, `$size`, `sm_80|sm_86`.
fn is_placeholder(word: &str) -> bool {
    word.contains(['[', ']', '…', '$', '|', '{', '}', '<', '>'])
        || (word.chars().any(|c| c.is_ascii_uppercase())
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(['"', '\'']).to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// What is wrong with one command, if anything.
fn check(tool: Tool, text: &str) -> Result<(), String> {
    let words = words(text);
    let (mut command, program) = match tool {
        Tool::Xtask => (ptx_builder::cli::Cli::command(), "cargo xtask"),
        Tool::Host => (host::cli::Cli::command(), "host"),
    };
    // The subcommands named: xtask always has one; host's `experiment NAME`.
    let mut rest = &words[..];
    let mut path = vec![program.to_string()];
    while let Some(first) = rest.first() {
        if first.starts_with('-') || !command.has_subcommands() {
            break;
        }
        let name = first.trim_matches(['[', ']']);
        if is_placeholder(name) {
            // "`cargo xtask …`": some subcommand.
            path.push(name.to_string());
            rest = &rest[1..];
            break;
        }
        let Some(sub) = command.find_subcommand(name).cloned() else {
            return Err(format!("`{}` has no subcommand `{name}`", path.join(" ")));
        };
        path.push(name.to_string());
        command = sub;
        rest = &rest[1..];
    }
    if tool == Tool::Xtask && path.len() == 1 {
        return Err("no xtask subcommand".into());
    }
    let longs: Vec<String> = command
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .chain(["help".to_string()])
        .collect();
    for (i, word) in rest.iter().enumerate() {
        let word = word.trim_matches(['[', ']']);
        let Some(option) = word.strip_prefix("--") else {
            continue;
        };
        let option = option.split('=').next().unwrap();
        if !longs.iter().any(|l| l == option) {
            return Err(format!("`{}` takes no `--{option}`", path.join(" ")));
        }
        if tool == Tool::Host && option == "variant" {
            for item in rest.get(i + 1).map_or("", |v| v.as_str()).split(',') {
                let name = item.split(':').next().unwrap();
                if !is_placeholder(name) && !name.is_empty() {
                    gpu_gemm::registry::find(name)
                        .map_err(|e| format!("--variant {name}: {e:#}"))?;
                }
            }
        }
    }
    // Written out in full (not only named, as in "`cargo xtask sass` counts …"): it must parse,
    // values included.
    if !rest.is_empty() && !words.iter().any(|w| is_placeholder(w)) {
        let argv = std::iter::once(program.to_string()).chain(words.iter().cloned());
        let parsed = match tool {
            Tool::Xtask => ptx_builder::cli::Cli::try_parse_from_args(argv),
            Tool::Host => host::cli::Cli::try_parse_from_args(argv),
        };
        parsed.map_err(|e| e.to_string().lines().next().unwrap_or("").to_string())?;
    }
    Ok(())
}

/// `try_parse_from`, where `--help` (which clap reports as an "error") counts as parsed.
trait ParseArgs {
    fn try_parse_from_args(argv: impl Iterator<Item = String>) -> Result<(), clap::Error>;
}

impl<T: clap::Parser> ParseArgs for T {
    fn try_parse_from_args(argv: impl Iterator<Item = String>) -> Result<(), clap::Error> {
        match T::try_parse_from(argv) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[test]
fn every_command_the_documents_name_exists() {
    let found = scan();
    let count = |tool| found.iter().filter(|f| f.tool == tool).count();
    // The scan itself must keep finding the commands (README alone names dozens).
    assert!(count(Tool::Xtask) >= 8, "{found:#?}");
    assert!(count(Tool::Host) >= 20, "{found:#?}");
    for needed in ["gpu-bundle", "build-ptx", "install-cuda-tools", "sass"] {
        assert!(
            found
                .iter()
                .any(|f| f.tool == Tool::Xtask && f.text.starts_with(needed)),
            "no document names `cargo xtask {needed}`"
        );
    }
    for f in &found {
        println!("{}: {:?} {}", f.place, f.tool, f.text);
    }
    let wrong: Vec<String> = found
        .iter()
        .filter_map(|f| {
            check(f.tool, &f.text)
                .err()
                .map(|e| format!("{}: `{}`: {e}", f.place, f.text))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} commands do not exist as written:\n{}",
        wrong.len(),
        found.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_check_refuses_what_does_not_exist() {
    let refused = |tool, text: &str| check(tool, text).is_err();
    assert!(refused(Tool::Xtask, "gpu-bundel"));
    assert!(!refused(Tool::Xtask, "sass"), "named, not run");
    assert!(
        refused(Tool::Xtask, "sass --tile 8"),
        "run: --variant or --all is required"
    );
    assert!(refused(Tool::Xtask, "sass --variant v4 --colour"));
    assert!(refused(Tool::Host, "--variant v4 --iterations 3"));
    assert!(refused(Tool::Host, "--variant v9"));
    assert!(
        refused(Tool::Host, "--variant v4 --iters 0"),
        "values parse too"
    );
    assert!(refused(Tool::Host, "experiment 006"));
    assert!(!refused(
        Tool::Host,
        "experiment hopper --ladders bf16 --shapes 264x136x264"
    ));
    // The 16-bit types, as a document would write them: accepted for runs, with cuBLAS too.
    for dtype in ["bf16", "f16"] {
        assert!(!refused(
            Tool::Host,
            &format!("--variant wgmma-16bit --dtype {dtype} --backend emu --m 64 --n 64 --k 64 --init seed")
        ));
        assert!(!refused(
            Tool::Host,
            &format!("--variant wgmma-16bit,auto --dtype {dtype} --compare cublas --size 4096")
        ));
    }
    assert!(refused(Tool::Host, "--variant wgmma-16bit --dtype f8"));
    assert!(
        refused(Tool::Host, "experiment progression --dtype bf16"),
        "the experiments measure f32 and f64"
    );
    assert!(refused(Tool::Host, "experiment tile-sweep --sizes 16"));
    assert!(!refused(Tool::Host, "experiment NAME --help"));
    assert!(!refused(
        Tool::Host,
        "experiment all [--out DIR] [--cpu-time-limit SECS]"
    ));
    assert!(!refused(Tool::Xtask, "build-ptx [--arch sm_80|sm_86|…]"));
    assert!(!refused(Tool::Xtask, "…"), "some subcommand");
    assert_eq!(
        commands_in("  $host --variant ${BEST:-best:1,gemm128} --size $size 2>&1 | tee x"),
        [(
            Tool::Host,
            "--variant best:1,gemm128 --size $size".to_string()
        )]
    );
    assert_eq!(
        commands_in("cargo run --release -p host -- --list   # every variant"),
        [(Tool::Host, "--list".to_string())]
    );
    assert!(commands_in("the host CPU (2 threads)").is_empty());
}

/// The README is a front page: short, and its results tables are what `docs/results/` says
/// (`cargo xtask readme` writes them; a rerun experiment that was not copied in fails here).
#[test]
fn the_readme_is_a_front_page_whose_tables_match_docs_results() {
    use ptx_builder::front_page;
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 160,
        "README.md has {lines} lines: it is the front page (at most 160); \
         move the detail into the book (docs/book/) or docs/results-history.md"
    );
    let tables = front_page::results_tables(&root).unwrap();
    let expected = front_page::with_tables(&readme, &tables).unwrap();
    assert!(
        expected == readme,
        "README.md's results tables differ from docs/results/: run `cargo xtask readme`"
    );
    // The tables are not empty: one row per type in each.
    for needle in ["| bf16 |", "| f16 |", "| f64 |", "| tf32 |", "e4m3"] {
        assert!(tables.contains(needle), "no row `{needle}` in:\n{tables}");
    }
}

/// A change to a results file shows: the drift check is not one that cannot fail.
#[test]
fn the_readme_check_sees_a_drifted_table() {
    use ptx_builder::front_page;
    let root = root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let tables = front_page::results_tables(&root).unwrap();
    let drifted = tables.replacen("| bf16 |", "| bf16 (stale) |", 1);
    assert_ne!(drifted, tables);
    let stale_readme = front_page::with_tables(&readme, &drifted).unwrap();
    assert_ne!(
        front_page::with_tables(&stale_readme, &tables).unwrap(),
        stale_readme,
        "regenerating a stale README must change it"
    );
}

//! Progress of the steps that can take seconds: the f64 reference of a large problem, and the
//! emulator at large sizes (the experiments' bars share the same display).
//!
//! Everything goes to stderr, so that stdout (the report lines and tables) stays clean when it
//! is piped or redirected. On a terminal a step shows an `indicatif` bar while it runs; when
//! stderr is not a terminal (CI, a log file) the bar is hidden and the step prints one line when
//! it starts. Either way a line with its duration is printed when it ends.
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The process's bars, drawn together on stderr (an experiment's bar and a step's bar inside it).
pub fn bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(MultiProgress::new)
}

/// Prints `line` on stderr above the bars (or plainly, when they are hidden).
pub fn note(line: &str) {
    bars().suspend(|| eprintln!("{line}"));
}

/// A step of `len` units of work (blocks, column panels), labelled `what`.
pub struct Step {
    bar: ProgressBar,
    what: String,
    start: Instant,
}

impl Step {
    /// Starts the step: a bar of `len` `unit`s on a terminal, else the line `what…` on stderr.
    pub fn start(what: String, len: u64, unit: &str) -> Self {
        let bar = bars().add(ProgressBar::new(len));
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit}, {{elapsed}}"
            ))
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.set_message(what.clone());
        if bar.is_hidden() {
            note(&format!("{what}…"));
        } else {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Self {
            bar,
            what,
            start: Instant::now(),
        }
    }

    /// Counts `n` units done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Removes the bar and prints how long the step took.
    pub fn finish(self) {
        let line = format!(
            "{}: done in {:.1} s",
            self.what,
            self.start.elapsed().as_secs_f64()
        );
        self.bar.finish_and_clear();
        bars().remove(&self.bar);
        note(&line);
    }
}

impl Drop for Step {
    /// A step left by an error: its bar goes, without a "done" line.
    fn drop(&mut self) {
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
            bars().remove(&self.bar);
        }
    }
}

/// `m×n×k`.
pub fn dims(m: u32, n: u32, k: u32) -> String {
    format!("{m}×{n}×{k}")
}

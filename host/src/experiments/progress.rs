//! Progress of an experiment: an `indicatif` bar on the terminal (stderr; indicatif hides it
//! when stderr is not a terminal, as in CI or a log file), and one printed line per finished
//! run, which a log keeps either way. The bar is one of [`gpu_gemm::progress::bars`], so that a
//! long step inside a run (the f64 reference) shows its own bar below it.
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for `runs` runs, labelled `label`.
    pub fn new(label: &str, runs: usize) -> Self {
        let bar = gpu_gemm::progress::bars().add(ProgressBar::new(runs as u64));
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} runs, {elapsed} elapsed, {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.set_prefix(label.to_string());
        // Redraw while a long run (seconds, on the GPU or the CPU) is under way.
        bar.enable_steady_tick(Duration::from_millis(250));
        Self { bar }
    }

    /// Shows what runs now.
    pub fn running(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// Prints `line` above the bar and counts one run done.
    pub fn done(&self, line: &str) {
        self.bar.suspend(|| println!("{line}"));
        self.bar.inc(1);
    }

    pub fn finish(self) {
        self.bar.finish_and_clear();
        gpu_gemm::progress::bars().remove(&self.bar);
    }
}

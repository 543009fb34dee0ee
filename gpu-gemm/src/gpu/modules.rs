//! The GPU backend's kernels: which module a device loads, and loading it on first use.
//!
//! A device runs two modules at most: the portable one (every kernel that runs from sm_80 on)
//! and, on compute capability 9.0, the sm_90a one (the `wgmma` kernels). Each comes from the
//! library's embedded kernels ([`crate::embedded`]): the cubin `ptxas` compiled for an
//! architecture this GPU runs when there is one, else the PTX, which the driver compiles. A PTX
//! file given on the command line (`host --ptx`) replaces the embedded module of its target.
use crate::embedded;
use anyhow::{anyhow, bail, Context as _, Result};
use cust::module::Module;

/// A module of kernels, loaded the first time one of its kernels is needed: from the SASS the
/// build compiled ahead of time for this GPU when there is one (milliseconds), else from the PTX,
/// which the driver compiles (tens of seconds for a module of the course's size on a machine
/// that has not seen it; it caches the result). Either way a run loads only the modules it
/// launches from, and inflates only what it loads.
pub(super) struct LazyModule {
    /// `ptxas`'s cubin for an architecture this GPU runs, if the library ships one.
    sass: Option<&'static embedded::Module>,
    /// The PTX to compile when there is no such cubin or the driver refuses it.
    ptx: Option<Ptx>,
    /// "embedded sm_90 SASS", "embedded sm_80 PTX", or a file's path and target.
    pub(super) origin: String,
    module: std::cell::OnceCell<Module>,
}

enum Ptx {
    File(String),
    Embedded(&'static embedded::Module),
}

impl LazyModule {
    pub(super) fn get(&self, report_slow: bool) -> Result<&Module> {
        if let Some(m) = self.module.get() {
            return Ok(m);
        }
        let start = std::time::Instant::now();
        // A driver older than the `ptxas` that made the cubin refuses it: the PTX still loads.
        let from_sass = self
            .sass
            .and_then(embedded::Module::sass)
            .and_then(|cubin| match Module::from_cubin(&cubin, &[]) {
                Ok(module) => Some(module),
                Err(e) => {
                    if report_slow {
                        eprintln!(
                            "(the driver refused the {} cubin ({e}); compiling its PTX instead)",
                            self.origin
                        );
                    }
                    None
                }
            });
        let module = match from_sass {
            Some(module) => module,
            None => {
                let text = match &self.ptx {
                    Some(Ptx::File(text)) => std::borrow::Cow::Borrowed(text.as_str()),
                    Some(Ptx::Embedded(m)) => m.ptx().expect("chosen for its PTX").into(),
                    None => bail!(
                        "the driver refused the {} cubin, and the library ships no PTX this GPU can compile instead",
                        self.origin
                    ),
                };
                Module::from_ptx(&text, &[]).map_err(|e| {
                    anyhow!(
                        "the driver could not load the PTX ({}): {e}; a driver too old for its PTX ISA (7.8 for sm_80/sm_90, 8.0 for sm_90a: CUDA 11.8, 12.0) fails so",
                        self.origin
                    )
                })?
            }
        };
        let seconds = start.elapsed().as_secs_f64();
        if seconds > 3.0 && report_slow {
            eprintln!(
                "(the driver compiled the {} in {seconds:.0} s; it caches the result for the next runs)",
                self.origin
            );
        }
        Ok(self.module.get_or_init(|| module))
    }
}

/// The modules a device of compute capability `device_arch` loads, `device_name` for messages.
pub(super) struct Modules {
    pub portable: LazyModule,
    /// The sm_90a module, on compute capability 9.0 only.
    pub hopper: Option<LazyModule>,
    /// "embedded sm_90 SASS + sm_90a SASS", or with a PTX file its path.
    pub origin: String,
    /// The embedded kernels' fingerprint, combined with a given file's.
    pub fingerprint: u64,
}

impl Modules {
    pub(super) fn for_device(
        device_arch: u32,
        device_name: &str,
        ptx_file: Option<&std::path::Path>,
    ) -> Result<Self> {
        let arch = format!("sm_{device_arch}");
        let mut fingerprint = embedded::FINGERPRINT;
        // A given PTX file replaces the embedded module of its target.
        let given = match ptx_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read the PTX file {}", path.display()))?;
                let target = ptx_builder::ptx_target(&text)
                    .unwrap_or("unknown")
                    .to_string();
                if arch_number(&target).is_some_and(|t| t > device_arch)
                    || (target == "sm_90a" && device_arch != 90)
                {
                    bail!(
                        "{} was built for {target}, which this {device_name} ({arch}) cannot run; \
                         rebuild it with `cargo xtask build-ptx --arch {arch}`",
                        path.display()
                    );
                }
                fingerprint = ptx_builder::fnv1a64(fingerprint, text.as_bytes());
                let module = LazyModule {
                    sass: None,
                    origin: format!("{} ({target})", path.display()),
                    ptx: Some(Ptx::File(text)),
                    module: Default::default(),
                };
                Some((target, module))
            }
            None => None,
        };
        let (hopper, portable) = match given {
            Some((target, module)) if target == "sm_90a" => (Some(module), None),
            Some((_, module)) => (None, Some(module)),
            None => (None, None),
        };
        let portable = match portable {
            Some(module) => module,
            None => embedded_portable(device_arch).ok_or_else(|| {
                anyhow!(
                    "this {device_name} is {arch}, older than every embedded module ({}); \
                     the kernels need sm_80 or newer",
                    embedded::MODULES
                        .iter()
                        .map(|m| m.arch)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?,
        };
        let hopper = hopper.or_else(|| embedded_hopper(device_arch));
        let origin = match &hopper {
            Some(h) => format!(
                "{} + {}",
                portable.origin,
                h.origin.trim_start_matches("embedded ")
            ),
            None => portable.origin.clone(),
        };
        Ok(Modules {
            portable,
            hopper,
            origin,
            fingerprint,
        })
    }
}

/// The portable kernels for this device: the newest portable cubin it runs, and the newest
/// portable PTX it can compile (the fallback, and the only form on a GPU newer than every
/// cubin).
fn embedded_portable(device_arch: u32) -> Option<LazyModule> {
    let newest = |keep: &dyn Fn(&embedded::Module) -> bool| {
        embedded::MODULES
            .iter()
            .filter(|m| !m.arch.ends_with('a') && keep(m))
            .max_by_key(|m| arch_number(m.arch))
    };
    let sass = newest(&|m| m.has_sass() && sass_runs(m.arch, device_arch));
    let ptx = newest(&|m| m.has_ptx() && arch_number(m.arch).is_some_and(|a| a <= device_arch));
    lazy_embedded(sass, ptx)
}

/// The sm_90a kernels: `.target sm_90a`, PTX or SASS, loads on compute capability 9.0 exactly.
fn embedded_hopper(device_arch: u32) -> Option<LazyModule> {
    let module = embedded::module("sm_90a").filter(|_| device_arch == 90)?;
    lazy_embedded(
        module.has_sass().then_some(module),
        module.has_ptx().then_some(module),
    )
}

fn lazy_embedded(
    sass: Option<&'static embedded::Module>,
    ptx: Option<&'static embedded::Module>,
) -> Option<LazyModule> {
    let origin = match (sass, ptx) {
        (Some(s), _) => format!("embedded {} SASS", s.arch),
        (None, Some(p)) => format!("embedded {} PTX", p.arch),
        (None, None) => return None,
    };
    Some(LazyModule {
        sass,
        ptx: ptx.map(Ptx::Embedded),
        origin,
        module: Default::default(),
    })
}

/// Whether a device of compute capability `device_arch` runs SASS built for `arch`: SASS runs on
/// the architecture it was compiled for and on later minor versions of the same major one
/// (sm_80's on sm_86 and sm_89), and an `a` build (sm_90a) on exactly its own.
pub fn sass_runs(arch: &str, device_arch: u32) -> bool {
    let Some(built) = arch_number(arch) else {
        return false;
    };
    if arch.ends_with('a') {
        built == device_arch
    } else {
        built / 10 == device_arch / 10 && built <= device_arch
    }
}

/// `sm_90` → 90.
pub(super) fn arch_number(arch: &str) -> Option<u32> {
    arch.strip_prefix("sm_")?
        .trim_end_matches(|c: char| c.is_alphabetic())
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn portable(device_arch: u32) -> Option<String> {
        embedded_portable(device_arch).map(|m| m.origin)
    }

    /// An H100 runs sm_90's cubin and sm_90a's; an Ampere sm_80's; a Blackwell compiles sm_80's
    /// PTX (the only portable PTX shipped); a Turing nothing. Without ptxas every module is PTX.
    #[test]
    fn a_device_loads_the_newest_module_it_runs() {
        let sass = embedded::module("sm_90").unwrap().has_sass();
        let form = |arch: &str| {
            if sass {
                format!("embedded {arch} SASS")
            } else {
                format!("embedded {arch} PTX")
            }
        };
        assert_eq!(portable(90), Some(form("sm_90")));
        assert_eq!(portable(89), Some(form("sm_80")));
        assert_eq!(portable(86), Some(form("sm_80")));
        assert_eq!(portable(120).as_deref(), Some("embedded sm_80 PTX"));
        assert_eq!(portable(75), None);
        assert_eq!(embedded_hopper(90).map(|m| m.origin), Some(form("sm_90a")));
        assert!(embedded_hopper(100).is_none() && embedded_hopper(89).is_none());
        assert_eq!(arch_number("sm_90a"), Some(90));
        // The fallback behind a cubin: the portable PTX on an H100 is sm_80's.
        let h100 = embedded_portable(90).unwrap();
        assert!(matches!(h100.ptx, Some(Ptx::Embedded(m)) if m.arch == "sm_80"));
    }
}

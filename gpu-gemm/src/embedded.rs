//! The kernels inside the library: what `build.rs` built for each architecture of
//! `ptx_builder::EMBEDDED_ARCHS`, deflated.
//!
//! Each module is shipped as SASS (a cubin `ptxas` compiled ahead of time, which a GPU of that
//! architecture loads in milliseconds) and, for the architectures of
//! `ptx_builder::PTX_EMBEDDED_ARCHS`, as PTX too: the form the driver compiles for a GPU no cubin
//! runs on (sm_80's PTX on a Blackwell), or when it refuses a cubin made by a newer `ptxas`
//! than it knows. A build without `ptxas` ships every module as PTX alone.
//!
//! Before 2026-12-07 the library carried all three modules' PTX uncompressed beside their
//! cubins: 74 MB of text and 28 MB of SASS in every program that linked it. Deflated, and
//! without sm_90's PTX (sm_80's gives any GPU that would need it the same kernels), the same
//! kernels take 19 MB, and a program inflates only the module it loads.

/// One architecture's kernels, deflated.
pub struct Module {
    /// The `build-ptx` architecture, `sm_80` … `sm_90a`.
    pub arch: &'static str,
    ptx: Option<&'static [u8]>,
    sass: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

impl Module {
    /// The module's PTX, inflated, if the library ships it.
    pub fn ptx(&self) -> Option<String> {
        self.ptx.map(|deflated| {
            String::from_utf8(inflate(deflated, self.arch)).expect("the embedded PTX is text")
        })
    }

    /// Whether the library ships this module's PTX.
    pub fn has_ptx(&self) -> bool {
        self.ptx.is_some()
    }

    /// The module's cubin, inflated, if the build compiled one.
    pub fn sass(&self) -> Option<Vec<u8>> {
        self.sass.map(|deflated| inflate(deflated, self.arch))
    }

    /// Whether the library ships this module's SASS.
    pub fn has_sass(&self) -> bool {
        self.sass.is_some()
    }
}

/// The module built for `arch`.
pub fn module(arch: &str) -> Option<&'static Module> {
    MODULES.iter().find(|m| m.arch == arch)
}

fn inflate(deflated: &[u8], arch: &str) -> Vec<u8> {
    miniz_oxide::inflate::decompress_to_vec(deflated)
        .unwrap_or_else(|e| panic!("the embedded {arch} kernels do not inflate: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module ships in some form, and a shipped PTX inflates to the module its
    /// architecture names.
    #[test]
    fn every_module_ships_and_inflates() {
        assert!(!MODULES.is_empty());
        for m in MODULES {
            assert!(m.has_ptx() || m.has_sass(), "{} ships nothing", m.arch);
            if let Some(ptx) = m.ptx() {
                assert_eq!(ptx_builder::ptx_target(&ptx), Some(m.arch));
            }
            if let Some(sass) = m.sass() {
                assert_eq!(&sass[..4], b"\x7fELF", "{}'s SASS is not a cubin", m.arch);
            }
        }
    }
}

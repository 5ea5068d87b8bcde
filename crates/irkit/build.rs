//! Link options of the `irkit` executable (docs/startup.md, "Relocations").
//!
//! On Linux `irkit` is linked as a fixed-address (non-PIE) executable: a
//! position-independent one makes the dynamic loader rewrite its 46 000
//! pointers in `.data.rel.ro` at every start, one copied page at a time,
//! which was the largest part of a small input's run. `irkit-llvm` keeps the
//! default: it is started only for the LLVM verbs, where LLVM's own start-up
//! dominates.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=irkit=-no-pie");
    }
}

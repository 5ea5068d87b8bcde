//! Unit tests of the GLSL backend on small modules.

use super::*;
use crate::VerifiedModule;

fn compile_text(text: &str) -> Result<ProgramArtifact, CompileError> {
    let module = crate::text::read(text.as_bytes(), "test.vpl").expect("valid module");
    let published = VerifiedModule::new(&module).expect("publishable");
    compile(&published, VERSION_420)
}

#[test]
fn minimal_example_compiles() {
    let a = compile_text(include_str!("../../../../../examples/vpl/minimal.vpl")).unwrap();
    eprintln!("{}\n{}", a.vertex_code(), a.fragment_code());
    eprintln!("{}", a.reflection_json());
}

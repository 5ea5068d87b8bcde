//! The random module generator: every case reads and verifies, draws on
//! the CPU executor, and together a few hundred cases cover every
//! operation, operand shape, construction, type, storage path and
//! terminator of the language (`vpl::testgen::REQUIRED`).

use std::collections::BTreeMap;
use vpl::exec::{self, DrawRequest, Executable};
use vpl::testgen;

#[test]
fn generated_modules_verify_draw_and_cover_the_language() {
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    for seed in 0..300 {
        let case = testgen::generate(seed).unwrap_or_else(|e| panic!("{e}"));
        for (k, n) in testgen::coverage(case.module.module()) {
            *total.entry(k).or_default() += n;
        }
        if seed < 40 {
            let executable =
                Executable::new(&case.module).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let mut request = DrawRequest::new(&executable, case.size.0, case.size.1);
            for (path, values) in &case.uniforms {
                request
                    .uniforms
                    .set(&executable, path, values)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            }
            request.textures = case.textures.clone();
            exec::draw(&executable, &request)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", case.text));
        }
    }
    let missing: Vec<_> = testgen::REQUIRED
        .iter()
        .filter(|k| !total.contains_key(**k))
        .collect();
    assert!(
        missing.is_empty(),
        "not covered: {missing:?}\ncovered: {total:?}"
    );
}

#[test]
fn generation_is_deterministic_and_minimizable() {
    let a = testgen::generate(7).unwrap();
    let b = testgen::generate(7).unwrap();
    assert_eq!(a.text, b.text);
    // Disabling every statement still gives a valid module.
    let all = (0..a.statements).collect();
    let small = testgen::generate_without(7, &all).unwrap();
    assert!(small.text.len() < a.text.len());
}

//! Arbitrary input to the playground's compile answer and to scene
//! resolution: always a JSON answer or a refusal, never a panic.

use proptest::prelude::*;
use vpl_web::{Scene, WebGlProgram};

fn program() -> WebGlProgram {
    let module = vpl::programs::create(vpl::programs::Program::MeshAmbientColor).unwrap();
    WebGlProgram::compile(&module).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn compile_answers_any_text(text in "\\PC{0,200}") {
        let v = vpl_web::api::compile(&text, "x.vpl");
        prop_assert!(v["ok"].is_boolean());
        if v["ok"] == false {
            prop_assert!(v["diagnostics"][0]["message"].is_string());
        }
    }

    #[test]
    fn compile_answers_edits_of_a_builtin(at in 0usize..2000, cut in 0usize..40, insert in "[()a-z0-9 \"]{0,8}") {
        let source = String::from_utf8_lossy(vpl::programs::Program::TextureAmbientColor.source()).into_owned();
        let at = source.char_indices().map(|(i, _)| i).nth(at % source.chars().count()).unwrap_or(0);
        let end = source[at..].char_indices().map(|(i, _)| at + i).nth(cut).unwrap_or(source.len());
        let edited = format!("{}{insert}{}", &source[..at], &source[end..]);
        let v = vpl_web::api::compile(&edited, "edit.vpl");
        prop_assert!(v["ok"].is_boolean());
    }

    #[test]
    fn scenes_with_arbitrary_uniform_paths_are_refused_or_resolved(
        path in "[a-z_.\\[\\]0-9]{0,24}",
        values in proptest::collection::vec(-1e6f64..1e6, 0..6),
        w in 0u32..5000, h in 0u32..5000,
    ) {
        let program = program();
        let mut scene = Scene::new(w, h);
        scene.uniforms.push((path.clone(), values.clone()));
        let known = (path == "material.ambient_color" && values.len() == 4)
            || (path == "material.intensity" && values.len() == 1);
        let ok_size = (1..=vpl_web::scene::MAX_SIZE).contains(&w) && (1..=vpl_web::scene::MAX_SIZE).contains(&h);
        let result = vpl_web::scene::scene_json(&program, &scene);
        prop_assert_eq!(result.is_ok(), known && ok_size, "{:?}", result.err());
    }
}

//! What `verify` returns: the facts of `ModuleInfo`, and the publication
//! snapshot that keeps them.

use vpl::ir::{Handle, StageKind, TypeInner};
use vpl::programs::Program;
use vpl::verify::{AliasProblemKind, AliasRoot, verify};
use vpl::{VerifiedModule, text};

const LOOP_CALL: &str = include_str!("../../../examples/vpl/loop_call.vpl");

#[test]
fn call_order_puts_callees_first_and_records_depths() {
    let module = text::read_verified(LOOP_CALL.as_bytes(), "loop_call.vpl").unwrap();
    let fragment = module.info().stage(StageKind::Fragment);
    let main = Handle::from_index(0);
    let twice = Handle::from_index(1);
    assert_eq!(fragment.call_order(), &[twice, main]);
    assert_eq!(fragment.call_depth(twice), Some(0));
    assert_eq!(fragment.call_depth(main), Some(1));
    let vertex = module.info().stage(StageKind::Vertex);
    assert_eq!(vertex.call_order(), &[Handle::from_index(0)]);
}

#[test]
fn register_tables_give_declared_types() {
    let module = text::read_verified(LOOP_CALL.as_bytes(), "loop_call.vpl").unwrap();
    let m = module.module();
    let main = module
        .info()
        .stage(StageKind::Fragment)
        .function(Handle::from_index(0))
        .unwrap();
    assert_eq!(main.register_count(), 5);
    let float = main.register_type(3).unwrap();
    assert!(matches!(m.types.inner(float), Some(TypeInner::Scalar(_))));
    assert_eq!(main.register_type(4), Some(m.fragment.interface[0].ty));
    assert_eq!(main.register_type(5), None);
}

#[test]
fn output_leaves_and_helper_summaries() {
    let module = text::read_verified(LOOP_CALL.as_bytes(), "loop_call.vpl").unwrap();
    let fragment = module.info().stage(StageKind::Fragment);
    assert_eq!(fragment.output_leaves(0), 0..1);
    let main = fragment.function(Handle::from_index(0)).unwrap();
    assert!(main.can_return());
    assert_eq!(main.guaranteed_outputs(), &[(0, 1)]);
    let twice = fragment.function(Handle::from_index(1)).unwrap();
    assert!(twice.can_return());
    assert!(twice.guaranteed_outputs().is_empty());
    assert!(twice.output_prerequisites().is_empty());
    // The vertex input slot has no output leaves.
    assert_eq!(
        module.info().stage(StageKind::Vertex).output_leaves(0),
        0..0
    );
}

#[test]
fn type_order_puts_components_first() {
    let module =
        text::read_verified(Program::TextureVertexAmbientColor.source(), "texture.vpl").unwrap();
    let m = module.module();
    let order = module.info().type_order();
    assert_eq!(order.len(), m.types.len());
    for (position, &h) in order.iter().enumerate() {
        if let Some(TypeInner::Array { element, .. }) = m.types.inner(h) {
            assert!(order[..position].contains(element));
        }
        if let Some(TypeInner::Record(r)) = m.types.inner(h) {
            for f in &r.fields {
                assert!(order[..position].contains(&f.ty));
            }
        }
    }
}

#[test]
fn sampler_alias_chains_resolve_to_their_uniform() {
    let module =
        text::read_verified(Program::TextureVertexAmbientColor.source(), "texture.vpl").unwrap();
    let main = module
        .info()
        .stage(StageKind::Fragment)
        .function(Handle::from_index(0))
        .unwrap();
    assert_eq!(main.samplers().problem(), None);
    assert_eq!(main.samplers().root(0), Some(AliasRoot::Uniform(0)));
    assert_eq!(main.samplers().root(1), None);
}

#[test]
fn an_irregular_sampler_chain_is_a_fact_not_a_verification_error() {
    // r0 is defined twice: valid VPL, irregular for the GLSL target.
    let text = std::str::from_utf8(Program::TextureVertexAmbientColor.source())
        .unwrap()
        .replace(
            "(load r0 (uniform texture))",
            "(load r0 (uniform texture))\n          (load r0 (uniform texture))",
        );
    let module = text::read_verified(text.as_bytes(), "twice.vpl").unwrap();
    let main = module
        .info()
        .stage(StageKind::Fragment)
        .function(Handle::from_index(0))
        .unwrap();
    let problem = main.samplers().problem().unwrap();
    assert_eq!(
        problem.kind,
        AliasProblemKind::SeveralDefinitions {
            register: 0,
            count: 2
        }
    );
    assert!(problem.span.is_some());
}

#[test]
fn the_publication_keeps_the_module_it_read_back_and_its_facts() {
    for program in Program::ALL {
        let module = text::read_verified(program.source(), program.file_name()).unwrap();
        let published = VerifiedModule::publish(&module).unwrap();
        let fresh = published.materialize().unwrap();
        assert_eq!(published.module(), &fresh);
        assert_eq!(published.info(), &verify(&fresh).unwrap());
        assert_eq!(
            published,
            VerifiedModule::new(module.module()).unwrap(),
            "publishing with or without the first verification gives one text"
        );
        assert_eq!(
            text::write_verified(&module).unwrap(),
            published.text(),
            "write_verified is the publication's text"
        );
    }
}

#[test]
fn verification_facts_do_not_depend_on_spans() {
    let module = text::read_verified(LOOP_CALL.as_bytes(), "loop_call.vpl").unwrap();
    let mut bare = module.module().clone();
    bare.clear_spans();
    let info = verify(&bare).unwrap();
    assert_eq!(
        info.stage(StageKind::Fragment).call_order(),
        module.info().stage(StageKind::Fragment).call_order()
    );
    assert_eq!(info.type_order(), module.info().type_order());
}

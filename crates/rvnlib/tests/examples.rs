//! Builds the libraries under `examples/rvnlib/` through the container and
//! checks the checked-in files are exactly what the builder produces
//! (`IRKIT_BLESS=1 cargo test -p rvnlib --test all -- examples::` rewrites them), then
//! checks what each example demonstrates.

mod common;

use common::*;
use rvnlib::container::{self, ReadError};
use rvnlib::export::{self, ExportError};
use rvnlib::link::{self, LinkError, LinkInput, LinkOptions};
use rvnlib::*;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/rvnlib")
}

/// Compares `bytes` with the checked-in file, or rewrites it when blessing.
fn golden(name: &str, bytes: &[u8]) -> Vec<String> {
    match golden::check_bytes(&dir().join(name), bytes) {
        Ok(()) => Vec::new(),
        Err(e) => vec![e.to_string()],
    }
}

fn lib_bytes(library: &CompiledLibrary) -> Vec<u8> {
    container::write(library).unwrap()
}

fn with_payload(version: i32, payload: &[u8]) -> Vec<u8> {
    let mut out = container::MAGIC.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as i32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// A library holding one broken function built by `build`.
fn broken(build: impl FnOnce() -> LibraryIrFunction) -> Vec<u8> {
    let mut lib = CompiledLibrary::new("Broken");
    lib.ir.functions.push(build());
    lib_bytes(&lib)
}

fn refused_files() -> Vec<(&'static str, Vec<u8>)> {
    use rvnlib::builder::{FunctionBuilder, types::*};
    let core = lib_bytes(&core_library());
    let mut effect = b"RVNFX\x1A".to_vec();
    effect.extend_from_slice(&1i32.to_le_bytes());
    effect.extend_from_slice(&2i32.to_le_bytes());
    effect.extend_from_slice(b"{}");
    let mut version99 = core.clone();
    version99[7..11].copy_from_slice(&99i32.to_le_bytes());
    let truncated = core[..core.len() - 10].to_vec();
    let mut trailing = core.clone();
    trailing.extend_from_slice(b"\n\n");
    vec![
        (
            "refused/not-a-library.bin",
            b"#version 450\nvoid main() {}\n".to_vec(),
        ),
        ("refused/effect.rvnfx", effect),
        ("refused/version99.rvnlib", version99),
        ("refused/truncated.rvnlib", truncated),
        ("refused/trailing-bytes.rvnlib", trailing),
        (
            "refused/inspection.json",
            write_json(&core_library()).into_bytes(),
        ),
        (
            "refused/camel-case.rvnlib",
            with_payload(
                4,
                br#"{"name":"X","types":[],"ir":{"structs":[],"functions":[]},"sourceHash":""}"#,
            ),
        ),
        (
            "refused/undefined-value.rvnlib",
            broken(|| {
                let mut f = FunctionBuilder::new("B.UseBeforeDef(): float", "UseBeforeDef", f32());
                let later = f.new_value(f32());
                f.ret(Some(later));
                f.finish()
            }),
        ),
        (
            "refused/defined-twice.rvnlib",
            broken(|| {
                let mut f = FunctionBuilder::new("B.Twice(): float", "Twice", f32());
                let v = f.constant(f32(), None);
                f.push(LibraryIrStatement::Constant {
                    result: v,
                    value: None,
                });
                f.ret(Some(v));
                f.finish()
            }),
        ),
        (
            "refused/break-outside-loop.rvnlib",
            broken(|| {
                let mut f = FunctionBuilder::new("B.Break(): void", "Break", void());
                f.brk();
                f.finish()
            }),
        ),
        (
            "refused/return-mismatch.rvnlib",
            broken(|| {
                let mut f = FunctionBuilder::new("B.Ret(): float", "Ret", f32());
                let v = f.constant(i32(), Some(LibraryValue::int(1)));
                f.ret(Some(v));
                f.finish()
            }),
        ),
        (
            "refused/argument-value-and-reference.rvnlib",
            broken(|| {
                let mut f = FunctionBuilder::new("B.Arg(x: float): void", "Arg", void());
                let x = f.param("x", f32());
                let v = f.load(f32(), x, vec![]);
                f.call(
                    "B.Arg(x: float): void",
                    None,
                    vec![LibraryIrArgument {
                        value: Some(v),
                        reference: Some(x),
                    }],
                );
                f.finish()
            }),
        ),
        (
            "refused/place-root-out-of-range.rvnlib",
            broken(|| {
                let mut f = FunctionBuilder::new("B.Root(x: float): float", "Root", f32());
                f.param("x", f32());
                let v = f.load(f32(), 5, vec![]);
                f.ret(Some(v));
                f.finish()
            }),
        ),
        (
            "refused/bad-access-chain.rvnlib",
            broken(|| {
                let mut f = FunctionBuilder::new("B.Chain(v: float3): float", "Chain", f32());
                let p = f.param("v", vec(3));
                let v = f.load(
                    f32(),
                    p,
                    vec![LibraryIrAccess::Swizzle {
                        components: vec![3],
                    }],
                );
                f.ret(Some(v));
                f.finish()
            }),
        ),
        (
            "refused/value-count.rvnlib",
            broken(|| {
                let mut f = FunctionBuilder::new("B.Count(): float", "Count", f32());
                let v = f.constant(f32(), None);
                f.ret(Some(v));
                let mut func = f.finish();
                func.value_count = 0;
                func
            }),
        ),
    ]
}

#[test]
fn examples_are_up_to_date() {
    let mut problems = Vec::new();
    problems.extend(golden("core.rvnlib", &lib_bytes(&core_library())));
    problems.extend(golden(
        "core.json",
        format!("{}\n", write_json(&core_library())).as_bytes(),
    ));
    problems.extend(golden("pkg-a.rvnlib", &lib_bytes(&pkg_a())));
    problems.extend(golden("pkg-b.rvnlib", &lib_bytes(&pkg_b())));
    problems.extend(golden("app.rvnlib", &lib_bytes(&app())));
    problems.extend(golden(
        "collide-x.rvnlib",
        &lib_bytes(&collision("ShadersX", false)),
    ));
    problems.extend(golden(
        "collide-y.rvnlib",
        &lib_bytes(&collision("ShadersY", true)),
    ));
    problems.extend(golden(
        "legacy-v3.rvnlib",
        &container::write_version(&legacy_v3(), 3).unwrap(),
    ));
    let linked = linked_app();
    problems.extend(golden("app-linked.rvnlib", &lib_bytes(&linked.library)));
    problems.extend(golden(
        "app-linked.json",
        write_json(&linked.library).as_bytes(),
    ));
    let refusals = match export::export(&export_module()) {
        Err(ExportError::Refused(r)) => r,
        other => panic!("export module must be refused, got {other:?}"),
    };
    let text: String = refusals.iter().map(|r| format!("{r}\n")).collect();
    problems.extend(golden("refused/export-refusals.txt", text.as_bytes()));
    for (name, bytes) in refused_files() {
        problems.extend(golden(name, &bytes));
    }
    assert!(
        problems.is_empty(),
        "stale examples (run with IRKIT_BLESS=1 and review):\n{}",
        problems.join("\n")
    );
}

fn linked_app() -> link::Linked {
    let (app, a, b) = (app(), pkg_a(), pkg_b());
    let options = LinkOptions {
        name: "App".into(),
        consumer: Some(LinkInput {
            origin: "app.rvnlib",
            library: &app,
        }),
        entries: Vec::new(),
    };
    let inputs = [
        LinkInput {
            origin: "pkg-a.rvnlib",
            library: &a,
        },
        LinkInput {
            origin: "pkg-b.rvnlib",
            library: &b,
        },
    ];
    link::link(&inputs, &options).unwrap()
}

#[test]
fn good_examples_read_and_verify() {
    for lib in [
        core_library(),
        pkg_a(),
        pkg_b(),
        app(),
        collision("ShadersX", false),
        legacy_v3(),
    ] {
        let bytes = lib_bytes(&lib);
        let back = container::read(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", lib.name));
        assert_eq!(back, lib);
    }
}

#[test]
fn core_covers_every_statement_and_access_shape() {
    let core = core_library();
    let mut kinds = std::collections::BTreeSet::new();
    let mut accesses = std::collections::BTreeSet::new();
    let mut by_reference = false;
    for f in &core.ir.functions {
        walk::for_each_statement(&f.body, &mut |s| {
            kinds.insert(s.kind());
            let chains: Vec<&Vec<LibraryIrAccess>> = match s {
                LibraryIrStatement::Load { place, .. }
                | LibraryIrStatement::Store { place, .. } => vec![&place.chain],
                LibraryIrStatement::Extract { chain, .. } => vec![chain],
                LibraryIrStatement::Call { arguments, .. } => {
                    by_reference |= arguments.iter().any(|a| a.reference.is_some());
                    vec![]
                }
                _ => vec![],
            };
            for chain in chains {
                for a in chain {
                    accesses.insert(match a {
                        LibraryIrAccess::Field { .. } => "field",
                        LibraryIrAccess::Index { .. } => "index",
                        LibraryIrAccess::Swizzle { .. } => "swizzle",
                    });
                }
            }
        });
    }
    assert_eq!(
        kinds.len(),
        StatementKind::ALL.len(),
        "missing: {:?}",
        StatementKind::ALL
            .iter()
            .filter(|k| !kinds.contains(k))
            .collect::<Vec<_>>()
    );
    assert_eq!(accesses.len(), 3);
    assert!(by_reference);
    // gaps in the value table survive
    let everything = core
        .ir
        .functions
        .iter()
        .find(|f| f.key == EVERYTHING)
        .unwrap();
    assert!(everything.value_count as usize > everything.values.len());
}

#[test]
fn same_named_functions_and_structs_stay_two_entities() {
    let linked = linked_app();
    let ir = &linked.library.ir;
    let ofs: Vec<(&str, &str)> = ir
        .functions
        .iter()
        .filter(|f| f.name.starts_with("Of"))
        .map(|f| (f.key.as_str(), f.name.as_str()))
        .collect();
    assert_eq!(ofs, vec![(APP_OF, "Of"), (A_OF, "Of#1"), (B_OF, "Of#2")]);
    let shapes: Vec<(&str, &str, usize)> = ir
        .structs
        .iter()
        .filter(|s| s.name.starts_with("Shape"))
        .map(|s| (s.key.as_str(), s.name.as_str(), s.fields.len()))
        .collect();
    assert_eq!(
        shapes,
        vec![
            ("App::Shape", "Shape", 1),
            ("PkgA::Shape", "Shape#1", 2),
            ("PkgB::Shape", "Shape#2", 1)
        ]
    );
    // The tuple unifies by its bare key: one entity, no rename.
    assert_eq!(
        ir.structs
            .iter()
            .filter(|s| s.key == "Tuple_f32_f32")
            .count(),
        1
    );
    assert!(linked.renames.iter().all(|r| r.from != "Tuple_f32_f32"));
    // Unreachable PkgA.Unused is pruned; its declaration no longer links to IR.
    assert!(ir.functions.iter().all(|f| f.key != A_UNUSED));
    let unused_decl = linked
        .library
        .types
        .iter()
        .flat_map(|t| &t.methods)
        .find(|m| m.name == "Unused")
        .unwrap();
    assert_eq!(unused_decl.ir_function, None);
    // And the module verifies as a whole.
    let bytes = lib_bytes(&linked.library);
    assert!(container::read(&bytes).is_ok());
}

#[test]
fn key_collision_names_both_origins_and_identical_redefinition_is_accepted() {
    let (x, y) = (collision("ShadersX", false), collision("ShadersY", true));
    let inputs = [
        LinkInput {
            origin: "collide-x.rvnlib",
            library: &x,
        },
        LinkInput {
            origin: "collide-y.rvnlib",
            library: &y,
        },
    ];
    let errors = link::link(&inputs, &LinkOptions::default()).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let LinkError::ConflictingFunction {
        key,
        first,
        second,
        origin,
    } = &errors[0]
    else {
        panic!("{errors:?}")
    };
    // The conflict is found in, and points at, the input holding the second definition.
    assert_eq!(origin, "collide-y.rvnlib");
    assert_eq!(errors[0].origin(), Some("collide-y.rvnlib"));
    assert_eq!(key, CLAMP01);
    assert!(first.contains("ShadersX") && first.contains("collide-x.rvnlib"));
    assert!(second.contains("ShadersY") && second.contains("collide-y.rvnlib"));
    // Identical definitions (Half) and identical whole libraries link.
    let x2 = collision("ShadersX", false);
    let inputs = [
        LinkInput {
            origin: "one",
            library: &x,
        },
        LinkInput {
            origin: "two",
            library: &x2,
        },
    ];
    let linked = link::link(&inputs, &LinkOptions::default()).unwrap();
    assert_eq!(linked.library.ir.functions.len(), 2);
    assert_eq!(linked.warnings.len(), 1);
    assert_eq!(linked.warnings[0].code, "RVN5005");
}

#[test]
fn refused_files_fail_with_distinct_errors() {
    let expect: &[(&str, &str)] = &[
        ("refused/not-a-library.bin", "RVN-NOT-A-LIBRARY"),
        ("refused/effect.rvnfx", "RVN-EFFECT"),
        ("refused/version99.rvnlib", "RVN-VERSION"),
        ("refused/truncated.rvnlib", "RVN-TRUNCATED"),
        ("refused/trailing-bytes.rvnlib", "RVN-TRAILING-BYTES"),
        ("refused/inspection.json", "RVN-INSPECTION-JSON"),
        ("refused/camel-case.rvnlib", "RVN-JSON-SCHEMA"),
        ("refused/undefined-value.rvnlib", "RVN3010"),
        ("refused/defined-twice.rvnlib", "RVN3010"),
        ("refused/break-outside-loop.rvnlib", "RVN3010"),
        ("refused/return-mismatch.rvnlib", "RVN3010"),
        ("refused/argument-value-and-reference.rvnlib", "RVN3010"),
        ("refused/place-root-out-of-range.rvnlib", "RVN3010"),
        ("refused/bad-access-chain.rvnlib", "RVN3010"),
        ("refused/value-count.rvnlib", "RVN3010"),
    ];
    let files = refused_files();
    assert_eq!(files.len(), expect.len());
    for (name, kind) in expect {
        let bytes = &files.iter().find(|(n, _)| n == name).unwrap().1;
        let error = container::read(bytes).unwrap_err();
        let code = match &error {
            ReadError::Invalid(errors) => errors[0].code,
            other => other.code().unwrap(),
        };
        assert_eq!(code, *kind, "{name}: {error}");
        let expected_kind = if kind.starts_with("RVN-") {
            "encoding"
        } else {
            "semantic"
        };
        assert_eq!(error.kind(), expected_kind, "{name}");
        if let ReadError::Invalid(errors) = &error {
            assert!(
                errors.iter().all(|e| e.code == "RVN3010"),
                "{name}: {errors:?}"
            );
            assert!(
                errors
                    .iter()
                    .all(|e| e.item.is_some() && !e.path.is_empty()),
                "{name}: {errors:?}"
            );
        }
    }
    let version = container::read(&files[2].1).unwrap_err().to_string();
    assert!(
        version.contains("99") && version.contains('3') && version.contains('4'),
        "{version}"
    );
}

#[test]
fn export_refusals_carry_codes_and_chains() {
    let refusals = export::refusals(&export_module());
    let summary: Vec<(&str, &str, Vec<&str>)> = refusals
        .iter()
        .map(|r| {
            (
                r.code,
                r.function.as_str(),
                r.chain
                    .iter()
                    .map(|k| k.split('(').next().unwrap_or(""))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("RVN5001", "Fx.ReadAlbedo(): float4", vec!["Fx.ReadAlbedo"]),
            (
                "RVN5001",
                "Fx.Tint(x: float): float4",
                vec!["Fx.Tint", "Fx.ReadAlbedo"]
            ),
            (
                "RVN5001",
                "Fx.Shade(x: float): float4",
                vec!["Fx.Shade", "Fx.Tint", "Fx.ReadAlbedo"]
            ),
            (
                "RVN5007",
                "Fx.EmitPosition(p: float4): void",
                vec!["Fx.EmitPosition"]
            ),
            ("RVN5008", "Fx.Reduce(i: int): void", vec!["Fx.Reduce"]),
        ]
    );
    // The path locates the touch inside the last function of the chain.
    assert_eq!(refusals[1].path, "Body.Statements[0]");
    assert_eq!(refusals[4].path, "Body.Statements[0].Body.Statements[1]");
    // Without the offending functions the module exports and verifies.
    let mut module = export_module();
    module.functions.retain(|f| f.name == "Pure");
    let library = export::export(&module).unwrap();
    assert_eq!(library.ir.functions.len(), 1);
}

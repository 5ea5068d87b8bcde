//! The example libraries under `examples/rvnlib/`, built with the builder API.
#![allow(dead_code)]

use rvnlib::builder::{FunctionBuilder, types::*};
use rvnlib::export::{ExportModule, ShaderStorage, ShaderStorageKind};
use rvnlib::*;

pub fn field(name: &str, ty: LibraryIrTypeReference) -> LibraryIrField {
    LibraryIrField {
        name: name.into(),
        ty,
    }
}

pub fn tuple_f32_f32() -> LibraryIrStruct {
    LibraryIrStruct {
        key: "Tuple_f32_f32".into(),
        name: "Tuple_f32_f32".into(),
        fields: vec![field("Item1", f32()), field("Item2", f32())],
    }
}

fn float_ref() -> LibraryTypeReference {
    LibraryTypeReference::primitive("Float")
}

/// A declared type whose methods point at IR keys.
pub fn decl_type(
    namespace: &str,
    name: &str,
    kind: TypeKind,
    methods: &[(&str, &str, bool)],
    ir_struct: Option<&str>,
) -> LibraryType {
    LibraryType {
        namespace: namespace.into(),
        name: name.into(),
        containing_type: None,
        kind,
        base_type: None,
        interfaces: Vec::new(),
        type_parameters: Vec::new(),
        fields: Vec::new(),
        methods: methods
            .iter()
            .map(|(method, key, inout)| LibraryMethod {
                name: (*method).into(),
                method_kind: EnumName::new("Ordinary").unwrap(),
                return_type: float_ref(),
                parameters: vec![LibraryParameter {
                    name: "x".into(),
                    ty: float_ref(),
                    ordinal: 0,
                    has_default_value: false,
                    default_value: None,
                    semantic_name: None,
                    ref_kind: if *inout {
                        RefKind::InOut
                    } else {
                        RefKind::None
                    },
                }],
                type_parameters: Vec::new(),
                is_static: true,
                stage: ShaderStage::None,
                semantic_name: None,
                ir_function: Some((*key).into()),
            })
            .collect(),
        properties: Vec::new(),
        ir_struct: ir_struct.map(str::to_string),
    }
}

pub const SATURATE: &str = "Core.MathHelpers.Saturate(x: float): float";
pub const ACCUMULATE: &str = "Core.MathHelpers.Accumulate(inout acc: float, x: float): void";
pub const SPLIT_SUM: &str = "Core.MathHelpers.SplitSum(v: float3): (float, float)";
pub const MAKE_PAIR: &str = "Core.Generic.MakePair<float>(a: float, b: float): Pair<float>";
pub const EVERYTHING: &str =
    "Core.Shading.Everything(s: Surface, n: float3, m: float4x4, i: int): float";

fn surface() -> LibraryIrTypeReference {
    LibraryIrTypeReference::structure("Core::Surface")
}

/// `Core`: every statement shape, every access shape, by-reference arguments,
/// a tuple and a monomorphised generic.
pub fn core_library() -> CompiledLibrary {
    let mut lib = CompiledLibrary::new("Core");
    lib.source_hash = source_hash(&["package Core // example source, not shipped"]);
    lib.ir.structs = vec![
        LibraryIrStruct {
            key: "Core::Surface".into(),
            name: "Surface".into(),
            fields: vec![
                field("Albedo", vec(3)),
                field("Roughness", f32()),
                field("Layers", LibraryIrTypeReference::array(f32(), Some(4))),
            ],
        },
        tuple_f32_f32(),
        LibraryIrStruct {
            key: "Pair_f32".into(),
            name: "Pair_f32".into(),
            fields: vec![field("First", f32()), field("Second", f32())],
        },
    ];

    let mut f = FunctionBuilder::new(SATURATE, "Saturate", f32());
    let x = f.param("x", f32());
    let v = f.load(f32(), x, vec![]);
    let r = f.intrinsic(IrIntrinsic::Saturate, Some(f32()), vec![v]);
    f.ret(r);
    let saturate = f.finish();

    let mut f = FunctionBuilder::new(ACCUMULATE, "Accumulate", void());
    let acc = f.param_inout("acc", f32());
    let x = f.param("x", f32());
    let a = f.load(f32(), acc, vec![]);
    let b = f.load(f32(), x, vec![]);
    let sum = f.binary(IrBinaryOp::Add, f32(), a, b);
    f.store(acc, vec![], sum);
    f.ret(None);
    let accumulate = f.finish();

    let mut f = FunctionBuilder::new(
        SPLIT_SUM,
        "SplitSum",
        LibraryIrTypeReference::structure("Tuple_f32_f32"),
    );
    let p = f.param("v", vec(3));
    let v = f.load(vec(3), p, vec![]);
    let xy = f.extract(
        vec(2),
        v,
        vec![LibraryIrAccess::Swizzle {
            components: vec![0, 1],
        }],
    );
    let x = f.extract(
        f32(),
        xy,
        vec![LibraryIrAccess::Swizzle {
            components: vec![0],
        }],
    );
    let z = f.extract(
        f32(),
        v,
        vec![LibraryIrAccess::Swizzle {
            components: vec![2],
        }],
    );
    let t = f.construct(
        LibraryIrTypeReference::structure("Tuple_f32_f32"),
        vec![x, z],
    );
    f.ret(Some(t));
    let split_sum = f.finish();

    let pair = LibraryIrTypeReference::structure("Pair_f32");
    let mut f = FunctionBuilder::new(MAKE_PAIR, "MakePair", pair.clone());
    let a = f.param("a", f32());
    let b = f.param("b", f32());
    let va = f.load(f32(), a, vec![]);
    let vb = f.load(f32(), b, vec![]);
    let p = f.construct(pair.clone(), vec![va, vb]);
    f.ret(Some(p));
    let make_pair = f.finish();

    lib.ir.functions = vec![saturate, accumulate, split_sum, make_pair, everything()];
    lib.types = vec![
        decl_type(
            "Core",
            "MathHelpers",
            TypeKind::Struct,
            &[
                ("Saturate", SATURATE, false),
                ("Accumulate", ACCUMULATE, true),
                ("SplitSum", SPLIT_SUM, false),
            ],
            None,
        ),
        decl_type(
            "Core",
            "Surface",
            TypeKind::Struct,
            &[],
            Some("Core::Surface"),
        ),
        decl_type(
            "Core",
            "Shading",
            TypeKind::Struct,
            &[("Everything", EVERYTHING, false)],
            None,
        ),
    ];
    lib
}

/// One function using all eighteen statement shapes and all three accesses.
fn everything() -> LibraryIrFunction {
    let tuple = LibraryIrTypeReference::structure("Tuple_f32_f32");
    let mut f = FunctionBuilder::new(EVERYTHING, "Everything", f32());
    let s = f.param("s", surface());
    let n = f.param("n", vec(3));
    let m = f.param("m", mat(4, 4));
    let i = f.param("i", i32());
    let total = f.local("total", f32());
    let color = f.local("color", vec(3));
    let counter = f.local("counter", i32());

    // const: each kind, and a null (zero) constant
    let zero = f.constant(f32(), None);
    f.store(total, vec![], zero);
    let one = f.constant(f32(), Some(LibraryValue::float(1.0)));
    let tenth = f.constant(f32(), Some(LibraryValue::float(0.1)));
    let big = f.constant(f32(), Some(LibraryValue::float(1.0e20)));
    let _d = f.constant(
        LibraryIrTypeReference::scalar(IrTypeKind::Double),
        Some(LibraryValue::double(-2.5e-7)),
    );
    let _u = f.constant(u32(), Some(LibraryValue::uint(7)));
    let yes = f.constant(bool(), Some(LibraryValue::bool(true)));
    let zero_i = f.constant(i32(), Some(LibraryValue::int(0)));
    let three = f.constant(i32(), Some(LibraryValue::int(3)));
    f.skip_value(); // a gap, as dead-branch elimination leaves

    // load through field, index and swizzle accesses
    let idx = f.load(i32(), i, vec![]);
    let layer = f.load(
        f32(),
        s,
        vec![
            LibraryIrAccess::Field { index: 2 },
            LibraryIrAccess::Index { index: idx },
        ],
    );
    let albedo = f.load(vec(3), s, vec![LibraryIrAccess::Field { index: 0 }]);
    let red = f.load(
        f32(),
        s,
        vec![
            LibraryIrAccess::Field { index: 0 },
            LibraryIrAccess::Swizzle {
                components: vec![0],
            },
        ],
    );
    let normal = f.load(vec(3), n, vec![]);
    let matrix = f.load(mat(4, 4), m, vec![]);
    let column = f.load(vec(4), m, vec![LibraryIrAccess::Index { index: zero_i }]);

    // unary, binary, convert
    let neg = f.unary(IrUnaryOp::Negate, f32(), layer);
    let not = f.unary(IrUnaryOp::Not, bool(), yes);
    let inv = f.unary(IrUnaryOp::BitwiseNot, i32(), idx);
    // Raven's verifier wants identical operand types: splat the scalar first.
    let red3 = f.convert(IrConversionKind::Splat, vec(3), red);
    let scaled = f.binary(IrBinaryOp::Multiply, vec(3), albedo, red3);
    let as_float = f.convert(IrConversionKind::Numeric, f32(), inv);
    let splat = f.convert(IrConversionKind::Splat, vec(3), as_float);
    let mixed = f.binary(IrBinaryOp::Add, vec(3), scaled, splat);
    let less = f.binary(IrBinaryOp::LessThan, bool(), neg, tenth);
    let both = f.binary(IrBinaryOp::LogicalAnd, bool(), less, not);

    // intrinsics, including a void one
    let unit = f
        .intrinsic(IrIntrinsic::Normalize, Some(vec(3)), vec![normal])
        .unwrap_or(0);
    let lambert = f
        .intrinsic(IrIntrinsic::Dot, Some(f32()), vec![unit, mixed])
        .unwrap_or(0);
    f.intrinsic(IrIntrinsic::ControlBarrier, None, vec![]);

    // construct a vector and a matrix product, extract a lane
    let v4 = f.construct(vec(4), vec![mixed, one]);
    let transformed = f.binary(IrBinaryOp::MatrixMultiply, vec(4), matrix, v4);
    let w = f.extract(
        f32(),
        transformed,
        vec![LibraryIrAccess::Swizzle {
            components: vec![3],
        }],
    );
    let _col_x = f.extract(
        f32(),
        column,
        vec![LibraryIrAccess::Index { index: zero_i }],
    );

    // calls: by value, by reference, tuple result, generic result, result unused
    let sat = f
        .call(
            SATURATE,
            Some(f32()),
            vec![LibraryIrArgument::by_value(lambert)],
        )
        .unwrap_or(0);
    f.call(
        ACCUMULATE,
        None,
        vec![
            LibraryIrArgument::by_reference(total),
            LibraryIrArgument::by_value(sat),
        ],
    );
    let split = f
        .call(
            SPLIT_SUM,
            Some(tuple.clone()),
            vec![LibraryIrArgument::by_value(normal)],
        )
        .unwrap_or(0);
    let first = f.extract(f32(), split, vec![LibraryIrAccess::Field { index: 0 }]);
    let pair = f
        .call(
            MAKE_PAIR,
            Some(LibraryIrTypeReference::structure("Pair_f32")),
            vec![
                LibraryIrArgument::by_value(first),
                LibraryIrArgument::by_value(w),
            ],
        )
        .unwrap_or(0);
    let second = f.extract(f32(), pair, vec![LibraryIrAccess::Field { index: 1 }]);
    // A non-void result is never discarded (Raven's verifier refuses that).
    f.call(
        SATURATE,
        Some(f32()),
        vec![LibraryIrArgument::by_value(second)],
    );

    // select; store through a swizzle into a local
    let chosen = f.select(f32(), both, first, second);
    f.store(color, vec![], mixed);
    let pair2 = f.construct(vec(2), vec![chosen, big]);
    f.store(
        color,
        vec![LibraryIrAccess::Swizzle {
            components: vec![2, 0],
        }],
        pair2,
    );

    // if/else, if with discard
    f.if_else(
        both,
        |b| {
            let t = b.load(f32(), total, vec![]);
            let t2 = b.binary(IrBinaryOp::Add, f32(), t, one);
            b.store(total, vec![], t2);
        },
        |b| {
            let t = b.load(f32(), total, vec![]);
            let t2 = b.binary(IrBinaryOp::Subtract, f32(), t, one);
            b.store(total, vec![], t2);
        },
    );
    let negative = f.binary(IrBinaryOp::LessThan, bool(), lambert, zero);
    f.if_then(negative, |b| b.discard());

    // while-style loop with break, continue and a continue block
    f.store(counter, vec![], zero_i);
    f.loop_(
        true,
        |b| {
            let c = b.load(i32(), counter, vec![]);
            b.binary(IrBinaryOp::LessThan, bool(), c, three)
        },
        |b| {
            let c = b.load(i32(), counter, vec![]);
            let is_one = b.binary(IrBinaryOp::Equal, bool(), c, three);
            b.if_then(is_one, |b| b.brk());
            let t = b.load(f32(), total, vec![]);
            let small = b.binary(IrBinaryOp::LessThan, bool(), t, tenth);
            b.if_then(small, |b| b.cont());
            b.call(
                ACCUMULATE,
                None,
                vec![
                    LibraryIrArgument::by_reference(total),
                    LibraryIrArgument::by_value(tenth),
                ],
            );
        },
        Some(&|b: &mut FunctionBuilder| {
            let c = b.load(i32(), counter, vec![]);
            let step = b.constant(i32(), Some(LibraryValue::int(1)));
            let next = b.binary(IrBinaryOp::Add, i32(), c, step);
            b.store(counter, vec![], next);
        }),
    );
    // repeat … while
    f.loop_(
        false,
        |b| {
            let t = b.load(f32(), total, vec![]);
            b.binary(IrBinaryOp::GreaterThan, bool(), t, one)
        },
        |b| {
            let t = b.load(f32(), total, vec![]);
            let half = b.constant(f32(), Some(LibraryValue::float(0.5)));
            let t2 = b.binary(IrBinaryOp::Multiply, f32(), t, half);
            b.store(total, vec![], t2);
        },
        None,
    );
    // nested block, then return
    f.block(|b| {
        let t = b.load(f32(), total, vec![]);
        let c = b.load(
            vec(3),
            color,
            vec![LibraryIrAccess::Swizzle {
                components: vec![1, 1, 2],
            }],
        );
        let y = b.extract(
            f32(),
            c,
            vec![LibraryIrAccess::Swizzle {
                components: vec![0],
            }],
        );
        let r = b.binary(IrBinaryOp::Add, f32(), t, y);
        b.ret(Some(r));
    });
    f.finish()
}

pub const A_OF: &str = "PkgA.Geometry.Of(s: Shape): float";
pub const B_OF: &str = "PkgB.Geometry.Of(s: Shape): float";
pub const A_BOUNDS: &str = "PkgA.Geometry.Bounds(s: Shape): (float, float)";
pub const A_UNUSED: &str = "PkgA.Geometry.Unused(x: float): float";
pub const APP_SHADE: &str = "App.Main.Shade(x: float): float";
pub const APP_OF: &str = "App.Main.Of(x: float): float";

/// A package with `struct Shape` and `static func Of`; `fields` differ per package.
fn package(
    name: &str,
    of_key: &str,
    shape_fields: Vec<LibraryIrField>,
    with_bounds: bool,
) -> CompiledLibrary {
    let shape_key = format!("{name}::Shape");
    let shape = LibraryIrTypeReference::structure(&shape_key);
    let mut lib = CompiledLibrary::new(name);
    lib.source_hash = source_hash(&[&format!("package {name}")]);
    lib.ir.structs.push(LibraryIrStruct {
        key: shape_key.clone(),
        name: "Shape".into(),
        fields: shape_fields,
    });
    let mut f = FunctionBuilder::new(of_key, "Of", f32());
    let s = f.param("s", shape.clone());
    let v = f.load(f32(), s, vec![LibraryIrAccess::Field { index: 0 }]);
    f.ret(Some(v));
    lib.ir.functions.push(f.finish());
    let mut methods = vec![("Of", of_key, false)];
    if with_bounds {
        lib.ir.structs.push(tuple_f32_f32());
        let tuple = LibraryIrTypeReference::structure("Tuple_f32_f32");
        let mut f = FunctionBuilder::new(A_BOUNDS, "Bounds", tuple.clone());
        let s = f.param("s", shape.clone());
        let lo = f.load(f32(), s, vec![LibraryIrAccess::Field { index: 0 }]);
        let hi = f.load(f32(), s, vec![LibraryIrAccess::Field { index: 1 }]);
        let t = f.construct(tuple, vec![lo, hi]);
        f.ret(Some(t));
        lib.ir.functions.push(f.finish());
        let mut f = FunctionBuilder::new(A_UNUSED, "Unused", f32());
        let x = f.param("x", f32());
        let v = f.load(f32(), x, vec![]);
        f.ret(Some(v));
        lib.ir.functions.push(f.finish());
        methods.push(("Bounds", A_BOUNDS, false));
        methods.push(("Unused", A_UNUSED, false));
    }
    lib.types = vec![
        decl_type(name, "Geometry", TypeKind::Struct, &methods, None),
        decl_type(name, "Shape", TypeKind::Struct, &[], Some(&shape_key)),
    ];
    lib
}

/// `PkgA`: `Shape {Lo, Hi}`, `Of`, `Bounds` (returns a tuple), `Unused`.
pub fn pkg_a() -> CompiledLibrary {
    package(
        "PkgA",
        A_OF,
        vec![field("Lo", f32()), field("Hi", f32())],
        true,
    )
}

/// `PkgB`: `Shape {Radius}`, `Of`.
pub fn pkg_b() -> CompiledLibrary {
    package("PkgB", B_OF, vec![field("Radius", f32())], false)
}

/// `App`: the consumer. Declares its own `Shape` and `Of`, calls both packages' `Of`.
pub fn app() -> CompiledLibrary {
    let mut lib = CompiledLibrary::new("App");
    lib.ir.structs.push(LibraryIrStruct {
        key: "App::Shape".into(),
        name: "Shape".into(),
        fields: vec![field("Sides", i32())],
    });
    lib.ir.structs.push(tuple_f32_f32());
    let a_shape = LibraryIrTypeReference::structure("PkgA::Shape");
    let b_shape = LibraryIrTypeReference::structure("PkgB::Shape");
    let tuple = LibraryIrTypeReference::structure("Tuple_f32_f32");

    let mut f = FunctionBuilder::new(APP_OF, "Of", f32());
    let x = f.param("x", f32());
    let v = f.load(f32(), x, vec![]);
    f.ret(Some(v));
    lib.ir.functions.push(f.finish());

    let mut f = FunctionBuilder::new(APP_SHADE, "Shade", f32());
    let x = f.param("x", f32());
    let sa = f.local("a", a_shape.clone());
    let sb = f.local("b", b_shape.clone());
    let bounds = f.local("bounds", tuple.clone());
    let v = f.load(f32(), x, vec![]);
    f.store(sa, vec![LibraryIrAccess::Field { index: 0 }], v);
    f.store(sa, vec![LibraryIrAccess::Field { index: 1 }], v);
    f.store(sb, vec![LibraryIrAccess::Field { index: 0 }], v);
    let a = f.load(a_shape, sa, vec![]);
    let b = f.load(b_shape, sb, vec![]);
    let oa = f
        .call(A_OF, Some(f32()), vec![LibraryIrArgument::by_value(a)])
        .unwrap_or(0);
    let ob = f
        .call(B_OF, Some(f32()), vec![LibraryIrArgument::by_value(b)])
        .unwrap_or(0);
    let own = f
        .call(APP_OF, Some(f32()), vec![LibraryIrArgument::by_value(oa)])
        .unwrap_or(0);
    let t = f
        .call(
            A_BOUNDS,
            Some(tuple.clone()),
            vec![LibraryIrArgument::by_value(a)],
        )
        .unwrap_or(0);
    f.store(bounds, vec![], t); // the library's tuple is the caller's tuple
    let hi = f.load(f32(), bounds, vec![LibraryIrAccess::Field { index: 1 }]);
    let s1 = f.binary(IrBinaryOp::Add, f32(), own, ob);
    let s2 = f.binary(IrBinaryOp::Add, f32(), s1, hi);
    f.ret(Some(s2));
    lib.ir.functions.push(f.finish());
    lib.types = vec![
        decl_type(
            "App",
            "Main",
            TypeKind::Struct,
            &[("Of", APP_OF, false), ("Shade", APP_SHADE, false)],
            None,
        ),
        decl_type("App", "Shape", TypeKind::Struct, &[], Some("App::Shape")),
    ];
    lib
}

pub const CLAMP01: &str = "Shared.Util.Clamp01(x: float): float";
pub const HALF: &str = "Shared.Util.Half(x: float): float";

/// Two libraries that both define `Clamp01` (differently) and `Half` (identically).
pub fn collision(name: &str, use_clamp: bool) -> CompiledLibrary {
    let mut lib = CompiledLibrary::new(name);
    let mut f = FunctionBuilder::new(CLAMP01, "Clamp01", f32());
    let x = f.param("x", f32());
    let v = f.load(f32(), x, vec![]);
    let r = if use_clamp {
        let lo = f.constant(f32(), Some(LibraryValue::float(0.0)));
        let hi = f.constant(f32(), Some(LibraryValue::float(1.0)));
        f.intrinsic(IrIntrinsic::Clamp, Some(f32()), vec![v, lo, hi])
    } else {
        f.intrinsic(IrIntrinsic::Saturate, Some(f32()), vec![v])
    };
    f.ret(r);
    lib.ir.functions.push(f.finish());
    let mut f = FunctionBuilder::new(HALF, "Half", f32());
    let x = f.param("x", f32());
    let v = f.load(f32(), x, vec![]);
    let h = f.constant(f32(), Some(LibraryValue::float(0.5)));
    let r = f.binary(IrBinaryOp::Multiply, f32(), v, h);
    f.ret(Some(r));
    lib.ir.functions.push(f.finish());
    lib
}

/// A version-3 library: struct identity is the name.
pub fn legacy_v3() -> CompiledLibrary {
    let mut lib = CompiledLibrary::new("Legacy");
    lib.ir.structs.push(LibraryIrStruct {
        key: "Light".into(),
        name: "Light".into(),
        fields: vec![field("Intensity", f32())],
    });
    let mut f = FunctionBuilder::new(
        "Legacy.Lights.Intensity(l: Light): float",
        "Intensity",
        f32(),
    );
    let l = f.param("l", LibraryIrTypeReference::structure("Light"));
    let v = f.load(f32(), l, vec![LibraryIrAccess::Field { index: 0 }]);
    f.ret(Some(v));
    lib.ir.functions.push(f.finish());
    lib
}

/// A module whose functions touch each kind of shader-owned storage, directly
/// and through calls.
pub fn export_module() -> ExportModule {
    let storage = vec![
        ShaderStorage {
            name: "gAlbedo".into(),
            kind: ShaderStorageKind::Binding,
            ty: vec(4),
        },
        ShaderStorage {
            name: "Position".into(),
            kind: ShaderStorageKind::Stream,
            ty: vec(4),
        },
        ShaderStorage {
            name: "gTile".into(),
            kind: ShaderStorageKind::GroupShared,
            ty: LibraryIrTypeReference::array(f32(), Some(64)),
        },
    ];
    let mut functions = Vec::new();
    // ReadAlbedo reads binding (root 0 = storage[0], no params/locals)
    let mut f = FunctionBuilder::new("Fx.ReadAlbedo(): float4", "ReadAlbedo", vec(4));
    let v = f.load(vec(4), 0, vec![]);
    f.ret(Some(v));
    functions.push(f.finish());
    // Tint calls ReadAlbedo inside an if
    let mut f = FunctionBuilder::new("Fx.Tint(x: float): float4", "Tint", vec(4));
    let x = f.param("x", f32());
    let v = f.load(f32(), x, vec![]);
    let zero = f.constant(f32(), None);
    let c = f.binary(IrBinaryOp::GreaterThan, bool(), v, zero);
    let out = f.local("out", vec(4));
    f.if_then(c, |b| {
        let a = b
            .call("Fx.ReadAlbedo(): float4", Some(vec(4)), vec![])
            .unwrap_or(0);
        b.store(out, vec![], a);
    });
    let r = f.load(vec(4), out, vec![]);
    f.ret(Some(r));
    functions.push(f.finish());
    // Shade calls Tint: refused transitively, chain Shade -> Tint -> ReadAlbedo
    let mut f = FunctionBuilder::new("Fx.Shade(x: float): float4", "Shade", vec(4));
    let x = f.param("x", f32());
    let v = f.load(f32(), x, vec![]);
    let r = f.call(
        "Fx.Tint(x: float): float4",
        Some(vec(4)),
        vec![LibraryIrArgument::by_value(v)],
    );
    f.ret(r);
    functions.push(f.finish());
    // EmitPosition writes a stream (root 1 past one param = storage[1])
    let mut f = FunctionBuilder::new("Fx.EmitPosition(p: float4): void", "EmitPosition", void());
    let p = f.param("p", vec(4));
    let v = f.load(vec(4), p, vec![]);
    f.store(2, vec![], v);
    f.ret(None);
    functions.push(f.finish());
    // Reduce touches groupshared inside a loop body, passing it by reference
    let mut f = FunctionBuilder::new("Fx.Reduce(i: int): void", "Reduce", void());
    let i = f.param("i", i32());
    f.loop_(
        true,
        |b| b.constant(bool(), Some(LibraryValue::bool(false))),
        |b| {
            let idx = b.load(i32(), i, vec![]);
            let t = b.load(f32(), 3, vec![LibraryIrAccess::Index { index: idx }]);
            b.store(3, vec![LibraryIrAccess::Index { index: idx }], t);
        },
        None,
    );
    f.ret(None);
    functions.push(f.finish());
    // Pure is exportable
    let mut f = FunctionBuilder::new("Fx.Pure(x: float): float", "Pure", f32());
    let x = f.param("x", f32());
    let v = f.load(f32(), x, vec![]);
    f.ret(Some(v));
    functions.push(f.finish());
    ExportModule {
        name: "Fx".into(),
        types: Vec::new(),
        structs: Vec::new(),
        functions,
        storage,
        source_hash: String::new(),
    }
}

//! A realistic package pair in two versions, and a consumer of both:
//!
//! * `Brdf` — Lambert, GGX distribution, Schlick Fresnel and an `Evaluate`
//!   that combines them, plus `Split` returning the tuple
//!   `(diffuse: float, specular: float)`. Version 2 is compatible: `GgxD`
//!   clamps the roughness (a body change) and `Sheen` is new.
//! * `Geometry` (the skinning library) — `Blend` (matrix × scalar, as
//!   Raven's `Skinning.rvn` does), `FromBasis` (a matrix constructed from
//!   vector and scalar lanes), `SkinPosition` (a mixed vector construct and a
//!   matrix × vector), `Skin` over `struct SkinVertex`, and `Weights`
//!   returning `(total: float, largest: float)` — the same tuple shape as
//!   `Brdf.Split` with other element names. Version 2 breaks consumers: the
//!   two-weight `Blend` is replaced by a one-parameter one, and `SkinVertex`
//!   puts `Weights` first.
//! * `ShadeApp` — a consumer built against version 1 of both.
//!
//! Every struct's key is its name, so all of them are version-3 containers
//! that Raven's reader accepts.
#![allow(dead_code)]

use rvnlib::builder::{FunctionBuilder, types::*};
use rvnlib::*;

pub const LAMBERT: &str = "Brdf.Shading.Lambert(n: float3, l: float3): float";
pub const GGX_D: &str = "Brdf.Shading.GgxD(nh: float, roughness: float): float";
pub const FRESNEL: &str = "Brdf.Shading.FresnelSchlick(f0: float3, vh: float): float3";
pub const EVALUATE: &str =
    "Brdf.Shading.Evaluate(s: Material, n: float3, l: float3, v: float3): float3";
pub const SPLIT: &str = "Brdf.Shading.Split(s: Material, n: float3, l: float3): (float, float)";
pub const SHEEN: &str = "Brdf.Shading.Sheen(nl: float, tint: float): float";

pub const BLEND_V1: &str =
    "Geometry.Skinning.Blend(a: float4x4, b: float4x4, wa: float, wb: float): float4x4";
pub const BLEND_V2: &str = "Geometry.Skinning.Blend(a: float4x4, b: float4x4, t: float): float4x4";
pub const FROM_BASIS: &str =
    "Geometry.Skinning.FromBasis(x: float3, y: float3, z: float3, t: float3): float4x4";
pub const SKIN_POSITION: &str = "Geometry.Skinning.SkinPosition(m: float4x4, p: float3): float3";
pub const SKIN: &str = "Geometry.Skinning.Skin(v: SkinVertex, m: float4x4): float3";
pub const WEIGHTS: &str = "Geometry.Skinning.Weights(w: float4): (float, float)";

pub const APP_SHADE: &str =
    "ShadeApp.Main.Shade(v: SkinVertex, a: float4x4, b: float4x4, s: Material, l: float3): float3";

const TUPLE: &str = "Tuple_f32_f32";

fn reference(special: &str) -> LibraryTypeReference {
    LibraryTypeReference::primitive(special)
}

fn named(name: &str) -> LibraryTypeReference {
    LibraryTypeReference::named(name)
}

fn tuple_reference(names: [&str; 2]) -> LibraryTypeReference {
    let mut tuple = LibraryTypeReference::primitive("None");
    tuple.kind = LibraryTypeKind::Tuple;
    tuple.elements = vec![reference("Float"), reference("Float")];
    tuple.element_names = names.iter().map(|n| Some(n.to_string())).collect();
    tuple
}

/// A static method of a declaration, linked to the IR function `key`.
fn method(
    name: &str,
    key: &str,
    parameters: &[(&str, LibraryTypeReference)],
    returns: LibraryTypeReference,
) -> LibraryMethod {
    LibraryMethod {
        name: name.into(),
        method_kind: EnumName::new("Ordinary").expect("identifier"),
        return_type: returns,
        parameters: parameters
            .iter()
            .enumerate()
            .map(|(i, (n, ty))| LibraryParameter {
                name: (*n).into(),
                ty: ty.clone(),
                ordinal: i as i32,
                has_default_value: false,
                default_value: None,
                semantic_name: None,
                ref_kind: RefKind::None,
            })
            .collect(),
        type_parameters: Vec::new(),
        is_static: true,
        stage: ShaderStage::None,
        semantic_name: None,
        ir_function: Some(key.into()),
    }
}

fn declared(
    namespace: &str,
    name: &str,
    kind: TypeKind,
    methods: Vec<LibraryMethod>,
    fields: &[(&str, LibraryTypeReference)],
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
        fields: fields
            .iter()
            .map(|(n, ty)| LibraryField {
                name: (*n).into(),
                ty: ty.clone(),
                is_static: false,
                is_read_only: false,
                is_const: false,
                is_permutation: false,
                is_value_parameter: false,
                is_compose: false,
                is_stream: false,
                declared_value: None,
                resource_kind: EnumName::new("None").expect("identifier"),
                resource_set: EnumName::new("PerMaterial").expect("identifier"),
                semantic_name: None,
            })
            .collect(),
        methods,
        properties: Vec::new(),
        ir_struct: ir_struct.map(str::to_string),
    }
}

fn field(name: &str, ty: LibraryIrTypeReference) -> LibraryIrField {
    LibraryIrField {
        name: name.into(),
        ty,
    }
}

fn tuple_struct(names: [&str; 2]) -> LibraryIrStruct {
    LibraryIrStruct {
        key: TUPLE.into(),
        name: TUPLE.into(),
        fields: vec![field(names[0], f32()), field(names[1], f32())],
    }
}

fn material() -> LibraryIrTypeReference {
    LibraryIrTypeReference::structure("Material")
}

fn skin_vertex() -> LibraryIrTypeReference {
    LibraryIrTypeReference::structure("SkinVertex")
}

fn constant(f: &mut FunctionBuilder, value: f32) -> i32 {
    f.constant(f32(), Some(LibraryValue::float(value)))
}

fn vec4() -> LibraryIrTypeReference {
    vec(4)
}

/// `Brdf`, version 1 or 2.
pub fn brdf(version: u32) -> CompiledLibrary {
    let mut lib = CompiledLibrary::new("Brdf");
    lib.source_hash = source_hash(&[&format!("package Brdf // version {version}")]);
    lib.ir.structs = vec![
        LibraryIrStruct {
            key: "Material".into(),
            name: "Material".into(),
            fields: vec![
                field("Albedo", vec(3)),
                field("Roughness", f32()),
                field("F0", vec(3)),
            ],
        },
        tuple_struct(["diffuse", "specular"]),
    ];

    // Lambert: saturate(dot(n, l))
    let mut f = FunctionBuilder::new(LAMBERT, "Lambert", f32());
    let n = f.param("n", vec(3));
    let l = f.param("l", vec(3));
    let nv = f.load(vec(3), n, vec![]);
    let lv = f.load(vec(3), l, vec![]);
    let d = f
        .intrinsic(IrIntrinsic::Dot, Some(f32()), vec![nv, lv])
        .unwrap_or(0);
    let s = f
        .intrinsic(IrIntrinsic::Saturate, Some(f32()), vec![d])
        .unwrap_or(0);
    f.ret(Some(s));
    lib.ir.functions.push(f.finish());

    // GGX: a2 / (pi * (nh*nh*(a2 - 1) + 1)^2), a = roughness^2
    let mut f = FunctionBuilder::new(GGX_D, "GgxD", f32());
    let nh = f.param("nh", f32());
    let roughness = f.param("roughness", f32());
    let nh = f.load(f32(), nh, vec![]);
    let mut r = f.load(f32(), roughness, vec![]);
    if version >= 2 {
        // version 2 keeps roughness away from 0, where the lobe degenerates
        let lo = constant(&mut f, 0.045);
        let hi = constant(&mut f, 1.0);
        r = f
            .intrinsic(IrIntrinsic::Clamp, Some(f32()), vec![r, lo, hi])
            .unwrap_or(0);
    }
    let a = f.binary(IrBinaryOp::Multiply, f32(), r, r);
    let a2 = f.binary(IrBinaryOp::Multiply, f32(), a, a);
    let one = constant(&mut f, 1.0);
    let a2m1 = f.binary(IrBinaryOp::Subtract, f32(), a2, one);
    let nh2 = f.binary(IrBinaryOp::Multiply, f32(), nh, nh);
    let t = f.binary(IrBinaryOp::Multiply, f32(), nh2, a2m1);
    let t1 = f.binary(IrBinaryOp::Add, f32(), t, one);
    let t2 = f.binary(IrBinaryOp::Multiply, f32(), t1, t1);
    let pi = constant(&mut f, std::f32::consts::PI);
    let denominator = f.binary(IrBinaryOp::Multiply, f32(), pi, t2);
    let d = f.binary(IrBinaryOp::Divide, f32(), a2, denominator);
    f.ret(Some(d));
    lib.ir.functions.push(f.finish());

    // Schlick: f0 + (1 - f0) * (1 - vh)^5, scalars splatted to float3
    let mut f = FunctionBuilder::new(FRESNEL, "FresnelSchlick", vec(3));
    let f0 = f.param("f0", vec(3));
    let vh = f.param("vh", f32());
    let f0 = f.load(vec(3), f0, vec![]);
    let vh = f.load(f32(), vh, vec![]);
    let one = constant(&mut f, 1.0);
    let five = constant(&mut f, 5.0);
    let k = f.binary(IrBinaryOp::Subtract, f32(), one, vh);
    let k5 = f
        .intrinsic(IrIntrinsic::Pow, Some(f32()), vec![k, five])
        .unwrap_or(0);
    let one3 = f.convert(IrConversionKind::Splat, vec(3), one);
    let k53 = f.convert(IrConversionKind::Splat, vec(3), k5);
    let rest = f.binary(IrBinaryOp::Subtract, vec(3), one3, f0);
    let scaled = f.binary(IrBinaryOp::Multiply, vec(3), rest, k53);
    let r = f.binary(IrBinaryOp::Add, vec(3), f0, scaled);
    f.ret(Some(r));
    lib.ir.functions.push(f.finish());

    // Evaluate: albedo * lambert + fresnel * ggx
    let mut f = FunctionBuilder::new(EVALUATE, "Evaluate", vec(3));
    let s = f.param("s", material());
    let n = f.param("n", vec(3));
    let l = f.param("l", vec(3));
    let v = f.param("v", vec(3));
    let nv = f.load(vec(3), n, vec![]);
    let lv = f.load(vec(3), l, vec![]);
    let vv = f.load(vec(3), v, vec![]);
    let albedo = f.load(vec(3), s, vec![LibraryIrAccess::Field { index: 0 }]);
    let roughness = f.load(f32(), s, vec![LibraryIrAccess::Field { index: 1 }]);
    let f0 = f.load(vec(3), s, vec![LibraryIrAccess::Field { index: 2 }]);
    let sum = f.binary(IrBinaryOp::Add, vec(3), lv, vv);
    let h = f
        .intrinsic(IrIntrinsic::Normalize, Some(vec(3)), vec![sum])
        .unwrap_or(0);
    let nh = f
        .intrinsic(IrIntrinsic::Dot, Some(f32()), vec![nv, h])
        .unwrap_or(0);
    let vh = f
        .intrinsic(IrIntrinsic::Dot, Some(f32()), vec![vv, h])
        .unwrap_or(0);
    let by_value = LibraryIrArgument::by_value;
    let diffuse = f
        .call(LAMBERT, Some(f32()), vec![by_value(nv), by_value(lv)])
        .unwrap_or(0);
    let d = f
        .call(GGX_D, Some(f32()), vec![by_value(nh), by_value(roughness)])
        .unwrap_or(0);
    let fresnel = f
        .call(FRESNEL, Some(vec(3)), vec![by_value(f0), by_value(vh)])
        .unwrap_or(0);
    let diffuse3 = f.convert(IrConversionKind::Splat, vec(3), diffuse);
    let d3 = f.convert(IrConversionKind::Splat, vec(3), d);
    let lit = f.binary(IrBinaryOp::Multiply, vec(3), albedo, diffuse3);
    let specular = f.binary(IrBinaryOp::Multiply, vec(3), fresnel, d3);
    let r = f.binary(IrBinaryOp::Add, vec(3), lit, specular);
    f.ret(Some(r));
    lib.ir.functions.push(f.finish());

    // Split: (diffuse: lambert, specular: ggx at n·l), a tuple
    let tuple = LibraryIrTypeReference::structure(TUPLE);
    let mut f = FunctionBuilder::new(SPLIT, "Split", tuple.clone());
    let s = f.param("s", material());
    let n = f.param("n", vec(3));
    let l = f.param("l", vec(3));
    let nv = f.load(vec(3), n, vec![]);
    let lv = f.load(vec(3), l, vec![]);
    let roughness = f.load(f32(), s, vec![LibraryIrAccess::Field { index: 1 }]);
    let diffuse = f
        .call(LAMBERT, Some(f32()), vec![by_value(nv), by_value(lv)])
        .unwrap_or(0);
    let specular = f
        .call(
            GGX_D,
            Some(f32()),
            vec![by_value(diffuse), by_value(roughness)],
        )
        .unwrap_or(0);
    let pair = f.construct(tuple, vec![diffuse, specular]);
    f.ret(Some(pair));
    lib.ir.functions.push(f.finish());

    let float = reference("Float");
    let float3 = reference("Float3");
    let mut methods = vec![
        method(
            "Lambert",
            LAMBERT,
            &[("n", float3.clone()), ("l", float3.clone())],
            float.clone(),
        ),
        method(
            "GgxD",
            GGX_D,
            &[("nh", float.clone()), ("roughness", float.clone())],
            float.clone(),
        ),
        method(
            "FresnelSchlick",
            FRESNEL,
            &[("f0", float3.clone()), ("vh", float.clone())],
            float3.clone(),
        ),
        method(
            "Evaluate",
            EVALUATE,
            &[
                ("s", named("Brdf.Material")),
                ("n", float3.clone()),
                ("l", float3.clone()),
                ("v", float3.clone()),
            ],
            float3.clone(),
        ),
        method(
            "Split",
            SPLIT,
            &[
                ("s", named("Brdf.Material")),
                ("n", float3.clone()),
                ("l", float3.clone()),
            ],
            tuple_reference(["diffuse", "specular"]),
        ),
    ];
    if version >= 2 {
        // Sheen: tint * (1 - nl)^2 — new in version 2
        let mut f = FunctionBuilder::new(SHEEN, "Sheen", f32());
        let nl = f.param("nl", f32());
        let tint = f.param("tint", f32());
        let nl = f.load(f32(), nl, vec![]);
        let tint = f.load(f32(), tint, vec![]);
        let one = constant(&mut f, 1.0);
        let k = f.binary(IrBinaryOp::Subtract, f32(), one, nl);
        let k2 = f.binary(IrBinaryOp::Multiply, f32(), k, k);
        let r = f.binary(IrBinaryOp::Multiply, f32(), tint, k2);
        f.ret(Some(r));
        lib.ir.functions.push(f.finish());
        methods.push(method(
            "Sheen",
            SHEEN,
            &[("nl", float.clone()), ("tint", float.clone())],
            float.clone(),
        ));
    }
    lib.types = vec![
        declared("Brdf", "Shading", TypeKind::Struct, methods, &[], None),
        declared(
            "Brdf",
            "Material",
            TypeKind::Struct,
            Vec::new(),
            &[
                ("Albedo", float3.clone()),
                ("Roughness", float),
                ("F0", float3),
            ],
            Some("Material"),
        ),
    ];
    lib
}

/// `Geometry` (skinning), version 1 or 2.
pub fn skinning(version: u32) -> CompiledLibrary {
    let mut lib = CompiledLibrary::new("Geometry");
    lib.source_hash = source_hash(&[&format!(
        "package Geometry // Skinning.rvn, version {version}"
    )]);
    let vertex_fields = if version >= 2 {
        vec![
            field("Weights", vec4()),
            field("Position", vec(3)),
            field("Normal", vec(3)),
        ]
    } else {
        vec![
            field("Position", vec(3)),
            field("Normal", vec(3)),
            field("Weights", vec4()),
        ]
    };
    let position_index = if version >= 2 { 1 } else { 0 };
    lib.ir.structs = vec![
        LibraryIrStruct {
            key: "SkinVertex".into(),
            name: "SkinVertex".into(),
            fields: vertex_fields,
        },
        tuple_struct(["total", "largest"]),
    ];
    let by_value = LibraryIrArgument::by_value;

    // Blend: matrix × scalar, lowered by Raven as MatrixMultiply.
    let blend_key = if version >= 2 { BLEND_V2 } else { BLEND_V1 };
    let mut f = FunctionBuilder::new(blend_key, "Blend", mat(4, 4));
    let a = f.param("a", mat(4, 4));
    let b = f.param("b", mat(4, 4));
    let (wa, wb) = if version >= 2 {
        let t = f.param("t", f32());
        let t = f.load(f32(), t, vec![]);
        let one = constant(&mut f, 1.0);
        let rest = f.binary(IrBinaryOp::Subtract, f32(), one, t);
        (rest, t)
    } else {
        let wa = f.param("wa", f32());
        let wb = f.param("wb", f32());
        (f.load(f32(), wa, vec![]), f.load(f32(), wb, vec![]))
    };
    let a = f.load(mat(4, 4), a, vec![]);
    let b = f.load(mat(4, 4), b, vec![]);
    let sa = f.binary(IrBinaryOp::MatrixMultiply, mat(4, 4), a, wa);
    let sb = f.binary(IrBinaryOp::MatrixMultiply, mat(4, 4), wb, b);
    let r = f.binary(IrBinaryOp::Add, mat(4, 4), sa, sb);
    f.ret(Some(r));
    lib.ir.functions.push(f.finish());

    // FromBasis: a float4x4 from three float3 axes, a translation and scalars.
    let mut f = FunctionBuilder::new(FROM_BASIS, "FromBasis", mat(4, 4));
    let axes: Vec<i32> = ["x", "y", "z", "t"]
        .iter()
        .map(|n| f.param(n, vec(3)))
        .collect();
    let zero = constant(&mut f, 0.0);
    let one = constant(&mut f, 1.0);
    let mut lanes = Vec::new();
    for (i, &axis) in axes.iter().enumerate() {
        let mut v = f.load(vec(3), axis, vec![]);
        if version >= 2 && i < 3 {
            // version 2 normalises the axes
            v = f
                .intrinsic(IrIntrinsic::Normalize, Some(vec(3)), vec![v])
                .unwrap_or(0);
        }
        lanes.push(v);
        lanes.push(if i == 3 { one } else { zero });
    }
    let m = f.construct(mat(4, 4), lanes);
    f.ret(Some(m));
    lib.ir.functions.push(f.finish());

    // SkinPosition: (m × float4(p, 1)).xyz
    let mut f = FunctionBuilder::new(SKIN_POSITION, "SkinPosition", vec(3));
    let m = f.param("m", mat(4, 4));
    let p = f.param("p", vec(3));
    let m = f.load(mat(4, 4), m, vec![]);
    let p = f.load(vec(3), p, vec![]);
    let one = constant(&mut f, 1.0);
    let p4 = f.construct(vec4(), vec![p, one]);
    let q = f.binary(IrBinaryOp::MatrixMultiply, vec4(), m, p4);
    let xyz = f.extract(
        vec(3),
        q,
        vec![LibraryIrAccess::Swizzle {
            components: vec![0, 1, 2],
        }],
    );
    f.ret(Some(xyz));
    lib.ir.functions.push(f.finish());

    // Skin: SkinPosition(m, v.Position)
    let mut f = FunctionBuilder::new(SKIN, "Skin", vec(3));
    let v = f.param("v", skin_vertex());
    let m = f.param("m", mat(4, 4));
    let position = f.load(
        vec(3),
        v,
        vec![LibraryIrAccess::Field {
            index: position_index,
        }],
    );
    let m = f.load(mat(4, 4), m, vec![]);
    let r = f
        .call(
            SKIN_POSITION,
            Some(vec(3)),
            vec![by_value(m), by_value(position)],
        )
        .unwrap_or(0);
    f.ret(Some(r));
    lib.ir.functions.push(f.finish());

    // Weights: (total: dot(w, 1), largest: max of the lanes), a tuple
    let tuple = LibraryIrTypeReference::structure(TUPLE);
    let mut f = FunctionBuilder::new(WEIGHTS, "Weights", tuple.clone());
    let w = f.param("w", vec4());
    let w = f.load(vec4(), w, vec![]);
    let one = constant(&mut f, 1.0);
    let ones = f.convert(IrConversionKind::Splat, vec4(), one);
    let total = f
        .intrinsic(IrIntrinsic::Dot, Some(f32()), vec![w, ones])
        .unwrap_or(0);
    let lane = |f: &mut FunctionBuilder, i: i32| {
        f.extract(
            f32(),
            w,
            vec![LibraryIrAccess::Swizzle {
                components: vec![i],
            }],
        )
    };
    let (x, y, z, q) = (
        lane(&mut f, 0),
        lane(&mut f, 1),
        lane(&mut f, 2),
        lane(&mut f, 3),
    );
    let xy = f
        .intrinsic(IrIntrinsic::Max, Some(f32()), vec![x, y])
        .unwrap_or(0);
    let zw = f
        .intrinsic(IrIntrinsic::Max, Some(f32()), vec![z, q])
        .unwrap_or(0);
    let largest = f
        .intrinsic(IrIntrinsic::Max, Some(f32()), vec![xy, zw])
        .unwrap_or(0);
    let pair = f.construct(tuple, vec![total, largest]);
    f.ret(Some(pair));
    lib.ir.functions.push(f.finish());

    let float = reference("Float");
    let float3 = reference("Float3");
    let float4 = reference("Float4");
    let matrix = reference("Mat4");
    let blend = if version >= 2 {
        method(
            "Blend",
            BLEND_V2,
            &[
                ("a", matrix.clone()),
                ("b", matrix.clone()),
                ("t", float.clone()),
            ],
            matrix.clone(),
        )
    } else {
        method(
            "Blend",
            BLEND_V1,
            &[
                ("a", matrix.clone()),
                ("b", matrix.clone()),
                ("wa", float.clone()),
                ("wb", float.clone()),
            ],
            matrix.clone(),
        )
    };
    let methods = vec![
        blend,
        method(
            "FromBasis",
            FROM_BASIS,
            &[
                ("x", float3.clone()),
                ("y", float3.clone()),
                ("z", float3.clone()),
                ("t", float3.clone()),
            ],
            matrix.clone(),
        ),
        method(
            "SkinPosition",
            SKIN_POSITION,
            &[("m", matrix.clone()), ("p", float3.clone())],
            float3.clone(),
        ),
        method(
            "Skin",
            SKIN,
            &[("v", named("Geometry.SkinVertex")), ("m", matrix.clone())],
            float3.clone(),
        ),
        method(
            "Weights",
            WEIGHTS,
            &[("w", float4.clone())],
            tuple_reference(["total", "largest"]),
        ),
    ];
    let vertex_fields: Vec<(&str, LibraryTypeReference)> = if version >= 2 {
        vec![
            ("Weights", float4),
            ("Position", float3.clone()),
            ("Normal", float3),
        ]
    } else {
        vec![
            ("Position", float3.clone()),
            ("Normal", float3),
            ("Weights", float4),
        ]
    };
    lib.types = vec![
        declared("Geometry", "Skinning", TypeKind::Struct, methods, &[], None),
        declared(
            "Geometry",
            "SkinVertex",
            TypeKind::Struct,
            Vec::new(),
            &vertex_fields,
            Some("SkinVertex"),
        ),
    ];
    lib
}

/// `ShadeApp`, built against version 1 of both packages: blends two bone
/// matrices, skins the vertex, lights it with `Evaluate`, and scales by the
/// two tuples' first elements (one `Tuple_f32_f32` type from two libraries).
pub fn shade_app() -> CompiledLibrary {
    let mut lib = CompiledLibrary::new("ShadeApp");
    lib.source_hash = source_hash(&["package ShadeApp"]);
    let by_value = LibraryIrArgument::by_value;
    let tuple = LibraryIrTypeReference::structure(TUPLE);
    let mut f = FunctionBuilder::new(APP_SHADE, "Shade", vec(3));
    let v = f.param("v", skin_vertex());
    let a = f.param("a", mat(4, 4));
    let b = f.param("b", mat(4, 4));
    let s = f.param("s", material());
    let l = f.param("l", vec(3));
    let vertex = f.load(skin_vertex(), v, vec![]);
    let a = f.load(mat(4, 4), a, vec![]);
    let b = f.load(mat(4, 4), b, vec![]);
    let weights = f.load(vec4(), v, vec![LibraryIrAccess::Field { index: 2 }]);
    let normal = f.load(vec(3), v, vec![LibraryIrAccess::Field { index: 1 }]);
    let wa = f.extract(
        f32(),
        weights,
        vec![LibraryIrAccess::Swizzle {
            components: vec![0],
        }],
    );
    let wb = f.extract(
        f32(),
        weights,
        vec![LibraryIrAccess::Swizzle {
            components: vec![1],
        }],
    );
    let bone = f
        .call(
            BLEND_V1,
            Some(mat(4, 4)),
            vec![by_value(a), by_value(b), by_value(wa), by_value(wb)],
        )
        .unwrap_or(0);
    let position = f
        .call(SKIN, Some(vec(3)), vec![by_value(vertex), by_value(bone)])
        .unwrap_or(0);
    let material = f.load(material(), s, vec![]);
    let lv = f.load(vec(3), l, vec![]);
    let view = f.unary(IrUnaryOp::Negate, vec(3), position);
    let view = f
        .intrinsic(IrIntrinsic::Normalize, Some(vec(3)), vec![view])
        .unwrap_or(0);
    let color = f
        .call(
            EVALUATE,
            Some(vec(3)),
            vec![
                by_value(material),
                by_value(normal),
                by_value(lv),
                by_value(view),
            ],
        )
        .unwrap_or(0);
    let split = f
        .call(
            SPLIT,
            Some(tuple.clone()),
            vec![by_value(material), by_value(normal), by_value(lv)],
        )
        .unwrap_or(0);
    let mass = f
        .call(WEIGHTS, Some(tuple), vec![by_value(weights)])
        .unwrap_or(0);
    let diffuse = f.extract(f32(), split, vec![LibraryIrAccess::Field { index: 0 }]);
    let total = f.extract(f32(), mass, vec![LibraryIrAccess::Field { index: 0 }]);
    let k = f.binary(IrBinaryOp::Multiply, f32(), diffuse, total);
    let k3 = f.convert(IrConversionKind::Splat, vec(3), k);
    let r = f.binary(IrBinaryOp::Multiply, vec(3), color, k3);
    f.ret(Some(r));
    lib.ir.functions.push(f.finish());
    lib.types = vec![declared(
        "ShadeApp",
        "Main",
        TypeKind::Shader,
        vec![method(
            "Shade",
            APP_SHADE,
            &[
                ("v", named("Geometry.SkinVertex")),
                ("a", reference("Mat4")),
                ("b", reference("Mat4")),
                ("s", named("Brdf.Material")),
                ("l", reference("Float3")),
            ],
            reference("Float3"),
        )],
        &[],
        None,
    )];
    lib
}

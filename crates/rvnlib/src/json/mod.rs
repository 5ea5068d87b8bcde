//! The library's JSON, exactly as the reference writes it (System.Text.Json
//! with `WriteIndented=false`, nulls omitted, string enums, no naming policy).

mod error;
mod reader;
mod writer;

pub use error::{JsonError, MAX_DEPTH};

use crate::library::CompiledLibrary;

/// The compact payload the container carries, for container `version` (3 omits struct keys).
pub fn to_compact_json(library: &CompiledLibrary, version: i32) -> String {
    let mut emitter = writer::Emitter::new(false);
    writer::write_library(&mut emitter, library, version);
    emitter.finish()
}

/// `WriteJson`: the whole library as indented JSON (two spaces, `\n` line ends),
/// with no container, in the schema of the version the container would carry
/// ([`crate::version::version_for`]). For inspection and diffs; the reader refuses it.
pub fn write_json(library: &CompiledLibrary) -> String {
    let mut emitter = writer::Emitter::new(true);
    writer::write_library(&mut emitter, library, crate::version::version_for(library));
    emitter.finish()
}

/// Decodes a payload written for container `version`.
pub fn from_json(payload: &[u8], version: i32) -> Result<CompiledLibrary, JsonError> {
    check_depth(payload)?;
    let value: serde_json::Value =
        serde_json::from_slice(payload).map_err(|e| JsonError::Syntax {
            offset: offset_of(payload, e.line(), e.column()),
            message: strip_position(&e.to_string()),
        })?;
    reader::read_library(&value, version)
}

/// The inverse of [`write_json`]: reads the indented inspection JSON (or a
/// compact payload) back into a library, for `irkit rvn pack`. The schema
/// version follows from the text as [`write_json`] chose it: 4 when a struct
/// carries a `Key` property, else 3. Error offsets are offsets into `text`.
pub fn from_inspection_json(text: &[u8]) -> Result<CompiledLibrary, JsonError> {
    check_depth(text)?;
    let value: serde_json::Value = serde_json::from_slice(text).map_err(|e| JsonError::Syntax {
        offset: offset_of(text, e.line(), e.column()),
        message: strip_position(&e.to_string()),
    })?;
    let has_struct_key = value
        .pointer("/Ir/Structs")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|structs| structs.iter().any(|s| s.get("Key").is_some()));
    let version = if has_struct_key {
        crate::version::STRUCT_KEY_VERSION
    } else {
        crate::version::RAVEN_VERSION
    };
    reader::read_library(&value, version)
}

/// Refuses nesting deeper than [`MAX_DEPTH`] before anything recursive runs.
fn check_depth(payload: &[u8]) -> Result<(), JsonError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, &b) in payload.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(JsonError::TooDeep { offset });
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// serde_json reports 1-based line and column; turn them into a byte offset.
fn offset_of(payload: &[u8], line: usize, column: usize) -> usize {
    let mut current = 1usize;
    let mut start = 0usize;
    if line > 1 {
        for (i, &b) in payload.iter().enumerate() {
            if b == b'\n' {
                current += 1;
                if current == line {
                    start = i + 1;
                    break;
                }
            }
        }
    }
    (start + column.saturating_sub(1)).min(payload.len())
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{FunctionBuilder, types};

    fn escaped(text: &str) -> String {
        let mut out = String::new();
        writer::escape_into(&mut out, text);
        out
    }

    #[test]
    fn strings_are_escaped_like_system_text_json() {
        assert_eq!(escaped("plain text 123"), "\"plain text 123\"");
        assert_eq!(
            escaped("<T>&'\"+`\\"),
            r#""\u003CT\u003E\u0026\u0027\u0022\u002B\u0060\\""#
        );
        assert_eq!(
            escaped("\n\t\r\u{8}\u{c}\u{1}\u{1f}\u{7f}"),
            r#""\n\t\r\b\f\u0001\u001F\u007F""#
        );
        assert_eq!(escaped("é😀"), r#""\u00E9\uD83D\uDE00""#);
        // serde_json reads every escape back to the same text.
        let text = "<T>&'\"+`\\\n\t\u{1}\u{7f}é😀";
        let back: String = serde_json::from_str(&escaped(text)).unwrap();
        assert_eq!(back, text);
    }

    fn tiny() -> CompiledLibrary {
        let mut lib = CompiledLibrary::new("L");
        let mut f = FunctionBuilder::new("L.F(): void", "F", types::void());
        f.intrinsic(crate::ir::IrIntrinsic::ControlBarrier, None, vec![]);
        f.ret(None);
        lib.ir.functions.push(f.finish());
        lib
    }

    #[test]
    fn compact_layout_omits_nulls_and_blocks_in_block_properties_carry_no_op() {
        let json = to_compact_json(&tiny(), 4);
        assert_eq!(
            json,
            concat!(
                r#"{"Name":"L","Types":[],"Ir":{"Structs":[],"Functions":[{"Key":"L.F(): void","Name":"F","#,
                r#""ReturnType":{"Kind":"Void","Component":"Void","Size":0,"Rows":0,"Columns":0,"Dimension":"Texture2D"},"#,
                r#""Parameters":[],"Locals":[],"Values":[],"ValueCount":0,"Body":{"Statements":["#,
                r#"{"op":"intrinsic","Intrinsic":"ControlBarrier","Arguments":[]},{"op":"return"}]}}]},"SourceHash":""}"#
            )
        );
    }

    #[test]
    fn declaration_half_is_written_in_the_reference_order() {
        use crate::library::*;
        let float = LibraryTypeReference::primitive("Float");
        let mut tuple = LibraryTypeReference::primitive("None");
        tuple.kind = LibraryTypeKind::Tuple;
        tuple.elements = vec![float.clone(), float.clone()];
        tuple.element_names = vec![Some("lo".into()), None];
        let ty = LibraryType {
            namespace: "Core".into(),
            name: "Box".into(),
            containing_type: Some("Core.Outer".into()),
            kind: TypeKind::Struct,
            base_type: None,
            interfaces: vec![LibraryTypeReference::named("Core.IShape")],
            type_parameters: vec![LibraryTypeParameter {
                name: "T".into(),
                ordinal: 0,
                constraints: vec![],
            }],
            fields: vec![LibraryField {
                name: "Size".into(),
                ty: float.clone(),
                is_static: false,
                is_read_only: true,
                is_const: false,
                is_permutation: false,
                is_value_parameter: false,
                is_compose: false,
                is_stream: false,
                declared_value: Some(crate::ir::LibraryValue::float(0.5)),
                resource_kind: EnumName::new("None").unwrap(),
                resource_set: EnumName::new("PerMaterial").unwrap(),
                semantic_name: None,
            }],
            methods: vec![LibraryMethod {
                name: "Span".into(),
                method_kind: EnumName::new("Ordinary").unwrap(),
                return_type: tuple,
                parameters: vec![LibraryParameter {
                    name: "x".into(),
                    ty: float.clone(),
                    ordinal: 0,
                    has_default_value: false,
                    default_value: None,
                    semantic_name: None,
                    ref_kind: RefKind::InOut,
                }],
                type_parameters: vec![],
                is_static: true,
                stage: ShaderStage::None,
                semantic_name: None,
                ir_function: Some("Core.Outer.Box<T>.Span(inout x: float): (float, float)".into()),
            }],
            properties: vec![LibraryProperty {
                name: "Area".into(),
                ty: float,
                has_getter: true,
                has_setter: false,
                is_static: false,
                ir_getter: Some("Core.Outer.Box.Area:get".into()),
                ir_setter: None,
            }],
            ir_struct: Some("Core::Box".into()),
        };
        let mut lib = CompiledLibrary::new("Core");
        lib.types.push(ty);
        let json = to_compact_json(&lib, 4);
        let prim = r#"{"Kind":"Primitive","Special":"Float","Rank":0,"Writable":false,"Elements":[],"ElementNames":[],"TypeArguments":[]}"#;
        let expected = [
            r#"{"Name":"Core","Types":[{"Namespace":"Core","Name":"Box","ContainingType":"Core.Outer","Kind":"Struct","#,
            r#""Interfaces":[{"Kind":"Named","Special":"None","Name":"Core.IShape","Rank":0,"Writable":false,"Elements":[],"ElementNames":[],"TypeArguments":[]}],"#,
            r#""TypeParameters":[{"Name":"T","Ordinal":0,"Constraints":[]}],"#,
            r#""Fields":[{"Name":"Size","Type":"#, prim,
            r#","IsStatic":false,"IsReadOnly":true,"IsConst":false,"IsPermutation":false,"IsValueParameter":false,"IsCompose":false,"IsStream":false,"#,
            r#""DeclaredValue":{"Kind":"float","Text":"0.5"},"ResourceKind":"None","ResourceSet":"PerMaterial"}],"#,
            r#""Methods":[{"Name":"Span","MethodKind":"Ordinary","ReturnType":{"Kind":"Tuple","Special":"None","Rank":0,"Writable":false,"Elements":["#,
            prim, ",", prim,
            r#"],"ElementNames":["lo",null],"TypeArguments":[]},"Parameters":[{"Name":"x","Type":"#, prim,
            r#","Ordinal":0,"HasDefaultValue":false,"RefKind":"InOut"}],"TypeParameters":[],"IsStatic":true,"Stage":"None","#,
            r#""IrFunction":"Core.Outer.Box\u003CT\u003E.Span(inout x: float): (float, float)"}],"#,
            r#""Properties":[{"Name":"Area","Type":"#, prim,
            r#","HasGetter":true,"HasSetter":false,"IsStatic":false,"IrGetter":"Core.Outer.Box.Area:get"}],"#,
            r#""IrStruct":"Core::Box","QualifiedName":"Core.Outer.Box"}],"#,
            r#""Ir":{"Structs":[],"Functions":[]},"SourceHash":""}"#,
        ]
        .concat();
        assert_eq!(json, expected);
        assert_eq!(from_json(json.as_bytes(), 4).unwrap(), lib);
        // A QualifiedName that disagrees with the parts is refused.
        let wrong = json.replace(
            r#""QualifiedName":"Core.Outer.Box""#,
            r#""QualifiedName":"Core.Box""#,
        );
        assert!(
            from_json(wrong.as_bytes(), 4)
                .unwrap_err()
                .to_string()
                .contains("disagrees")
        );
    }

    #[test]
    fn indented_layout_matches_write_json() {
        let text = write_json(&tiny());
        assert!(text.starts_with(
            "{\n  \"Name\": \"L\",\n  \"Types\": [],\n  \"Ir\": {\n    \"Structs\": [],\n"
        ));
        assert!(text.contains("\"Arguments\": []\n"));
        assert!(text.ends_with("\n  \"SourceHash\": \"\"\n}"));
        // Same document as the compact form.
        let a: serde_json::Value = serde_json::from_str(&text).unwrap();
        let b: serde_json::Value = serde_json::from_str(&to_compact_json(&tiny(), 4)).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn schema_errors_name_the_path() {
        let json = to_compact_json(&tiny(), 4).replace(r#""ValueCount":0"#, r#""ValueCount":1.5"#);
        let error = from_json(json.as_bytes(), 4).unwrap_err();
        assert_eq!(
            error.to_string(),
            "$.Ir.Functions[0].ValueCount: `1.5` is not a 32-bit integer"
        );
        let json = to_compact_json(&tiny(), 4)
            .replace(r#"{"op":"return"}"#, r#"{"op":"return","Extra":1}"#);
        let error = from_json(json.as_bytes(), 4).unwrap_err().to_string();
        assert!(
            error.starts_with("$.Ir.Functions[0].Body.Statements[1]: unknown property `Extra`"),
            "{error}"
        );
        let json = to_compact_json(&tiny(), 4).replace("\"return\"", "\"goto\"");
        let error = from_json(json.as_bytes(), 4).unwrap_err().to_string();
        assert_eq!(
            error,
            "$.Ir.Functions[0].Body.Statements[1].op: unknown statement op `goto`"
        );
        let json = to_compact_json(&tiny(), 4).replace("\"Void\",\"Size\"", "\"void\",\"Size\"");
        let error = from_json(json.as_bytes(), 4).unwrap_err().to_string();
        assert!(
            error.contains("`void` is not a member of IrTypeKind"),
            "{error}"
        );
    }

    #[test]
    fn syntax_errors_carry_a_payload_offset() {
        let error = from_json(br#"{"Name": "x",,}"#, 4).unwrap_err();
        assert_eq!(error.offset(), Some(13));
    }

    #[test]
    fn a_redundant_block_op_is_tolerated_but_not_another() {
        let json = to_compact_json(&tiny(), 4).replace(r#""Body":{"#, r#""Body":{"op":"block","#);
        assert_eq!(from_json(json.as_bytes(), 4).unwrap(), tiny());
        let json = to_compact_json(&tiny(), 4).replace(r#""Body":{"#, r#""Body":{"op":"if","#);
        assert!(from_json(json.as_bytes(), 4).is_err());
    }

    #[test]
    fn version_3_structs_have_no_key_and_version_4_requires_one() {
        let mut lib = tiny();
        lib.ir.structs.push(crate::ir::LibraryIrStruct {
            key: "S".into(),
            name: "S".into(),
            fields: vec![],
        });
        let v3 = to_compact_json(&lib, 3);
        assert!(v3.contains(r#"{"Name":"S","Fields":[]}"#));
        assert_eq!(from_json(v3.as_bytes(), 3).unwrap(), lib);
        assert!(
            from_json(v3.as_bytes(), 4)
                .unwrap_err()
                .to_string()
                .contains("missing required property `Key`")
        );
        let v4 = to_compact_json(&lib, 4);
        assert!(
            from_json(v4.as_bytes(), 3)
                .unwrap_err()
                .to_string()
                .contains("unknown property `Key`")
        );
    }
}

//! Issue 19: rvnlib accepts and writes what Raven itself accepts and writes.
//!
//! Every library here is a hand-written container in Raven's version-3 schema
//! (System.Text.Json, PascalCase, nulls omitted, `op`/`at` first, block-typed
//! properties without `op`), not produced by irkit's writer; each test first
//! checks that irkit re-writes the hand-written bytes exactly. The Raven
//! behaviour each test pins is cited as `file lines` of Rikarin/Vixen
//! (`Raven/Vixen.Raven/…`, HEAD 58492f6).

use rvnlib::link::{self, LinkError, LinkInput, LinkOptions};
use rvnlib::verify::VerifyError;
use rvnlib::*;

// ---------- Raven's schema, by hand ----------

fn ty(kind: &str, component: &str, size: i32, rows: i32, columns: i32) -> String {
    format!(
        r#"{{"Kind":"{kind}","Component":"{component}","Size":{size},"Rows":{rows},"Columns":{columns},"Dimension":"Texture2D"}}"#
    )
}

fn f32_t() -> String {
    ty("Float", "Void", 0, 0, 0)
}

fn i32_t() -> String {
    ty("Int", "Void", 0, 0, 0)
}

fn bool_t() -> String {
    ty("Bool", "Void", 0, 0, 0)
}

fn vec_t(component: &str, n: i32) -> String {
    ty("Vector", component, n, 0, 0)
}

fn mat_t(rows: i32, columns: i32) -> String {
    ty("Matrix", "Float", 0, rows, columns)
}

fn void_t() -> String {
    ty("Void", "Void", 0, 0, 0)
}

fn struct_t(name: &str) -> String {
    format!(
        r#"{{"Kind":"Struct","Component":"Void","Size":0,"Rows":0,"Columns":0,"Struct":"{name}","Dimension":"Texture2D"}}"#
    )
}

fn var(name: &str, ty: &str, by_reference: bool) -> String {
    format!(r#"{{"Name":"{name}","Type":{ty},"ByReference":{by_reference}}}"#)
}

fn strukt(name: &str, fields: &[(&str, String)]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|(n, t)| format!(r#"{{"Name":"{n}","Type":{t}}}"#))
        .collect();
    format!(r#"{{"Name":"{name}","Fields":[{}]}}"#, fields.join(","))
}

/// A function; `values` are `(id, type)`, sorted; `ValueCount` is one past the last id.
struct Function<'a> {
    key: &'a str,
    name: &'a str,
    returns: String,
    parameters: Vec<String>,
    locals: Vec<String>,
    values: Vec<(i32, String)>,
    body: Vec<String>,
}

impl Function<'_> {
    fn json(&self) -> String {
        let values: Vec<String> = self
            .values
            .iter()
            .map(|(id, t)| format!(r#"{{"Id":{id},"Type":{t}}}"#))
            .collect();
        let count = self.values.last().map_or(0, |(id, _)| id + 1);
        format!(
            r#"{{"Key":"{}","Name":"{}","ReturnType":{},"Parameters":[{}],"Locals":[{}],"Values":[{}],"ValueCount":{count},"Body":{{"Statements":[{}]}}}}"#,
            self.key,
            self.name,
            self.returns,
            self.parameters.join(","),
            self.locals.join(","),
            values.join(","),
            self.body.join(",")
        )
    }
}

fn payload(name: &str, structs: &[String], functions: &[String]) -> String {
    format!(
        r#"{{"Name":"{name}","Types":[],"Ir":{{"Structs":[{}],"Functions":[{}]}},"SourceHash":""}}"#,
        structs.join(","),
        functions.join(",")
    )
}

fn container(version: i32, payload: &str) -> Vec<u8> {
    let mut out = b"RVNLIB\x1A".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as i32).to_le_bytes());
    out.extend_from_slice(payload.as_bytes());
    out
}

fn load(root: i32, result: i32) -> String {
    format!(r#"{{"op":"load","Result":{result},"Place":{{"Root":{root},"Chain":[]}}}}"#)
}

fn binary(result: i32, op: &str, left: i32, right: i32) -> String {
    format!(r#"{{"op":"binary","Result":{result},"Op":"{op}","Left":{left},"Right":{right}}}"#)
}

fn construct(result: i32, arguments: &[i32]) -> String {
    let arguments: Vec<String> = arguments.iter().map(i32::to_string).collect();
    format!(
        r#"{{"op":"construct","Result":{result},"Arguments":[{}]}}"#,
        arguments.join(",")
    )
}

fn constant(result: i32, kind: &str, text: &str) -> String {
    format!(r#"{{"op":"const","Result":{result},"Value":{{"Kind":"{kind}","Text":"{text}"}}}}"#)
}

fn ret(value: Option<i32>) -> String {
    match value {
        Some(v) => format!(r#"{{"op":"return","Value":{v}}}"#),
        None => r#"{"op":"return"}"#.to_string(),
    }
}

/// `{"op":"if",…}` with its `Then` statements and, if given, its `Else` ones.
fn if_then(condition: i32, then: &[String], otherwise: Option<&[String]>) -> String {
    let otherwise = otherwise.map_or(String::new(), |o| {
        format!(r#","Else":{{"Statements":[{}]}}"#, o.join(","))
    });
    format!(
        r#"{{"op":"if","Condition":{condition},"Then":{{"Statements":[{}]}}{otherwise}}}"#,
        then.join(",")
    )
}

/// Reads a hand-written container; irkit must re-write it byte for byte.
fn read_exact(bytes: &[u8]) -> Result<CompiledLibrary, Vec<VerifyError>> {
    let (_, unverified) = read_unverified(bytes).expect("the schema is Raven's");
    assert_eq!(
        write(&unverified).unwrap(),
        bytes,
        "irkit re-writes Raven's bytes exactly"
    );
    match read(bytes) {
        Ok(library) => Ok(library),
        Err(container::ReadError::Invalid(errors)) => Err(errors),
        Err(other) => panic!("unexpected read error {other}"),
    }
}

/// The single verifier finding of a hand-written library.
fn refused(bytes: &[u8]) -> VerifyError {
    let errors = read_exact(bytes).expect_err("Raven's verifier refuses this");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let error = errors.into_iter().next().unwrap();
    // Every IrVerifier finding is LoweringDiagnostics.MalformedIr, RVN3010.
    assert_eq!(error.code, "RVN3010");
    error
}

/// A function without locals, named by its key's last segment before `(`.
fn function<'a>(
    key: &'a str,
    returns: String,
    parameters: Vec<String>,
    values: Vec<(i32, String)>,
    body: Vec<String>,
) -> Function<'a> {
    let name = key.split('(').next().unwrap_or(key);
    Function {
        key,
        name: name.rsplit('.').next().unwrap_or(name),
        returns,
        parameters,
        locals: vec![],
        values,
        body,
    }
}

/// [`refused`], at `path`, with a message containing `message`.
fn refused_at(bytes: &[u8], path: &str, message: &str) -> VerifyError {
    let error = refused(bytes);
    assert_eq!(error.path, path);
    assert!(error.message.contains(message), "{error}");
    error
}

fn one_function(f: Function<'_>) -> Vec<u8> {
    container(3, &payload("Lib", &[], &[f.json()]))
}

// ---------- 1. matrix × scalar ----------

/// Raven's binder resolves `mat * float` and `float * mat` to the matrix type
/// (`Binding/Binder.Operators.cs` 29–36), lowers it as `MatrixMultiply`
/// (`Lowering/Lowerer.Expressions.cs` 444–449), and its verifier compares only
/// the component types (`IR/IrVerifier.cs` 330–337).
#[test]
fn point_1_matrix_times_scalar_is_accepted_in_either_order() {
    let f = function(
        "Geometry.Skinning.Scale(m: float4x4, s: float): float4x4",
        mat_t(4, 4),
        vec![var("m", &mat_t(4, 4), false), var("s", &f32_t(), false)],
        vec![
            (0, mat_t(4, 4)),
            (1, f32_t()),
            (2, mat_t(4, 4)),
            (3, mat_t(4, 4)),
        ],
        vec![
            load(0, 0),
            load(1, 1),
            binary(2, "MatrixMultiply", 0, 1),
            binary(3, "MatrixMultiply", 1, 2),
            ret(Some(3)),
        ],
    );
    read_exact(&one_function(f)).expect("matrix x scalar verifies");
    // A component mismatch is what Raven's verifier does refuse.
    let f = function(
        "Bad(m: float4x4, i: int): float4x4",
        mat_t(4, 4),
        vec![var("m", &mat_t(4, 4), false), var("i", &i32_t(), false)],
        vec![(0, mat_t(4, 4)), (1, i32_t()), (2, mat_t(4, 4))],
        vec![
            load(0, 0),
            load(1, 1),
            binary(2, "MatrixMultiply", 0, 1),
            ret(Some(2)),
        ],
    );
    let error = refused(&one_function(f));
    assert_eq!(
        error.item.as_deref(),
        Some("Bad(m: float4x4, i: int): float4x4")
    );
    assert_eq!(error.path, "Body.Statements[2]");
}

// ---------- 2. mixed matrix constructs ----------

/// A matrix constructor takes any mix of scalars and vectors whose lanes total
/// rows × columns (`Binding/Binder.Invocations.cs` 550–566, lowered as one
/// construct in `Lowering/Lowerer.Expressions.cs` 1080); the verifier does not
/// check matrix constructs at all (`IR/IrVerifier.cs` 408–439).
#[test]
fn point_2_matrices_construct_from_mixed_lanes() {
    let f = function(
        "Basis(a: float3, x: float, b: float2): float3x3",
        mat_t(3, 3),
        vec![
            var("a", &vec_t("Float", 3), false),
            var("x", &f32_t(), false),
            var("b", &vec_t("Float", 2), false),
        ],
        vec![
            (0, vec_t("Float", 3)),
            (1, f32_t()),
            (2, vec_t("Float", 2)),
            (3, mat_t(3, 3)),
        ],
        // 3 + 1 + 2 + 3 = 9 lanes
        vec![
            load(0, 0),
            load(1, 1),
            load(2, 2),
            construct(3, &[0, 1, 2, 0]),
            ret(Some(3)),
        ],
    );
    read_exact(&one_function(f)).expect("mixed lanes verify");
    // 3 + 1 + 1 = 5 lanes for a 2x2: refused (irkit counts the lanes).
    let f = function(
        "Short(a: float3, x: float): float2x2",
        mat_t(2, 2),
        vec![
            var("a", &vec_t("Float", 3), false),
            var("x", &f32_t(), false),
        ],
        vec![(0, vec_t("Float", 3)), (1, f32_t()), (2, mat_t(2, 2))],
        vec![
            load(0, 0),
            load(1, 1),
            construct(2, &[0, 1, 1]),
            ret(Some(2)),
        ],
    );
    refused_at(
        &one_function(f),
        "Body.Statements[2]",
        "supply 5 lane(s), the matrix has 4",
    );
}

// ---------- 3. tuples by element types ----------

fn tuple_library(name: &str, fields: &[(&str, String)]) -> Vec<u8> {
    container(3, &payload(name, &[strukt("Tuple_f32_f32", fields)], &[]))
}

fn link_all(
    inputs: &[(&str, &CompiledLibrary)],
    entries: &[&str],
) -> Result<link::Linked, Vec<LinkError>> {
    let inputs: Vec<LinkInput<'_>> = inputs
        .iter()
        .map(|(origin, library)| LinkInput { origin, library })
        .collect();
    link::link(
        &inputs,
        &LinkOptions {
            name: "Out".into(),
            consumer: None,
            entries: entries.iter().map(|e| e.to_string()).collect(),
        },
    )
}

/// Raven names a tuple struct after its element types only
/// (`Lowering/Lowerer.Types.cs` 179–223, `Tuple_` + type names) and the
/// decoder keeps the first struct of a name (`Artefacts/LibraryIrCodec.cs`
/// 381), so two libraries' `(float, float)` with different element names are
/// one type.
#[test]
fn point_3_tuples_with_other_element_names_link_as_one_type() {
    let a = read_exact(&tuple_library("A", &[("lo", f32_t()), ("hi", f32_t())])).unwrap();
    let b = read_exact(&tuple_library(
        "B",
        &[("Item1", f32_t()), ("Item2", f32_t())],
    ))
    .unwrap();
    let linked = link_all(&[("a", &a), ("b", &b)], &[]).expect("one tuple type");
    assert_eq!(linked.library.ir.structs.len(), 1);
    assert_eq!(linked.library.ir.structs[0].fields[0].name, "lo");
    // Same key, different element types: a real conflict (irkit, by design).
    let c = read_exact(&tuple_library("C", &[("lo", f32_t()), ("hi", i32_t())])).unwrap();
    let errors = link_all(&[("a", &a), ("c", &c)], &[]).unwrap_err();
    assert!(
        matches!(&errors[0], LinkError::ConflictingStruct { key, .. } if key == "Tuple_f32_f32")
    );
}

// ---------- 4. renaming on link ----------

fn void_function(key: &str, name: &str) -> String {
    Function {
        key,
        name,
        returns: void_t(),
        parameters: vec![],
        locals: vec![],
        values: vec![],
        body: vec![ret(None)],
    }
    .json()
}

/// `(key, name)` pairs.
type Names = Vec<(String, String)>;

fn names(linked: &link::Linked) -> (Names, Names) {
    (
        linked
            .library
            .ir
            .structs
            .iter()
            .map(|s| (s.key.clone(), s.name.clone()))
            .collect(),
        linked
            .library
            .ir
            .functions
            .iter()
            .map(|f| (f.key.clone(), f.name.clone()))
            .collect(),
    )
}

fn pairs(items: &[(&str, &str)]) -> Names {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// `Lowering/Lowerer.Linking.cs` 76–96 reserves the consumer's names in one
/// `taken` set and 208–221 (`Unique`) draws every library entity's name from
/// that same set: `name`, else `name#1`, `name#2`, … The decoder names all
/// libraries' structs (`LinkStructs`) before any library's functions
/// (`LinkFunctions`), and names while decoding, before `ImportPruner` runs.
#[test]
fn point_4_one_taken_name_set_structs_first_names_before_pruning() {
    // A struct `Foo` and a function `Foo`: the function gives way.
    let same = read_exact(&container(
        3,
        &payload(
            "Same",
            &[strukt("Foo", &[("x", f32_t())])],
            &[void_function("Same.Foo(): void", "Foo")],
        ),
    ))
    .unwrap();
    let linked = link_all(&[("same", &same)], &[]).unwrap();
    assert_eq!(
        names(&linked),
        (
            pairs(&[("Foo", "Foo")]),
            pairs(&[("Same.Foo(): void", "Foo#1")])
        )
    );
    // Library A's function `Bar` comes first, library B's struct `Bar` still
    // wins: every struct is named before any function.
    let a = read_exact(&container(
        3,
        &payload("A", &[], &[void_function("A.Bar(): void", "Bar")]),
    ))
    .unwrap();
    let b = read_exact(&container(
        3,
        &payload("B", &[strukt("Bar", &[("x", f32_t())])], &[]),
    ))
    .unwrap();
    let linked = link_all(&[("a", &a), ("b", &b)], &[]).unwrap();
    assert_eq!(
        names(&linked),
        (
            pairs(&[("Bar", "Bar")]),
            pairs(&[("A.Bar(): void", "Bar#1")])
        )
    );
    // A pruned function still took its name: the kept `Baz` is `Baz#1`.
    let c = read_exact(&container(
        3,
        &payload(
            "C",
            &[],
            &[
                void_function("C.Baz(): void", "Baz"),
                void_function("C.Root(): void", "Root"),
            ],
        ),
    ))
    .unwrap();
    let d = read_exact(&container(
        3,
        &payload("D", &[], &[void_function("D.Baz(): void", "Baz")]),
    ))
    .unwrap();
    let linked = link_all(
        &[("c", &c), ("d", &d)],
        &["C.Root(): void", "D.Baz(): void"],
    )
    .unwrap();
    assert_eq!(
        names(&linked).1,
        pairs(&[("C.Root(): void", "Root"), ("D.Baz(): void", "Baz#1")])
    );
}

// ---------- 5. container version ----------

/// Raven's reader accepts exactly version 3 (`Artefacts/CompiledLibraryFormat.cs`
/// 59, 131), so irkit writes 3 whenever the library is representable there and
/// 4 only when a struct key differs from its name.
#[test]
fn point_5_version_3_whenever_representable() {
    let v3 = container(3, &payload("L", &[strukt("S", &[("x", f32_t())])], &[]));
    let library = read_exact(&v3).unwrap(); // re-written as the same version-3 bytes
    assert_eq!(version::version_for(&library), 3);
    // A version-4 file whose keys equal the names re-writes as version 3.
    let v4_same = container(
        4,
        r#"{"Name":"L","Types":[],"Ir":{"Structs":[{"Key":"S","Name":"S","Fields":[]}],"Functions":[]},"SourceHash":""}"#,
    );
    let library = read(&v4_same).unwrap();
    assert_eq!(&write(&library).unwrap()[7..11], &3i32.to_le_bytes());
    // One that needs its struct keys stays version 4, byte for byte.
    let v4_keys = container(
        4,
        r#"{"Name":"L","Types":[],"Ir":{"Structs":[{"Key":"L::S","Name":"S","Fields":[]}],"Functions":[]},"SourceHash":""}"#,
    );
    let library = read(&v4_keys).unwrap();
    assert_eq!(write(&library).unwrap(), v4_keys);
}

// ---------- 6. float and double text ----------

/// Raven writes constants with .NET's invariant round-trip format
/// (`Artefacts/LibraryIr.cs`, `LibraryValue.From`): `12345678f` is
/// `12345678`, not `1.2345678E+07`. Text read from a file is kept verbatim.
#[test]
fn point_6_constants_are_dotnet_round_trip_text_and_kept_verbatim() {
    assert_eq!(LibraryValue::float(12345678.0).text, "12345678");
    assert_eq!(LibraryValue::double(f64::INFINITY).text, "Infinity");
    // As JSON text: System.Text.Json's default encoder writes `+` as `\u002B`.
    for text in [
        "12345678",
        "1E-05",
        "Infinity",
        "1.2345678E\\u002B07",
        "0.10",
    ] {
        let f = function(
            "K(): float",
            f32_t(),
            vec![],
            vec![(0, f32_t())],
            vec![constant(0, "float", text), ret(Some(0))],
        );
        // read_exact re-writes the bytes unchanged, so the text is verbatim.
        read_exact(&one_function(f)).unwrap_or_else(|e| panic!("{text}: {e:#?}"));
    }
}

// ---------- 7. SourceHash ----------

/// `Artefacts/LibraryBuilder.cs` 228: an empty joined source text hashes to "".
#[test]
fn point_7_one_empty_source_has_an_empty_hash() {
    assert_eq!(source_hash(&[""]), "");
    assert_eq!(source_hash(&[]), "");
    assert_eq!(source_hash(&["x"]).len(), 64);
}

// ---------- Raven's verifier rules ----------

/// `IR/IrVerifier.cs` 139–141: a non-void function whose body can run off its
/// end (`AlwaysReturns`: return, discard, if/else both leaving, nested block).
#[test]
fn rule_a_function_can_finish_without_returning() {
    let f = function(
        "Maybe(c: bool): float",
        f32_t(),
        vec![var("c", &bool_t(), false)],
        vec![(0, bool_t()), (1, f32_t())],
        vec![
            load(0, 0),
            if_then(0, &[constant(1, "float", "1"), ret(Some(1))], None),
        ],
    );
    let error = refused_at(
        &one_function(f),
        "Body",
        "can finish without returning a f32",
    );
    assert_eq!(error.item.as_deref(), Some("Maybe(c: bool): float"));
    // With an else that returns, or a discard, it always leaves.
    let f = function(
        "Always(c: bool): float",
        f32_t(),
        vec![var("c", &bool_t(), false)],
        vec![(0, bool_t()), (1, f32_t())],
        vec![
            load(0, 0),
            if_then(
                0,
                &[constant(1, "float", "1"), ret(Some(1))],
                Some(&[r#"{"op":"discard"}"#.to_string()]),
            ),
        ],
    );
    read_exact(&one_function(f)).expect("both arms leave");
}

/// `IR/IrVerifier.cs` 22–29: a struct declaring a field name twice.
#[test]
fn rule_duplicate_struct_field_names() {
    let bytes = container(
        3,
        &payload(
            "L",
            &[strukt("Twice", &[("x", f32_t()), ("x", i32_t())])],
            &[],
        ),
    );
    let error = refused(&bytes);
    assert_eq!(error.item.as_deref(), Some("Twice"));
    assert_eq!(error.path, "Fields[1]");
}

/// `IR/IrVerifier.cs` 285–287: a convert whose result type is its operand's.
#[test]
fn rule_convert_to_the_same_type() {
    let f = function(
        "Same(x: float): float",
        f32_t(),
        vec![var("x", &f32_t(), false)],
        vec![(0, f32_t()), (1, f32_t())],
        vec![
            load(0, 0),
            r#"{"op":"convert","Result":1,"ConversionKind":"Numeric","Operand":0}"#.into(),
            ret(Some(1)),
        ],
    );
    refused_at(&one_function(f), "Body.Statements[1]", "to itself");
}

fn callee_and_caller(callee: Function<'_>, caller: Function<'_>) -> Vec<u8> {
    container(3, &payload("Lib", &[], &[callee.json(), caller.json()]))
}

fn identity_callee(by_reference: bool) -> Function<'static> {
    function(
        "Id(x: float): float",
        f32_t(),
        vec![var("x", &f32_t(), by_reference)],
        vec![(0, f32_t())],
        vec![load(0, 0), ret(Some(0))],
    )
}

/// `IR/IrVerifier.cs` 403–404: a call without a result to a non-void callee.
#[test]
fn rule_a_discarded_non_void_result() {
    let caller = function(
        "Caller(): void",
        void_t(),
        vec![],
        vec![(0, f32_t())],
        vec![
            constant(0, "float", "2"),
            r#"{"op":"call","Function":"Id(x: float): float","Arguments":[{"Value":0}]}"#.into(),
            ret(None),
        ],
    );
    let error = refused_at(
        &callee_and_caller(identity_callee(false), caller),
        "Body.Statements[1]",
        "discards",
    );
    assert_eq!(error.item.as_deref(), Some("Caller(): void"));
}

/// `IR/IrVerifier.cs` 393–397: a by-reference argument must name a local
/// (the lowerer copies through a function-scoped temporary), not a parameter.
#[test]
fn rule_a_by_reference_argument_that_is_not_a_local() {
    let caller = Function {
        key: "Caller(inout p: float): void",
        name: "Caller",
        returns: void_t(),
        parameters: vec![var("p", &f32_t(), true)],
        locals: vec![var("t", &f32_t(), false)],
        values: vec![(0, f32_t()), (1, f32_t())],
        body: vec![
            // through the local: fine
            r#"{"op":"call","Result":0,"Function":"Id(x: float): float","Arguments":[{"Reference":1}]}"#.into(),
            // the parameter itself: refused
            r#"{"op":"call","Result":1,"Function":"Id(x: float): float","Arguments":[{"Reference":0}]}"#.into(),
            ret(None),
        ],
    };
    refused_at(
        &callee_and_caller(identity_callee(true), caller),
        "Body.Statements[1]",
        "only a local can be",
    );
}

/// `IR/IrVerifier.cs` 144–162: `VerifyBlock` forgets what a nested block
/// defined when it ends, so a later use is out of scope.
#[test]
fn rule_a_value_used_after_its_nested_block() {
    let f = function(
        "Scoped(): float",
        f32_t(),
        vec![],
        vec![(0, f32_t())],
        vec![
            format!(
                r#"{{"op":"block","Statements":[{}]}}"#,
                constant(0, "float", "1")
            ),
            ret(Some(0)),
        ],
    );
    refused_at(
        &one_function(f),
        "Body.Statements[1]",
        "outside the region that defines it",
    );
}

/// `IR/IrVerifier.cs` about 291–292 (the `select` case right after 285–287:
/// `RequireType(condition, IrScalarType.Bool)`):
/// a bool vector is not a select condition.
#[test]
fn rule_a_bool_vector_select_condition() {
    let f = function(
        "Pick(m: bool2, a: float2, b: float2): float2",
        vec_t("Float", 2),
        vec![
            var("m", &vec_t("Bool", 2), false),
            var("a", &vec_t("Float", 2), false),
            var("b", &vec_t("Float", 2), false),
        ],
        vec![
            (0, vec_t("Bool", 2)),
            (1, vec_t("Float", 2)),
            (2, vec_t("Float", 2)),
            (3, vec_t("Float", 2)),
        ],
        vec![
            load(0, 0),
            load(1, 1),
            load(2, 2),
            r#"{"op":"select","Result":3,"Condition":0,"WhenTrue":1,"WhenFalse":2}"#.into(),
            ret(Some(3)),
        ],
    );
    refused_at(
        &one_function(f),
        "Body.Statements[3]",
        "condition is vec<bool,2>, not bool",
    );
}

/// `IR/IrVerifier.cs` about 357–360 (`VerifyBinary`'s default case, after the
/// `MatrixMultiply` case at 330–337: left, right and result the same type):
/// arithmetic wants identical operand types; the lowerer splats first.
#[test]
fn rule_vector_with_scalar_arithmetic() {
    let f = function(
        "Scale(v: float3, s: float): float3",
        vec_t("Float", 3),
        vec![
            var("v", &vec_t("Float", 3), false),
            var("s", &f32_t(), false),
        ],
        vec![(0, vec_t("Float", 3)), (1, f32_t()), (2, vec_t("Float", 3))],
        vec![
            load(0, 0),
            load(1, 1),
            binary(2, "Multiply", 0, 1),
            ret(Some(2)),
        ],
    );
    refused_at(
        &one_function(f),
        "Body.Statements[2]",
        "binary Multiply: vec<f32,3> and f32",
    );
}

/// A struct-typed value's reference is written the way Raven writes it (the
/// `Struct` property between `Columns` and `Dimension`).
#[test]
fn struct_references_follow_the_schema() {
    let f = function(
        "Get(s: S): float",
        f32_t(),
        vec![var("s", &struct_t("S"), false)],
        vec![(0, f32_t())],
        vec![
            r#"{"op":"load","Result":0,"Place":{"Root":0,"Chain":[{"at":"field","Index":0}]}}"#
                .into(),
            ret(Some(0)),
        ],
    );
    let bytes = container(
        3,
        &payload("L", &[strukt("S", &[("x", f32_t())])], &[f.json()]),
    );
    read_exact(&bytes).expect("verifies");
}

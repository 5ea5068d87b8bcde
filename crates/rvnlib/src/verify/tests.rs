use super::*;
use crate::builder::{FunctionBuilder, types::*};

fn check(f: LibraryIrFunction) -> Vec<String> {
    check_with(f, Vec::new())
}

fn check_with(f: LibraryIrFunction, structs: Vec<LibraryIrStruct>) -> Vec<String> {
    let mut lib = CompiledLibrary::new("T");
    lib.ir.functions.push(f);
    lib.ir.structs = structs;
    verify_library(&lib)
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect()
}

fn one(errors: Vec<String>, expected: &str) {
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].contains(expected), "{errors:#?}");
}

#[test]
fn values_defined_in_a_branch_are_not_visible_after_it() {
    let mut f = FunctionBuilder::new("k", "k", f32());
    let c = f.constant(bool(), None);
    let mut inner = 0;
    f.if_then(c, |b| inner = b.constant(f32(), None));
    f.ret(Some(inner));
    one(check(f.finish()), "used outside the region that defines it");
}

/// Changed by issue 19: Raven's verifier ends a nested block's values with the
/// block (`IrVerifier.cs` 144–162, `VerifyBlock` removes what it introduced).
#[test]
fn values_of_a_nested_block_end_with_it() {
    let mut f = FunctionBuilder::new("k", "k", f32());
    let mut inner = 0;
    f.block(|b| inner = b.constant(f32(), None));
    f.ret(Some(inner));
    one(
        check(f.finish()),
        "Body.Statements[1]: returned value %0 is used outside the region that defines it",
    );
}

#[test]
fn loop_condition_value_must_be_bool_and_break_stays_in_the_body() {
    let mut f = FunctionBuilder::new("k", "k", void());
    f.loop_(
        true,
        |b| b.constant(f32(), None),
        |b| b.brk(),
        Some(&|b: &mut FunctionBuilder| b.brk()),
    );
    let errors = check(f.finish());
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].contains("loop: condition is f32"));
    assert!(
        errors[1]
            .starts_with("Body.Statements[0].Continue.Statements[0]: break outside a loop body")
    );
}

#[test]
fn loop_regions_follow_execution_order() {
    // test-first: body sees the condition's values; continue does not see the body's.
    let mut f = FunctionBuilder::new("k", "k", void());
    f.loop_(
        true,
        |b| {
            b.constant(f32(), None); // %0
            b.constant(bool(), None)
        },
        |b| {
            b.intrinsic(IrIntrinsic::Abs, Some(f32()), vec![0]);
        },
        None,
    );
    f.ret(None);
    assert_eq!(check(f.finish()), Vec::<String>::new());
    let mut f = FunctionBuilder::new("k", "k", void());
    f.loop_(
        true,
        |b| b.constant(bool(), None), // %0
        |b| {
            b.constant(f32(), None); // %1
        },
        Some(&|b: &mut FunctionBuilder| {
            b.intrinsic(IrIntrinsic::Abs, Some(f32()), vec![1]);
        }),
    );
    one(
        check(f.finish()),
        "Continue.Statements[0]: argument %1 is used outside the region",
    );
    // repeat … while: the body cannot see the condition's values.
    let mut f = FunctionBuilder::new("k", "k", void());
    f.loop_(
        false,
        |b| b.constant(bool(), None),
        |b| {
            b.intrinsic(IrIntrinsic::Abs, Some(f32()), vec![0]);
        },
        None,
    );
    one(
        check(f.finish()),
        "argument %0 is used before it is defined",
    );
}

#[test]
fn unsorted_or_duplicate_value_table_is_refused() {
    let mut f = FunctionBuilder::new("k", "k", void()).finish();
    f.values = vec![
        LibraryIrValue { id: 1, ty: f32() },
        LibraryIrValue { id: 1, ty: f32() },
    ];
    f.value_count = 2;
    one(check(f), "not sorted by unique id");
}

#[test]
fn results_must_be_in_the_table_and_match_its_type() {
    let mut f = FunctionBuilder::new("k", "k", void());
    let x = f.local("x", f32());
    let v = f.constant(i32(), Some(LibraryValue::int(2)));
    f.store(x, vec![], v);
    f.push(LibraryIrStatement::Constant {
        result: 40,
        value: None,
    });
    let errors = check(f.finish());
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].contains("store: i32 does not match f32"));
    assert!(errors[1].contains("result %40 is not in the values table"));
}

#[test]
fn constants_must_parse_for_their_kind() {
    let mut f = FunctionBuilder::new("k", "k", void());
    f.constant(
        f32(),
        Some(LibraryValue {
            kind: "float".into(),
            text: "1,5".into(),
        }),
    );
    f.constant(
        f32(),
        Some(LibraryValue {
            kind: "int".into(),
            text: "1".into(),
        }),
    );
    f.constant(
        f32(),
        Some(LibraryValue {
            kind: "decimal".into(),
            text: "1".into(),
        }),
    );
    let errors = check(f.finish());
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors[0].contains("`1,5` is not a valid float constant"));
    assert!(errors[1].contains("a constant of kind `int` cannot define a f32 value"));
    assert!(errors[2].contains("unknown constant kind `decimal`"));
}

#[test]
fn access_chains_follow_the_root_type() {
    let s = LibraryIrStruct {
        key: "T::S".into(),
        name: "S".into(),
        fields: vec![LibraryIrField {
            name: "v".into(),
            ty: vec(3),
        }],
    };
    let mut f = FunctionBuilder::new("k", "k", void());
    let p = f.param("p", LibraryIrTypeReference::structure("T::S"));
    let i = f.constant(f32(), None);
    f.load(
        f32(),
        p,
        vec![
            LibraryIrAccess::Field { index: 0 },
            LibraryIrAccess::Swizzle {
                components: vec![1],
            },
        ],
    );
    f.load(f32(), p, vec![LibraryIrAccess::Field { index: 1 }]);
    f.load(
        f32(),
        p,
        vec![LibraryIrAccess::Swizzle {
            components: vec![0],
        }],
    );
    f.load(
        f32(),
        p,
        vec![
            LibraryIrAccess::Field { index: 0 },
            LibraryIrAccess::Index { index: i },
        ],
    );
    let two = f.construct(vec(2), vec![i, i]);
    f.store(
        p,
        vec![
            LibraryIrAccess::Field { index: 0 },
            LibraryIrAccess::Swizzle {
                components: vec![1, 1],
            },
        ],
        two,
    );
    let errors = check_with(f.finish(), vec![s]);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(errors[0].contains("field 1 of `T::S`, which has 1 field(s)"));
    assert!(errors[1].contains("swizzle of T::S, not a vector"));
    assert!(errors[2].contains("index %0 is f32, not an integer"));
    assert!(errors[3].contains("names lane 1 twice"));
}

#[test]
fn calls_check_arguments_against_the_callee() {
    let mut callee = FunctionBuilder::new("callee", "callee", f32());
    callee.param_inout("acc", f32());
    let zero = callee.constant(f32(), None);
    callee.ret(Some(zero));
    let mut f = FunctionBuilder::new("k", "k", void());
    let local = f.local("l", i32());
    let v = f.constant(f32(), None);
    f.call("callee", Some(f32()), vec![LibraryIrArgument::by_value(v)]);
    f.call(
        "callee",
        Some(i32()),
        vec![LibraryIrArgument::by_reference(local)],
    );
    f.call(
        "callee",
        None,
        vec![LibraryIrArgument {
            value: None,
            reference: None,
        }],
    );
    f.call("elsewhere", None, vec![LibraryIrArgument::by_reference(9)]);
    let mut lib = CompiledLibrary::new("T");
    lib.ir.functions = vec![callee.finish(), f.finish()];
    let errors: Vec<String> = verify_library(&lib)
        .iter()
        .map(|e| e.message.clone())
        .collect();
    assert_eq!(
        errors,
        vec![
            "call `callee`: argument 0 is passed by value to inout parameter `acc`",
            "call `callee` argument 0: i32 does not match f32",
            "call `callee` result: i32 does not match f32",
            "call `callee`: argument 0 carries neither a value nor a reference",
            // issue 19: a discarded non-void result (`IrVerifier.cs` 403–404)
            "call `callee`: discards the callee's f32 result",
            "call `elsewhere`: argument 0 references root 9, outside the 1 parameters and locals",
        ]
    );
    // An unknown callee is deferred for a library, an error when complete.
    let scope = Scope::new(&lib.ir.structs, &lib.ir.functions, Resolution::Complete);
    let mut found = Vec::new();
    verify_function(&scope, &lib.ir.functions[1], &mut found);
    assert!(
        found
            .iter()
            .any(|e| e.message == "call: no function has the key `elsewhere`")
    );
}

#[test]
fn returns_match_the_return_type() {
    let mut f = FunctionBuilder::new("k", "k", f32());
    f.ret(None);
    one(check(f.finish()), "return: missing a f32 value");
    let mut f = FunctionBuilder::new("k", "k", void());
    let v = f.constant(f32(), None);
    f.ret(Some(v));
    one(check(f.finish()), "a void function returns a value");
}

#[test]
fn operator_and_construct_rules() {
    let mut f = FunctionBuilder::new("k", "k", void());
    let a = f.constant(f32(), None);
    let b = f.constant(i32(), None);
    let m = f.constant(mat(4, 3), None);
    let v3 = f.constant(vec(3), None);
    f.binary(IrBinaryOp::Add, f32(), a, b);
    f.binary(IrBinaryOp::MatrixMultiply, vec(4), m, v3);
    f.binary(IrBinaryOp::MatrixMultiply, vec(3), m, v3);
    f.unary(IrUnaryOp::Not, f32(), a);
    f.construct(vec(4), vec![v3, a]);
    f.construct(vec(4), vec![v3]);
    f.intrinsic(IrIntrinsic::Dot, Some(f32()), vec![v3]);
    f.intrinsic(IrIntrinsic::ControlBarrier, Some(f32()), vec![]);
    let errors = check(f.finish());
    assert_eq!(errors.len(), 6, "{errors:#?}");
    assert!(errors[0].contains("binary Add: f32 and i32 give f32"));
    assert!(
        errors[1].contains("binary MatrixMultiply: mat<f32,4,3> and vec<f32,3> give vec<f32,3>")
    );
    assert!(errors[2].contains("unary Not: operand type f32 is not allowed"));
    assert!(errors[3].contains("arguments supply 3 lane(s), the vector has 4"));
    assert!(errors[4].contains("intrinsic Dot: takes 2 argument(s), found 1"));
    assert!(errors[5].contains("ControlBarrier: produces no value but has a Result"));
}

#[test]
fn duplicate_keys_in_one_library_are_refused() {
    let f = FunctionBuilder::new("k", "k", void()).finish();
    let mut lib = CompiledLibrary::new("T");
    lib.ir.functions = vec![f.clone(), f];
    let errors = verify_library(&lib);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].message.contains("function key is defined twice"));
}

//! Property tests: random token mutations of the example modules never make
//! the checker or the interpreter panic; a module the checker accepts runs to
//! a value or a coded fault under small limits.

mod common;
use common::src;

use proptest::prelude::*;

const FILES: [&str; 3] = ["loop.zlt", "own.zlt", "faults.zlt"];
const POOL: &[&str] = &[
    "%0.0",
    "%0.1",
    "%0.2",
    "%0.4",
    "%1.0",
    "%2.1",
    "%3.0",
    "$l0",
    "$l1",
    "$p0",
    "$p1",
    "$t%0.1",
    "Int32",
    "Int64",
    "Bool",
    "@Box",
    "@Pair",
    "UInt64",
    "^1",
    "^2",
    "^3",
    "edge:0",
    "edge:1",
    "loan:0",
    "loan:1",
    "path:l0",
    "path:l1",
    "-",
    "c:Int32:0",
    "c:Int64:1",
    "branch",
    "join",
    "fallthrough",
    "backedge",
    "return",
    "try-error",
    "field:Box.v",
    "field:Pair.left",
    "variant:Shape.Circle",
    "variant:Shape.Empty",
];

fn mutate(s: &str, line: usize, tok: usize, with: &str) -> String {
    let mut lines: Vec<String> = s.lines().map(String::from).collect();
    let i = line % lines.len();
    let mut toks: Vec<&str> = lines[i].split_whitespace().collect();
    if toks.is_empty() {
        return s.to_string();
    }
    let t = tok % toks.len();
    toks[t] = with;
    let indent: String = lines[i].chars().take_while(|c| *c == ' ').collect();
    lines[i] = format!("{indent}{}", toks.join(" "));
    lines.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
    #[test]
    fn token_mutations_never_panic(f in 0usize..3, line in 0usize..400, tok in 0usize..12, w in 0usize..POOL.len(), arg in any::<i32>()) {
        let text = mutate(&src(FILES[f]), line, tok, POOL[w]);
        let Ok(m) = zlm::text::parse(&text) else { return Ok(()) };
        let checked = zlm::check::check(&m);
        if let Ok(bytes) = zlm::write::write(&m) {
            let decoded = zlm::decode::decode(&bytes);
            prop_assert_eq!(decoded.is_ok(), checked.is_ok());
        }
        if checked.is_ok()
            && let Ok(linked) = zlm::decode::from_model(&m, &[])
            && let Ok(it) = zlm::interp::Interp::new(&linked) {
                let it = it.with_limits(zlm::interp::Limits { steps: 10_000, depth: 16, bytes: 1 << 16 });
                let r = it.resolved();
                for d in &r.module.declarations {
                    for func in &d.functions {
                        if func.receiver != zlm::model::ReceiverKind::Type { continue; }
                        let mut ps: Vec<_> = func.params.iter().collect();
                        ps.sort_by_key(|p| p.ordinal);
                        let args: Vec<_> = ps.iter().map(|p| match &p.ty {
                            zlm::model::Type::Ref(_) => zlm::interp::Value::Allocator,
                            zlm::model::Type::Scalar(zlm::model::ScalarKind::Bool) => zlm::interp::Value::Scalar(u64::from(arg & 1 == 1)),
                            _ => zlm::interp::Value::Scalar(i64::from(arg) as u64 & 0xff),
                        }).collect();
                        let _ = it.run(&format!("{}.{}", d.name, func.name), &args);
                    }
                }
            }
    }
}

//! Lowering of a checked module to textual LLVM IR: the unit (the runtime
//! IR, one LLVM function per selected ZLM function (`func`), the drop and
//! render functions of its types (`types`), the host entries and the
//! tables the engines read).

use crate::func::IrFunction;
use crate::runtime::RUNTIME_IR;
use crate::types::{Layouts, emit_strings};
use crate::unit::{Lowered, RENDERED};
use crate::unitctx::Unit;
use std::fmt::Write;
use zlm::check::{Checked, Resolved};
use zlm::materialize::c::types::{Types, is_word, render_kind};
use zlm::materialize::c::walk::{self, At};
use zlm::materialize::c::{Refusal, Scope};
use zlm::materialize::lowered::heading_lines;
use zlm::model::*;
use zlm::package::Package;

/// Adds every type function `at` holds values of to the type table.
fn collect_types(r: &Resolved<'_>, at: At, types: &mut Types) -> Result<(), Refusal> {
    let f = walk::function(r, at);
    let recv = {
        let kind = f.receiver;
        if matches!(kind, ReceiverKind::Type | ReceiverKind::None) {
            None
        } else {
            zlm::catalog::receiver_type(&r.self_type(at.0), kind)
        }
    };
    for t in zlm::materialize::c::plan::held_types(f, recv.as_ref()) {
        if let Err(m) = types.add(r, t) {
            return Err(walk::refuse(r, at, None, None, m));
        }
    }
    Ok(())
}

/// Lowers the functions `scope` selects to one LLVM module (IR text). A
/// module that calls into other modules is refused: lower its package.
pub(crate) fn lower(checked: &Checked, scope: &Scope) -> Result<Lowered, Refusal> {
    walk::imports(checked)?;
    let r = Resolved::of_checked(checked);
    lower_of(&r, std::slice::from_ref(checked), scope)
}

/// Lowers a package: the root's functions `scope` selects and every
/// function of any module of the package they reach, each under its own
/// module's numeric profile.
pub(crate) fn lower_package(package: &Package, scope: &Scope) -> Result<Lowered, Refusal> {
    let r = package.resolved();
    lower_of(&r, package.modules(), scope)
}

fn lower_of(r: &Resolved<'_>, modules: &[Checked], scope: &Scope) -> Result<Lowered, Refusal> {
    let m = r.module;
    let set = walk::select(r, scope)?;
    let mut types = Types::default();
    for &at in &set {
        collect_types(r, at, &mut types)?;
    }
    crate::typed::add_types(r, &set, &mut types);
    let u = Unit {
        r,
        index: set.iter().enumerate().map(|(i, &at)| (at, i)).collect(),
        layouts: Layouts::new(types),
        details: Default::default(),
        strings: Default::default(),
    };
    let functions: Vec<String> = set.iter().map(|&(d, f)| r.fn_name(d, f)).collect();
    let mut out = String::new();
    for line in heading_lines(m, modules, "lowered by irkit zlm (LLVM engines)", |name| {
        name.replace(['\n', '\r'], " ")
    }) {
        let _ = writeln!(out, "; {line}");
    }
    out.push_str("source_filename = \"zlm\"\n\n");
    out.push_str(RUNTIME_IR);
    let mut bodies = String::new();
    for &at in &set {
        IrFunction::new(&u, at)?.check_body()?;
        bodies.push_str(&IrFunction::new(&u, at)?.emit()?);
        bodies.push('\n');
    }
    out.push_str(&u.layouts.emit(r, &mut u.strings.borrow_mut()));
    out.push_str(&bodies);
    // Host entries: type or no receiver, word parameters; a non-word
    // result is rendered by the entry to the result channel.
    let mut entries = Vec::new();
    let mut params = Vec::new();
    let mut renders = Vec::new();
    for &at in &set {
        let f = u.f(at);
        if !matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None)
            || !f.params.iter().all(|p| is_word(&p.ty))
            || !(is_word(&f.result) || u.layouts.types.shape(&f.result).is_some())
        {
            continue;
        }
        let rk = render_kind(&f.result).map(u64::from).unwrap_or(RENDERED);
        let ps = u.sorted_params(at);
        let i = entries.len();
        let n = u.layouts.size(&f.result);
        let _ = writeln!(
            out,
            "define i32 @zlm_entry_{i}(ptr %z, ptr %r, ptr %a) {{\nentry:\n  %res = alloca [{n} x i64], align 8\n  call void @llvm.memset.p0.i64(ptr %res, i8 0, i64 {}, i1 false)",
            u64::from(n) * 8
        );
        let mut args = String::new();
        for k in 0..ps.len() {
            let _ = writeln!(
                out,
                "  %p{k} = getelementptr inbounds i64, ptr %a, i64 {k}\n  %a{k} = load i64, ptr %p{k}"
            );
            let _ = write!(args, ", i64 %a{k}");
        }
        let _ = writeln!(
            out,
            "  %k = call i32 @{}(ptr %z, ptr %res{args})",
            u.lname(at)
        );
        if rk == RENDERED {
            let lines = u
                .layouts
                .render_call(&f.result, "%res", &mut u.strings.borrow_mut());
            let _ = writeln!(
                out,
                "  %ok = icmp eq i32 %k, 0\n  br i1 %ok, label %render, label %done\nrender:"
            );
            for l in lines {
                let _ = writeln!(out, "  {}", l.replace("%rw", "%rw0"));
            }
            let _ = writeln!(out, "  br label %done\ndone:");
        } else {
            let _ = writeln!(out, "  %w = load i64, ptr %res\n  store i64 %w, ptr %r");
        }
        let _ = writeln!(out, "  call void @zlm_mem_release_all()\n  ret i32 %k\n}}");
        entries.push(r.fn_name(at.0, at.1));
        params.push(ps.len() as u64);
        renders.push(rk);
    }
    // Typed host entries (docs/zlm/boundary.md): any slots and result
    // that can cross, in the word stream.
    let (typed_ir, typed) = crate::typed::emit(&u, &set);
    out.push_str(&typed_ir);
    out.push('\n');
    out.push_str(&emit_strings(&u.strings.borrow()));
    // Tables for the AOT driver (the JIT reads the same facts from `Lowered`).
    let details = u.details.borrow().clone();
    let strings = |out: &mut String, prefix: &str, xs: &[String]| {
        for (i, s) in xs.iter().enumerate() {
            let _ = writeln!(
                out,
                "@{prefix}{i} = private unnamed_addr constant [{} x i8] c\"{}\\00\"",
                s.len() + 1,
                crate::text::llvm_bytes(s)
            );
        }
        let list: Vec<String> = (0..xs.len()).map(|i| format!("ptr @{prefix}{i}")).collect();
        let _ = writeln!(
            out,
            "@{prefix}table = constant [{} x ptr] [{}]",
            xs.len(),
            list.join(", ")
        );
    };
    out.push('\n');
    strings(&mut out, "zlm_fn_", &functions);
    strings(&mut out, "zlm_detail_", &details);
    strings(&mut out, "zlm_entry_name_", &entries);
    strings(&mut out, "zlm_typed_name_", &typed);
    let typed_fns: Vec<String> = (0..typed.len())
        .map(|i| format!("ptr @zlm_typed_{i}"))
        .collect();
    let _ = writeln!(
        out,
        "@zlm_typed_fns = constant [{} x ptr] [{}]\n@zlm_typed_count = constant i64 {}",
        typed.len(),
        typed_fns.join(", "),
        typed.len()
    );
    let fns: Vec<String> = (0..entries.len())
        .map(|i| format!("ptr @zlm_entry_{i}"))
        .collect();
    let nums = |xs: &[u64]| -> String {
        xs.iter()
            .map(|x| format!("i64 {x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "@zlm_entry_fns = constant [{n} x ptr] [{}]\n@zlm_entry_params = constant [{n} x i64] [{}]\n@zlm_entry_render = constant [{n} x i64] [{}]\n@zlm_entry_count = constant i64 {n}\n@zlm_fn_count = constant i64 {}\n@zlm_detail_count = constant i64 {}",
        fns.join(", "),
        nums(&params),
        nums(&renders),
        functions.len(),
        details.len(),
        n = entries.len(),
    );
    out.push_str("\n!0 = !{!\"branch_weights\", i32 1, i32 1048576}\n");
    // A debug build runs LLVM's module verifier on every lowered module
    // before anything else sees it: IR that does not verify is a lowering
    // bug, found here rather than as a backend error of a run.
    #[cfg(debug_assertions)]
    if let Err(e) = crate::backend::verify(&out) {
        panic!("the lowered module does not verify (a lowering bug): {e}");
    }
    Ok(Lowered {
        ir: out,
        entries,
        params,
        renders,
        typed,
        functions,
        details,
    })
}

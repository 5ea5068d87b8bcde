//! `docs/diagnostics.md` and the code definitions agree both ways: every diagnostic code a crate
//! defines has a row in the table, and every row names a code some crate defines.
//!
//! Codes are collected from the sources: every string literal under `crates/*/src` (outside
//! `#[cfg(test)]` items and test files, macro arguments included) that is spelled like a code
//! (`TCC-X000`, `VPL-…`, `ZLM-…`, `RVN-…`, `RVN0000`, `C0-…-000`, `naga-…`, `browser-…`; the
//! top of `docs/diagnostics.md` documents the pattern). The GLSL target codes are plain words,
//! so they are collected through their enum instead.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether `s` is spelled like a diagnostic code.
fn is_code(s: &str) -> bool {
    let upper_word = |t: &str| {
        !t.is_empty()
            && t.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            })
    };
    let digits = |t: &str, n: usize| t.len() == n && t.chars().all(|c| c.is_ascii_digit());
    if let Some(rest) = s.strip_prefix("TCC-") {
        let mut chars = rest.chars();
        return chars.next().is_some_and(|c| c.is_ascii_uppercase()) && digits(chars.as_str(), 3);
    }
    if let Some(rest) = s
        .strip_prefix("VPL-")
        .or_else(|| s.strip_prefix("ZLM-"))
        .or_else(|| s.strip_prefix("RVN-"))
    {
        return upper_word(rest);
    }
    if let Some(rest) = s.strip_prefix("RVN") {
        return digits(rest, 4);
    }
    if let Some(rest) = s.strip_prefix("C0-") {
        return rest
            .rsplit_once('-')
            .is_some_and(|(area, n)| upper_word(area) && digits(n, 3));
    }
    if let Some(rest) = s
        .strip_prefix("naga-")
        .or_else(|| s.strip_prefix("browser-"))
    {
        return !rest.is_empty() && rest.chars().all(|c| c.is_ascii_lowercase() || c == '-');
    }
    false
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().split_whitespace().any(|t| t == "test"))
    })
}

/// The contents of the string literals in a macro's token text.
fn strings_in_tokens(text: &str, out: &mut BTreeSet<String>) {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                    literal.push('\\');
                }
                '"' => break,
                c => literal.push(c),
            }
        }
        out.insert(literal);
    }
}

#[derive(Default)]
struct Literals(BTreeSet<String>);

impl<'ast> Visit<'ast> for Literals {
    fn visit_lit_str(&mut self, lit: &'ast syn::LitStr) {
        self.0.insert(lit.value());
    }
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        strings_in_tokens(&mac.tokens.to_string(), &mut self.0);
    }
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Use(u) => &u.attrs,
            _ => &[],
        };
        if !is_cfg_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().and_then(|e| e.to_str()) == Some("rs") {
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            // Files that are whole `#[cfg(test)] mod …;` test modules.
            if stem != "tests" && !stem.ends_with("_tests") {
                out.push(path);
            }
        }
    }
}

/// Every code spelled in the crates' library and binary sources.
fn defined_in_sources() -> BTreeSet<String> {
    let mut files = Vec::new();
    let crates = std::fs::read_dir(workspace_root().join("crates")).expect("crates/");
    for krate in crates.flatten() {
        rust_files(&krate.path().join("src"), &mut files);
    }
    files.sort();
    let mut literals = Literals::default();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source file");
        let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        literals.visit_file(&syntax);
    }
    literals.0.into_iter().filter(|s| is_code(s)).collect()
}

/// The GLSL target codes, through their enum (the match makes a new kind a compile error here).
fn glsl_target_codes() -> BTreeSet<String> {
    use vpl::backends::glsl::TargetErrorKind::{self, *};
    let all = [
        UnsupportedVersion,
        EmptyRecord,
        ArrayOfArrays,
        SamplerInAggregate,
        ArrayLength,
        InterfaceType,
        InterfaceShape,
        Location,
        SamplerAlias,
        SamplerReturn,
        SamplerParameterMutation,
        VertexAttributeLimit,
        VaryingLimit,
        DrawBufferLimit,
        TextureUnitLimit,
        UniformLimit,
        InvalidModule,
    ];
    let _exhaustive = |k: TargetErrorKind| match k {
        UnsupportedVersion
        | EmptyRecord
        | ArrayOfArrays
        | SamplerInAggregate
        | ArrayLength
        | InterfaceType
        | InterfaceShape
        | Location
        | SamplerAlias
        | SamplerReturn
        | SamplerParameterMutation
        | VertexAttributeLimit
        | VaryingLimit
        | DrawBufferLimit
        | TextureUnitLimit
        | UniformLimit
        | InvalidModule => (),
    };
    all.iter().map(|k| k.code().to_string()).collect()
}

/// The first cell of every table row of `docs/diagnostics.md` that is a code in backticks.
fn documented() -> Vec<String> {
    let text = std::fs::read_to_string(workspace_root().join("docs/diagnostics.md"))
        .expect("docs/diagnostics.md");
    // The Kinds table lists kinds, not codes.
    let (before, kinds) = text.split_once("\n## Kinds\n").expect("a Kinds section");
    let after = kinds.split_once("\n## ").map_or("", |(_, rest)| rest);
    [before, after]
        .iter()
        .flat_map(|part| part.lines())
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(code, _)| code.to_string()))
        .collect()
}

#[test]
fn the_code_table_and_the_definitions_agree() {
    let rows = documented();
    let table: BTreeSet<String> = rows.iter().cloned().collect();
    assert_eq!(
        rows.len(),
        table.len(),
        "a code has two rows in docs/diagnostics.md"
    );
    let mut defined = defined_in_sources();
    defined.extend(glsl_target_codes());
    let undocumented: Vec<_> = defined.difference(&table).collect();
    let undefined: Vec<_> = table.difference(&defined).collect();
    assert!(
        undocumented.is_empty() && undefined.is_empty(),
        "defined but not in docs/diagnostics.md: {undocumented:?}; \
         in docs/diagnostics.md but defined nowhere: {undefined:?}"
    );
}

#[test]
fn vpl_codes_are_the_ones_its_code_module_lists() {
    let defined = defined_in_sources();
    for code in vpl::code::ALL {
        assert!(defined.contains(*code), "{code}");
    }
    // The material graph compiler's `VPL-G-*` codes are its own crate's
    // (`vpl_graph::ErrorKind::code`); the catalogue test covers them.
    let vpl: Vec<_> = defined
        .iter()
        .filter(|c| c.starts_with("VPL-") && !c.starts_with("VPL-G-"))
        .collect();
    assert_eq!(vpl.len(), vpl::code::ALL.len(), "{vpl:?}");
}

#[test]
fn the_code_shape_matcher() {
    for yes in [
        "TCC-V001",
        "TCC-F099",
        "VPL-V-TYPE",
        "ZLM-C-OWN",
        "RVN3010",
        "RVN-KEY-CONFLICT",
        "C0-EXEC-002",
        "naga-unsupported-type",
        "browser-element",
    ] {
        assert!(is_code(yes), "{yes}");
    }
    for no in [
        "TCC_CRASH_AT",
        "ZLM1",
        "RVNL",
        "RVN-",
        "RVN-key",
        "TCC-V01",
        "ZLM-",
        "VPL-v",
        "C0-EXEC",
        "naga",
        "browser-",
        "irkit-browser-",
        "ts.subset.v1",
    ] {
        assert!(!is_code(no), "{no}");
    }
}

/// The kinds a source spells: the first argument of `Diagnostic::new(…)` and the `kind` field of
/// a `Diagnostic { … }` when they are literals, and the literals a `fn kind(&self) -> &'static str`
/// returns.
#[derive(Default)]
struct Kinds(BTreeSet<String>);

fn literals_in(node: impl FnOnce(&mut Literals)) -> BTreeSet<String> {
    let mut literals = Literals::default();
    node(&mut literals);
    literals.0
}

impl<'ast> Visit<'ast> for Kinds {
    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*call.func {
            let segments: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            if segments.ends_with(&["Diagnostic".to_string(), "new".to_string()])
                && let Some(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(kind),
                    ..
                })) = call.args.first()
            {
                self.0.insert(kind.value());
            }
        }
        syn::visit::visit_expr_call(self, call);
    }
    fn visit_expr_struct(&mut self, expr: &'ast syn::ExprStruct) {
        if expr
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "Diagnostic")
        {
            for field in &expr.fields {
                if matches!(&field.member, syn::Member::Named(n) if n == "kind") {
                    self.0.extend(literals_in(|l| l.visit_expr(&field.expr)));
                }
            }
        }
        syn::visit::visit_expr_struct(self, expr);
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let returns_str = matches!(&f.sig.output, syn::ReturnType::Type(_, t)
            if quote_free(t).contains("str"));
        if f.sig.ident == "kind" && returns_str {
            self.0.extend(literals_in(|l| l.visit_block(&f.block)));
        }
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            _ => &[],
        };
        if !is_cfg_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }
}

/// A type's text, for a coarse check of what it names.
fn quote_free(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Reference(r) => format!("&{}", quote_free(&r.elem)),
        syn::Type::Path(p) => p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::"),
        _ => String::new(),
    }
}

/// The first cell of every row of the `## Kinds` table of `docs/diagnostics.md`.
fn documented_kinds() -> BTreeSet<String> {
    let text = std::fs::read_to_string(workspace_root().join("docs/diagnostics.md"))
        .expect("docs/diagnostics.md");
    text.split("\n## Kinds\n")
        .nth(1)
        .expect("a Kinds section")
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .filter_map(|l| l.split('|').nth(1))
        .map(|cell| cell.trim().trim_matches('`').to_string())
        .collect()
}

#[test]
fn every_kind_a_source_spells_is_in_the_closed_set() {
    let mut files = Vec::new();
    let crates = std::fs::read_dir(workspace_root().join("crates")).expect("crates/");
    for krate in crates.flatten() {
        rust_files(&krate.path().join("src"), &mut files);
    }
    let mut kinds = Kinds::default();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source file");
        let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        kinds.visit_file(&syntax);
    }
    assert!(
        kinds.0.contains("encoding") && kinds.0.contains("link"),
        "{:?}",
        kinds.0
    );
    let closed = documented_kinds();
    let outside: Vec<_> = kinds.0.difference(&closed).collect();
    assert!(
        outside.is_empty(),
        "kinds outside the closed set of docs/diagnostics.md (## Kinds): {outside:?}"
    );
}

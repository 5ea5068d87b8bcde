//! The ZLM text form (docs/zlm/text.md): one fact per line, keywords first,
//! whitespace-separated tokens. [`print`] and [`parse`] round-trip exactly.

use crate::catalog;
use crate::error::{Error, Result, code};
use crate::hash::{Id, id_from_hex, to_hex};
use crate::ids::{self, Hasher};
use crate::model::*;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Name tables for printing and parsing symbolic references.
#[derive(Default)]
struct Names {
    nominal: HashMap<Id, String>,
    field: HashMap<Id, String>,
    variant: HashMap<Id, String>,
    func: HashMap<Id, String>,
    rev: HashMap<String, Id>,
}

impl Names {
    fn build(m: &Module) -> Result<Names> {
        let (ids, _) = ids::compute(m, false)?;
        let mut n = Names::default();
        let add =
            |map: &mut HashMap<Id, String>, rev: &mut HashMap<String, Id>, id: Id, name: String| {
                if rev.contains_key(&name) {
                    // Ambiguous names fall back to hex.
                    rev.insert(name.clone(), [0; 32]);
                } else {
                    rev.insert(name.clone(), id);
                }
                map.insert(id, name);
            };
        for (i, imp) in m.imports.iter().enumerate() {
            add(
                &mut n.nominal,
                &mut n.rev,
                ids.imports[i],
                format!("@{}::{}", imp.module, imp.name),
            );
        }
        for (d, decl_index) in m.declarations.iter().zip(&ids.decls) {
            add(
                &mut n.nominal,
                &mut n.rev,
                decl_index.nominal,
                format!("@{}", d.name),
            );
            for (f, id) in d.fields.iter().zip(&decl_index.fields) {
                add(
                    &mut n.field,
                    &mut n.rev,
                    *id,
                    format!("{}.{}", d.name, f.name),
                );
            }
            for (v, (vid, _)) in d.variants.iter().zip(&decl_index.variants) {
                add(
                    &mut n.variant,
                    &mut n.rev,
                    *vid,
                    format!("{}.{}", d.name, v.name),
                );
                for f in &v.fields {
                    if let Some((id, _)) = ids.fields.iter().find(|(_, info)| {
                        info.decl
                            == m.declarations
                                .iter()
                                .position(|x| std::ptr::eq(x, d))
                                .unwrap_or(usize::MAX)
                            && info.variant.is_some_and(|variant_index| {
                                std::ptr::eq(&d.variants[variant_index], v)
                            })
                            && std::ptr::eq(&v.fields[info.index], f)
                    }) {
                        add(
                            &mut n.field,
                            &mut n.rev,
                            *id,
                            format!("{}.{}.{}", d.name, v.name, f.name),
                        );
                    }
                }
            }
            for (f, fn_index) in d.functions.iter().zip(&decl_index.functions) {
                add(
                    &mut n.func,
                    &mut n.rev,
                    fn_index.sig,
                    format!("{}.{}", d.name, f.name),
                );
            }
        }
        Ok(n)
    }
    /// Adds the members of provider module `m` (identities `ids`) under
    /// names qualified by its module, as an importing text writes them:
    /// `module::Decl.field`, `module::Decl.Variant`,
    /// `module::Decl.Variant.field` and `module::Decl.function` (its types
    /// are named by the text's own `import` lines, `@module::Decl`). A name
    /// already bound to the same ID stays; one bound to another becomes
    /// ambiguous (`#hex` only).
    fn add_provider(&mut self, m: &Module, ids: &crate::ids::Identities) {
        fn add(map: &mut HashMap<Id, String>, rev: &mut HashMap<String, Id>, id: Id, name: String) {
            match rev.get(&name) {
                Some(bound) if *bound == id => {}
                Some(_) => {
                    rev.insert(name.clone(), [0; 32]);
                }
                None => {
                    rev.insert(name.clone(), id);
                }
            }
            map.insert(id, name);
        }
        let module = &m.name;
        for (d, decl_ids) in m.declarations.iter().zip(&ids.decls) {
            let decl = &d.name;
            for (f, id) in d.fields.iter().zip(&decl_ids.fields) {
                let name = format!("{module}::{decl}.{}", f.name);
                add(&mut self.field, &mut self.rev, *id, name);
            }
            for (v, (vid, field_ids)) in d.variants.iter().zip(&decl_ids.variants) {
                let name = format!("{module}::{decl}.{}", v.name);
                add(&mut self.variant, &mut self.rev, *vid, name);
                let mut fields: Vec<&Field> = v.fields.iter().collect();
                fields.sort_by_key(|f| f.ordinal);
                for (f, id) in fields.iter().zip(field_ids) {
                    let name = format!("{module}::{decl}.{}.{}", v.name, f.name);
                    add(&mut self.field, &mut self.rev, *id, name);
                }
            }
            for (f, fn_ids) in d.functions.iter().zip(&decl_ids.functions) {
                let name = format!("{module}::{decl}.{}", f.name);
                add(&mut self.func, &mut self.rev, fn_ids.sig, name);
            }
        }
    }
    fn name(&self, map: &HashMap<Id, String>, id: &Id) -> String {
        match map.get(id) {
            Some(s) if self.rev.get(s) == Some(id) => s.clone(),
            _ => format!("#{}", to_hex(id)),
        }
    }
    fn resolve(&self, s: &str) -> Option<Id> {
        if let Some(h) = s.strip_prefix('#') {
            return id_from_hex(h);
        }
        self.rev.get(s).copied().filter(|id| *id != [0; 32])
    }
    fn ty(&self, t: &Type) -> String {
        match t {
            Type::Scalar(k) => k.text().to_string(),
            Type::Unit => "Unit".into(),
            Type::Never => "Never".into(),
            Type::Nominal(id) => self.name(&self.nominal, id),
            Type::Result(a, b) => format!("Result<{},{}>", self.ty(a), self.ty(b)),
            Type::ArrayByte => "Array<Byte>".into(),
            Type::SliceByte => "Slice<Byte>".into(),
            Type::Ref(a) => format!("Ref<{}>", self.ty(a)),
            Type::Mut(a) => format!("Mut<{}>", self.ty(a)),
            Type::AllocatorBytesError => "Allocator<BytesError>".into(),
        }
    }
    fn parse_ty(&self, s: &str, depth: u32) -> Option<Type> {
        if depth > crate::validate::MAX_TYPE_DEPTH {
            return None;
        }
        let inner = |p: &str| s.strip_prefix(p).and_then(|r| r.strip_suffix('>'));
        Some(match s {
            "Unit" => Type::Unit,
            "Never" => Type::Never,
            "Array<Byte>" => Type::ArrayByte,
            "Slice<Byte>" => Type::SliceByte,
            "Allocator<BytesError>" => Type::AllocatorBytesError,
            _ if s.starts_with('@') || s.starts_with('#') => Type::Nominal(self.resolve(s)?),
            _ => {
                if let Some(k) = ScalarKind::from_text(s) {
                    Type::Scalar(k)
                } else if let Some(i) = inner("Ref<") {
                    Type::Ref(Box::new(self.parse_ty(i, depth + 1)?))
                } else if let Some(i) = inner("Mut<") {
                    Type::Mut(Box::new(self.parse_ty(i, depth + 1)?))
                } else if let Some(i) = inner("Result<") {
                    let split = split_top(i)?;
                    Type::Result(
                        Box::new(self.parse_ty(&i[..split], depth + 1)?),
                        Box::new(self.parse_ty(&i[split + 1..], depth + 1)?),
                    )
                } else {
                    return None;
                }
            }
        })
    }
}

fn split_top(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

fn opref(r: &OpRef) -> String {
    match r {
        OpRef::Flow { block, ordinal } => format!("%{block}.{ordinal}"),
        OpRef::Recipe { edge, ordinal } => format!("%r{edge}.{ordinal}"),
    }
}

fn parse_opref(s: &str) -> Option<OpRef> {
    let s = s.strip_prefix('%')?;
    let (recipe, s) = match s.strip_prefix('r') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (a, b) = s.split_once('.')?;
    let (a, b) = (a.parse().ok()?, b.parse().ok()?);
    Some(if recipe {
        OpRef::Recipe {
            edge: a,
            ordinal: b,
        }
    } else {
        OpRef::Flow {
            block: a,
            ordinal: b,
        }
    })
}

fn constant(c: &Constant) -> String {
    format!("c:{}:{}", c.kind.text(), c.bits)
}

fn parse_constant(s: &str) -> Option<Constant> {
    let mut it = s.strip_prefix("c:")?.split(':');
    let kind = ScalarKind::from_text(it.next()?)?;
    let bits = it.next()?.parse().ok()?;
    it.next().is_none().then_some(Constant { kind, bits })
}

fn effects(e: &[Effect]) -> String {
    format!(
        "[{}]",
        e.iter().map(|x| x.text()).collect::<Vec<_>>().join(",")
    )
}

fn parse_effects(s: &str) -> Option<Vec<Effect>> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner.split(',').map(Effect::from_text).collect()
}

impl Names {
    fn path(&self, k: &PathKey) -> String {
        let mut s = match &k.root {
            Root::Receiver => "recv".to_string(),
            Root::Param(p) => format!("p{p}"),
            Root::Local(l) => format!("l{l}"),
            Root::Temp(r) => format!("t{}", opref(r)),
        };
        for f in &k.fields {
            s.push('/');
            s.push_str(&self.name(&self.field, f));
        }
        s
    }
    fn parse_path(&self, s: &str) -> Option<PathKey> {
        let mut parts = s.split('/');
        let root = parts.next()?;
        let root = if root == "recv" {
            Root::Receiver
        } else if let Some(t) = root.strip_prefix('t') {
            Root::Temp(parse_opref(t)?)
        } else if let Some(p) = root.strip_prefix('p') {
            Root::Param(p.parse().ok()?)
        } else if let Some(l) = root.strip_prefix('l') {
            Root::Local(l.parse().ok()?)
        } else {
            return None;
        };
        let fields = parts.map(|f| self.resolve(f)).collect::<Option<Vec<_>>>()?;
        Some(PathKey { root, fields })
    }
    fn operand(&self, o: &Operand) -> String {
        match o {
            Operand::Value(r) => opref(r),
            Operand::Place(k) => format!("${}", self.path(k)),
            Operand::Const(c) => constant(c),
            Operand::Block(b) => format!("^{b}"),
        }
    }
    fn parse_operand(&self, s: &str) -> Option<Operand> {
        Some(if s.starts_with('%') {
            Operand::Value(parse_opref(s)?)
        } else if let Some(p) = s.strip_prefix('$') {
            Operand::Place(self.parse_path(p)?)
        } else if let Some(b) = s.strip_prefix('^') {
            Operand::Block(b.parse().ok()?)
        } else {
            Operand::Const(parse_constant(s)?)
        })
    }
    fn aux(&self, a: &Aux) -> String {
        match a {
            Aux::None => "-".into(),
            Aux::Lit(v) => format!("lit:{v}"),
            Aux::Type(t) => format!("type:{}", self.ty(t)),
            Aux::Decl(id) => format!("decl:{}", self.name(&self.nominal, id)),
            Aux::Field(id) => format!("field:{}", self.name(&self.field, id)),
            Aux::Func(id) => format!("func:{}", self.name(&self.func, id)),
            Aux::CatalogFunc(id) => match catalog::by_signature(id) {
                Some(e) => format!("cfunc:{}", e.selector),
                None => format!("cfunc:#{}", to_hex(id)),
            },
            Aux::Effects(e) => format!("effects:{}", effects(e)),
            Aux::Loan(l) => format!("loan:{l}"),
            Aux::Path(k) => format!("path:{}", self.path(k)),
            Aux::Edge(e) => format!("edge:{e}"),
            Aux::Op(r) => format!("op:{}", opref(r)),
            Aux::Block(b) => format!("block:{b}"),
            Aux::Variant(id) => format!("variant:{}", self.name(&self.variant, id)),
        }
    }
    fn parse_aux(&self, s: &str) -> Option<Aux> {
        if s == "-" {
            return Some(Aux::None);
        }
        let (k, v) = s.split_once(':')?;
        Some(match k {
            "lit" => Aux::Lit(v.parse().ok()?),
            "type" => Aux::Type(self.parse_ty(v, 0)?),
            "decl" => Aux::Decl(self.resolve(v)?),
            "field" => Aux::Field(self.resolve(v)?),
            "func" => Aux::Func(self.resolve(v)?),
            "cfunc" => Aux::CatalogFunc(match v.strip_prefix('#') {
                Some(h) => id_from_hex(h)?,
                None => catalog::signature(v.parse().ok()?)?,
            }),
            "effects" => Aux::Effects(parse_effects(v)?),
            "loan" => Aux::Loan(v.parse().ok()?),
            "path" => Aux::Path(self.parse_path(v)?),
            "edge" => Aux::Edge(v.parse().ok()?),
            "op" => Aux::Op(parse_opref(v)?),
            "block" => Aux::Block(v.parse().ok()?),
            "variant" => Aux::Variant(self.resolve(v)?),
            _ => return None,
        })
    }
    fn coperand(&self, o: &ContractOperand) -> String {
        match o {
            ContractOperand::Const(c) => constant(c),
            ContractOperand::Receiver => "recv".into(),
            ContractOperand::Param(p) => format!("p{p}"),
            ContractOperand::Result => "result".into(),
            ContractOperand::Value(v) => format!("v{v}"),
        }
    }
    fn parse_coperand(&self, s: &str) -> Option<ContractOperand> {
        Some(match s {
            "recv" => ContractOperand::Receiver,
            "result" => ContractOperand::Result,
            _ => {
                if let Some(p) = s.strip_prefix('p') {
                    ContractOperand::Param(p.parse().ok()?)
                } else if let Some(v) = s.strip_prefix('v') {
                    ContractOperand::Value(v.parse().ok()?)
                } else {
                    ContractOperand::Const(parse_constant(s)?)
                }
            }
        })
    }
    fn reference(&self, r: &Option<Id>) -> String {
        match r {
            None => "-".into(),
            Some(id) => {
                if self.field.contains_key(id) {
                    format!("field:{}", self.name(&self.field, id))
                } else if self.func.contains_key(id) {
                    format!("func:{}", self.name(&self.func, id))
                } else if let Some(e) = catalog::by_signature(id) {
                    format!("cfunc:{}", e.selector)
                } else {
                    format!("#{}", to_hex(id))
                }
            }
        }
    }
    fn parse_reference(&self, s: &str) -> Option<Option<Id>> {
        if s == "-" {
            return Some(None);
        }
        if let Some(h) = s.strip_prefix('#') {
            return Some(Some(id_from_hex(h)?));
        }
        match self.parse_aux(s)? {
            Aux::Field(id) | Aux::Func(id) | Aux::CatalogFunc(id) => Some(Some(id)),
            _ => None,
        }
    }
}

/// Prints `m` in canonical text form (collections in canonical order).
pub fn print(m: &Module) -> Result<String> {
    print_with_providers(m, &[])
}

/// [`print`], naming the providers' members by their module-qualified names
/// (`func:module::Decl.function`, as [`parse_with_providers`] reads them)
/// instead of `#hex`; a name two providers give different members stays
/// `#hex`.
pub fn print_with_providers(
    m: &Module,
    providers: &[(&Module, &crate::ids::Identities)],
) -> Result<String> {
    let mut n = Names::build(m)?;
    for (module, ids) in providers {
        n.add_provider(module, ids);
    }
    let (ids, _) = ids::compute(m, false)?;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "zlm 1.9 package {} module {} profile {} mode {}",
        m.package,
        m.name,
        m.profile.text(),
        m.mode.text()
    );
    let mut imports: Vec<usize> = (0..m.imports.len()).collect();
    imports.sort_by_key(|&i| ids.imports[i]);
    for i in imports {
        let imp = &m.imports[i];
        let _ = writeln!(
            o,
            "import {} {} {} {} interface {}",
            imp.module,
            imp.name,
            imp.kind.text(),
            if imp.copy { "copy" } else { "move" },
            to_hex(&imp.interface)
        );
    }
    let mut decls: Vec<usize> = (0..m.declarations.len()).collect();
    decls.sort_by_key(|&i| ids.decls[i].nominal);
    for decl_index in decls {
        let d = &m.declarations[decl_index];
        let _ = writeln!(
            o,
            "\ndecl {} {} {}",
            d.kind.text(),
            d.name,
            d.visibility.text()
        );
        let mut fields: Vec<&Field> = d.fields.iter().collect();
        fields.sort_by_key(|f| f.ordinal);
        for f in fields {
            let _ = writeln!(
                o,
                "  field {} {} {} {} {}",
                f.ordinal,
                f.name,
                f.visibility.text(),
                f.mutability.text(),
                n.ty(&f.ty)
            );
        }
        let mut variants: Vec<&Variant> = d.variants.iter().collect();
        variants.sort_by_key(|v| v.tag);
        for v in variants {
            let _ = writeln!(o, "  variant {} {}", v.tag, v.name);
            let mut fields: Vec<&Field> = v.fields.iter().collect();
            fields.sort_by_key(|f| f.ordinal);
            for f in fields {
                let _ = writeln!(o, "    pfield {} {} {}", f.ordinal, f.name, n.ty(&f.ty));
            }
        }
        let mut fns: Vec<usize> = (0..d.functions.len()).collect();
        fns.sort_by_key(|&i| ids.decls[decl_index].functions[i].sig);
        for fn_index in fns {
            print_function(
                &mut o,
                &n,
                &ids,
                decl_index,
                fn_index,
                &d.functions[fn_index],
            )?;
        }
    }
    Ok(o)
}

fn print_function(
    o: &mut String,
    n: &Names,
    ids: &ids::Identities,
    decl_index: usize,
    fn_index: usize,
    f: &Function,
) -> Result<()> {
    let _ = writeln!(
        o,
        "\n  func {} {} {} {} -> {} effects {}",
        f.callable.text(),
        f.receiver.text(),
        f.name,
        f.visibility.text(),
        n.ty(&f.result),
        effects(&f.effects)
    );
    for &i in &ids::param_order(f)? {
        let p = &f.params[i];
        let _ = writeln!(o, "    param {} {} {}", p.ordinal, p.name, n.ty(&p.ty));
    }
    for &i in &ids::local_order(f)? {
        let p = &f.body.locals[i];
        let _ = writeln!(o, "    local {} {} {}", p.ordinal, p.name, n.ty(&p.ty));
    }
    for (kw, list) in [("requires", &f.requires), ("ensures", &f.ensures)] {
        for e in list {
            let _ = writeln!(o, "    {kw}");
            for c in &e.ops {
                let ops: Vec<String> = c.operands.iter().map(|x| n.coperand(x)).collect();
                let name = ctag::name(c.tag)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("tag{}", c.tag));
                let _ = writeln!(
                    o,
                    "      cop {name} {} {} | {} {} {}",
                    n.ty(&c.result),
                    ops.join(" "),
                    c.aux0,
                    c.aux1,
                    n.reference(&c.reference)
                );
            }
        }
    }
    let fids = &ids.decls[decl_index].functions[fn_index];
    for &i in &ids::path_order(&fids.sig, f, &fids.params, &fids.locals)? {
        let p = &f.body.paths[i];
        let _ = writeln!(o, "    path {} {}", n.path(&p.key), n.ty(&p.ty));
    }
    for &i in &ids::loan_order(f)? {
        let l = &f.body.loans[i];
        let opt = |r: &Option<OpRef>| r.as_ref().map(opref).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            o,
            "    loan {} {} {} {} {} {} {}",
            l.id,
            l.kind.text(),
            n.path(&l.origin),
            l.parent
                .map(|p| p.to_string())
                .unwrap_or_else(|| "-".into()),
            n.ty(&l.borrowed),
            opt(&l.creation),
            opt(&l.last_use)
        );
    }
    let op_line = |o: &mut String, op: &Op| {
        let ops: Vec<String> = op.operands.iter().map(|x| n.operand(x)).collect();
        let name = tag::name(op.tag)
            .map(str::to_string)
            .unwrap_or_else(|| format!("tag{}", op.tag));
        let res = op
            .result
            .as_ref()
            .map(|t| n.ty(t))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            o,
            "      {name} {res} {} | {} {}",
            ops.join(" "),
            n.aux(&op.aux0),
            n.aux(&op.aux1)
        );
    };
    for &i in &ids::block_order(f)? {
        let b = &f.body.blocks[i];
        let _ = writeln!(o, "    block {}", b.id);
        for op in &b.ops {
            op_line(o, op);
        }
    }
    for &i in &ids::edge_order(f)? {
        let e = &f.body.edges[i];
        let succ = e
            .successor
            .map(|s| s.to_string())
            .unwrap_or_else(|| "exit".into());
        let _ = writeln!(
            o,
            "    edge {} {} {} {}",
            e.id,
            e.kind.text(),
            e.source,
            succ
        );
        for op in &e.drops {
            op_line(o, op);
        }
    }
    Ok(())
}

fn syntax(line: usize, offset: usize, msg: impl Into<String>) -> Error {
    Error::at(
        code::SYNTAX,
        offset as u64,
        format!("line {}: {}", line + 1, msg.into()),
    )
}

/// The byte offset of `word` in `src` when it is a slice of `src` (every word
/// the parser splits off a line is), else `fallback`.
fn word_at(src: &str, word: &str, fallback: usize) -> usize {
    let start = src.as_ptr() as usize;
    let at = word.as_ptr() as usize;
    if at >= start && at + word.len() <= start + src.len() {
        at - start
    } else {
        fallback
    }
}

/// Parses the text form into a logical module.
pub fn parse(src: &str) -> Result<Module> {
    parse_with_positions(src).map(|(module, _)| module)
}

/// Where a function and each of its body operations are written in the
/// text: 1-based line and column (in code points) of the line's first
/// non-blank character. The source of a source map
/// (`crate::ancillary::srcmap`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FnPositions {
    /// Declaration index in the parsed module.
    pub decl: usize,
    /// Function index in that declaration.
    pub function: usize,
    /// The `func` line.
    pub line: u32,
    /// Its column.
    pub column: u32,
    /// Every flow and recipe operation: where it lives, its line and column.
    pub ops: Vec<(OpRef, u32, u32)>,
}

/// The functions of a parsed text by name: `Decl.function` and its
/// positions, from the module and positions [`parse_with_positions`]
/// returned. Needs no identities, so it serves modules that do not compute.
pub fn named_positions(module: &Module, positions: Vec<FnPositions>) -> Vec<(String, FnPositions)> {
    positions
        .into_iter()
        .filter_map(|p| {
            let decl = module.declarations.get(p.decl)?;
            let function = decl.functions.get(p.function)?;
            Some((format!("{}.{}", decl.name, function.name), p))
        })
        .collect()
}

/// The only element of `found`, if it has exactly one.
fn only<T>(mut found: Vec<T>) -> Option<T> {
    if found.len() == 1 { found.pop() } else { None }
}

/// Where a rejection's `site` is written in a text whose functions are
/// `functions` ([`named_positions`]): the line and column of the flow
/// operation `%B.O` or recipe operation `%rE.O` it names, else of the
/// function's `func` line. The
/// function is found by its `Decl.function` name, or by a bare function name
/// exactly one function has; `None` when neither is unique.
pub fn site_position(
    functions: &[(String, FnPositions)],
    site: &crate::error::Site,
) -> Option<(u32, u32)> {
    let exact: Vec<&FnPositions> = functions
        .iter()
        .filter(|(name, _)| *name == site.function)
        .map(|(_, p)| p)
        .collect();
    let found = if exact.is_empty() {
        let suffix = format!(".{}", site.function);
        only(
            functions
                .iter()
                .filter(|(name, _)| name.ends_with(&suffix))
                .map(|(_, p)| p)
                .collect(),
        )?
    } else {
        only(exact)?
    };
    let at = site
        .op_ref()
        .and_then(|r| found.ops.iter().find(|(x, _, _)| *x == r));
    Some(at.map_or((found.line, found.column), |&(_, line, column)| {
        (line, column)
    }))
}

/// [`parse`], also returning the position of every function and operation
/// (in parse order, indexing the returned module).
pub fn parse_with_positions(src: &str) -> Result<(Module, Vec<FnPositions>)> {
    parse_with_providers(src, &[])
}

/// [`parse_with_positions`], also resolving the members of `providers`
/// (each a provider module and its identities, e.g. a decoded `--dep`) by
/// their qualified names: `func:module::Decl.function`,
/// `field:module::Decl.field` and `variant:module::Decl.Variant`, so a text calls an imported function by name instead of
/// `#hex` (docs/zlm/text.md, "Imported names").
pub fn parse_with_providers(
    src: &str,
    providers: &[(&Module, &crate::ids::Identities)],
) -> Result<(Module, Vec<FnPositions>)> {
    // Pass 1: the skeleton (no bodies, contracts or symbolic references) gives names their IDs.
    let mut positions = Vec::new();
    let skeleton = parse_pass(src, None, &mut positions)?;
    let mut names = Names::build(&skeleton)?;
    for (module, ids) in providers {
        names.add_provider(module, ids);
    }
    positions.clear();
    let module = parse_pass(src, Some(&names), &mut positions)?;
    Ok((module, positions))
}

/// Saturating `u32` of a line or column count.
fn pos_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

enum Ctx {
    Top,
    Variant,
    Func,
    Expr(bool),
    Block,
    Edge,
}

fn parse_pass(
    src: &str,
    names: Option<&Names>,
    positions: &mut Vec<FnPositions>,
) -> Result<Module> {
    let empty = Names::default();
    let nm = names.unwrap_or(&empty);
    let full = names.is_some();
    let mut m: Option<Module> = None;
    let mut ctx = Ctx::Top;
    let mut offset = 0usize;
    // Pass 1 resolves nominal types by name before IDs exist: collect decl names first.
    let mut pre = Names::default();
    if !full {
        let mut pkg = String::new();
        let mut module = String::new();
        for line in src.lines() {
            let t: Vec<&str> = line.split_whitespace().collect();
            if t.first() == Some(&"zlm") && t.len() >= 6 {
                pkg = t[3].to_string();
                module = t[5].to_string();
            }
            if t.first() == Some(&"decl")
                && t.len() >= 3
                && let Some(k) = DeclKind::from_text(t[1])
            {
                let mut h = Hasher::new(false);
                let ns = h.namespace(&pkg, &module);
                pre.rev
                    .insert(format!("@{}", t[2]), h.nominal(&ns, k, t[2]));
            }
            if t.first() == Some(&"import")
                && t.len() >= 4
                && let Some(k) = DeclKind::from_text(t[3])
            {
                let mut h = Hasher::new(false);
                let ns = h.namespace(&pkg, t[1]);
                pre.rev
                    .insert(format!("@{}::{}", t[1], t[2]), h.nominal(&ns, k, t[2]));
            }
        }
    }
    let tn = if full { nm } else { &pre };
    for (ln, line) in src.split('\n').enumerate() {
        // A rejection of the line points at its first word; one of a word,
        // at that word (`word_at`).
        let at = offset + (line.len() - line.trim_start().len());
        offset += line.len() + 1;
        let column = pos_u32(line.chars().take_while(|c| c.is_whitespace()).count() + 1);
        let line_no = pos_u32(ln + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        let e = |msg: &str| syntax(ln, at, msg);
        let ty = |s: &str| {
            tn.parse_ty(s, 0)
                .ok_or_else(|| syntax(ln, word_at(src, s, at), format!("unknown type `{s}`")))
        };
        let num = |s: &str| {
            s.parse::<u32>().map_err(|_| {
                syntax(
                    ln,
                    word_at(src, s, at),
                    format!("expected a number, found `{s}`"),
                )
            })
        };
        if t[0] == "zlm" {
            if t.len() != 10
                || t[1] != "1.9"
                || t[2] != "package"
                || t[4] != "module"
                || t[6] != "profile"
                || t[8] != "mode"
            {
                return Err(e("expected `zlm 1.9 package P module M profile X mode Y`"));
            }
            m = Some(Module {
                package: t[3].into(),
                name: t[5].into(),
                profile: NumericProfile::from_text(t[7]).ok_or_else(|| e("unknown profile"))?,
                mode: VerificationMode::from_text(t[9]).ok_or_else(|| e("unknown mode"))?,
                imports: vec![],
                declarations: vec![],
            });
            continue;
        }
        let m = m
            .as_mut()
            .ok_or_else(|| e("the first line is the `zlm 1.9 ...` header"))?;
        let decl_count = m.declarations.len();
        let decl = m.declarations.last_mut();
        match t[0] {
            "import" => {
                if t.len() != 7 || t[5] != "interface" {
                    return Err(e(
                        "expected `import MODULE NAME KIND copy|move interface HEX`",
                    ));
                }
                m.imports.push(Import {
                    module: t[1].into(),
                    name: t[2].into(),
                    kind: DeclKind::from_text(t[3]).ok_or_else(|| e("unknown declaration kind"))?,
                    copy: match t[4] {
                        "copy" => true,
                        "move" => false,
                        _ => return Err(e("expected copy or move")),
                    },
                    interface: id_from_hex(t[6])
                        .ok_or_else(|| e("interface digest is 64 hex digits"))?,
                });
            }
            "decl" => {
                if t.len() != 4 {
                    return Err(e("expected `decl KIND NAME VISIBILITY`"));
                }
                m.declarations.push(Declaration {
                    kind: DeclKind::from_text(t[1])
                        .ok_or_else(|| e("unknown declaration kind (value, enum, error)"))?,
                    name: t[2].into(),
                    visibility: Visibility::from_text(t[3])
                        .ok_or_else(|| e("unknown visibility"))?,
                    fields: vec![],
                    variants: vec![],
                    functions: vec![],
                });
                ctx = Ctx::Top;
            }
            "field" => {
                let d = decl.ok_or_else(|| e("field outside a declaration"))?;
                if t.len() != 6 {
                    return Err(e(
                        "expected `field ORDINAL NAME VISIBILITY MUTABILITY TYPE`",
                    ));
                }
                d.fields.push(Field {
                    ordinal: num(t[1])?,
                    name: t[2].into(),
                    visibility: Visibility::from_text(t[3])
                        .ok_or_else(|| e("unknown visibility"))?,
                    mutability: Mutability::from_text(t[4])
                        .ok_or_else(|| e("unknown mutability"))?,
                    ty: ty(t[5])?,
                });
            }
            "variant" => {
                let d = decl.ok_or_else(|| e("variant outside a declaration"))?;
                if t.len() != 3 {
                    return Err(e("expected `variant TAG NAME`"));
                }
                d.variants.push(Variant {
                    tag: num(t[1])?,
                    name: t[2].into(),
                    fields: vec![],
                });
                ctx = Ctx::Variant;
            }
            "pfield" => {
                let v = match (&ctx, decl.and_then(|d| d.variants.last_mut())) {
                    (Ctx::Variant, Some(v)) => v,
                    _ => return Err(e("pfield belongs to a variant")),
                };
                if t.len() != 4 {
                    return Err(e("expected `pfield ORDINAL NAME TYPE`"));
                }
                v.fields.push(Field {
                    ordinal: num(t[1])?,
                    name: t[2].into(),
                    visibility: Visibility::Public,
                    mutability: Mutability::Let,
                    ty: ty(t[3])?,
                });
            }
            "func" => {
                let d = decl.ok_or_else(|| e("func outside a declaration"))?;
                if t.len() != 9 || t[5] != "->" || t[7] != "effects" {
                    return Err(e(
                        "expected `func CALLABLE RECEIVER NAME VISIBILITY -> TYPE effects [..]`",
                    ));
                }
                d.functions.push(Function {
                    callable: CallableKind::from_text(t[1])
                        .ok_or_else(|| e("unknown callable kind"))?,
                    receiver: ReceiverKind::from_text(t[2])
                        .ok_or_else(|| e("unknown receiver kind"))?,
                    name: t[3].into(),
                    visibility: Visibility::from_text(t[4])
                        .ok_or_else(|| e("unknown visibility"))?,
                    params: vec![],
                    result: ty(t[6])?,
                    effects: parse_effects(t[8]).ok_or_else(|| e("effects are `[tag,tag]`"))?,
                    requires: vec![],
                    ensures: vec![],
                    body: Body::default(),
                });
                positions.push(FnPositions {
                    decl: decl_count - 1,
                    function: d.functions.len() - 1,
                    line: line_no,
                    column,
                    ops: Vec::new(),
                });
                ctx = Ctx::Func;
            }
            kw => {
                let f = decl
                    .and_then(|d| d.functions.last_mut())
                    .ok_or_else(|| e(&format!("`{kw}` outside a function")))?;
                match kw {
                    "param" | "local" => {
                        if t.len() != 4 {
                            return Err(e("expected `param|local ORDINAL NAME TYPE`"));
                        }
                        let p = Param {
                            ordinal: num(t[1])?,
                            name: t[2].into(),
                            ty: ty(t[3])?,
                        };
                        if kw == "param" {
                            f.params.push(p)
                        } else {
                            f.body.locals.push(p)
                        }
                    }
                    _ if !full => {}
                    "requires" | "ensures" => {
                        let list = if kw == "requires" {
                            &mut f.requires
                        } else {
                            &mut f.ensures
                        };
                        list.push(Expr { ops: vec![] });
                        ctx = Ctx::Expr(kw == "ensures");
                    }
                    "cop" => {
                        let ens = match ctx {
                            Ctx::Expr(ens) => ens,
                            _ => return Err(e("cop belongs to a requires/ensures expression")),
                        };
                        let bar = t
                            .iter()
                            .position(|x| *x == "|")
                            .ok_or_else(|| e("expected `|` before the auxiliaries"))?;
                        if t.len() != bar + 4 || bar < 3 {
                            return Err(e("expected `cop TAG TYPE OPERANDS.. | AUX0 AUX1 REF`"));
                        }
                        let tag = ctag::from_name(t[1]).ok_or_else(|| e("unknown contract tag"))?;
                        let operands = t[3..bar]
                            .iter()
                            .map(|s| {
                                nm.parse_coperand(s)
                                    .ok_or_else(|| e(&format!("bad contract operand `{s}`")))
                            })
                            .collect::<Result<Vec<_>>>()?;
                        let op = ContractOp {
                            tag,
                            result: ty(t[2])?,
                            operands,
                            aux0: num(t[bar + 1])?,
                            aux1: num(t[bar + 2])?,
                            reference: nm
                                .parse_reference(t[bar + 3])
                                .ok_or_else(|| e("bad contract reference"))?,
                        };
                        let list = if ens { &mut f.ensures } else { &mut f.requires };
                        list.last_mut()
                            .ok_or_else(|| e("cop outside an expression"))?
                            .ops
                            .push(op);
                    }
                    "path" => {
                        if t.len() != 3 {
                            return Err(e("expected `path KEY TYPE`"));
                        }
                        f.body.paths.push(OwnedPath {
                            key: nm.parse_path(t[1]).ok_or_else(|| e("bad owned-path key"))?,
                            ty: ty(t[2])?,
                        });
                    }
                    "loan" => {
                        if t.len() != 8 {
                            return Err(e(
                                "expected `loan ID KIND ORIGIN PARENT TYPE CREATION LASTUSE`",
                            ));
                        }
                        let opt = |s: &str| -> Result<Option<OpRef>> {
                            if s == "-" {
                                Ok(None)
                            } else {
                                parse_opref(s)
                                    .map(Some)
                                    .ok_or_else(|| e("bad operation reference"))
                            }
                        };
                        f.body.loans.push(Loan {
                            id: num(t[1])?,
                            kind: LoanKind::from_text(t[2])
                                .ok_or_else(|| e("unknown loan kind"))?,
                            origin: nm.parse_path(t[3]).ok_or_else(|| e("bad origin path"))?,
                            parent: if t[4] == "-" { None } else { Some(num(t[4])?) },
                            borrowed: ty(t[5])?,
                            creation: opt(t[6])?,
                            last_use: opt(t[7])?,
                        });
                    }
                    "block" => {
                        if t.len() != 2 {
                            return Err(e("expected `block ID`"));
                        }
                        f.body.blocks.push(Block {
                            id: num(t[1])?,
                            ops: vec![],
                        });
                        ctx = Ctx::Block;
                    }
                    "edge" => {
                        if t.len() != 5 {
                            return Err(e("expected `edge ID KIND SOURCE SUCCESSOR|exit`"));
                        }
                        f.body.edges.push(CleanupEdge {
                            id: num(t[1])?,
                            kind: EdgeKind::from_text(t[2])
                                .ok_or_else(|| e("unknown edge kind"))?,
                            source: num(t[3])?,
                            successor: if t[4] == "exit" {
                                None
                            } else {
                                Some(num(t[4])?)
                            },
                            drops: vec![],
                        });
                        ctx = Ctx::Edge;
                    }
                    name => {
                        let tag = tag::from_name(name)
                            .ok_or_else(|| e(&format!("unknown keyword or operation `{name}`")))?;
                        let bar = t
                            .iter()
                            .position(|x| *x == "|")
                            .ok_or_else(|| e("expected `|` before the auxiliaries"))?;
                        if t.len() != bar + 3 || bar < 2 {
                            return Err(e("expected `OP RESULT OPERANDS.. | AUX0 AUX1`"));
                        }
                        let result = if t[1] == "-" { None } else { Some(ty(t[1])?) };
                        let operands = t[2..bar]
                            .iter()
                            .map(|s| {
                                nm.parse_operand(s)
                                    .ok_or_else(|| e(&format!("bad operand `{s}`")))
                            })
                            .collect::<Result<Vec<_>>>()?;
                        let op = Op {
                            tag,
                            result,
                            operands,
                            aux0: nm
                                .parse_aux(t[bar + 1])
                                .ok_or_else(|| e(&format!("bad auxiliary `{}`", t[bar + 1])))?,
                            aux1: nm
                                .parse_aux(t[bar + 2])
                                .ok_or_else(|| e(&format!("bad auxiliary `{}`", t[bar + 2])))?,
                        };
                        let at = match ctx {
                            Ctx::Block => {
                                let b = f
                                    .body
                                    .blocks
                                    .last_mut()
                                    .ok_or_else(|| e("operation outside a block"))?;
                                b.ops.push(op);
                                OpRef::Flow {
                                    block: b.id,
                                    ordinal: pos_u32(b.ops.len() - 1),
                                }
                            }
                            Ctx::Edge => {
                                let edge = f
                                    .body
                                    .edges
                                    .last_mut()
                                    .ok_or_else(|| e("operation outside an edge"))?;
                                edge.drops.push(op);
                                OpRef::Recipe {
                                    edge: edge.id,
                                    ordinal: pos_u32(edge.drops.len() - 1),
                                }
                            }
                            _ => return Err(e("an operation belongs to a block or cleanup edge")),
                        };
                        if let Some(p) = positions.last_mut() {
                            p.ops.push((at, line_no, column));
                        }
                    }
                }
            }
        }
    }
    m.ok_or_else(|| {
        Error::at(
            code::SYNTAX,
            0,
            "empty input: expected the `zlm 1.9 ...` header",
        )
    })
}
